#!/bin/sh
# On a machine with an NVIDIA GPU and PyTorch: runs the checks of scripts/gpu_check_cases.py (small PyTorch
# workloads under profwrap, plainly and under torch.profiler; one PASS, FAIL or SKIP line each) and writes
# their figures to ${GPU_CHECK_OUT:-bench/results}/gpu-<UTC date-time>.txt. This script only finds the Python
# that has torch, reuses the build (./profwrap and build/ present: never rebuilt) or builds with the CUDA,
# CUPTI, cuDNN and NCCL headers it finds (toolkit or pip wheels), and collects.
# Exit 77 when no Python has torch or torch sees no GPU; 1 when a check failed or profwrap cannot be built;
# 0 otherwise. PYTHON picks the Python; GPU_CHECK_STEPS the training steps (50); GPU_CHECK_ONLY=1,2,7,nvcc
# a subset of checks; GPU_CHECK_BUDGET the seconds all checks may take (450); GPU_CHECK_KEEP=1 keeps the
# reports (the training run's rank0.{txt,json} beside the figures, the rest in the temporary directory);
# GPU_CHECK_COMMIT names the commit built when the copy's git history is not the tree's.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
out=${GPU_CHECK_OUT:-$repo/bench/results}
steps=${GPU_CHECK_STEPS:-50}

# A command under a time limit where coreutils' timeout exists.
limit() {
	if command -v timeout >/dev/null 2>&1; then
		timeout "$@"
	else
		shift
		"$@"
	fi
}

# ---- the Python that has torch ----
tried=
py=
torch_py=
# probe PYTHON: sets py when its torch sees a GPU, torch_py (the first) when it has torch but no GPU.
probe() {
	case " $tried " in *" $1 "*) return 1 ;; esac
	tried="$tried $1"
	limit 120 "$1" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)' >/dev/null 2>&1
	case $? in
	0) py=$1 ;;
	3) [ -n "$torch_py" ] || torch_py=$1 ;;
	esac
	[ -n "$py" ]
}
if [ -n "${PYTHON:-}" ]; then
	probe "$PYTHON"
else
	for name in python3 python; do
		c=$(command -v "$name" 2>/dev/null) && probe "$c" && break
	done
	h=${HOME:-/root}
	[ -n "$py" ] || for c in ${VIRTUAL_ENV:+"$VIRTUAL_ENV/bin/python3"} ${CONDA_PREFIX:+"$CONDA_PREFIX/bin/python3"} \
		"$repo/.venv/bin/python3" "$repo/venv/bin/python3" "$h/.venv/bin/python3" "$h/venv/bin/python3" \
		/opt/*/bin/python3 /opt/*/*/bin/python3 /opt/conda/bin/python3 /opt/conda/envs/*/bin/python3 \
		/usr/local/bin/python3 "$h"/miniconda3/bin/python3 "$h"/miniconda3/envs/*/bin/python3 \
		"$h"/anaconda3/bin/python3 "$h"/anaconda3/envs/*/bin/python3 "$h"/miniforge3/bin/python3 \
		"$h"/miniforge3/envs/*/bin/python3 "$h"/.local/bin/python3 /workspace/*/bin/python3 \
		"$h"/.cache/profwrap/e2e-venv/bin/python3 /usr/bin/python3; do
		[ -x "$c" ] && probe "$c" && break
	done
fi
if [ -z "$py" ] && [ -n "$torch_py" ]; then
	echo "gpu-check: torch found at $torch_py ($("$torch_py" -c 'import torch; print("torch %s, CUDA %s, CUDA_VISIBLE_DEVICES=%s" % (torch.__version__, torch.version.cuda or "none: a CPU-only build", __import__("os").environ.get("CUDA_VISIBLE_DEVICES", "unset")))' 2>/dev/null)) but torch.cuda.is_available() is False; nothing to check" >&2
	exit 77
fi
if [ -z "$py" ]; then
	echo "gpu-check: no python with torch found (tried:${tried:- nothing}); set PYTHON=/path/to/python" >&2
	exit 77
fi

mkdir -p "$out" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX") || exit 1
[ "${GPU_CHECK_KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT

# ---- profwrap: the build there is used as it is; else built with the headers found here ----
# first_with HEADER DIR...: the first DIR that holds HEADER.
first_with() {
	hdr=$1
	shift
	for d in "$@"; do
		[ -f "$d/$hdr" ] && { echo "$d"; return 0; }
	done
	return 1
}
build() {
	site=$("$py" -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null)
	# the pip wheels' include directories (nvidia/cu13/include, nvidia/cuda_cupti/include, nvidia/cudnn/include, ...)
	wheels=
	for s in $site; do
		for d in "$s"/nvidia/*/include; do
			[ -d "$d" ] && wheels="$wheels $d"
		done
	done
	# the default toolkit first, then the versioned ones, newest first
	toolkits="/usr/local/cuda $(ls -d /usr/local/cuda-* 2>/dev/null | sort -t- -k2,2 -rn) /opt/cuda"
	cuda_home=
	for d in ${CUDA_HOME:-} ${CUDA_PATH:-} $toolkits $(for w in $wheels; do dirname "$w"; done); do
		[ -f "$d/include/cuda_runtime_api.h" ] && { cuda_home=$d; break; }
	done
	if [ -z "$cuda_home" ]; then
		echo "gpu-check: no cuda_runtime_api.h in \$CUDA_HOME, /usr/local/cuda* or $py's nvidia/*/include: cannot build a profwrap that sees the GPU" >&2
		return 1
	fi
	tk_inc=
	for t in $toolkits; do
		tk_inc="$tk_inc $t/include $t/extras/CUPTI/include"
	done
	extra=
	missing=
	# add HEADER DIR...: -isystem for the first DIR with HEADER, unless the compiler searches it already.
	add() {
		hdr=$1
		d=$(first_with "$@") || { missing="$missing $hdr"; return; }
		case " $cuda_home/include /usr/include /usr/local/include $extra " in
		*" $d "*) ;;
		*) extra="$extra -isystem $d" ;;
		esac
	}
	add cupti.h "$cuda_home/include" "$cuda_home/extras/CUPTI/include" $tk_inc $wheels
	add cublas_v2.h "$cuda_home/include" $tk_inc $wheels
	add cublasLt.h "$cuda_home/include" $tk_inc $wheels
	add cudnn.h "$cuda_home/include" $tk_inc /usr/include /usr/local/include $wheels
	add nccl.h "$cuda_home/include" $tk_inc /usr/include /usr/local/include $wheels
	add nvtx3/nvToolsExt.h "$cuda_home/include" $tk_inc $wheels
	# The profiler API's header must match cuda_runtime_api.h; pip's wheels lack it: its two calls, declared.
	if [ ! -f "$cuda_home/include/cuda_profiler_api.h" ]; then
		mkdir -p "$tmp/include" && cat >"$tmp/include/cuda_profiler_api.h" <<'EOF'
