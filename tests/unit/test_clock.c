#define _GNU_SOURCE
/* Unit tests for common/pw_clock: the tick source choice, calibration pairs and the ticks -> ns line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "../../common/pw_clock.h"

#define MS 1000000ull

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* "monotonic" forces CLOCK_MONOTONIC: ticks are nanoseconds of that clock. */
static void test_init_monotonic(void **state)
{
	assert_int_equal(pw_clock_init("monotonic"), PW_CLOCK_MONOTONIC);
	assert_int_equal(pw_clock_use_tsc, 0);
	for (int i = 0; i < 100; i++) {
		uint64_t a = mono_ns();
		uint64_t t = pw_clock_ticks();
		uint64_t b = mono_ns();
		assert_true(t >= a);
		assert_true(t <= b);
		assert_true(b - a < MS);
	}
	/* ticks advance at 1 per ns: a 20 ms sleep reads 20 ms (upper bound generous for loaded machines) */
	uint64_t t0 = pw_clock_ticks();
	struct timespec d = {0, 20 * (long)MS};
	nanosleep(&d, NULL);
	uint64_t t1 = pw_clock_ticks();
	assert_true(t1 - t0 >= 20 * MS);
	assert_true(t1 - t0 < 2000 * MS);
}

/* An unknown override is the automatic choice; "tsc" is honoured on x86. Either way the kind matches the flag. */
static void test_init_other_choices(void **state)
{
	enum pw_clock_kind automatic = pw_clock_init(NULL);
	assert_true(automatic == PW_CLOCK_MONOTONIC || automatic == PW_CLOCK_TSC);
	assert_int_equal(automatic == PW_CLOCK_TSC, pw_clock_use_tsc != 0);
	assert_int_equal(pw_clock_init("bogus"), automatic);
	assert_int_equal(pw_clock_init(""), automatic);
#if defined(__x86_64__) || defined(__i386__)
	assert_int_equal(pw_clock_init("tsc"), PW_CLOCK_TSC);
	assert_int_equal(pw_clock_use_tsc, 1);
	/* the TSC counts up */
	uint64_t a = pw_clock_ticks(), b = pw_clock_ticks();
	assert_true(b >= a);
#else
	assert_int_equal(pw_clock_init("tsc"), PW_CLOCK_MONOTONIC);
#endif
	assert_int_equal(pw_clock_init("monotonic"), PW_CLOCK_MONOTONIC);
	assert_int_equal(pw_clock_use_tsc, 0);
}

/* With the monotonic kind a pair is (ns, ns) read back to back: both close to clock_gettime and to each other. */
static void test_pair_now_monotonic(void **state)
{
	pw_clock_init("monotonic");
	for (int i = 0; i < 100; i++) {
		uint64_t a = mono_ns();
		struct pw_clock_pair p = pw_clock_pair_now();
		uint64_t b = mono_ns();
		assert_true(p.ns >= a && p.ns <= b);
		assert_true(p.ticks >= a && p.ticks <= b);
		assert_true(absdiff(p.ticks, p.ns) < MS);
		assert_true(b - a < MS);
	}
}

/* Pairs taken over time lie on one line; with the real clock that line turns ticks back into the ns of
 * clock_gettime within 1 ms, whichever tick source is in use. */
static void test_pair_line_matches_clock(void **state)
{
	const char *kinds[] = {"monotonic", NULL};
	for (int k = 0; k < 2; k++) {
		enum pw_clock_kind kind = pw_clock_init(kinds[k]);
		struct pw_clock_pair a = pw_clock_pair_now();
		struct timespec d = {0, 50 * (long)MS};
		nanosleep(&d, NULL);
		struct pw_clock_pair b = pw_clock_pair_now();
		assert_true(b.ticks > a.ticks);
		assert_true(b.ns >= a.ns + 50 * MS);
		struct pw_clock_line l = pw_clock_line_fit(kind, a, b);
		uint64_t before = mono_ns();
		uint64_t t = pw_clock_ticks();
		uint64_t after = mono_ns();
		uint64_t ns = pw_clock_to_ns(&l, t);
		assert_true(ns + MS >= before);
		assert_true(ns <= after + MS);
		/* the pairs themselves map onto their ns */
		assert_true(absdiff(pw_clock_to_ns(&l, a.ticks), a.ns) <= 1);
		assert_true(absdiff(pw_clock_to_ns(&l, b.ticks), b.ns) < 1000);
	}
}

/* The monotonic kind ignores the second pair: origin a, rate 1. */
static void test_line_fit_monotonic_rate_one(void **state)
{
	struct pw_clock_pair a = {1000, 5000}, b = {3000, 9000};
	struct pw_clock_line l = pw_clock_line_fit(PW_CLOCK_MONOTONIC, a, b);
	assert_int_equal(l.ticks0, 1000);
	assert_int_equal(l.ns0, 5000);
	assert_true(l.ns_per_tick == 1.0);
	assert_int_equal(pw_clock_to_ns(&l, 1000), 5000);
	assert_int_equal(pw_clock_to_ns(&l, 3000), 7000);
	assert_int_equal(pw_clock_to_ns(&l, 999), 4999);
	assert_int_equal(pw_clock_to_ns(&l, 0), 4000);
}

