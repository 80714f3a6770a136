/* A few launches among many CUDA calls that enqueue nothing, as PyTorch makes them (cudaGetDevice before nearly
 * every operation, stream and event queries): CUPTI's RUNTIME kind would make an API record of each. Prints
 * the ground truth for tests/integration/test_gpu_api_records.py:
 *   expect kernels N     kernels launched
 *   expect quiet N       calls that enqueued nothing */
#include <stdio.h>

#include <cuda_runtime_api.h>

enum { KERNELS = 10, QUERIES = 2000 };

static void kernel(void)
{
}

int main(void)
{
	dim3 one = { 1, 1, 1 };
	int device = -1, quiet = 0;

	for (int i = 0; i < KERNELS; i++) {
		for (int q = 0; q < QUERIES / KERNELS / 2; q++, quiet += 2)
			if (cudaGetDevice(&device) != cudaSuccess || cudaSetDevice(device) != cudaSuccess)
				return 1;
		if (cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, 0) != cudaSuccess)
			return 1;
	}
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	printf("expect kernels %d\n", KERNELS);
	printf("expect quiet %d\n", quiet + 1);
	return 0;
}
