/* A module unloaded and another loaded after it, as a library of kernels is dlclose'd and another opened (or a
 * JIT module replaced), on the fake libraries: registration as nvcc's generated code makes it, then launches
 * of each module's kernel. The fake CUPTI, like one that frees what a module's kernels used, gives the first
 * kernel's name string to the second kernel's name once the first module is unregistered.
 *
 * Prints the ground truth for tests/integration/test_kernel_names_unload.py:
 *   expect kernel NAME COUNT   kernels that ran, by name */
#include <stdio.h>

#include <cuda_runtime_api.h>

/* nvcc's registration entry points (crt/host_runtime.h declares them for C++ only) */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
			    int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);

enum { ALPHA = 4, BETA = 6 };

static void stub_alpha(void)
{
}

static void stub_beta(void)
{
}

static char alpha_name[] = "_Z12kernel_alphav", beta_name[] = "_Z11kernel_betav";
static int fatbin_alpha, fatbin_beta; /* stand for the modules' fat binaries */

static int run(void (*stub)(void), char *name, void *fatbin, int n)
{
	dim3 one = { 1, 1, 1 };
	void **module = __cudaRegisterFatBinary(fatbin);

	__cudaRegisterFunction(module, (const char *)stub, name, name, -1, NULL, NULL, NULL, NULL, NULL);
	__cudaRegisterFatBinaryEnd(module);
	for (int i = 0; i < n; i++)
		if (cudaLaunchKernel((const void *)stub, one, one, NULL, 0, 0) != cudaSuccess)
			return 1;
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	__cudaUnregisterFatBinary(module);
	return 0;
}

int main(void)
{
	if (run(stub_alpha, alpha_name, &fatbin_alpha, ALPHA) || run(stub_beta, beta_name, &fatbin_beta, BETA))
		return 1;
	printf("expect kernel %s %d\n", alpha_name, ALPHA);
	printf("expect kernel %s %d\n", beta_name, BETA);
	return 0;
}
