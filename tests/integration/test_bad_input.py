"""Bad option values and environment settings. Under the CLI, every option value (negative, zero where zero
means nothing, overflowing, garbage, empty), every unknown --trace domain, an output directory that cannot be
made or written, and every bad PROFWRAP_* value the CLI passes on from its environment is refused before
anything starts: exactly one line on stderr naming the option or variable and the value, exit status 2 (the
CLI's usage error), nothing on stdout, and the target never started (it would create a marker file). Values
the CLI sets itself are not read from the environment. In preload-only mode (LD_PRELOAD and PROFWRAP_OUTPUT
by hand) a bad PROFWRAP_RING_SIZE, _LANES, _TRACE or _ARENA_SIZE leaves the program unharmed (same stdout,
same exit status): each process says once which value it refused and profiles with the default instead."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

HUGE = "99999999999999999999"
COMMON_BAD = ("-1", "0", HUGE, "garbage", "")
# Values of COMMON_BAD an option takes: zero means "all" or "none" there (--help says so); a step range is a
# name, any text but the empty one.
ACCEPTED = {
    "--capture-count": {"0"},
    "--delay": {"0"},
    "--duration": {"0"},
    "--stack-threshold": {"0"},
    "--sample": {"0"},
    "--step-range": {"-1", "0", HUGE, "garbage"},
}
OPTIONS = ("--ring-size", "--trace", "--capture-range", "--capture-count", "--delay", "--duration", "--schedule",
           "--step-range", "--stacks", "--stack-threshold", "--sample")

counter = [0]


def fresh(prefix):
    counter[0] += 1
    return os.path.abspath("%s-%d" % (prefix, counter[0]))


def expect_refused(args, names, what, extra_env=None, out=None):
    """Runs profwrap [args] -o OUT -- touch MARKER and checks the refusal: exit 2, one line on stderr that
    holds every string of names, no stdout, no marker, and OUT not created when it did not exist."""
    marker = fresh("marker")
    out = out or fresh("OUT")
    existed = os.path.lexists(out)
    r = profwrap(list(args) + ["-o", out, "--", "touch", marker], extra_env=extra_env)
    ctx = "%s\n%s" % (what, r.describe())
    check_eq(r.rc, 2, "exit status, " + ctx)
    lines = r.err.splitlines()
    check_eq(len(lines), 1, "stderr lines, " + ctx)
    check(lines[0].startswith("profwrap: "), "the refusal does not start with 'profwrap: ': " + ctx)
    for n in names:
        check(n in lines[0], "the refusal does not name %r: %s", n, ctx)
    check_eq(r.out, "", "stdout, " + ctx)
    check(not os.path.exists(marker), "the target ran: " + ctx)
    if not existed:
        check(not os.path.lexists(out), "the output directory was made: " + ctx)
    return lines[0]


def expect_run(args, what, extra_env=None):
    """profwrap -q [args] -o OUT -- touch MARKER runs the target and reports it."""
    marker = fresh("marker")
    out = fresh("OUT")
    r = profwrap(["-q"] + list(args) + ["-o", out, "--", "touch", marker], extra_env=extra_env)
    ctx = "%s\n%s" % (what, r.describe())
    check_eq(r.rc, 0, "exit status, " + ctx)
    check_eq(r.err, "", "stderr, " + ctx)
    check(os.path.exists(marker), "the target did not run: " + ctx)
    rep = load_report(out)
    check_eq([p["argv"] for p in rep["processes"]], ["touch " + marker], "processes, " + ctx)


def quoted(value):
    return "'%s'" % value


def test_option_values():
    refused = 0
    for opt in OPTIONS:
        for value in COMMON_BAD:
            what = "%s=%s" % (opt, value)
            if value in ACCEPTED.get(opt, ()):
                expect_run([what], what)
                continue
            expect_refused(["-q", what], [opt, quoted(value)], what)
            refused += 1
    check_eq(refused, 46, "option values refused")
    # Unknown domains, wherever they are in the list; an empty name is refused too.
    for bad, name in (("bogus", "bogus"), ("io,bogus", "bogus"), ("IO", "IO"), ("io,", None), (",io", None),
                      ("io,,wait", None)):
        line = expect_refused(["-q", "--trace=" + bad], ["--trace", quoted(bad)], "--trace=" + bad)
        if name:
            check("unknown domain %s" % quoted(name) in line, "--trace=%s: the domain is not named: %r", bad, line)
        else:
            check("empty domain name" in line, "--trace=%s: %r", bad, line)
        check("(known: all, io, stdio," in line, "--trace=%s: the known domains are not listed: %r", bad, line)
    # Well-formed values are still taken.
    expect_run(["--trace=io,wait", "--ring-size=64K"], "--trace=io,wait --ring-size=64K")


def test_output_paths():
    with open("a-file", "w") as f:
        f.write("a file\n")
    a_file = os.path.abspath("a-file")
    expect_refused(["-q"], ["output", a_file, "not a directory"], "-o a regular file", out=a_file)
    expect_refused(["-q"], [a_file + "/sub", "Not a directory"], "-o under a regular file", out=a_file + "/sub")
    expect_refused(["-q"], ["/proc/pwtest-out", "No such file"], "-o into /proc", out="/proc/pwtest-out")
    # /proc itself with -f: nothing of ours to clear, and raw/ cannot be made there
    expect_refused(["-q", "-f"], ["/proc/raw"], "-o /proc -f", out="/proc")
    expect_refused(["-q"], ["%z"], "-o with an unknown %-sequence", out=fresh("OUT") + "-%z")
    expect_refused(["-q"], ["%q{"], "-o with an unclosed %q{", out=fresh("OUT") + "-%q{HOME")
    # raw/ a file in an output directory that is otherwise fine (with -f, since it is not empty)
    out = fresh("OUT-rawfile")
    os.makedirs(out)
    with open(os.path.join(out, "raw"), "w") as f:
        f.write("not a directory\n")
    expect_refused(["-q", "-f"], [out + "/raw", "not a directory"], "raw/ a file", out=out)
    check_eq(open(os.path.join(out, "raw")).read(), "not a directory\n", "the file named raw after the refusal")
    # A directory profwrap cannot write. Root is not held back by modes: a read-only bind mount.
    ro = os.path.abspath("read-only")
    os.makedirs(ro)
    if os.geteuid() == 0:
        mounted = subprocess.run(["mount", "--bind", "-o", "ro", ro, ro], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT).returncode == 0
        if not mounted:
            note("note: no read-only bind mount here (mount refused); the read-only case is not checked")
            return
    else:
        os.chmod(ro, 0o500)
        mounted = False
    try:
        expect_refused(["-q"], [ro, "not writable"], "-o a read-only directory", out=ro)
        expect_refused(["-q"], [ro + "/sub"], "-o under a read-only directory", out=ro + "/sub")
    finally:
        if mounted:
            subprocess.run(["umount", ro])
        else:
            os.chmod(ro, 0o700)


# PROFWRAP_* values the CLI passes on to every process: checked before anything starts.
ENV_BAD = {
    "PROFWRAP_LANES": ("-1", "0", HUGE, "garbage", "1024"),
    "PROFWRAP_ARENA_SIZE": ("-1", "0", HUGE, "garbage", "4095"),
    "PROFWRAP_CUPTI_BUFFER_SIZE": ("-1", "0", HUGE, "garbage"),
    "PROFWRAP_CUPTI_BUFFERS": ("-1", "0", HUGE, "garbage"),
    "PROFWRAP_CUPTI_FLUSH_MS": ("-1", "0", HUGE, "garbage"),
    "PROFWRAP_CLOCK": ("-1", "0", "garbage", "TSC"),
    "PROFWRAP_QUIET": ("-1", HUGE, "garbage", "2"),
    "PROFWRAP_RANK": ("-1", HUGE, "garbage"),
    "PROFWRAP_WORLD_SIZE": ("-1", "0", HUGE, "garbage"),
    "PROFWRAP_CAPTURE_RANGE": ("-1", "0", "garbage"),
    "PROFWRAP_CAPTURE_COUNT": ("-1", HUGE, "garbage"),
    "PROFWRAP_DELAY": ("-1", HUGE, "garbage"),
    "PROFWRAP_DURATION": ("-1", HUGE, "garbage"),
    "PROFWRAP_SCHEDULE": ("-1", "0", "garbage"),
    "PROFWRAP_STACKS": ("-1", "0", "garbage"),
    "PROFWRAP_STACK_THRESHOLD": ("-1", HUGE, "garbage"),
    "PROFWRAP_SAMPLE": ("-1", HUGE, "garbage"),
}


def test_environment():
    for name, values in sorted(ENV_BAD.items()):
        for value in values:
            what = "%s=%s" % (name, value)
            # -q sets PROFWRAP_QUIET itself: that one is checked without it
            expect_refused([] if name == "PROFWRAP_QUIET" else ["-q"], [name, value], what,
                           extra_env={name: value})
    # What the CLI sets itself is not read from the environment; an empty value is an unset one; an
    # option overrides its variable.
    for name, value in (("PROFWRAP_TRACE", "bogus"), ("PROFWRAP_RING_SIZE", "-1"), ("PROFWRAP_FOLLOW_FORK", "x"),
                        ("PROFWRAP_OUTPUT", "/proc/nowhere"), ("PROFWRAP_SESSION_DIR", "/nonexistent"),
                        ("PROFWRAP_QUIET", "garbage"), ("PROFWRAP_LANES", ""), ("PROFWRAP_DELAY", "")):
        expect_run([], "%s=%s" % (name, value), extra_env={name: value})
    expect_run(["--delay=0"], "PROFWRAP_DELAY=garbage with --delay=0", extra_env={"PROFWRAP_DELAY": "garbage"})
    # The combination is checked with the environment's settings: a count needs a range.
    expect_refused(["-q"], ["--capture-count"], "PROFWRAP_CAPTURE_COUNT=2 alone",
                   extra_env={"PROFWRAP_CAPTURE_COUNT": "2"})


SIZE = 54321
SCRIPT = 'cat "$0"; exit 3'


def preload_only(settings, data, expected):
    """Runs sh -c SCRIPT DATA in preload-only mode with settings in the environment: stdout and exit status
    as without the preload, one line per process (sh and cat: two) that is expected (or starts and ends as
    the pair expected says; None: no line), the run profiled with the defaults. Returns the report."""
    out = fresh("OUT-preload")
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("PROFWRAP_"):
            del env[k]
    bare = run(["sh", "-c", SCRIPT, data], env=env)
    try:
        r, rep = run_preload_only(["sh", "-c", SCRIPT, data], out, extra_env=settings)
    finally:
        remove_preload_session(out)
    ctx = "%r: exit status %r, %d bytes on stdout\n--- stderr ---\n%s" % (settings, r.rc, len(r.out_bytes), r.err)
    check_eq((r.rc, r.out_bytes), (bare.rc, bare.out_bytes), "exit status and stdout, as without profwrap, " + ctx)
    check_eq(r.rc, 3, "exit status, " + ctx)
    lines = r.err.splitlines()
    check_eq(len(lines), 2 if expected else 0, "stderr lines, " + ctx)
    for line in lines:
        if isinstance(expected, tuple):
            check(line.startswith(expected[0]) and line.endswith(expected[1]), "notice %r, expected %r...%r; %s",
                  line, expected[0], expected[1], ctx)
        else:
            check_eq(line, expected, "notice, " + ctx)
    check_eq(need_file(rep, data)["read_bytes"], SIZE, "read_bytes of the data file, " + ctx)
    check_eq(sorted((p["argv"].split()[0], p["how"]) for p in rep["processes"]),
             [("cat", "exited"), ("sh", "exited")], "processes (sh starts cat with vfork), " + ctx)
    return rep


def test_preload_only():
    data = write_file("data.bin", SIZE)
    preload_only({"PROFWRAP_RING_SIZE": "-1"}, data,
                 "profwrap: PROFWRAP_RING_SIZE='-1' is not a power of two from 4K to 1G (bytes; K, M, G suffixes);"
                 " the default is used")
    preload_only({"PROFWRAP_LANES": HUGE}, data,
                 "profwrap: PROFWRAP_LANES='%s' is not a whole number from 1 to 1023; the default is used" % HUGE)
    preload_only({"PROFWRAP_ARENA_SIZE": "garbage"}, data,
                 "profwrap: PROFWRAP_ARENA_SIZE='garbage' is not a whole number from 4K to 4G (bytes; K, M, G"
                 " suffixes); the default is used")
    # A bad domain list is refused whole: every domain is recorded, not none and not io alone.
    rep = preload_only({"PROFWRAP_TRACE": "io,bogus"}, data,
                       ("profwrap: PROFWRAP_TRACE='io,bogus' holds the unknown domain 'bogus' (known: all, io, stdio,",
                        "); the default is used"))
    check({"io", "stdio", "process"} <= {c["domain"] for c in rep["calls"]},
          "domains recorded after PROFWRAP_TRACE=io,bogus was refused: %r", sorted({c["domain"] for c in rep["calls"]}))
    # Several refused: still one line per process, naming the first.
    preload_only({"PROFWRAP_RING_SIZE": "0", "PROFWRAP_LANES": "0", "PROFWRAP_TRACE": "bogus",
                  "PROFWRAP_ARENA_SIZE": "-1"}, data,
                 "profwrap: PROFWRAP_RING_SIZE='0' is not a power of two from 4K to 1G (bytes; K, M, G suffixes);"
                 " the defaults are used for it and 3 other refused settings")
    # PROFWRAP_QUIET=1: not a word.
    preload_only({"PROFWRAP_LANES": "-1", "PROFWRAP_QUIET": "1"}, data, None)


def test():
    test_option_values()
    test_output_paths()
    test_environment()
    test_preload_only()


main(test)
