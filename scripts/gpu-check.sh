#!/bin/sh
# On a machine with an NVIDIA GPU and PyTorch: runs scripts/gpu_check_train.py plainly, under profwrap and
# under torch.profiler, and compares what each saw: CUDA runtime call counts (profwrap's rank0.json against
# torch.profiler's key_averages), and the time each run took. Writes the comparison to
# ${GPU_CHECK_OUT:-bench/results}/gpu-check-<date>.txt (and the reports beside it when GPU_CHECK_KEEP=1).
# Exit 77 when there is no GPU or no PyTorch; 1 when profwrap failed; 0 otherwise (differences are printed,
# not judged: torch.profiler counts only inside its window and hides some calls).
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
report=$out/gpu-check-$(date -u +%Y%m%d-%H%M%S).txt

{
	echo "profwrap gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu:    /'
	"$py" -c 'import torch; print("torch:  %s, CUDA %s, cuDNN %s" % (torch.__version__, torch.version.cuda, torch.backends.cudnn.version()))'
	echo
	"$py" "$here/gpu_check_train.py" --steps "$steps" | sed 's/^/plain:          /'
	"$repo/profwrap" -q -o "$tmp/pw" -- "$py" "$here/gpu_check_train.py" --steps "$steps" | sed 's/^/profwrap:       /'
	"$py" "$here/gpu_check_train.py" --steps "$steps" --torch-profiler "$tmp/tp.json" | sed 's/^/torch.profiler: /'
	echo
	"$py" - "$tmp/pw/rank0.json" "$tmp/tp.json" <<'PY'
import json, sys
pw = json.load(open(sys.argv[1]))
tp = json.load(open(sys.argv[2]))
gpu = ("cudart", "cublas", "cublaslt", "cudnn", "nccl")
ours = {c["name"]: c for c in pw["calls"] if c["domain"] in gpu}
print("%-36s %12s %12s %14s %14s" % ("call", "profwrap", "torch.prof", "profwrap us", "torch.prof us"))
for name in sorted(set(ours) | set(tp["calls"])):
    o, t = ours.get(name), tp["calls"].get(name)
    print("%-36s %12s %12s %14s %14s" % (name, o["count"] if o else "-", t["count"] if t else "-",
          "%.0f" % (o["total_ns"] / 1e3) if o else "-", "%.0f" % t["total_us"] if t else "-"))
print()
print("profwrap: %d events, %d dropped; kernels launched through the runtime: %d distinct names" % (
    pw["events"], pw["dropped_events"], len(pw.get("kernels_launched", []))))
for k in pw.get("kernels_launched", [])[:10]:
    print("  %8d  %s" % (k["launches"], k["name"][:100]))
PY
	echo
	sed -n '/CUDA API summary/,/^$/p' "$tmp/pw/rank0.txt"
} 2>&1 | tee "$report"
[ -s "$tmp/pw/rank0.json" ] || exit 1
if [ "${GPU_CHECK_KEEP:-0}" = 1 ]; then
	cp "$tmp/pw/rank0.txt" "$tmp/pw/rank0.json" "$out/" 2>/dev/null
fi
echo "gpu-check: written $report" >&2
