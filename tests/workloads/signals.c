/* Signal handlers that meet wrapped calls.
 *
 * signals flood FILE WRITES INTERVAL_US
 *   A SIGALRM every INTERVAL_US (setitimer) while the main loop makes WRITES write()s of a 24-byte record
 *   to FILE; the handler write()s a record of its own to FILE each time, and counts itself. At the end it
 *   prints "main M handler H failed F": the writes each side made (F: writes that did not write 24 bytes).
 *   Main records are "main   <i as 16 digits>\n", the handler's "signal <i as 16 digits>\n".
 *
 * signals interrupt
 *   Wrapped calls that block (read of an empty pipe, the sleeps, poll, select, epoll_wait, sem_wait,
 *   sem_timedwait, waitpid) each interrupted by a SIGALRM 20 ms in, first with a handler installed without
 *   SA_RESTART, then with SA_RESTART. The handler feeds the pipe and posts the semaphore: in the first round
 *   at that SIGALRM (after the call was interrupted: nothing can hang), in the second at a second SIGALRM
 *   150 ms later, so that a call the kernel restarted then completes. waitpid waits for a child that exits
 *   after 300 ms. One line per call:
 *   "<round> <call> ret=<r> errno=<e> ticks=<SIGALRMs so far>[ <what the call left in its out-arguments>]",
 *   the same with and without a profiler that passes results through (waitpid's ret is 1 for the child). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RECORD_BYTES 24

static void die(const char *what)
{
	char msg[256];
	int n = snprintf(msg, sizeof msg, "signals: %s: %s\n", what, strerror(errno));
	(void)!write(2, msg, (size_t)n);
	exit(2);
}

static void say(const char *text)
{
	if (write(1, text, strlen(text)) < 0)
		die("write to stdout");
}

static void set_timer(long first_us, long interval_us)
{
	struct itimerval it = {{interval_us / 1000000, interval_us % 1000000}, {first_us / 1000000, first_us % 1000000}};
	if (setitimer(ITIMER_REAL, &it, NULL) < 0)
		die("setitimer");
}

static void on_alarm(int sig, void (*handler)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) < 0)
		die("sigaction");
}

/* ---- flood ---- */

static int flood_fd;
static volatile sig_atomic_t handler_writes, handler_failed;

/* "<who> <n as 16 digits>\n" without stdio (the handler may not call it). */
static void format_record(char *rec, const char *who, long n)
{
	memcpy(rec, who, 7);
	for (int i = 22; i >= 7; i--, n /= 10)
		rec[i] = (char)('0' + n % 10);
	rec[23] = '\n';
}

static void flood_handler(int sig)
{
	(void)sig;
	int saved = errno;
	char rec[RECORD_BYTES];
	format_record(rec, "signal ", handler_writes);
	if (write(flood_fd, rec, RECORD_BYTES) != RECORD_BYTES)
		handler_failed++;
	handler_writes++;
	errno = saved;
}

static int flood(const char *path, long writes, long interval_us)
{
	flood_fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (flood_fd < 0)
		die(path);
	on_alarm(SIGALRM, flood_handler, SA_RESTART);
	set_timer(interval_us, interval_us);
	long failed = 0;
	char rec[RECORD_BYTES];
	for (long i = 0; i < writes; i++) {
		format_record(rec, "main   ", i);
		if (write(flood_fd, rec, RECORD_BYTES) != RECORD_BYTES)
			failed++;
	}
	set_timer(0, 0);
	/* a SIGALRM already pending is delivered on the return from setitimer: none can come after this */
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	char line[128];
	snprintf(line, sizeof line, "main %ld handler %ld failed %ld\n", writes, (long)handler_writes,
		 failed + handler_failed);
	say(line);
	return 0;
}

/* ---- interrupt ---- */

static volatile sig_atomic_t ticks, feed_at;
static int feed_fd = -1;
static sem_t *feed_sem;

/* Counts; at tick feed_at writes a byte to the pipe and posts the semaphore; stops the timer at the tick
 * after which nothing is left to do. */
static void interrupt_handler(int sig)
{
	(void)sig;
	int saved = errno;
	ticks++;
	if (ticks == feed_at) {
		if (write(feed_fd, "x", 1) != 1)
			_exit(2);
		sem_post(feed_sem);
	}
	if (ticks >= feed_at) {
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_REAL, &off, NULL);
	}
	errno = saved;
}

struct call_env {
	int pipe_r, epfd;
	sem_t sem;
	pid_t child;
};

/* A fresh pipe, semaphore and child for each call, so that nothing one call left (a byte fed late) changes
 * the next. */
static void env_open(struct call_env *e)
{
	int p[2];
	if (pipe(p) < 0)
		die("pipe");
	e->pipe_r = p[0];
	feed_fd = p[1];
	if (sem_init(&e->sem, 0, 0) < 0)
		die("sem_init");
	feed_sem = &e->sem;
	e->epfd = -1;
	e->child = -1;
}

