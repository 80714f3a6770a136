#define _GNU_SOURCE
/* Unit tests for collector/lane_walk (the record decoder the collector runs on a lane's bytes, copied out of an
 * untrusted producer's segment): stretches of valid records and the strings announced before them, the PAD
 * before and after the lane's end, refused records (unknown type, too short for the type or its stack
 * reference, a PAD with flags), a cut or corrupt tail, and the references of module and stacked records.
 * Each visitor call is logged as text ("S<ref>" a string, "R<offset>+<len>" a stretch) and compared whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>

#include "../../collector/ingest/lane_walk.h"
#include "../../common/pw_record.h"

struct lane {
	uint64_t words[512]; /* 4 KiB, 8-aligned */
	size_t len;          /* bytes written */
	char log[1024];
	size_t nlog;
};

static void logf_(struct lane *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct lane *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(l->log + l->nlog, sizeof l->log - l->nlog, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof l->log - l->nlog);
	l->nlog += (size_t)n;
}

static void on_records(void *ctx, const uint8_t *recs, uint64_t len)
{
	struct lane *l = ctx;
	logf_(l, "R%td+%llu ", recs - (const uint8_t *)l->words, (unsigned long long)len);
}

static void on_string(void *ctx, uint64_t ref)
{
	logf_(ctx, "S%llu ", (unsigned long long)ref);
}

static void put(struct lane *l, const void *p, size_t len)
{
	assert_true(l->len + len <= sizeof l->words);
	memcpy((uint8_t *)l->words + l->len, p, len);
	l->len += len;
}

/* A call record of type (flags included) with size8 words and arg1 = ref. */
static void put_call(struct lane *l, uint16_t type, uint8_t size8, uint64_t ref)
{
	uint8_t buf[2048];
	memset(buf, 0, sizeof buf);
	struct pw_rec_call c = {{type, size8, 0, 7}, 100, 200, 0, 3, ref};
	memcpy(buf, &c, sizeof c);
	put(l, buf, (size_t)size8 * 8);
}

static void put_pad(struct lane *l, size_t to)
{
	struct pw_rec_hdr pad = {PW_EV_PAD, 1, 0, 0};
	size_t at = l->len;
	put(l, &pad, sizeof pad);
	assert_true(to >= l->len);
	l->len = to; /* what follows the PAD up to the lane's end is never looked at */
	memset((uint8_t *)l->words + at + sizeof pad, 0xee, to - at - sizeof pad);
}

static struct pw_lane_walk_result walk(struct lane *l, uint64_t first)
{
	struct pw_lane_visitor v = {l, on_records, on_string};
	l->nlog = 0;
	l->log[0] = 0;
	return pw_lane_walk((const uint8_t *)l->words, l->len, first, &v);
}

static struct lane *new_lane(void)
{
	struct lane *l = calloc(1, sizeof *l);
	assert_non_null(l);
	return l;
}

/* Valid records are one stretch; strings are announced before it, in record order; a record of a kind without
 * a string announces nothing, whatever its arg1. */
static void test_one_stretch(void **state)
{
	struct lane *l = new_lane();
	put_call(l, PW_EV_OPEN, 6, 64);
	put_call(l, PW_EV_READ, 6, 99);
	put_call(l, PW_EV_OPEN, 7, 0); /* longer than a call (a newer writer), no string */
	put_call(l, PW_EV_DLOPEN, 6, 128);
	struct pw_lane_walk_result r = walk(l, l->len);
	assert_string_equal(l->log, "S64 S128 R0+200 ");
	assert_int_equal(r.records, 4);
	assert_int_equal(r.refused, 0);
	free(l);
}

/* A PAD before the lane's end sends the walk to `first`: the stretch is cut there. */
static void test_pad_wraps(void **state)
{
	struct lane *l = new_lane();
	put_call(l, PW_EV_OPEN, 6, 8);
	put_pad(l, 96);
	put_call(l, PW_EV_READ, 6, 0);
	put_call(l, PW_EV_OPEN, 6, 16);
	struct pw_lane_walk_result r = walk(l, 96);
	assert_string_equal(l->log, "S8 R0+48 S16 R96+96 ");
	assert_int_equal(r.records, 3);
	assert_int_equal(r.refused, 0);
	free(l);
}

/* A PAD at or past the lane's end is corrupt: the walk stops there, the tail counted once. */
static void test_pad_past_end(void **state)
{
	struct lane *l = new_lane();
	put_call(l, PW_EV_READ, 6, 0);
	put_pad(l, 56);
	put_call(l, PW_EV_READ, 6, 0);
	struct pw_lane_walk_result r = walk(l, 48);
	assert_string_equal(l->log, "R0+48 ");
	assert_int_equal(r.records, 1);
	assert_int_equal(r.refused, 1);
	free(l);
}

/* Refused records (unknown type, too short for their type, too short for their stack reference, a PAD with a
 * flag) are stepped over by their size and end the stretch; the records around them are handed over. */
