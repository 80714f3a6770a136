"""profwrap's end-to-end workload for --pytorch: an unmodified CPU training loop (a small MLP, 8 steps of a
DataLoader over random data), with no NVTX and no profiler of its own.

    python autograd_ops.py [--torch-profiler COUNTS.json]

With --torch-profiler, the same steps run under torch.profiler.profile(activities=[CPU]) and COUNTS.json gets
{operator name: calls} from key_averages(): what profwrap --pytorch=autograd-nvtx must count."""
import argparse
import json

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--torch-profiler", metavar="COUNTS.json")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    data = TensorDataset(torch.randn(64, 16), torch.randint(0, 4, (64,)))
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()

    def steps():
        for x, y in DataLoader(data, batch_size=8):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()

    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            steps()
        with open(args.torch_profiler, "w") as f:
            json.dump({e.key: e.count for e in prof.key_averages()}, f)
    else:
        steps()
    print("8 steps")


if __name__ == "__main__":
    main()
