#!/bin/sh
# Makes docs/images/rank0-html.png, the README's (and docs/reports.md's) picture of rank0.html: make demo's toy training loop, with CPU
# samples, loaded in headless Chromium (Debian's chromium; make deps installs it).
set -e
cd "$(dirname "$0")/.."
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
	echo "report-picture: no Chromium installed (make deps installs it)" >&2
	exit 1
fi
out=${TMPDIR:-/tmp}/profwrap-picture
python=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
./profwrap -q -f -o "$out" --sample=997 -- "$python" tests/workloads/toy_train.py "${TMPDIR:-/tmp}/profwrap-demo-data" \
	--epochs 2 >/dev/null
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1300,1400 \
	--screenshot="$PWD/docs/images/rank0-html.png" "file://$out/rank0.html" 2>/dev/null
echo "report-picture: docs/images/rank0-html.png from $out/rank0.html"
