#!/bin/sh
# Integration tests: runs every tests/integration/test_*.py (or those named as arguments, e.g. `run.sh dd
# iomix`) with python3 under a timeout (PROFWRAP_TEST_TIMEOUT seconds, default 120), each in a temporary
# directory of its own. Exit 0 is a pass,
# 77 a skip, anything else a failure (its output is printed). Ends with the line
#   integration: N passed, N failed, N skipped
# and exits 1 when any test failed.
#
# Environment: PROFWRAP_BIN_DIR (directory of profwrap, profwrap-collector, libprofwrap.so) and
# PROFWRAP_WORKLOADS (directory of the built C workloads); both default to the build tree.
# PROFWRAP_KEEP=1 keeps every test's directory, not only those of failed tests.
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
limit=${PROFWRAP_TEST_TIMEOUT:-120}

bin_dir=${PROFWRAP_BIN_DIR:-$repo}
workloads=${PROFWRAP_WORKLOADS:-$repo/build/workloads}
# Absolute, without a trailing slash: the tests run from other directories.
bin_dir=$(cd "$bin_dir" 2>/dev/null && pwd) || { echo "integration: PROFWRAP_BIN_DIR $PROFWRAP_BIN_DIR is not a directory" >&2; exit 2; }
if [ -d "$workloads" ]; then
	workloads=$(cd "$workloads" && pwd)
fi
export PROFWRAP_BIN_DIR="$bin_dir" PROFWRAP_WORKLOADS="$workloads"
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
# The tests decide the profiler's settings themselves.
unset PROFWRAP_OUTPUT PROFWRAP_SESSION_DIR PROFWRAP_TRACE PROFWRAP_RING_SIZE PROFWRAP_FOLLOW_FORK PROFWRAP_QUIET
unset PROFWRAP_ROOT_PID LD_PRELOAD

# The tests to run, as the positional parameters: those named, else all of them.
if [ $# -gt 0 ]; then
	for name in "$@"; do
		name=$(basename "$name" .py)
		name=${name#test_}
		set -- "$@" "$here/test_$name.py"
		shift
	done
else
	set -- "$here"/test_*.py
fi

base=$(mktemp -d "${TMPDIR:-/tmp}/profwrap-integration.XXXXXX") || exit 2
passed=0
failed=0
skipped=0
failed_names=""
start=$(date +%s)
for t in "$@"; do
	name=$(basename "$t" .py)
	if [ ! -f "$t" ]; then
		echo "FAIL $name (no such test: $t)"
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		continue
	fi
	dir="$base/$name"
	mkdir -p "$dir"
	t0=$(date +%s)
	(cd "$dir" && TMPDIR="$dir" timeout -k 5 "$limit" python3 "$t" >"$dir/output.log" 2>&1)
	rc=$?
	secs=$(($(date +%s) - t0))
	case $rc in
	0)
		echo "PASS $name (${secs}s)"
		passed=$((passed + 1))
		[ "${PROFWRAP_KEEP:-0}" = 1 ] || rm -rf "$dir"
		;;
	77)
		reason=$(grep '^SKIP' "$dir/output.log" | head -n 1)
		echo "SKIP $name${reason:+: ${reason#SKIP: }}"
		skipped=$((skipped + 1))
		[ "${PROFWRAP_KEEP:-0}" = 1 ] || rm -rf "$dir"
		;;
	*)
		if [ $rc = 124 ] || [ $rc = 137 ]; then
			echo "FAIL $name (timed out after $limit s, exit $rc); its output:"
		else
			echo "FAIL $name (exit $rc, ${secs}s); its output:"
		fi
		sed 's/^/    /' "$dir/output.log"
		echo "    (files kept in $dir)"
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		;;
	esac
done
rmdir "$base" 2>/dev/null
[ $failed -gt 0 ] && echo "failed:$failed_names"
echo "($(($(date +%s) - start)) s)"
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
