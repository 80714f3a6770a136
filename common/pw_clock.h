/* The clock, shared by writer and reader.
 *
 * Records carry raw ticks to keep the hot path to one instruction: the invariant TSC on x86-64 when the
 * kernel itself trusts it (clocksource "tsc"), else CLOCK_MONOTONIC nanoseconds. A reader turns ticks into
 * CLOCK_MONOTONIC nanoseconds from calibration pairs (ticks, ns) taken by the writer at start and by the
 * collector while it drains; the invariant TSC is one counter for every process on the machine, so pairs
 * from either side fit the same line.
 */
#ifndef PW_CLOCK_H
#define PW_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

enum pw_clock_kind { PW_CLOCK_MONOTONIC = 1, PW_CLOCK_TSC = 2 };

extern int pw_clock_use_tsc;

static inline uint64_t pw_clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Current time in ticks of the kind pw_clock_init() chose. Async-signal-safe, no syscall on TSC. */
static inline uint64_t pw_clock_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(pw_clock_use_tsc, 1))
		return __rdtsc();
#endif
	return pw_clock_mono_ns();
}

/* Chooses the tick source: env PROFWRAP_CLOCK=tsc|monotonic overrides the automatic choice (value passed
 * in, NULL for automatic). Returns the kind chosen. Not async-signal-safe; call once at start. */
enum pw_clock_kind pw_clock_init(const char *override);

/* A calibration pair: ticks and CLOCK_MONOTONIC ns read back to back (the tighter of a few tries). */
struct pw_clock_pair {
	uint64_t ticks;
	uint64_t ns;
};
struct pw_clock_pair pw_clock_pair_now(void);

/* Converts ticks to ns on the line through two pairs (a.ticks < b.ticks), or with a as origin and rate 1 for
 * the monotonic kind. */
struct pw_clock_line {
	uint64_t ticks0;
	uint64_t ns0;
	double ns_per_tick;
};
struct pw_clock_line pw_clock_line_fit(enum pw_clock_kind kind, struct pw_clock_pair a, struct pw_clock_pair b);

/* Wraps instead of overflowing on values no clock produces (a raw trace is untrusted input). */
static inline uint64_t pw_clock_to_ns(const struct pw_clock_line *l, uint64_t ticks)
{
	double d = ((double)(int64_t)(ticks - l->ticks0)) * l->ns_per_tick;
	if (!(d > -9.0e18))
		d = -9.0e18;
	if (d > 9.0e18)
		d = 9.0e18;
	return l->ns0 + (uint64_t)(int64_t)d;
}

#endif
