"""A fork while other threads are inside the loader (dlopen, dlclose): glibc does not reset the loader's write
lock in the child, so a child that lists objects (dl_iterate_phdr) waits forever for a thread it does not have.
profwrap's fork handler did, to open the coverage window: the program hung after 7-12 forks, every run, where
it runs in a second plainly. Now the child knows whether a thread of its parent was in the loader at the fork
(preload/dl.c) and lists nothing then.

Two threads dlopen and dlclose libz and libcrypt in a loop while the main thread forks 300 children that each
write one byte and _exit(7) (exit() could wait for glibc's own locks). 3 runs, plain recording and with a stack
on every call (libunwind lists objects too): each ends within its timeout, every child exits 7, and the
report has every child with its write."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

FORKS = 300

SOURCE = r"""
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static atomic_int stop;
static void *churn(void *lib)
{
	while (!atomic_load(&stop)) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (h)
			dlclose(h);
	}
	return NULL;
}
int main(int argc, char **argv)
{
	int forks = atoi(argv[1]), ok = 0;
	pthread_t t[2];
	pthread_create(&t[0], NULL, churn, "libz.so.1");
	pthread_create(&t[1], NULL, churn, "libcrypt.so.1");
	for (int i = 0; i < forks; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			_exit(write(fd, "x", 1) == 1 ? 7 : 1);
		}
		int st;
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 7)
			ok++;
	}
	atomic_store(&stop, 1);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	printf("%d\n", ok);
	return 0;
}
"""


def test():
    for lib in ("libz.so.1", "libcrypt.so.1"):
        if not any(os.path.exists(os.path.join(d, lib)) for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                                                 "/lib64", "/usr/lib64", "/lib", "/usr/lib")):
            skip("%s not found" % lib)
    prog = build_c("dlfork", SOURCE, ldflags=["-lpthread", "-ldl"])
    plain = run([prog, str(FORKS)], timeout=60)
    check_eq((plain.rc, plain.out.strip()), (0, str(FORKS)), "plain run\n" + plain.describe())
    for i, opts in enumerate([[], [], ["--stack-threshold=0"]]):
        out = "OUT-%d" % i
        r = profwrap(["-q", "-o", out] + opts + ["--", prog, str(FORKS)], timeout=90)
        check_eq((r.rc, r.out.strip()), (0, str(FORKS)), "run %d %r: children that exited 7\n%s" % (i, opts,
                                                                                                  r.describe()))
        rep = load_report(out)
        root = rep["processes"][0]["pid"]
        kids = [p for p in rep["processes"] if p["ppid"] == root]
        check_eq(len(kids), FORKS, "run %d: children in the report" % i)
        check_eq(sorted(set((p["how"], p["exit_code"]) for p in kids)), [("exited", 7)], "run %d: how they ended" % i)
        check_eq(nbytes(rep, "io", "write"), FORKS, "run %d: bytes the children wrote" % i)


main(test)
