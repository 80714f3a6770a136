"""`profwrap dump DIR|FILE...` (cli/dump.c): raw traces as JSON lines, read with the collector's own reader.

Exact, against what the programs did: `sh -c "exec dd bs=4096 count=7 <IN >OUT"` gives two images of one pid in
name order, the shell's ending in an exec of dd, dd's with its argv, its descriptors 0 and 1 named IN and OUT, and
exactly 7 reads of 4096 bytes on 0 and 7 writes of 4096 on 1, one after the other, as dd says it did;
cuda_gpu_patterns multi's launches and kernels per name (count, grid and block as pw_get_dims decodes them,
device, one stream per label); cuda_train's GEMM shapes and all-reduces (pw_get_gemm, pw_get_nccl) against the
figures it prints. --events, --kinds and --event-table. Damage: a trace cut inside a chunk is dumped exactly up
to that chunk, a record of unknown type is left out, each with one line naming the file and the offset and exit
1; an empty file, garbage, a missing path, a folder without traces and an unknown event name each give one line;
randomly damaged traces and the reader's fuzz corpus never crash it (make SAN=1 runs this under ASan and
UBSan)."""
import os
import random
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

BLOCKS, BS = 7, 4096

# cuda_gpu_patterns.c's g_multi: grid and block of each kernel multi launches.
MULTI_DIMS = {
    "ms_alpha_kernel": ([10, 1, 1], [128, 1, 1]),
    "ms_beta_kernel": ([25, 2, 1], [64, 1, 1]),
    "ms_gamma_kernel": ([4, 2, 2], [256, 1, 1]),
    "ms_delta_kernel": ([75, 1, 1], [1024, 1, 1]),
    "ms_tail_kernel": ([5, 1, 1], [32, 1, 1]),
}


def dump_run(args):
    """Runs `profwrap dump ARGS` and returns (Result, parsed stdout lines)."""
    r = profwrap(["dump"] + list(args))
    for bad in ("Sanitizer", "runtime error"):
        check(bad not in r.err, "profwrap dump %r crashed:\n%s", args, r.describe())
    return r, [json.loads(line) for line in r.out.splitlines()]


def records(lines, **match):
    return [d for d in lines if d["type"] == "record" and all(d.get(k) == v for k, v in match.items())]


def test_dd():
    data = os.path.abspath("IN")
    write_file(data, 10 * BS)
    copy = os.path.abspath("COPY")
    dd = os.path.realpath(shutil.which("dd"))
    r, _ = profile(["sh", "-c", "exec dd bs=%d count=%d <%s >%s" % (BS, BLOCKS, data, copy)], "OUT")
    check("%d+0 records in\n%d+0 records out\n%d bytes" % (BLOCKS, BLOCKS, BLOCKS * BS) in r.err,
          "what dd said it did: %r", r.err)
    lines = dump("OUT")
    files = [d["path"] for d in lines if d["type"] == "file"]
    names = sorted(n for n in os.listdir("OUT/raw") if n.endswith(".pwt"))
    check_eq(files, [os.path.join("OUT/raw", n) for n in names], "the files dumped, in name order")
    check_eq(len(files), 2, "raw traces of sh and the dd it exec'd")
    procs = [d for d in lines if d["type"] == "proc"]
    ends = [d for d in lines if d["type"] == "end"]
    by_image = {p["image"]: (p, e) for p, e in zip(procs, ends)}
    check_eq(sorted(by_image), [0, 1], "images of the pid")
    (sh, sh_end), (ddp, dd_end) = by_image[0], by_image[1]
    check_eq((sh_end["how"], sh_end["exec_path"]), ("exec", dd), "how the shell's image ended")
    check_eq((ddp["pid"], ddp["argv"], ddp["exe"]), (sh["pid"], ["dd", "bs=%d" % BS, "count=%d" % BLOCKS], dd),
             "dd's (pid, argv, exe)")
    check_eq((dd_end["how"], dd_end["exit_status"]), ("exited", 0), "how dd ended")

    start = lines.index(ddp)
    mine = lines[start:lines.index(dd_end)]
    named = {d["arg0"]: d["string"] for d in records(mine, event="fd-info")}
    check_eq((named.get(0), named.get(1)), (data, copy), "what dd's descriptors 0 and 1 were at start")
    reads, writes = records(mine, event="read"), records(mine, event="write")
    check_eq([(d["arg0"], d["ret"], d["arg1"], d["err"]) for d in reads], [(0, BS, BS, 0)] * BLOCKS,
             "dd's reads (fd, ret, bytes, errno)")
    check_eq([(d["arg0"], d["ret"], d["arg1"], d["err"]) for d in writes], [(1, BS, BS, 0)] * BLOCKS,
             "dd's writes (fd, ret, bytes, errno)")
    check_eq(sum(d["arg1"] for d in writes), os.path.getsize(copy), "bytes written against the copy's size")
    times = [t for rw in zip(reads, writes) for d in rw for t in (d["t0"], d["t1"])]
    check(times == sorted(times), "dd's reads and writes do not alternate in time: %r", times)
    for d in records(lines):
        check_eq((d["event"], d["domain"], d["kind"]), (TABLE[d["id"]]["event"], TABLE[d["id"]]["domain"],
                                                        TABLE[d["id"]]["kind"]), "record at %d" % d["offset"])
    return lines


