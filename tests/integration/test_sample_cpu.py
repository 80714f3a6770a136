"""CPU samples (--sample=HZ) weigh what the process used: a CPU spinner, in C (the workload cpu_spin) and in
Python, sampled at 100, 997 and 4000 Hz. The kernel checks CPU-time timers at its tick (often 250 Hz), so
above that rate one signal stands for several periods: each sample must weigh the CPU time since its
thread's previous one, not one period.

Ratio on the same run (not a timing threshold): the sampled CPU time of rank0.json (samples.cpu_ns), of the
text report's "CPU samples: N for X of CPU time" and of rank0.folded's cpu lines (microseconds) is within
15 % of the CPU time the process measured for itself (CLOCK_PROCESS_CPUTIME_ID) just before it exits.
Exact: the sum of samples.stacks[].cpu_ns over all the stacks is samples.cpu_ns.

Every thread is sampled from its start, not from its first recorded call: cpu_spin threads has 3 threads
spin pure arithmetic (no call profwrap records) while the main thread waits in pthread_join, and a Python
program does the same with 3 threading.Thread running a pure-Python loop; at 100 and 997 Hz the same
figures are within 15 % of the process's CPU time, the spinning threads' function (spin_thread, the Python
work) is on the stacks of at least 80 % of the sampled CPU time, and no frame of libprofwrap.so is on any.
A thread's timer ends with it: after cpu_spin short has run 300 threads one after the other at 997 Hz, the
process has at most one POSIX timer left (/proc/self/timers: the main thread's). A thread that was running
before profwrap started (made by the constructor of a library the program links, which the loader runs
before profwrap's) is sampled too: it spins for 500 ms of CPU after main lets it go, and the sampled CPU time
at 997 Hz is within 15 % of the process's, most of it on its function's stacks.

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
THREAD_RATES = (100, 997)
THREAD_MS = 500
SHORT_THREADS = 300
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

PY_THREADS = """
import json, threading, time
def work():
    until = time.thread_time_ns() + %d * 1000000
    x = 0
    while time.thread_time_ns() < until:
        for i in range(20000):
            x += i
threads = [threading.Thread(target=work) for _ in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"cpu_ns": time.process_time_ns()}))
""" % THREAD_MS

# The early thread waits in pthread_barrier_wait, which profwrap does not wrap: it makes no call profwrap records.
EARLY_LIB = r"""
#include <pthread.h>
#include <stdint.h>
#include <time.h>
pthread_barrier_t early_go;
pthread_t early_thread;
static volatile uint64_t sink;
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static void *early_spin(void *unused)
{
    pthread_barrier_wait(&early_go);
    uint64_t until = thread_cpu_ns() + %d * 1000000ull;
    while (thread_cpu_ns() < until)
        for (int i = 0; i < 100000; i++)
            sink = sink * 3 + 1;
    return unused;
}
__attribute__((constructor)) static void early_start(void)
{
    pthread_barrier_init(&early_go, NULL, 2);
    pthread_create(&early_thread, NULL, early_spin, NULL);
}
""" % THREAD_MS

EARLY_MAIN = r"""
#include <pthread.h>
#include <stdio.h>
#include <time.h>
extern pthread_barrier_t early_go;
extern pthread_t early_thread;
int main(void)
{
    pthread_barrier_wait(&early_go);
    pthread_join(early_thread, NULL);
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    printf("{\"cpu_ns\": %lld}\n", (long long)ts.tv_sec * 1000000000 + ts.tv_nsec);
    return 0;
}
"""


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


def thread_misses(name, cmd, fn, hz):
    """spin() of a workload whose threads spin in function fn, and where its samples fell: most of the CPU
    time on stacks through fn (the threads', not the main thread's), none in profwrap."""
    misses = spin(name, cmd, hz)
    out = "OUT-%s-%d" % (name, hz)
    lines = [(fr, n) for fr, n in folded(out) if fr[0] == "cpu"]
    total = sum(n for _, n in lines)
    on_threads = sum(n for fr, n in lines if any(f.split(" (")[0] == fn for f in fr))
    if on_threads < 0.8 * total:
        misses.append("%s at %d Hz: %d of %d us of sampled CPU on stacks through %s" % (
            name, hz, on_threads, total, fn))
    stacks = (load_report(out).get("samples") or {}).get("stacks") or []
    ours = sorted(set(f.get("function") or "?" for x in stacks for f in x.get("frames") or []
                      if "libprofwrap" in (f.get("module") or "")))
    if ours:
        misses.append("%s at %d Hz: profwrap's frames on sampled stacks: %r" % (name, hz, ours))
    return misses


def test_weights():
    prog = workload("cpu_spin")
    with open("spin.py", "w") as f:
        f.write(PY_SPIN)
    misses = []
    for hz in RATES:
        misses += spin("c", [prog, "arith", str(SPIN_MS)], hz)
        misses += spin("python", [PYTHON, "spin.py"], hz)
    check(not misses, "sampled CPU time off the process's:\n  %s", "\n  ".join(misses))


def test_threads():
    with open("threads.py", "w") as f:
        f.write(PY_THREADS)
    misses = []
    for hz in THREAD_RATES:
        misses += thread_misses("c-threads", [workload("cpu_spin"), "threads", str(THREAD_MS)], "spin_thread", hz)
        misses += thread_misses("python-threads", [PYTHON, "threads.py"], "work", hz)
    check(not misses, "threads' sampled CPU time off the process's:\n  %s", "\n  ".join(misses))


def test_short_threads():
    r, rep = profile([workload("cpu_spin"), "short", str(SHORT_THREADS)], "OUT-short", opts=["--sample=997"],
                     env=clean_env())
    truth = truth_of(r)
    s = rep.get("samples") or {}
    note("%d short threads: %d samples, %.1f ms sampled for %.1f ms used, %d timers left" % (
        SHORT_THREADS, s.get("count", 0), s.get("cpu_ns", 0) / 1e6, truth["cpu_ns"] / 1e6, truth["timers"]))
    if truth["timers"] >= 0:
        check(truth["timers"] <= 1, "%d POSIX timers left after %d threads ended (at most the main thread's "
              "expected)", truth["timers"], SHORT_THREADS)


def test_early_thread():
    d = os.path.abspath("early")
    build_c("libearly.so", EARLY_LIB, cflags=["-O2"], ldflags=["-lpthread"], shared=True, directory=d)
    prog = build_c("early_main", EARLY_MAIN, ldflags=["-L" + d, "-learly", "-Wl,-rpath," + d, "-lpthread"],
                   directory=d)
    misses = thread_misses("early", [prog], "early_spin", 997)
    check(not misses, "an early thread's sampled CPU time off the process's:\n  %s", "\n  ".join(misses))


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
    for t in (test_weights, test_threads, test_short_threads, test_early_thread, test_vdso):
        try:
            t()
            note("ok %s" % t.__name__)
        except Fail as e:
            note("FAIL %s: %s" % (t.__name__, e))
            failures.append(t.__name__)
    if failures:
        raise Fail("failed: %s" % ", ".join(failures))


main(test)
