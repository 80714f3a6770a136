#!/bin/sh
# make e2e: profwrap on real PyTorch and PyTorch Lightning (tests/integration/test_e2e_pytorch.py).
#
# Makes (or reuses) a virtual environment with torch and lightning from PyPI, then runs the e2e test in it:
# tests/e2e/train.py (an MLP trained with a DataLoader of two workers reading a dataset of files, NVTX-marked
# steps, one epoch under emit_nvtx) and tests/e2e/lightning_train.py (Lightning's hook actions as NVTX ranges
# and SimpleProfiler's timings of the same actions), each run without and with profwrap, and checks profwrap's
# reports against what the scripts counted. Then HTA (Holistic Trace Analysis, from PyPI, in an environment of
# its own) on profwrap's traces of two fake-GPU ranks (tests/integration/test_e2e_hta.py). Prints the tests'
# output, the side-by-side Phases/SimpleProfiler table included; the profiles stay in build/e2e/.
#
# Environment:
#   PROFWRAP_E2E_VENV         the virtual environment (default $HOME/.cache/profwrap/e2e-venv, shared by every
#                             clone; delete it to reinstall). Installed only when torch or lightning is missing.
#   PROFWRAP_E2E_BASE_PYTHON  the python that makes it (default python3; PyTorch wheels need 3.10 or newer)
#   PROFWRAP_E2E_PIP_TIMEOUT  seconds the install may take (default 600)
#   PROFWRAP_E2E_HTA_VENV     HTA's virtual environment (default $HOME/.cache/profwrap/hta-venv), made like the
#                             other when hta cannot be imported
#   PROFWRAP_BIN_DIR          where profwrap, profwrap-collector and libprofwrap.so are (default: the top of the tree)
# The install is PyTorch's default wheel from PyPI (the CUDA build, about 4 GB with its nvidia-* wheels: the
# CPU-only wheels from download.pytorch.org have no NVTX); it works without a GPU. Exit status: the test's
# (0 passed, 1 failed), 2 when the environment cannot be made.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rm -f "$repo/build/e2e-environment-failed"
venv=${PROFWRAP_E2E_VENV:-$HOME/.cache/profwrap/e2e-venv}
base_python=${PROFWRAP_E2E_BASE_PYTHON:-python3}
pip_timeout=${PROFWRAP_E2E_PIP_TIMEOUT:-600}
py=$venv/bin/python
# Lower bounds only: the scripts use emit_nvtx and PyTorchProfiler(emit_nvtx=True) as Lightning 2.x has them.
packages="torch>=2.1 lightning>=2.1"

# The environment could not be made: said on stderr and in build/e2e-environment-failed, which .ci/run reads
# to tell this (a loud skip) from a failed test.
die() {
	echo "e2e: $*" >&2
	mkdir -p "$repo/build" && echo "$*" >"$repo/build/e2e-environment-failed"
	exit 2
}

have_packages() {
	[ -x "$py" ] && "$py" -c 'import torch, lightning' >/dev/null 2>&1
}

versions() {
	"$py" -c 'import sys, torch, lightning; print("python %d.%d.%d, torch %s, lightning %s" % (sys.version_info[:3] + (torch.__version__, lightning.__version__)))'
}

install() {
	if [ ! -x "$py" ]; then
		echo "e2e: creating $venv with $base_python"
		mkdir -p "$(dirname "$venv")" || die "cannot create $(dirname "$venv")"
		"$base_python" -m venv "$venv" ||
			die "cannot create the virtual environment $venv with $base_python (on Debian: apt-get install python3-venv)"
	fi
	echo "e2e: installing $packages into $venv (about 4 GB; up to ${pip_timeout} s)"
	t0=$(date +%s)
	timeout -k 10 "$pip_timeout" "$py" -m pip install --disable-pip-version-check --progress-bar off --timeout 60 \
		$packages
	rc=$?
	secs=$(($(date +%s) - t0))
	case $rc in
	0) ;;
	124 | 137) die "pip install did not finish within ${pip_timeout} s (set PROFWRAP_E2E_PIP_TIMEOUT to allow more)" ;;
	*) die "pip install failed (exit $rc after ${secs} s); see its messages above. Remove $venv to start afresh." ;;
	esac
	have_packages || die "torch or lightning still cannot be imported after pip install into $venv"
	echo "e2e: installed in ${secs} s: $(versions)"
}

