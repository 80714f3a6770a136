/* profwrap [options] [--] COMMAND [ARGS...] | profwrap report|merge|salvage DIR | profwrap dump DIR|FILE... |
 * profwrap clean */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collector/merge/merge.h"
#include "../common/pw_capture.h"
#include "../common/pw_pyfuncs.h"
#include "../common/pw_session.h"
#include "cli.h"

#define PW_VERSION "0.1.0"

static void usage(FILE *f)
{
	fputs("usage: profwrap [options] [--] COMMAND [ARGS...]\n"
	      "       profwrap report DIR\n"
	      "       profwrap export sqlite DIR\n"
	      "       profwrap merge DIR\n"
	      "       profwrap salvage DIR\n"
	      "       profwrap dump [--events LIST] [--kinds LIST] DIR|FILE...\n"
	      "       profwrap clean\n"
	      "       profwrap start|stop PID\n"
	      "\n"
	      "Profiles COMMAND and every process it starts, with no change to them; writes per-rank reports\n"
	      "(rank<R>.txt, .json, .trace.json, .html, and .folded when there are call stacks) and\n"
	      "summary.txt/.json into the output directory.\n"
	      "\n"
	      "  -o, --output DIR      output directory (default ./profwrap-out); %h host, %p pid, %r rank,\n"
	      "                        %q{VAR} a variable expand in it\n"
	      "  -f, --force           write into a non-empty output directory, replacing its reports\n"
	      "                        (not while the run that writes there still goes)\n"
	      "      --trace LIST      domains to record, comma-separated (default all):\n"
	      "                        io, stdio, process, dl, wait, cudart, cublas, cublaslt,\n"
	      "                        cudnn, nccl, gpu (kernels and copies as the GPU ran them, CUPTI),\n"
	      "                        nvtx (the program's NVTX ranges and marks), mpi,\n"
	      "                        meta (file metadata: stat family, access, directory listing)\n"
	      "      --no-follow-fork  record only COMMAND's own process, not its children\n"
	      "      --ring-size BYTES per-thread ring size, a power of two from 4K to 1G; K, M, G suffixes\n"
	      "                        (default 2M)\n"
	      "  -q, --quiet           no progress line or closing message on stderr\n"
	      "Capture control (record part of the run; default: all of it):\n"
	      "      --capture-range=cudaProfilerApi   between cudaProfilerStart and cudaProfilerStop\n"
	      "      --capture-range=nvtx:NAME[@DOMAIN] inside the NVTX range NAME\n"
	      "      --capture-range=manual  off until `profwrap start PID`\n"
	      "      --capture-count=N     only the first N occurrences (default all)\n"
	      "      --delay=SECONDS       nothing before SECONDS after launch\n"
	      "      --duration=SECONDS    nothing after delay + SECONDS\n"
	      "      --schedule=wait=W,warmup=U,active=A,repeat=R  over the steps of --step-range=NAME[@DOMAIN],\n"
	      "                            as torch.profiler.schedule\n"
	      "      --step-range=NAME[@DOMAIN]  the NVTX (or @py) range a step is; alone, names its occurrences\n"
	      "                            ProfilerStep#N in the trace, as torch.profiler does\n"
	      "Call stacks:\n"
	      "      --stacks=on|native|off  stacks of calls that wait for the GPU, allocate, copy synchronously\n"
	      "                            or last --stack-threshold; on: with Python frames (default on)\n"
	      "      --stack-threshold=DUR  calls at least DUR long get a stack: ns, us, ms, s (default 100us;\n"
	      "                            0: every call)\n"
	      "      --sample=HZ           sample each thread's stack HZ times per CPU second (default off)\n"
	      "Python:\n"
	      "      --python-functions=SPEC[,SPEC...]  each call of these Python functions is a range (Phases,\n"
	      "                            the trace), named py:NAME: MODULE:QUALNAME (fnmatch wildcards),\n"
	      "                            @FILE (a SPEC a line), lightning (Lightning's profiler actions),\n"
	      "                            torch (module calls, backward, optimizer steps, DataLoader, save/load)\n"
	      "      --pytorch=autograd-nvtx|autograd-shapes-nvtx  PyTorch's NVTX ranges (emit_nvtx) turned on,\n"
	      "                            one per autograd operator (with its input shapes)\n"
	      "  -h, --help            this help\n"
	      "  -V, --version         print the version\n"
	      "\n"
	      "Environment: PROFWRAP_CUPTI=PATH  the libcupti to load (default: found near libcudart)\n"
	      "\n"
	      "profwrap exits with COMMAND's exit status; when signal N ended COMMAND, profwrap ends by it too\n"
	      "(128+N for a signal that dumps core); it exits with 2 before starting COMMAND when an option, a\n"
	      "PROFWRAP_* setting of the environment or the output directory is refused.\n"
	      "report DIR: write the reports of DIR again from DIR/raw.\n"
	      "export sqlite DIR: write DIR/rank<R>.sqlite, every event of DIR/raw in an SQLite database with\n"
	      "Nsight Systems' tables where nsys has the same data (docs/EXPORT.md).\n"
	      "salvage DIR: write into DIR/raw the records a collector that died (killed, disk full) left in\n"
	      "shared memory, then the reports of DIR again. profwrap does this itself when its collector dies.\n"
	      "clean: remove shared memory and session files of runs that are gone (salvaging first what\n"
	      "belongs to an output directory). Each run does this for what it finds.\n"
	      "dump DIR|FILE...: print the raw traces of DIR (DIR/raw/*.pwt) or the FILEs as JSON lines, one\n"
	      "record a line (`profwrap dump --help`).\n"
	      "merge DIR: write DIR/summary.txt, .json and .html, the cross-rank summary, from DIR/rank<R>.json (and\n"
	      "launcher-*.json), e.g. after the ranks of several nodes wrote into one shared DIR.\n"
	      "start|stop PID: turn recording on or off in a running profiled process (and the children it\n"
	      "forked); `kill -USR2 PID` toggles it.\n",
	      f);
}

