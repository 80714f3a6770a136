#!/bin/sh
# profwrap benchmarks: per-call overhead against plain runs and other tracers, ring throughput, report time
# and memory on a 10-million-event trace, the cross-rank merge of 1,024 rank reports, start-up cost. Prints
# aligned plain-text tables and writes the same text to bench/results/latest.txt. Figures are reported, never judged: nothing here passes or fails on a
# timing; the exit status is non-zero only when the bench itself could not run.
#
# Run by `make bench`, which sets
#   PROFWRAP_BIN_DIR    directory with profwrap, profwrap-collector, libprofwrap.so
#   PROFWRAP_BENCH_BIN  directory with the programs built from bench/*.c
# Optional: BENCH_ROUNDS (default 3) rounds of plain / profwrap / passive readloop runs, interleaved so that
# a burst of other work on the machine does not fall on one of them only; the best round counts.
# BENCH_SKIP="uftrace ltrace strace hyperfine": treat those tools as not installed.
set -u

die() {
	echo "bench: $*" >&2
	exit 1
}

[ -n "${PROFWRAP_BIN_DIR:-}" ] || die "PROFWRAP_BIN_DIR is not set (run: make bench)"
[ -n "${PROFWRAP_BENCH_BIN:-}" ] || die "PROFWRAP_BENCH_BIN is not set (run: make bench)"
BIN=${PROFWRAP_BIN_DIR%/}
BB=${PROFWRAP_BENCH_BIN%/}
BW=${PROFWRAP_WORKLOADS:-$BB/../workloads}
HERE=$(cd "$(dirname "$0")" && pwd)
PROFWRAP=$BIN/profwrap
LIB=$BIN/libprofwrap.so
[ -e "$LIB" ] || die "missing $LIB (run: make all, then make bench)"
for f in "$PROFWRAP" "$BIN/profwrap-collector" "$BB/readloop" "$BB/metaloop" "$BB/stdioloop" "$BB/ring" "$BB/mktrace" \
	"$BB/timeit"; do
	[ -e "$f" ] || die "missing $f (run: make all, then make bench)"
	# A rebuild with a stale build/bench/*.d can leave a precompiled header under the program's name.
	[ -x "$f" ] || die "$f is not an executable program (remove build/bench and run make bench again)"
done
case $LIB in /*) ;; *) LIB=$(pwd)/$LIB ;; esac

ROUNDS=${BENCH_ROUNDS:-3}
READ_N=2000000 # calls per timed loop
READ_RUNS=5    # timed loops per process; the best counts
UFTRACE_N=400000
LTRACE_N=2000
STRACE_N=20000
OTHER_RUNS=3   # timed loops per process for uftrace, ltrace, strace
TRACE_EVENTS=10000000

RESULTS=$HERE/results
mkdir -p "$RESULTS" || die "cannot create $RESULTS"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/profwrap-bench.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
REPORT=$TMP/latest.txt
: >"$REPORT"

# out LINE...: prints and keeps for results/latest.txt.
out() {
	printf '%s\n' "$*" | tee -a "$REPORT"
}
# outf FORMAT ARGS...: printf, kept likewise.
outf() {
	# shellcheck disable=SC2059
	printf "$@" | tee -a "$REPORT"
}
have() {
	case " ${BENCH_SKIP:-} " in *" $1 "*) return 1 ;; esac
	command -v "$1" >/dev/null 2>&1
}
# kv FILE KEY: the value of KEY=VALUE on the last line of FILE that has it.
kv() {
	sed -n "s/.*[[:space:]]$2=\([^[:space:]]*\).*/\1/p" "$1" | tail -n 1
}
# jnum FILE KEY: the first number after "KEY": in a JSON file.
jnum() {
	grep -o "\"$2\":[0-9]*" "$1" | head -n 1 | cut -d: -f2
}
# calc EXPR: floating-point arithmetic with awk.
calc() {
	awk "BEGIN { printf \"%s\", $1 }"
}
fmt() { # fmt PRINTF-FORMAT NUMBER
	awk -v v="$2" "BEGIN { printf \"$1\", v }"
}
rule() {
	out "--------------------------------------------------------------------------------------------------------------"
}
section() {
	out ""
	out "== $* =="
}

# ---------------------------------------------------------------------------------------------------------
# Header: what ran where.

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
[ -n "$cpu_model" ] || cpu_model=$(uname -m)
commit=$(cd "$HERE/.." && git rev-parse --short HEAD 2>/dev/null) || commit=unknown
if [ "$commit" != unknown ] && ! (cd "$HERE/.." && git diff --quiet HEAD -- . ':!bench/results' 2>/dev/null); then
	commit="$commit (with uncommitted changes)"
fi
clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)
ring_default=$("$PROFWRAP" --help 2>/dev/null | sed -n 's/.*(default \([0-9][0-9]*[KMG]\)).*/\1/p' | head -n 1)
[ -n "$ring_default" ] || ring_default=unknown

out "profwrap benchmarks"
out "date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
out "commit:   $commit"
out "machine:  $(nproc) CPUs, $cpu_model, $(uname -sr) $(uname -m), clocksource $clocksource"
out "load:     $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) (1/5/15-min load average at start; other work on the machine skews timings)"
out "profwrap: $("$PROFWRAP" --version 2>/dev/null), per-thread ring default $ring_default"
if awk -v l="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)" -v n="$(nproc)" 'BEGIN { exit !(l + 0 > n / 2) }'; then
	out "note:     the machine is busy with other work: wall-clock figures are inflated and vary from run to run;"
	out "          the CPU-time columns are steadier"
fi
bench_start=$(date +%s)

# ---------------------------------------------------------------------------------------------------------
# 1. Per-call overhead: read(fd, buf, 1) on /dev/zero.

section "1. Per-call overhead: read(fd, buf, 1) on /dev/zero (best of $READ_RUNS timed loops per process)"

# track NAME FILE [EXTRA...]: appends "cpu wall EXTRA..." from a readloop output to NAME.vals. Returns 1 if
# FILE has no result.
track() {
	c=$(kv "$2" cpu_ns_per_call)
	w=$(kv "$2" ns_per_call)
	[ -n "$c" ] && [ -n "$w" ] || return 1
	name=$1
	shift 2
	echo "$c $w $*" >>"$TMP/$name.vals"
}
# pick NAME: the line of NAME.vals with the least cpu time; worst NAME: the greatest cpu time.
pick() {
	[ -s "$TMP/$1.vals" ] && sort -g -k1,1 "$TMP/$1.vals" | head -n 1
}
worst() {
	sort -g -k1,1 "$TMP/$1.vals" | tail -n 1 | cut -d' ' -f1
}
diff1() { # diff1 A B: A - B to one decimal
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'
}

