/* stdio calls that move data. Records carry fileno() of the stream, so the report joins them to the path its
 * fopen (or the fd's open) recorded. glibc's stdio reaches the kernel through its own internal read/write, so
 * these bytes are not counted twice by the POSIX wrappers. Character calls are accounted at the stream's buffer. */
#define _GNU_SOURCE
/* Keep glibc from defining getline & co. as extern inlines here: this file defines the real symbols. */
#define __NO_INLINE__ 1
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/single_threaded.h>

#include "pw_preload.h"

/* glibc may define these as macros under optimisation; the wrappers need the functions. */
#undef fread_unlocked
#undef fwrite_unlocked
#undef fgets_unlocked
#undef fputs_unlocked
#undef getline
#undef putc
#undef getc
#undef putc_unlocked
#undef getc_unlocked
#undef fputc_unlocked
#undef fgetc_unlocked
#undef putchar_unlocked
#undef getchar_unlocked

/* A function, not a macro: glibc declares the stream arguments nonnull, but fflush(NULL) is valid. */
static int stream_fd(FILE *stream)
{
	return stream ? fileno(stream) : -1;
}
#define FD_OF(stream) stream_fd(stream)

#define ITEMS_BYTES(ret, size) ((uint64_t)(ret) * (uint64_t)(size))
#define LINE_BYTES(ret) ((ret) ? strlen(ret) : 0)
#define NONNEG(ret) ((ret) > 0 ? (uint64_t)(ret) : 0)

/* ---- Bytes accounted at the stream's buffer ----
 * putc and getc move a byte between the program and the stream's buffer, mostly without calling anything
 * (the _unlocked macros are inline; putc itself is too cheap to record), so their bytes are read off the
 * buffer: each stream has marks, the buffer positions up to which its bytes are accounted, which every
 * recorded call moves past its own bytes. What the write (read) pointer has moved beyond its mark was put
 * (taken) by calls not recorded one by one; it is recorded when the buffer is flushed (refilled), with the
 * time of the call that did it. The marks change under the stream's lock, so no byte is counted twice. */

/* glibc's libio: the stream is in ungetc's backup area (libio.h), and the list of open streams. */
#define PW_IO_IN_BACKUP 0x100
#define PW_IO_CURRENTLY_PUTTING 0x800
extern FILE *_IO_list_all;
void _IO_list_lock(void);
void _IO_list_unlock(void);

#define STREAM_SLOTS 1024u /* a power of two */
#define STREAM_PROBES 32u
#define STREAM_FREE ((uintptr_t)0)
#define STREAM_GONE ((uintptr_t)1)
#define STREAM_EMIT_AT 16384u /* bytes a stream keeps pending before a record (a crash loses at most this) */

struct stream_acct {
	_Atomic uintptr_t key; /* the FILE, STREAM_FREE or STREAM_GONE */
	int fd;
	char *wmark, *rmark;
	uint64_t wpend, rpend; /* bytes accounted, not yet recorded */
};
static struct stream_acct streams[STREAM_SLOTS];

static size_t stream_slot(const FILE *f, size_t probe)
{
	uint64_t h = (uint64_t)(uintptr_t)f * 0x9e3779b97f4a7c15ull;
	return (size_t)((h >> 32) + probe) & (STREAM_SLOTS - 1);
}

static struct stream_acct *stream_find(const FILE *f)
{
	for (size_t i = 0; i < STREAM_PROBES; i++) {
		struct stream_acct *a = &streams[stream_slot(f, i)];
		uintptr_t k = atomic_load_explicit(&a->key, memory_order_acquire);
		if (k == (uintptr_t)f)
			return a;
		if (k == STREAM_FREE)
			return NULL;
	}
	return NULL;
}

static void stream_reset(struct stream_acct *a, FILE *f)
{
	a->fd = f->_fileno;
	a->wmark = f->_IO_write_ptr;
	a->rmark = f->_IO_read_ptr;
	a->wpend = a->rpend = 0;
}

