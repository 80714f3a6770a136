/* One thread opens and closes, another reads through the same descriptor number: the main thread opens
 * DIR/f<i> (i = 0..FILES-1, f<i> of (i + 1) * 1000 bytes), hands the descriptor to the reader, which reads it
 * to the end in 100-byte reads, and closes it when the reader is done; every file gets the same number. The
 * threads' records reach the collector in separate batches, so a reader that binds descriptors in arrival
 * order names the wrong file. Prints "fd <n> files <FILES>". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILES 3

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int handed = -1; /* the descriptor to read, -1 while none */
static int done;        /* files read */

static void *reader(void *arg)
{
	(void)arg;
	char buf[100];
	for (int i = 0; i < FILES; i++) {
		pthread_mutex_lock(&lock);
		while (handed < 0)
			pthread_cond_wait(&changed, &lock);
		int fd = handed;
		pthread_mutex_unlock(&lock);
		while (read(fd, buf, sizeof buf) > 0)
			;
		pthread_mutex_lock(&lock);
		handed = -1;
		done++;
		pthread_cond_broadcast(&changed);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fd_handoff DIR\n");
		return 2;
	}
	char path[4096], block[1000];
	memset(block, 'x', sizeof block);
	for (int i = 0; i < FILES; i++) {
		snprintf(path, sizeof path, "%s/f%d", argv[1], i);
		FILE *f = fopen(path, "w");
		for (int k = 0; f && k <= i; k++)
			fwrite(block, 1, sizeof block, f);
		if (!f || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	pthread_t t;
	if (pthread_create(&t, NULL, reader, NULL))
		return 1;
	int first_fd = -1;
	for (int i = 0; i < FILES; i++) {
		snprintf(path, sizeof path, "%s/f%d", argv[1], i);
		int fd = open(path, O_RDONLY);
		if (fd < 0 || (first_fd >= 0 && fd != first_fd)) {
			fprintf(stderr, "open %s: got %d\n", path, fd);
			return 1;
		}
		first_fd = fd;
		pthread_mutex_lock(&lock);
		handed = fd;
		pthread_cond_broadcast(&changed);
		while (done <= i)
			pthread_cond_wait(&changed, &lock);
		pthread_mutex_unlock(&lock);
		close(fd);
	}
	pthread_join(t, NULL);
	printf("fd %d files %d\n", first_fd, FILES);
	return 0;
}
