/* POSIX file I/O: open/close, read/write families, seeks, syncs, and mappings of files.
 * The _chk and __open_2 variants are what programs built with _FORTIFY_SOURCE call instead. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pw_own_fds.h"
#include "pw_preload.h"

#define MOVED(ret) ((ret) > 0 ? (uint64_t)(ret) : 0)

/* open() takes a mode only when it may create. */
#define NEEDS_MODE(flags) (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE)

#define PW_OPEN_MODE(flags)                               \
	mode_t mode = 0;                                  \
	if (NEEDS_MODE(flags)) {                          \
		va_list ap;                               \
		va_start(ap, flags);                      \
		mode = va_arg(ap, mode_t);                \
		va_end(ap);                               \
	}

#define PW_OPEN_WRAP(name)                                                               \
	PW_REAL(int, name, (const char *, int, ...));                                    \
	PW_EXPORT int name(const char *path, int flags, ...)                             \
	{                                                                                \
		PW_OPEN_MODE(flags)                                                      \
		PW_RESOLVE(name);                                                        \
		if (!PW_SHOULD_RECORD(IO, OPEN))                                         \
			return real_##name(path, flags, mode);                           \
		PW_BEGIN();                                                              \
		int ret = real_##name(path, flags, mode);                                \
		PW_END(OPEN, ret, ret, PW_PATH_ARG(path, ret < 0), ret < 0);                   \
		return ret;                                                              \
	}
PW_OPEN_WRAP(open)
PW_OPEN_WRAP(open64)

#define PW_OPENAT_WRAP(name)                                                             \
	PW_REAL(int, name, (int, const char *, int, ...));                               \
	PW_EXPORT int name(int dirfd, const char *path, int flags, ...)                  \
	{                                                                                \
		PW_OPEN_MODE(flags)                                                      \
		PW_RESOLVE(name);                                                        \
		if (!PW_SHOULD_RECORD(IO, OPENAT))                                       \
			return real_##name(dirfd, path, flags, mode);                    \
		PW_BEGIN();                                                              \
		int ret = real_##name(dirfd, path, flags, mode);                         \
		PW_END(OPENAT, ret, ret, PW_PATH_ARG(path, ret < 0), ret < 0);                 \
		return ret;                                                              \
	}
PW_OPENAT_WRAP(openat)
PW_OPENAT_WRAP(openat64)

PW_WRAP(IO, OPEN, int, __open_2, (const char *path, int flags), (path, flags), ret, PW_PATH_ARG(path, ret < 0), ret < 0)
PW_WRAP(IO, OPEN, int, __open64_2, (const char *path, int flags), (path, flags), ret, PW_PATH_ARG(path, ret < 0), ret < 0)
PW_WRAP(IO, OPENAT, int, __openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags), ret,
	PW_PATH_ARG(path, ret < 0), ret < 0)
PW_WRAP(IO, OPENAT, int, __openat64_2, (int dirfd, const char *path, int flags), (dirfd, path, flags), ret,
	PW_PATH_ARG(path, ret < 0), ret < 0)
PW_WRAP(IO, CREAT, int, creat, (const char *path, mode_t mode), (path, mode), ret, PW_PATH_ARG(path, ret < 0), ret < 0)
PW_WRAP(IO, CREAT, int, creat64, (const char *path, mode_t mode), (path, mode), ret, PW_PATH_ARG(path, ret < 0), ret < 0)
/* The profiler's own descriptors are not the program's (pw_own_fds.h): close() of one fails as close() of
 * a free number does, and leaves it open; so do dup() and fcntl() of one. */
static int own_fd(int fd)
{
	return PW_UNLIKELY(pw_own_fd_number(fd)) && pw_own_fd_slot(fd) >= 0;
}

static int not_open(void)
{
	errno = EBADF;
	return -1;
}

PW_REAL(int, close, (int));
static int close_call(int fd)
{
	return own_fd(fd) ? not_open() : real_close(fd);
}

PW_EXPORT int close(int fd)
{
	PW_RESOLVE(close);
	if (!PW_SHOULD_RECORD(IO, CLOSE))
		return PW_IN_UNWIND() ? pw_unwind_close(fd) : close_call(fd);
	PW_BEGIN();
	int ret = close_call(fd);
	PW_END(CLOSE, ret, fd, 0, ret < 0);
	return ret;
}

/* Duplicates carry the file's name to the new descriptor (dd reads its input through a dup2'd stdin). */
PW_REAL(int, dup, (int));
static int dup_call(int fd)
{
	return own_fd(fd) ? not_open() : real_dup(fd);
}

