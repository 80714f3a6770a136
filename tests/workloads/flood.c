/* A producer flood: THREADS threads, released together, each make WRITES write() calls of one byte to
 * /dev/null as fast as they can. Prints what it did: the profiler's recorded + dropped counts must add up to
 * it exactly, thread by thread. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fd;
static long writes;
static pthread_barrier_t start;

static void *flood(void *arg)
{
	long *failed = arg;
	pthread_barrier_wait(&start);
	for (long i = 0; i < writes; i++)
		if (write(fd, "x", 1) != 1)
			(*failed)++;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return fprintf(stderr, "usage: flood THREADS WRITES\n"), 2;
	int threads = atoi(argv[1]);
	writes = atol(argv[2]);
	fd = open("/dev/null", O_WRONLY);
	if (threads < 1 || writes < 1 || fd < 0)
		return 2;
	pthread_t *t = calloc((size_t)threads, sizeof *t);
	long *failed = calloc((size_t)threads, sizeof *failed);
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, flood, &failed[i]))
			return 3;
	long bad = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		bad += failed[i];
	}
	printf("threads %d writes %ld failed %ld\n", threads, writes, bad);
	return 0;
}
