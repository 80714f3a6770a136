#!/bin/sh
# On a machine with an NVIDIA GPU and PyTorch: runs scripts/gpu_check_train.py plainly, under profwrap and
# under torch.profiler, and compares what each saw: GPU kernels (count and total time: both read CUPTI, so
# the goal is agreement within 2 %), CUDA runtime call counts (profwrap's rank0.json against torch.profiler's
# key_averages), and the median step time of each run (the overhead of each profiler). Writes the comparison
# to ${GPU_CHECK_OUT:-bench/results}/gpu-<date>.txt (and the reports beside it when GPU_CHECK_KEEP=1).
# Exit 77 when there is no GPU or no PyTorch; 1 when profwrap failed or the kernel figures disagree by more
# than 2 %; 0 otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
py=${PYTHON:-python3}
out=${GPU_CHECK_OUT:-$repo/bench/results}
steps=${GPU_CHECK_STEPS:-50}

"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null || {
	echo "gpu-check: no CUDA GPU visible to PyTorch ($py); nothing to check" >&2
	exit 77
}
[ -x "$repo/profwrap" ] || make -C "$repo" >/dev/null || { echo "gpu-check: cannot build profwrap" >&2; exit 1; }
mkdir -p "$out" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
report=$out/gpu-$(date -u +%Y%m%d-%H%M%S).txt