/* The thread's last stream and its entry: most calls are on the stream of the call before. */
static __thread struct {
	const FILE *f;
	struct stream_acct *a;
} last_stream;

/* The stream's entry, made with its marks where its pointers are now (what its buffer already holds was
 * there before profwrap looked). NULL when the table has no room for it: its characters go uncounted. */
static struct stream_acct *stream_entry(FILE *f)
{
	struct stream_acct *a = last_stream.f == f ? last_stream.a : NULL;
	if (!a || atomic_load_explicit(&a->key, memory_order_relaxed) != (uintptr_t)f)
		a = stream_find(f);
	if (a) {
		if (a->fd != f->_fileno) /* a stream closed behind our back (pclose), its address reused */
			stream_reset(a, f);
		last_stream.f = f;
		last_stream.a = a;
		return a;
	}
	for (size_t i = 0; i < STREAM_PROBES; i++) {
		a = &streams[stream_slot(f, i)];
		uintptr_t k = atomic_load_explicit(&a->key, memory_order_relaxed);
		if ((k == STREAM_FREE || k == STREAM_GONE) &&
		    atomic_compare_exchange_strong_explicit(&a->key, &k, (uintptr_t)f, memory_order_acq_rel,
							    memory_order_relaxed)) {
			stream_reset(a, f);
			last_stream.f = f;
			last_stream.a = a;
			return a;
		}
	}
	return NULL;
}

/* Brings the marks to the stream's pointers, adding what moved to the pending bytes. A mark outside the
 * buffer's active part means the buffer was flushed or refilled where no wrapper saw it: only what the
 * pointer moved since is counted (the rest is lost, never counted twice). Reading back (ungetc within the
 * buffer) takes bytes off; ungetc's backup area is not counted (its bytes were, when first read). */
static inline __attribute__((always_inline)) void stream_catch_up(struct stream_acct *a, FILE *f)
{
	char *wp = f->_IO_write_ptr, *wb = f->_IO_write_base;
	if (wp && wb) {
		char *from = a->wmark >= wb && a->wmark <= wp ? a->wmark : wb;
		a->wpend += (uint64_t)(wp - from);
	}
	a->wmark = wp;
	if (f->_flags & PW_IO_IN_BACKUP)
		return;
	char *rp = f->_IO_read_ptr, *rb = f->_IO_read_base, *re = f->_IO_read_end;
	if (rp && rb) {
		if (a->rmark < rb || a->rmark > re)
			a->rpend += (uint64_t)(rp - rb);
		else if (rp >= a->rmark)
			a->rpend += (uint64_t)(rp - a->rmark);
		else
			a->rpend -= (uint64_t)(a->rmark - rp) < a->rpend ? (uint64_t)(a->rmark - rp) : a->rpend;
	}
	a->rmark = rp;
}

/* Records the pending bytes of one direction, the call that moved them having taken t0..t1. */
static void stream_emit(struct stream_acct *a, int out, uint64_t t0, uint64_t t1)
{
	uint64_t *pend = out ? &a->wpend : &a->rpend;
	if (!*pend)
		return;
	struct pw_guarded was = pw_guard_enter(PW_GUARD_RECORDING);
	pw_emit_call(out ? PW_EV_PUTC_BUFFERED : PW_EV_GETC_BUFFERED, t0, t1, 0, (uint64_t)a->fd, *pend, 0);
	*pend = 0;
	pw_guard_leave(was);
}

static void stream_emit_both(struct stream_acct *a)
{
	uint64_t now = pw_clock_ticks();
	stream_emit(a, 1, now, now);
	stream_emit(a, 0, now, now);
}

/* A stream held for a wrapped call: locked (where another thread may use it), its entry caught up. */
struct held {
	FILE *f;
	struct stream_acct *a; /* NULL: not accounted (no descriptor, no room) */
	int locked;
	uint64_t ahead; /* bytes read ahead and not taken when held */
};

