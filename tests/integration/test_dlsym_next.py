"""profwrap interposes dlsym (so that ctypes lookups of CUDA functions reach the wrappers); every other lookup
must answer as without profwrap. The sharpest case: another interposer preloaded after libprofwrap.so that
finds the next `write` with dlsym(RTLD_NEXT, "write"). That means "after the interposer" only if profwrap's
dlsym hands the caller's return address on; if it meant "after libprofwrap.so", the interposer would find
itself and recurse until the stack overflows."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

INTERPOSER = r'''
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static ssize_t (*next_write)(int, const void *, size_t);
static int calls;

ssize_t write(int fd, const void *buf, size_t n)
{
	if (!next_write)
		next_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	calls++;
	return next_write(fd, buf, n);
}

__attribute__((destructor)) static void done(void)
{
	char msg[64];
	int k = snprintf(msg, sizeof msg, "interposer: %d writes\n", calls);
	if (next_write && k > 0)
		next_write(2, msg, (size_t)k);
}
'''


def test():
    with open("interposer.c", "w") as f:
        f.write(INTERPOSER)
    cc = os.environ.get("CC", "cc")
    b = run([cc, "-shared", "-fPIC", "-o", "libinterposer.so", "interposer.c", "-ldl"])
    if b.rc != 0:
        skip("cannot build the interposer with %s: %s" % (cc, short(b.err, 200)))
    lib = os.path.abspath("libinterposer.so")
    prog = "import os\nfor i in range(3): os.write(1, b'abc')\n"
    plain = run([PYTHON, "-c", prog], extra_env={"LD_PRELOAD": lib})
    check_eq((plain.rc, plain.out), (0, "abcabcabc"), "the program with the interposer alone")
    check("interposer: 3 writes" in plain.err, "the interposer alone: %r", plain.err)
    # profwrap's library first, as the CLI puts it before a LD_PRELOAD it finds: its write wrapper calls the
    # interposer's, which asks for the next one. (Set for the target only: a sanitized profwrap refuses it.)
    r, rep = profile(["env", "LD_PRELOAD=%s:%s" % (os.path.abspath(LIB), lib), PYTHON, "-c", prog], "OUT")
    check_eq(r.out, "abcabcabc", "the program's output under profwrap")
    check("interposer: 3 writes" in r.err, "the interposer under profwrap: %r", r.err)
    check(count(rep, "io", "write") >= 3, "io.write count %d", count(rep, "io", "write"))


main(test)
