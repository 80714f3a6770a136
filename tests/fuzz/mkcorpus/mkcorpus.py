#!/usr/bin/env python3
"""Makes the seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/seed-*) from real runs: the workloads
are profiled, and their raw traces, reports and summaries become the seeds; the lane and segment seeds are
the traces' records written again by the producer's functions (segments.c). Inputs that once broke a target
(crash-*) are kept. Run by `make fuzz-corpus`.

usage: mkcorpus.py BIN_DIR WORKLOADS SEGMENTS CORPUS"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

MAX_SEED = 48 * 1024  # libFuzzer runs with -max_len=65536
SEP = b"\n=====\n"    # between the files of a merge input (tests/fuzz/merge.c)
CHUNK_STRING = 2      # collector/lib/rawfile.h
SYMBOLIZED = ("spin",)  # runs whose report seeds keep the paths of their ELF files


def run(profwrap, out, cmd, opts=()):
    r = subprocess.run([profwrap, "-q", "-o", out] + list(opts) + ["--"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)
    if r.returncode != 0 or not glob.glob(os.path.join(out, "raw", "*.pwt")):
        sys.exit("mkcorpus: %s failed (exit %d)" % (" ".join(cmd), r.returncode))


def put(corpus, target, name, data):
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def unresolvable(data):
    """The trace with the paths of the ELF files it names (module paths in STRING chunks, the PROC's exe) made
    relative ("#usr/lib/..."), so that the symbolizer finds no file: opening and decompressing the DWARF of
    libc at every input would slow the report target a hundredfold. A few seeds keep theirs."""
    b = bytearray(data)

    def hide(off, n):
        path = bytes(b[off:off + n])
        try:
            if not os.path.isfile(path):  # a device (/dev/ptmx) would block the read
                return
            with open(path, "rb") as f:
                elf = f.read(4) == b"\x7fELF"
        except (OSError, ValueError):  # no such file, a NUL in the name
            return
        if elf and path.startswith(b"/"):
            b[off] = ord("#")

    off = struct.unpack_from("<I", b, 12)[0]
    first = True
    while off + 8 <= len(b):
        typ, n = struct.unpack_from("<II", b, off)
        body = off + 8
        if body + n > len(b):
            break
        if first:  # PROC: 64 bytes, then argv, exe and host
            argv_len, exe_len = struct.unpack_from("<II", b, body + 48)
            hide(body + 64 + argv_len, exe_len)
            first = False
        elif typ == CHUNK_STRING and n >= 16:
            hide(body + 16, struct.unpack_from("<I", b, body + 8)[0])
        off = body + ((n + 7) & ~7)
    return bytes(b)


def summary_doc(path):
    """The report's bytes up to the end of its "summary" object, closed: all that merge reads."""
    with open(path, "rb") as f:
        text = f.read().decode()
    key = text.index('"summary"')
    start = text.index(":", key) + 1
    while text[start] in " \n\t":
        start += 1
    _, end = json.JSONDecoder().raw_decode(text, start)
    return (text[:end] + "\n}\n").encode()


def main():
    bin_dir, workloads, segments, corpus = sys.argv[1:5]
    profwrap = os.path.join(bin_dir, "profwrap")
    w = lambda name: os.path.join(workloads, name)  # noqa: E731
    tmp = tempfile.mkdtemp(prefix="pw-mkcorpus-")
    runs = {
        "sh": (["sh", "-c", 'ls / >/dev/null; cat /etc/hostname >/dev/null; sh -c "exit 3"; exit 0'], []),
        "iomix": ([w("iomix"), tmp, "2", "5", "512", "2", "1"], []),
        "train": ([w("cuda_train"), "--steps", "2"], ["--stack-threshold=0"]),
        "nvtx": ([w("cuda_nvtx"), "ranges", os.path.join(tmp, "nvtx.json"), "3"], []),
        "stacks": ([w("cuda_stacks"), "calls", "2", "2", "2", "2", "2"], ["--stack-threshold=0"]),
        "spin": ([w("cuda_stacks"), "spin", "30", "30"], ["--sample=500"]),
        "input": ([w("cuda_gpu_patterns"), "input", "--steps", "2"], []),
        "pageable": ([w("cuda_gpu_patterns"), "pageable", "--steps", "2"], []),
        "collective": ([w("cuda_gpu_patterns"), "collective", "--steps", "2"], []),
        "multi": ([w("cuda_gpu_patterns"), "multi", "--steps", "2"], []),
    }
    if shutil.which("mpirun") and os.path.exists(w("mpi_ranks")):
        runs["mpi"] = (["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "3", w("mpi_ranks"), "--iters",
                        "4", "--slow-rank", "1", "--delay-ms", "5"], [])
    for target in ("lane_walk", "arena", "raw_read", "report", "json_read", "merge"):
        for old in glob.glob(os.path.join(corpus, target, "seed-*")):
            os.unlink(old)
    traces = []  # (seed name: run, process and image, stable from run to run; path)
    for name, (cmd, opts) in runs.items():
        out = os.path.join(tmp, name)
        run(profwrap, out, cmd, opts)
        pids = {}
        for path in sorted(glob.glob(os.path.join(out, "raw", "*.pwt"))):
            pid, _, image = os.path.basename(path)[:-4].split("-")[-1].partition(".")
            number = pids.setdefault(pid, len(pids))
            if os.path.getsize(path) <= MAX_SEED:
                traces.append(("%s-%d%s.pwt" % (name, number, "." + image if image else ""), path))
    # raw traces as they are, for the reader alone and for the whole report
    named = os.path.join(tmp, "named")
    os.makedirs(named)
    for base, path in traces:
        shutil.copy(path, os.path.join(named, base))
        with open(path, "rb") as f:
            data = f.read()
        put(corpus, "raw_read", base, data)
        put(corpus, "report", base, data if base.split("-")[0] in SYMBOLIZED else unresolvable(data))
    # lanes and segments
    lane_dir, arena_dir = os.path.join(tmp, "lanes"), os.path.join(tmp, "arenas")
    os.makedirs(lane_dir)
    os.makedirs(arena_dir)
    subprocess.run([segments, lane_dir, arena_dir] + sorted(glob.glob(os.path.join(named, "*"))), check=True)
    for target, d in (("lane_walk", lane_dir), ("arena", arena_dir)):
        for path in sorted(glob.glob(os.path.join(d, "*"))):
            with open(path, "rb") as f:
                put(corpus, target, os.path.basename(path), f.read())
    # JSON: the reports' summaries, the cross-rank summaries, whole small reports
    summaries = {}
    for name in runs:
        out = os.path.join(tmp, name)
        for path in sorted(glob.glob(os.path.join(out, "rank*.json")) + glob.glob(os.path.join(out, "launcher-*.json"))):
            if path.endswith(".trace.json"):
                continue
            doc = summary_doc(path)
            base = "%s-%s" % (name, os.path.basename(path)[:-5])
            summaries[base] = doc
            put(corpus, "json_read", base + "-summary", doc)
            if os.path.getsize(path) <= MAX_SEED:
                with open(path, "rb") as f:
                    put(corpus, "json_read", base, f.read())
        with open(os.path.join(out, "summary.json"), "rb") as f:
            put(corpus, "json_read", name + "-summary.json", f.read())
    # JSON the writers do not produce, for the reader's corners
    corners = {
        "escapes": b'{"s":"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20ac\\ud83d\\ude00\\u0000"}',
        "numbers": b'[0,-0,18446744073709551615,-9223372036854775808,1.5e300,-2.25E-3,123456789012345678901]',
        "literals": b' [true,false,null,{},[],"",{"a":[{"b":null}]}] ',
        "nested": b"[" * 70 + b"]" * 70,
        "utf8": '{"h\u00f4te":"n\u0153ud-\u00e9t\u00e9","x":"\u4e2d\U0001f600"}'.encode(),
    }
    for name, doc in corners.items():
        put(corpus, "json_read", "corner-" + name, doc)
    # merge: each run's ranks as one input, and ranks of different runs together
    for name in runs:
        docs = [(b, d) for b, d in sorted(summaries.items()) if b.startswith(name + "-")]
        parts = [(b"launcher:" if "-launcher-" in b else b"") + d for b, d in docs]
        put(corpus, "merge", name, SEP.join(parts))
    if "mpi" in runs:
        mpi = [d for b, d in sorted(summaries.items()) if b.startswith("mpi-rank")]
        put(corpus, "merge", "mpi-and-nvtx", SEP.join(mpi + [summaries["nvtx-rank0"]]))
        put(corpus, "merge", "mpi-rank-missing", SEP.join([mpi[0], b"", mpi[2]]))
    shutil.rmtree(tmp)


main()
