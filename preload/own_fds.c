/* The profiler's own descriptors (pw_own_fds.h): their slots, moving them out of the program's way, and the
 * close_range()/closefrom() wrappers that close around them. io.c's close, dup and fcntl wrappers ask here.
 * Only raw system calls touch our descriptors here: through the wrappers they would be refused. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pw_own_fds.h"
#include "pw_preload.h"

_Atomic int pw_own_fd_numbers[PW_OWN_SLOTS] = {-1, -1, -1, -1};

static struct {
	dev_t dev;
	ino_t ino;
	_Atomic int holders; /* calls using the descriptor now (pw_own_fd_hold) */
} own[PW_OWN_SLOTS];

/* libunwind keeps its pipe's numbers to itself, so its ends cannot move: a dup2() onto one replaces it and
 * stacks.c, which checks the pipe before each use, has libunwind make another. */
static int movable(int slot)
{
	return slot == PW_OWN_COLLECTOR || slot == PW_OWN_SEGMENT;
}

static int high_floor(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < 64)
		return -1;
	return rl.rlim_cur > 1024 ? 1024 - 64 : (int)rl.rlim_cur - 32;
}

int pw_own_fd_move_high(int fd)
{
	int floor = high_floor();
	if (fd < 0 || floor < 0)
		return fd;
	int high = (int)PW_SYSCALL(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor);
	if (high < 0)
		return fd;
	PW_SYSCALL(SYS_close, fd);
	return high;
}

void pw_own_fd_note(enum pw_own_fd_slot slot, int fd)
{
	struct stat st;
	if (fd < 0 || pw_fstat_unrecorded(fd, &st) < 0) {
		atomic_store(&pw_own_fd_numbers[slot], -1);
		return;
	}
	own[slot].dev = st.st_dev;
	own[slot].ino = st.st_ino;
	atomic_store(&pw_own_fd_numbers[slot], fd);
}

int pw_own_fd_get(enum pw_own_fd_slot slot)
{
	return atomic_load_explicit(&pw_own_fd_numbers[slot], memory_order_acquire);
}

static int still_ours(int slot, int fd)
{
	struct stat st;
	return fd >= 0 && pw_fstat_unrecorded(fd, &st) == 0 && st.st_dev == own[slot].dev && st.st_ino == own[slot].ino;
}

int pw_own_fd_slot(int fd)
{
	for (int i = 0; i < PW_OWN_SLOTS; i++)
		if (fd >= 0 && pw_own_fd_get(i) == fd && still_ours(i, fd))
			return i;
	return -1;
}

void pw_own_fd_close(enum pw_own_fd_slot slot)
{
	int fd = atomic_exchange(&pw_own_fd_numbers[slot], -1);
	if (still_ours(slot, fd))
		PW_SYSCALL(SYS_close, fd);
}

void pw_own_fd_forget(enum pw_own_fd_slot slot)
{
	atomic_store(&pw_own_fd_numbers[slot], -1);
}

int pw_own_fd_hold(enum pw_own_fd_slot slot)
{
	for (;;) {
		int fd = pw_own_fd_get(slot);
		if (fd < 0)
			return -1;
		atomic_fetch_add(&own[slot].holders, 1);
		if (pw_own_fd_get(slot) == fd)
			return fd;
		atomic_fetch_sub(&own[slot].holders, 1); /* moved meanwhile: take the new number */
	}
}

void pw_own_fd_release(enum pw_own_fd_slot slot)
{
	atomic_fetch_sub(&own[slot].holders, 1);
}

/* fd is about to be replaced by the program (dup2/dup3 onto it). Ours there moves to another number first:
 * above the program's numbers, or, when those are all taken, to any free one (the program has no fewer
 * numbers for it, and the connection stays). Returns 1 when ours moved (the old number still holds a copy
 * of it, which the program's call replaces), 0 otherwise. */