{
	echo "profwrap gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu:    /'
	"$py" -c 'import torch; print("torch:  %s, CUDA %s, cuDNN %s" % (torch.__version__, torch.version.cuda, torch.backends.cudnn.version()))'
	echo
	"$py" "$here/gpu_check_train.py" --steps "$steps" > "$tmp/plain.txt"
	"$repo/profwrap" -q -o "$tmp/pw" -- "$py" "$here/gpu_check_train.py" --steps "$steps" > "$tmp/pw.txt"
	"$py" "$here/gpu_check_train.py" --steps "$steps" --torch-profiler "$tmp/tp.json" > "$tmp/tp.txt"
	sed 's/^/plain:          /' "$tmp/plain.txt"
	sed 's/^/profwrap:       /' "$tmp/pw.txt"
	sed 's/^/torch.profiler: /' "$tmp/tp.txt"
	echo
	"$py" - "$tmp/pw/rank0.json" "$tmp/tp.json" "$tmp/plain.txt" "$tmp/pw.txt" "$tmp/tp.txt" <<'PY'
import json, sys
pw = json.load(open(sys.argv[1]))
tp = json.load(open(sys.argv[2]))
def step_ms(path):
    f = open(path).read().split()
    return float(f[f.index("step_ms_median") + 1])
plain, ours, theirs = (step_ms(p) for p in sys.argv[3:6])
print("median step: plain %.3f ms, profwrap %.3f ms (%+.1f %%), torch.profiler %.3f ms (%+.1f %%)" % (
    plain, ours, 100 * (ours / plain - 1), theirs, 100 * (theirs / plain - 1)))
kernels = pw.get("kernels", [])
k_count = sum(k["count"] for k in kernels)
k_us = sum(k["total_ns"] for k in kernels) / 1e3
t_count, t_us = tp["kernels"]["count"], tp["kernels"]["total_us"]
def diff(a, b):
    return 100.0 * (a - b) / b if b else float("inf")
print("GPU kernels: profwrap %d, %.0f us; torch.profiler %d, %.0f us; difference %+.2f %% in count, %+.2f %% in time" % (
    k_count, k_us, t_count, t_us, diff(k_count, t_count), diff(k_us, t_us)))
act = pw.get("gpu_activity", {})
print("profwrap GPU activity: status %s, %s records, %s dropped" % (act.get("status"), act.get("records"), act.get("dropped")))
for g in pw.get("gpus", []):
    print("GPU %d: busy %.1f %% of %.3f s, %d idle gaps, longest %.3f ms" % (g["device"], 100.0 * g["busy_ns"] / max(g["span_ns"], 1),
          g["span_ns"] / 1e9, g["idle_gaps"], g["longest_idle_ns"] / 1e6))
for f in pw.get("findings", []):
    print("finding %s (%.1f %% of wall): %s" % (f["id"], 100 * f["share"], f["evidence"]))
print()
gpu = ("cudart", "cublas", "cublaslt", "cudnn", "nccl")
ours = {c["name"]: c for c in pw["calls"] if c["domain"] in gpu}
print("%-36s %12s %12s %14s %14s" % ("call", "profwrap", "torch.prof", "profwrap us", "torch.prof us"))
for name in sorted(set(ours) | set(tp["calls"])):
    o, t = ours.get(name), tp["calls"].get(name)
    print("%-36s %12s %12s %14s %14s" % (name, o["count"] if o else "-", t["count"] if t else "-",
          "%.0f" % (o["total_ns"] / 1e3) if o else "-", "%.0f" % t["total_us"] if t else "-"))
print()
print("profwrap: %d events, %d dropped" % (pw["events"], pw["dropped_events"]))
print("kernels linked to a wrapped call: %s of %s (to CUDA API records only: %s)" % (
    act.get("kernels_linked"), act.get("kernels"), act.get("kernels_linked_api")))
ok = abs(diff(k_count, t_count)) <= 2.0 and abs(diff(k_us, t_us)) <= 2.0
print("kernel agreement within 2 %%: %s" % ("yes" if ok else "NO"))
open(sys.argv[1] + ".verdict", "w").write("ok" if ok else "differ")
PY
	echo
	# nvcc's <<<>>> launches (tests/workloads/nvcc_launches.cu, built by make where nvcc is) against the
	# runtime PyTorch brought: every launch counted by kernel name and linked to the kernel it ran.
	cudart_dir=$("$py" -c 'import glob, os, torch; d = os.path.dirname(os.path.dirname(torch.__file__)); print(next(iter(sorted(os.path.dirname(p) for p in glob.glob(os.path.join(d, "nvidia", "*", "lib", "libcudart.so.1*")))), ""))')
	for prog in "$repo/build/workloads/nvcc_launches" "$repo/build/workloads/nvcc_launches_ptsz"; do
		[ -x "$prog" ] || { echo "nvcc launches: $prog not built (no nvcc where profwrap was built)"; continue; }
		name=$(basename "$prog")
		LD_LIBRARY_PATH="$cudart_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$repo/profwrap" -q -o "$tmp/$name" -- "$prog" \
			>"$tmp/$name.txt" 2>&1
		"$py" - "$tmp/$name/rank0.json" "$tmp/$name.txt" "$name" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
want = {}
for line in open(sys.argv[2]):
    w = line.split()
    if w[:2] == ["expect", "kernel"]:
        want[w[2]] = int(w[3])
got = {k["name"]: (k["launches"], k["failed"]) for k in rep["kernels_launched"]}
act = rep.get("gpu_activity", {})
ok = all(got.get(n, (0, 0))[0] == c for n, c in want.items()) and act.get("kernels_linked") == sum(want.values())
print("nvcc launches (%s): launches %s, expected %s; kernels %s, linked %s: %s" % (
    sys.argv[3], got, want, act.get("kernels"), act.get("kernels_linked"), "ok" if ok else "DIFFER"))
if not ok:
    open(sys.argv[1] + ".verdict", "w").write("differ")
PY
		[ -f "$tmp/$name/rank0.json.verdict" ] && echo differ >"$tmp/pw/rank0.json.verdict"
	done
	echo
	sed -n '/What to fix first/,/^$/p' "$tmp/pw/rank0.txt"
	sed -n '/GPU kernels/,/^$/p' "$tmp/pw/rank0.txt"
} 2>&1 | tee "$report"
[ -s "$tmp/pw/rank0.json" ] || exit 1
if [ "${GPU_CHECK_KEEP:-0}" = 1 ]; then
	cp "$tmp/pw/rank0.txt" "$tmp/pw/rank0.json" "$out/" 2>/dev/null
fi
echo "gpu-check: written $report" >&2
[ "$(cat "$tmp/pw/rank0.json.verdict" 2>/dev/null)" = ok ] || exit 1
