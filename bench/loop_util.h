/* What the timed-loop benchmarks (readloop, stdioloop, metaloop, launchloop) share: a clock read as ns, and
 * a positive count from the command line (the program exits 2 with one line on anything else). */
#ifndef PW_BENCH_LOOP_UTIL_H
#define PW_BENCH_LOOP_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static inline unsigned long long parse_count(const char *prog, const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || !v || s[0] == '-') {
		fprintf(stderr, "%s: %s must be a positive integer, not '%s'\n", prog, what, s);
		exit(2);
	}
	return v;
}

#endif
