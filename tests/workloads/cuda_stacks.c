/* cuda_stacks: calls made from known functions at known lines, so that the call stacks profwrap captures
 * (--stacks, --stack-threshold, --sample) have one right answer. Linked against the fake CUDA libraries
 * (tests/fakes). Every line a stack must point at carries a marker comment of the form "@name" (at sign,
 * name, in a C comment) on that line; tests/integration/test_stacks.py reads the line numbers from this file,
 * never from a table of its own. The functions that make the calls are static, never inlined nor cloned:
 * they are in the symbol table (and the DWARF) but not in .dynsym, so a stripped copy of the program has
 * nothing that names them.
 *
 *     cuda_stacks calls N1 N2 N3 N4 N5 [THRESHOLD_US]
 *         sleep_a: usleep(3000) N1 times; sleep_b: usleep(3000) N2 times; fast: usleep(0) N3 times;
 *         sync_here: cudaStreamSynchronize and cudaDeviceSynchronize N4 times each, with nothing queued
 *         (microseconds: they get stacks by kind, not by duration); alloc_here: cudaMalloc and cudaFree N5
 *         times each; copy_here: cudaMemcpy (synchronous, 256 bytes host to device: a stack by kind) and
 *         cudaMemcpyAsync (the same bytes, asynchronous: no stack by kind) N5 times each, then one
 *         cudaStreamSynchronize; launch_here: cudaLaunchKernel N5 times (asynchronous: no stack by kind);
 *         mode_calls itself: one cudaMalloc and one cudaFree of the copy buffer, one cudaStreamSynchronize.
 *         The calls that get a stack by duration only (usleep, cudaMemcpyAsync, cudaLaunchKernel) are
 *         timed by the program: "over" counts those that took THRESHOLD_US (default 100) or more by its
 *         clock, which brackets the profiler's measurement of the same call (a call not counted there is
 *         under the threshold for the profiler too; usleep(3000) is never under 3000 us).
 *     cuda_stacks spin HERE_MS OTHER_MS
 *         spin_here burns HERE_MS ms of the thread's CPU time, then spin_other OTHER_MS ms (CPU time, by
 *         CLOCK_THREAD_CPUTIME_ID), calling nothing the profiler wraps.
 *     cuda_stacks deep DEPTH N
 *         deep_rec recurses DEPTH levels (DEPTH frames of deep_rec), then deep_leaf calls usleep(3000); N
 *         times.
 *
 * Each mode prints one line of JSON to stdout, its ground truth: {"mode":..., the counts it made (calls:
 * "calls" by marker name and "over"), "pid", "tid"}. Exit status 0 on success, 1 when a call fails, 2 on bad usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#define SLOW_US 3000
#if defined(__clang__)
#define KEEP __attribute__((noinline, used)) /* clang makes no clones of functions */
#else
#define KEEP __attribute__((noinline, noclone, used))
#endif

/* Stores that the compiler must keep: they follow every marked call, so no marked call is a tail call and
 * its return address stays in the function that made it. */
static volatile long g_sink;

static void die(const char *what, long code)
{
	fprintf(stderr, "cuda_stacks: %s failed (%ld%s%s)\n", what, code, errno ? ", " : "", errno ? strerror(errno) : "");
	exit(1);
}

#define CUDA(call)                                  \
	do {                                        \
		cudaError_t e_ = (call);            \
		if (e_ != cudaSuccess)              \
			die(#call, (long)e_);       \
	} while (0)

static void usage(void)
{
	fprintf(stderr, "usage: cuda_stacks calls N1 N2 N3 N4 N5 [THRESHOLD_US] | spin HERE_MS OTHER_MS |"
			" deep DEPTH N\n");
	exit(2);
}

static long arg_num(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		usage();
	return v;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A kernel's host stub (never called: the fake GPU only names it). */
void stacks_kernel(float *x, int n);
void stacks_kernel(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] += 1.0f;
}

/* ---- calls ---- */

/* The program's own threshold (ns) and, per function, how many of its calls took at least that long by the
 * program's clock. That clock brackets the profiler's measurement of the same call, so a call under the
 * threshold here is under it for the profiler too: a call counted here may have a stack, one not counted
 * may not. */
static uint64_t g_threshold_ns;
static long g_over_a, g_over_b, g_over_fast, g_over_async, g_over_launch;

static KEEP void sleep_a(long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
		usleep(SLOW_US); /* @sleep_a */
		g_over_a += clock_ns(CLOCK_MONOTONIC) - t0 >= g_threshold_ns;
	}
}

static KEEP void sleep_b(long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
		usleep(SLOW_US); /* @sleep_b */
		g_over_b += clock_ns(CLOCK_MONOTONIC) - t0 >= g_threshold_ns;
	}
}

static KEEP void fast(long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
		usleep(0); /* @fast */
		g_over_fast += clock_ns(CLOCK_MONOTONIC) - t0 >= g_threshold_ns;
	}
}

static KEEP void sync_here(long n, cudaStream_t s)
{
	for (long i = 0; i < n; i++) {
		CUDA(cudaStreamSynchronize(s)); /* @sync_stream */
		g_sink++;
		CUDA(cudaDeviceSynchronize()); /* @sync_device */
		g_sink++;
	}
}

static KEEP void alloc_here(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = NULL;

		CUDA(cudaMalloc(&p, 4096)); /* @malloc */
		g_sink++;
		CUDA(cudaFree(p)); /* @free */
		g_sink++;
	}
}

static KEEP void copy_here(long n, void *dev, const void *host, size_t bytes, cudaStream_t s)
{
	for (long i = 0; i < n; i++) {
		CUDA(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice)); /* @memcpy */
		g_sink++;
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
		CUDA(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s)); /* @memcpy_async */
		g_over_async += clock_ns(CLOCK_MONOTONIC) - t0 >= g_threshold_ns;
	}
	CUDA(cudaStreamSynchronize(s)); /* @copy_sync */
	g_sink++;
}

