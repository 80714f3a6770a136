/* File metadata: the stat family (and glibc's older __xstat names, which programs built before glibc 2.33
 * import), access, and directory listing. Each is recorded under its base name in the meta domain; the
 * paths they name are interned once per distinct text. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pw_preload.h"

/* A program names the same paths again and again (Python's imports stat every directory of sys.path for
 * each module), so a path goes into the arena once: a lock-free table keyed by a hash of its text. Where
 * the table is full around a hash, the path is interned again each time. */
#define PATH_SLOTS 16384u
static struct pw_once_slot path_slots[PATH_SLOTS];

/* A word at a time, the tail's bytes included. */
static uint64_t path_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	uint64_t tail = 0;
	memcpy(&tail, s + i, len - i);
	h = (h ^ tail) * 0xff51afd7ed558ccdull;
	h ^= h >> 32;
	return h | 1; /* pw_once's keys are not 0 */
}

struct path_text {
	const char *s;
	size_t len;
};

static pw_strref make_path(uint64_t hash, const void *arg)
{
	(void)hash;
	const struct path_text *p = arg;
	return pw_intern_bytes(p->s, p->len);
}

static pw_strref intern_path_once(const char *path)
{
	if (!path)
		return 0;
	struct path_text p = {path, strlen(path)};
	pw_strref ref = pw_once(path_slots, PATH_SLOTS, path_hash(p.s, p.len), make_path, &p);
	return ref ? ref : pw_intern_bytes(p.s, p.len);
}

void pw_meta_after_fork(void)
{
	memset((void *)path_slots, 0, sizeof path_slots);
}

/* A call naming a path relative to dirfd: arg0 = dirfd, the path interned once, and the working directory
 * when the path is relative to it (pw_record_path). */
#define PW_META_PATH_WRAP(ev, ret_t, name, params, args, dirfd, path) \
	PW_WRAP_PATH(META, ev, ret_t, name, params, args, dirfd, dirfd, path, ret < 0, intern_path_once)

#define PW_STAT_WRAP(ev, name, stat_t) \
	PW_META_PATH_WRAP(ev, int, name, (const char *path, struct stat_t *st), (path, st), AT_FDCWD, path)
#define PW_XSTAT_WRAP(ev, name, stat_t)                                                                      \
	PW_META_PATH_WRAP(ev, int, name, (int ver, const char *path, struct stat_t *st), (ver, path, st), AT_FDCWD, \
			  path)
PW_STAT_WRAP(STAT, stat, stat)
PW_STAT_WRAP(STAT, stat64, stat64)
PW_XSTAT_WRAP(STAT, __xstat, stat)
PW_XSTAT_WRAP(STAT, __xstat64, stat64)
PW_STAT_WRAP(LSTAT, lstat, stat)
PW_STAT_WRAP(LSTAT, lstat64, stat64)
PW_XSTAT_WRAP(LSTAT, __lxstat, stat)
PW_XSTAT_WRAP(LSTAT, __lxstat64, stat64)

PW_WRAP(META, FSTAT, int, fstat, (int fd, struct stat *st), (fd, st), fd, 0, ret < 0)
PW_WRAP(META, FSTAT, int, fstat64, (int fd, struct stat64 *st), (fd, st), fd, 0, ret < 0)
PW_WRAP(META, FSTAT, int, __fxstat, (int ver, int fd, struct stat *st), (ver, fd, st), fd, 0, ret < 0)
PW_WRAP(META, FSTAT, int, __fxstat64, (int ver, int fd, struct stat64 *st), (ver, fd, st), fd, 0, ret < 0)

int pw_fstat_unrecorded(int fd, struct stat *st)
{
	PW_RESOLVE(fstat);
	return real_fstat(fd, st);
}

PW_META_PATH_WRAP(FSTATAT, int, fstatat, (int dirfd, const char *path, struct stat *st, int flags),
		  (dirfd, path, st, flags), dirfd, path)