/* What stdio read ahead and the program never took (the kernel counted it) is noted in the segment. */
static void note_unread(uint64_t n)
{
	if (n && pw_seg)
		atomic_fetch_add_explicit(&pw_seg->io_unread, n, memory_order_relaxed);
}

static inline __attribute__((always_inline)) struct held stream_hold(FILE *f)
{
	struct held h = {f, NULL, 0, 0};
	if (!f || f->_fileno < 0)
		return h;
	h.locked = !__libc_single_threaded && !(f->_flags & _IO_USER_LOCK);
	if (h.locked)
		flockfile(f);
	h.a = stream_entry(f);
	if (h.a)
		stream_catch_up(h.a, f);
	if (!(f->_flags & (PW_IO_IN_BACKUP | PW_IO_CURRENTLY_PUTTING)) && f->_IO_read_end > f->_IO_read_ptr)
		h.ahead = (uint64_t)(f->_IO_read_end - f->_IO_read_ptr);
	return h;
}

/* After a recorded call: its bytes are behind the marks; pending bytes go out once there are many. A write
 * that followed reads leaves what was read ahead behind. */
static inline __attribute__((always_inline)) void stream_release(struct held h)
{
	if (h.ahead && (h.f->_flags & PW_IO_CURRENTLY_PUTTING))
		note_unread(h.ahead);
	if (h.a) {
		h.a->wmark = h.f->_IO_write_ptr;
		if (!(h.f->_flags & PW_IO_IN_BACKUP))
			h.a->rmark = h.f->_IO_read_ptr;
		if (h.a->wpend >= STREAM_EMIT_AT || h.a->rpend >= STREAM_EMIT_AT)
			stream_emit_both(h.a);
	}
	if (h.locked)
		funlockfile(h.f);
}

/* After a character call that found no room (or nothing to read) in the buffer, t0 its start: moved is the
 * byte it put or took (0 or 1). An output call that flushed, or an input call (it read, or hit the end),
 * records the pending bytes with its time. */
static void char_call_done(struct held h, uint64_t t0, int out, const char *ptr_before, uint64_t moved)
{
	uint64_t t1 = pw_clock_ticks();
	if (h.a) {
		if (out)
			h.a->wpend += moved;
		else
			h.a->rpend += moved;
		int flushed = !out || (ptr_before && h.f->_IO_write_ptr != ptr_before + moved);
		h.a->wmark = h.f->_IO_write_ptr;
		if (!(h.f->_flags & PW_IO_IN_BACKUP))
			h.a->rmark = h.f->_IO_read_ptr;
		if (flushed)
			stream_emit(h.a, out, t0, t1);
	}
	if (h.locked)
		funlockfile(h.f);
}

/* A character call: straight to libc while the buffer has room (or bytes); else timed, and the pending bytes
 * recorded if it flushed or read. room is an expression of the stream f. */
#define PW_CHAR_WRAP(ret_t, name, params, args, stream, room, out, moved)                 \
	PW_REAL(ret_t, name, params);                                                     \
	PW_EXPORT ret_t name params                                                       \
	{                                                                                 \
		PW_RESOLVE(name);                                                         \
		FILE *f = stream;                                                         \
		if (PW_LIKELY(room) || !pw_should_record(PW_DOM_STDIO))                   \
			return real_##name args;                                          \
		struct held h = stream_hold(f);                                           \
		const char *before = f->_IO_write_ptr;                                    \
		uint64_t t0 = pw_clock_ticks();                                           \
		ret_t ret = real_##name args;                                             \
		char_call_done(h, t0, out, before, moved);                                \
		return ret;                                                               \
	}

#define ROOM_OUT (f->_IO_write_ptr < f->_IO_write_end)
#define ROOM_IN (f->_IO_read_ptr < f->_IO_read_end)
#define ONE_IF_OK (uint64_t)(ret != EOF)

