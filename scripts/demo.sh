#!/bin/sh
# make demo: profiles the bundled toy training loop and prints its report.
set -e
cd "$(dirname "$0")/.."
out=${PROFWRAP_DEMO_OUT:-demo-out}
data=${TMPDIR:-/tmp}/profwrap-demo-data
# The interpreter itself, not a version manager's shim script (which would show up as processes of its own).
python=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
echo "== profwrap -o $out -f -- $python tests/workloads/toy_train.py $data --epochs 2"
./profwrap -o "$out" -f -- "$python" tests/workloads/toy_train.py "$data" --epochs 2
echo
cat "$out/rank0.txt"
echo
echo "== Reports: $out/rank0.txt, $out/rank0.html (open in a browser), $out/rank0.json, $out/rank0.trace.json (open in https://ui.perfetto.dev), $out/summary.txt"