static KEEP void launch_here(long n, float *x, int len, cudaStream_t s)
{
	void *args[] = { &x, &len };
	dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };

	for (long i = 0; i < n; i++) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
		CUDA(cudaLaunchKernel((const void *)stacks_kernel, grid, block, args, 0, s)); /* @launch */
		g_over_launch += clock_ns(CLOCK_MONOTONIC) - t0 >= g_threshold_ns;
	}
}

static int mode_calls(long n1, long n2, long n3, long n4, long n5, long threshold_us)
{
	enum { COPY_BYTES = 256 };
	static char host[COPY_BYTES];
	cudaStream_t s;
	void *dev;

	g_threshold_ns = (uint64_t)threshold_us * 1000u;
	CUDA(cudaStreamCreate(&s));
	CUDA(cudaMalloc(&dev, COPY_BYTES)); /* @setup_malloc */
	g_sink++;
	sleep_a(n1); /* @call_sleep_a */
	sleep_b(n2); /* @call_sleep_b */
	fast(n3);
	sync_here(n4, s);
	alloc_here(n5);
	copy_here(n5, dev, host, COPY_BYTES, s);
	launch_here(n5, dev, COPY_BYTES / (int)sizeof(float), s);
	CUDA(cudaStreamSynchronize(s)); /* @final_sync */
	g_sink++;
	CUDA(cudaFree(dev)); /* @setup_free */
	g_sink++;
	CUDA(cudaStreamDestroy(s));
	printf("{\"mode\":\"calls\",\"threshold_us\":%ld,\"slow_us\":%d,\"calls\":{\"sleep_a\":%ld,\"sleep_b\":%ld,"
	       "\"fast\":%ld,\"sync_stream\":%ld,\"sync_device\":%ld,\"malloc\":%ld,\"free\":%ld,\"memcpy\":%ld,"
	       "\"memcpy_async\":%ld,\"launch\":%ld,\"copy_sync\":1,\"setup_malloc\":1,\"final_sync\":1,"
	       "\"setup_free\":1},\"over\":{\"sleep_a\":%ld,\"sleep_b\":%ld,\"fast\":%ld,\"memcpy_async\":%ld,"
	       "\"launch\":%ld},\"pid\":%d,\"tid\":%d}\n",
	       threshold_us, SLOW_US, n1, n2, n3, n4, n4, n5, n5, n5, n5, n5, g_over_a, g_over_b, g_over_fast,
	       g_over_async, g_over_launch, (int)getpid(), (int)gettid());
	return 0;
}

/* ---- spin ---- */

/* Burns the thread's CPU until ms of it have passed; returns the iterations. The clock is read once per
 * 200000 iterations, so nearly all the time is spent in the loop itself, in this function. */
static KEEP long spin_here(long ms)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)ms * 1000000u;
	long iters = 0;

	do {
		for (int i = 0; i < 200000; i++)
			g_sink = g_sink * 3 + 1; /* @spin_here */
		iters++;
	} while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	return iters;
}

static KEEP long spin_other(long ms)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)ms * 1000000u;
	long iters = 0;

	do {
		for (int i = 0; i < 200000; i++)
			g_sink = g_sink * 5 + 1; /* @spin_other */
		iters++;
	} while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	return iters;
}

static int mode_spin(long here_ms, long other_ms)
{
	uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t1, t2;

	spin_here(here_ms);
	t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	spin_other(other_ms);
	t2 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	printf("{\"mode\":\"spin\",\"here_ms\":%ld,\"other_ms\":%ld,\"here_cpu_ns\":%llu,\"other_cpu_ns\":%llu,"
	       "\"pid\":%d,\"tid\":%d}\n",
	       here_ms, other_ms, (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1), (int)getpid(),
	       (int)gettid());
	return 0;
}

/* ---- deep ---- */

static KEEP void deep_leaf(void)
{
	usleep(SLOW_US); /* @deep_leaf */
	g_sink++;
}

/* depth frames of deep_rec above deep_leaf. The store after the call keeps it from being a tail call (and
 * the recursion from becoming a loop). */
static KEEP void deep_rec(long depth)
{
	if (depth <= 1)
		deep_leaf(); /* @deep_rec_leaf */
	else
		deep_rec(depth - 1); /* @deep_rec */
	g_sink++;
}

static int mode_deep(long depth, long n)
{
	for (long i = 0; i < n; i++) {
		deep_rec(depth); /* @mode_deep */
		g_sink++;
	}
	printf("{\"mode\":\"deep\",\"depth\":%ld,\"n\":%ld,\"slow_us\":%d,\"pid\":%d,\"tid\":%d}\n", depth, n, SLOW_US,
	       (int)getpid(), (int)gettid());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 7 && argc <= 8 && strcmp(argv[1], "calls") == 0)
		return mode_calls(arg_num(argv[2], 0, 100000), arg_num(argv[3], 0, 100000), arg_num(argv[4], 0, 1000000),
				  arg_num(argv[5], 0, 100000), arg_num(argv[6], 0, 100000),
				  argc == 8 ? arg_num(argv[7], 0, 10000000) : 100);
	if (argc == 4 && strcmp(argv[1], "spin") == 0)
		return mode_spin(arg_num(argv[2], 1, 60000), arg_num(argv[3], 1, 60000));
	if (argc == 4 && strcmp(argv[1], "deep") == 0)
		return mode_deep(arg_num(argv[2], 1, 10000), arg_num(argv[3], 1, 10000));
	usage();
	return 2;
}
