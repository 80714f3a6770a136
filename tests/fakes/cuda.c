/* The fake CUDA driver: only what a profiler checks before it loads CUPTI (that a driver is there). The fake
 * runtime (cudart.c) simulates the GPU itself and never calls the driver. */
#include <cuda.h>

CUresult cuInit(unsigned int flags)
{
	return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = CUDA_VERSION;
	return CUDA_SUCCESS;
}