rec_dir=""
i=1
while [ "$i" -le "$ROUNDS" ]; do
	"$BB/readloop" "$READ_N" "$READ_RUNS" >"$TMP/plain.$i" 2>&1
	track plain "$TMP/plain.$i" || die "readloop failed: $(cat "$TMP/plain.$i")"

	[ -n "$rec_dir" ] && rm -rf "$rec_dir"
	rec_dir=$TMP/recorded.$i
	"$PROFWRAP" -q -o "$rec_dir" -- "$BB/readloop" "$READ_N" "$READ_RUNS" >"$TMP/rec.$i" 2>&1
	track rec "$TMP/rec.$i" "$(jnum "$rec_dir/rank0.json" events)" "$(jnum "$rec_dir/rank0.json" dropped_events)" ||
		out "profwrap round $i failed: $(tail -n 3 "$TMP/rec.$i")"

	env LD_PRELOAD="$LIB" PROFWRAP_SESSION_DIR="$TMP/no-such-session" PROFWRAP_QUIET=1 \
		"$BB/readloop" "$READ_N" "$READ_RUNS" >"$TMP/pas.$i" 2>&1
	track pas "$TMP/pas.$i" || out "passive round $i failed: $(tail -n 3 "$TMP/pas.$i")"

	rm -rf "$TMP/outside.$i.d"
	"$PROFWRAP" -q -o "$TMP/outside.$i.d" --capture-range=manual -- "$BB/readloop" "$READ_N" "$READ_RUNS" \
		>"$TMP/out.$i" 2>&1
	track outw "$TMP/out.$i" || out "outside-window round $i failed: $(tail -n 3 "$TMP/out.$i")"

	# The collector SIGKILLed as soon as it is there: the rings fill, then every record is a counted drop.
	rm -rf "$TMP/killed.$i.d"
	"$PROFWRAP" -q -o "$TMP/killed.$i.d" -- "$BB/readloop" "$READ_N" "$READ_RUNS" >"$TMP/kil.$i" 2>&1 &
	pw=$!
	k=0
	while [ "$k" -lt 500 ] && ! pkill -KILL -P "$pw" -x profwrap-collec 2>/dev/null; do
		sleep 0.01
		k=$((k + 1))
	done
	wait "$pw"
	track kil "$TMP/kil.$i" || out "collector-killed round $i failed: $(tail -n 3 "$TMP/kil.$i")"
	i=$((i + 1))
done
# shellcheck disable=SC2046 # word splitting wanted
set -- $(pick plain)
plain_cpu=$1 plain_wall=$2

row_fmt='%-30s %10s %5s %9s %8s %9s %8s  %s\n'
rule
outf "$row_fmt" "tool" "calls/loop" "loops" "cpu ns" "added" "wall ns" "added" "notes"
rule
outf "$row_fmt" "plain" "$READ_N" "$READ_RUNS" "$(fmt %.1f "$plain_cpu")" "-" "$(fmt %.1f "$plain_wall")" "-" \
	"best of $ROUNDS processes (worst cpu $(fmt %.1f "$(worst plain)"))"
have_rec=""
if [ -s "$TMP/rec.vals" ]; then
	have_rec=1
	# shellcheck disable=SC2046
	set -- $(pick rec)
	outf "$row_fmt" "profwrap -q -o DIR (recording)" "$READ_N" "$READ_RUNS" \
		"$(fmt %.1f "$1")" "$(diff1 "$1" "$plain_cpu")" "$(fmt %.1f "$2")" "$(diff1 "$2" "$plain_wall")" \
		"best of $ROUNDS (worst cpu $(fmt %.1f "$(worst rec)")); ${3:-?} recorded, ${4:-?} dropped"
fi
if [ -s "$TMP/pas.vals" ]; then
	# shellcheck disable=SC2046
	set -- $(pick pas)
	outf "$row_fmt" "libprofwrap.so, passive" "$READ_N" "$READ_RUNS" \
		"$(fmt %.1f "$1")" "$(diff1 "$1" "$plain_cpu")" "$(fmt %.1f "$2")" "$(diff1 "$2" "$plain_wall")" \
		"best of $ROUNDS; session dir absent: wrappers call straight through"
fi
if [ -s "$TMP/outw.vals" ]; then
	# shellcheck disable=SC2046
	set -- $(pick outw)
	outf "$row_fmt" "profwrap, outside the window" "$READ_N" "$READ_RUNS" \
		"$(fmt %.1f "$1")" "$(diff1 "$1" "$plain_cpu")" "$(fmt %.1f "$2")" "$(diff1 "$2" "$plain_wall")" \
		"best of $ROUNDS; --capture-range=manual, never started: the window's load and branch"
fi

if [ -s "$TMP/kil.vals" ]; then
	# shellcheck disable=SC2046
	set -- $(pick kil)
	outf "$row_fmt" "profwrap, collector killed" "$READ_N" "$READ_RUNS" \
		"$(fmt %.1f "$1")" "$(diff1 "$1" "$plain_cpu")" "$(fmt %.1f "$2")" "$(diff1 "$2" "$plain_wall")" \
		"best of $ROUNDS; SIGKILLed at start: rings full, each call a counted drop; salvaged after"
fi

# other_row LABEL N OUTFILE NOTES: a row for another tool from readloop's output, or a line saying it failed.
other_row() {
	c=$(kv "$3" cpu_ns_per_call)
	w=$(kv "$3" ns_per_call)
	if [ -n "$c" ] && [ -n "$w" ]; then
		outf "$row_fmt" "$1" "$2" "$OTHER_RUNS" "$(fmt %.1f "$c")" "$(diff1 "$c" "$plain_cpu")" \
			"$(fmt %.1f "$w")" "$(diff1 "$w" "$plain_wall")" "$4"
	else
		outf "$row_fmt" "$1" "$2" "$OTHER_RUNS" "-" "-" "-" "-" "failed: $(tail -n 1 "$3")"
	fi
}

# uftrace: PLT hooks of a -pg build (libcall tracing is on by default).
pg=""
if have uftrace; then
	pg=$TMP/readloop-pg
	how="-pg build, PLT hooks"
	if ! ${CC:-cc} -O2 -pg -o "$pg" "$HERE/readloop.c" >"$TMP/pg.log" 2>&1; then
		pg=$BB/readloop
		how="--force on the plain build (no -pg compiler)"
	fi
	set -- record -d "$TMP/uftrace.data"
	[ "$pg" = "$BB/readloop" ] && set -- "$@" --force
	uftrace "$@" "$pg" "$UFTRACE_N" "$OTHER_RUNS" >"$TMP/uft.out" 2>&1
	other_row "uftrace record" "$UFTRACE_N" "$TMP/uft.out" \
		"uftrace $(uftrace --version 2>/dev/null | awk '{ print $2; exit }'), $how"
	rm -rf "$TMP/uftrace.data"
else
	outf "$row_fmt" "uftrace" "-" "-" "-" "-" "-" "-" "not installed, skipped"
fi
if have ltrace; then
	ltrace -e read -o /dev/null "$BB/readloop" "$LTRACE_N" "$OTHER_RUNS" >"$TMP/ltrace.out" 2>&1
	other_row "ltrace -e read -o /dev/null" "$LTRACE_N" "$TMP/ltrace.out" \
		"$(ltrace -V 2>/dev/null | head -n 1 | sed 's/\.$//'); fewer calls: it is slow"