static void test_refused(void **state)
{
	struct lane *l = new_lane();
	put_call(l, PW_EV_READ, 6, 0);
	put_call(l, PW_EV_COUNT, 6, 0);
	put_call(l, PW_EV_OPEN, 5, 8);
	put_call(l, PW_EV_READ | PW_REC_STACK, 6, 0);
	put_call(l, PW_EV_PAD | PW_REC_OUTSIDE, 6, 0);
	put_call(l, PW_EV_OPEN | PW_REC_OUTSIDE, 6, 24);
	struct pw_lane_walk_result r = walk(l, l->len);
	assert_string_equal(l->log, "R0+48 S24 R232+48 ");
	assert_int_equal(r.records, 2);
	assert_int_equal(r.refused, 4);
	free(l);
}

/* The end of the bytes: fewer than a header is left alone (not yet written); a header whose record runs past
 * the end, or of size 0, stops the walk and is counted once. */
static void test_tail(void **state)
{
	struct lane *l = new_lane();
	put_call(l, PW_EV_READ, 6, 0);
	put(l, "abcd", 4);
	struct pw_lane_walk_result r = walk(l, l->len);
	assert_string_equal(l->log, "R0+48 ");
	assert_int_equal(r.records, 1);
	assert_int_equal(r.refused, 0);

	l->len = 48;
	put_call(l, PW_EV_READ, 6, 0);
	l->len -= 8; /* the second record cut short */
	r = walk(l, l->len);
	assert_string_equal(l->log, "R0+48 ");
	assert_int_equal(r.refused, 1);

	l->len = 48;
	put_call(l, PW_EV_READ, 0, 0); /* size 0 */
	l->len = 48 + 8;
	r = walk(l, l->len);
	assert_string_equal(l->log, "R0+48 ");
	assert_int_equal(r.records, 1);
	assert_int_equal(r.refused, 1);
	free(l);
}

/* A module record announces its path, its build-id (the collector's extraction of the decoder once dropped
 * the build-id: found by the lane_walk fuzz target on its first seed) and its image (the vDSO's); a stacked
 * record its stack without the PW_STACK_PY_PENDING bit, and nothing for a stack reference 0. */
static void test_module_and_stack_refs(void **state)
{
	struct lane *l = new_lane();
	struct pw_rec_module m;
	memset(&m, 0, sizeof m);
	m.c.h = (struct pw_rec_hdr){PW_EV_MODULE, sizeof m / 8, 0, 7};
	m.c.arg1 = 40;
	m.build_id = 72;
	put(l, &m, sizeof m);
	m.c.arg1 = 0; /* the main program: no path */
	m.build_id = 88;
	put(l, &m, sizeof m);
	m.c.arg1 = 152; /* the vDSO: its image */
	m.build_id = 0;
	m.image = 168;
	put(l, &m, sizeof m);
	uint8_t rec[56];
	struct pw_rec_call c = {{PW_EV_OPEN | PW_REC_STACK, 7, 0, 7}, 1, 2, 3, 3, 104};
	memcpy(rec, &c, sizeof c);
	uint64_t stack = 136 | PW_STACK_PY_PENDING;
	memcpy(rec + 48, &stack, 8);
	put(l, rec, sizeof rec);
	stack = 0;
	memcpy(rec + 48, &stack, 8);
	c.h.type = PW_EV_READ | PW_REC_STACK;
	memcpy(rec, &c, sizeof c);
	put(l, rec, sizeof rec);
	struct pw_lane_walk_result r = walk(l, l->len);
	char want[128];
	snprintf(want, sizeof want, "S40 S72 S88 S152 S168 S104 S136 R0+%zu ", 3 * sizeof m + 2 * sizeof rec);
	assert_string_equal(l->log, want);
	assert_int_equal(r.records, 5);
	assert_int_equal(r.refused, 0);
	free(l);
}

/* An open announces its path and the working directory it was relative to, stacked too; an older writer's open
 * (a call's size, with or without a stack) only its path. */
static void test_open_refs(void **state)
{
	struct lane *l = new_lane();
	struct pw_rec_open o = {{{PW_EV_OPEN, sizeof o / 8, 0, 7}, 1, 2, 3, 3, 8}, AT_FDCWD, 24};
	put(l, &o, sizeof o);
	uint8_t rec[sizeof o + 8];
	o.c.h.type = PW_EV_OPENAT | PW_REC_STACK;
	o.c.h.size8 = sizeof rec / 8;
	o.c.arg1 = 40;
	o.cwd = 56;
	memcpy(rec, &o, sizeof o);
	uint64_t stack = 72;
	memcpy(rec + sizeof o, &stack, 8);
	put(l, rec, sizeof rec);
	put_call(l, PW_EV_OPEN, 6, 88);
	struct pw_rec_call c = {{PW_EV_OPEN | PW_REC_STACK, 7, 0, 7}, 1, 2, 3, 3, 104};
	memcpy(rec, &c, sizeof c);
	memcpy(rec + sizeof c, &stack, 8); /* where a newer open's dirfd lies */
	put(l, rec, 56);
	struct pw_lane_walk_result r = walk(l, l->len);
	char want[128];
	snprintf(want, sizeof want, "S8 S24 S40 S56 S72 S88 S104 S72 R0+%zu ", sizeof o + sizeof rec + 48 + 56);
	assert_string_equal(l->log, want);
	assert_int_equal(r.records, 4);
	assert_int_equal(r.refused, 0);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_stretch),
		cmocka_unit_test(test_pad_wraps),
		cmocka_unit_test(test_pad_past_end),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_tail),
		cmocka_unit_test(test_module_and_stack_refs),
		cmocka_unit_test(test_open_refs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