# ready HAVE INSTALL DIR: makes the environment DIR with INSTALL unless HAVE finds it ready. One installer at a
# time per environment (clones share it); the others wait on its lock, then find it ready. die in the locked
# subshell ends the script too.
ready() {
	"$1" && return 0
	if ! command -v flock >/dev/null 2>&1; then
		"$2"
		return
	fi
	mkdir -p "$(dirname "$3")" || die "cannot create $(dirname "$3")"
	(
		flock -w "$((pip_timeout + 60))" 9 || die "another install into $3 holds $3.lock"
		"$1" || "$2"
	) 9>"$3.lock" || exit 2
}

ready have_packages install "$venv"
echo "e2e: using $venv: $(versions)"

# HTA: its own environment (pandas, numpy and plotly at the versions it wants, apart from torch's).
hta_venv=${PROFWRAP_E2E_HTA_VENV:-$HOME/.cache/profwrap/hta-venv}
hta_py=$hta_venv/bin/python
hta_package="holistictraceanalysis>=0.5"

have_hta() {
	[ -x "$hta_py" ] && "$hta_py" -c 'import hta' >/dev/null 2>&1
}

install_hta() {
	if [ ! -x "$hta_py" ]; then
		echo "e2e: creating $hta_venv with $base_python"
		"$base_python" -m venv "$hta_venv" || die "cannot create the virtual environment $hta_venv with $base_python"
	fi
	echo "e2e: installing $hta_package into $hta_venv (up to ${pip_timeout} s)"
	timeout -k 10 "$pip_timeout" "$hta_py" -m pip install --disable-pip-version-check --progress-bar off \
		--timeout 60 "$hta_package" || die "pip install $hta_package failed (exit $?); remove $hta_venv to start afresh"
	have_hta || die "hta still cannot be imported after pip install into $hta_venv"
}

hta_version() {
	"$hta_py" -c 'import importlib.metadata as m; print(m.version("holistictraceanalysis"))'
}

ready have_hta install_hta "$hta_venv"
echo "e2e: using $hta_venv (HTA $(hta_version))"

bin_dir=${PROFWRAP_BIN_DIR:-$repo}
for f in profwrap profwrap-collector libprofwrap.so; do
	[ -e "$bin_dir/$f" ] || die "$bin_dir/$f is missing: run make first"
done

# The test's directory (and its profiles) is kept under build/e2e; run.sh shows a failed test's output
# itself, and a passed test's output is shown here.
out=$repo/build/e2e
rm -rf "$out"
mkdir -p "$out" || die "cannot create $out"
# test_e2e_pytorch runs for about 90 s on 2 cores: the common 120 s limit leaves it too little room
TMPDIR=$out PROFWRAP_KEEP=1 PROFWRAP_TEST_TIMEOUT=600 PROFWRAP_E2E_PYTHON=$py PROFWRAP_HTA_PYTHON=$hta_py \
	PROFWRAP_BIN_DIR=$bin_dir \
	"$repo/tests/integration/run.sh" e2e_pytorch e2e_hta
rc=$?
for test in e2e_pytorch e2e_hta; do
	log=$(ls "$out"/profwrap-integration.*/test_$test/output.log 2>/dev/null | head -n 1)
	if [ $rc -eq 0 ] && [ -n "$log" ]; then
		echo
		cat "$log"
	fi
	[ -n "$log" ] && echo "e2e: the profiles of test_$test are in $(dirname "$log")"
done
exit $rc
