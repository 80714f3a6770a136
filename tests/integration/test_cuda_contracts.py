"""cuda_fakes_check runs a few hundred checks of the fake CUDA libraries' contracts (stream order, events,
sticky errors, memory tables, GEMM results, cuBLASLt attributes, cuDNN backend rules, NCCL pairing). Run
plainly, they show the fakes honour what the other tests rely on; run under profwrap, every wrapped call
must still return what the library returned, with the same side effects, so the same checks must pass.

cuda_cupti_check checks the fake libcupti's activity API contract (the records and their fields, correlation
ids, external correlation, thread ids, clocks, the buffer protocol and its worker thread, dropped records),
plainly and with the FAKECUPTI_* settings the profiler's tests use: a refused timestamp callback, functions
made to fail. It is not run under profwrap: profwrap is then CUPTI's client itself, and CUPTI has one."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


# (argument: the libcupti path, or None to find it next to libcudart; environment)
CUPTI_RUNS = [
    (None, {}),
    ("libcupti.so.13", {"FAKECUPTI_NO_TIMESTAMP_CALLBACK": "1"}),
    (None, {"FAKEGPU_NS_PER_BLOCK": "500", "FAKECUPTI_FLUSH_MS": "1"}),
    (None, {"FAKECUPTI_FAIL": "cuptiActivityEnable"}),
    (None, {"FAKECUPTI_FAIL": "cuptiActivityRegisterCallbacks,cuptiActivityPushExternalCorrelationId,cuptiGetVersion"}),
    (None, {"FAKECUPTI_FAIL": "cuptiActivityFlushAll,cuptiActivityGetNextRecord,cuptiFinalize"}),
]


def check_cupti(fakes):
    prog = workload("cuda_cupti_check")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("FAKECUPTI_", "FAKEGPU_"))}
    for lib, env in CUPTI_RUNS:
        args = [prog] + ([os.path.join(fakes, lib)] if lib else [])
        r = run(args, env=base, extra_env=env)
        check(r.rc == 0 and r.out.startswith("ok "), "cuda_cupti_check with %r\n%s", env, r.describe())


def test():
    fakes = fakes_dir()
    prog = workload("cuda_fakes_check")
    plain = run([prog])
    check_eq(plain.rc, 0, "cuda_fakes_check without profwrap\n" + plain.describe())
    check_cupti(fakes)
    r, rep = profile([prog], "OUT")
    check_eq(r.out, plain.out, "cuda_fakes_check's output under profwrap vs without")
    gpu = [c for c in rep["calls"] if c["domain"] in ("cudart", "cublas", "cublaslt", "cudnn", "nccl")]
    check(sum(c["count"] for c in gpu) > 100, "only %d GPU calls recorded\n%s", sum(c["count"] for c in gpu),
          describe_calls(rep))
    # The checks provoke failures on purpose: they are counted, with their codes.
    check(sum(c["errors"] for c in gpu) > 0 and rep["gpu_errors"], "no GPU errors recorded: %r", rep["gpu_errors"])


main(test)