else
	outf "$row_fmt" "ltrace" "-" "-" "-" "-" "-" "-" "not installed, skipped"
fi
if have strace; then
	strace -e trace=read -o /dev/null -qq "$BB/readloop" "$STRACE_N" "$OTHER_RUNS" >"$TMP/strace.out" 2>&1
	other_row "strace -e trace=read -qq" "$STRACE_N" "$TMP/strace.out" \
		"$(strace -V 2>/dev/null | head -n 1 | sed 's/ -- version//'); fewer calls: it is slow"
else
	outf "$row_fmt" "strace" "-" "-" "-" "-" "-" "-" "not installed, skipped"
fi
rule
out "cpu ns = the calling thread's CPU time per call (CLOCK_THREAD_CPUTIME_ID: leaves out time spent waiting for a"
out "CPU, so other work on the machine disturbs it least); wall ns = CLOCK_MONOTONIC per call; added = minus plain."
out "A ptrace tracer (ltrace, strace) works while the traced thread is stopped: its cost shows in wall ns only."
out "Goal for profwrap recording: under 30 ns added per call. A record that finds its lane full is dropped and"
out "counted, which costs less than recording it: see 'dropped'."

# ---------------------------------------------------------------------------------------------------------
# 1b. Per-launch overhead: cudaLaunchKernel against the fake CUDA runtime of tests/fakes.

LAUNCH_N=1000000
FAKES_DIR=$BB/../fakes
NO_GPU_DOMAINS=io,stdio,process,dl,wait,cudart,cublas,cublaslt,cudnn,nccl
# launch_rows API: the rows of one launch entry point (cudaLaunchKernel, or __cudaLaunchKernel as nvcc's host
# stubs call it), each measured in ROUNDS processes of their own.
launch_rows() {
	api=$1
	i=1
	while [ "$i" -le "$ROUNDS" ]; do
		env $launch_env "$BB/launchloop" "$LAUNCH_N" 5 "$api" >"$TMP/lplain.$i" 2>&1
		track "lplain$api" "$TMP/lplain.$i" || die "launchloop failed: $(cat "$TMP/lplain.$i")"
		[ -n "$rec_dir" ] && rm -rf "$rec_dir"
		rec_dir=$TMP/launch-recorded.$i
		# every domain but gpu: the wrapper alone, CUPTI not loaded
		env $launch_env "$PROFWRAP" -q -o "$rec_dir" --trace "$NO_GPU_DOMAINS" -- "$BB/launchloop" "$LAUNCH_N" 5 \
			"$api" >"$TMP/lrec.$i" 2>&1
		track "lrec$api" "$TMP/lrec.$i" "$(jnum "$rec_dir/rank0.json" events)" \
			"$(jnum "$rec_dir/rank0.json" dropped_events)" ||
			out "profwrap round $i failed: $(tail -n 3 "$TMP/lrec.$i")"
		rm -rf "$rec_dir"
		if [ -e "$FAKES_DIR/libcupti.so.13" ]; then
			env $launch_env "$PROFWRAP" -q -o "$rec_dir" -- "$BB/launchloop" "$LAUNCH_N" 5 "$api" \
				>"$TMP/lcupti.$i" 2>&1
			track "lcupti$api" "$TMP/lcupti.$i" "$(jnum "$rec_dir/rank0.json" events)" \
				"$(jnum "$rec_dir/rank0.json" dropped_events)" ||
				out "profwrap+CUPTI round $i failed: $(tail -n 3 "$TMP/lcupti.$i")"
		fi
		env $launch_env LD_PRELOAD="$LIB" PROFWRAP_SESSION_DIR="$TMP/no-such-session" PROFWRAP_QUIET=1 \
			"$BB/launchloop" "$LAUNCH_N" 5 "$api" >"$TMP/lpas.$i" 2>&1
		track "lpas$api" "$TMP/lpas.$i" || out "passive round $i failed: $(tail -n 3 "$TMP/lpas.$i")"
		i=$((i + 1))
	done
	rm -rf "$rec_dir"
	rec_dir=""
	# shellcheck disable=SC2046
	set -- $(pick "lplain$api")
	lplain_cpu=$1 lplain_wall=$2
	outf "$row_fmt" "$api, plain" "$LAUNCH_N" 5 "$(fmt %.1f "$lplain_cpu")" "-" \
		"$(fmt %.1f "$lplain_wall")" "-" "best of $ROUNDS processes"
	if [ -s "$TMP/lrec$api.vals" ]; then
		# shellcheck disable=SC2046
		set -- $(pick "lrec$api")
		outf "$row_fmt" "  profwrap, recording" "$LAUNCH_N" 5 "$(fmt %.1f "$1")" \
			"$(diff1 "$1" "$lplain_cpu")" "$(fmt %.1f "$2")" "$(diff1 "$2" "$lplain_wall")" \
			"best of $ROUNDS; ${3:-?} recorded, ${4:-?} dropped"
	fi
	if [ -s "$TMP/lcupti$api.vals" ]; then
		# shellcheck disable=SC2046
		set -- $(pick "lcupti$api")
		outf "$row_fmt" "  profwrap + fake CUPTI" "$LAUNCH_N" 5 "$(fmt %.1f "$1")" \
			"$(diff1 "$1" "$lplain_cpu")" "$(fmt %.1f "$2")" "$(diff1 "$2" "$lplain_wall")" \
			"best of $ROUNDS; ${3:-?} recorded, ${4:-?} dropped"
	fi
	if [ -s "$TMP/lpas$api.vals" ]; then
		# shellcheck disable=SC2046
		set -- $(pick "lpas$api")
		outf "$row_fmt" "  libprofwrap.so, passive" "$LAUNCH_N" 5 "$(fmt %.1f "$1")" \
			"$(diff1 "$1" "$lplain_cpu")" "$(fmt %.1f "$2")" "$(diff1 "$2" "$lplain_wall")" "best of $ROUNDS"
	fi
}

if [ -x "$BB/launchloop" ]; then
	section "1b. Per-launch overhead: cudaLaunchKernel and nvcc's __cudaLaunchKernel on the fake CUDA runtime (best of 5 timed loops per process)"
	# The fake's kernels take 1 ns each, so the stream never holds the loop back.
	launch_env="FAKEGPU_NS_PER_BLOCK=1"
	rule
	outf "$row_fmt" "tool" "calls/loop" "loops" "cpu ns" "added" "wall ns" "added" "notes"
	rule
	launch_rows cudaLaunchKernel
	launch_rows __cudaLaunchKernel
	out "Goal for profwrap recording: under 60 ns added per launch (kernel name from a per-function cache,"
	out "a 104-byte record), for both entry points. With the default 2 MiB lane, records beyond what the collector"
	out "drains are dropped. The recording rows leave the gpu domain out (--trace), so CUPTI is not loaded. The CUPTI"
	out "rows add the push/pop of an external correlation id per launch and the fake CUPTI's own work (an"
	out "API, a kernel and a correlation record per launch, made on the launching thread as real CUPTI does in its"
	out "callbacks). __cudaLaunchKernel launches the handle __cudaGetKernel gave for a registered kernel, as nvcc's"
	out "host stubs do; its name comes from the registration."
