/* Fork children and CUDA, on the fake libraries: a process may fork before it uses CUDA (a data loader's workers
 * forked after `import torch`), and the child may then use CUDA itself; a child forked after its parent used
 * CUDA cannot (every runtime call fails with cudaErrorInitializationError), and that is the program's own
 * outcome, which must not change under a profiler.
 *
 * Usage: cuda_fork before|after
 *   before  fork first; the child launches CHILD kernels and synchronises; then the parent launches PARENT
 *   after   the parent launches PARENT kernels, then forks; the child tries cudaMalloc
 * Prints what the child saw (`child ...`, the same with profwrap or without) and the ground truth for
 * tests/integration/test_gpu_fork.py as `expect` lines:
 *   expect kernels N     kernels that ran, in both processes
 *   expect launches N    cudaLaunchKernel calls, in both processes */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

enum { CHILD = 6, PARENT = 4 };

static void kernel(void)
{
}

/* Launches n kernels and synchronises; the first failing call's code, or cudaSuccess. */
static cudaError_t launch(int n)
{
	dim3 one = { 1, 1, 1 };

	for (int i = 0; i < n; i++) {
		cudaError_t e = cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, 0);

		if (e != cudaSuccess)
			return e;
	}
	return cudaDeviceSynchronize();
}

int main(int argc, char **argv)
{
	int before = argc > 1 && strcmp(argv[1], "before") == 0;
	int status = 0;
	pid_t pid;

	if (argc < 2 || (!before && strcmp(argv[1], "after") != 0)) {
		fprintf(stderr, "usage: cuda_fork before|after\n");
		return 2;
	}
	if (!before && launch(PARENT) != cudaSuccess) {
		fprintf(stderr, "cuda_fork: the parent's launches failed\n");
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (before) {
			cudaError_t e = launch(CHILD);

			printf("child launches %s\n", e == cudaSuccess ? "ok" : cudaGetErrorName(e));
		} else {
			void *p = NULL;
			cudaError_t e = cudaMalloc(&p, 64);

			printf("child cudaMalloc %s\n", e == cudaSuccess ? "ok" : cudaGetErrorName(e));
		}
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	if (before && launch(PARENT) != cudaSuccess) {
		fprintf(stderr, "cuda_fork: the parent's launches failed\n");
		return 1;
	}
	printf("expect kernels %d\n", before ? CHILD + PARENT : PARENT);
	printf("expect launches %d\n", before ? CHILD + PARENT : PARENT);
	return 0;
}
