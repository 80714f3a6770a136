/* metaloop CALL [N [RUNS]]: times N calls of CALL, RUNS times (default 1,000,000 and 5), and prints the best run
 * as nanoseconds per call, as readloop does:
 *
 *   metaloop call=stat calls=1000000 runs=5 ns_per_call=... cpu_ns_per_call=...
 *
 * CALL is stat (stat() of /dev/null: a metadata call, recorded), fstat (of /dev/null's descriptor), or
 * mutex (pthread_mutex_lock and unlock of a mutex no other thread touches: the uncontended lock, which
 * profwrap passes through with a trylock and never records). The calls go through the PLT like any
 * program's. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loop_util.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int null_fd;

static int one_call(int which)
{
	struct stat st;
	switch (which) {
	case 0:
		return stat("/dev/null", &st);
	case 1:
		return fstat(null_fd, &st);
	default:
		if (pthread_mutex_lock(&lock))
			return -1;
		return pthread_mutex_unlock(&lock);
	}
}

int main(int argc, char **argv)
{
	static const char *const calls[] = {"stat", "fstat", "mutex"};
	int which = -1;
	for (int i = 0; argc > 1 && i < 3; i++)
		if (strcmp(argv[1], calls[i]) == 0)
			which = i;
	unsigned long long n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000ull;
	unsigned long long runs = argc > 3 ? strtoull(argv[3], NULL, 10) : 5ull;
	if (which < 0 || argc > 4 || !n || !runs) {
		fprintf(stderr, "usage: metaloop stat|fstat|mutex [N [RUNS]]\n");
		return 2;
	}
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	unsigned long long best = ~0ull, best_cpu = ~0ull;
	for (unsigned long long r = 0; r < runs; r++) {
		unsigned long long c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = clock_ns(CLOCK_MONOTONIC);
		for (unsigned long long i = 0; i < n; i++)
			if (one_call(which) != 0) {
				perror(calls[which]);
				return 1;
			}
		unsigned long long dt = clock_ns(CLOCK_MONOTONIC) - t0, dc = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		best = dt < best ? dt : best;
		best_cpu = dc < best_cpu ? dc : best_cpu;
	}
	printf("metaloop call=%s calls=%llu runs=%llu ns_per_call=%.2f cpu_ns_per_call=%.2f\n", calls[which], n, runs,
	       (double)best / (double)n, (double)best_cpu / (double)n);
	return 0;
}