else
	out ""
	out "1b. Per-launch overhead: not measured (no CUDA headers: the fake CUDA runtime was not built)"
fi

# ---------------------------------------------------------------------------------------------------------
# 1c. Call stacks: what a captured stack costs, and what calls below the threshold pay.

STACK_DEPTH=30
STACK_N=200000
section "1c. Call stacks: read(fd, buf, 1) at $STACK_DEPTH frames deep (best of 5 timed loops per process)"
i=1
while [ "$i" -le "$ROUNDS" ]; do
	"$BB/readloop" "$STACK_N" 5 "$STACK_DEPTH" >"$TMP/splain.$i" 2>&1
	track splain "$TMP/splain.$i" || die "readloop at depth failed: $(cat "$TMP/splain.$i")"
	for mode in off default all; do
		case $mode in
		off) set -- --stacks=off ;;
		default) set -- ;;
		all) set -- --stack-threshold=0 ;;
		esac
		rm -rf "$TMP/stack.$mode.d"
		"$PROFWRAP" -q -o "$TMP/stack.$mode.d" "$@" -- "$BB/readloop" "$STACK_N" 5 "$STACK_DEPTH" \
			>"$TMP/s$mode.$i" 2>&1
		track "s$mode" "$TMP/s$mode.$i" "$(jnum "$TMP/stack.$mode.d/rank0.json" dropped_events)" ||
			out "readloop at depth, $mode, round $i failed: $(tail -n 3 "$TMP/s$mode.$i")"
	done
	i=$((i + 1))
done
# shellcheck disable=SC2046
set -- $(pick splain)
splain_cpu=$1 splain_wall=$2
rule
outf "$row_fmt" "tool" "calls/loop" "loops" "cpu ns" "added" "wall ns" "added" "notes"
rule
outf "$row_fmt" "plain" "$STACK_N" 5 "$(fmt %.1f "$splain_cpu")" "-" "$(fmt %.1f "$splain_wall")" "-" \
	"best of $ROUNDS processes"
soff_cpu=""
for mode in off default all; do
	[ -s "$TMP/s$mode.vals" ] || continue
	# shellcheck disable=SC2046
	set -- $(pick "s$mode")
	case $mode in
	off) label="profwrap --stacks=off" note="recording, no stacks" soff_cpu=$1 ;;
	default) label="profwrap (stacks, threshold 100us)" note="every call below the threshold: no stack" ;;
	all) label="profwrap --stack-threshold=0" note="a stack for every call" ;;
	esac
	[ "$mode" = all ] && [ -n "$soff_cpu" ] &&
		note="$note: $(diff1 "$1" "$soff_cpu") ns per stack of $((STACK_DEPTH + 5)) frames over --stacks=off"
	outf "$row_fmt" "$label" "$STACK_N" 5 "$(fmt %.1f "$1")" "$(diff1 "$1" "$splain_cpu")" "$(fmt %.1f "$2")" \
		"$(diff1 "$2" "$splain_wall")" "best of $ROUNDS; ${3:-?} dropped; $note"
done
rule
out "A stack: libunwind's fast trace of the native frames (the recursion, the loop, main, libc's start), its hash, and a"
out "look-up in the process's table of stacks (stored once). Goal: under 2 us for a 30-frame stack; calls"
out "below --stack-threshold pay one compare (the 'stacks, threshold' row against --stacks=off)."
rm -rf "$TMP/stack.off.d" "$TMP/stack.default.d" "$TMP/stack.all.d"

# ---------------------------------------------------------------------------------------------------------
# 1d. Python frames: what the profile hook costs a Python call.

PY_N=1000000
if command -v python3 >/dev/null 2>&1; then
	section "1d. Python function calls, after a call made without the GIL (best of 5 timed loops per process)"
	i=1
	while [ "$i" -le "$ROUNDS" ]; do
		python3 "$HERE/pycalls.py" "$PY_N" 5 >"$TMP/pyplain.$i" 2>&1
		track pyplain "$TMP/pyplain.$i" || out "python3 pycalls failed: $(tail -n 3 "$TMP/pyplain.$i")"
		for mode in native on; do
			rm -rf "$TMP/py.$mode.d"
			"$PROFWRAP" -q -o "$TMP/py.$mode.d" --stacks=$mode -- python3 "$HERE/pycalls.py" "$PY_N" 5 \
				>"$TMP/py$mode.$i" 2>&1
			track "py$mode" "$TMP/py$mode.$i" || out "pycalls $mode round $i failed: $(tail -n 3 "$TMP/py$mode.$i")"
		done
		i=$((i + 1))
	done
	if [ -s "$TMP/pyplain.vals" ]; then
		# shellcheck disable=SC2046
		set -- $(pick pyplain)
		pyplain_cpu=$1 pyplain_wall=$2
		rule
		outf "$row_fmt" "tool" "calls/loop" "loops" "cpu ns" "added" "wall ns" "added" "notes"
		rule
		outf "$row_fmt" "python3" "$PY_N" 5 "$(fmt %.1f "$pyplain_cpu")" "-" "$(fmt %.1f "$pyplain_wall")" "-" \
			"best of $ROUNDS processes"
		for mode in native on; do
			[ -s "$TMP/py$mode.vals" ] || continue
			# shellcheck disable=SC2046
			set -- $(pick "py$mode")
			case $mode in
			native) note="no Python frames: no hook" ;;
			on) note="Python frames for calls made without the GIL ($(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])'): $([ "$(python3 -c 'import sys; print(int((3, 9) <= sys.version_info[:2] <= (3, 13)))')" = 1 ] && echo read directly || echo the profile hook))" ;;
			esac
			outf "$row_fmt" "profwrap --stacks=$mode" "$PY_N" 5 "$(fmt %.1f "$1")" "$(diff1 "$1" "$pyplain_cpu")" \
				"$(fmt %.1f "$2")" "$(diff1 "$2" "$pyplain_wall")" "best of $ROUNDS; $note"
		done
		rule
		out "A call of an empty Python function. With --stacks=on, CPython 3.9 to 3.13 have the frames of calls made"
		out "without the GIL read from the interpreter's structures, which costs other calls nothing; --sample"
		out "gets them from a profile hook that the interpreter calls at every call and return (CPython's tracing path:"
		out "some 80 ns a call); --stacks=native never needs either."
	fi
	rm -rf "$TMP/py.native.d" "$TMP/py.on.d"
fi

# ---------------------------------------------------------------------------------------------------------
# 1d2. --python-functions: what a function not named costs a Python call, per CPython version found.

PYFN_VERSIONS=""
for v in 3.9 3.10 3.11 3.12 3.13; do
	"python$v" -c pass >/dev/null 2>&1 && PYFN_VERSIONS="$PYFN_VERSIONS $v"
