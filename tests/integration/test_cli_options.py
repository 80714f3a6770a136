"""The command line: output directory rules (-o, -f), --trace, --no-follow-fork, --ring-size, -q, --help,
--version, and nothing on stdout but the target's own."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

DOMAINS = {"io", "stdio", "process", "dl", "wait", "meta"}


def test_output_dir():
    # A non-empty output directory is refused without -f, before the target runs.
    os.makedirs("NONEMPTY")
    with open("NONEMPTY/users-file.txt", "w") as f:
        f.write("keep me\n")
    marker = os.path.abspath("marker-1")
    r = profwrap(["-q", "-o", "NONEMPTY", "--", "touch", marker])
    check(r.rc != 0, "profwrap ran into a non-empty output directory without -f\n" + r.describe())
    check(not os.path.exists(marker), "the target ran although the output directory was refused")
    check_eq(len(r.err.splitlines()), 1, "stderr lines when refusing the output directory: %r" % r.err)
    check("-f" in r.err, "the refusal does not mention -f: %r", r.err)
    check_eq(sorted(os.listdir("NONEMPTY")), ["users-file.txt"], "NONEMPTY contents after the refusal")

    # Accepted with -f; the user's own file stays.
    r, rep = profile(["touch", marker], "NONEMPTY", opts=["-f"])
    check(os.path.exists(marker), "the target did not run with -f")
    check_eq(open("NONEMPTY/users-file.txt").read(), "keep me\n", "the user's file in the output directory")
    check_eq([p["argv"] for p in rep["processes"]], ["touch " + marker], "processes of the -f run")

    # -f over an earlier run: its raw traces go too, so the new report holds the new run only.
    r, rep = profile(["sh", "-c", "ls / >/dev/null"], "RERUN")
    check_eq(len(rep["processes"]), 2, "processes of the first run into RERUN (sh, ls)\n" + describe_processes(rep))
    r, rep = profile(["true"], "RERUN", opts=["--force"])
    check_eq([p["argv"] for p in rep["processes"]], ["true"], "processes after -f over an earlier run")
    check_eq(len([n for n in os.listdir("RERUN/raw") if n.endswith(".pwt")]), 1, "raw traces after -f")

    # Default output directory: ./profwrap-out.
    os.makedirs("default-cwd")
    r = profwrap(["-q", "--", "true"], cwd="default-cwd")
    check_eq(r.rc, 0, "profwrap with the default output directory\n" + r.describe())
    check(os.path.exists("default-cwd/profwrap-out/rank0.json"), "no profwrap-out/rank0.json in the working directory")


def test_trace():
    cmd = ["sh", "-c", "ls / >/dev/null; cat /dev/null; exit 0"]
    r, rep = profile(cmd, "TRACE-IO", opts=["--trace=io"])
    domains = {c["domain"] for c in rep["calls"]}
    check_eq(domains, {"io"}, "domains recorded with --trace=io\n" + describe_calls(rep))
    check_eq(sorted((p["argv"].split()[0], p["how"], p["exit_code"]) for p in rep["processes"]),
             [("cat", "exited", 0), ("ls", "exited", 0), ("sh", "exited", 0)],
             "processes are still followed, and their ends known, with --trace=io\n" + describe_processes(rep))

    r, rep = profile(cmd, "TRACE-PW", opts=["--trace", "process,wait"])
    domains = {c["domain"] for c in rep["calls"]}
    check(domains <= {"process", "wait"}, "domains recorded with --trace process,wait: %r", domains)
    check("process" in domains, "no process calls with --trace process,wait\n%s", describe_calls(rep))

    r, rep = profile(cmd, "TRACE-ALL")
    domains = {c["domain"] for c in rep["calls"]}
    check({"io", "stdio", "process"} <= domains, "domains recorded by default: %r", domains)
    check(domains <= DOMAINS, "unknown domains: %r", domains)

    for bad, name in (("bogus", "bogus"), ("io,nope", "nope"), ("", None)):
        marker = os.path.abspath("marker-trace-%s" % (name or "empty"))
        r = profwrap(["-q", "-o", "TRACE-BAD", "--trace=" + bad, "--", "touch", marker])
        check_eq(r.rc, 2, "profwrap --trace=%s exit status\n%s" % (bad, r.describe()))
        check_eq(len(r.err.splitlines()), 1, "stderr lines for --trace=%s: %r" % (bad, r.err))
        if name:
            check("'%s'" % name in r.err, "the message does not name the domain %r: %r", name, r.err)
        check(not os.path.exists(marker), "the target ran with --trace=%s" % bad)


def test_ring_size():
    for bad in ("1000", "4097", "0", "-4096", "12K", "4x", "", "1T"):
        r = profwrap(["-q", "-o", "RING-BAD", "--ring-size=" + bad, "--", "true"])
        check_eq(r.rc, 2, "profwrap --ring-size=%s exit status\n%s" % (bad, r.describe()))
        check_eq(len(r.err.splitlines()), 1, "stderr lines for --ring-size=%s: %r" % (bad, r.err))
    for good in ("4096", "64K", "1M", "8m"):
        r, rep = profile(["true"], "RING-" + good, opts=["--ring-size=" + good])
        check_eq(len(rep["processes"]), 1, "processes with --ring-size=%s" % good)


def test_no_follow_fork():
    r, rep = profile(["sh", "-c", "ls >/dev/null; true"], "NOFOLLOW", opts=["--no-follow-fork"])
    procs = rep["processes"]
    check_eq(len(procs), 1, "processes with --no-follow-fork\n" + describe_processes(rep))
    check_eq(procs[0]["argv"], "sh -c ls >/dev/null; true", "the one process with --no-follow-fork")
    check_eq((procs[0]["how"], procs[0]["exit_code"]), ("exited", 0), "how the shell ended")
    r, rep = profile(["sh", "-c", "ls >/dev/null; true"], "FOLLOW")
    check_eq(sorted(p["argv"] for p in rep["processes"]), ["ls", "sh -c ls >/dev/null; true"],
             "processes without --no-follow-fork (sh starts ls with vfork + exec)\n" + describe_processes(rep))


def test_stdout():
    r = profwrap(["-q", "-o", "ECHO-Q", "--", "echo", "hi"])
    check_eq(r.rc, 0, "profwrap -q -- echo hi\n" + r.describe())
    check_eq(r.out_bytes, b"hi\n", "stdout of profwrap -q -- echo hi")
    check_eq(r.err, "", "stderr of profwrap -q -- echo hi")
    r = profwrap(["-o", "ECHO", "--", "echo", "hi"])
    check_eq(r.rc, 0, "profwrap -- echo hi\n" + r.describe())
    check_eq(r.out_bytes, b"hi\n", "stdout of profwrap -- echo hi (not quiet)")
    check(r.err.startswith("profwrap: "), "stderr of profwrap -- echo hi: %r", r.err)
    # The target's stdin still reaches it.
    with open("stdin.txt", "wb") as f:
        f.write(b"line one\nline two\n")
    with open("stdin.txt", "rb") as f:
        r = profwrap(["-q", "-o", "CAT", "--", "cat"], stdin=f)
    check_eq(r.out_bytes, b"line one\nline two\n", "stdout of profwrap -q -- cat < stdin.txt")


def test_help_version():
    r = profwrap(["--help"])
    check_eq(r.rc, 0, "profwrap --help exit status")
    check(r.out.startswith("usage: profwrap"), "profwrap --help stdout: %r", r.out[:200])
    for opt in ("--output", "--force", "--trace", "--no-follow-fork", "--ring-size", "--quiet", "--version"):
        check(opt in r.out, "--help does not mention %s", opt)
    check_eq(profwrap(["-h"]).out, r.out, "profwrap -h stdout")
    for opt in ("--version", "-V"):
        r = profwrap([opt])
        check_eq(r.rc, 0, "profwrap %s exit status" % opt)
        check(re.fullmatch(r"profwrap \d+\.\d+\.\d+\S*\n", r.out), "profwrap %s stdout: %r", opt, r.out)
    r = profwrap([])
    check_eq(r.rc, 2, "profwrap with no command: exit status")
    check_eq(r.out, "", "profwrap with no command: stdout")
    check("usage" in r.err, "profwrap with no command: stderr has no usage: %r", r.err)
    r = profwrap(["--no-such-option", "--", "true"])
    check_eq(r.rc, 2, "profwrap --no-such-option exit status")


def test():
    test_output_dir()
    test_trace()
    test_ring_size()
    test_no_follow_fork()
    test_stdout()
    test_help_version()


main(test)
