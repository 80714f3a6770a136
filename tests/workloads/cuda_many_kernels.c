/* More distinct kernels than a profiler's per-address name tables hold (PyTorch registers tens of
 * thousands): KERNELS kernels registered as nvcc's generated code registers them (__cudaRegisterFunction,
 * each name a string of the module's), each launched once on the fake GPU. Prints `expect kernels N` and
 * the names' prefix, for tests/integration/test_gpu_nesting.py. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

/* nvcc's entry points, declared by its headers for C++ only. */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaRegisterFunction(void **handle, const char *host_stub, char *device_fun, const char *device_name,
			    int thread_limit, uint3 *tid, uint3 *bid, dim3 *block, dim3 *grid, int *warp_size);

enum { KERNELS = 12000 };

static char stubs[KERNELS]; /* the host stubs: only their addresses are launched */
static char names[KERNELS][24];
static char fatbin[16];

int main(void)
{
	void **module = __cudaRegisterFatBinary(fatbin);
	dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };

	for (int i = 0; i < KERNELS; i++) {
		snprintf(names[i], sizeof names[i], "many_kernel_%d", i);
		__cudaRegisterFunction(module, &stubs[i], names[i], names[i], -1, NULL, NULL, NULL, NULL, NULL);
	}
	__cudaRegisterFatBinaryEnd(module);
	for (int i = 0; i < KERNELS; i++)
		if (cudaLaunchKernel(&stubs[i], grid, block, NULL, 0, NULL) != cudaSuccess) {
			fprintf(stderr, "cuda_many_kernels: launch %d failed\n", i);
			return 1;
		}
	if (cudaDeviceSynchronize() != cudaSuccess) {
		fprintf(stderr, "cuda_many_kernels: cudaDeviceSynchronize failed\n");
		return 1;
	}
	printf("expect kernels %d\n", KERNELS);
	printf("expect prefix many_kernel_\n");
	return 0;
}