done
if [ -n "$PYFN_VERSIONS" ]; then
	section "1d2. Python function calls with --python-functions, the function not named (best of 5 timed loops per process)"
	rule
	outf "$row_fmt" "python" "calls/loop" "loops" "cpu ns" "added" "wall ns" "added" "notes"
	rule
	for v in $PYFN_VERSIONS; do
		i=1
		while [ "$i" -le "$ROUNDS" ]; do
			"python$v" "$HERE/pycalls.py" "$PY_N" 5 >"$TMP/fnplain.$i" 2>&1
			track "fnplain$v" "$TMP/fnplain.$i" || out "python$v pycalls failed: $(tail -n 3 "$TMP/fnplain.$i")"
			rm -rf "$TMP/fn.d"
			"$PROFWRAP" -q -o "$TMP/fn.d" --stacks=native --python-functions=bench_nowhere:not_named -- \
				"python$v" "$HERE/pycalls.py" "$PY_N" 5 >"$TMP/fn.$i" 2>&1
			track "fn$v" "$TMP/fn.$i" || out "python$v pycalls under --python-functions failed: $(tail -n 3 "$TMP/fn.$i")"
			i=$((i + 1))
		done
		[ -s "$TMP/fnplain$v.vals" ] && [ -s "$TMP/fn$v.vals" ] || continue
		# shellcheck disable=SC2046
		set -- $(pick "fnplain$v") $(pick "fn$v")
		case $v in 3.9 | 3.10 | 3.11) how="the frame evaluation function" ;; *) how="sys.monitoring" ;; esac
		outf "$row_fmt" "python$v" "$PY_N" 5 "$(fmt %.1f "$1")" "-" "$(fmt %.1f "$2")" "-" "best of $ROUNDS processes"
		outf "$row_fmt" "  --python-functions" "$PY_N" 5 "$(fmt %.1f "$3")" "$(diff1 "$3" "$1")" "$(fmt %.1f "$4")" \
			"$(diff1 "$4" "$2")" "best of $ROUNDS; $how"
	done
	rule
	out "A call of an empty Python function that no pattern names. 3.12+: sys.monitoring disables the callback for"
	out "the function after its first call. 3.9 to 3.11: profwrap's frame evaluation function (PEP 523) looks the"
	out "code up in a table; on 3.11 CPython then no longer inlines Python-to-Python calls."
	rm -rf "$TMP/fn.d"
fi

# ---------------------------------------------------------------------------------------------------------
# 1e. Metadata calls and uncontended mutex locks.

META_N=200000
section "1e. Metadata and mutex calls: stat, fstat of /dev/null; an uncontended pthread_mutex_lock (best of 15 timed loops per process)"
rule
outf "$row_fmt" "call" "calls/loop" "loops" "cpu ns" "added" "wall ns" "added" "notes"
rule
for call in stat fstat mutex; do
	# the domain whose calls these are, left out of --trace for the row without it
	case $call in mutex) without=io,stdio,process,meta ;; *) without=io,stdio,process,wait ;; esac
	i=1
	while [ "$i" -le "$ROUNDS" ]; do
		"$BB/metaloop" "$call" "$META_N" 15 >"$TMP/mplain.$i" 2>&1
		track "mplain$call" "$TMP/mplain.$i" || out "metaloop $call failed: $(tail -n 3 "$TMP/mplain.$i")"
		rm -rf "$TMP/meta.d" "$TMP/metaoff.d"
		"$PROFWRAP" -q -o "$TMP/meta.d" -- "$BB/metaloop" "$call" "$META_N" 15 >"$TMP/mrec.$i" 2>&1
		track "mrec$call" "$TMP/mrec.$i" || out "metaloop $call under profwrap failed: $(tail -n 3 "$TMP/mrec.$i")"
		"$PROFWRAP" -q -o "$TMP/metaoff.d" --trace=$without -- "$BB/metaloop" "$call" "$META_N" 15 >"$TMP/moff.$i" 2>&1
		track "moff$call" "$TMP/moff.$i" || out "metaloop $call, domain off, failed: $(tail -n 3 "$TMP/moff.$i")"
		i=$((i + 1))
	done
	[ -s "$TMP/mplain$call.vals" ] || continue
	# shellcheck disable=SC2046
	set -- $(pick "mplain$call")
	mplain_cpu=$1 mplain_wall=$2
	outf "$row_fmt" "$call, plain" "$META_N" 15 "$(fmt %.1f "$mplain_cpu")" "-" "$(fmt %.1f "$mplain_wall")" "-" \
		"best of $ROUNDS processes"
	for mode in rec off; do
		[ -s "$TMP/m$mode$call.vals" ] || continue
		case $mode$call in
		recmutex) note="trylock first: never recorded, never waits" ;;
		recstat) note="recorded (meta domain), its path interned once" ;;
		rec*) note="recorded (meta domain)" ;;
		off*) note="--trace=$without: the domain's bit only" ;;
		esac
		# shellcheck disable=SC2046
		set -- $(pick "m$mode$call")
		outf "$row_fmt" "$call, profwrap $([ $mode = rec ] && echo recording || echo domain off)" "$META_N" 15 \
			"$(fmt %.1f "$1")" "$(diff1 "$1" "$mplain_cpu")" "$(fmt %.1f "$2")" "$(diff1 "$2" "$mplain_wall")" \
			"best of $ROUNDS; $note"
	done
done
rule
out "A stat is recorded with its path, interned in the string arena once per distinct path. An uncontended"
out "pthread_mutex_lock is a pthread_mutex_trylock that succeeds (the same atomic operation): only a lock that"
out "finds the mutex held is timed and recorded."
rm -rf "$TMP/meta.d" "$TMP/metaoff.d"

# 1f. stdio's character calls: accounted at the stream's buffer, not one by one.

STDIO_N=400000
section "1f. stdio calls on a 4 KiB buffer (/dev/null, /dev/zero), $STDIO_N per loop (best of 5 timed loops per process)"
for call in putc fputc putc_unlocked getc fwrite; do
	i=1
	while [ "$i" -le "$ROUNDS" ]; do
		"$BB/stdioloop" "$call" "$STDIO_N" 5 >"$TMP/io.plain.$call.$i" 2>&1
		track "io_plain_$call" "$TMP/io.plain.$call.$i" || die "stdioloop $call failed: $(cat "$TMP/io.plain.$call.$i")"
		rm -rf "$TMP/stdio.d"
		"$PROFWRAP" -q -o "$TMP/stdio.d" --ring-size=256M -- "$BB/stdioloop" "$call" "$STDIO_N" 5 \
			>"$TMP/io.rec.$call.$i" 2>&1
		track "io_rec_$call" "$TMP/io.rec.$call.$i" "$(jnum "$TMP/stdio.d/rank0.json" dropped_events)" ||
			out "stdioloop $call under profwrap, round $i failed: $(tail -n 3 "$TMP/io.rec.$call.$i")"
		i=$((i + 1))
	done
