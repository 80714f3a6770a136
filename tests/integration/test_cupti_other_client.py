"""Another CUPTI client in the process (tests/workloads/cuda_second_cupti_client.c on the fake libraries: a program
linked against libcupti that takes CUPTI over mid-run as torch.profiler's Kineto does, with its own buffers,
timestamp callback, kinds and cuptiFinalize).

- The program's output is the same under profwrap: its client gets exactly the kernels of its session, only
  buffers it gave, its own timestamps, and CUPTI's default settings (profwrap's zeroed-buffer promise and
  thread-id type are not left behind).
- profwrap records the kernels launched before the other client started, exactly, marks GPU activity
  `shared_with_other_client` with the time it stepped back, and still records every launch call.
- When the other client is first (before any CUDA call), profwrap never starts CUPTI and says why."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes_dir()
    prog = workload("cuda_second_cupti_client")
    for mode in ([], ["first"]):
        plain = run([prog] + mode)
        check_eq(plain.rc, 0, "the workload's exit status without profwrap\n" + plain.describe())
        check("client settings thread-id-type default zeroed-buffers 0 clock own" in plain.out,
              "the client's own view without profwrap:\n%s", plain.out)
        expect = {e[0]: int(e[1]) for e in parse_expect(plain.out)}
        r, rep = profile([prog] + mode, "OUT-%s" % (mode[0] if mode else "mid"), quiet=False)
        check_eq(r.out, plain.out, "the program's output (its CUPTI client's view) under profwrap vs without")
        check("another CUPTI client" in r.err, "profwrap says it stepped back:\n%s", r.err)
        act = rep["gpu_activity"]
        check_eq(act["status"], "shared_with_other_client", "GPU activity status")
        check(act["other_client_since_ns"] is not None and
              rep["start_ns"] <= act["other_client_since_ns"] <= rep["end_ns"],
              "the time profwrap stepped back (%r) lies in the run [%r, %r]", act["other_client_since_ns"],
              rep["start_ns"], rep["end_ns"])
        check_eq(act["kernels"], expect["kernels-before"], "kernels profwrap recorded (those before the other client)")
        check_eq(act["dropped"], 0, "records dropped")
        check_eq(count(rep, "cudart", "cudaLaunchKernel"), expect["launches"], "cudaLaunchKernel calls recorded")
        if not expect["kernels-before"]:
            check_eq(act["cupti_path"], None, "libcupti profwrap loaded when the other client was first")
            check("other CUPTI client" in (act["not_recorded_why"] or ""), "why no activity: %r",
                  act["not_recorded_why"])


main(test)
