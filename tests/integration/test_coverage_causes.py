"""The coverage check compares what the program itself moved, and names only causes that were seen.

- `make -j2` of small C files (gcc, cc1, as: the loader maps their libraries, libc reads the locale alias
  file, as seeks in its output): what the exec, the loader and profwrap read is left out, setlocale's reads
  and stdio's read-ahead are accounted for, so the wrappers account for at least 99 % and the report warns of
  nothing, least of all network, pipes or raw system calls, which the build does not use.
- Raw system calls: a program that writes and reads a file with syscall(SYS_write/SYS_read) has them
  recorded with their exact bytes.
- A child killed before it could report its counters: its parent's counters hold its bytes, so neither can
  be checked, and the report says so rather than that the kernel counted nothing."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

MAKEFILE = """OBJS = $(patsubst %.c,%.o,$(wildcard f*.c))
all: $(OBJS)
%.o: %.c
\t$(CC) -c -O2 $< -o $@
"""

RAW_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	static char buf[4096];
	memset(buf, 'r', sizeof buf);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 256; i++)
		if (syscall(SYS_write, fd, buf, sizeof buf) != (long)sizeof buf)
			return 1;
	lseek(fd, 0, SEEK_SET);
	while (syscall(SYS_read, fd, buf, sizeof buf) > 0)
		;
	return close(fd);
}
"""

KILLED_CHILD = """
import os, signal
pid = os.fork()
if pid == 0:
    with open(os.devnull, "rb") as f:
        f.read()
    os.kill(os.getpid(), signal.SIGKILL)
os.waitpid(pid, 0)
"""


def coverage_text(out):
    with open(os.path.join(out, "rank0.txt")) as f:
        text = f.read()
    return text[text.index("\nCoverage\n") + 1:]


def test_make():
    if not shutil.which("make") or not (shutil.which("cc") or shutil.which("gcc")):
        skip("make or cc not found")
    os.mkdir("build")
    with open("build/Makefile", "w") as f:
        f.write(MAKEFILE)
    for i in range(8):
        with open("build/f%d.c" % i, "w") as f:
            f.write("#include <stdio.h>\nint f%d(int x) { return printf(\"%%d\", x * %d); }\n" % (i, i))
    r, rep = profile(["make", "-C", "build", "-j2"], "OUT-make")
    cov = rep["coverage"]
    note("make -j2: coverage %r" % cov)
    check(cov["share"] >= 0.99, "make -j2: the wrappers accounted for %r of the kernel's bytes: %r", cov["share"], cov)
    check(cov["seen_bytes"] <= cov["kernel_bytes"], "make -j2: more bytes seen than the kernel counted: %r", cov)
    check(cov["left_out_bytes"] > 0, "make -j2: nothing of the exec, the loader and profwrap left out: %r", cov)
    text = coverage_text("OUT-make")
    warnings = [l for l in text.splitlines() if l.startswith("WARNING")]
    check_eq(warnings, [], "make -j2: warnings in the Coverage section")
    for word in ("network", "send/recv", "pipes", "sendfile", "system calls directly"):
        check(word not in text, "make -j2: the Coverage section names %r, which the build does not use:\n%s",
              word, text)


def test_raw_syscalls():
    prog = build_c("raw_syscalls", RAW_C, cflags=["-O2"])
    path = os.path.abspath("raw.dat")
    r, rep = profile([prog, path], "OUT-raw")
    f = need_file(rep, path)
    check_eq((f["write_bytes"], f["read_bytes"]), (256 * 4096, 256 * 4096), "(write_bytes, read_bytes) of raw.dat")
    check_eq(count(rep, "io", "write"), 256, "io.write calls (syscall(SYS_write))")
    cov = rep["coverage"]
    check(cov["share"] >= 0.99, "raw system calls: coverage %r", cov)


def test_killed_child():
    r, rep = profile([PYTHON, "-c", KILLED_CHILD], "OUT-killed")
    cov = rep["coverage"]
    note("killed child: coverage %r" % cov)
    check_eq(cov["unchecked_processes"], 2, "coverage.unchecked_processes (the child, and the parent that reaped it)")
    text = coverage_text("OUT-killed")
    check("no bytes read or written" not in text, "the report says the kernel counted nothing:\n%s", text)
    check("could not be made" in text and "Not checked: 2 processes" in text,
          "the report does not say that the check could not be made, and why:\n%s", text)


def test():
    test_make()
    test_raw_syscalls()
    test_killed_child()


main(test)
