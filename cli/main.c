/* profwrap [options] [--] COMMAND [ARGS...] | profwrap report|merge|salvage DIR | profwrap clean */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collector/merge.h"
#include "../common/pw_capture.h"
#include "../common/pw_record.h"
#include "cli.h"

#define PW_VERSION "0.1.0"

static void usage(FILE *f)
{
	fputs("usage: profwrap [options] [--] COMMAND [ARGS...]\n"
	      "       profwrap report DIR\n"
	      "       profwrap merge DIR\n"
	      "       profwrap salvage DIR\n"
	      "       profwrap clean\n"
	      "       profwrap start|stop PID\n"
	      "\n"
	      "Profiles COMMAND and every process it starts, with no change to them; writes per-rank reports\n"
	      "(rank<R>.txt, .json, .trace.json, and .folded when there are call stacks) and summary.txt/.json\n"
	      "into the output directory.\n"
	      "\n"
	      "  -o, --output DIR      output directory (default ./profwrap-out); %h host, %p pid, %r rank,\n"
	      "                        %q{VAR} a variable expand in it\n"
	      "  -f, --force           write into a non-empty output directory, replacing its reports\n"
	      "      --trace LIST      domains to record, comma-separated (default all):\n"
	      "                        io, stdio, process, dl, wait, cudart, cublas, cublaslt,\n"
	      "                        cudnn, nccl, gpu (kernels and copies as the GPU ran them, CUPTI),\n"
	      "                        nvtx (the program's NVTX ranges and marks)\n"
	      "      --no-follow-fork  record only COMMAND's own process, not its children\n"
	      "      --ring-size BYTES per-thread ring size, a power of two from 4K to 1G; K, M, G suffixes\n"
	      "                        (default 2M)\n"
	      "  -q, --quiet           no status line or closing message on stderr\n"
	      "Capture control (record part of the run; default: all of it):\n"
	      "      --capture-range=cudaProfilerApi   between cudaProfilerStart and cudaProfilerStop\n"
	      "      --capture-range=nvtx:NAME[@DOMAIN] inside the NVTX range NAME\n"
	      "      --capture-range=manual  off until `profwrap start PID`\n"
	      "      --capture-count=N     only the first N occurrences (default all)\n"
	      "      --delay=SECONDS       nothing before SECONDS after launch\n"
	      "      --duration=SECONDS    nothing after delay + SECONDS\n"
	      "      --schedule=wait=W,warmup=U,active=A,repeat=R  over the steps of --step-range=NAME[@DOMAIN],\n"
	      "                            as torch.profiler.schedule\n"
	      "Call stacks:\n"
	      "      --stacks=on|native|off  stacks of calls that wait for the GPU, allocate, copy synchronously\n"
	      "                            or last --stack-threshold; on: with Python frames (default on)\n"
	      "      --stack-threshold=DUR  calls at least DUR long get a stack: ns, us, ms, s (default 100us;\n"
	      "                            0: every call)\n"
	      "      --sample=HZ           sample each thread's stack HZ times per CPU second (default off)\n"
	      "  -h, --help            this help\n"
	      "  -V, --version         print the version\n"
	      "\n"
	      "Environment: PROFWRAP_CUPTI=PATH  the libcupti to load (default: found near libcudart)\n"
	      "\n"
	      "profwrap exits with COMMAND's exit status (128+N when signal N ended it).\n"
	      "report DIR: write the reports of DIR again from DIR/raw.\n"
	      "salvage DIR: write into DIR/raw the records a collector that died (killed, disk full) left in\n"
	      "shared memory, then the reports of DIR again. profwrap does this itself when its collector dies.\n"
	      "clean: remove shared memory and session files of runs that are gone (salvaging first what\n"
	      "belongs to an output directory). Each run does this for what it finds.\n"
	      "merge DIR: write DIR/summary.txt and .json, the cross-rank summary, from DIR/rank<R>.json (and\n"
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

/* BYTES with an optional K/M/G suffix; 0 when malformed. */
static uint64_t parse_size(const char *s)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return 0;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > (1ull << (40 - shift)))
		return 0;
	return (uint64_t)v << shift;
}