done
rule
outf "$row_fmt" "call" "calls/loop" "loops" "cpu ns" "added" "wall ns" "added" "notes"
rule
for call in putc fputc putc_unlocked getc fwrite; do
	[ -s "$TMP/io_plain_$call.vals" ] && [ -s "$TMP/io_rec_$call.vals" ] || continue
	# shellcheck disable=SC2046
	set -- $(pick "io_plain_$call")
	p_cpu=$1 p_wall=$2
	# shellcheck disable=SC2046
	set -- $(pick "io_rec_$call")
	case $call in
	fwrite) note="recorded per call; the stream's marks follow it" ;;
	putc_unlocked) note="inline: libc is called only to flush" ;;
	*) note="a record per buffer flush or refill" ;;
	esac
	outf "$row_fmt" "$call under profwrap" "$STDIO_N" 5 "$(fmt %.1f "$1")" "$(diff1 "$1" "$p_cpu")" \
		"$(fmt %.1f "$2")" "$(diff1 "$2" "$p_wall")" "plain $(fmt %.1f "$p_cpu") cpu ns; ${3:-?} dropped; $note"
done
rule
out "A character call that finds room in the buffer costs the wrapper one compare; the bytes are read off the"
out "buffer when it is flushed or refilled."
rm -rf "$TMP/stdio.d"

# ---------------------------------------------------------------------------------------------------------
# 2. Ring throughput.

section "2. Ring lanes: records/s (goal: >= 20 M records/s for one thread; 0 drops when paced at 5 M/s)"
"$BB/ring" --lane-size 1M >"$TMP/ring.out" 2>&1 || out "ring failed"
tee -a "$REPORT" <"$TMP/ring.out"
if [ "$ring_default" != unknown ] && [ "$ring_default" != 1M ]; then
	out ""
	out "The same paced runs with the lanes profwrap now uses by default ($ring_default):"
	"$BB/ring" --lane-size "$ring_default" --paced-only >"$TMP/ring2.out" 2>&1 || out "ring failed"
	grep -e '^run ' -e 'paced' "$TMP/ring2.out" | tee -a "$REPORT"
fi

out ""
out "Many threads under profwrap at default settings (flood: THREADS threads released together, each WRITES"
out "write() calls to /dev/null flat out; --trace=io):"
mt_fmt='%-34s %10s %10s %10s %8s\n'
outf "$mt_fmt" "run" "writes" "recorded" "dropped" "wall s"
for spec in "16 10000" "100 10000"; do
	set -- $spec
	t0=$(date +%s.%N)
	"$PROFWRAP" -q -f -o "$TMP/flood-out" --trace=io -- "$BW/flood" "$1" "$2" >/dev/null 2>&1
	t1=$(date +%s.%N)
	rec=$(grep -o '"name":"write","count":[0-9]*' "$TMP/flood-out/rank0.json" | head -n 1 | sed 's/.*://')
	outf "$mt_fmt" "$1 threads x $2 writes" "$(($1 * $2))" "${rec:-?}" "$(jnum "$TMP/flood-out/rank0.json" dropped_events)" \
		"$(fmt %.2f "$(calc "$t1 - $t0")")"
done
out "Each thread has a lane of its own (128 by default), backed in 64 KiB steps as it fills; before, threads"
out "beyond 15 shared one lane under a try-lock."

# ---------------------------------------------------------------------------------------------------------
# 3. Reports from a 10-million-event trace.

section "3. Reports: profwrap report DIR on a $TRACE_EVENTS-event trace (goal: < 1.5 s, < 64 MB peak RSS, trace < 100 MB, rank0.html <= 5 MB)"
rep_fmt='%-33s %9s %7s %7s %8s %7s %7s %8s  %s\n'
rule
outf "$rep_fmt" "input" "events" "raw MB" "wall s" "median s" "RSS MB" "anon MB" "trace MB" "notes"
rule
# report_row LABEL DIR RUNS NOTES
report_row() {
	raw_mb=$(du -k "$2/raw" 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s / 1024 }')
	if "$BB/timeit" -n "$3" -q -m -- "$PROFWRAP" report "$2" >"$TMP/timeit.out" 2>&1 &&
		[ "$(kv "$TMP/timeit.out" status)" = 0 ]; then
		ev=$(jnum "$2/rank0.json" events)
		tr=$(du -k "$2/rank0.trace.json" | awk '{ printf "%.1f", $1 / 1024 }')
		html_kb=$(du -k "$2/rank0.html" | awk '{ print $1 }')
		outf "$rep_fmt" "$1" "${ev:-?}" "$raw_mb" "$(fmt %.2f "$(kv "$TMP/timeit.out" min_s)")" \
			"$(fmt %.2f "$(kv "$TMP/timeit.out" median_s)")" \
			"$(fmt %.0f "$(calc "$(kv "$TMP/timeit.out" maxrss_kb) / 1024")")" \
			"$(fmt %.1f "$(calc "$(kv "$TMP/timeit.out" maxanon_kb) / 1024")")" "$tr" "$4; rank0.html ${html_kb} KB"
	else
		outf "$rep_fmt" "$1" "-" "$raw_mb" "-" "-" "-" "-" "-" "failed: $(tail -n 1 "$TMP/timeit.out")"
	fi
}
if "$BB/mktrace" "$TMP/synthetic" "$TRACE_EVENTS" >"$TMP/mktrace.out" 2>&1; then
	report_row "synthetic: 4 threads, I/O mix" "$TMP/synthetic" 3 "bench/mktrace (+3 fd-info records); 3 runs"
else
	out "mktrace failed: $(tail -n 1 "$TMP/mktrace.out")"
fi
rm -rf "$TMP/synthetic"
if [ -n "$have_rec" ] && [ -d "$rec_dir/raw" ]; then
	report_row "recorded: readloop under profwrap" "$rec_dir" 3 "the last recording of section 1; 3 runs"
fi
rm -rf "$rec_dir"
if have uftrace; then
	# Comparison: uftrace report over a recording of 10M read calls (pg as in section 1).
	set -- record -d "$TMP/uftrace.data"
	[ "$pg" = "$BB/readloop" ] && set -- "$@" --force
	if uftrace "$@" "$pg" "$TRACE_EVENTS" 1 >"$TMP/uft10.out" 2>&1 &&
		"$BB/timeit" -n 1 -q -m -- uftrace report -d "$TMP/uftrace.data" >"$TMP/timeit.out" 2>&1 &&
		[ "$(kv "$TMP/timeit.out" status)" = 0 ]; then
		raw_mb=$(du -k "$TMP/uftrace.data" | awk '{ printf "%.0f", $1 / 1024 }')
		outf "$rep_fmt" "uftrace report, 10M read calls" "$TRACE_EVENTS" "$raw_mb" \
			"$(fmt %.2f "$(kv "$TMP/timeit.out" min_s)")" "-" \
			"$(fmt %.0f "$(calc "$(kv "$TMP/timeit.out" maxrss_kb) / 1024")")" \
			"$(fmt %.1f "$(calc "$(kv "$TMP/timeit.out" maxanon_kb) / 1024")")" "-" \
			"an entry and an exit record per call; a function table, no timeline; 1 run"
	else
		outf "$rep_fmt" "uftrace report" "-" "-" "-" "-" "-" "-" "-" "failed"
	fi
	rm -rf "$TMP/uftrace.data"