def test_options(lines):
    r, only = dump_run(["--events=read,write", "OUT"])
    check_eq(r.rc, 0, "dump --events\n" + r.describe())
    check_eq(only, [d for d in lines if d["type"] != "record" or d["event"] in ("read", "write")],
             "dump --events=read,write against the whole dump less the other records")
    r, only = dump_run(["--kinds", "write", "OUT"])
    check_eq(only, [d for d in lines if d["type"] != "record" or d["kind"] == "write"], "dump --kinds write")
    check(any(d["event"] == "fprintf" for d in records(only)), "--kinds write left out dd's fprintf")
    r, out = dump_run(["--events=read,nosuchcall", "OUT"])
    check_eq((r.rc, out, r.err), (2, [], "profwrap: dump: no event named 'nosuchcall' (profwrap dump "
                                         "--event-table lists them)\n"), "dump with an unknown event")
    r, out = dump_run([])
    check_eq((r.rc, out), (2, []), "dump without a path")
    check(r.err.startswith("usage: profwrap dump"), "usage: %r", r.err)

    names = [e["event"] for e in TABLE]
    check_eq(len(set(names)), len(names), "event names are unique")
    want = {"write": ("io", "write", "call"), "cudaLaunchKernel": ("cudart", "gpu_launch", "api"),
            "kernel": ("gpu", "act_kernel", "gpu"), "range push": ("nvtx", "range_push", "range"),
            "module": ("process", "module", "module"), "MPI_Allreduce": ("mpi", "mpi_coll", "call"),
            "ncclGather": ("nccl", "coll", "api")}
    got = {e["event"]: (e["domain"], e["kind"], e["record"]) for e in TABLE if e["event"] in want}
    check_eq(got, want, "event table entries")


def whole_and_cut(path, body, cut):
    """Dumps body[:cut] written as path: (Result, lines)."""
    with open(path, "wb") as f:
        f.write(body[:cut])
    return dump_run([path])


def same_lines(got, want, what, but=("path", "file_size")):
    """The dump's lines but the keys in but (the file's name, and its size, which a cut changes)."""
    def strip(lines):
        return [{k: v for k, v in d.items() if k not in but} for d in lines]
    check_eq(strip(got), strip(want), what)


