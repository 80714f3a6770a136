"""Kernel launches as nvcc compiles them (tests/workloads/nvcc_launches.cu, built by make with nvcc -cudart
shared, and again with --default-stream per-thread): `<<<>>>` reaches __cudaLaunchKernel (or _ptsz) with the
handle __cudaGetKernel gave the host stub, cudaLaunchKernelEx reaches cudaLaunchKernelExC.

Each build runs twice under profwrap:
- against the toolkit's real libcudart.so.13: without a GPU every call fails (the program goes on), with one
  they succeed. The output and exit status are the program's own; every launch is in the report exactly,
  by kernel name (the mangled device function, as the modules registered it) with its grid and block and
  its status: launches + failed = the launches made, failed = those the program saw fail, and the failed
  calls' error codes are the program's;
- against the fake runtime: every kernel runs on the simulated GPU, is named as registered, and is linked to
  its launch call (kernels_linked == kernels), the launch calls' GPU time by call counting them all; in the
  trace each launch is a slice named by its call, the kernel in its args, with an arrow to the kernel it ran."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

LAUNCH_APIS = ("__cudaLaunchKernel", "cudaLaunchKernelExC")


def program_facts(out):
    """(call statuses, kernels {name: (launches, grid x, block x)}, launch apis {name: count}, launches
    {"API: kernel": count}, launch errors)."""
    calls, kernels, apis, launches, errors = {}, {}, {}, {}, None
    for line in out.splitlines():
        w = line.split()
        if w[:1] == ["call"]:
            calls.setdefault(w[1], []).append(int(w[2]))
        elif w[:2] == ["expect", "kernel"]:
            kernels[w[2]] = tuple(int(x) for x in w[3:6])
        elif w[:2] == ["expect", "launch"]:
            apis[w[2]] = apis.get(w[2], 0) + int(w[4])
            launches["%s: %s" % (w[2], w[3])] = int(w[4])
        elif w[:1] == ["launch-errors"]:
            errors = int(w[1])
    check(kernels and apis and errors is not None, "the workload printed no ground truth:\n%s", out)
    return calls, kernels, apis, launches, errors


def check_launches(rep, kernels, apis, errors, ctx):
    rows = {k["name"]: k for k in rep["kernels_launched"]}
    check_eq(sorted(rows), sorted(kernels), "kernels_launched names" + ctx)
    failed = 0
    for name, (launches, grid, block) in kernels.items():
        k = rows[name]
        check_eq(k["launches"] + k["failed"], launches, "launch calls of %s%s" % (name, ctx))
        check_eq(k["grid"], [grid, 1, 1], "grid of %s%s" % (name, ctx))
        check_eq(k["block"], [block, 1, 1], "block of %s%s" % (name, ctx))
        failed += k["failed"]
    check_eq(failed, errors, "failed launches (the program saw %d fail)%s" % (errors, ctx))
    for api, n in apis.items():
        c = call(rep, "cudart", api)
        check(c is not None, "no cudart.%s in the report%s", api, ctx)
        check_eq(c["count"], n, "cudart.%s calls%s" % (api, ctx))
    check_eq(sum(c["count"] for c in rep["calls"] if c["domain"] == "cudart" and "Launch" in c["name"]),
             sum(apis.values()), "launch calls of every kind" + ctx)


def check_statuses(rep, calls, ctx):
    """Every failed runtime call the program made is in gpu_errors with the program's code."""
    seen = {}
    for e in rep["gpu_errors"]:
        seen[(e["call"], e["code"])] = seen.get((e["call"], e["code"]), 0) + e["count"]
    names = {"cudaLaunchKernelEx": "cudaLaunchKernelExC"}
    for name, codes in calls.items():
        api = names.get(name, name)
        for code in set(codes):
            if code:
                check_eq(seen.get((api, code)), codes.count(code),
                         "gpu_errors of %s with code %d%s" % (api, code, ctx))


def run_real(prog, libdir):
    env = {"LD_LIBRARY_PATH": libdir}
    plain = run([prog], extra_env=env)
    calls, kernels, apis, _, errors = program_facts(plain.out)
    out = "OUT-real-" + os.path.basename(prog)
    r, rep = profile([prog], out, expect_rc=plain.rc, extra_env=env)
    ctx = " (%s, real runtime)\ncalls:\n%s" % (os.path.basename(prog), describe_calls(rep))
    check_eq(r.out, plain.out, "the program's output under profwrap vs without")
    check_launches(rep, kernels, apis, errors, ctx)
    check_statuses(rep, calls, ctx)
    return errors


def run_fake(prog):
    env = {"LD_LIBRARY_PATH": fakes_dir()}
    plain = run([prog], extra_env=env)
    calls, kernels, apis, launches, errors = program_facts(plain.out)
    check_eq(errors, 0, "launch errors on the fake GPU\n" + plain.out)
    out = "OUT-fake-" + os.path.basename(prog)
    r, rep = profile([prog], out, expect_rc=plain.rc, extra_env=env)
    ctx = " (%s, fake runtime)\ncalls:\n%s" % (os.path.basename(prog), describe_calls(rep))
    check_eq(r.out, plain.out, "the program's output under profwrap vs without")
    check_launches(rep, kernels, apis, 0, ctx)
    act = rep["gpu_activity"]
    total = sum(n for n, _, _ in kernels.values())
    check_eq(act["status"], "recording", "GPU activity status" + ctx)
    check_eq(act["kernels"], total, "kernels the GPU ran" + ctx)
    check_eq(act["kernels_linked"], total, "kernels linked to their launch call" + ctx)
    ran = {}
    for k in rep["kernels"]:
        ran[k["name"]] = ran.get(k["name"], 0) + k["count"]
    check_eq(ran, {name: n for name, (n, _, _) in kernels.items()}, "kernels by name, from CUPTI" + ctx)
    by_call = {c["call"]: c["kernels"] for c in rep["gpu_time_by_call"]}
    check_eq(by_call, apis, "GPU time by call: kernels per launch call" + ctx)
    trace = load_json(os.path.join(out, "rank0.trace.json"))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    slices = {}
    for e in events:
        if e.get("ph") == "X" and e.get("name") in LAUNCH_APIS:
            key = "%s: %s" % (e["name"], e["args"].get("kernel"))  # the kernel in args, as Kineto has it
            slices[key] = slices.get(key, 0) + 1
    names = demangled(key.split(": ", 1)[1] for key in launches)  # the trace's kernels are demangled
    want = {"%s: %s" % (key.split(": ", 1)[0], names[key.split(": ", 1)[1]]): n for key, n in launches.items()}
    check_eq(slices, want, "launch slices in the trace, by call and kernel" + ctx)
    arrows = [e for e in events if e.get("ph") == "s" and e.get("name") == "ac2g"]
    check_eq(len(arrows), total, "launch -> kernel arrows in the trace" + ctx)


def test():
    if not os.access(os.path.join(CUDA_HOME, "bin", "nvcc"), os.X_OK):
        skip("no nvcc under %s: make builds the nvcc workloads only where it is" % CUDA_HOME)
    progs = [workload(name) for name in ("nvcc_launches", "nvcc_launches_ptsz")]
    libdir = os.path.join(CUDA_HOME, "lib64")
    if not os.path.exists(os.path.join(libdir, "libcudart.so.13")):
        skip("no libcudart.so.13 in %s" % libdir)
    for prog in progs:
        errors = run_real(prog, libdir)
        note("%s against the real runtime: every launch recorded, %d failed as the program saw" %
             (os.path.basename(prog), errors))
        run_fake(prog)


main(test)
