/* POSIX file I/O: open/close, read/write families, seeks, syncs, sizes, and mappings of files; the pipes and
 * sockets a process makes, so that their descriptors have names.
 * The _chk and __open_2 variants are what programs built with _FORTIFY_SOURCE call instead. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../common/pw_session.h"
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
		uint64_t t0 = pw_clock_ticks();                                          \
		int ret = real_##name(path, flags, mode);                                \
		pw_record_open(PW_EV_OPEN, t0, ret, ret, ret < 0, AT_FDCWD, path);       \
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
		uint64_t t0 = pw_clock_ticks();                                          \
		int ret = real_##name(dirfd, path, flags, mode);                         \
		pw_record_open(PW_EV_OPENAT, t0, ret, ret, ret < 0, dirfd, path);        \
		return ret;                                                              \
	}
PW_OPENAT_WRAP(openat)
PW_OPENAT_WRAP(openat64)

PW_WRAP_OPEN(IO, OPEN, int, __open_2, (const char *path, int flags), (path, flags), ret, AT_FDCWD, path, ret < 0)
PW_WRAP_OPEN(IO, OPEN, int, __open64_2, (const char *path, int flags), (path, flags), ret, AT_FDCWD, path, ret < 0)
PW_WRAP_OPEN(IO, OPENAT, int, __openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags), ret, dirfd,
	     path, ret < 0)
PW_WRAP_OPEN(IO, OPENAT, int, __openat64_2, (int dirfd, const char *path, int flags), (dirfd, path, flags), ret,
	     dirfd, path, ret < 0)
PW_WRAP_OPEN(IO, CREAT, int, creat, (const char *path, mode_t mode), (path, mode), ret, AT_FDCWD, path, ret < 0)
PW_WRAP_OPEN(IO, CREAT, int, creat64, (const char *path, mode_t mode), (path, mode), ret, AT_FDCWD, path, ret < 0)

/* The working directory, which relative paths are named from. Its names are interned once per distinct text
 * (a 64-bit hash): a program that moves between a few directories (a shell's loop of cd) must not fill the
 * arena; where the table is full around the hash, interned again each time. */
_Atomic pw_strref pw_cwd;
#define PW_CWD_SLOTS 1024
static struct pw_once_slot cwd_names[PW_CWD_SLOTS];

struct cwd_text {
	const char *s;
	size_t len;
};

static pw_strref make_cwd_name(uint64_t hash, const void *arg)
{
	(void)hash;
	const struct cwd_text *t = arg;
	return pw_intern_bytes(t->s, t->len);
}

/* The kernel's name for it (absolute, without symlinks): a raw system call, since getcwd() may allocate; none
 * when it was removed, lies outside the root or is too long. */
pw_strref pw_cwd_note(void)
{
	char buf[4096];
	long n = PW_SYSCALL(SYS_getcwd, buf, sizeof buf);
	pw_strref ref = 0;
	if (n > 1 && buf[0] == '/') {
		struct cwd_text t = {buf, (size_t)n - 1};
		uint64_t h = pw_hash64(t.s, t.len);
		ref = pw_once(cwd_names, PW_CWD_SLOTS, h ? h : 1, make_cwd_name, &t);
		if (!ref)
			ref = pw_intern_bytes(t.s, t.len);
	}
	atomic_store_explicit(&pw_cwd, ref, memory_order_relaxed);
	return ref;
}

void pw_cwd_after_fork(void)
{
	memset((void *)cwd_names, 0, sizeof cwd_names);
}

/* chdir and fchdir are followed whenever opens are recorded (by stdio's too), so that the opens of relative
 * paths are named; the calls themselves are recorded with the io domain. Followed after the call: an open
 * that another thread makes meanwhile may take the old directory. */
static int cwd_followed(uint32_t recording)
{
	return (recording & (1u << PW_DOM_IO | 1u << PW_DOM_STDIO)) && pw_thread_allows(recording);
}

static void follow_chdir(uint16_t ev, uint64_t t0, int ret, int64_t fd, uint32_t recording)
{
	uint64_t t1 = pw_clock_ticks();
	struct pw_guarded was = pw_guard_enter(PW_GUARD_INTERNAL);
	pw_strref cwd = ret < 0 ? 0 : pw_cwd_note();
	if (!(recording & 1u << PW_DOM_IO)) {
		pw_guard_leave(was);
		return;
	}
	int err = ret < 0 ? (was.saved_errno ? was.saved_errno : PW_ERR_NO_ERRNO) : 0;
	struct pw_rec_call r = {.h = {.type = ev | pw_outside_flag(), .size8 = sizeof r / 8,
				      .err = (uint8_t)(err > PW_ERR_NO_ERRNO ? PW_ERR_NO_ERRNO : err)},
				.t0 = t0, .t1 = t1, .ret = ret, .arg0 = (uint64_t)fd, .arg1 = cwd};
	pw_record_done(&r, sizeof r, pw_call_wants_stack(t0, t1), was);
}