def test_damage(lines):
    victim = [d["path"] for d in lines if d["type"] == "file"][0]
    mine = lines[:[i for i, d in enumerate(lines) if d["type"] == "file"][1]]
    with open(victim, "rb") as f:
        body = f.read()
    os.makedirs("BAD")
    bad = os.path.join("BAD", "0-h-1.pwt")
    chunks = [d for d in mine if d["type"] not in ("file", "record")]
    rec = [d for d in chunks if d["type"] == "records"][0]
    before = [d for d in mine if d["type"] == "file" or d["offset"] < rec["offset"]]
    r, at_start = whole_and_cut(bad, body, rec["offset"])  # as a collector stopped there leaves it
    check_eq((r.rc, r.err), (0, ""), "dump of the trace cut at a chunk's start")
    # the same lines as the whole trace's up to there, but the start time: the later clock pairs are gone
    same_lines(at_start, before, "dump of the trace cut at a chunk's start", ("path", "file_size", "start_ns"))
    for cut in (rec["offset"] + 5, rec["offset"] + 8 + rec["size"] // 2):
        r, got = whole_and_cut(bad, body, cut)
        check_eq((r.rc, r.err), (1, "profwrap: %s: chunk at offset %d overruns the file (cut short): read up "
                                    "to there\n" % (bad, rec["offset"])), "dump of the trace cut at %d" % cut)
        same_lines(got, at_start, "dump of the trace cut at %d against cut at the chunk's start" % cut)

    # a record of an unknown type: left out, named by its offset
    first = records(mine)[0]
    b = bytearray(body)
    struct.pack_into("<H", b, first["offset"], 999)
    r, got = whole_and_cut(bad, bytes(b), len(b))
    check_eq((r.rc, r.err), (1, "profwrap: %s: record at offset %d is not valid (type 999, %d bytes): skipped\n"
                                % (bad, first["offset"], first["size"])), "dump with a bad record")
    same_lines(got, [d for d in mine if d is not first], "dump with a bad record")

    for content, what in ((b"", "empty file: skipped"),
                          (bytes(range(256)) * 8, "not a profwrap raw trace (bad magic at offset 0): skipped"),
                          (body[:9], "cut short at offset 9, inside the 16-byte file header: skipped")):
        r, got = whole_and_cut(bad, content, len(content))
        check_eq((r.rc, got, r.err), (1, [], "profwrap: %s: %s\n" % (bad, what)), "dump of a file: " + what)
    r, got = dump_run(["NOWHERE/x.pwt"])
    check_eq((r.rc, got, r.err), (1, [], "profwrap: NOWHERE/x.pwt: No such file or directory\n"), "missing path")
    os.makedirs("EMPTY/raw")
    r, got = dump_run(["EMPTY"])
    check_eq((r.rc, got, r.err), (1, [], "profwrap: no raw trace (*.pwt) in EMPTY/raw\n"), "a folder without traces")
    # a good file beside a missing one: the good one whole, one line for the other
    r, got = dump_run([victim, "NOWHERE/y.pwt"])
    check_eq((r.rc, r.err), (1, "profwrap: NOWHERE/y.pwt: No such file or directory\n"), "good and missing")
    check_eq(got, mine, "the good file beside a missing one")

    for seed in range(30):
        rnd = random.Random(seed)
        b = bytearray(body)
        for _ in range(1 + seed % 20):
            b[rnd.randrange(16, len(b))] = rnd.getrandbits(8)
        cut = rnd.randrange(0, len(b)) if seed % 3 == 0 else len(b)
        r, got = whole_and_cut(bad, bytes(b), cut)
        check(r.rc in (0, 1) and len(r.err.splitlines()) == (r.rc == 1), "random damage, seed %d\n%s", seed,
              r.describe())
    # the reader's fuzz corpus, the inputs that once crashed it included: one line for each file it refuses
    corpus = os.path.join(REPO, "tests", "fuzz", "corpus", "raw_read")
    for name in sorted(os.listdir(corpus)):
        r, got = dump_run([os.path.join(corpus, name)])
        check(r.rc in (0, 1) and len(r.err.splitlines()) == (r.rc == 1), "the fuzz corpus's %s\n%s", name,
              r.describe())


def test_multi():
    env = dict(os.environ, FAKEGPU_DEVICES="2")
    env.pop("PROFWRAP_CUPTI", None)
    r, _ = profile([workload("cuda_gpu_patterns"), "multi"], "MULTI", env=env)
    expect = {e[1]: (int(e[2]), int(e[3]), int(e[4]), e[5]) for e in parse_expect(r.out) if e[0] == "kernel"}
    check_eq(sorted(expect), sorted(MULTI_DIMS), "kernels multi launched")
    lines = dump("MULTI", ["--kinds=gpu_launch,act_kernel"])
    for kind in ("gpu_launch", "act_kernel"):
        streams = {}  # label -> the streams its kernels were launched on (handles) or ran on (CUPTI's ids)
        for name, (n, ns, device, label) in sorted(expect.items()):
            mine = records(lines, kind=kind, string=name)
            grid, block = MULTI_DIMS[name]
            check_eq([(d["dims"], d["device"]) for d in mine], [({"grid": grid, "block": block}, device)] * n,
                     "%s records of %s (dims, device)" % (kind, name))
            streams.setdefault(label, set()).update(d["stream"] for d in mine)
            if kind == "act_kernel":  # the fake GPU's time: grid blocks x ns per block
                for d in mine:
                    check_range(d["t1"] - d["t0"], ns, ns * 1.1, "duration of %s at offset %d" % (name, d["offset"]))
        check(all(len(s) == 1 for s in streams.values()) and len(set().union(*streams.values())) == 3,
              "%s: one stream per label, three in all: %r", kind, streams)
        if kind == "gpu_launch":
            check_eq(streams["legacy"], {0}, "the tail kernels' stream (the legacy default stream)")


def test_train():
    r, _ = profile([workload("cuda_train"), "--steps", "5"], "TRAIN")
    expect = parse_expect(r.out)
    lines = dump("TRAIN", ["--kinds=gemm,coll"])
    gemms = {}
    for d in records(lines, kind="gemm"):
        g = d["gemm"]
        key = (d["event"], g["m"], g["n"], g["k"], g["batch"])
        gemms[key] = gemms.get(key, 0) + 1
    check_eq(gemms, {(e[1], int(e[2]), int(e[3]), int(e[4]), int(e[5])): int(e[6]) for e in expect if e[0] == "gemm"},
             "GEMM records by (call, m, n, k, batch)")
    coll = [e for e in expect if e[0] == "coll"]
    check_eq([e[1] for e in coll], ["ncclAllReduce"], "the collectives cuda_train makes")
    reduces = records(lines, event="ncclAllReduce")
    check_eq(len(reduces), int(coll[0][2]), "ncclAllReduce records")
    check_eq({(d["nccl"]["dtype"], d["nccl"]["op"], d["nccl"]["nranks"], d["nccl"]["rank"], d["nccl"]["peer"])
              for d in reduces}, {(7, 0, 1, 0, -1)}, "ncclAllReduce (ncclFloat32, ncclSum, 1 rank, rank 0, no peer)")
    check_eq(sum(d["arg0"] * 4 for d in reduces), int(coll[0][3]), "ncclAllReduce bytes (elements x 4)")


def test():
    global TABLE
    TABLE = event_table()
    lines = test_dd()
    test_options(lines)
    test_damage(lines)
    if os.path.exists(os.path.join(FAKES, "libcudart.so.13")):
        test_multi()
        test_train()
    else:
        note("fake CUDA libraries not built: the GPU part is skipped")


main(test)