else
	outf "$rep_fmt" "uftrace report" "-" "-" "-" "-" "-" "-" "-" "uftrace not installed, not measured"
fi
rule
out "wall s = best run; RSS MB = peak resident set (ru_maxrss: counts the pages of the raw trace the reader has"
out "mapped); anon MB = peak RssAnon (heap and stacks; sampled every 2 ms); trace MB = rank0.trace.json."
out "The raw trace is in the page cache (it was just written)."

# ---------------------------------------------------------------------------------------------------------
# 3a. profwrap export sqlite on a fresh 10M-event synthetic trace.

section "3a. Export: profwrap export sqlite DIR on a $TRACE_EVENTS-event trace (goal: <= 10 s, database <= 2x raw)"
exp_fmt='%-33s %9s %7s %7s %7s %8s %6s  %s\n'
rule
outf "$exp_fmt" "input" "events" "raw MB" "wall s" "RSS MB" "db MB" "db/raw" "notes"
rule
if "$BB/mktrace" "$TMP/synthetic" "$TRACE_EVENTS" >"$TMP/mktrace.out" 2>&1 &&
	"$BB/timeit" -n 1 -q -m -- "$PROFWRAP" export sqlite "$TMP/synthetic" >"$TMP/timeit.out" 2>&1 &&
	[ "$(kv "$TMP/timeit.out" status)" = 0 ]; then
	raw_kb=$(du -k "$TMP/synthetic/raw" | awk '{ s += $1 } END { print s }')
	db_kb=$(du -k "$TMP/synthetic/rank0.sqlite" | awk '{ print $1 }')
	outf "$exp_fmt" "synthetic: 4 threads, I/O mix" "$TRACE_EVENTS" "$(fmt %.0f "$(calc "$raw_kb / 1024")")" \
		"$(fmt %.2f "$(kv "$TMP/timeit.out" min_s)")" \
		"$(fmt %.0f "$(calc "$(kv "$TMP/timeit.out" maxrss_kb) / 1024")")" \
		"$(fmt %.0f "$(calc "$db_kb / 1024")")" "$(fmt %.2f "$(calc "$db_kb / $raw_kb")")" \
		"bench/mktrace; 1 run; every call a row of PROFWRAP_CALLS"
else
	outf "$exp_fmt" "synthetic: 4 threads, I/O mix" "-" "-" "-" "-" "-" "-" "failed: $(tail -n 1 "$TMP/timeit.out")"
fi
rm -rf "$TMP/synthetic"
rule
out "The export keeps every event in memory before writing (RSS grows with the events, unlike the reports')."

# ---------------------------------------------------------------------------------------------------------
# 3b. Cross-rank summary: profwrap merge over a synthetic job's rank reports (bench/mkranks.py).

MERGE_RANKS=1024
section "3b. Cross-rank summary: profwrap merge DIR on $MERGE_RANKS rank reports (goal: < 30 s)"
merge_fmt='%-33s %6s %8s %7s %8s %7s %7s  %s\n'
rule
outf "$merge_fmt" "input" "ranks" "input MB" "wall s" "median s" "RSS MB" "anon MB" "notes"
rule
if command -v python3 >/dev/null 2>&1 &&
	python3 "$HERE/mkranks.py" "$TMP/ranks" "$MERGE_RANKS" 1000 256 >"$TMP/mkranks.out" 2>&1; then
	in_mb=$(du -k "$TMP/ranks" | awk '{ printf "%.0f", $1 / 1024 }')
	if "$BB/timeit" -n 3 -q -m -- "$PROFWRAP" merge "$TMP/ranks" >"$TMP/timeit.out" 2>&1 &&
		[ "$(kv "$TMP/timeit.out" status)" = 0 ]; then
		outf "$merge_fmt" "merge 1,024 ranks" "$MERGE_RANKS" "$in_mb" "$(fmt %.2f "$(kv "$TMP/timeit.out" min_s)")" \
			"$(fmt %.2f "$(kv "$TMP/timeit.out" median_s)")" \
			"$(fmt %.1f "$(calc "$(kv "$TMP/timeit.out" maxrss_kb) / 1024")")" \
			"$(fmt %.1f "$(calc "$(kv "$TMP/timeit.out" maxanon_kb) / 1024")")" \
			"1,000 mpi collectives, 8 phases, 256 kB of other keys per rank; 3 runs"
	else
		outf "$merge_fmt" "merge 1,024 ranks" "$MERGE_RANKS" "$in_mb" "-" "-" "-" "-" \
			"failed: $(tail -n 1 "$TMP/timeit.out")"
	fi
else
	outf "$merge_fmt" "merge 1,024 ranks" "-" "-" "-" "-" "-" "-" \
		"not measured: no python3, or bench/mkranks.py failed: $(tail -n 1 "$TMP/mkranks.out" 2>/dev/null)"
fi
rm -rf "$TMP/ranks"
rule
out "Synthetic rank<R>.json files from bench/mkranks.py, in the page cache (just written); merge reads each one"
out "up to the end of its summary object, and the straggler's phases in a second pass."

# ---------------------------------------------------------------------------------------------------------
# 4. Start-up.

section "4. Start-up: a process that does nothing (goal: profwrap adds < 10 ms)"
nosess=$TMP/no-such-session
st_out=$TMP/startup-out
TRUE=$(command -v true)
[ -x "$TRUE" ] || TRUE=/bin/true
st_fmt='%-55s %5s %8s %9s %7s %8s %8s %7s\n'
rule
outf "$st_fmt" "command" "runs" "mean ms" "median ms" "min ms" "added ms" "cpu ms" "added"
rule
# Commands run without a shell. 'env' starts both sides of the preload comparison, so it cancels out.
if have hyperfine; then
	hyperfine -N --warmup 3 --min-runs 20 --style none --export-json "$TMP/startup.json" \
		-n "true" "$TRUE" \
		-n "profwrap -q -f -o DIR -- true" "$PROFWRAP -q -f -o $st_out -- $TRUE" \
		-n "env true" "env $TRUE" \
		-n "env LD_PRELOAD=libprofwrap.so true (no session vars)" "env LD_PRELOAD=$LIB $TRUE" \
		-n "env LD_PRELOAD=... PROFWRAP_SESSION_DIR=absent true" \
		"env LD_PRELOAD=$LIB PROFWRAP_SESSION_DIR=$nosess PROFWRAP_QUIET=1 $TRUE" \
		>"$TMP/hyperfine.out" 2>&1 || out "hyperfine failed: $(tail -n 2 "$TMP/hyperfine.out")"
	# hyperfine's JSON, one key per line: "command", "mean", "median", "min" (seconds), then the "times" list.
	if [ -s "$TMP/startup.json" ]; then
		awk -v fmt="$st_fmt" '
			function num(line) { sub(/^[^:]*:[ ]*/, "", line); sub(/,$/, "", line); return line + 0 }
			function flush() {
				if (name == "") return
				k++
				cpu = user + sys
				if (k == 1 || k == 3) { base = med; cbase = cpu }
				added = (k == 1 || k == 3) ? "-" : sprintf("%.2f", (med - base) * 1000)
				cadded = (k == 1 || k == 3) ? "-" : sprintf("%.2f", (cpu - cbase) * 1000)
				printf fmt, name, runs, sprintf("%.2f", mean * 1000), sprintf("%.2f", med * 1000), \
					sprintf("%.2f", mn * 1000), added, sprintf("%.2f", cpu * 1000), cadded
				name = ""
			}
			/"command":/ { flush(); name = $0; sub(/^[^:]*:[ ]*"/, "", name); sub(/",?$/, "", name); runs = 0 }
			/"mean":/ { mean = num($0) }
			/"median":/ { med = num($0) }
			/"min":/ { mn = num($0) }
			/"user":/ { user = num($0) }
			/"system":/ { sys = num($0) }
			/"times": \[/ { intimes = 1; next }
			intimes && /\]/ { intimes = 0 }
			intimes { runs++ }
			END { flush() }' "$TMP/startup.json" | tee -a "$REPORT"
		out "hyperfine $(hyperfine --version 2>/dev/null | awk '{ print $2 }') -N --warmup 3 --min-runs 20"
	fi
