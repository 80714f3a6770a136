/* setlocale: libc reads the locale alias file itself (its own fopen and reads, which no wrapper sees) the
 * first time a locale name needs it. The bytes a call read are what the kernel's rchar moved across it,
 * measured while the process has one thread (no other thread's reads in between) and only until a call has
 * read something: libc reads each alias file once. */
#define _GNU_SOURCE
#include <locale.h>
#include <sys/single_threaded.h>

#include "pw_preload.h"

#define SETLOCALE_MEASURED 4 /* calls measured at most: each costs two reads of /proc/self/io */

static int measured;

/* rchar now, read with the guard held (the reads go through the wrappers). Returns the bytes that read took,
 * which the kernel counts after it (they are profwrap's: added to the segment's io_own), or -1. */
static int rchar_now(uint64_t *rchar)
{
	uint64_t wchar;
	struct pw_guarded was = pw_guard_enter(PW_GUARD_INTERNAL);
	int len = pw_read_io(rchar, &wchar);
	if (len > 0 && pw_seg)
		atomic_fetch_add_explicit(&pw_seg->io_own, (uint64_t)len, memory_order_relaxed);
	pw_guard_leave(was);
	return pw_seg ? len : -1;
}

PW_REAL(char *, setlocale, (int, const char *));
PW_EXPORT char *setlocale(int category, const char *locale)
{
	PW_RESOLVE(setlocale);
	if (!locale || measured >= SETLOCALE_MEASURED || !__libc_single_threaded || !pw_should_record(PW_DOM_IO))
		return real_setlocale(category, locale);
	measured++;
	uint64_t before, after;
	int own = rchar_now(&before);
	uint64_t t0 = pw_clock_ticks();
	char *ret = real_setlocale(category, locale);
	uint64_t t1 = pw_clock_ticks();
	if (own < 0 || rchar_now(&after) < 0 || after <= before + (uint64_t)own)
		return ret;
	measured = SETLOCALE_MEASURED;
	struct pw_guarded was = pw_guard_enter(PW_GUARD_RECORDING);
	pw_emit_call(PW_EV_SETLOCALE, t0, t1, (int64_t)(intptr_t)ret, (uint64_t)-1, after - before - (uint64_t)own, 0);
	pw_guard_leave(was);
	return ret;
}
