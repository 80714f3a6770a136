/* GPU work that the program never waits for through a CUDA call, then a death that runs no exit handler: the
 * launches return at once, the program sleeps (a data loader stalled, a hang) and is killed with SIGKILL.
 * What ran on the GPU is only in CUPTI's buffers, partly filled, until someone flushes them: a profiler must
 * do that itself, periodically, off the program's threads, or lose it all.
 *
 * Usage: cuda_no_sync SECONDS [term]   (how long to sleep before SIGKILL; term: SIGTERM instead, which the
 * program handles by calling exit(), as a training script's signal handler does: exit handlers then run, and
 * a profiler's last flush with them)
 * Prints, before sleeping, the ground truth for tests/integration/test_gpu_no_sync.py:
 *   expect kernels N */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

enum { KERNELS = 9 };

static void kernel(void)
{
}

static void on_term(int sig)
{
	(void)sig;
	exit(0);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
	dim3 one = { 1, 1, 1 };

	for (int i = 0; i < KERNELS; i++)
		if (cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, 0) != cudaSuccess)
			return 1;
	printf("expect kernels %d\n", KERNELS);
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "term") == 0) {
		signal(SIGTERM, on_term);
		nanosleep(&ts, NULL);
		raise(SIGTERM);
	}
	nanosleep(&ts, NULL);
	raise(SIGKILL);
	return 0;
}