else
	out "hyperfine: not installed; 20 runs each with bench/timeit instead"
	base=""
	for spec in "true|$TRUE" "profwrap -q -f -o DIR -- true|$PROFWRAP -q -f -o $st_out -- $TRUE" \
		"env true|env $TRUE" "env LD_PRELOAD=libprofwrap.so true (no session vars)|env LD_PRELOAD=$LIB $TRUE" \
		"env LD_PRELOAD=... PROFWRAP_SESSION_DIR=absent true|env LD_PRELOAD=$LIB PROFWRAP_SESSION_DIR=$nosess PROFWRAP_QUIET=1 $TRUE"; do
		name=${spec%%|*}
		cmd=${spec#*|}
		# shellcheck disable=SC2086
		"$BB/timeit" -n 20 -q -- $cmd >"$TMP/timeit.out" 2>&1
		mean=$(calc "$(kv "$TMP/timeit.out" mean_s) * 1000")
		med=$(calc "$(kv "$TMP/timeit.out" median_s) * 1000")
		cpu=$(calc "$(kv "$TMP/timeit.out" cpu_s) * 1000")
		case $name in
		"true" | "env true") base=$med cbase=$cpu added=- cadded=- ;;
		*) added=$(fmt %.2f "$(calc "$med - $base")") cadded=$(fmt %.2f "$(calc "$cpu - $cbase")") ;;
		esac
		outf "$st_fmt" "$name" 20 "$(fmt %.2f "$mean")" "$(fmt %.2f "$med")" \
			"$(fmt %.2f "$(calc "$(kv "$TMP/timeit.out" min_s) * 1000")")" "$added" "$(fmt %.2f "$cpu")" "$cadded"
	done
fi
rule
out "added ms: median against the median of 'true' (profwrap row) or 'env true' (preload rows); medians, since"
out "other work on the machine gives the means a long tail. cpu ms: mean user+system time of the command and the"
out "children it waited for (for profwrap: the CLI, the collector and the target), and what that adds."

# ---------------------------------------------------------------------------------------------------------
# 5. Spawns from a large process.

SPAWNS=50
section "5. Spawns: $SPAWNS subprocess.run([\"true\"]) from a Python holding 16 MiB or 2 GiB (goal: under profwrap, 2 GiB within 1.5x of 16 MiB)"
sp_fmt='%-40s %10s %14s %10s\n'
rule
outf "$sp_fmt" "command" "held MiB" "ms per spawn" "vs 16 MiB"
rule
if have python3; then
	for who in plain profwrap; do
		small=""
		for mib in 16 2048; do
			case $who in
			plain) python3 "$HERE/spawn.py" $mib $SPAWNS >"$TMP/spawn.out" 2>&1 ;;
			*) "$PROFWRAP" -q -f -o "$TMP/spawn-out" -- python3 "$HERE/spawn.py" $mib $SPAWNS >"$TMP/spawn.out" 2>&1 ;;
			esac
			ms=$(kv "$TMP/spawn.out" ms_per_spawn)
			[ -n "$ms" ] || { out "$who $mib MiB: no result ($(tail -n 1 "$TMP/spawn.out"))"; continue; }
			if [ -z "$small" ]; then small=$ms ratio=-; else ratio=$(fmt %.2fx "$(calc "$ms / $small")"); fi
			outf "$sp_fmt" "$who python3 spawn.py" "$mib" "$ms" "$ratio"
		done
	done
else
	out "python3: not installed; section skipped"
fi
rule
out "The children are /bin/true, each recorded as a process under profwrap (its start-up is most of the added"
out "time). A vfork served by fork would copy 2 GiB of page tables per spawn (about 75 ms here)."

# ---------------------------------------------------------------------------------------------------------
# 6. A Lightning training step with --python-functions=lightning, where make e2e's environment has Lightning.

LT_PY=${PROFWRAP_E2E_VENV:-$HOME/.cache/profwrap/e2e-venv}/bin/python
LT_STEPS=400
section "6. A Lightning step (bench/lightning_steps.py, $LT_STEPS steps): the median CPU time of a step, per process"
if [ -x "$LT_PY" ] && "$LT_PY" -c "import lightning" >/dev/null 2>&1; then
	lt_fmt='%-40s %s\n'
	rule
	outf "$lt_fmt" "command" "median us per step, one per process (alternating)"
	rule
	plain_runs="" fn_runs=""
	i=1
	while [ "$i" -le "$ROUNDS" ]; do
		for who in plain functions; do
			case $who in
			plain) opt="" ;;
			*) opt="--python-functions=lightning" ;;
			esac
			# shellcheck disable=SC2086
			PYTHONHASHSEED=0 "$PROFWRAP" -q -f -o "$TMP/lt-out" $opt -- "$LT_PY" "$HERE/lightning_steps.py" $LT_STEPS \
				>"$TMP/lt.out" 2>&1
			us=$(kv "$TMP/lt.out" median_us)
			[ -n "$us" ] || { out "lightning_steps $who: no result ($(tail -n 1 "$TMP/lt.out"))"; continue; }
			case $who in plain) plain_runs="$plain_runs $us" ;; *) fn_runs="$fn_runs $us" ;; esac
		done
		i=$((i + 1))
	done
	outf "$lt_fmt" "profwrap" "$plain_runs"
	outf "$lt_fmt" "profwrap --python-functions=lightning" "$fn_runs"
	rule
	out "$("$LT_PY" -c 'import sys; print("CPython %d.%d" % sys.version_info[:2])'). A step of a tiny MLP is mostly Lightning's own Python: the case where a per-call"
	out "cost shows most. Steps vary by 20 % or more from process to process here: compare the medians of many runs."
	rm -rf "$TMP/lt-out"
else
	out "no Lightning in $LT_PY (make e2e makes it): section skipped"
fi

out ""
out "bench time: $(($(date +%s) - bench_start)) s"
cp "$REPORT" "$RESULTS/latest.txt" || die "cannot write $RESULTS/latest.txt"
echo "bench: wrote $RESULTS/latest.txt"
