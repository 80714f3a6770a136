"""The target behaves exactly as without profwrap in the corners a careless wrapper breaks:

- calls given a bad path pointer fail with EFAULT (the wrapper must not read the path and crash);
- fclose of a stream without a descriptor (fmemopen) leaves errno alone;
- a failed posix_spawn leaves *pid untouched;
- a daemon that closes descriptors 3..1023, opens its log (at 3) and forks: the child's writes reach the log
  (the profiler's own descriptors must not sit at low numbers, nor be closed by number in the fork child),
  and the daemon is still recorded after its close loop (its close() of the profiler's descriptors fails as
  of free numbers and leaves them open): it and its child end "exited", the child's write counted;
- a crash in an atexit handler after exit() began is reported as such, not as a clean exit.
The program prints what it saw; the output must be the same with and without profwrap."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

PROG_C = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void crash(void)
{
	*(volatile int *)8 = 1;
}

int main(int argc, char **argv)
{
	const char *bad = (const char *)8;
	errno = 0;
	int fd = open(bad, O_RDONLY);
	printf("open bad: %d %d\n", fd, errno);
	errno = 0;
	FILE *f = fopen(bad, "r");
	printf("fopen bad: %d %d\n", f != NULL, errno);
	errno = 0;
	fd = openat(AT_FDCWD, bad, O_RDONLY);
	printf("openat bad: %d %d\n", fd, errno);
	errno = 0;
	fd = creat(bad, 0600);
	printf("creat bad: %d %d\n", fd, errno);

	char buf[16];
	FILE *m = fmemopen(buf, sizeof buf, "w");
	errno = 0;
	int rc = fclose(m);
	printf("fclose fmemopen: %d errno %d\n", rc, errno);

	pid_t pid = 12345;
	char *args[] = {"/nonexistent/program", NULL};
	rc = posix_spawn(&pid, "/nonexistent/program", NULL, NULL, args, NULL);
	if (rc == 0)
		waitpid(pid, NULL, 0);
	printf("posix_spawn failed: %d\n", rc != 0);
	fflush(stdout);

	if (argc > 2) {
		atexit(crash);
		return 0;
	}

	/* a daemon's start: close everything, open the log, fork a worker that writes to it */
	for (int i = 3; i < 1024; i++)
		close(i);
	int log = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0600);
	pid_t child = fork();
	if (child == 0) {
		const char line[] = "from the child\n";
		_exit(write(log, line, sizeof line - 1) == (ssize_t)sizeof line - 1 ? 0 : 1);
	}
	int st;
	waitpid(child, &st, 0);
	printf("log fd %d, child exit %d\n", log, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	close(log);
	fflush(stdout);
	return 0;
}
"""


def test():
    prog = build_c("unharmed", PROG_C, cflags=["-O0"])
    base_log = os.path.abspath("base.log")
    base = run([prog, base_log])
    check_eq(base.rc, 0, "the program without profwrap\n" + base.describe())
    r = profwrap(["-q", "-o", "OUT", "--", prog, os.path.abspath("prof.log")])
    check_eq(r.rc, 0, "profwrap exit status\n" + r.describe())
    check_eq(r.out, base.out, "what the program saw under profwrap")
    with open(base_log) as f:
        base_text = f.read()
    with open("prof.log") as f:
        check_eq(f.read(), base_text, "the log written by the forked child")
    check("open bad: -1 14" in r.out, "open with a bad pointer: %r", r.out)
    rep = load_report("OUT")
    ctx = "\n" + describe_processes(rep)
    ends = sorted((p["how"], p["exit_code"], p["ppid"] == rep["processes"][0]["pid"]) for p in rep["processes"])
    check_eq(ends, [("exited", 0, False), ("exited", 0, True)], "(how, exit_code, a child) of the daemon and its child" + ctx)
    log = need_file(rep, os.path.abspath("prof.log"))
    check_eq((log["opens"], log["writes"], log["write_bytes"]), (1, 1, len("from the child\n")), "the log's (opens, writes, bytes)")

    crashed = profwrap(["-q", "-o", "CRASH", "--", prog, os.path.abspath("crash.log"), "crash"])
    check_eq(crashed.rc, 128 + 11, "profwrap exit status for a crash in an atexit handler\n" + crashed.describe())
    rep = load_report("CRASH")
    top = [p for p in rep["processes"] if p["argv"].startswith(prog)][0]
    check_eq(top["how"], "died-in-exit", "how the process that crashed in its atexit handler ended")
    check_eq(top["signal"], 11, "signal of the process that crashed in its atexit handler")


if __name__ == "__main__":
    main(test)
