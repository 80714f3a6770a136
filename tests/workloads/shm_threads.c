/* /dev/shm beside threads that record: holds HOLD_MIB of shared memory of its own, then THREADS threads
 * write WRITES single bytes each to /dev/null, all at once, and end; then, when TAKE_MIB is not 0, it waits
 * (at most 30 s) until /dev/shm has TAKE_MIB MiB and one more free and takes TAKE_MIB MiB (shm_open +
 * posix_fallocate), as DataLoader workers pass batches. Prints {"writes":N,"took":0|1}; exits 3 when the
 * memory could not be taken.
 *   shm_threads HOLD_MIB THREADS WRITES TAKE_MIB */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static long writes;
static pthread_barrier_t all_started; /* the threads write at once: their lanes are backed together */

static void *writer(void *arg)
{
	pthread_barrier_wait(&all_started);
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	for (long i = 0; i < writes; i++)
		if (write(fd, "x", 1) != 1)
			abort();
	close(fd);
	return arg;
}

/* A shared memory object of mib MiB, its space taken, its name removed. Returns 0 or -1. */
static int take(const char *name, long mib)
{
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	shm_unlink(name);
	return fd >= 0 && posix_fallocate(fd, 0, (off_t)mib << 20) == 0 ? 0 : -1;
}

static void wait_for_room(long mib)
{
	struct statvfs sv;
	for (int i = 0; i < 3000 && statvfs("/dev/shm", &sv) == 0; i++) {
		if ((unsigned long long)sv.f_bavail * sv.f_frsize >= ((unsigned long long)mib + 1) << 20)
			return;
		struct timespec ms10 = {0, 10000000};
		nanosleep(&ms10, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s HOLD_MIB THREADS WRITES TAKE_MIB\n", argv[0]);
		return 2;
	}
	long hold = atol(argv[1]), threads = atol(argv[2]), take_mib = atol(argv[4]);
	char name[64];
	writes = atol(argv[3]);
	if (threads < 1 || threads > MAX_THREADS)
		return 2;
	snprintf(name, sizeof name, "/shm-threads-hold-%d", (int)getpid());
	if (hold && take(name, hold) < 0)
		return 3;
	pthread_t t[MAX_THREADS];
	pthread_barrier_init(&all_started, NULL, (unsigned)threads);
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, writer, NULL);
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	int took = 0;
	if (take_mib) {
		wait_for_room(take_mib);
		snprintf(name, sizeof name, "/shm-threads-take-%d", (int)getpid());
		took = take(name, take_mib) == 0;
	}
	printf("{\"writes\":%ld,\"took\":%d}\n", threads * writes, took);
	return take_mib && !took ? 3 : 0;
}
