"""A program that prints dlerror()'s message after a failed dlopen prints the same message under profwrap.

glibc's dlsym frees the string an earlier dlerror() returned, so a wrapper that looked up its real function
on first use would make `const char *e = dlerror(); fputs(e, stdout);` print freed memory: the preload
resolves every real function at start."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

PROG_C = r"""
#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
	void *h = dlopen("libprofwrap-no-such-library.so.5", RTLD_NOW);
	const char *e = dlerror();
	if (h || !e)
		return 2;
	fputs(e, stdout);
	fputs("\n", stdout);
	fflush(stdout);
	return 0;
}
"""


def test():
    prog = build_c("dlerror-prog", PROG_C, cflags=["-O0"], ldflags=["-ldl"])
    base = run([prog])
    check_eq(base.rc, 0, "the program without profwrap\n" + base.describe())
    check("libprofwrap-no-such-library.so.5" in base.out, "baseline message: %r", base.out)
    r = profwrap(["-q", "-o", "OUT", "--", prog])
    passive = run([prog], extra_env={"LD_PRELOAD": LIB})
    got = {"profwrap": (r.rc, r.out), "passive preload": (passive.rc, passive.out)}
    bad = {k: v for k, v in got.items() if v != (0, base.out)}
    check(not bad, "the dlerror() message the program prints differs under profwrap: expected %r, got %r",
          base.out, bad)


main(test)
