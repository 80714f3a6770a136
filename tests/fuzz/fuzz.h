/* Shared by the fuzz targets (one per .c file in tests/fuzz, each defining LLVMFuzzerTestOneInput): built by
 * `make fuzz` with clang's libFuzzer and ASan+UBSan, and with replay.c by the normal compiler as a unit binary
 * that runs the committed corpus once. A target checks what the code under test promises and calls abort()
 * when it does not, so a broken promise is a crash in both builds. */
#ifndef PW_FUZZ_H
#define PW_FUZZ_H

#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../collector/lib/json_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                              \
	do {                                                                                          \
		if (!(cond)) {                                                                        \
			fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                      \
		}                                                                                     \
	} while (0)

/* Reads every byte of [p, p+len), so that ASan sees a pointer handed out past its buffer. Returns a sum the
 * caller folds into something observable, so the reads are not optimised away. */
static inline uint64_t fuzz_touch(const void *p, size_t len)
{
	const volatile uint8_t *b = p;
	uint64_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum += b[i];
	return sum;
}

/* Whether [p, p+len) lies inside [base, base+size). */
static inline int fuzz_inside(const void *base, size_t size, const void *p, size_t len)
{
	const uint8_t *b = base, *q = p;
	return q >= b && len <= size && (size_t)(q - b) <= size - len;
}

/* A heap copy of data, 8-byte aligned (malloc's), of exactly size bytes: ASan sees a read one past it. */
static inline uint8_t *fuzz_copy(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	if (!b)
		abort();
	if (size)
		memcpy(b, data, size);
	return b;
}

/* ---- for the targets that run code writing and reading files: a private directory ---- */

/* Removes the plain files of dir (not its subdirectories). */
static inline void fuzz_clear_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	char path[512];
	while ((de = readdir(d))) {
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
			unlink(path);
	}
	closedir(d);
}

/* Creates dir (size bytes) as <tmpfs or /tmp>/pw-fuzz-<what>-<pid>: each input writes files there. */
static inline void fuzz_make_dir(char *dir, size_t size, const char *what)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, size, "%s/pw-fuzz-%s-%d", base, what, (int)getpid());
	FUZZ_CHECK(mkdir(dir, 0700) == 0);
}

static inline void fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size);
	close(fd);
}

/* The file at path is one strict JSON document and nothing else. */
static inline void fuzz_check_json(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	FUZZ_CHECK(fd >= 0);
	struct stat st;
	FUZZ_CHECK(fstat(fd, &st) == 0 && st.st_size > 0);
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	FUZZ_CHECK(map != MAP_FAILED);
	struct pw_jr r;
	pw_jr_init(&r, map, (size_t)st.st_size, PW_JR_DEPTH_MAX);
	int ok = pw_jr_skip(&r) == 0 && pw_jr_end(&r) == 0;
	if (!ok) {
		char why[256];
		fprintf(stderr, "%s is not JSON: %s\n", path, pw_jr_error(&r, why, sizeof why));
	}
	FUZZ_CHECK(ok);
	munmap(map, (size_t)st.st_size);
}

#endif
