/* stackloop DEPTH [N [RUNS]]: recurses DEPTH frames deep, then times N calls of read(fd, buf, 1) on /dev/zero,
 * RUNS times (default 200,000 and 5), and prints the best run in readloop's format:
 *
 *   stackloop depth=30 calls=200000 runs=5 best_ns=... ns_per_call=... cpu_ns_per_call=...
 *
 * Under `profwrap --stack-threshold=0` every call captures its stack, DEPTH frames plus main's and libc's
 * start-up frames; against a run with `--stacks=off` the difference is the cost of one stack. The recursion
 * is kept from becoming a loop (noinline, work after the call) so that the frames are real. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static unsigned long long parse_count(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || !v || s[0] == '-') {
		fprintf(stderr, "stackloop: %s must be a positive integer, not '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static unsigned long long n, runs, best = ~0ull, best_cpu = ~0ull;

static int timed_reads(void)
{
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "stackloop: /dev/zero: %s\n", strerror(errno));
		return 1;
	}
	char buf[1];
	for (unsigned long long r = 0; r < runs; r++) {
		unsigned long long c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		unsigned long long t0 = clock_ns(CLOCK_MONOTONIC);
		for (unsigned long long i = 0; i < n; i++) {
			if (read(fd, buf, 1) != 1) {
				fprintf(stderr, "stackloop: read: %s\n", strerror(errno));
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

__attribute__((noinline)) static int descend(unsigned depth)
{
	int rc = depth ? descend(depth - 1) : timed_reads();
	sink += (int)depth; /* work after the call: no tail call */
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: stackloop DEPTH [N [RUNS]]\n");
		return 2;
	}
	unsigned long long depth = parse_count(argv[1], "DEPTH");
	n = argc > 2 ? parse_count(argv[2], "N") : 200000ull;
	runs = argc > 3 ? parse_count(argv[3], "RUNS") : 5ull;
	if (descend((unsigned)depth - 1))
		return 1;
	printf("stackloop depth=%llu calls=%llu runs=%llu best_ns=%llu ns_per_call=%.2f cpu_ns_per_call=%.2f\n", depth,
	       n, runs, best, (double)best / (double)n, (double)best_cpu / (double)n);
	return 0;
}
