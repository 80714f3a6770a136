/* stdio calls that move data. Records carry fileno() of the stream, so the report joins them to the path its
 * fopen (or the fd's open) recorded. glibc's stdio reaches the kernel through its own internal read/write, so
 * these bytes are not counted twice by the POSIX wrappers. */
#define _GNU_SOURCE
/* Keep glibc from defining getline & co. as extern inlines here: this file defines the real symbols. */
#define __NO_INLINE__ 1
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pw_preload.h"

/* glibc may define these as macros under optimisation; the wrappers need the functions. */
#undef fread_unlocked
#undef fwrite_unlocked
#undef fgets_unlocked
#undef fputs_unlocked
#undef getline

/* A function, not a macro: glibc declares the stream arguments nonnull, but fflush(NULL) is valid. */
static int stream_fd(FILE *stream)
{
	return stream ? fileno(stream) : -1;
}
#define FD_OF(stream) stream_fd(stream)

#define ITEMS_BYTES(ret, size) ((uint64_t)(ret) * (uint64_t)(size))
#define LINE_BYTES(ret) ((ret) ? strlen(ret) : 0)
#define NONNEG(ret) ((ret) > 0 ? (uint64_t)(ret) : 0)

PW_WRAP_OPEN(STDIO, FOPEN, FILE *, fopen, (const char *path, const char *mode), (path, mode), FD_OF(ret), AT_FDCWD,
	     path, !ret)
PW_WRAP_OPEN(STDIO, FOPEN, FILE *, fopen64, (const char *path, const char *mode), (path, mode), FD_OF(ret), AT_FDCWD,
	     path, !ret)
PW_WRAP(STDIO, FDOPEN, FILE *, fdopen, (int fd, const char *mode), (fd, mode), fd, 0, !ret)

PW_REAL(int, fclose, (FILE *));
PW_EXPORT int fclose(FILE *stream)
{
	PW_RESOLVE(fclose);
	if (!PW_SHOULD_RECORD(STDIO, FCLOSE))
		return real_fclose(stream);
	int saved = errno; /* fileno() sets errno on a stream without a descriptor (fmemopen) */
	int fd = FD_OF(stream);
	errno = saved;
	PW_BEGIN();
	int ret = real_fclose(stream);
	PW_END(FCLOSE, ret, fd, 0, ret == EOF);
	return ret;
}

PW_WRAP(STDIO, FREAD, size_t, fread, (void *p, size_t size, size_t n, FILE *s), (p, size, n, s), FD_OF(s),
	ITEMS_BYTES(ret, size), ret < n && ferror(s))
PW_WRAP(STDIO, FREAD, size_t, fread_unlocked, (void *p, size_t size, size_t n, FILE *s), (p, size, n, s),
	FD_OF(s), ITEMS_BYTES(ret, size), ret < n && ferror(s))
PW_WRAP(STDIO, FREAD, size_t, __fread_chk, (void *p, size_t plen, size_t size, size_t n, FILE *s),
	(p, plen, size, n, s), FD_OF(s), ITEMS_BYTES(ret, size), ret < n && ferror(s))
PW_WRAP(STDIO, FWRITE, size_t, fwrite, (const void *p, size_t size, size_t n, FILE *s), (p, size, n, s),
	FD_OF(s), ITEMS_BYTES(ret, size), ret < n)
PW_WRAP(STDIO, FWRITE, size_t, fwrite_unlocked, (const void *p, size_t size, size_t n, FILE *s),
	(p, size, n, s), FD_OF(s), ITEMS_BYTES(ret, size), ret < n)
PW_WRAP(STDIO, FGETS, char *, fgets, (char *buf, int n, FILE *s), (buf, n, s), FD_OF(s), LINE_BYTES(ret),
	!ret && ferror(s))