/* written by scripts/gpu-check.sh: the CUDA runtime headers it found (pip's) have no cuda_profiler_api.h */
#include <cuda_runtime_api.h>
extern cudaError_t CUDARTAPI cudaProfilerStart(void);
extern cudaError_t CUDARTAPI cudaProfilerStop(void);
EOF
		extra="$extra -isystem $tmp/include"
	fi
	[ -z "$missing" ] || echo "gpu-check: not found:$missing (the build will fail on it)" >&2
	echo "gpu-check: building profwrap: make CUDA_HOME=$cuda_home CFLAGS=\"${CFLAGS:-}$extra\"" >&2
	make -C "$repo" -j"$(nproc 2>/dev/null || echo 4)" CUDA_HOME="$cuda_home" CFLAGS="${CFLAGS:-}$extra" >"$tmp/build.log" 2>&1 || {
		tail -n 30 "$tmp/build.log" >&2
		echo "gpu-check: cannot build profwrap (log above)" >&2
		return 1
	}
}
if [ -x "$repo/profwrap" ] && [ -d "$repo/build" ]; then
	echo "gpu-check: using the build there ($repo/profwrap)" >&2
else
	build || exit 1
fi

report=$out/gpu-$(date -u +%Y%m%d-%H%M%S).txt
{
	# GPU_CHECK_COMMIT: the commit built, where the copy's git is not the tree's (a device machine's copy)
	commit=${GPU_CHECK_COMMIT:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null)}
	echo "profwrap gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit ${commit:-unknown}"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu:    /'
	"$py" -c 'import torch; print("torch:  %s, CUDA %s, cuDNN %s" % (torch.__version__, torch.version.cuda, torch.backends.cudnn.version()))'
	echo "python: $py"
	echo
	"$py" "$here/gpu_check_cases.py" run --profwrap "$repo/profwrap" --tmp "$tmp" --steps "$steps" \
		${GPU_CHECK_ONLY:+--only "$GPU_CHECK_ONLY"}
	echo $? >"$tmp/status"
} 2>&1 | tee "$report"
if [ "${GPU_CHECK_KEEP:-0}" = 1 ]; then
	cp "$tmp/train-profwrap/rank0.txt" "$tmp/train-profwrap/rank0.json" "$out/" 2>/dev/null
	echo "gpu-check: the reports are kept in $tmp" >&2
fi
echo "gpu-check: written $report" >&2
[ "$(cat "$tmp/status" 2>/dev/null)" = 0 ] || exit 1
