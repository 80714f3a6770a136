"""stdio's character calls are counted: a C program that copies files one byte at a time (getc/putc,
fgetc/fputc with ungetc, the inline getc_unlocked/putc_unlocked, getchar/putchar), reads numbers with fscanf
and writes with dprintf; four threads each writing a file with putc and fputs while they all print to
stdout (the streams' locks taken); and mawk printing fields (fputs and putc): every file's bytes in the report
are the file's size, and the wrappers account for at least 99 % of what the kernel counted.

mawk is optional: when it is not installed (`apt-get install mawk`) its part is skipped, loudly."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def text_file(path, lines, seed):
    """Writes lines of words of varied length; returns the absolute path."""
    with open(path, "w") as f:
        for i in range(lines):
            f.write("%d %s %d\n" % (i, "x" * (5 + (i * seed) % 37), i * 7))
    return os.path.abspath(path)


def profile_redirected(cmd, out, stdin_path, stdout_path):
    """profwrap -q -o OUT -- CMD < stdin_path > stdout_path; returns the rank 0 report."""
    with open(stdin_path, "rb") as i, open(stdout_path, "wb") as o:
        p = subprocess.run([PROFWRAP, "-q", "-o", out, "--"] + cmd, stdin=i, stdout=o, stderr=subprocess.PIPE,
                           timeout=120)
    check_eq(p.returncode, 0, "exit status of %r (stderr %r)" % (cmd, p.stderr.decode("utf-8", "replace")[-2000:]))
    return load_report(out)


def check_bytes(rep, path, read=None, written=None):
    f = need_file(rep, path)
    if read is not None:
        check_eq(f["read_bytes"], read, "read_bytes of %s" % path)
    if written is not None:
        check_eq(f["write_bytes"], written, "write_bytes of %s" % path)


def check_coverage(rep, what):
    cov = rep["coverage"]
    note("%s: coverage %r" % (what, cov))
    check(cov["share"] >= 0.99, "%s: the wrappers accounted for %r of the kernel's bytes, under 99 %%: %r",
          what, cov["share"], cov)
    check(cov["seen_bytes"] <= cov["kernel_bytes"], "%s: more bytes seen than the kernel counted: %r", what, cov)


def test_charloop():
    charloop = workload("charloop")
    src = text_file("in.txt", 60000, 3)
    nums = os.path.abspath("nums.txt")
    with open(nums, "w") as f:
        f.write("".join("%d\n" % ((i * 7919) % 2000003 - 1000000) for i in range(20000)))
    stdin = text_file("stdin.txt", 5000, 11)
    dst, stdout = os.path.abspath("out.txt"), os.path.abspath("stdout.txt")
    rep = profile_redirected([charloop, src, dst, nums], "OUT", stdin, stdout)
    size = os.path.getsize(src)
    check_eq(os.path.getsize(dst), size + 2 * (size // 1000), "size of charloop's copy")
    check_bytes(rep, src, read=size, written=0)
    check_bytes(rep, dst, read=0, written=os.path.getsize(dst))
    check_bytes(rep, stdin, read=os.path.getsize(stdin))
    check_bytes(rep, stdout, written=os.path.getsize(stdout))
    check_bytes(rep, nums, read=os.path.getsize(nums))
    check(count(rep, "stdio", "putc (per buffer)") > 0, "no putc (per buffer) row:\n%s", describe_calls(rep))
    check_eq(count(rep, "stdio", "fscanf"), 20001, "fscanf calls")
    check_eq(count(rep, "stdio", "dprintf"), 1, "dprintf calls")
    check_coverage(rep, "charloop")


THREADS_C = r"""
#include <pthread.h>
#include <stdio.h>
static const char *dir;
static void *run(void *arg)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/thread-%ld.txt", dir, (long)arg);
	FILE *f = fopen(path, "w");
	for (int i = 0; f && i < 200000; i++) {
		putc('a' + i % 26, f);
		if (i % 1000 == 0) {
			fputs("--", f);
			printf("thread %ld at %d\n", (long)arg, i);
		}
	}
	return f && fclose(f) == 0 ? NULL : arg;
}
int main(int argc, char **argv)
{
	pthread_t t[4];
	dir = argv[1];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
"""


def test_threads():
    prog = build_c("char_threads", THREADS_C, cflags=["-O2", "-pthread"], ldflags=["-pthread"])
    here, stdout = os.getcwd(), os.path.abspath("threads-stdout.txt")
    rep = profile_redirected([prog, here], "OUT-threads", os.devnull, stdout)
    for i in range(4):
        path = os.path.join(here, "thread-%d.txt" % i)
        check_bytes(rep, path, written=os.path.getsize(path))
    check_bytes(rep, stdout, written=os.path.getsize(stdout))
    check_coverage(rep, "threads")


def test_mawk():
    mawk = shutil.which("mawk")
    if not mawk:
        note("SKIP (part): mawk is not installed (apt-get install mawk); its check did not run")
        return
    src = text_file("awk-in.txt", 60000, 5)
    dst = os.path.abspath("awk-out.txt")
    with open("empty", "w"):
        pass
    rep = profile_redirected([mawk, "{print $1, $2}", src], "OUT-mawk", "empty", dst)
    check_bytes(rep, src, read=os.path.getsize(src), written=0)
    check_bytes(rep, dst, written=os.path.getsize(dst))
    check_coverage(rep, "mawk")


def test():
    test_charloop()
    test_threads()
    test_mawk()


main(test)
