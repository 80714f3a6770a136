/* cpu_spin: burns a known amount of CPU time, for the CPU samples (--sample) to be weighed against it.
 *
 *     cpu_spin arith MS     integer arithmetic in spin_arith for MS ms of the process's CPU time
 *     cpu_spin clock MS     clock_gettime(CLOCK_MONOTONIC) in a loop (the vDSO's) for as long
 *
 * Prints one line of JSON, its ground truth: {"mode":..., "calls": clock_gettime calls made in the loop,
 * "cpu_ns": the process's CPU time (CLOCK_PROCESS_CPUTIME_ID) when done}. Exit status 0, 2 on bad usage. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t g_sink; /* keeps the loops' work */

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) void spin_arith(uint64_t until_ns)
{
	while (process_cpu_ns() < until_ns)
		for (int i = 0; i < 100000; i++)
			g_sink = g_sink * 3 + 1;
}

static __attribute__((noinline)) uint64_t spin_clock(uint64_t until_ns)
{
	uint64_t calls = 0;
	struct timespec ts;
	while (process_cpu_ns() < until_ns)
		for (int i = 0; i < 10000; i++, calls++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			g_sink += (uint64_t)ts.tv_nsec;
		}
	return calls;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "arith") != 0 && strcmp(argv[1], "clock") != 0) || atol(argv[2]) <= 0) {
		fprintf(stderr, "usage: cpu_spin arith|clock MS\n");
		return 2;
	}
	uint64_t until = process_cpu_ns() + (uint64_t)atol(argv[2]) * 1000000u, calls = 0;
	if (strcmp(argv[1], "arith") == 0)
		spin_arith(until);
	else
		calls = spin_clock(until);
	printf("{\"mode\": \"%s\", \"calls\": %llu, \"cpu_ns\": %llu}\n", argv[1], (unsigned long long)calls,
	       (unsigned long long)process_cpu_ns());
	return 0;
}