PW_META_PATH_WRAP(FSTATAT, int, fstatat64, (int dirfd, const char *path, struct stat64 *st, int flags),
		  (dirfd, path, st, flags), dirfd, path)
PW_META_PATH_WRAP(FSTATAT, int, __fxstatat, (int ver, int dirfd, const char *path, struct stat *st, int flags),
		  (ver, dirfd, path, st, flags), dirfd, path)
PW_META_PATH_WRAP(FSTATAT, int, __fxstatat64, (int ver, int dirfd, const char *path, struct stat64 *st, int flags),
		  (ver, dirfd, path, st, flags), dirfd, path)
PW_META_PATH_WRAP(STATX, int, statx, (int dirfd, const char *path, int flags, unsigned int mask, struct statx *st),
		  (dirfd, path, flags, mask, st), dirfd, path)

PW_META_PATH_WRAP(ACCESS, int, access, (const char *path, int mode), (path, mode), AT_FDCWD, path)
PW_META_PATH_WRAP(FACCESSAT, int, faccessat, (int dirfd, const char *path, int mode, int flags),
		  (dirfd, path, mode, flags), dirfd, path)

int pw_access_unrecorded(const char *path, int mode)
{
	PW_RESOLVE(access);
	return real_access(path, mode);
}

/* A directory stream is followed by its descriptor: opendir binds it to the path as an open does, readdir
 * counts on it, closedir unbinds it. */
PW_WRAP_PATH(META, OPENDIR, DIR *, opendir, (const char *path), (path), ret ? dirfd(ret) : -1, AT_FDCWD, path, !ret,
	     intern_path_once)
PW_WRAP(META, FDOPENDIR, DIR *, fdopendir, (int fd), (fd), fd, 0, !ret)

/* readdir leaves errno alone at the end of the directory and sets it on an error: errno is cleared for the
 * call to tell the two apart, and given back when the call left it clear. */
#define PW_READDIR_WRAP(name, dirent_t)                                                \
	PW_REAL(struct dirent_t *, name, (DIR *));                                     \
	PW_EXPORT struct dirent_t *name(DIR *d)                                        \
	{                                                                              \
		PW_RESOLVE(name);                                                      \
		if (!PW_SHOULD_RECORD(META, READDIR))                                  \
			return real_##name(d);                                         \
		int before = errno;                                                    \
		errno = 0;                                                             \
		PW_BEGIN();                                                            \
		struct dirent_t *ret = real_##name(d);                                 \
		int failed = !ret && errno;                                            \
		if (!errno)                                                            \
			errno = before;                                                \
		PW_END(READDIR, ret != NULL, dirfd(d), 0, failed);                     \
		return ret;                                                            \
	}
PW_READDIR_WRAP(readdir, dirent)
PW_READDIR_WRAP(readdir64, dirent64)

PW_WRAP(META, GETDENTS64, ssize_t, getdents64, (int fd, void *buf, size_t n), (fd, buf, n), fd,
	ret > 0 ? (uint64_t)ret : 0, ret < 0)

/* The descriptor of a stream, -1 for NULL: glibc's headers declare the argument non-null, but closedir(NULL)
 * fails with EINVAL, so the test is hidden from the compiler's assumption. */
static int stream_fd(DIR *d)
{
	__asm__("" : "+r"(d));
	return d ? dirfd(d) : -1;
}

/* The descriptor is read before the call frees the stream. */
PW_REAL(int, closedir, (DIR *));
PW_EXPORT int closedir(DIR *d)
{
	PW_RESOLVE(closedir);
	if (!PW_SHOULD_RECORD(META, CLOSEDIR))
		return real_closedir(d);
	int fd = stream_fd(d);
	PW_BEGIN();
	int ret = real_closedir(d);
	PW_END(CLOSEDIR, ret, fd, 0, ret < 0);
	return ret;
}
