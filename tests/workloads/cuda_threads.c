/* Many threads launching at once, as a PyTorch process has them (the main thread, autograd's device threads,
 * data loader pin-memory threads, NCCL's, a compile worker's): CUPTI 13 fills a buffer per launching thread,
 * so a profiler's buffer pool must hold one for each of them, or CUPTI drops their records.
 *
 * THREADS threads each launch LAUNCHES kernels, all at once (a barrier), and stay until every one has.
 * Prints the ground truth for tests/integration/test_gpu_threads.py:
 *   expect kernels N */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

enum { THREADS = 48, LAUNCHES = 10 };

static pthread_barrier_t started, launched;
static int failed;

static void kernel(void)
{
}

static void *launcher(void *arg)
{
	dim3 one = { 1, 1, 1 };

	(void)arg;
	pthread_barrier_wait(&started);
	for (int i = 0; i < LAUNCHES; i++)
		if (cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, cudaStreamPerThread) != cudaSuccess)
			__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
	pthread_barrier_wait(&launched);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	pthread_barrier_init(&started, NULL, THREADS);
	pthread_barrier_init(&launched, NULL, THREADS);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, launcher, NULL) != 0)
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (failed || cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	printf("expect kernels %d\n", THREADS * LAUNCHES);
	return 0;
}