PW_EXPORT int dup(int fd)
{
	PW_RESOLVE(dup);
	if (!PW_SHOULD_RECORD(IO, DUP))
		return dup_call(fd);
	PW_BEGIN();
	int ret = dup_call(fd);
	PW_END(DUP, ret, ret, fd, ret < 0);
	return ret;
}

/* dup2/dup3 from one of ours fail as from a free number: the real call is given -1 instead, which fails as
 * the kernel orders its checks (dup3's flags and equal numbers first). Onto one of ours: ours moves away
 * first; if the call then fails, the number is freed as it was without profwrap. */
PW_REAL(int, dup2, (int, int));
PW_REAL(int, dup3, (int, int, int));
static int dup23_call(int fd, int fd2, int flags, int three)
{
	if (own_fd(fd))
		return three ? real_dup3(fd == fd2 ? fd : -1, fd2, flags) : real_dup2(-1, fd2);
	int moved = PW_UNLIKELY(pw_own_fd_number(fd2)) && pw_own_fd_vacate(fd2);
	int ret = three ? real_dup3(fd, fd2, flags) : real_dup2(fd, fd2);
	if (ret < 0 && moved) {
		int saved = errno;
		syscall(SYS_close, fd2);
		errno = saved;
	}
	return ret;
}

#define PW_DUP23_WRAP(ev, name, params, three_args)                     \
	PW_EXPORT int name params                                       \
	{                                                               \
		PW_RESOLVE(dup2);                                       \
		PW_RESOLVE(dup3);                                       \
		if (!PW_SHOULD_RECORD(IO, ev))                          \
			return dup23_call three_args;                   \
		PW_BEGIN();                                             \
		int ret = dup23_call three_args;                        \
		PW_END(ev, ret, ret, fd, ret < 0);                      \
		return ret;                                             \
	}
PW_DUP23_WRAP(DUP2, dup2, (int fd, int fd2), (fd, fd2, 0, 0))
PW_DUP23_WRAP(DUP3, dup3, (int fd, int fd2, int flags), (fd, fd2, flags, 1))

/* fcntl is recorded only when it duplicates; every other command passes straight through (none of them on
 * one of ours: a program that cleared its close-on-exec flag would keep the connection open past an exec).
 * The third argument is read as the pointer-sized word it occupies for every command. */
#define PW_FCNTL_WRAP(name)                                                              \
	PW_REAL(int, name, (int, int, ...));                                             \
	PW_EXPORT int name(int fd, int cmd, ...)                                         \
	{                                                                                \
		va_list ap;                                                              \
		va_start(ap, cmd);                                                       \
		void *arg = va_arg(ap, void *);                                          \
		va_end(ap);                                                              \
		PW_RESOLVE(name);                                                        \
		if ((cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) || !PW_SHOULD_RECORD(IO, FCNTL_DUPFD)) \
			return own_fd(fd) ? not_open() : real_##name(fd, cmd, arg);      \
		PW_BEGIN();                                                              \
		int ret = own_fd(fd) ? not_open() : real_##name(fd, cmd, arg);           \
		PW_END(FCNTL_DUPFD, ret, ret, fd, ret < 0);                              \
		return ret;                                                              \
	}
PW_FCNTL_WRAP(fcntl)
PW_FCNTL_WRAP(fcntl64)

PW_WRAP_UNWIND(pw_unwind_read(fd, buf, n), IO, READ, ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n), fd,
	       MOVED(ret), ret < 0)

/* Not recorded: wrapped so that libunwind's pipe is made out of the program's way (pw_unwind_pipe2). */
PW_REAL(int, pipe2, (int[2], int));
PW_EXPORT int pipe2(int fds[2], int flags)
{
	if (PW_IN_UNWIND())
		return pw_unwind_pipe2(fds, flags);
	PW_RESOLVE(pipe2);
	return real_pipe2(fds, flags);
}
PW_WRAP(IO, READ, ssize_t, __read_chk, (int fd, void *buf, size_t n, size_t buflen), (fd, buf, n, buflen), fd,
	MOVED(ret), ret < 0)
PW_WRAP(IO, PREAD, ssize_t, pread, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off), fd, MOVED(ret),
	ret < 0)
PW_WRAP(IO, PREAD, ssize_t, pread64, (int fd, void *buf, size_t n, off64_t off), (fd, buf, n, off), fd,
	MOVED(ret), ret < 0)
PW_WRAP(IO, PREAD, ssize_t, __pread_chk, (int fd, void *buf, size_t n, off_t off, size_t buflen),
	(fd, buf, n, off, buflen), fd, MOVED(ret), ret < 0)