/* 2.5 ticks per ns (a 2.5 GHz TSC): exact for tick distances that are multiples of 5. */
static void test_line_fit_tsc_2_5_ghz(void **state)
{
	const uint64_t T0 = 123456789012ull, N0 = 987654321000ull;
	struct pw_clock_pair a = {T0, N0};
	struct pw_clock_pair b = {T0 + 2500000000ull, N0 + 1000000000ull}; /* one second later */
	struct pw_clock_line l = pw_clock_line_fit(PW_CLOCK_TSC, a, b);
	assert_int_equal(l.ticks0, T0);
	assert_int_equal(l.ns0, N0);
	assert_true(l.ns_per_tick == 0.4);
	assert_int_equal(pw_clock_to_ns(&l, T0), N0);
	assert_int_equal(pw_clock_to_ns(&l, T0 + 5), N0 + 2);
	assert_int_equal(pw_clock_to_ns(&l, T0 + 25), N0 + 10);
	assert_int_equal(pw_clock_to_ns(&l, T0 + 2500), N0 + 1000);
	assert_int_equal(pw_clock_to_ns(&l, b.ticks), b.ns);
	/* one hour at 2.5 GHz */
	assert_int_equal(pw_clock_to_ns(&l, T0 + 9000000000000ull), N0 + 3600000000000ull);
	/* ticks before the origin: the same line extends backwards */
	assert_int_equal(pw_clock_to_ns(&l, T0 - 5), N0 - 2);
	assert_int_equal(pw_clock_to_ns(&l, T0 - 2500000000ull), N0 - 1000000000ull);
	assert_int_equal(pw_clock_to_ns(&l, 2), N0 - (T0 - 2) / 5 * 2); /* T0 - 2 is a multiple of 5 */
	/* every multiple of 5 ticks, both sides of the origin */
	for (uint64_t k = 1; k <= 100000; k++) {
		assert_int_equal(pw_clock_to_ns(&l, T0 + 5 * k), N0 + 2 * k);
		assert_int_equal(pw_clock_to_ns(&l, T0 - 5 * k), N0 - 2 * k);
	}
	/* the line does not go backwards anywhere */
	uint64_t prev = pw_clock_to_ns(&l, T0 - 1000);
	for (uint64_t t = T0 - 999; t <= T0 + 1000; t++) {
		uint64_t ns = pw_clock_to_ns(&l, t);
		assert_true(ns >= prev);
		assert_true(ns - prev <= 1);
		prev = ns;
	}
}

/* The pairs need not be the origin of either clock, and the fit uses only the differences. */
static void test_line_fit_offsets(void **state)
{
	/* 3 ticks per ns, pair a far from zero on both clocks */
	struct pw_clock_pair a = {3000000000000ull, 17ull}, b = {3000000000000ull + 3000000, 17ull + 1000000};
	struct pw_clock_line l = pw_clock_line_fit(PW_CLOCK_TSC, a, b);
	assert_int_equal(pw_clock_to_ns(&l, a.ticks), 17);
	assert_int_equal(pw_clock_to_ns(&l, a.ticks + 3), 18);
	assert_int_equal(pw_clock_to_ns(&l, a.ticks + 30000000000ull), 17 + 10000000000ull);
	assert_int_equal(pw_clock_to_ns(&l, a.ticks - 51), 0);
	assert_int_equal(pw_clock_to_ns(&l, b.ticks), b.ns);

	/* 1 tick per 4 ns (a slow counter) */
	struct pw_clock_pair c = {100, 1000000}, e = {200, 1000400};
	l = pw_clock_line_fit(PW_CLOCK_TSC, c, e);
	assert_true(l.ns_per_tick == 4.0);
	assert_int_equal(pw_clock_to_ns(&l, 150), 1000200);
	assert_int_equal(pw_clock_to_ns(&l, 50), 999800);
	assert_int_equal(pw_clock_to_ns(&l, 0), 999600);

	/* a fit through two pairs maps both of them exactly, whichever the rate */
	static const uint64_t rates[][2] = {{2, 5}, {1, 3}, {10, 24}, {1000, 2993}, {7, 1}};
	for (unsigned i = 0; i < sizeof rates / sizeof rates[0]; i++) {
		uint64_t p = rates[i][0], q = rates[i][1];
		struct pw_clock_pair x = {5000000007ull, 40000000011ull};
		struct pw_clock_pair y = {x.ticks + q * 1000000, x.ns + p * 1000000};
		l = pw_clock_line_fit(PW_CLOCK_TSC, x, y);
		assert_int_equal(pw_clock_to_ns(&l, y.ticks), y.ns);
		for (uint64_t k = 1; k < 1000; k++) {
			assert_int_equal(pw_clock_to_ns(&l, x.ticks + k * q), x.ns + k * p);
			assert_int_equal(pw_clock_to_ns(&l, x.ticks - k * q), x.ns - k * p);
		}
	}
}

/* Pairs that do not define a line (same ticks, ticks going backwards, ns not advancing) give rate 1 from a. */
static void test_line_fit_degenerate(void **state)
{
	struct pw_clock_pair a = {1000, 5000};
	struct pw_clock_pair same = {1000, 6000}, back = {900, 6000}, flat = {2000, 5000};
	struct pw_clock_pair cases[] = {same, back, flat, a};
	for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct pw_clock_line l = pw_clock_line_fit(PW_CLOCK_TSC, a, cases[i]);
		assert_int_equal(l.ticks0, 1000);
		assert_int_equal(l.ns0, 5000);
		assert_true(l.ns_per_tick == 1.0);
		assert_int_equal(pw_clock_to_ns(&l, 1500), 5500);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_monotonic),
		cmocka_unit_test(test_init_other_choices),
		cmocka_unit_test(test_pair_now_monotonic),
		cmocka_unit_test(test_pair_line_matches_clock),
		cmocka_unit_test(test_line_fit_monotonic_rate_one),
		cmocka_unit_test(test_line_fit_tsc_2_5_ghz),
		cmocka_unit_test(test_line_fit_offsets),
		cmocka_unit_test(test_line_fit_degenerate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
