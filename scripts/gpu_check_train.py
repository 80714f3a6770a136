"""A small PyTorch training loop on the GPU for scripts/gpu-check.sh: a convolution and an MLP trained for a
fixed number of steps on random data read through a DataLoader with worker processes. Deterministic, so that
two runs launch the same kernels. --torch-profiler runs it inside torch.profiler and writes, as JSON, the
CUDA runtime call counts and the GPU kernels (count and total time, from the profiler's trace) it saw.
Prints `steps N wall_s S step_ms_median M` (the median over the steps after the first five)."""
import argparse
import json
import os
import statistics
import tempfile
import time

import torch
import torch.nn as nn


def train(steps, batch, workers):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.Flatten(),
                          nn.Linear(16 * 32 * 32, 512), nn.ReLU(), nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.utils.data.TensorDataset(torch.randn(steps * batch, 3, 32, 32), torch.randint(0, 10, (steps * batch,)))
    loader = torch.utils.data.DataLoader(data, batch_size=batch, pin_memory=True, num_workers=workers)
    loss_fn = nn.CrossEntropyLoss()
    step_s = []
    for x, y in loader:
        t = time.monotonic()
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        loss.item()
        step_s.append(time.monotonic() - t)
    torch.cuda.synchronize()
    return step_s


def kernels_of_trace(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    ks = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    return {"count": len(ks), "total_us": sum(e.get("dur", 0) for e in ks)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--torch-profiler", metavar="JSON")
    a = ap.parse_args()
    t0 = time.monotonic()
    if a.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            step_s = train(a.steps, a.batch, a.workers)
        wall = time.monotonic() - t0
        counts = {}
        for e in prof.key_averages():
            if e.key.startswith(("cuda", "cublas", "cudnn", "nccl")):
                counts[e.key] = {"count": e.count, "total_us": e.cpu_time_total}
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "trace.json")
            prof.export_chrome_trace(trace)
            kernels = kernels_of_trace(trace)
        with open(a.torch_profiler, "w") as f:
            json.dump({"calls": counts, "kernels": kernels}, f, indent=1)
    else:
        step_s = train(a.steps, a.batch, a.workers)
        wall = time.monotonic() - t0
    tail = step_s[5:] or step_s
    print("steps %d wall_s %.3f step_ms_median %.3f" % (a.steps, wall, statistics.median(tail) * 1e3))


main()