PW_WRAP(IO, PREAD, ssize_t, __pread64_chk, (int fd, void *buf, size_t n, off64_t off, size_t buflen),
	(fd, buf, n, off, buflen), fd, MOVED(ret), ret < 0)
PW_WRAP(IO, READV, ssize_t, readv, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), fd, MOVED(ret),
	ret < 0)
PW_WRAP(IO, PREADV, ssize_t, preadv, (int fd, const struct iovec *iov, int cnt, off_t off), (fd, iov, cnt, off),
	fd, MOVED(ret), ret < 0)
PW_WRAP(IO, PREADV, ssize_t, preadv64, (int fd, const struct iovec *iov, int cnt, off64_t off),
	(fd, iov, cnt, off), fd, MOVED(ret), ret < 0)

PW_WRAP_UNWIND(pw_unwind_write(fd, buf, n), IO, WRITE, ssize_t, write, (int fd, const void *buf, size_t n),
	       (fd, buf, n), fd, MOVED(ret), ret < 0)
PW_WRAP(IO, PWRITE, ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off), fd,
	MOVED(ret), ret < 0)
PW_WRAP(IO, PWRITE, ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t off), (fd, buf, n, off), fd,
	MOVED(ret), ret < 0)
PW_WRAP(IO, WRITEV, ssize_t, writev, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), fd, MOVED(ret),
	ret < 0)
PW_WRAP(IO, PWRITEV, ssize_t, pwritev, (int fd, const struct iovec *iov, int cnt, off_t off),
	(fd, iov, cnt, off), fd, MOVED(ret), ret < 0)
PW_WRAP(IO, PWRITEV, ssize_t, pwritev64, (int fd, const struct iovec *iov, int cnt, off64_t off),
	(fd, iov, cnt, off), fd, MOVED(ret), ret < 0)

PW_WRAP(IO, LSEEK, off_t, lseek, (int fd, off_t off, int whence), (fd, off, whence), fd, whence, ret < 0)
PW_WRAP(IO, LSEEK, off64_t, lseek64, (int fd, off64_t off, int whence), (fd, off, whence), fd, whence, ret < 0)
PW_WRAP(IO, FSYNC, int, fsync, (int fd), (fd), fd, 0, ret < 0)
PW_WRAP(IO, FDATASYNC, int, fdatasync, (int fd), (fd), fd, 0, ret < 0)

/* Mappings: only those of files are recorded. Their addresses are kept in a small lock-free table so that
 * munmap records only file mappings too (anonymous munmaps are an allocator's business, not I/O). */
#define PW_MAPS 64
static _Atomic uintptr_t file_maps[PW_MAPS];

static void remember_map(void *addr)
{
	for (int i = 0; i < PW_MAPS; i++) {
		uintptr_t empty = 0;
		if (atomic_compare_exchange_strong(&file_maps[i], &empty, (uintptr_t)addr))
			return;
	}
}

static int forget_map(void *addr)
{
	for (int i = 0; i < PW_MAPS; i++) {
		uintptr_t a = (uintptr_t)addr;
		if (atomic_load_explicit(&file_maps[i], memory_order_relaxed) == a &&
		    atomic_compare_exchange_strong(&file_maps[i], &a, 0))
			return 1;
	}
	return 0;
}

#define PW_MMAP_WRAP(name, off_type)                                                                     \
	PW_REAL(void *, name, (void *, size_t, int, int, int, off_type));                                \
	PW_EXPORT void *name(void *addr, size_t len, int prot, int flags, int fd, off_type off)          \
	{                                                                                                \
		PW_RESOLVE(name);                                                                        \
		if (fd < 0 || (flags & MAP_ANONYMOUS) || !pw_should_record(PW_DOM_IO))                   \
			return real_##name(addr, len, prot, flags, fd, off);                             \
		PW_BEGIN();                                                                              \
		void *ret = real_##name(addr, len, prot, flags, fd, off);                                \
		if (ret != MAP_FAILED)                                                                   \
			remember_map(ret);                                                               \
		PW_END(MMAP, ret, fd, len, ret == MAP_FAILED);                                           \
		return ret;                                                                              \
	}
PW_MMAP_WRAP(mmap, off_t)
PW_MMAP_WRAP(mmap64, off64_t)

PW_REAL(int, munmap, (void *, size_t));
PW_EXPORT int munmap(void *addr, size_t len)
{
	PW_RESOLVE(munmap);
	if (!pw_should_record(PW_DOM_IO) || !forget_map(addr))
		return real_munmap(addr, len);
	PW_BEGIN();
	int ret = real_munmap(addr, len);
	PW_END(MUNMAP, ret, -1, len, ret < 0);
	return ret;
}
