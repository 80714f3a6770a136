/* A program that writes COUNT fixed-size records to FILE, one write() each, and then ends in the way MODE
 * names, so that a test can check that every record committed before the end reaches the report and that
 * the report says how each process ended:
 *
 *   segv         an invalid write (to a page mapped without access): killed by SIGSEGV
 *   abort        abort(): killed by SIGABRT
 *   oom          the OOM killer's way: allocates and touches 64 MiB, then SIGKILL
 *   nomem        lowers RLIMIT_AS, a malloc fails, prints "out of memory" and exits 3
 *   fork-exit    a forked child writes COUNT2 records to FILE.child and calls _exit(7); the parent waits,
 *                prints the child's status and exits 0
 *   child-segv   the same, but the child dies by an invalid write; the parent exits 0
 *   exec         execs PROG [ARGS...] (a static helper, /bin/true)
 *   until-killed COUNT is ignored: writes records until something kills it
 *
 * Record i of a process is "<who> <i as 16 digits>\n" (24 bytes), who being "parent" or "child " (so the
 * file's bytes can be checked). Whatever it prints goes out in one write() each, to stdout.
 *
 * usage: faults MODE FILE COUNT [COUNT2 | PROG ARGS...] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define RECORD_BYTES 24

static void die(const char *what)
{
	char msg[256];
	int n = snprintf(msg, sizeof msg, "faults: %s: %s\n", what, strerror(errno));
	(void)!write(2, msg, (size_t)n);
	exit(2);
}

static void say(const char *text)
{
	if (write(1, text, strlen(text)) < 0)
		die("write to stdout");
}

static void write_records(const char *path, const char *who, long count)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0)
		die(path);
	char rec[RECORD_BYTES + 1];
	for (long i = 0; i < count; i++) {
		snprintf(rec, sizeof rec, "%-6s %016ld\n", who, i);
		if (write(fd, rec, RECORD_BYTES) != RECORD_BYTES)
			die("write");
	}
	/* left open: a process that dies loses nothing by not closing */
}

static void invalid_write(void)
{
	volatile char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		die("mmap");
	page[0] = 1;
	die("the invalid write did not fault");
}

static void kill_after_allocating(void)
{
	size_t size = 64u << 20;
	char *p = malloc(size);
	if (!p)
		die("malloc");
	for (size_t i = 0; i < size; i += 4096)
		p[i] = (char)i;
	kill(getpid(), SIGKILL);
	die("still alive after SIGKILL");
}

/* Limits the address space to what the process has mapped now plus 16 MiB, then asks for 256 MiB. */
static int out_of_memory(void)
{
	char statm[128];
	int fd = open("/proc/self/statm", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, statm, sizeof statm - 1);
	if (n <= 0)
		die("/proc/self/statm");
	close(fd);
	statm[n] = 0;
	unsigned long long vm = strtoull(statm, NULL, 10) * (unsigned long long)sysconf(_SC_PAGESIZE);
	struct rlimit rl = {vm + (16u << 20), vm + (16u << 20)};
	if (setrlimit(RLIMIT_AS, &rl) < 0)
		die("setrlimit");
	errno = 0;
	char *p = malloc(256u << 20);
	if (p) {
		say("malloc of 256 MiB succeeded under RLIMIT_AS\n");
		return 2;
	}
	say(errno == ENOMEM ? "out of memory (ENOMEM)\n" : "out of memory (not ENOMEM)\n");
	return 3;
}

static int fork_child(const char *path, long count, int crash)
{
	char child_path[4096];
	snprintf(child_path, sizeof child_path, "%s.child", path);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		write_records(child_path, "child", count);
		if (crash)
			invalid_write();
		_exit(7);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	char line[128];
	if (WIFEXITED(st))
		snprintf(line, sizeof line, "child exit %d\n", WEXITSTATUS(st));
	else
		snprintf(line, sizeof line, "child signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	say(line);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		say("usage: faults MODE FILE COUNT [COUNT2 | PROG ARGS...]\n");
		return 2;
	}
	const char *mode = argv[1], *path = argv[2];
	long count = strcmp(mode, "until-killed") == 0 ? LONG_MAX : strtol(argv[3], NULL, 10);
	write_records(path, "parent", count);
	if (strcmp(mode, "segv") == 0)
		invalid_write();
	else if (strcmp(mode, "abort") == 0)
		abort();
	else if (strcmp(mode, "oom") == 0)
		kill_after_allocating();
	else if (strcmp(mode, "nomem") == 0)
		return out_of_memory();
	else if (argc > 4 && (strcmp(mode, "fork-exit") == 0 || strcmp(mode, "child-segv") == 0))
		return fork_child(path, strtol(argv[4], NULL, 10), mode[0] == 'c');
	else if (argc > 4 && strcmp(mode, "exec") == 0) {
		execv(argv[4], argv + 4);
		die(argv[4]);
	}
	say("faults: unknown mode or missing argument\n");
	return 2;
}
