"""A training loop in miniature, with no framework: a data set of files, worker processes that load
batches, a main process that "computes" and writes a checkpoint per epoch. It is the demo's target and a
test workload: it prints its own figures (bytes read by the loaders, checkpoint bytes) as JSON at the end.

usage: toy_train.py DATA_DIR [--epochs N] [--batches M] [--workers K] [--batch-bytes B]
"""
import argparse
import json
import multiprocessing as mp
import os
import time


def make_dataset(data_dir, batches, batch_bytes):
    os.makedirs(data_dir, exist_ok=True)
    for i in range(batches):
        path = os.path.join(data_dir, f"batch-{i:04d}.bin")
        if not os.path.exists(path) or os.path.getsize(path) != batch_bytes:
            with open(path, "wb") as f:
                f.write(os.urandom(batch_bytes))


def load_batch(path):
    # Reads in 64 KiB pieces, as a decoder would.
    total = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            chunk = f.read(65536)
            if not chunk:
                break
            total += len(chunk)
    return total


def train_step(nbytes):
    # Stand-ins for the forward/backward pass: a little CPU and a wait on the "device".
    acc = 0
    for i in range(2000):
        acc += i * i
    time.sleep(0.002)
    return acc + nbytes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batches", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-bytes", type=int, default=256 * 1024)
    args = ap.parse_args()

    make_dataset(args.data_dir, args.batches, args.batch_bytes)
    paths = [os.path.join(args.data_dir, f"batch-{i:04d}.bin") for i in range(args.batches)]
    loaded = 0
    checkpoint_bytes = 0
    ctx = mp.get_context("fork")
    with ctx.Pool(args.workers) as pool:
        for epoch in range(args.epochs):
            for nbytes in pool.imap(load_batch, paths):
                loaded += nbytes
                train_step(nbytes)
            state = os.urandom(128 * 1024)
            ckpt = os.path.join(args.data_dir, "checkpoint.pt")
            with open(ckpt, "wb") as f:
                f.write(state)
                f.flush()
                os.fsync(f.fileno())
            checkpoint_bytes += len(state)
    print(json.dumps({"loaded_bytes": loaded, "checkpoint_bytes": checkpoint_bytes,
                      "epochs": args.epochs, "batches": args.batches}))


if __name__ == "__main__":
    main()
