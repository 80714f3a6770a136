"""io_uring moves bytes that neither the wrappers nor the kernel's rchar/wchar see: a program that reads a file
through a ring it set up with syscall(__NR_io_uring_setup) gets a Coverage section that says its io_uring I/O
is not measured (text and JSON), and the set-up is counted as io.io_uring_setup. With liburing installed
(liburing-dev), a program that sets its ring up with io_uring_queue_init is caught the same way (liburing makes
the system call itself); without it that part is skipped, loudly."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

LIBURING_C = r"""
#include <liburing.h>
#include <stdio.h>
int main(void)
{
	struct io_uring ring;
	int rc = io_uring_queue_init(4, &ring, 0);
	if (rc < 0) {
		fprintf(stderr, "io_uring_queue_init: %d\n", rc);
		return 1;
	}
	io_uring_queue_exit(&ring);
	return 0;
}
"""


def check_uring_said(out, rep, what):
    cov = rep["coverage"]
    note("%s: coverage %r" % (what, cov))
    check_eq(cov.get("io_uring_processes"), 1, "%s: coverage.io_uring_processes" % what)
    check_eq(count(rep, "io", "io_uring_setup"), 1, "%s: io.io_uring_setup calls" % what)
    with open(os.path.join(out, "rank0.txt")) as f:
        text = f.read()
    coverage = text[text.index("\nCoverage\n"):]
    lines = [l for l in coverage.splitlines() if "io_uring" in l]
    check(lines and "not measured" in lines[0],
          "%s: the Coverage section does not say that the io_uring I/O is not measured:\n%s", what, coverage)


def test():
    uring = workload("uring")
    path = write_file("data.bin", 3 * 65536 + 123)
    r, rep = profile([uring, path], "OUT")
    check_eq(r.out.strip(), "uring read %d bytes" % os.path.getsize(path), "what the ring read")
    check_uring_said("OUT", rep, "syscall()")
    f = file_entry(rep, path)
    check(f is None or f["read_bytes"] == 0, "bytes read through the ring were counted as read(): %r", f)

    if not os.path.exists("/usr/include/liburing.h"):
        note("SKIP (part): liburing is not installed (apt-get install liburing-dev); io_uring_queue_init not checked")
        return
    prog = build_c("liburing_setup", LIBURING_C, cflags=["-O2"], ldflags=["-luring"])
    r, rep = profile([prog], "OUT-liburing")
    check_uring_said("OUT-liburing", rep, "io_uring_queue_init")


main(test)
