"""A program whose RUNPATH names the directory of a library it loads by bare name (dlopen("libpwanswer.so"))
loads it under profwrap as it does without. (DT_RPATH applies to every object's searches; DT_RUNPATH only to
the object that calls dlopen, which under profwrap would be libprofwrap.so without the caller emulation in
preload/dl.c.)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

LIB_C = "int pw_answer(void) { return 42; }\n"
PROG_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argc > 1 ? argv[1] : "libpwanswer.so", RTLD_NOW);
	if (!h) {
		char msg[512];
		const char *e = dlerror();
		snprintf(msg, sizeof msg, "%s", e ? e : "(no dlerror)");
		printf("dlopen failed: %s\n", msg);
		return 1;
	}
	int (*f)(void) = (int (*)(void))dlsym(h, "pw_answer");
	printf("answer %d\n", f ? f() : -1);
	return 0;
}
"""


def test():
    d = os.path.abspath(tmpdir("runpath-"))
    build_c("libpwanswer.so", LIB_C, shared=True, directory=os.path.join(d, "lib"))
    results = {}
    for kind, flag in (("RUNPATH", "--enable-new-dtags"), ("RPATH", "--disable-new-dtags")):
        prog = build_c("prog-" + kind.lower(), PROG_C, ldflags=["-ldl", "-Wl,%s,-rpath,$ORIGIN/lib" % flag],
                       directory=d)
        base = run([prog])
        check_eq((base.rc, base.out), (0, "answer 42\n"), "the %s program without profwrap" % kind)
        r = profwrap(["-q", "-o", "OUT-" + kind, "--", prog])
        results[kind] = (r.rc, r.out)
        if r.rc == 0:
            rep = load_report("OUT-" + kind)
            libs = [l for l in rep["libraries"] if l["path"] == "libpwanswer.so"]
            check_eq([(l["loads"], l["failures"]) for l in libs], [(1, 0)],
                     "libraries[] (loads, failures) for libpwanswer.so (%s)" % kind)
            check(libs[0]["load_ns"] > 0, "load_ns of libpwanswer.so is 0")
    # Also with the preload passive: it must not change what dlopen finds.
    runpath_prog = os.path.join(d, "prog-runpath")
    passive = run([runpath_prog], extra_env={"LD_PRELOAD": LIB})
    results["passive preload"] = (passive.rc, passive.out)
    # LD_LIBRARY_PATH with an empty entry (a trailing colon, common in CUDA set-ups) before the RUNPATH.
    r = profwrap(["-q", "-o", "OUT-LDPATH", "--", runpath_prog], extra_env={"LD_LIBRARY_PATH": "/nonexistent:"})
    results["RUNPATH, LD_LIBRARY_PATH=/nonexistent:"] = (r.rc, r.out)
    # "$ORIGIN" in the name means the caller's directory, not the profiler's.
    r = profwrap(["-q", "-o", "OUT-ORIGIN", "--", runpath_prog, "$ORIGIN/lib/libpwanswer.so"])
    results["dlopen(\"$ORIGIN/lib/libpwanswer.so\")"] = (r.rc, r.out)
    bad = {k: v for k, v in results.items() if v != (0, "answer 42\n")}
    check(not bad, "a bare-name dlopen that the program's own RPATH/RUNPATH resolves fails under profwrap: %r",
          bad)


main(test)
