"""hta_check OUT RANK...: HTA (Holistic Trace Analysis) on profwrap's OUT/rank<R>.trace.json, as a user runs it;
prints one JSON object of what HTA found, for tests/integration/test_e2e_hta.py to compare with profwrap's
own reports. Runs in HTA's environment (scripts/e2e.sh makes it), never in profwrap's tests' Python.

  ranks        the ranks HTA read
  temporal     {rank: {"idle_us", "kernel_span_us"}}: get_temporal_breakdown (idle: the time between the
               first and last kernel with no kernel running; kernel_time is that span)
  kernels      [{"rank", "name", "sum_us", "count", "type"}]: get_gpu_kernel_breakdown, every kernel
  launches     {rank: launches}: get_cuda_kernel_launch_stats (runtime launches joined to their kernels)
  queue        {rank: samples}: get_queue_length_summary's counts
  overlap      {rank: percent}: get_comm_comp_overlap
  iterations   {rank: [N...]}: the iterations HTA found (its ProfilerStep#N), in order
  annotations  [{"rank", "name", "sum_us"}]: get_gpu_user_annotation_breakdown (the GPU time of each range)"""
import json
import logging
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402


def main():
    out, ranks = sys.argv[1], [int(r) for r in sys.argv[2:]]
    # profwrap's last step is a whole one (torch.profiler's often is not, which HTA leaves out by default)
    a = TraceAnalysis(trace_dir=out, trace_files={r: "rank%d.trace.json" % r for r in ranks},
                      include_last_profiler_step=True)
    found = {"ranks": sorted(int(r) for r in a.t.traces)}
    tb = a.get_temporal_breakdown(visualize=False)
    found["temporal"] = {str(int(x["rank"])): {"idle_us": float(x["idle_time(us)"]),
                                               "kernel_span_us": float(x["kernel_time(us)"])}
                         for x in tb.to_dict("records")}
    _, km = a.get_gpu_kernel_breakdown(visualize=False, num_kernels=1000, include_memory_kernels=True)
    found["kernels"] = [{"rank": int(x["rank"]), "name": x["name"], "sum_us": float(x["sum (us)"]),
                         "count": int(round(x["sum (us)"] / x["mean (us)"])) if x["mean (us)"] else 0,
                         "type": x["kernel_type"]} for x in km.to_dict("records")]
    ls = a.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
    found["launches"] = {str(r): len(df) for r, df in ls.items()}
    ql = a.get_queue_length_summary(ranks=ranks)
    found["queue"] = {} if ql is None else {str(int(r)): int(row[("queue_length", "count")])
                                            for (r, _), row in ql.iterrows()}
    ov = a.get_comm_comp_overlap(visualize=False)
    found["overlap"] = {str(int(x["rank"])): float(x["comp_comm_overlap_pctg"]) for x in ov.to_dict("records")}
    ua = a.get_gpu_user_annotation_breakdown(visualize=False)
    found["annotations"] = [] if ua is None else [{"rank": int(x["rank"]), "name": x["name"],
                                                    "sum_us": float(x["sum (us)"])} for x in ua.to_dict("records")]
    found["iterations"] = {str(r): sorted(int(i) for i in a.t.get_trace(r)["iteration"].unique() if i >= 0)
                           for r in ranks}
    print(json.dumps(found, sort_keys=True))


if __name__ == "__main__":
    main()
