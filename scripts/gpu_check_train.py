"""A small PyTorch training loop on the GPU for scripts/gpu-check.sh: an MLP and a convolution trained for a
fixed number of steps on random data, with a DataLoader. Deterministic, so that two runs make the same CUDA
calls. --torch-profiler runs it inside torch.profiler and writes the CUDA runtime call counts it saw as JSON.
Prints one line: `steps N wall_s S`."""
import argparse
import json
import time

import torch
import torch.nn as nn


def train(steps, batch):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.Flatten(),
                          nn.Linear(16 * 32 * 32, 512), nn.ReLU(), nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.utils.data.TensorDataset(torch.randn(steps * batch, 3, 32, 32), torch.randint(0, 10, (steps * batch,)))
    loader = torch.utils.data.DataLoader(data, batch_size=batch, pin_memory=True)
    loss_fn = nn.CrossEntropyLoss()
    for x, y in loader:
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        loss.item()
    torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--torch-profiler", metavar="JSON")
    a = ap.parse_args()
    t0 = time.monotonic()
    if a.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            train(a.steps, a.batch)
        counts = {}
        for e in prof.key_averages():
            if e.key.startswith(("cuda", "cublas", "cudnn", "nccl")):
                counts[e.key] = {"count": e.count, "total_us": e.cpu_time_total}
        kernels = sum(e.count for e in prof.key_averages() if e.device_time_total > 0 and not e.key.startswith("cuda"))
        with open(a.torch_profiler, "w") as f:
            json.dump({"calls": counts, "gpu_ops": kernels}, f, indent=1)
    else:
        train(a.steps, a.batch)
    print("steps %d wall_s %.3f" % (a.steps, time.monotonic() - t0))


main()