PW_WRAP(STDIO, FGETS, char *, fgets_unlocked, (char *buf, int n, FILE *s), (buf, n, s), FD_OF(s),
	LINE_BYTES(ret), !ret && ferror(s))
PW_WRAP(STDIO, FGETS, char *, __fgets_chk, (char *buf, size_t blen, int n, FILE *s), (buf, blen, n, s), FD_OF(s),
	LINE_BYTES(ret), !ret && ferror(s))
PW_WRAP(STDIO, FPUTS, int, fputs, (const char *str, FILE *s), (str, s), FD_OF(s), ret >= 0 ? strlen(str) : 0,
	ret == EOF)
PW_WRAP(STDIO, FPUTS, int, fputs_unlocked, (const char *str, FILE *s), (str, s), FD_OF(s),
	ret >= 0 ? strlen(str) : 0, ret == EOF)
PW_WRAP(STDIO, PUTS, int, puts, (const char *str), (str), FD_OF(stdout), ret >= 0 ? strlen(str) + 1 : 0,
	ret == EOF)
PW_WRAP(STDIO, VFPRINTF, int, vfprintf, (FILE *s, const char *fmt, va_list ap), (s, fmt, ap), FD_OF(s),
	NONNEG(ret), ret < 0)
PW_WRAP(STDIO, VFPRINTF, int, __vfprintf_chk, (FILE *s, int flag, const char *fmt, va_list ap),
	(s, flag, fmt, ap), FD_OF(s), NONNEG(ret), ret < 0)
PW_WRAP(STDIO, GETDELIM, ssize_t, getdelim, (char **line, size_t *n, int delim, FILE *s), (line, n, delim, s),
	FD_OF(s), NONNEG(ret), ret < 0 && ferror(s))
PW_WRAP(STDIO, GETDELIM, ssize_t, __getdelim, (char **line, size_t *n, int delim, FILE *s),
	(line, n, delim, s), FD_OF(s), NONNEG(ret), ret < 0 && ferror(s))
PW_WRAP(STDIO, GETDELIM, ssize_t, getline, (char **line, size_t *n, FILE *s), (line, n, s), FD_OF(s),
	NONNEG(ret), ret < 0 && ferror(s))
PW_WRAP(STDIO, FFLUSH, int, fflush, (FILE *s), (s), FD_OF(s), 0, ret == EOF)

/* The variadic printers record through the same path as their v-forms; real_vfprintf and
 * real___vfprintf_chk come from the wrappers above. */
#define PW_PRINTF_BODY(ev, stream, call)                         \
	va_list ap;                                              \
	va_start(ap, fmt);                                       \
	int ret;                                                 \
	if (!pw_should_record(PW_DOM_STDIO)) {                   \
		ret = call;                                      \
		va_end(ap);                                      \
		return ret;                                      \
	}                                                        \
	PW_BEGIN();                                              \
	ret = call;                                              \
	PW_END(ev, ret, FD_OF(stream), NONNEG(ret), ret < 0);    \
	va_end(ap);                                              \
	return ret

PW_EXPORT int fprintf(FILE *s, const char *fmt, ...)
{
	PW_RESOLVE(vfprintf);
	PW_PRINTF_BODY(FPRINTF, s, real_vfprintf(s, fmt, ap));
}

PW_EXPORT int __fprintf_chk(FILE *s, int flag, const char *fmt, ...)
{
	PW_RESOLVE(__vfprintf_chk);
	PW_PRINTF_BODY(FPRINTF, s, real___vfprintf_chk(s, flag, fmt, ap));
}

PW_EXPORT int printf(const char *fmt, ...)
{
	PW_RESOLVE(vfprintf);
	PW_PRINTF_BODY(PRINTF, stdout, real_vfprintf(stdout, fmt, ap));
}

PW_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	PW_RESOLVE(__vfprintf_chk);
	PW_PRINTF_BODY(PRINTF, stdout, real___vfprintf_chk(stdout, flag, fmt, ap));
}