PW_CHAR_WRAP(int, putc, (int c, FILE *s), (c, s), s, ROOM_OUT, 1, ONE_IF_OK)
PW_CHAR_WRAP(int, fputc, (int c, FILE *s), (c, s), s, ROOM_OUT, 1, ONE_IF_OK)
PW_CHAR_WRAP(int, _IO_putc, (int c, FILE *s), (c, s), s, ROOM_OUT, 1, ONE_IF_OK)
PW_CHAR_WRAP(int, putc_unlocked, (int c, FILE *s), (c, s), s, ROOM_OUT, 1, ONE_IF_OK)
PW_CHAR_WRAP(int, fputc_unlocked, (int c, FILE *s), (c, s), s, ROOM_OUT, 1, ONE_IF_OK)
PW_CHAR_WRAP(int, putchar, (int c), (c), stdout, ROOM_OUT, 1, ONE_IF_OK)
PW_CHAR_WRAP(int, putchar_unlocked, (int c), (c), stdout, ROOM_OUT, 1, ONE_IF_OK)
PW_CHAR_WRAP(int, getc, (FILE *s), (s), s, ROOM_IN, 0, ONE_IF_OK)
PW_CHAR_WRAP(int, fgetc, (FILE *s), (s), s, ROOM_IN, 0, ONE_IF_OK)
PW_CHAR_WRAP(int, _IO_getc, (FILE *s), (s), s, ROOM_IN, 0, ONE_IF_OK)
PW_CHAR_WRAP(int, getc_unlocked, (FILE *s), (s), s, ROOM_IN, 0, ONE_IF_OK)
PW_CHAR_WRAP(int, fgetc_unlocked, (FILE *s), (s), s, ROOM_IN, 0, ONE_IF_OK)
PW_CHAR_WRAP(int, getchar, (void), (), stdin, ROOM_IN, 0, ONE_IF_OK)
PW_CHAR_WRAP(int, getchar_unlocked, (void), (), stdin, ROOM_IN, 0, ONE_IF_OK)
/* What the inline macros call when the buffer is full (empty): __overflow(f, EOF) only flushes, and
 * __underflow only looks at the next byte. */
PW_CHAR_WRAP(int, __overflow, (FILE *s, int c), (s, c), s, 0, 1, (uint64_t)(c != EOF && ret != EOF))
PW_CHAR_WRAP(int, __uflow, (FILE *s), (s), s, 0, 0, ONE_IF_OK)
PW_CHAR_WRAP(int, __underflow, (FILE *s), (s), s, 0, 0, 0)

/* ---- Recorded calls ---- */

/* A recorded call on a stream: its bytes (a1) in its own record, the marks moved past them. */
#define PW_STDIO_WRAP(ev, ret_t, name, params, args, stream, a1, failed) \
	PW_REAL(ret_t, name, params);                                    \
	PW_EXPORT ret_t name params                                      \
	{                                                                \
		PW_RESOLVE(name);                                        \
		if (!PW_SHOULD_RECORD(STDIO, ev))                        \
			return real_##name args;                         \
		struct held held_ = stream_hold(stream);                 \
		PW_BEGIN();                                              \
		ret_t ret = real_##name args;                            \
		PW_END(ev, ret, FD_OF(stream), a1, failed);              \
		stream_release(held_);                                   \
		return ret;                                              \
	}

/* A stream just made: an entry left at its address by one closed where no wrapper saw it is forgotten. */
static void stream_made(FILE *f)
{
	struct stream_acct *a = f ? stream_find(f) : NULL;
	if (a)
		atomic_store_explicit(&a->key, STREAM_GONE, memory_order_release);
}

/* record: the statement that records the call, after the real one (ret and t0_ in scope). */
#define PW_FOPEN_WRAP(ev, name, params, args, record)    \
	PW_REAL(FILE *, name, params);                   \
	PW_EXPORT FILE *name params                      \
	{                                                \
		PW_RESOLVE(name);                        \
		if (!PW_SHOULD_RECORD(STDIO, ev))        \
			return real_##name args;         \
		PW_BEGIN();                              \
		FILE *ret = real_##name args;            \
		stream_made(ret);                        \
		record;                                  \
		return ret;                              \
	}