static void env_close(struct call_env *e)
{
	set_timer(0, 0);
	if (e->child > 0)
		while (waitpid(e->child, NULL, 0) < 0 && errno == EINTR)
			;
	close(e->pipe_r);
	close(feed_fd);
	if (e->epfd >= 0)
		close(e->epfd);
	sem_destroy(&e->sem);
}

static int timespec_between(const struct timespec *t, long lo_ns, long hi_ns)
{
	long ns = (long)t->tv_sec * 1000000000L + t->tv_nsec;
	return ns > lo_ns && ns < hi_ns;
}

enum call_id { C_READ, C_NANOSLEEP, C_CLOCK_NANOSLEEP, C_USLEEP, C_SLEEP, C_POLL, C_SELECT, C_EPOLL, C_SEM_WAIT,
	       C_SEM_TIMEDWAIT, C_WAITPID, C_COUNT };
static const char *const call_names[C_COUNT] = {"read", "nanosleep", "clock_nanosleep", "usleep", "sleep", "poll",
						"select", "epoll_wait", "sem_wait", "sem_timedwait", "waitpid"};

/* Makes call c (blocking for up to a second) with the timer armed; returns its result, *err the errno it
 * left (set to 0 before), extra what it left in its out-argument. */
static long make_call(enum call_id c, struct call_env *e, int *err, char *extra, size_t extra_size)
{
	const struct timespec second = {1, 0};
	struct timespec rem = {0, 0}, abs;
	struct timeval tv = {1, 0};
	struct pollfd pfd = {e->pipe_r, POLLIN, 0};
	struct epoll_event ev;
	char b = 0;
	int st = -1;
	long ret;
	extra[0] = 0;
	if (c == C_EPOLL && (e->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		die("epoll_create1");
	if (c == C_SEM_TIMEDWAIT) {
		clock_gettime(CLOCK_REALTIME, &abs);
		abs.tv_sec += 1;
	}
	if (c == C_WAITPID) {
		e->child = fork();
		if (e->child < 0)
			die("fork");
		if (e->child == 0) {
			const struct timespec t = {0, 300000000};
			while (nanosleep(&t, NULL) < 0 && errno == EINTR)
				;
			_exit(0);
		}
	}
	set_timer(20000, 150000);
	errno = 0;
	switch (c) {
	case C_READ:
		ret = read(e->pipe_r, &b, 1);
		snprintf(extra, extra_size, " byte=%c", ret == 1 ? b : '-');
		break;
	case C_NANOSLEEP:
		ret = nanosleep(&second, &rem);
		snprintf(extra, extra_size, " rem_in_(0,1s)=%d", timespec_between(&rem, 0, 1000000000L));
		break;
	case C_CLOCK_NANOSLEEP:
		ret = clock_nanosleep(CLOCK_MONOTONIC, 0, &second, &rem);
		snprintf(extra, extra_size, " rem_in_(0,1s)=%d", timespec_between(&rem, 0, 1000000000L));
		break;
	case C_USLEEP:
		ret = usleep(900000);
		break;
	case C_SLEEP:
		ret = sleep(1);
		break;
	case C_POLL:
		ret = poll(&pfd, 1, 1000);
		break;
	case C_SELECT:
		ret = select(0, NULL, NULL, NULL, &tv);
		snprintf(extra, extra_size, " tv_left_under_1s=%d", tv.tv_sec == 0 && tv.tv_usec > 0);
		break;
	case C_EPOLL:
		ret = epoll_wait(e->epfd, &ev, 1, 1000);
		break;
	case C_SEM_WAIT:
		ret = sem_wait(&e->sem);
		break;
	case C_SEM_TIMEDWAIT:
		ret = sem_timedwait(&e->sem, &abs);
		break;
	case C_WAITPID:
		ret = waitpid(e->child, &st, 0);
		if (ret == e->child) {
			e->child = -1;
			ret = 1; /* the child's pid, which differs from run to run */
		}
		snprintf(extra, extra_size, " status=%d", ret > 0 ? st : -1);
		break;
	default:
		ret = -2;
		break;
	}
	*err = errno;
	return ret;
}

static int interrupt(void)
{
	static const struct {
		const char *name;
		int flags;
		int feed_at;
	} rounds[] = {{"no-restart", 0, 1}, {"restart", SA_RESTART, 2}};
	for (size_t r = 0; r < sizeof rounds / sizeof rounds[0]; r++) {
		on_alarm(SIGALRM, interrupt_handler, rounds[r].flags);
		for (int c = 0; c < C_COUNT; c++) {
			struct call_env e;
			env_open(&e);
			ticks = 0;
			feed_at = rounds[r].feed_at;
			int err;
			char extra[64], line[256];
			long ret = make_call((enum call_id)c, &e, &err, extra, sizeof extra);
			int seen = ticks;
			snprintf(line, sizeof line, "%s %s ret=%ld errno=%d ticks=%d%s\n", rounds[r].name, call_names[c],
				 ret, err, seen, extra);
			env_close(&e);
			say(line);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "flood") == 0)
		return flood(argv[2], strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10));
	if (argc == 2 && strcmp(argv[1], "interrupt") == 0)
		return interrupt();
	say("usage: signals flood FILE WRITES INTERVAL_US | signals interrupt\n");
	return 2;
}
