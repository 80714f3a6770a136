/* The fake CUDA driver: only what a profiler checks before it loads CUPTI (that a driver is there, and its
 * version: FAKECUDA_DRIVER_VERSION, e.g. 12080 for an older driver; default CUDA_VERSION). The fake runtime
 * (cudart.c) simulates the GPU itself and never calls the driver. */
#include <stdlib.h>

#include <cuda.h>

CUresult cuInit(unsigned int flags)
{
	return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version)
{
	const char *v = getenv("FAKECUDA_DRIVER_VERSION");

	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = v && *v ? atoi(v) : CUDA_VERSION;
	return CUDA_SUCCESS;
}
