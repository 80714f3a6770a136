/* readloop [N [RUNS [DEPTH]]]: times N calls of read(fd, buf, 1) on /dev/zero, RUNS times (default 2,000,000
 * and 5), DEPTH frames deep (default 1: from main), and prints the best run as nanoseconds per call:
 *
 *   readloop calls=2000000 runs=5 best_ns=... ns_per_call=... cpu_ns_per_call=...
 *
 * ns_per_call is wall time (CLOCK_MONOTONIC); cpu_ns_per_call is the thread's own CPU time
 * (CLOCK_THREAD_CPUTIME_ID, user and system), which leaves out the time the thread waited for a CPU: on a
 * machine busy with other work it is the steadier figure of what a call costs. Each is the best of the runs.
 *
 * Built plainly by `make bench`, and with -pg by bench/run.sh for uftrace. The loop calls read() through the
 * PLT like any program, so a preloaded wrapper (profwrap), a PLT hook (uftrace, ltrace) or a syscall tracer
 * (strace) each sees every call. The clock is read around the whole loop only.
 *
 * DEPTH is for call stacks: under `profwrap --stack-threshold=0` every call captures its stack, DEPTH frames
 * plus main's and libc's start-up frames; against a run with `--stacks=off` the difference is the cost of one
 * stack. The recursion is kept from becoming a loop (noinline, work after the call) so that the frames are
 * real. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loop_util.h"

static unsigned long long n, runs, best = ~0ull, best_cpu = ~0ull;

static int timed_reads(void)
{
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "readloop: /dev/zero: %s\n", strerror(errno));
		return 1;
	}
	char buf[1];
	for (unsigned long long r = 0; r < runs; r++) {
		unsigned long long c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		unsigned long long t0 = clock_ns(CLOCK_MONOTONIC);
		for (unsigned long long i = 0; i < n; i++) {
			if (read(fd, buf, 1) != 1) {
				fprintf(stderr, "readloop: read: %s\n", strerror(errno));
				close(fd);
				return 1;
			}
		}
		unsigned long long dt = clock_ns(CLOCK_MONOTONIC) - t0;
		unsigned long long dc = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (dt < best)
			best = dt;
		if (dc < best_cpu)
			best_cpu = dc;
	}
	close(fd);
	return 0;
}

static volatile int sink;

__attribute__((noinline)) static int descend(unsigned long long depth)
{
	int rc = depth > 1 ? descend(depth - 1) : timed_reads();
	sink += (int)depth; /* work after the call: no tail call */
	return rc;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? parse_count("readloop", argv[1], "N") : 2000000ull;
	runs = argc > 2 ? parse_count("readloop", argv[2], "RUNS") : 5ull;
	unsigned long long depth = argc > 3 ? parse_count("readloop", argv[3], "DEPTH") : 1ull;
	if (argc > 4) {
		fprintf(stderr, "usage: readloop [N [RUNS [DEPTH]]]\n");
		return 2;
	}
	if ((depth > 1 ? descend(depth) : timed_reads()) != 0)
		return 1;
	printf("readloop calls=%llu runs=%llu best_ns=%llu ns_per_call=%.2f cpu_ns_per_call=%.2f\n", n, runs, best,
	       (double)best / (double)n, (double)best_cpu / (double)n);
	return 0;
}
