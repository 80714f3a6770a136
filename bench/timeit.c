/* timeit [-n RUNS] [-q] [-m] -- COMMAND [ARGS...]: runs COMMAND RUNS times (default 1), one after the other, and
 * prints its wall time and peak resident set size, measured from outside it:
 *
 *   timeit runs=N min_s=... median_s=... mean_s=... max_s=... cpu_s=... maxrss_kb=... maxanon_kb=... status=S
 *
 * Wall time is CLOCK_MONOTONIC from just before fork to the end of the wait; cpu_s is the mean user+system
 * time of a run (the command and the children it waited for); maxrss_kb is the largest
 * ru_maxrss that wait4() reported for a run (the command's process; a child it waits for counts only if it
 * is bigger): all resident pages, file mappings included. maxanon_kb is the largest RssAnon of the command's
 * process in /proc/PID/status, sampled every 2 ms while it runs with -m, else 0 (heap and stacks, not mapped files; a peak
 * shorter than that can be missed). status is the last run's exit code, or 128+N for signal N. -q sends the
 * command's stdout and stderr to /dev/null. Used by bench/run.sh for what /usr/bin/time or hyperfine would
 * give, so neither is needed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* RssAnon of pid in kB, or -1. */
static long rss_anon_kb(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *p = strstr(buf, "RssAnon:");
	return p ? strtol(p + 8, NULL, 10) : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int runs = 1, quiet = 0, sample = 0, i = 1;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else if (strcmp(argv[i], "-q") == 0) {
			quiet = 1;
		} else if (strcmp(argv[i], "-m") == 0) {
			sample = 1;
		} else if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else {
			break;
		}
	}
	if (i >= argc || runs < 1 || runs > 100000) {
		fprintf(stderr, "usage: timeit [-n RUNS] [-q] [-m] -- COMMAND [ARGS...]\n");
		return 2;
	}
	double *t = calloc((size_t)runs, sizeof *t);
	if (!t)
		return 1;
	long maxrss = 0, maxanon = 0;
	double cpu = 0;
	int status = 0;
	for (int r = 0; r < runs; r++) {
		double t0 = now_s();
		pid_t pid = fork();
		if (pid < 0) {
			perror("timeit: fork");
			return 1;
		}
		if (pid == 0) {
			if (quiet) {
				int fd = open("/dev/null", O_WRONLY);
				if (fd >= 0) {
					dup2(fd, 1);
					dup2(fd, 2);
				}
			}
			execvp(argv[i], argv + i);
			fprintf(stderr, "timeit: %s: %s\n", argv[i], strerror(errno));
			_exit(127);
		}
		int ws;
		struct rusage ru;
		for (;;) {
			pid_t w = wait4(pid, &ws, sample ? WNOHANG : 0, &ru);
			if (w == pid)
				break;
			if (w < 0 && errno != EINTR) {
				perror("timeit: wait4");
				return 1;
			}
			if (w < 0)
				continue;
			long anon = rss_anon_kb(pid);
			if (anon > maxanon)
				maxanon = anon;
			struct timespec ts = {0, 2000000};
			nanosleep(&ts, NULL);
		}
		t[r] = now_s() - t0;
		cpu += (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		       (double)ru.ru_stime.tv_usec / 1e6;
		if (ru.ru_maxrss > maxrss)
			maxrss = ru.ru_maxrss;
		status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	}
	double sum = 0;
	for (int r = 0; r < runs; r++)
		sum += t[r];
	qsort(t, (size_t)runs, sizeof *t, cmp_double);
	double median = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
	printf("timeit runs=%d min_s=%.6f median_s=%.6f mean_s=%.6f max_s=%.6f cpu_s=%.6f maxrss_kb=%ld maxanon_kb=%ld "
	       "status=%d\n",
	       runs, t[0], median, sum / runs, t[runs - 1], cpu / runs, maxrss, maxanon, status);
	free(t);
	return 0;
}
