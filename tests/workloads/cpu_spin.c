/* cpu_spin: burns a known amount of CPU time, for the CPU samples (--sample) to be weighed against it.
 *
 *     cpu_spin arith MS     integer arithmetic in spin_arith for MS ms of the process's CPU time
 *     cpu_spin clock MS     clock_gettime(CLOCK_MONOTONIC) in a loop (the vDSO's) for as long
 *     cpu_spin threads MS   3 threads each do integer arithmetic for MS ms of their own CPU time, making no
 *                           call that profwrap records (clock_gettime is not wrapped), while the main
 *                           thread waits in pthread_join
 *     cpu_spin short N      N threads one after the other, each doing arithmetic for 1 ms of its CPU time
 *     cpu_spin split MS     integer arithmetic for MS ms of CPU time in all, 3/4 of it called from spin_major
 *                           and 1/4 from spin_minor, in turns of 150 ms and 50 ms (a flame graph's two frames)
 *
 * Prints one line of JSON, its ground truth: {"mode":..., "calls": clock_gettime calls made in the loop,
 * "major_ns", "minor_ns": the CPU time spent in spin_major and spin_minor (split),
 * "cpu_ns": the process's CPU time (CLOCK_PROCESS_CPUTIME_ID) when done, "timers": the POSIX timers the
 * process has then (the lines of /proc/self/timers naming one, -1 when it cannot be read), "main_ns",
 * "done_ns": CLOCK_MONOTONIC (profwrap's clock) when main started and when the work was done}. Exit status 0,
 * 2 on bad usage, 1 when a thread cannot be started. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t g_sink; /* keeps the loops' work */

#define SPIN_THREADS 3

static uint64_t cpu_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t process_cpu_ns(void)
{
	return cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static __attribute__((noinline)) void spin_arith_on(clockid_t clock, uint64_t until_ns)
{
	while (cpu_ns(clock) < until_ns)
		for (int i = 0; i < 100000; i++)
			g_sink = g_sink * 3 + 1;
}

static __attribute__((noinline)) void spin_arith(uint64_t until_ns)
{
	spin_arith_on(CLOCK_PROCESS_CPUTIME_ID, until_ns);
}

/* Spins for ns of the process's CPU time; returns the CPU time it took (computed after the call, so the call is
 * not a tail call and this frame stays on the stack). */
static __attribute__((noinline)) uint64_t spin_major(uint64_t ns)
{
	uint64_t t0 = process_cpu_ns();
	spin_arith(t0 + ns);
	return process_cpu_ns() - t0;
}

/* Not the same code as spin_major, which the compiler would make one function of. */
static __attribute__((noinline)) uint64_t spin_minor(uint64_t ns)
{
	uint64_t t0 = process_cpu_ns();
	spin_arith(t0 + ns);
	g_sink ^= 1;
	return process_cpu_ns() - t0;
}

/* The POSIX timers the process has, or -1. */
static int timers(void)
{
	FILE *f = fopen("/proc/self/timers", "r");
	if (!f)
		return -1;
	char line[256];
	int n = 0;
	while (fgets(line, sizeof line, f))
		n += strncmp(line, "ID:", 3) == 0;
	fclose(f);
	return n;
}

static void *spin_thread(void *ms)
{
	spin_arith_on(CLOCK_THREAD_CPUTIME_ID, cpu_ns(CLOCK_THREAD_CPUTIME_ID) + *(uint64_t *)ms * 1000000u);
	return NULL;
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

/* Starts n threads that each spin for ms ms of their own CPU time, and waits for them. 0, or -1 when one
 * could not be started. */
static int spin_threads(int n, uint64_t ms)
{
	pthread_t t[SPIN_THREADS];
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, spin_thread, &ms) != 0) {
			fprintf(stderr, "cpu_spin: pthread_create failed\n");
			return -1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "arith") != 0 && strcmp(argv[1], "clock") != 0 &&
			  strcmp(argv[1], "threads") != 0 && strcmp(argv[1], "short") != 0 && strcmp(argv[1], "split") != 0) ||
	    atol(argv[2]) <= 0) {
		fprintf(stderr, "usage: cpu_spin arith|clock|threads|split MS, cpu_spin short N\n");
		return 2;
	}
	uint64_t main_ns = cpu_ns(CLOCK_MONOTONIC);
	uint64_t n = (uint64_t)atol(argv[2]), until = process_cpu_ns() + n * 1000000u, calls = 0; /* MS, or N */
	uint64_t major_ns = 0, minor_ns = 0;
	if (strcmp(argv[1], "arith") == 0) {
		spin_arith(until);
	} else if (strcmp(argv[1], "clock") == 0) {
		calls = spin_clock(until);
	} else if (strcmp(argv[1], "split") == 0) {
		while (process_cpu_ns() < until) {
			major_ns += spin_major(150000000);
			minor_ns += spin_minor(50000000);
		}
	} else if (strcmp(argv[1], "threads") == 0) {
		if (spin_threads(SPIN_THREADS, n) < 0)
			return 1;
	} else {
		for (uint64_t i = 0; i < n; i++)
			if (spin_threads(1, 1) < 0)
				return 1;
	}
	uint64_t done_ns = cpu_ns(CLOCK_MONOTONIC);
	printf("{\"mode\": \"%s\", \"calls\": %llu, \"cpu_ns\": %llu, \"timers\": %d, \"major_ns\": %llu, "
	       "\"minor_ns\": %llu, \"main_ns\": %llu, \"done_ns\": %llu}\n",
	       argv[1], (unsigned long long)calls, (unsigned long long)process_cpu_ns(), timers(),
	       (unsigned long long)major_ns, (unsigned long long)minor_ns, (unsigned long long)main_ns,
	       (unsigned long long)done_ns);
	return 0;
}
