"""Collector started late or never: the preload stays passive and the app is unharmed.

The program prints a line, writes 100 records to a file, forks a child that writes 50 records to FILE.child
and _exits 7, prints the child's status and exits 5. Its stdout, exit status and files must be those of a run
without profwrap in every case below; stderr may only hold profwrap's notice ("profwrap: WHY; process PID runs
unprofiled"), at most once per process; no shared memory of its processes is left in /dev/shm.

(a) preload-only mode (LD_PRELOAD + PROFWRAP_OUTPUT) with PROFWRAP_COLLECTOR naming a file that does not
    exist, and /bin/false (starts, never listens): one notice, from the first process (its fork child
    inherits that it was said); no output directory is made.
(b) the CLI's environment (PROFWRAP_SESSION_DIR, PROFWRAP_OUTPUT) with no collector listening, a private
    empty session directory and one that does not exist: passive and silent (under the CLI such a process is
    one that outlived its session).
(c) preload-only mode with a collector that starts late (a shell wrapper that sleeps, then execs the real
    one): within the 3 s the first process waits for it, everything is recorded (after the wait); later
    than that, the first process runs unprofiled (one notice), and the child it forks once the collector
    listens is recorded, alone."""
import os
import re
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

PROG_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void records(const char *path, int n)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0)
		exit(2);
	for (int i = 0; i < n; i++)
		if (write(fd, "record\n", 7) != 7)
			exit(2);
	close(fd);
}