/* fopen is an open: its path is resolved against the working directory (pw_record_open). */
#define PW_RECORD_FOPEN(path) \
	pw_record_open(PW_EV_FOPEN, t0_, (int64_t)(intptr_t)ret, FD_OF(ret), !ret, AT_FDCWD, path)

PW_FOPEN_WRAP(FOPEN, fopen, (const char *path, const char *mode), (path, mode), PW_RECORD_FOPEN(path))
PW_FOPEN_WRAP(FOPEN, fopen64, (const char *path, const char *mode), (path, mode), PW_RECORD_FOPEN(path))
PW_FOPEN_WRAP(FDOPEN, fdopen, (int fd, const char *mode), (fd, mode), PW_END(FDOPEN, ret, fd, 0, !ret))

/* What stdio read ahead and the program never took. */
static uint64_t unread_bytes(const FILE *f)
{
	if (f->_fileno < 0 || (f->_flags & (PW_IO_IN_BACKUP | PW_IO_CURRENTLY_PUTTING)) ||
	    f->_IO_read_end <= f->_IO_read_ptr)
		return 0;
	return (uint64_t)(f->_IO_read_end - f->_IO_read_ptr);
}

/* Its pending bytes go out before the close, whose descriptor may then name another file. */
PW_REAL(int, fclose, (FILE *));
PW_EXPORT int fclose(FILE *stream)
{
	PW_RESOLVE(fclose);
	if (!PW_SHOULD_RECORD(STDIO, FCLOSE))
		return real_fclose(stream);
	int saved = errno; /* fileno() sets errno on a stream without a descriptor (fmemopen) */
	int fd = FD_OF(stream);
	errno = saved;
	struct held h = stream_hold(stream);
	if (h.a) {
		stream_emit_both(h.a);
		atomic_store_explicit(&h.a->key, STREAM_GONE, memory_order_release);
	}
	if (stream)
		note_unread(unread_bytes(stream));
	if (h.locked)
		funlockfile(stream);
	PW_BEGIN();
	int ret = real_fclose(stream);
	PW_END(FCLOSE, ret, fd, 0, ret == EOF);
	return ret;
}

PW_STDIO_WRAP(FREAD, size_t, fread, (void *p, size_t size, size_t n, FILE *s), (p, size, n, s), s,
	      ITEMS_BYTES(ret, size), ret < n && ferror(s))
PW_STDIO_WRAP(FREAD, size_t, fread_unlocked, (void *p, size_t size, size_t n, FILE *s), (p, size, n, s), s,
	      ITEMS_BYTES(ret, size), ret < n && ferror(s))
PW_STDIO_WRAP(FREAD, size_t, __fread_chk, (void *p, size_t plen, size_t size, size_t n, FILE *s),
	      (p, plen, size, n, s), s, ITEMS_BYTES(ret, size), ret < n && ferror(s))
PW_STDIO_WRAP(FWRITE, size_t, fwrite, (const void *p, size_t size, size_t n, FILE *s), (p, size, n, s), s,
	      ITEMS_BYTES(ret, size), ret < n)
PW_STDIO_WRAP(FWRITE, size_t, fwrite_unlocked, (const void *p, size_t size, size_t n, FILE *s), (p, size, n, s),
	      s, ITEMS_BYTES(ret, size), ret < n)
PW_STDIO_WRAP(FGETS, char *, fgets, (char *buf, int n, FILE *s), (buf, n, s), s, LINE_BYTES(ret),
	      !ret && ferror(s))
PW_STDIO_WRAP(FGETS, char *, fgets_unlocked, (char *buf, int n, FILE *s), (buf, n, s), s, LINE_BYTES(ret),
	      !ret && ferror(s))
PW_STDIO_WRAP(FGETS, char *, __fgets_chk, (char *buf, size_t blen, int n, FILE *s), (buf, blen, n, s), s,
	      LINE_BYTES(ret), !ret && ferror(s))
