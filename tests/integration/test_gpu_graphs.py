"""CUDA graphs (tests/workloads/cuda_graphs.c on the fake libraries, whose CUPTI gives a graph's kernels the
graph launch's correlation id and CUPTI's graphId/graphNodeId, as the real one does).

- Every kernel is recorded; those a graph ran are counted per graph (cuda_graphs: launches, kernels), and all
  of them belong to cudaGraphLaunch in GPU time by call.
- Launch latency and queue depth count only kernels launched each by a call: a graph's nodes were launched
  together by the graph launch, and would otherwise show as ever longer latencies and a deep queue."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes_dir()
    prog = workload("cuda_graphs")
    plain = run([prog])
    check_eq(plain.rc, 0, "the workload's exit status without profwrap\n" + plain.describe())
    expect = {e[0]: int(e[1]) for e in parse_expect(plain.out)}
    r, rep = profile([prog], "OUT")
    check_eq(r.out, plain.out, "the program's output under profwrap vs without")
    act = rep["gpu_activity"]
    check_eq(act["kernels"], expect["kernels"], "kernels recorded")
    check_eq(act["graph_kernels"], expect["graph-kernels"], "kernels that graph launches ran")
    graphs = rep["cuda_graphs"]
    check_eq([(g["launches"], g["kernels"]) for g in graphs], [(expect["replays"], expect["graph-kernels"])],
             "cuda_graphs (launches, kernels): %r" % graphs)
    check(graphs[0]["graph_id"] is not None and graphs[0]["graph_id"] > 0, "graph id: %r", graphs[0])
    by_call = {c["call"]: c["kernels"] for c in rep["gpu_time_by_call"]}
    check_eq(by_call.get("cudaGraphLaunch"), expect["graph-kernels"], "kernels of cudaGraphLaunch (%r)" % by_call)
    check_eq(sum(g["launches"] for g in rep["gpus"]), expect["plain"],
             "kernels in launch latency and queue depth (launched each by a call)")
    check_eq(count(rep, "cudart", "cudaGraphLaunch"), expect["replays"], "cudaGraphLaunch calls")
    txt = open(os.path.join("OUT", "rank0.txt")).read()
    check("CUDA graphs (%d kernels ran in graph launches" % expect["graph-kernels"] in txt,
          "the text report's CUDA graphs table:\n%s", txt[-3000:])


main(test)
