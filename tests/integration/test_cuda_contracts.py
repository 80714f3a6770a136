"""cuda_fakes_check runs a few hundred checks of the fake CUDA libraries' contracts (stream order, events,
sticky errors, memory tables, GEMM results, cuBLASLt attributes, cuDNN backend rules, NCCL pairing). Run
plainly, they show the fakes honour what the other tests rely on; run under profwrap, every wrapped call
must still return what the library returned, with the same side effects, so the same checks must pass."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes_dir()
    prog = workload("cuda_fakes_check")
    plain = run([prog])
    check_eq(plain.rc, 0, "cuda_fakes_check without profwrap\n" + plain.describe())
    r, rep = profile([prog], "OUT")
    check_eq(r.out, plain.out, "cuda_fakes_check's output under profwrap vs without")
    gpu = [c for c in rep["calls"] if c["domain"] in ("cudart", "cublas", "cublaslt", "cudnn", "nccl")]
    check(sum(c["count"] for c in gpu) > 100, "only %d GPU calls recorded\n%s", sum(c["count"] for c in gpu),
          describe_calls(rep))
    # The checks provoke failures on purpose: they are counted, with their codes.
    check(sum(c["errors"] for c in gpu) > 0 and rep["gpu_errors"], "no GPU errors recorded: %r", rep["gpu_errors"])


main(test)
