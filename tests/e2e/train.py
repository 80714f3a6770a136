"""profwrap's end-to-end PyTorch workload: a small MLP trained for a few epochs on a dataset of files.

    python train.py --data DIR --counters COUNTERS.json [--epochs 3] [--files 64] [--batch-size 8]

What it does, and counts (written to COUNTERS.json at the end, so a test can compare a profile with it):
  - writes the dataset: FILES files DIR/sample-NNN.bin, each RECORD_BYTES bytes (FEATURES float32 features,
    then the class as one float32), every byte known in advance;
  - reads it with a Dataset whose __getitem__ opens a file and read()s it whole with plain open()/read(), in a
    DataLoader with num_workers=2 and persistent_workers=False: each epoch forks two fresh worker processes, so
    a run of E epochs has 2*E workers, and every file is read once per epoch, by a worker, never by the main
    process. Each sample carries the pid of the worker that read it and the bytes it read, so the counters
    say which worker read how much;
  - marks its phases with torch.cuda.nvtx (works without a GPU: the NVTX calls go to an injection library
    such as profwrap's, or nowhere):
        "epoch"        around each epoch
          "step"       around each training step (the batch is fetched before it)
            "forward"  model and loss
            "backward" loss.backward()
            "optimizer" optimizer.step() and zero_grad()
  - runs epoch EMIT_NVTX_EPOCH (the second) under torch.autograd.profiler.emit_nvtx(), so every autograd
    operation of that epoch is an NVTX range too ("aten::addmm, seq = 12, op_id = 345"). emit_nvtx calls
    torch.cuda.synchronize() on entry and exit, which raises "Found no NVIDIA driver" on a machine without
    a GPU; there (and only there) the same context manager is entered with that one call skipped, which is
    everything it needs a device for: the NVTX profiler state it enables works on the CPU (see emit_nvtx()).

Runs on the CPU (torch.set_num_threads(1)) in a few seconds; on a machine with a GPU the model runs there.
"""
import argparse
import contextlib
import json
import os
import struct
import sys
import time

T_START = time.monotonic()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.utils.data import DataLoader, Dataset, get_worker_info  # noqa: E402

T_IMPORTED = time.monotonic()

FEATURES = 255
CLASSES = 4
RECORD_BYTES = (FEATURES + 1) * 4  # 1024
NUM_WORKERS = 2
PERSISTENT_WORKERS = False
EMIT_NVTX_EPOCH = 1
SEED = 1234


def write_dataset(directory, files):
    """Writes FILES deterministic samples; returns their absolute paths (the same strings open() gets when they
    are written and when they are read) and their total bytes."""
    directory = os.path.abspath(directory)
    os.makedirs(directory, exist_ok=True)
    paths = []
    for i in range(files):
        label = i % CLASSES
        # Features that depend on the class, so the model has something to learn.
        feats = [((j * 31 + i * 7) % 97) / 97.0 + (1.0 if j % CLASSES == label else 0.0) for j in range(FEATURES)]
        data = struct.pack("<%df" % (FEATURES + 1), *(feats + [float(label)]))
        assert len(data) == RECORD_BYTES
        path = os.path.join(directory, "sample-%03d.bin" % i)
        with open(path, "wb") as f:
            f.write(data)
        paths.append(path)
    return paths, files * RECORD_BYTES


class FileDataset(Dataset):
    """One sample per file, read whole with open()/read() (no mmap, no numpy): the bytes read are the file's."""

    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            data = f.read()
        t = torch.frombuffer(bytearray(data), dtype=torch.float32)
        info = get_worker_info()
        worker = info.id if info is not None else -1
        return t[:FEATURES], t[FEATURES].long(), len(data), os.getpid(), worker


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                                 nn.Linear(64, CLASSES))

    def forward(self, x):
        return self.net(x)


@contextlib.contextmanager
def _without_cuda_synchronize():
    real = torch.cuda.synchronize
    torch.cuda.synchronize = lambda device=None: None
    try:
        yield
    finally:
        torch.cuda.synchronize = real


