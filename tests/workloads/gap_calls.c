/* gap_calls MODE ARGS: calls each made a known number of times, printed as key=value lines (the ground truth
 * test_gap_calls.py compares the report with).
 *   mutex N M   N locks of a mutex another thread holds (it lets go only once the lock waits for it), then M
 *               locks that find it free
 *   polls N     a pipe with a byte in it, then N calls each of ppoll, pselect and epoll_pwait, all ready
 *   sizes PATH  PATH written by one pwritev2 and read back by one preadv2, sized by one ftruncate and one
 *               fallocate, then one fstat
 *   errno DIR   DIR listed with errno set to EDOM before each readdir (the end of a listing leaves errno
 *               alone), then stat and fstat that fail: the errno each call left */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t held, released;
static long rounds;

static int die(const char *what)
{
	perror(what);
	return 1;
}

/* glibc's lock word is 2 once a locker found the mutex held and waits (or is about to) */
static void wait_for_waiter(void)
{
	while (__atomic_load_n(&lock.__data.__lock, __ATOMIC_ACQUIRE) != 2)
		usleep(100);
}

static void *waiter(void *unused)
{
	(void)unused;
	for (long i = 0; i < rounds; i++) {
		sem_wait(&held);
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
		sem_post(&released);
	}
	return NULL;
}

static int mutex_mode(long n, long m)
{
	rounds = n;
	sem_init(&held, 0, 0);
	sem_init(&released, 0, 0);
	pthread_t t;
	if (pthread_create(&t, NULL, waiter, NULL))
		return die("pthread_create");
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		sem_post(&held);
		wait_for_waiter();
		pthread_mutex_unlock(&lock);
		sem_wait(&released);
	}
	pthread_join(t, NULL);
	for (long i = 0; i < m; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
	printf("contended=%ld\nuncontended=%ld\n", n, n + m);
	return 0;
}

static int polls_mode(long n)
{
	int fds[2];
	if (pipe(fds) < 0 || write(fds[1], "x", 1) != 1)
		return die("pipe");
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN};
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev) < 0)
		return die("epoll");
	struct timespec zero = {0, 0};
	long ready = 0;
	for (long i = 0; i < n; i++) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		fd_set r;
		FD_ZERO(&r);
		FD_SET(fds[0], &r);
		struct epoll_event got;
		ready += ppoll(&p, 1, &zero, NULL) == 1;
		ready += pselect(fds[0] + 1, &r, NULL, NULL, &zero, NULL) == 1;
		ready += epoll_pwait(ep, &got, 1, 0, NULL) == 1;
	}
	printf("polls=%ld\nready=%ld\n", n, ready);
	return 0;
}

static int sizes_mode(const char *path)
{
	static char a[1000], b[2345];
	memset(a, 'a', sizeof a);
	memset(b, 'b', sizeof b);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return die(path);
	struct iovec out[2] = {{a, sizeof a}, {b, sizeof b}};
	ssize_t written = pwritev2(fd, out, 2, 0, 0);
	struct iovec in[2] = {{b, sizeof b}, {a, sizeof a}};
	ssize_t read = preadv2(fd, in, 2, 0, 0);
	int truncated = ftruncate(fd, 12345);
	int allocated = fallocate(fd, 0, 0, 65536);
	struct stat st;
	if (fstat(fd, &st) < 0)
		return die("fstat");
	close(fd);
	printf("written=%zd\nread=%zd\nftruncate=%d\nfallocate=%d\nsize=%lld\n", written, read, truncated, allocated,
	       (long long)st.st_size);
	return 0;
}

static int errno_mode(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return die(dir);
	long entries = 0;
	for (;;) {
		errno = EDOM;
		if (!readdir(d))
			break;
		entries++;
	}
	int after_end = errno;
	closedir(d);
	struct stat st;
	errno = 0;
	int rc = stat("", &st);
	int after_stat = errno;
	errno = 0;
	rc += fstat(-1, &st);
	printf("entries=%ld\nafter_end=%s\nafter_stat=%s\nafter_fstat=%s\nfailed=%d\n", entries,
	       after_end == EDOM ? "EDOM" : strerror(after_end), after_stat == ENOENT ? "ENOENT" : strerror(after_stat),
	       errno == EBADF ? "EBADF" : strerror(errno), -rc);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "mutex") == 0)
		return mutex_mode(atol(argv[2]), atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "polls") == 0)
		return polls_mode(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "sizes") == 0)
		return sizes_mode(argv[2]);
	if (argc == 3 && strcmp(argv[1], "errno") == 0)
		return errno_mode(argv[2]);
	fprintf(stderr, "usage: gap_calls mutex N M | polls N | sizes PATH | errno DIR\n");
	return 2;
}
