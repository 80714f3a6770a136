"""Children on their parent's thread after a raw clone() (issue 32, item 8): a program's own
clone(CLONE_VM|CLONE_VFORK) child (open, 4 writes, close, _exit(7) on its creator's TLS), then N vfork + exec
of /bin/true (each child's dup2 and exec before it execs) and N posix_spawn of it. A vfork child's calls go
straight through, uncounted, and so do the clone's, which is one: dropped_events is 0, the process's calls
exact (its own open, 3 writes, close, printf, fflush; N vfork, N posix_spawn, 2N + 1 waitpid), every
/bin/true a process of its own that exited 0, the clone's file without a record. The same after a
clone(CLONE_VM) that does not vfork, which runs beside its creator: its 7 calls, and only those, count as
dropped."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

N = 6
CLONE_CALLS = 7  # open, 4 writes, close, _exit

SOURCE = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static char clone_path[4096];

static int clone_child(void *arg)
{
	(void)arg;
	int fd = open(clone_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 4; i++)
		if (write(fd, "clone\n", 6) != 6)
			_exit(98);
	close(fd);
	_exit(7);
}

static int status_of(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		perror("waitpid");
		exit(99);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* vfork|vm N DIR */
int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int n = atoi(argv[2]);
	snprintf(clone_path, sizeof clone_path, "%s/clone", argv[3]);
	size_t size = 64 << 10;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return 99;
	int flags = CLONE_VM | SIGCHLD | (strcmp(argv[1], "vfork") == 0 ? CLONE_VFORK : 0);
	fflush(stdout);
	pid_t pid = clone(clone_child, stack + size, flags, NULL);
	if (pid < 0) {
		perror("clone");
		return 99;
	}
	printf("clone: %d\n", status_of(pid));
	int codes = 0;
	for (int i = 0; i < n; i++) {
		pid = vfork();
		if (pid == 0) {
			if (dup2(2, 2) < 0)
				_exit(97);
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		codes += status_of(pid);
		char *argv_true[] = {"true", NULL};
		if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv_true, environ) != 0)
			return 99;
		codes += status_of(pid);
	}
	printf("children's exit codes summed: %d\n", codes);
	char path[4096];
	snprintf(path, sizeof path, "%s/parent", argv[3]);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 3; i++)
		if (write(fd, "parent\n", 7) != 7)
			return 99;
	close(fd);
	return 0;
}
"""


def check_run(prog, mode, dropped):
    base = tmpdir("base-%s-" % mode)
    plain = run([prog, mode, str(N), base])
    check_eq((plain.rc, plain.out), (0, "clone: 7\nchildren's exit codes summed: 0\n"),
             "%s: the program without profwrap\n%s" % (mode, plain.describe()))
    d = tmpdir("data-%s-" % mode)
    r, rep = profile([prog, mode, str(N), d], "OUT-" + mode)
    check_eq(r.out, plain.out, "%s: stdout under profwrap vs without" % mode)
    ctx = "\n" + describe_processes(rep)
    top = [p for p in rep["processes"] if p["argv"].startswith(prog)]
    check_eq(len(top), 1, "%s: processes running the program" % mode + ctx)
    top = top[0]
    check_eq((top["dropped"], rep["dropped_events"], rep["records_refused"]), (dropped, dropped, 0),
             "%s: (the program's dropped, dropped_events, records refused)" % mode + ctx)
    kids = sorted((p["argv"], p["how"], p["exit_code"]) for p in rep["processes"] if p["ppid"] == top["pid"])
    check_eq(kids, [("true", "exited", 0)] * (2 * N), "%s: the children (argv, end, exit code)" % mode + ctx)
    # every call the run made, /bin/true's none: the clone's and the vfork children's are not among them
    got = {"%s.%s" % (c["domain"], c["name"]): c["count"] for c in rep["calls"]}
    check_eq(got, {"process.vfork": N, "process.posix_spawn": N, "process.waitpid": 2 * N + 1, "io.open": 1,
                   "io.write": 3, "io.close": 1, "stdio.printf": 2, "stdio.fflush": 1}, "%s: calls" % mode)
    parent = need_file(rep, os.path.join(d, "parent"))
    check_eq((parent["opens"], parent["writes"], parent["write_bytes"]), (1, 3, 21),
             "%s: the parent's file (opens, writes, bytes)" % mode)
    check_eq(file_entry(rep, os.path.join(d, "clone")), None, "%s: the clone's file, never recorded" % mode)
    note("%s: %d dropped, %d children" % (mode, rep["dropped_events"], len(kids)))


def test():
    if not os.access("/bin/true", os.X_OK):
        skip("no /bin/true")
    prog = build_c("vfork_after_clone", SOURCE, cflags=["-O1"])
    check_run(prog, "vfork", 0)
    check_run(prog, "vm", CLONE_CALLS)


if __name__ == "__main__":
    main(test)
