/* The profiler's own descriptors (own_fds.c): where they are, and how the program's calls that close or
 * replace descriptors leave them alone.
 *
 * Without profwrap these numbers are free, so a program that closes every descriptor (closefrom, close_range,
 * a loop of close() over the table, what /proc/self/fd lists: daemons, and launchers in a forked child before
 * exec) or dup2s onto them must see what it would see then, and the profiler must keep its connection (the
 * collector takes end of file on it for the end of the process image). So:
 * - close() of one fails with EBADF, as close() of a free number does, and the descriptor stays open;
 * - close_range() and closefrom() close the ranges around them;
 * - dup2()/dup3() onto one first move it to another free number (the collector connection and the segment;
 *   libunwind's pipe is left to be replaced: stacks.c sees that and libunwind makes a new one);
 * - dup(), dup2(), dup3() and fcntl() of one fail with EBADF: a duplicate the program held would keep the
 *   connection open past an exec.
 * The numbers stay where they were put, above those programs use, so an open() after a close-everything
 * loop gets the same number as without profwrap. A number counts as ours only while it still refers to the
 * file we opened (device and inode), since something other than these wrappers may close it (a raw system
 * call) and the program reuse it. The profiler's own code never calls close() on them: it goes through
 * pw_own_fd_close(). */
#ifndef PW_OWN_FDS_H
#define PW_OWN_FDS_H

#include <stdatomic.h>

enum pw_own_fd_slot {
	PW_OWN_COLLECTOR,    /* the connection to the collector */
	PW_OWN_SEGMENT,      /* the segment: kept to back lanes and the arena with memory as they are used */
	PW_OWN_UNWIND_READ,  /* libunwind's pipe (stacks.c) */
	PW_OWN_UNWIND_WRITE,
	PW_OWN_SLOTS
};

/* The slots' numbers, -1 when empty: the wrappers' first test reads them without a system call. */
extern _Atomic int pw_own_fd_numbers[PW_OWN_SLOTS];

/* Whether fd is the number of one of our descriptors (not checked to be still ours: see pw_own_fd_slot). */
static inline int pw_own_fd_number(int fd)
{
	if (fd < 0)
		return 0;
	for (int i = 0; i < PW_OWN_SLOTS; i++)
		if (atomic_load_explicit(&pw_own_fd_numbers[i], memory_order_relaxed) == fd)
			return 1;
	return 0;
}

/* Moves fd above the numbers a program reuses (a daemon closes 3..63 and opens its log at 3): to 960 and up
 * when the table is larger than 1024, else to its last 32 numbers. Returns the new descriptor (close-on-exec)
 * or fd unchanged when it cannot move. */
int pw_own_fd_move_high(int fd);

/* Remembers fd (and what it refers to) as the descriptor of slot. */
void pw_own_fd_note(enum pw_own_fd_slot slot, int fd);

/* The slot's descriptor, -1 when none. */
int pw_own_fd_get(enum pw_own_fd_slot slot);

/* Closes the slot's descriptor if it is still ours, and forgets it (a fork child, a failed start). */
void pw_own_fd_close(enum pw_own_fd_slot slot);

/* Forgets the slot without closing (libunwind closed its pipe). */
void pw_own_fd_forget(enum pw_own_fd_slot slot);

/* The slot whose descriptor fd is (its number, and still the file we opened), -1 when none. */
int pw_own_fd_slot(int fd);

/* fd is about to be replaced by the program (dup2/dup3 onto it): if it is ours and must stay open (the
 * connection, the segment), it moves to another number first. Returns 1 when it moved: the old number still
 * holds a copy until the program's call replaces it, which the caller closes if that call fails. */
int pw_own_fd_vacate(int fd);

/* The segment's descriptor for one call on it (posix_fallocate), or -1; paired with pw_own_fd_release(): a
 * dup2() onto the old number waits until no call uses it, so a call never reaches the program's file. */
int pw_own_fd_hold(enum pw_own_fd_slot slot);
void pw_own_fd_release(enum pw_own_fd_slot slot);

#endif
