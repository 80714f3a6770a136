/* Files named relative to a working directory that changes, and to directory descriptors, in DIR (made by the
 * caller, empty): a different file of each name in each of DIR/a, DIR/b, DIR/c and DIR/d.
 *   chdir(DIR/a), f.txt: 100 B written; chdir("../b"), f.txt: 200 B written;
 *   openat(a's descriptor, "g.txt"): 10 B written; openat(b's descriptor, "g.txt"): 20 B written;
 *   fchdir(c's descriptor), f.txt: 300 B written; DIR/a/f.txt (absolute) and "./f.txt" (c's) read whole;
 *   another thread chdir(DIR/d), then the main thread writes f.txt: 400 B.
 * Prints "ok". Exit 1 on any failure. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *dir;

static int fail(const char *what)
{
	perror(what);
	return 1;
}

/* Writes n bytes to a new file name, relative to dirfd (open() for the working directory's). */
static int write_new(int dirfd, const char *name, size_t n)
{
	char buf[400];
	memset(buf, 'x', sizeof buf);
	int flags = O_WRONLY | O_CREAT | O_TRUNC;
	int fd = dirfd == AT_FDCWD ? open(name, flags, 0644) : openat(dirfd, name, flags, 0644);
	if (fd < 0 || write(fd, buf, n) != (ssize_t)n)
		return fail(name);
	return close(fd);
}

static int read_whole(const char *name)
{
	char buf[512];
	int fd = open(name, O_RDONLY);
	if (fd < 0)
		return fail(name);
	while (read(fd, buf, sizeof buf) > 0)
		;
	return close(fd);
}

static void *to_d(void *arg)
{
	char d[4096];
	snprintf(d, sizeof d, "%s/d", dir);
	*(int *)arg = chdir(d);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: cwd_files DIR\n");
		return 2;
	}
	dir = argv[1];
	if (chdir(dir) || mkdir("a", 0755) || mkdir("b", 0755) || mkdir("c", 0755) || mkdir("d", 0755))
		return fail(dir);
	int a = open("a", O_RDONLY | O_DIRECTORY), b = open("b", O_RDONLY | O_DIRECTORY);
	int c = open("c", O_RDONLY | O_DIRECTORY);
	if (a < 0 || b < 0 || c < 0)
		return fail("open a directory");
	if (chdir("a") || write_new(AT_FDCWD, "f.txt", 100) || chdir("../b") || write_new(AT_FDCWD, "f.txt", 200))
		return fail("chdir");
	if (write_new(a, "g.txt", 10) || write_new(b, "g.txt", 20))
		return 1;
	char abs_a[4096];
	snprintf(abs_a, sizeof abs_a, "%s/a/f.txt", dir);
	if (fchdir(c) || write_new(AT_FDCWD, "f.txt", 300) || read_whole(abs_a) || read_whole("./f.txt"))
		return fail("fchdir");
	pthread_t t;
	int rc = -1;
	if (pthread_create(&t, NULL, to_d, &rc) || pthread_join(t, NULL) || rc || write_new(AT_FDCWD, "f.txt", 400))
		return fail("chdir in a thread");
	close(a);
	close(b);
	close(c);
	puts("ok");
	return 0;
}