static int fail(const char *fmt, const char *arg)
{
	fputs("profwrap: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 2;
}

enum {
	OPT_TRACE = 256,
	OPT_NO_FOLLOW,
	OPT_RING,
	OPT_CAPTURE_RANGE, /* the capture options, OPT_CAPTURE_RANGE to OPT_STEP_RANGE, in capture_env's order */
	OPT_CAPTURE_COUNT,
	OPT_DELAY,
	OPT_DURATION,
	OPT_SCHEDULE,
	OPT_STEP_RANGE,
	OPT_STACKS, /* the stack options, in stack_env's order */
	OPT_STACK_THRESHOLD,
	OPT_SAMPLE,
	OPT_PYTHON_FUNCTIONS,
	OPT_PYTORCH,
};

static const char *const capture_env[] = {PW_ENV_CAPTURE_RANGE, PW_ENV_CAPTURE_COUNT, PW_ENV_DELAY,
					  PW_ENV_DURATION,	PW_ENV_SCHEDULE,      PW_ENV_STEP_RANGE};
static const char *const stack_env[] = {PW_ENV_STACKS, PW_ENV_STACK_THRESHOLD, PW_ENV_SAMPLE};

/* A capture option's value into cap. Returns 0, or -1 with the reason in err. */
static int parse_capture(int opt, const char *v, struct pw_capture_settings *cap, char *err, size_t errlen)
{
	switch (opt) {
	case OPT_CAPTURE_RANGE:
		return pw_capture_parse_range(v, cap, err, errlen);
	case OPT_CAPTURE_COUNT:
		return pw_capture_parse_count(v, cap, err, errlen);
	case OPT_DELAY:
		return pw_capture_parse_seconds(v, &cap->delay_ns, "--delay", err, errlen);
	case OPT_DURATION:
		return pw_capture_parse_seconds(v, &cap->duration_ns, "--duration", err, errlen);
	case OPT_SCHEDULE:
		return pw_capture_parse_schedule(v, cap, err, errlen);
	default:
		return pw_capture_parse_step(v, cap, err, errlen);
	}
}

/* A stack option's value, checked. Returns 0, or -1 with the reason in err. */
static int parse_stack(int opt, const char *v, char *err, size_t errlen)
{
	struct pw_stack_settings st;
	return opt == OPT_STACKS	  ? pw_stacks_parse_mode(v, &st.mode, err, errlen)
	       : opt == OPT_STACK_THRESHOLD ? pw_stacks_parse_threshold(v, &st.threshold_ns, err, errlen)
					    : pw_stacks_parse_sample(v, &st.sample_hz, err, errlen);
}

/* The PROFWRAP_* settings this profwrap passes on from its environment to every process are checked as its
 * options are (a process would refuse a bad one, on each process's stderr, and go on with the default):
 * those it does not set itself, and the capture and stack settings no option overrides, which also count in
 * the check of the capture combination. given: bit (opt - OPT_CAPTURE_RANGE) per option given. Returns 0, or
 * 2 after the one-line refusal. */
static int check_environment(const struct pw_cli_opts *o, struct pw_capture_settings *cap, unsigned given)
{
	char why[512], err[400];
	struct pw_settings set;
	unsigned own = 1u << PW_SET_RING_SIZE | 1u << PW_SET_TRACE | 1u << PW_SET_FOLLOW_FORK |
		       (o->quiet ? 1u << PW_SET_QUIET : 0);
	if (pw_settings_from_env(&set, getenv, own, why, sizeof why))
		return fail("environment: %s", why);
	for (int opt = OPT_CAPTURE_RANGE; opt <= OPT_SAMPLE; opt++) {
		int capture = opt <= OPT_STEP_RANGE;
		const char *name = capture ? capture_env[opt - OPT_CAPTURE_RANGE] : stack_env[opt - OPT_STACKS];
		const char *v = getenv(name);
		if (!v || !*v || (given & 1u << (opt - OPT_CAPTURE_RANGE)))
			continue;
		if (capture ? parse_capture(opt, v, cap, err, sizeof err) : parse_stack(opt, v, err, sizeof err)) {
			snprintf(why, sizeof why, "%s is refused (%s)", name, err);
			return fail("environment: %s", why);
		}
	}
	return 0;
}

/* --python-functions (or its variable): checked, each @FILE made absolute (the processes that read it may run
 * elsewhere), into o's environment entry. Returns 0, or -1 with the reason in err. */
static int python_functions(const char *spec, struct pw_cli_opts *o, char *err, size_t errlen)
{
	static char env[8192];
	struct pw_pyfn_set set;
	if (pw_pyfn_parse(spec, &set, err, errlen) < 0)
		return -1;
	size_t n = (size_t)snprintf(env, sizeof env, "%s=", PW_ENV_PYTHON_FUNCTIONS);
	for (const char *at = spec; *at && n < sizeof env;) {
		size_t len = strcspn(at, ",");
		char path[4096];
		if (at[0] == '@' && len - 1 < sizeof path) {
			memcpy(path, at + 1, len - 1);
			path[len - 1] = 0;
			char *abs = realpath(path, NULL);
			n += (size_t)snprintf(env + n, sizeof env - n, "%s@%s", n > strlen(PW_ENV_PYTHON_FUNCTIONS) + 1 ? "," : "",
					      abs ? abs : path);
			free(abs);
		} else {
			n += (size_t)snprintf(env + n, sizeof env - n, "%s%.*s", n > strlen(PW_ENV_PYTHON_FUNCTIONS) + 1 ? "," : "",
					      (int)len, at);
		}
		at += len + (at[len] == ',');
	}
	if (n >= sizeof env) {
		snprintf(err, errlen, "the list is over %zu bytes", sizeof env - 64);
		return -1;
	}
	o->python_functions_env = env;
	return 0;
}

static int self_dir(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, 0, 'o'}, {"force", no_argument, 0, 'f'},
		{"trace", required_argument, 0, OPT_TRACE}, {"no-follow-fork", no_argument, 0, OPT_NO_FOLLOW},
		{"ring-size", required_argument, 0, OPT_RING}, {"quiet", no_argument, 0, 'q'},
		{"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'},
		{"capture-range", required_argument, 0, OPT_CAPTURE_RANGE},
		{"capture-count", required_argument, 0, OPT_CAPTURE_COUNT}, {"delay", required_argument, 0, OPT_DELAY},
		{"duration", required_argument, 0, OPT_DURATION}, {"schedule", required_argument, 0, OPT_SCHEDULE},
		{"step-range", required_argument, 0, OPT_STEP_RANGE}, {"stacks", required_argument, 0, OPT_STACKS},
		{"stack-threshold", required_argument, 0, OPT_STACK_THRESHOLD}, {"sample", required_argument, 0, OPT_SAMPLE},
		{"python-functions", required_argument, 0, OPT_PYTHON_FUNCTIONS}, {"pytorch", required_argument, 0, OPT_PYTORCH},
		{0, 0, 0, 0},
	};
	struct pw_cli_opts o = {.output = "profwrap-out", .follow_fork = 1, .ring_size = 2u << 20};
	int c;
	if (argc >= 2 && strcmp(argv[1], "report") == 0) {
		if (argc != 3)
			return fail("%s", "usage: profwrap report DIR");
		return pw_cli_report(argv[2]);
	}
	if (argc >= 2 && strcmp(argv[1], "export") == 0) {
		if (argc != 4 || strcmp(argv[2], "sqlite") != 0)
			return fail("%s", "usage: profwrap export sqlite DIR");
		return pw_cli_export_sqlite(argv[3]);
	}
	if (argc >= 2 && strcmp(argv[1], "merge") == 0) {
		if (argc != 3)
			return fail("%s", "usage: profwrap merge DIR");
		char msg[1024];
		int rc = pw_merge(argv[2], 0, msg, sizeof msg);
		fprintf(stderr, "profwrap: %s\n", msg);
		return rc == 0 ? 0 : 1;
	}
	if (argc >= 2 && strcmp(argv[1], "salvage") == 0) {
		if (argc != 3)
			return fail("%s", "usage: profwrap salvage DIR");
		return pw_cli_salvage(argv[2]);
	}
	if (argc >= 2 && strcmp(argv[1], "dump") == 0)
		return pw_cli_dump(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "clean") == 0) {
		if (argc != 2)
			return fail("%s", "usage: profwrap clean");
		return pw_cli_clean();
	}
	if (argc >= 2 && (strcmp(argv[1], "start") == 0 || strcmp(argv[1], "stop") == 0)) {
		if (argc != 3)
			return fail("usage: profwrap %s PID", argv[1]);
		return pw_cli_capture_signal(argv[2], strcmp(argv[1], "start") == 0);
	}
	struct pw_capture_settings cap = {0};
	char cap_err[400];
	size_t ncap = 0;
	unsigned given = 0; /* capture and stack options given, bit (option - OPT_CAPTURE_RANGE) */
	while ((c = getopt_long(argc, argv, "+o:fqhV", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.output = optarg;
			break;
		case 'f':
			o.force = 1;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case OPT_TRACE: {
			uint64_t mask;
			if (pw_setting_parse(PW_SET_TRACE, optarg, &mask, cap_err, sizeof cap_err))
				return fail("--trace: %s", cap_err);
			o.trace = optarg;
			break;
		}
		case OPT_NO_FOLLOW:
			o.follow_fork = 0;
			break;
		case OPT_RING:
			if (pw_setting_parse(PW_SET_RING_SIZE, optarg, &o.ring_size, cap_err, sizeof cap_err))
				return fail("--ring-size: %s", cap_err);
			break;
		case OPT_CAPTURE_RANGE:
		case OPT_CAPTURE_COUNT:
		case OPT_DELAY:
		case OPT_DURATION:
		case OPT_SCHEDULE:
		case OPT_STEP_RANGE: {
			if (parse_capture(c, optarg, &cap, cap_err, sizeof cap_err))
				return fail("%s", cap_err);
			static char env_text[sizeof o.capture_env / sizeof o.capture_env[0]][PW_CAPTURE_NAME_MAX * 2 + 64];
			if (ncap + 1 >= sizeof o.capture_env / sizeof o.capture_env[0])
				return fail("%s", "too many capture options");
			snprintf(env_text[ncap], sizeof env_text[ncap], "%s=%s", capture_env[c - OPT_CAPTURE_RANGE], optarg);
			o.capture_env[ncap] = env_text[ncap];
			ncap++;
			given |= 1u << (c - OPT_CAPTURE_RANGE);
			break;
		}
		case OPT_STACKS:
		case OPT_STACK_THRESHOLD:
		case OPT_SAMPLE: {
			if (parse_stack(c, optarg, cap_err, sizeof cap_err))
				return fail("%s", cap_err);
			static char stack_text[3][96];
			snprintf(stack_text[c - OPT_STACKS], sizeof stack_text[0], "%s=%s", stack_env[c - OPT_STACKS], optarg);
			o.stack_env[c - OPT_STACKS] = stack_text[c - OPT_STACKS];
			given |= 1u << (c - OPT_CAPTURE_RANGE);
			break;
		}
		case OPT_PYTHON_FUNCTIONS:
			if (python_functions(optarg, &o, cap_err, sizeof cap_err))
				return fail("--python-functions: %s", cap_err);
			break;
		case OPT_PYTORCH: {
			static char env[64];
			if (pw_pytorch_parse(optarg, cap_err, sizeof cap_err) < 0)
				return fail("--pytorch: %s", cap_err);
			snprintf(env, sizeof env, "%s=%s", PW_ENV_PYTORCH, optarg);
			o.pytorch_env = env;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			puts("profwrap " PW_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!*o.output)
		return fail("%s", "--output must not be empty");
	const char *pyfn = getenv(PW_ENV_PYTHON_FUNCTIONS);
	if (!o.python_functions_env && pyfn && *pyfn && python_functions(pyfn, &o, cap_err, sizeof cap_err))
		return fail("environment: " PW_ENV_PYTHON_FUNCTIONS " is refused (%s)", cap_err);
	const char *torch = getenv(PW_ENV_PYTORCH);
	if (!o.pytorch_env && torch && *torch && pw_pytorch_parse(torch, cap_err, sizeof cap_err) < 0)
		return fail("environment: " PW_ENV_PYTORCH " is refused (%s)", cap_err);
	if (check_environment(&o, &cap, given))
		return 2;
	if (pw_capture_check(&cap, cap_err, sizeof cap_err))
		return fail("%s", cap_err);
	o.command = argv + optind;
	char dir[PATH_MAX];
	if (self_dir(dir, sizeof dir) < 0)
		return fail("%s", "cannot find where profwrap is installed (/proc/self/exe)");
	return pw_cli_run(&o, dir);
}