int pw_own_fd_vacate(int fd)
{
	int slot = pw_own_fd_slot(fd);
	if (slot < 0 || !movable(slot))
		return 0;
	int floor = high_floor();
	int moved = (int)PW_SYSCALL(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor < 0 ? 3 : floor);
	if (moved < 0)
		moved = (int)PW_SYSCALL(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3);
	if (moved < 0)
		return 0; /* no free number at all: the program's call takes ours, as it would without profwrap */
	int expected = fd;
	if (!atomic_compare_exchange_strong(&pw_own_fd_numbers[slot], &expected, moved)) {
		PW_SYSCALL(SYS_close, moved); /* another thread moved it first */
		return 0;
	}
	/* A call that took the old number before it moved must end before the number is the program's. A
	 * signal handler that interrupted the profiler on this thread cannot wait for it: it goes on. */
	while (atomic_load(&own[slot].holders) > 0 && !pw_self.guard)
		sched_yield();
	return 1;
}

/* Our descriptors within [first, last], in increasing order, into fds; returns how many. */
static int own_in_range(unsigned first, unsigned last, unsigned fds[PW_OWN_SLOTS])
{
	int n = 0;
	for (int i = 0; i < PW_OWN_SLOTS; i++) {
		int fd = pw_own_fd_get(i);
		if (fd >= 0 && (unsigned)fd >= first && (unsigned)fd <= last && still_ours(i, fd)) {
			int j = n++;
			for (; j > 0 && fds[j - 1] > (unsigned)fd; j--)
				fds[j] = fds[j - 1];
			fds[j] = (unsigned)fd;
		}
	}
	return n;
}

/* close_range and closefrom came with glibc 2.34, so they are looked up apart (pw_resolve_all aborts on a
 * name libc lacks): at start like the others (a lookup inside a wrapper would free the string the program's
 * last dlerror() returned), or by a call made before that. Without them, the system call. */
static int (*real_close_range)(unsigned, unsigned, int);
static void (*real_closefrom)(int);
static int resolved;

__attribute__((constructor)) static void resolve_close_calls(void)
{
	if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
		return;
	real_close_range = (int (*)(unsigned, unsigned, int))dlsym(RTLD_NEXT, "close_range");
	real_closefrom = (void (*)(int))dlsym(RTLD_NEXT, "closefrom");
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
}

static int close_range_call(unsigned first, unsigned last, int flags)
{
	return real_close_range ? real_close_range(first, last, flags)
				: (int)PW_SYSCALL(SYS_close_range, first, last, flags);
}

/* close_range over [first, last] without our descriptors: the ranges between them. With nothing between
 * them, a call on a range that holds no descriptor fails as the whole would (bad flags) or unshares the table
 * as asked. */
PW_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	resolve_close_calls();
	unsigned ours[PW_OWN_SLOTS];
	int n = first <= last ? own_in_range(first, last, ours) : 0;
	if (!n)
		return close_range_call(first, last, flags);
	unsigned from = first;
	int calls = 0;
	for (int i = 0; i < n; i++) {
		if (ours[i] > from) {
			if (close_range_call(from, ours[i] - 1, flags) < 0)
				return -1;
			calls++;
		}
		from = ours[i] + 1;
	}
	if (from <= last)
		return close_range_call(from, last, flags);
	return calls ? 0 : close_range_call(~0u, ~0u, flags);
}

/* closefrom(low): the ranges below our highest descriptor as close_range() does them (one close() each
 * where the kernel lacks close_range: they end below our numbers, near 1024), then the real closefrom()
 * above it, with its own fallback. */
PW_EXPORT void closefrom(int low)
{
	resolve_close_calls();
	unsigned ours[PW_OWN_SLOTS], from = low < 0 ? 0 : (unsigned)low;
	int n = own_in_range(from, ~0u, ours);
	if (!n && real_closefrom) {
		real_closefrom(low);
		return;
	}
	int saved = errno;
	for (int i = 0; i < n; i++) {
		if (ours[i] > from && close_range_call(from, ours[i] - 1, 0) < 0 && errno == ENOSYS)
			for (unsigned fd = from; fd < ours[i]; fd++)
				PW_SYSCALL(SYS_close, fd);
		from = ours[i] + 1;
	}
	errno = saved;
	if (real_closefrom)
		real_closefrom((int)from);
	else
		close_range_call(from, ~0u, 0);
}
