"""HTA (Holistic Trace Analysis, PyTorch's trace analyser) on profwrap's rank<R>.trace.json, as a user runs it:
tests/e2e/hta_check.py in HTA's own environment (scripts/e2e.sh makes it: PROFWRAP_HTA_PYTHON, else
~/.cache/profwrap/hta-venv/bin/python; skipped when neither imports hta).

Two ranks of tests/workloads/cuda_gpu_patterns overlap on the fake GPU (per step a 1 ms compute kernel and,
on a stream of its own, a 1 MiB all-reduce of 105 us under it, in an NVTX range "step", profiled with
--step-range=step), then checks what HTA found against
profwrap's own reports: both ranks read as ranks 0 and 1; per rank, HTA's GPU idle time within 2 % of the
report's (gpus[].idle_ns: HTA rounds each event to whole microseconds); HTA's kernel breakdown, per rank and
kernel, the report's counts and totals (within 2 us a kernel, the same rounding); the launch statistics one
row per cudaLaunchKernel of the workload (its compute kernels; NCCL's are launched inside ncclAllReduce); queue
lengths sampled; the communication/computation overlap computed, over 90 % (each all-reduce runs under a
compute kernel); HTA's iterations, one per step (ProfilerStep#0 to #59); and its GPU time per annotation, each
step's kernel and all-reduce (gpu_user_annotation)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

HERE = os.path.dirname(os.path.abspath(__file__))
HTA_CHECK = os.path.join(HERE, "..", "e2e", "hta_check.py")
DEFAULT_VENV = os.path.join(os.path.expanduser("~"), ".cache", "profwrap", "hta-venv")
STEP_GPU_NS = 1000000 + 104857  # the workload's compute kernel (500 blocks at 2 us) and 1 MiB at 10 GB/s
STEPS = 60  # HTA 0.5 stores correlation ids in the smallest int type that holds them, and then event indices in
            # a column of that type: ids above 127 keep it from int8 (a small trace's ids would overflow it)


def hta_python():
    py = os.environ.get("PROFWRAP_HTA_PYTHON") or os.path.join(DEFAULT_VENV, "bin", "python")
    if not os.access(py, os.X_OK):
        raise Skip("HTA not installed: run `make e2e` (installs it into %s)" % DEFAULT_VENV)
    r = run([py, "-c", "import hta"], timeout=120)
    if r.rc != 0:
        raise Skip("%s cannot import hta: %s" % (py, (r.err.strip().splitlines() or ["?"])[-1]))
    return py


def test():
    py = hta_python()
    profile_overlap_ranks("OUT", STEPS, opts=["--step-range=step"])
    reps = {rank: load_report("OUT", rank) for rank in (0, 1)}

    h = run([py, HTA_CHECK, "OUT", "0", "1"], timeout=300)
    check_eq(h.rc, 0, "HTA on OUT/rank0.trace.json and rank1.trace.json\n" + h.describe())
    found = json.loads(h.out.strip().splitlines()[-1])
    ctx = "\nHTA: " + json.dumps(found, sort_keys=True)
    check_eq(found["ranks"], [0, 1], "the ranks HTA read" + ctx)

    for rank, rep in reps.items():
        gpus = rep["gpus"]
        check_eq(len(gpus), 1, "rank %d: GPUs in the report" % rank)
        ours = gpus[0]["idle_ns"] / 1000.0
        theirs = found["temporal"][str(rank)]["idle_us"]
        check(abs(theirs - ours) <= 0.02 * ours, "rank %d: HTA's GPU idle time %.0f us, the report's %.0f us: more "
              "than 2 %% apart%s", rank, theirs, ours, ctx)

        names = demangled([k["name"] for k in rep["kernels"]])
        hta_kernels = {k["name"]: k for k in found["kernels"] if k["rank"] == rank}
        check_eq(sorted(hta_kernels), sorted(names.values()), "rank %d: the kernels HTA broke down" % rank + ctx)
        for k in rep["kernels"]:
            theirs = hta_kernels[names[k["name"]]]
            check_eq(theirs["count"], k["count"], "rank %d: HTA's count of %s" % (rank, names[k["name"]]))
            check(abs(theirs["sum_us"] * 1000 - k["total_ns"]) <= 2000 * k["count"],
                  "rank %d: HTA's total of %s %.0f us, the report's %d ns%s", rank, names[k["name"]],
                  theirs["sum_us"], k["total_ns"], ctx)
        check_eq(hta_kernels["overlap_kernel"]["type"], "COMPUTATION", "rank %d: HTA's type of overlap_kernel" % rank)
        nccl = [k for n, k in hta_kernels.items() if n.startswith("ncclDevKernel_AllReduce")]
        check(nccl and nccl[0]["type"] == "COMMUNICATION", "rank %d: HTA does not see the all-reduce kernel as "
              "communication%s", rank, ctx)

        check_eq(found["launches"].get(str(rank)), STEPS, "rank %d: launches in HTA's launch statistics" % rank)
        check(found["queue"].get(str(rank), 0) > 0, "rank %d: no queue length sample%s", rank, ctx)
        check_eq(found["iterations"].get(str(rank)), list(range(STEPS)),
                 "rank %d: the iterations HTA found (--step-range=step: ProfilerStep#N)" % rank)
        # each step's GPU time by its annotation: the compute kernel and the all-reduce (gpu_user_annotation)
        steps = {a["name"]: a["sum_us"] for a in found["annotations"] if a["rank"] == rank}
        check_eq(sorted(steps), sorted("ProfilerStep#%d" % i for i in range(STEPS)),
                 "rank %d: the GPU user annotations HTA broke down" % rank)
        per_step = STEP_GPU_NS / 1000.0
        off = {n: us for n, us in steps.items() if abs(us - per_step) > 4}
        check(not off, "rank %d: steps whose GPU time by HTA is not %.1f us (+-4: its rounding): %r", rank, per_step,
              off)
        overlap = found["overlap"].get(str(rank))
        check(overlap is not None and 90.0 <= overlap <= 100.0, "rank %d: HTA's communication/computation "
              "overlap %r, not over 90 %%%s", rank, overlap, ctx)
    note("HTA on 2 ranks: idle %s us (report %s us), overlap %s %%, launches %s" % (
        [found["temporal"][str(x)]["idle_us"] for x in (0, 1)],
        [round(reps[x]["gpus"][0]["idle_ns"] / 1000.0) for x in (0, 1)],
        [found["overlap"][str(x)] for x in (0, 1)], [found["launches"][str(x)] for x in (0, 1)]))


main(test)
