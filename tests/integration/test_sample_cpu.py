"""CPU samples (--sample=HZ) weigh what the process used: a CPU spinner, in C (the workload cpu_spin) and in
Python, sampled at 100, 997 and 4000 Hz. The kernel checks CPU-time timers at its tick (often 250 Hz), so
above that rate one signal stands for several periods: each sample must weigh the CPU time since its
thread's previous one, not one period.

Ratio on the same run (not a timing threshold): the sampled CPU time of rank0.json (samples.cpu_ns), of the
text report's "CPU samples: N for X of CPU time" and of rank0.folded's cpu lines (microseconds) is within
15 % of the CPU time the process measured for itself (CLOCK_PROCESS_CPUTIME_ID) just before it exits.
Exact: the sum of samples.stacks[].cpu_ns over all the stacks is samples.cpu_ns.

The vDSO, which no file holds: cpu_spin clock calls clock_gettime(CLOCK_MONOTONIC) in a loop, and the
samples that fall in the vDSO name its function (__vdso_clock_gettime, or its alias clock_gettime) with
linux-vdso.so.1 as the module, in rank0.json and in rank0.folded; none is left as linux-vdso.so.1+0xOFFSET."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

RATES = (100, 997, 4000)
SPIN_MS = 1000
TOLERANCE = 0.15
VDSO = "linux-vdso.so.1"
VDSO_NAMES = ("__vdso_clock_gettime", "clock_gettime")
UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
UNSET = ("PROFWRAP_STACKS", "PROFWRAP_STACK_THRESHOLD", "PROFWRAP_SAMPLE", "PROFWRAP_CAPTURE_RANGE",
         "PROFWRAP_DELAY", "PROFWRAP_DURATION", "PROFWRAP_SCHEDULE")

PY_SPIN = """
import json, time
until = time.process_time_ns() + %d * 1000000
x = 0
while time.process_time_ns() < until:
    for i in range(20000):
        x += i
print(json.dumps({"cpu_ns": time.process_time_ns()}))
""" % SPIN_MS


def clean_env():
    env = dict(os.environ)
    for k in UNSET:
        env.pop(k, None)
    return env


def truth_of(r):
    lines = [x for x in r.out.splitlines() if x.startswith("{")]
    check(len(lines) == 1, "the workload printed no JSON line of its CPU time\n%s", r.describe())
    return json.loads(lines[0])


def folded(out):
    """[(frames, microseconds)] of OUT/rank0.folded."""
    path = os.path.join(out, "rank0.folded")
    check(os.path.exists(path), "no %s", path)
    lines = []
    with open(path, "rb") as f:
        for line in f.read().decode("utf-8").splitlines():
            m = re.fullmatch(r"(.*) (\d+)", line)
            check(m is not None, "a rank0.folded line that is not 'STACK N': %r", line)
            lines.append((m.group(1).split(";"), int(m.group(2))))
    return lines


def text_cpu_ns(out):
    """The CPU time of the text report's "CPU samples: N for X of CPU time" line, in ns (0: no such line)."""
    with open(os.path.join(out, "rank0.txt"), "rb") as f:
        text = f.read().decode("utf-8")
    m = re.search(r"^CPU samples: (\d+) for ([\d.]+) (ns|us|ms|s) of CPU time", text, re.M)
    return float(m.group(2)) * UNITS[m.group(3)] if m else 0


def near(what, got_ns, cpu_ns):
    """A line saying how got_ns misses cpu_ns, or None when it is within TOLERANCE."""
    if abs(got_ns - cpu_ns) <= TOLERANCE * cpu_ns:
        return None
    return "%s: %.1f ms of CPU sampled, the process used %.1f ms (%.0f %%; within %d %% expected)" % (
        what, got_ns / 1e6, cpu_ns / 1e6, 100.0 * got_ns / cpu_ns, int(TOLERANCE * 100))


def spin(name, cmd, hz):
    """Runs cmd at --sample=hz. Returns the lines saying which figures miss the process's CPU time."""
    out = "OUT-%s-%d" % (name, hz)
    r, rep = profile(cmd, out, opts=["--sample=%d" % hz], env=clean_env())
    cpu = truth_of(r)["cpu_ns"]
    s = rep.get("samples")
    check(isinstance(s, dict) and s.get("count", 0) > 0, "%s at %d Hz: no samples in rank0.json: %r", name, hz, s)
    ctx = "%s at --sample=%d, %d samples" % (name, hz, s["count"])
    check_eq(s.get("period_ns"), 1000000000 // hz, "samples.period_ns (%s)" % ctx)
    stacks = s.get("stacks") or []
    misses = [near("rank0.folded's cpu lines", 1000 * sum(n for fr, n in folded(out) if fr[0] == "cpu"), cpu),
              near("samples.cpu_ns", s.get("cpu_ns", 0), cpu),
              near("rank0.txt's \"CPU samples\" line", text_cpu_ns(out), cpu)]
    # the JSON lists the 100 heaviest stacks: below that, all of them
    listed = sum(x.get("cpu_ns", 0) for x in stacks)
    if len(stacks) < 100 and listed != s.get("cpu_ns"):
        misses.append("the sum of samples.stacks[].cpu_ns: %d, samples.cpu_ns %r" % (listed, s.get("cpu_ns")))
    note("%s: %.1f ms sampled for %.1f ms used" % (ctx, s.get("cpu_ns", 0) / 1e6, cpu / 1e6))
    return ["%s (%s)" % (m, ctx) for m in misses if m]


def test_weights():
    prog = workload("cpu_spin")
    with open("spin.py", "w") as f:
        f.write(PY_SPIN)
    misses = []
    for hz in RATES:
        misses += spin("c", [prog, "arith", str(SPIN_MS)], hz)
        misses += spin("python", [PYTHON, "spin.py"], hz)
    check(not misses, "sampled CPU time off the process's:\n  %s", "\n  ".join(misses))


def test_vdso():
    prog = workload("cpu_spin")
    r, rep = profile([prog, "clock", "500"], "OUT-vdso", opts=["--sample=997"], env=clean_env())
    calls = truth_of(r)["calls"]
    check(calls > 0, "cpu_spin clock made no calls")
    stacks = (rep.get("samples") or {}).get("stacks") or []
    inner = [x["frames"][0] for x in stacks if x.get("frames")]
    in_vdso = [f for f in inner if f.get("module") == VDSO]
    check(in_vdso, "no sample's innermost frame is in %s (%d calls of clock_gettime); innermost: %r", VDSO, calls,
          sorted(set((f.get("function"), f.get("module")) for f in inner), key=repr))
    check(all(f.get("function") in VDSO_NAMES for f in in_vdso),
          "samples in %s whose function is not one of %r: %r", VDSO, VDSO_NAMES, in_vdso)
    lines = folded("OUT-vdso")
    check(any(fr[0] == "cpu" and fr[-1] in VDSO_NAMES for fr, _ in lines),
          "no folded cpu line ends in %s", " or ".join(VDSO_NAMES))
    unnamed = [fr[-1] for fr, _ in lines if VDSO + "+0x" in ";".join(fr)]
    check(not unnamed, "folded frames left as vDSO offsets: %r", unnamed)


def test():
    failures = []
    for t in (test_weights, test_vdso):
        try:
            t()
            note("ok %s" % t.__name__)
        except Fail as e:
            note("FAIL %s: %s" % (t.__name__, e))
            failures.append(t.__name__)
    if failures:
        raise Fail("failed: %s" % ", ".join(failures))


main(test)