/* usage: prog FILE PIDFILE WAIT_FOR: WAIT_FOR ("-": nothing) is a path to wait for before the fork */
int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	printf("start\n");
	fflush(stdout);
	records(argv[1], 100);
	struct stat st;
	const struct timespec tick = {0, 10000000};
	for (int i = 0; strcmp(argv[3], "-") != 0 && stat(argv[3], &st) < 0 && i < 1000; i++)
		nanosleep(&tick, NULL);
	if (strcmp(argv[3], "-") != 0) {
		const struct timespec settle = {0, 100000000}; /* bound before listening */
		nanosleep(&settle, NULL);
	}
	char child_path[4096];
	snprintf(child_path, sizeof child_path, "%s.child", argv[1]);
	pid_t pid = fork();
	if (pid == 0) {
		records(child_path, 50);
		_exit(7);
	}
	int status;
	waitpid(pid, &status, 0);
	FILE *f = fopen(argv[2], "w");
	fprintf(f, "%d %d\n", (int)getpid(), (int)pid);
	fclose(f);
	printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 5;
}
"""

NOTICE = re.compile(r"^profwrap: .+; process (\d+) runs unprofiled$")


def clean_env(extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROFWRAP_") and k != "LD_PRELOAD"}
    env.update(extra)
    return env


def shm_of(pids):
    """Names in /dev/shm of segments of these pids."""
    uid = os.getuid()
    return [n for n in os.listdir("/dev/shm")
            for pid in pids if re.fullmatch(r"profwrap\.%d\.%d\.[0-9a-f]+" % (uid, pid), n)]


def remove_session(out):
    """Removes the preload-only session directory of out and what the preload left there."""
    sdir = preload_session_dir(out)
    if os.path.isdir(sdir):
        for leaf in os.listdir(sdir):
            os.unlink(os.path.join(sdir, leaf))
        os.rmdir(sdir)


class Case:
    def __init__(self, prog, name, env, wait_for="-"):
        self.prog, self.name, self.env, self.wait_for = prog, name, env, wait_for
        self.data = os.path.abspath("data-" + name)
        self.out = os.path.abspath("OUT-" + name)
        os.makedirs(self.data)

    def run(self, baseline):
        """Runs the program (with self.env unless baseline) and checks it did what a run without profwrap
        does. Returns (Result, top pid, child pid, path of its file)."""
        path, pidfile = os.path.join(self.data, "records"), os.path.join(self.data, "pids")
        env = clean_env({} if baseline else self.env)
        r = run([self.prog, path, pidfile, "-" if baseline else self.wait_for], env=env, timeout=30)
        what = "%s%s" % (self.name, " (without profwrap)" if baseline else "")
        check_eq((r.rc, r.out), (5, "start\nchild exit 7\n"), "%s: (exit status, stdout)\n%s" % (what, r.describe()))
        with open(path, "rb") as f:
            check_eq(f.read(), b"record\n" * 100, "%s: the file the program wrote" % what)
        with open(path + ".child", "rb") as f:
            check_eq(f.read(), b"record\n" * 50, "%s: the file its child wrote" % what)
        with open(pidfile) as f:
            top, child = (int(x) for x in f.read().split())
        return r, top, child, path

    def check_unharmed(self, notices_from, collector=False):
        """Runs it under the preload; stderr holds exactly one notice from each pid in notices_from ("top",
        "child") and nothing else. With collector, waits for the collector to write the reports and end;
        then nothing of its processes is left in /dev/shm."""
        base, _, _, _ = self.run(True)
        check_eq(base.err, "", "%s: stderr without profwrap" % self.name)
        r, top, child, path = self.run(False)
        lines = r.err.splitlines()
        pids = []
        for line in lines:
            m = NOTICE.match(line)
            check(m is not None, "%s: a line on stderr that is not profwrap's notice: %r", self.name, line)
            pids.append(int(m.group(1)))
        want = sorted({"top": top, "child": child}[w] for w in notices_from)
        check_eq(sorted(pids), want, "%s: pids of the notices on stderr %r (top %d, child %d)" % (
            self.name, lines, top, child))
        if collector:
            wait_collector_done(self.out, 15)
        leftover = shm_of([top, child])
        check_eq(leftover, [], "%s: shared memory left in /dev/shm" % self.name)
        note("%s: unharmed; stderr %r" % (self.name, r.err))
        return r, top, child, path


def wait_collector_done(out, timeout):
    done = wait_for(lambda: os.path.exists(os.path.join(out, "summary.json")) and not collectors_for(out), timeout, 0.1)
    check(done, "no %s/summary.json within %ss of the end of the run (collectors running: %r)" % (
        out, timeout, collectors_for(out)))


def test_never(prog):
    for name, collector in (("missing", os.path.abspath("no-such-collector")), ("false", "/bin/false")):
        case = Case(prog, name, {"LD_PRELOAD": LIB, "PROFWRAP_COLLECTOR": collector})
        case.env["PROFWRAP_OUTPUT"] = case.out
        try:
            case.check_unharmed(["top"])
        finally:
            remove_session(case.out)
        check(not os.path.exists(case.out), "%s: output directory %s made with no collector" % (name, case.out))


def test_cli_env(prog):
    private = tmpdir("session-")
    os.chmod(private, stat.S_IRWXU)
    for name, sdir in (("cli-empty", private), ("cli-gone", os.path.join(private, "gone"))):
        case = Case(prog, name, {"LD_PRELOAD": LIB, "PROFWRAP_SESSION_DIR": sdir})
        case.env["PROFWRAP_OUTPUT"] = case.out
        case.check_unharmed([])
        check(not os.path.exists(case.out), "%s: output directory %s made with no collector" % (name, case.out))
        check_eq(os.listdir(private), [], "%s: what the preload left in the session directory" % name)


def late_collector(seconds):
    """A collector that starts `seconds` late: a shell script that sleeps, then execs the real one."""
    path = os.path.abspath("late-collector-%s" % seconds)
    with open(path, "w") as f:
        f.write("#!/bin/sh\nsleep %s\nexec %s \"$@\"\n" % (seconds, COLLECTOR))
    os.chmod(path, 0o755)
    return path


def test_late(prog):
    # Within the first process's wait (3 s): it waits, then everything is recorded.
    case = Case(prog, "late-1s", {"LD_PRELOAD": LIB, "PROFWRAP_COLLECTOR": late_collector(1)})
    case.env["PROFWRAP_OUTPUT"] = case.out
    try:
        r, top, child, path = case.check_unharmed([], collector=True)
        check(r.seconds >= 1.0, "late-1s: the run took %.2f s: the first process did not wait for the collector",
              r.seconds)
    finally:
        remove_session(case.out)
    rep = load_report(case.out)
    ctx = "\n" + describe_processes(rep)
    check_eq(sorted((p["pid"], p["how"], p["exit_code"]) for p in processes(rep)),
             sorted([(top, "exited", 5), (child, "exited", 7)]), "late-1s: processes" + ctx)
    check_eq(need_file(rep, path)["writes"], 100, "late-1s: writes of the program's file")
    check_eq(need_file(rep, path + ".child")["writes"], 50, "late-1s: writes of the child's file")
    note("late-1s: took %.2f s; all recorded" % r.seconds)

    # Later than that: the first process gives up and runs unprofiled; the collector, once up, takes the
    # child forked after it listens (the program waits for the socket).
    case = Case(prog, "late-4s", {"LD_PRELOAD": LIB, "PROFWRAP_COLLECTOR": late_collector(4)})
    case.env["PROFWRAP_OUTPUT"] = case.out
    case.wait_for = os.path.join(preload_session_dir(case.out), "sock")
    try:
        r, top, child, path = case.check_unharmed(["top"], collector=True)
    finally:
        remove_session(case.out)
    rep = load_report(case.out)
    ctx = "\n" + describe_processes(rep)
    check_eq([(p["pid"], p["ppid"], p["how"], p["exit_code"]) for p in processes(rep)], [(child, top, "exited", 7)],
             "late-4s: processes (only the child forked once the collector listened)" + ctx)
    check_eq(need_file(rep, path + ".child")["writes"], 50, "late-4s: writes of the child's file")
    check(file_entry(rep, path) is None, "late-4s: the unprofiled parent's file is in the report: %r",
          file_entry(rep, path))
    note("late-4s: took %.2f s; the parent unprofiled, its child recorded" % r.seconds)


def test():
    prog = build_c("absent_prog", PROG_C, cflags=["-O2"])
    test_never(prog)
    test_cli_env(prog)
    test_late(prog)


main(test)
