/* launchloop [N [RUNS [API]]]: times N launches against the CUDA runtime it is linked with (the fake one of
 * tests/fakes, under `make bench`), RUNS times (default 1,000,000 and 5), and prints the best run:
 *
 *   launchloop calls=1000000 runs=5 ns_per_call=... cpu_ns_per_call=...
 *
 * API is cudaLaunchKernel (the default) or __cudaLaunchKernel, which nvcc's host stubs call with the handle
 * __cudaGetKernel gave for a kernel the module registered: registered here as nvcc's generated code does.
 *
 * Run plainly it is the runtime's own cost; under profwrap the difference is what the wrapper adds (kernel
 * name from its cache, the record). The stream is synchronised after each run, outside the timing. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loop_util.h"

/* The "kernel": only its address is launched. */
void launchloop_kernel(float *x);
void launchloop_kernel(float *x)
{
	(void)x;
}

/* nvcc's entry points, declared by its headers for C++ only. */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaRegisterFunction(void **handle, const char *host_stub, char *device_fun, const char *device_name,
			    int thread_limit, uint3 *tid, uint3 *bid, dim3 *block, dim3 *grid, int *warp_size);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_stub);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shmem,
			       cudaStream_t stream);

/* The handle nvcc's host stub would launch launchloop_kernel with, NULL when none. */
static cudaKernel_t nvcc_handle(void)
{
	static char fatbin[16], name[] = "_Z17launchloop_kernelPf";
	void **module = __cudaRegisterFatBinary(fatbin);
	__cudaRegisterFunction(module, (const char *)launchloop_kernel, name, name, -1, NULL, NULL, NULL, NULL, NULL);
	__cudaRegisterFatBinaryEnd(module);
	cudaKernel_t k = NULL;
	return __cudaGetKernel(&k, (const void *)launchloop_kernel) == cudaSuccess ? k : NULL;
}

int main(int argc, char **argv)
{
	unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	const char *api = argc > 3 ? argv[3] : "cudaLaunchKernel";
	int nvcc = strcmp(api, "__cudaLaunchKernel") == 0;
	if (!n || runs <= 0 || (!nvcc && strcmp(api, "cudaLaunchKernel") != 0)) {
		fprintf(stderr, "launchloop: usage: launchloop [CALLS [RUNS [cudaLaunchKernel|__cudaLaunchKernel]]]\n");
		return 2;
	}
	cudaKernel_t handle = nvcc ? nvcc_handle() : NULL;
	if (nvcc && !handle) {
		fprintf(stderr, "launchloop: __cudaGetKernel failed\n");
		return 1;
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
			if ((nvcc ? __cudaLaunchKernel(handle, grid, block, args, 0, stream)
				  : cudaLaunchKernel((const void *)launchloop_kernel, grid, block, args, 0, stream)) !=
			    cudaSuccess) {
				fprintf(stderr, "launchloop: %s failed\n", api);
				return 1;
			}
		unsigned long long t = clock_ns(CLOCK_MONOTONIC) - t0, c = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		best = t < best ? t : best;
		best_cpu = c < best_cpu ? c : best_cpu;
		cudaStreamSynchronize(stream);
	}
	printf("launchloop api=%s calls=%llu runs=%d ns_per_call=%.1f cpu_ns_per_call=%.1f\n", api, n, runs,
	       (double)best / (double)n, (double)best_cpu / (double)n);
	cudaStreamDestroy(stream);
	return 0;
}
