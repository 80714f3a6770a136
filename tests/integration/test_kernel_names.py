"""More distinct kernels than profwrap's per-address name caches hold (8192 slots; PyTorch registers tens of
thousands): tests/workloads/cuda_many_kernels registers 12,000 kernels as nvcc's generated code does and
launches each once on the fake GPU. Every launch and every kernel CUPTI reports must keep its own name: the
caches fall back to the names' text, never to an unnamed kernel. Exact: 12,000 distinct launch slices and
12,000 distinct kernel slices in the trace, all named as registered, every kernel linked to its launch, and
nothing dropped at the default ring size, though CUPTI delivers them all at once at exit."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes_dir()
    prog = workload("cuda_many_kernels")
    # at the default ring size: the burst of activity records delivered at exit (36,000 records, about 3 MiB
    # against a 2 MiB lane) waits for the collector to drain instead of being dropped
    r, rep = profile([prog], "OUT")
    expect = parse_expect(r.out)
    n = int(next(e[1] for e in expect if e[0] == "kernels"))
    prefix = next(e[1] for e in expect if e[0] == "prefix")
    check_eq(rep["dropped_events"], 0, "events dropped")
    act = rep["gpu_activity"]
    check_eq((act["kernels"], act["kernels_linked"]), (n, n), "kernels the GPU ran, and linked to their launch")
    trace = load_json(os.path.join("OUT", "rank0.trace.json"))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    kernels = [e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    launches = [e["args"].get("kernel", "") for e in events
                if e.get("ph") == "X" and e.get("name") == "cudaLaunchKernel"]
    for what, names in (("kernel", kernels), ("launch", launches)):
        check_eq(len(names), n, "%s slices in the trace" % what)
        named = {name for name in names if name.startswith(prefix)}
        check_eq(len(named), n, "%s slices named as registered, each its own (e.g. unnamed: %r)" % (
            what, [name for name in names if not name.startswith(prefix)][:5]))


main(test)