PW_STDIO_WRAP(FPUTS, int, fputs, (const char *str, FILE *s), (str, s), s, ret >= 0 ? strlen(str) : 0, ret == EOF)
PW_STDIO_WRAP(FPUTS, int, fputs_unlocked, (const char *str, FILE *s), (str, s), s, ret >= 0 ? strlen(str) : 0,
	      ret == EOF)
PW_STDIO_WRAP(PUTS, int, puts, (const char *str), (str), stdout, ret >= 0 ? strlen(str) + 1 : 0, ret == EOF)
PW_STDIO_WRAP(VFPRINTF, int, vfprintf, (FILE *s, const char *fmt, va_list ap), (s, fmt, ap), s, NONNEG(ret),
	      ret < 0)
PW_STDIO_WRAP(VFPRINTF, int, __vfprintf_chk, (FILE *s, int flag, const char *fmt, va_list ap), (s, flag, fmt, ap),
	      s, NONNEG(ret), ret < 0)
PW_STDIO_WRAP(PRINTF, int, vprintf, (const char *fmt, va_list ap), (fmt, ap), stdout, NONNEG(ret), ret < 0)
PW_STDIO_WRAP(PRINTF, int, __vprintf_chk, (int flag, const char *fmt, va_list ap), (flag, fmt, ap), stdout,
	      NONNEG(ret), ret < 0)
PW_STDIO_WRAP(GETDELIM, ssize_t, getdelim, (char **line, size_t *n, int delim, FILE *s), (line, n, delim, s), s,
	      NONNEG(ret), ret < 0 && ferror(s))
PW_STDIO_WRAP(GETDELIM, ssize_t, __getdelim, (char **line, size_t *n, int delim, FILE *s), (line, n, delim, s), s,
	      NONNEG(ret), ret < 0 && ferror(s))
PW_STDIO_WRAP(GETDELIM, ssize_t, getline, (char **line, size_t *n, FILE *s), (line, n, s), s, NONNEG(ret),
	      ret < 0 && ferror(s))
PW_WRAP(STDIO, DPRINTF, int, vdprintf, (int fd, const char *fmt, va_list ap), (fd, fmt, ap), fd, NONNEG(ret),
	ret < 0)
PW_WRAP(STDIO, DPRINTF, int, __vdprintf_chk, (int fd, int flag, const char *fmt, va_list ap), (fd, flag, fmt, ap),
	fd, NONNEG(ret), ret < 0)

/* What scanf took from the buffer: the read pointer's move, or across one refill the rest of the old
 * buffer and the start of the new one (a conversion that spans more is undercounted). */
struct scan_start {
	const char *ptr, *base, *end;
};

static uint64_t scan_taken(const FILE *f, struct scan_start s)
{
	const char *rp = f->_IO_read_ptr, *rb = f->_IO_read_base, *re = f->_IO_read_end;
	if (!rp || !rb)
		return 0;
	if (s.ptr && rb == s.base && re == s.end && rp >= s.ptr)
		return (uint64_t)(rp - s.ptr);
	return (uint64_t)(s.end > s.ptr ? s.end - s.ptr : 0) + (uint64_t)(rp - rb);
}

/* The scanf family: one record per call, its bytes read off the buffer. */
static int scan_call(int (*real)(FILE *, const char *, va_list), FILE *s, const char *fmt, va_list ap)
{
	if (!s || !pw_should_record(PW_DOM_STDIO))
		return real(s, fmt, ap);
	struct held h = stream_hold(s);
	struct scan_start st = {s->_IO_read_ptr, s->_IO_read_base, s->_IO_read_end};
	PW_BEGIN();
	int ret = real(s, fmt, ap);
	uint64_t taken = scan_taken(s, st);
	PW_END(FSCANF, ret, FD_OF(s), taken, ret == EOF && ferror(s));
	stream_release(h);
	return ret;
}

PW_REAL(int, vfscanf, (FILE *, const char *, va_list));
PW_REAL(int, __isoc99_vfscanf, (FILE *, const char *, va_list));

/* <stdio.h> renames the C99 scanf family (fscanf is __isoc99_fscanf in C11): each name is defined under its
 * own symbol. */
