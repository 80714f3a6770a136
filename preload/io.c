/* POSIX file I/O: open/close, read/write families, seeks, syncs, and mappings of files.
 * The _chk and __open_2 variants are what programs built with _FORTIFY_SOURCE call instead. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

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
PW_WRAP_UNWIND(pw_unwind_close(fd), IO, CLOSE, int, close, (int fd), (fd), fd, 0, ret < 0)

/* Duplicates carry the file's name to the new descriptor (dd reads its input through a dup2'd stdin). */
PW_WRAP(IO, DUP, int, dup, (int fd), (fd), ret, fd, ret < 0)
PW_WRAP(IO, DUP2, int, dup2, (int fd, int fd2), (fd, fd2), ret, fd, ret < 0)
PW_WRAP(IO, DUP3, int, dup3, (int fd, int fd2, int flags), (fd, fd2, flags), ret, fd, ret < 0)

/* fcntl is recorded only when it duplicates; every other command passes straight through. The third
 * argument is read as the pointer-sized word it occupies for every command. */
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
			return real_##name(fd, cmd, arg);                                \
		PW_BEGIN();                                                              \
		int ret = real_##name(fd, cmd, arg);                                     \
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

PW_WRAP(IO, WRITE, ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n), fd, MOVED(ret), ret < 0)
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
