"""What to fix first: each finding on the workload built to trigger it, and not on those built not to.

cuda_gpu_patterns runs one GPU usage pattern per mode and prints which findings it must and must not produce
(`expect finding ID MIN_SHARE`, `expect no_finding ID`, `expect no_findings`); test_gpu_activity.check_report
checks them with everything else the workload knows (kernels, gaps and their classes, copies), and the text
report's "What to fix first" section.

  idle50        sync_bound (GPU idle while the CPU works after each cudaDeviceSynchronize); not input, launch, cpu
  input         input_bound (the main thread reads a pipe a forked loader fills slowly); not sync, launch, cpu
  input_thread  input_bound (it waits on a condition variable a loader thread signals)
  launch        launch_bound (2 us kernels, 10 us of CPU between launches); not sync, input
  cpu           cpu_bound (3 ms of CPU work per 1 ms kernel, no synchronisation); not sync, input, launch
  late_start    cpu_bound, not sync_bound: the one long gap began in a synchronous copy that waited only for
                the copy, then the CPU set up for 60 ms
  sleep         none of the idle findings: the gaps are "sleep" (a nanosleep covers them)
  pageable      pageable_memcpy (16 MiB copies from malloc'd memory); pinned: none (cudaMallocHost memory)
  small         small_memcpy (400 synchronous 4-byte copies after a kernel each); with 90 copies, or with
                copies of 64 KiB, none (the rule wants >= 100 copies of < 64 KiB)
  collective    collective_bound (32 MiB all-reduces, little compute)
  balanced      no finding at all (the queue never runs dry; small all-reduces are 1 % of the time)

Every finding's share is in (0, 1]; those triggered have at least half their designed share."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403
from test_gpu_activity import check_report, run_mode, expects  # noqa: E402

RUNS = [
    ("idle50", ()),
    ("input", ()),
    ("input_thread", ()),
    ("launch", ()),
    ("cpu", ()),
    ("late_start", ()),
    ("sleep", ()),
    ("pageable", ()),
    ("pinned", ()),
    ("small", ()),
    ("small", ("--steps", "90")),
    ("small", ("--steps", "150", "--bytes", "65536")),
    ("collective", ()),
    ("balanced", ()),
]


def test():
    triggered = {}
    for mode, args in RUNS:
        r, rep, expect, out = run_mode(mode, args)
        _, findings = check_report(r, rep, expect, out)
        for fid, _ in expects(expect, "finding"):
            triggered.setdefault(fid, []).append(" ".join((mode,) + args))
        note("%s: findings %s" % (" ".join((mode,) + args), ", ".join(
            "%s %.2f" % (f, v["share"]) for f, v in sorted(findings.items())) or "none"))
    # Each rule has a workload that triggers it, and the others (at least the balanced one) that do not.
    for fid in ("input_bound", "sync_bound", "launch_bound", "cpu_bound", "pageable_memcpy", "small_memcpy",
                "collective_bound"):
        check(fid in triggered, "no workload here is built to trigger %s", fid)


main(test)