/* Returns NULL when every domain in list is known, else the first unknown one (static buffer). */
static const char *unknown_domain(const char *list)
{
	static char bad[64];
	if (!*list)
		return "(empty list)";
	while (*list) {
		size_t len = strcspn(list, ",");
		if (pw_domain_from_name(list, len) < 0 && !(len == 3 && memcmp(list, "all", 3) == 0)) {
			snprintf(bad, sizeof bad, "%.*s", (int)(len < 60 ? len : 60), list);
			return bad;
		}
		list += len + (list[len] == ',');
	}
	return NULL;
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
	enum {
		OPT_TRACE = 256,
		OPT_NO_FOLLOW,
		OPT_RING,
		OPT_CAPTURE_RANGE,
		OPT_CAPTURE_COUNT,
		OPT_DELAY,
		OPT_DURATION,
		OPT_SCHEDULE,
		OPT_STEP_RANGE,
		OPT_STACKS,
		OPT_STACK_THRESHOLD,
		OPT_SAMPLE
	};
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
		{0, 0, 0, 0},
	};
	struct pw_cli_opts o = {.output = "profwrap-out", .follow_fork = 1, .ring_size = 2u << 20};
	int c;
	if (argc >= 2 && strcmp(argv[1], "report") == 0) {
		if (argc != 3)
			return fail("%s", "usage: profwrap report DIR");
		return pw_cli_report(argv[2]);
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
			const char *bad = unknown_domain(optarg);
			if (bad) {
				char msg[512];
				int n = snprintf(msg, sizeof msg, "unknown domain '%s' in --trace (known:", bad);
				for (int d = 0; d < PW_DOM_COUNT && n > 0 && (size_t)n < sizeof msg; d++)
					n += snprintf(msg + n, sizeof msg - (size_t)n, "%s %s", d ? "," : "",
						      pw_domain_names[d]);
				return fail("%s)", msg);
			}
			o.trace = optarg;
			break;
		}
		case OPT_NO_FOLLOW:
			o.follow_fork = 0;
			break;
		case OPT_RING:
			o.ring_size = parse_size(optarg);
			if (o.ring_size < 4096 || o.ring_size > (1u << 30) || (o.ring_size & (o.ring_size - 1)))
				return fail("--ring-size must be a power of two from 4096 bytes to 1G, not '%s'", optarg);
			break;
		case OPT_CAPTURE_RANGE:
		case OPT_CAPTURE_COUNT:
		case OPT_DELAY:
		case OPT_DURATION:
		case OPT_SCHEDULE:
		case OPT_STEP_RANGE: {
			int rc = c == OPT_CAPTURE_RANGE	  ? pw_capture_parse_range(optarg, &cap, cap_err, sizeof cap_err)
				 : c == OPT_CAPTURE_COUNT ? pw_capture_parse_count(optarg, &cap, cap_err, sizeof cap_err)
				 : c == OPT_DELAY	  ? pw_capture_parse_seconds(optarg, &cap.delay_ns, "--delay", cap_err,
									     sizeof cap_err)
				 : c == OPT_DURATION	  ? pw_capture_parse_seconds(optarg, &cap.duration_ns, "--duration",
									     cap_err, sizeof cap_err)
				 : c == OPT_SCHEDULE	  ? pw_capture_parse_schedule(optarg, &cap, cap_err, sizeof cap_err)
							  : pw_capture_parse_step(optarg, &cap, cap_err, sizeof cap_err);
			if (rc)
				return fail("%s", cap_err);
			static const char *const names[] = {PW_ENV_CAPTURE_RANGE, PW_ENV_CAPTURE_COUNT, PW_ENV_DELAY,
							    PW_ENV_DURATION,	  PW_ENV_SCHEDULE,	PW_ENV_STEP_RANGE};
			static char env_text[sizeof o.capture_env / sizeof o.capture_env[0]][PW_CAPTURE_NAME_MAX * 2 + 64];
			if (ncap + 1 >= sizeof o.capture_env / sizeof o.capture_env[0])
				return fail("%s", "too many capture options");
			snprintf(env_text[ncap], sizeof env_text[ncap], "%s=%s", names[c - OPT_CAPTURE_RANGE], optarg);
			o.capture_env[ncap] = env_text[ncap];
			ncap++;
			break;
		}
		case OPT_STACKS:
		case OPT_STACK_THRESHOLD:
		case OPT_SAMPLE: {
			struct pw_stack_settings st;
			int rc = c == OPT_STACKS ? pw_stacks_parse_mode(optarg, &st.mode, cap_err, sizeof cap_err)
				 : c == OPT_STACK_THRESHOLD
					 ? pw_stacks_parse_threshold(optarg, &st.threshold_ns, cap_err, sizeof cap_err)
					 : pw_stacks_parse_sample(optarg, &st.sample_hz, cap_err, sizeof cap_err);
			if (rc)
				return fail("%s", cap_err);
			static const char *const names[] = {PW_ENV_STACKS, PW_ENV_STACK_THRESHOLD, PW_ENV_SAMPLE};
			static char stack_env[3][96];
			snprintf(stack_env[c - OPT_STACKS], sizeof stack_env[0], "%s=%s", names[c - OPT_STACKS], optarg);
			o.stack_env[c - OPT_STACKS] = stack_env[c - OPT_STACKS];
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
	if (pw_capture_check(&cap, cap_err, sizeof cap_err))
		return fail("%s", cap_err);
	o.command = argv + optind;
	char dir[PATH_MAX];
	if (self_dir(dir, sizeof dir) < 0)
		return fail("%s", "cannot find where profwrap is installed (/proc/self/exe)");
	return pw_cli_run(&o, dir);
}