#define PW_CHDIR_WRAP(ev, name, params, args, fd)                       \
	PW_REAL(int, name, params);                                     \
	PW_EXPORT int name params                                       \
	{                                                               \
		PW_RESOLVE(name);                                       \
		uint32_t recording = pw_recording_now();                \
		if (!cwd_followed(recording))                           \
			return real_##name args;                        \
		uint64_t t0 = pw_clock_ticks();                         \
		int ret = real_##name args;                             \
		follow_chdir(PW_EV_##ev, t0, ret, fd, recording);       \
		return ret;                                             \
	}
PW_CHDIR_WRAP(CHDIR, chdir, (const char *path), (path), -1)
PW_CHDIR_WRAP(FCHDIR, fchdir, (int fd), (fd), fd)

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
		PW_SYSCALL(SYS_close, fd2);
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

/* Pipes and sockets are named as /proc/PID/fd names them, by their inode (one fstat per descriptor made, once
 * the call has returned), so that a pipe the process made and the same pipe a child inherits are one. */
static uint32_t fd_inode(int fd)
{
	struct stat st;
	return fd >= 0 && pw_fstat_unrecorded(fd, &st) == 0 && st.st_ino <= UINT32_MAX ? (uint32_t)st.st_ino : 0;
}

#define CHANNEL_FDS(fds, failed) ((failed) ? pw_put_channel_fds(-1, -1) : pw_put_channel_fds((fds)[0], (fds)[1]))
#define CHANNEL_INOS(fds, failed) ((failed) ? 0 : pw_put_channel_inos(fd_inode((fds)[0]), fd_inode((fds)[1])))
#define CHANNEL_FD(fd) pw_put_channel_fds((fd), -1)
#define CHANNEL_INO(fd) pw_put_channel_inos(fd_inode(fd), 0)

PW_WRAP(IO, PIPE, int, pipe, (int fds[2]), (fds), CHANNEL_FDS(fds, ret < 0), CHANNEL_INOS(fds, ret < 0), ret < 0)

/* libunwind's pipe is made out of the program's way (pw_unwind_pipe2). */
PW_WRAP_UNWIND(pw_unwind_pipe2(fds, flags), IO, PIPE2, int, pipe2, (int fds[2], int flags), (fds, flags),
	       CHANNEL_FDS(fds, ret < 0), CHANNEL_INOS(fds, ret < 0), ret < 0)
PW_WRAP(IO, SOCKETPAIR, int, socketpair, (int domain, int type, int protocol, int fds[2]),
	(domain, type, protocol, fds), CHANNEL_FDS(fds, ret < 0), CHANNEL_INOS(fds, ret < 0), ret < 0)
PW_WRAP(IO, SOCKET, int, socket, (int domain, int type, int protocol), (domain, type, protocol), CHANNEL_FD(ret),
	CHANNEL_INO(ret), ret < 0)
PW_WRAP(IO, ACCEPT, int, accept, (int fd, struct sockaddr *addr, socklen_t *len), (fd, addr, len),
	CHANNEL_FD(ret), CHANNEL_INO(ret), ret < 0)
PW_WRAP(IO, ACCEPT4, int, accept4, (int fd, struct sockaddr *addr, socklen_t *len, int flags),
	(fd, addr, len, flags), CHANNEL_FD(ret), CHANNEL_INO(ret), ret < 0)
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
PW_WRAP(IO, PREADV2, ssize_t, preadv2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),
	(fd, iov, cnt, off, flags), fd, MOVED(ret), ret < 0)
PW_WRAP(IO, PREADV2, ssize_t, preadv64v2, (int fd, const struct iovec *iov, int cnt, off64_t off, int flags),
	(fd, iov, cnt, off, flags), fd, MOVED(ret), ret < 0)

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
PW_WRAP(IO, PWRITEV2, ssize_t, pwritev2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),
	(fd, iov, cnt, off, flags), fd, MOVED(ret), ret < 0)
PW_WRAP(IO, PWRITEV2, ssize_t, pwritev64v2, (int fd, const struct iovec *iov, int cnt, off64_t off, int flags),
	(fd, iov, cnt, off, flags), fd, MOVED(ret), ret < 0)

PW_WRAP(IO, LSEEK, off_t, lseek, (int fd, off_t off, int whence), (fd, off, whence), fd, whence, ret < 0)
PW_WRAP(IO, LSEEK, off64_t, lseek64, (int fd, off64_t off, int whence), (fd, off, whence), fd, whence, ret < 0)
PW_WRAP(IO, FSYNC, int, fsync, (int fd), (fd), fd, 0, ret < 0)
PW_WRAP(IO, FDATASYNC, int, fdatasync, (int fd), (fd), fd, 0, ret < 0)
PW_WRAP(IO, FTRUNCATE, int, ftruncate, (int fd, off_t len), (fd, len), fd, len, ret < 0)
PW_WRAP(IO, FTRUNCATE, int, ftruncate64, (int fd, off64_t len), (fd, len), fd, len, ret < 0)
PW_WRAP(IO, FALLOCATE, int, fallocate, (int fd, int mode, off_t off, off_t len), (fd, mode, off, len), fd, len,
	ret < 0)
PW_WRAP(IO, FALLOCATE, int, fallocate64, (int fd, int mode, off64_t off, off64_t len), (fd, mode, off, len), fd,
	len, ret < 0)

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
