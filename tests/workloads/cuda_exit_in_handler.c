/* _exit from a signal handler, as programs end a stuck run (a watchdog alarm, a SIGTERM handler that must not
 * run atexit work): _exit is async-signal-safe, so the handler may interrupt anything, CUDA and CUPTI included
 * (the fake CUPTI, as CUPTI does in its callbacks, writes a launch's records under its lock on the launching
 * thread). A profiler's _exit must then do only async-signal-safe work: a CUPTI flush there would wait for the
 * lock its own thread holds, forever.
 *
 * Launches kernels without end; a SIGALRM every 50 us calls _exit(0) from its handler. Prints nothing. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

static void kernel(void)
{
}

static void on_alarm(int sig)
{
	(void)sig;
	_exit(0);
}

int main(void)
{
	struct itimerval every = { { 0, 50 }, { 0, 2000 } };
	dim3 one = { 1, 1, 1 };

	if (cudaDeviceSynchronize() != cudaSuccess) /* CUDA (and a profiler's CUPTI) started before the alarm */
		return 1;
	signal(SIGALRM, on_alarm);
	if (setitimer(ITIMER_REAL, &every, NULL) != 0)
		return 1;
	for (;;)
		if (cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, 0) != cudaSuccess)
			return 1;
}