#define PW_SCAN_SYMBOL(name) pw_##name(SCAN_PARAMS_##name) __asm__(#name)
#define SCAN_PARAMS_vfscanf FILE *s, const char *fmt, va_list ap
#define SCAN_PARAMS___isoc99_vfscanf FILE *s, const char *fmt, va_list ap
#define SCAN_PARAMS_vscanf const char *fmt, va_list ap
#define SCAN_PARAMS___isoc99_vscanf const char *fmt, va_list ap
#define SCAN_PARAMS_fscanf FILE *s, const char *fmt, ...
#define SCAN_PARAMS___isoc99_fscanf FILE *s, const char *fmt, ...
#define SCAN_PARAMS_scanf const char *fmt, ...
#define SCAN_PARAMS___isoc99_scanf const char *fmt, ...

#define PW_SCAN_V(name, real_name, stream)                         \
	PW_EXPORT int PW_SCAN_SYMBOL(name);                        \
	PW_EXPORT int pw_##name(SCAN_PARAMS_##name)                \
	{                                                          \
		PW_RESOLVE(real_name);                             \
		return scan_call(real_##real_name, stream, fmt, ap); \
	}
PW_SCAN_V(vfscanf, vfscanf, s)
PW_SCAN_V(__isoc99_vfscanf, __isoc99_vfscanf, s)
PW_SCAN_V(vscanf, vfscanf, stdin)
PW_SCAN_V(__isoc99_vscanf, __isoc99_vfscanf, stdin)

#define PW_SCAN_VARIADIC(name, real_name, stream)                   \
	PW_EXPORT int PW_SCAN_SYMBOL(name);                         \
	PW_EXPORT int pw_##name(SCAN_PARAMS_##name)                 \
	{                                                           \
		PW_RESOLVE(real_name);                              \
		va_list ap;                                         \
		va_start(ap, fmt);                                  \
		int ret = scan_call(real_##real_name, stream, fmt, ap); \
		va_end(ap);                                         \
		return ret;                                         \
	}
PW_SCAN_VARIADIC(fscanf, vfscanf, s)
PW_SCAN_VARIADIC(__isoc99_fscanf, __isoc99_vfscanf, s)
PW_SCAN_VARIADIC(scanf, vfscanf, stdin)
PW_SCAN_VARIADIC(__isoc99_scanf, __isoc99_vfscanf, stdin)

/* A seek discards the buffer, or moves within it, or reads the block it lands in (glibc reads from the block's
 * start). What stdio read and the program never took was counted by the kernel: the rest of a discarded
 * buffer, what a move forward skips, the start of the block read; the marks follow the move. */
static void seek_done(struct held h, struct scan_start st)
{
	FILE *f = h.f;
	if (h.a && !(f->_flags & PW_IO_IN_BACKUP)) {
		if (f->_IO_read_base != st.base || f->_IO_read_end != st.end)
			note_unread(h.ahead + (uint64_t)(f->_IO_read_ptr - f->_IO_read_base));
		else if (st.ptr && f->_IO_read_ptr > st.ptr)
			note_unread((uint64_t)(f->_IO_read_ptr - st.ptr));
	}
	h.ahead = 0;
	stream_release(h);
}

#define PW_SEEK_WRAP(ret_t, name, params, args)                                           \
	PW_REAL(ret_t, name, params);                                                     \
	PW_EXPORT ret_t name params                                                       \
	{                                                                                 \
		PW_RESOLVE(name);                                                         \
		if (!s || !pw_should_record(PW_DOM_STDIO))                                \
			return real_##name args;                                          \
		struct held h = stream_hold(s);                                           \
		struct scan_start st = {s->_IO_read_ptr, s->_IO_read_base, s->_IO_read_end}; \
		ret_t ret = real_##name args;                                             \
		seek_done(h, st);                                                         \
		return ret;                                                               \
	}
PW_SEEK_WRAP(int, fseek, (FILE *s, long off, int whence), (s, off, whence))
PW_SEEK_WRAP(int, fseeko, (FILE *s, off_t off, int whence), (s, off, whence))
PW_SEEK_WRAP(int, fseeko64, (FILE *s, off64_t off, int whence), (s, off, whence))
PW_SEEK_WRAP(int, fsetpos, (FILE *s, const fpos_t *pos), (s, pos))
PW_SEEK_WRAP(int, fsetpos64, (FILE *s, const fpos64_t *pos), (s, pos))

PW_REAL(void, rewind, (FILE *));
PW_EXPORT void rewind(FILE *s)
{
	PW_RESOLVE(rewind);
	if (!s || !pw_should_record(PW_DOM_STDIO)) {
		real_rewind(s);
		return;
	}
	struct held h = stream_hold(s);
	struct scan_start st = {s->_IO_read_ptr, s->_IO_read_base, s->_IO_read_end};
	real_rewind(s);
	seek_done(h, st);
}

/* Every open stream caught up, held in turn (fflush(NULL) takes the same locks in the same order), and its
 * pending bytes recorded when emit. */
static void streams_each(int emit)
{
	_IO_list_lock();
	for (FILE *f = _IO_list_all; f; f = f->_chain) {
		struct held h = stream_hold(f);
		if (h.a && emit)
			stream_emit_both(h.a);
		if (h.locked)
			funlockfile(f);
	}
	_IO_list_unlock();
}

/* fflush(NULL) flushes every stream: each one's pending bytes go out first, and its marks follow the flush. */
PW_REAL(int, fflush, (FILE *));
PW_EXPORT int fflush(FILE *s)
{
	PW_RESOLVE(fflush);
	if (!PW_SHOULD_RECORD(STDIO, FFLUSH))
		return real_fflush(s);
	struct held h = stream_hold(s);
	if (h.a)
		stream_emit_both(h.a);
	else if (!s)
		streams_each(1);
	PW_BEGIN();
	int ret = real_fflush(s);
	PW_END(FFLUSH, ret, FD_OF(s), 0, ret == EOF);
	if (!s)
		streams_each(0); /* the marks follow the flush */
	stream_release(h);
	return ret;
}

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
	struct held held_ = stream_hold(stream);                 \
	PW_BEGIN();                                              \
	ret = call;                                              \
	PW_END(ev, ret, FD_OF(stream), NONNEG(ret), ret < 0);    \
	stream_release(held_);                                   \
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

/* dprintf writes to a descriptor through a stream of libc's own: its return value is the bytes. */
#define PW_DPRINTF_BODY(call)                                    \
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
	PW_END(DPRINTF, ret, fd, NONNEG(ret), ret < 0);          \
	va_end(ap);                                              \
	return ret

PW_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	PW_RESOLVE(vdprintf);
	PW_DPRINTF_BODY(real_vdprintf(fd, fmt, ap));
}

PW_EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	PW_RESOLVE(__vdprintf_chk);
	PW_DPRINTF_BODY(real___vdprintf_chk(fd, flag, fmt, ap));
}

/* ---- Exit and fork ---- */

void pw_stdio_at_exit(uint64_t *unflushed, uint64_t *unread)
{
	*unflushed = *unread = 0;
	/* As libc's own flush at exit: no locks (a thread blocked in a read holds its stream's). */
	for (FILE *f = _IO_list_all; f; f = f->_chain) {
		if (f->_fileno < 0)
			continue;
		struct stream_acct *a = stream_find(f);
		if (a && a->fd == f->_fileno) {
			stream_catch_up(a, f);
			stream_emit_both(a);
		}
		if (f->_IO_write_ptr > f->_IO_write_base)
			*unflushed += (uint64_t)(f->_IO_write_ptr - f->_IO_write_base);
		*unread += unread_bytes(f);
	}
}

void pw_stdio_after_fork(void)
{
	for (size_t i = 0; i < STREAM_SLOTS; i++)
		streams[i].wpend = streams[i].rpend = 0;
}
