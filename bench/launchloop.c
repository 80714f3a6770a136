/* launchloop [N [RUNS]]: times N cudaLaunchKernel calls against the CUDA runtime it is linked with (the fake
 * one of tests/fakes, under `make bench`), RUNS times (default 1,000,000 and 5), and prints the best run:
 *
 *   launchloop calls=1000000 runs=5 ns_per_call=... cpu_ns_per_call=...
 *
 * Run plainly it is the runtime's own cost; under profwrap the difference is what the wrapper adds (kernel
 * name from its cache, the record). The stream is synchronised after each run, outside the timing. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The "kernel": only its address is launched. */
void launchloop_kernel(float *x);
void launchloop_kernel(float *x)
{
	(void)x;
}

static unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	if (!n || runs <= 0) {
		fprintf(stderr, "launchloop: usage: launchloop [CALLS [RUNS]] (positive integers)\n");
		return 2;
	}
	cudaStream_t stream;
	if (cudaStreamCreate(&stream) != cudaSuccess) {
		fprintf(stderr, "launchloop: cudaStreamCreate failed\n");
		return 1;
	}
	float *arg = NULL;
	void *args[] = {&arg};
	dim3 grid = {1, 1, 1}, block = {32, 1, 1};
	unsigned long long best = ~0ull, best_cpu = ~0ull;
	for (int r = 0; r < runs; r++) {
		unsigned long long t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		for (unsigned long long i = 0; i < n; i++)
			if (cudaLaunchKernel((const void *)launchloop_kernel, grid, block, args, 0, stream) != cudaSuccess) {
				fprintf(stderr, "launchloop: cudaLaunchKernel failed\n");
				return 1;
			}
		unsigned long long t = clock_ns(CLOCK_MONOTONIC) - t0, c = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		best = t < best ? t : best;
		best_cpu = c < best_cpu ? c : best_cpu;
		cudaStreamSynchronize(stream);
	}
	printf("launchloop calls=%llu runs=%d ns_per_call=%.1f cpu_ns_per_call=%.1f\n", n, runs, (double)best / (double)n,
	       (double)best_cpu / (double)n);
	cudaStreamDestroy(stream);
	return 0;
}
