/* Where a thread waits: sleeps, readiness waits, condition variables, joins, semaphores and contended
 * mutexes. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "pw_preload.h"

PW_WRAP(WAIT, NANOSLEEP, int, nanosleep, (const struct timespec *req, struct timespec *rem), (req, rem), 0, 0,
	ret < 0)

/* clock_nanosleep returns its error (EINTR) and leaves errno alone: the record takes the returned error,
 * and the caller's errno is given back untouched. */
PW_REAL(int, clock_nanosleep, (clockid_t, int, const struct timespec *, struct timespec *));
PW_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req, struct timespec *rem)
{
	PW_RESOLVE(clock_nanosleep);
	if (!pw_should_record(PW_DOM_WAIT))
		return real_clock_nanosleep(clk, flags, req, rem);
	PW_BEGIN();
	int ret = real_clock_nanosleep(clk, flags, req, rem);
	int saved = errno;
	errno = ret;
	PW_END(CLOCK_NANOSLEEP, ret, clk, 0, ret != 0);
	errno = saved;
	return ret;
}

PW_WRAP(WAIT, USLEEP, int, usleep, (useconds_t us), (us), us, 0, ret < 0)
PW_WRAP(WAIT, SLEEP, unsigned int, sleep, (unsigned int s), (s), s, 0, 0)
PW_WRAP(WAIT, POLL, int, poll, (struct pollfd *fds, nfds_t n, int timeout), (fds, n, timeout), n, ret, ret < 0)
PW_WRAP(WAIT, SELECT, int, select, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv), (n, r, w, e, tv), n,
	ret, ret < 0)
PW_WRAP(WAIT, EPOLL_WAIT, int, epoll_wait, (int epfd, struct epoll_event *ev, int max, int timeout),
	(epfd, ev, max, timeout), epfd, ret, ret < 0)
PW_WRAP(WAIT, PPOLL, int, ppoll, (struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask),
	(fds, n, tmo, mask), n, ret, ret < 0)
PW_WRAP(WAIT, PPOLL, int, __ppoll_chk,
	(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask, size_t fdslen),
	(fds, n, tmo, mask, fdslen), n, ret, ret < 0)
PW_WRAP(WAIT, PSELECT, int, pselect,
	(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *tmo, const sigset_t *mask),
	(n, r, w, e, tmo, mask), n, ret, ret < 0)
PW_WRAP(WAIT, EPOLL_PWAIT, int, epoll_pwait,
	(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask), (epfd, ev, max, timeout, mask),
	epfd, ret, ret < 0)
PW_WRAP(WAIT, PTHREAD_JOIN, int, pthread_join, (pthread_t th, void **ret_val), (th, ret_val), 0, 0, 0)
PW_WRAP(WAIT, SEM_WAIT, int, sem_wait, (sem_t *sem), (sem), 0, 0, ret < 0)
PW_WRAP(WAIT, SEM_TIMEDWAIT, int, sem_timedwait, (sem_t *sem, const struct timespec *abs), (sem, abs), 0, 0,
	ret < 0)

/* dlsym(RTLD_NEXT) finds the GLIBC_2.2.5 compatibility versions of the condition-variable calls, which
 * expect the old object layout: ask for the current version by name. */
PW_REAL_VERSION(int, pthread_cond_wait, (pthread_cond_t *, pthread_mutex_t *), "GLIBC_2.3.2");
PW_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	PW_RESOLVE(pthread_cond_wait);
	if (!pw_should_record(PW_DOM_WAIT))
		return real_pthread_cond_wait(c, m);
	PW_BEGIN();
	int ret = real_pthread_cond_wait(c, m);
	PW_END(COND_WAIT, ret, 0, 0, 0);
	return ret;
}

PW_REAL_VERSION(int, pthread_cond_timedwait, (pthread_cond_t *, pthread_mutex_t *, const struct timespec *),
		"GLIBC_2.3.2");
PW_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs)
{
	PW_RESOLVE(pthread_cond_timedwait);
	if (!pw_should_record(PW_DOM_WAIT))
		return real_pthread_cond_timedwait(c, m, abs);
	PW_BEGIN();
	int ret = real_pthread_cond_timedwait(c, m, abs);
	PW_END(COND_TIMEDWAIT, ret, 0, ret, 0);
	return ret;
}

/* A mutex is recorded only when its lock had to wait: the lock is first tried (the same atomic operation an
 * uncontended lock makes, and it fails or succeeds, robust and error-checking mutexes included, as the lock
 * would), and only a lock that found it held is timed and recorded. arg0 is the mutex. */
PW_REAL(int, pthread_mutex_trylock, (pthread_mutex_t *));
PW_REAL(int, pthread_mutex_lock, (pthread_mutex_t *));
PW_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	PW_RESOLVE(pthread_mutex_lock);
	if (!pw_should_record(PW_DOM_WAIT))
		return real_pthread_mutex_lock(m);
	PW_RESOLVE(pthread_mutex_trylock);
	int ret = real_pthread_mutex_trylock(m);
	if (PW_LIKELY(ret != EBUSY))
		return ret;
	PW_BEGIN();
	ret = real_pthread_mutex_lock(m);
	int saved = errno;
	errno = ret; /* the error is returned, errno left alone: the record takes it from here */
	PW_END(MUTEX_LOCK, ret, m, 0, ret != 0);
	errno = saved;
	return ret;
}

int pw_mutex_lock_unrecorded(pthread_mutex_t *m)
{
	PW_RESOLVE(pthread_mutex_lock);
	return real_pthread_mutex_lock(m);
}
