"""The training-loop workload against the fake CUDA libraries (a program linked to libcudart, cuBLAS,
cuBLASLt, cuDNN and NCCL exactly as a real one is). It prints every figure it produced; the report must
match each one exactly: calls per API, copies per direction, GEMM shapes and FLOPs, collectives, device
memory peak, kernels launched. Its results (a GEMM checked against the CPU, a checksum of the weights)
must be the same with and without profwrap."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

STEPS = 5


def by(entries, *keys):
    return {tuple(e[k] for k in keys): e for e in entries}


def check_figures(rep, expect, ctx):
    wrapped = gpu_event_names()
    seen_calls = {}
    for e in expect:
        what = e[0]
        if what == "call":
            name, n = e[1], int(e[2])
            seen_calls[name] = n
            if name in wrapped:
                check_eq(count(rep, wrapped[name], name), n, "%s.%s count" % (wrapped[name], name) + ctx)
        elif what == "copy":
            kind, n, nbytes_ = e[1], int(e[2]), int(e[3])
            m = by(rep["memcpy"], "kind").get((kind,))
            check(m is not None, "no memcpy entry for %s in %r", kind, rep["memcpy"])
            check_eq((m["count"], m["bytes"]), (n, nbytes_), "memcpy %s (count, bytes)" % kind)
        elif what == "gemm":
            name, mm, nn, kk, batch, n = e[1], int(e[2]), int(e[3]), int(e[4]), int(e[5]), int(e[6])
            rows = [g for g in rep["gemms"] if (g["name"], g["m"], g["n"], g["k"], g["batch"]) == (name, mm, nn, kk, batch)]
            check(rows, "no gemms entry for %s m=%d n=%d k=%d batch=%d in %r", name, mm, nn, kk, batch, rep["gemms"])
            check_eq(sum(g["count"] for g in rows), n, "count of %s %dx%dx%d batch %d" % (name, mm, nn, kk, batch))
            check_eq(sum(g["flops"] for g in rows), n * 2 * mm * nn * kk * batch,
                     "FLOPs of %s %dx%dx%d batch %d" % (name, mm, nn, kk, batch))
        elif what == "flops":
            check_eq(rep["gemm_flops"], int(e[1]), "gemm_flops")
        elif what == "coll":
            c = by(rep["collectives"], "name").get((e[1],))
            check(c is not None, "no collectives entry for %s in %r", e[1], rep["collectives"])
            check_eq((c["count"], c["bytes"]), (int(e[2]), int(e[3])), "%s (count, bytes)" % e[1])
        elif what == "alloc":
            check_eq(rep["allocations"][e[1]], int(e[2]), "allocations.%s" % e[1])
        elif what == "launch":
            k = by(rep["kernels_launched"], "name").get((e[1],))
            check(k is not None, "no kernels_launched entry for %s in %r", e[1], rep["kernels_launched"])
            check_eq(k["launches"], int(e[2]), "launches of %s" % e[1])
        elif what == "error":
            errs = [x for x in rep["gpu_errors"] if x["call"] == e[1] and x["code"] == int(e[2])]
            check(errs, "no gpu_errors entry for %s code %s in %r", e[1], e[2], rep["gpu_errors"])
            check_eq(errs[0]["count"], int(e[3]), "errors of %s with code %s" % (e[1], e[2]))
            check_eq(call(rep, wrapped[e[1]], e[1])["errors"], int(e[3]), "calls[%s].errors" % e[1])
    # Nothing recorded that the program did not call.
    for c in rep["calls"]:
        if c["domain"] in ("cudart", "cublas", "cublaslt", "cudnn", "nccl"):
            check(c["name"] in seen_calls, "the report has %d %s calls the workload did not make%s",
                  c["count"], c["name"], ctx)


def results(out):
    """The lines of the workload's output that must not change under profwrap (it also prints timings)."""
    return [line for line in out.splitlines()
            if line.startswith(("expect ", "checksum", "gemm check", "oom result", "bad launch"))]


def test():
    fakes_dir()
    train = workload("cuda_train")
    plain = run([train, "--steps", str(STEPS)])
    check_eq(plain.rc, 0, "cuda_train exit status without profwrap\n" + plain.describe())
    r, rep = profile([train, "--steps", str(STEPS)], "OUT")
    # Same results: the GEMM check, the weights' checksum, every figure the workload printed.
    check_eq(results(r.out), results(plain.out), "cuda_train's results under profwrap vs without")
    check("gemm check ok" in r.out, "cuda_train did not check its GEMM\n" + r.describe())
    expect = parse_expect(r.out)
    check(len(expect) > 20, "cuda_train printed only %d expect lines\n%s", len(expect), r.out)
    check_eq(rep["dropped_events"], 0, "dropped_events")
    check_figures(rep, expect, "\ncalls:\n" + describe_calls(rep))
    check(rep["gpu_sync"]["count"] >= STEPS, "gpu_sync count %r", rep["gpu_sync"])

    text = open(os.path.join("OUT", "rank0.txt")).read()
    for section in ("CUDA API summary", "Memory operations", "Device allocations", "Kernel launches", "GEMM shapes",
                    "Collectives"):
        check(section in text, "rank0.txt has no %r section", section)

    # Errors the fake returns reach the program unchanged and are counted with their code.
    for flag in ("--oom", "--bad-launch"):
        plain = run([train, "--steps", "1", flag])
        check_eq(plain.rc, 0, "cuda_train %s without profwrap\n%s" % (flag, plain.describe()))
        r, rep = profile([train, "--steps", "1", flag], "OUT" + flag)
        check_eq(results(r.out), results(plain.out), "cuda_train %s results under profwrap vs without" % flag)
        expect = parse_expect(r.out)
        check(any(e[0] == "error" for e in expect), "cuda_train %s printed no expected error\n%s", flag, r.out)
        check_figures(rep, expect, "\ncalls:\n" + describe_calls(rep))


main(test)