class emit_nvtx(torch.autograd.profiler.emit_nvtx):
    """torch.autograd.profiler.emit_nvtx; without a CUDA device, its torch.cuda.synchronize() calls (the only
    thing in it that needs a device) are skipped, and everything else it does runs unchanged."""

    def __enter__(self):
        if torch.cuda.is_available():
            return super().__enter__()
        with _without_cuda_synchronize():
            return super().__enter__()

    def __exit__(self, *exc):
        if torch.cuda.is_available():
            return super().__exit__(*exc)
        with _without_cuda_synchronize():
            return super().__exit__(*exc)


def emit_nvtx_mode():
    return "emit_nvtx" if torch.cuda.is_available() else "emit_nvtx without torch.cuda.synchronize (no CUDA device)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="directory for the dataset (created)")
    ap.add_argument("--counters", required=True, help="JSON file for what the run did")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--files", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=8)
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    nvtx = torch.cuda.nvtx

    paths, dataset_bytes = write_dataset(args.data, args.files)
    loader = DataLoader(FileDataset(paths), batch_size=args.batch_size, shuffle=True, num_workers=NUM_WORKERS,
                        persistent_workers=PERSISTENT_WORKERS, generator=torch.Generator().manual_seed(SEED))
    model = MLP().to(device)
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    c = {"epochs": args.epochs, "epoch": 0, "step": 0, "forward": 0, "backward": 0, "optimizer": 0,
         "samples": 0, "dataset_files": len(paths), "dataset_bytes": dataset_bytes, "record_bytes": RECORD_BYTES,
         "files": paths, "num_workers": NUM_WORKERS, "persistent_workers": PERSISTENT_WORKERS,
         "emit_nvtx_epoch": EMIT_NVTX_EPOCH, "emit_nvtx_mode": emit_nvtx_mode(), "device": str(device),
         "main_pid": os.getpid(), "torch": torch.__version__,
         "bytes_read": [],      # per epoch: {worker pid: bytes that worker read}
         "worker_pids": [],     # every worker pid that delivered a sample
         "losses": [], "import_s": round(T_IMPORTED - T_START, 3)}
    t_train = time.monotonic()
    for epoch in range(args.epochs):
        by_pid = {}
        total = 0.0
        with nvtx.range("epoch"):
            c["epoch"] += 1
            ctx = emit_nvtx() if epoch == EMIT_NVTX_EPOCH else contextlib.nullcontext()
            with ctx:
                for x, y, nread, pids, _workers in loader:
                    for n, pid in zip(nread.tolist(), pids.tolist()):
                        by_pid[pid] = by_pid.get(pid, 0) + n
                    x, y = x.to(device), y.to(device)
                    with nvtx.range("step"):
                        c["step"] += 1
                        with nvtx.range("forward"):
                            c["forward"] += 1
                            loss = loss_fn(model(x), y)
                        with nvtx.range("backward"):
                            c["backward"] += 1
                            loss.backward()
                        with nvtx.range("optimizer"):
                            c["optimizer"] += 1
                            opt.step()
                            opt.zero_grad()
                    total += loss.item()
                    c["samples"] += len(y)
        c["bytes_read"].append({str(k): v for k, v in sorted(by_pid.items())})
        c["worker_pids"].extend(sorted(by_pid))
        c["losses"].append(round(total / len(loader), 4))
        print("epoch %d: loss %.4f, %d samples from workers %s" % (epoch, total / len(loader), sum(by_pid.values())
              // RECORD_BYTES, sorted(by_pid)), flush=True)
    c["train_s"] = round(time.monotonic() - t_train, 3)
    c["total_s"] = round(time.monotonic() - T_START, 3)
    with open(args.counters, "w") as f:
        json.dump(c, f, indent=1)
    print("steps %d, forward %d, backward %d, optimizer %d; import %.2f s, training %.2f s" % (
        c["step"], c["forward"], c["backward"], c["optimizer"], c["import_s"], c["train_s"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
