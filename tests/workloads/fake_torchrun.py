"""A torchrun-like launcher for the distributed tests (stdlib only, no PyTorch).

As torchrun's agent does, it starts --nproc-per-node workers (itself again, with --worker) with RANK,
LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and MASTER_PORT in their environment, and
none of them in its own; it waits for them and exits with the first non-zero status among them (0 when all
succeeded).

Each worker reads the file that --data names for its rank ("{rank}" in it is replaced) with os.read, one
read(2) of 4096 bytes at a time up to end of file (so ceil(size / 4096) + 1 calls), then sleeps --hold-ms
milliseconds, and prints one line of JSON:
    {"rank": R, "local_rank": L, "world_size": W, "read_bytes": N, "reads": K}

usage: fake_torchrun.py --data PATTERN [--nproc-per-node N] [--nnodes M] [--node-rank K] [--hold-ms D]
Ranks are node_rank * N + local_rank; WORLD_SIZE is N * M.
"""
import json
import os
import subprocess
import sys
import time

RANK_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
             "PROFWRAP_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID")


def parse(argv):
    opts = {"nproc": 1, "nnodes": 1, "node_rank": 0, "hold_ms": 0, "data": None, "worker": False}
    names = {"--nproc-per-node": "nproc", "--nnodes": "nnodes", "--node-rank": "node_rank", "--hold-ms": "hold_ms"}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--worker":
            opts["worker"] = True
            i += 1
            continue
        if i + 1 >= len(argv):
            sys.exit("fake_torchrun: %s needs a value" % a)
        if a == "--data":
            opts["data"] = argv[i + 1]
        elif a in names:
            opts[names[a]] = int(argv[i + 1])
        else:
            sys.exit("fake_torchrun: unknown option %s\n%s" % (a, __doc__))
        i += 2
    if not opts["data"]:
        sys.exit("fake_torchrun: --data is required")
    return opts


def worker(opts):
    rank = int(os.environ["RANK"])
    path = opts["data"].replace("{rank}", str(rank))
    fd = os.open(path, os.O_RDONLY)
    got = reads = 0
    while True:
        chunk = os.read(fd, 4096)
        reads += 1
        if not chunk:
            break
        got += len(chunk)
    os.close(fd)
    if opts["hold_ms"]:
        time.sleep(opts["hold_ms"] / 1000.0)
    line = json.dumps({"rank": rank, "local_rank": int(os.environ["LOCAL_RANK"]),
                       "world_size": int(os.environ["WORLD_SIZE"]), "read_bytes": got, "reads": reads})
    os.write(1, (line + "\n").encode())
    return 0


def launcher(opts, argv):
    base = {k: v for k, v in os.environ.items() if k not in RANK_VARS}
    world = opts["nproc"] * opts["nnodes"]
    procs = []
    for local in range(opts["nproc"]):
        env = dict(base)
        env.update({"RANK": str(opts["node_rank"] * opts["nproc"] + local), "LOCAL_RANK": str(local),
                    "WORLD_SIZE": str(world), "LOCAL_WORLD_SIZE": str(opts["nproc"]),
                    "GROUP_RANK": str(opts["node_rank"]), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"})
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"] + argv, env=env))
    rc = 0
    for p in procs:
        r = p.wait()
        if r and not rc:
            rc = r if r > 0 else 128 - r
    return rc


def main():
    argv = sys.argv[1:]
    opts = parse(argv)
    if opts["worker"]:
        return worker(opts)
    return launcher(opts, argv)


if __name__ == "__main__":
    sys.exit(main())
