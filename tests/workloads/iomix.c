/* A workload with known figures: T threads each write and read back N blocks of B bytes of their own file
 * and sleep S times; the main thread forks F children that each write one block and _exit with a known
 * code. It prints, in one write(), the wrapped calls it made and the bytes it moved, so a test can compare
 * them with the report exactly.
 *
 * usage: iomix DIR THREADS BLOCKS BLOCK_BYTES SLEEPS FORKS */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static long blocks, block_bytes, sleeps;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	char path[4096];
	snprintf(path, sizeof path, "%s/iomix-%ld.dat", dir, id);
	char *buf = malloc((size_t)block_bytes);
	if (!buf)
		die("malloc");
	memset(buf, (int)id, (size_t)block_bytes);
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0)
		die("open for writing");
	for (long i = 0; i < blocks; i++)
		if (write(fd, buf, (size_t)block_bytes) != block_bytes)
			die("write");
	close(fd);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open for reading");
	for (long i = 0; i < blocks; i++)
		if (read(fd, buf, (size_t)block_bytes) != block_bytes)
			die("read");
	close(fd);
	struct timespec ts = {0, 1000000};
	for (long i = 0; i < sleeps; i++)
		nanosleep(&ts, NULL);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: iomix DIR THREADS BLOCKS BLOCK_BYTES SLEEPS FORKS\n");
		return 2;
	}
	dir = argv[1];
	long threads = atol(argv[2]);
	blocks = atol(argv[3]);
	block_bytes = atol(argv[4]);
	sleeps = atol(argv[5]);
	long forks = atol(argv[6]);
	if (threads < 1 || threads > 1024 || blocks < 0 || block_bytes < 1 || sleeps < 0 || forks < 0 || forks > 1000)
		return 2;

	pthread_t *tids = calloc((size_t)threads, sizeof *tids);
	for (long t = 0; t < threads; t++)
		if (pthread_create(&tids[t], NULL, worker, (void *)t))
			die("pthread_create");

	long exit_sum = 0;
	for (long f = 0; f < forks; f++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			char path[4096], one = 'x';
			snprintf(path, sizeof path, "%s/iomix-child-%ld.dat", dir, f);
			int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
			if (fd < 0 || write(fd, &one, 1) != 1)
				_exit(100);
			close(fd);
			_exit((int)(f % 7));
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
			die("waitpid");
		exit_sum += WEXITSTATUS(st);
	}
	for (long t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	free(tids);

	/* Wrapped calls: per thread 2 opens, 2 closes, blocks writes and reads, sleeps nanosleeps; per fork a
	 * fork and a waitpid here and an open, write, close and _exit in the child; a join per thread; and the
	 * write() below, which is not in file_writes. */
	long calls = threads * (4 + 2 * blocks + sleeps) + forks * (2 + 4) + threads + 1;
	char out[512];
	int n = snprintf(out, sizeof out,
			 "{\"calls\":%ld,\"child_calls\":%ld,\"reads\":%ld,\"read_bytes\":%ld,\"file_writes\":%ld,"
			 "\"file_write_bytes\":%ld,\"forks\":%ld,\"exit_sum\":%ld}\n",
			 calls, forks * 4, threads * blocks, threads * blocks * block_bytes, threads * blocks + forks,
			 threads * blocks * block_bytes + forks, forks, exit_sum);
	if (write(1, out, (size_t)n) != n)
		return 3;
	return 0;
}
