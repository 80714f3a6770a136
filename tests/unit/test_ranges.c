#define _GNU_SOURCE
/* Unit tests for the NVTX ranges and capture windows of a rank (collector/model/ranges.c), driven directly with
 * records built in memory (struct pw_rec_range for ranges and marks, struct pw_rec_call for names and capture
 * records) the way analysis.c drives it: pw_ranges_file_init, pw_ranges_event for each record,
 * pw_ranges_gpu_op for the file's GPU work, pw_ranges_file_end, pw_ranges_finish. Times are ns, so every
 * figure is checked exactly: push/pop matching per thread and domain, start/end across threads, the
 * unbalanced counts, ranges closed at the process's or the window's end, digit folding, marks, capture
 * windows (out of order, several processes, their union, the settings), GPU time attributed to the ranges
 * open on the launching thread. Every test keeps its report and open files in the fixture, so that a failed
 * assertion leaks nothing under LSan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../collector/lib/rawfile.h"
#include "../../collector/model/ranges.h"
#include "../../common/pw_record.h"

#define T1 100
#define T2 200
#define NFILES 4
#define STR_REF 16 /* any non-zero string reference: the reader resolved it into e->str */

/* ---- fixture: the rank's report and its files' states ---- */

struct rfx {
	struct pw_range_report *r;
	struct pw_ranges_file *f[NFILES];
};

static int setup(void **state)
{
	struct rfx *x = calloc(1, sizeof *x);
	if (!x)
		return -1;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct rfx *x = *state;
	for (size_t i = 0; i < NFILES; i++)
		if (x->f[i])
			pw_ranges_file_end(NULL, x->f[i], 0);
	pw_ranges_free(x->r);
	free(x);
	return 0;
}

static struct pw_ranges_file *file_open(struct rfx *x, size_t slot, int pid, uint64_t start_ns)
{
	assert_true(slot < NFILES);
	assert_null(x->f[slot]);
	x->f[slot] = pw_ranges_file_init(pid, start_ns);
	assert_non_null(x->f[slot]);
	return x->f[slot];
}

static void file_end(struct rfx *x, size_t slot, uint64_t end_ns)
{
	struct pw_ranges_file *f = x->f[slot];
	x->f[slot] = NULL; /* freed by pw_ranges_file_end whatever it returns */
	assert_non_null(f);
	assert_int_equal(pw_ranges_file_end(x->r, f, end_ns), 0);
}

/* ---- records ---- */

static void feed_rec(struct rfx *x, size_t slot, const struct pw_rec_call *rec, uint64_t t, const char *str)
{
	struct pw_raw_event e;
	memset(&e, 0, sizeof e);
	e.rec = rec;
	e.t0_ns = t;
	e.t1_ns = t;
	e.str = str;
	e.str_len = str ? (uint32_t)strlen(str) : 0;
	assert_int_equal(pw_ranges_event(&x->r, x->f[slot], &e), 0);
	assert_non_null(x->r);
}

/* An NVTX range or mark record (struct pw_rec_range): arg0 = domain | category << 32, ret per kind. */
static void feed_range(struct rfx *x, size_t slot, uint16_t type, uint32_t tid, uint64_t t, uint64_t arg0, int64_t ret,
		       const char *str)
{
	struct pw_rec_range rr;
	memset(&rr, 0, sizeof rr);
	rr.c.h.type = type;
	rr.c.h.size8 = sizeof rr / 8;
	rr.c.h.tid = tid;
	rr.c.t0 = rr.c.t1 = t;
	rr.c.ret = ret;
	rr.c.arg0 = arg0;
	rr.c.arg1 = str ? STR_REF : 0;
	feed_rec(x, slot, &rr.c, t, str);
}

/* A name or capture record (struct pw_rec_call). */
static void feed_call(struct rfx *x, size_t slot, uint16_t type, uint32_t tid, uint64_t t, uint64_t arg0, int64_t ret,
		      const char *str)
{
	struct pw_rec_call c;
	memset(&c, 0, sizeof c);
	c.h.type = type;
	c.h.size8 = sizeof c / 8;
	c.h.tid = tid;
	c.t0 = c.t1 = t;
	c.ret = ret;
	c.arg0 = arg0;
	c.arg1 = str ? STR_REF : 0;
	feed_rec(x, slot, &c, t, str);
}

static void push(struct rfx *x, uint32_t tid, uint64_t t, uint64_t domain, int32_t level, const char *name)
{
	feed_range(x, 0, PW_EV_NVTX_PUSH, tid, t, domain, level, name);
}

static void pop(struct rfx *x, uint32_t tid, uint64_t t, uint64_t domain)
{
	feed_range(x, 0, PW_EV_NVTX_POP, tid, t, domain, 0, NULL);
}

static void rstart(struct rfx *x, uint32_t tid, uint64_t t, uint64_t domain, int64_t id, const char *name)
{
	feed_range(x, 0, PW_EV_NVTX_START, tid, t, domain, id, name);
}

static void rend(struct rfx *x, uint32_t tid, uint64_t t, int64_t id)
{
	feed_range(x, 0, PW_EV_NVTX_END, tid, t, 0, id, NULL);
}

static void mark(struct rfx *x, uint32_t tid, uint64_t t, uint64_t domain, const char *name)
{
	feed_range(x, 0, PW_EV_NVTX_MARK, tid, t, domain, 0, name);
}

static void capture(struct rfx *x, size_t slot, int open, uint64_t t, int reason, int64_t occurrence, const char *str)
{
	feed_call(x, slot, open ? PW_EV_CAPTURE_START : PW_EV_CAPTURE_STOP, T1, t, (uint64_t)reason, occurrence, str);
}

/* ---- looking rows up ---- */

/* The shown row (not merged into another) of (domain, name, depth, kind), NULL if none. */
static const struct pw_range_row *row_of(const struct pw_range_report *r, const char *domain, const char *name,
					 int32_t depth, uint8_t kind)
{
	for (size_t i = 0; i < r->nrows; i++) {
		const struct pw_range_row *x = &r->rows[i];
		if (!x->merged && x->depth == depth && x->kind == kind && strcmp(x->domain, domain) == 0 &&
		    strcmp(x->name, name) == 0)
			return x;
	}
	return NULL;
}

static const struct pw_range_row *row_ok(const struct pw_range_report *r, const char *domain, const char *name,
					 int32_t depth, uint8_t kind)
{
	const struct pw_range_row *x = row_of(r, domain, name, depth, kind);
	if (!x)
		fail_msg("no row (\"%s\", \"%s\", depth %d, kind %u)", domain, name, depth, kind);
	return x;
}

/* Rows a report shows: not merged, with at least one occurrence. */
static size_t shown(const struct pw_range_report *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nrows; i++)
		n += !r->rows[i].merged && r->rows[i].count;
	return n;
}

static void expect_row(const struct pw_range_row *x, uint64_t count, uint64_t total, uint64_t min, uint64_t max)
{
	assert_int_equal(x->count, count);
	assert_int_equal(x->total_ns, total);
	assert_int_equal(x->min_ns, min);
	assert_int_equal(x->max_ns, max);
}

static const struct pw_mark_row *mark_of(const struct pw_range_report *r, const char *domain, const char *name)
{
	for (size_t i = 0; i < r->nmarks; i++)
		if (strcmp(r->marks[i].domain, domain) == 0 && strcmp(r->marks[i].name, name) == 0)
			return &r->marks[i];
	fail_msg("no mark (\"%s\", \"%s\")", domain, name);
	return NULL;
}

/* ---- push/pop ---- */

/* push A (level 0), push B (level 1), pop, pop, twice: A at depth 0 and B at depth 1 with exact figures. */
static void test_nesting(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	push(x, T1, 1000, 0, 0, "A");
	push(x, T1, 1500, 0, 1, "B");
	pop(x, T1, 2500, 0); /* B: 1000 */
	pop(x, T1, 4000, 0); /* A: 3000 */
	push(x, T1, 5000, 0, 0, "A");
	push(x, T1, 5100, 0, 1, "B");
	pop(x, T1, 5300, 0); /* B: 200 */
	pop(x, T1, 6000, 0); /* A: 1000 */
	file_end(x, 0, 10000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(r->nrows, 2);
	const struct pw_range_row *a = row_ok(r, "", "A", 0, PW_RANGE_PUSH);
	const struct pw_range_row *b = row_ok(r, "", "B", 1, PW_RANGE_PUSH);
	expect_row(a, 2, 4000, 1000, 3000);
	expect_row(b, 2, 1200, 200, 1000);
	assert_int_equal(a->gpu_ns, 0);
	assert_int_equal(a->folded, 0);
	assert_int_equal(r->closed, 4);
	assert_int_equal(r->unclosed, 0);
	assert_int_equal(r->unmatched_pops, 0);
	assert_int_equal(r->unmatched_ends, 0);
	assert_int_equal(r->folded_names, 0);
	assert_int_equal(r->windowed, 0);
	assert_int_equal(r->nwindows, 0);
	assert_null(r->settings);
	assert_int_equal(r->captured_ns, 0);
}

/* The same name at two depths is two rows. */
static void test_same_name_two_depths(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	push(x, T1, 100, 0, 0, "f");
	push(x, T1, 200, 0, 1, "f");
	pop(x, T1, 250, 0);
	pop(x, T1, 400, 0);
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	assert_int_equal(x->r->nrows, 2);
	expect_row(row_ok(x->r, "", "f", 0, PW_RANGE_PUSH), 1, 300, 300, 300);
	expect_row(row_ok(x->r, "", "f", 1, PW_RANGE_PUSH), 1, 50, 50, 50);
}

/* Two threads interleaved: each pop closes its own thread's innermost range, never the other's. */
static void test_two_threads_interleaved(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	push(x, T1, 100, 0, 0, "load");
	push(x, T2, 200, 0, 0, "compute");
	pop(x, T1, 300, 0); /* load: 200 */
	push(x, T2, 350, 0, 1, "inner");
	pop(x, T1, 400, 0); /* T1 has nothing open: T2's ranges stay open */
	pop(x, T2, 450, 0); /* inner: 100 */
	pop(x, T2, 700, 0); /* compute: 500 */
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(r->nrows, 3);
	expect_row(row_ok(r, "", "load", 0, PW_RANGE_PUSH), 1, 200, 200, 200);
	expect_row(row_ok(r, "", "compute", 0, PW_RANGE_PUSH), 1, 500, 500, 500);
	expect_row(row_ok(r, "", "inner", 1, PW_RANGE_PUSH), 1, 100, 100, 100);
	assert_int_equal(r->closed, 3);
	assert_int_equal(r->unmatched_pops, 1);
	assert_int_equal(r->unclosed, 0);
}

/* A domain named by NVTX_NAME_DOMAIN gives its rows that name; the category (arg0's high half) is not part of
 * the domain; a pop closes the innermost range of its own domain only; an unnamed domain is "domain N". */
static void test_domains(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	feed_call(x, 0, PW_EV_NVTX_NAME_DOMAIN, T1, 10, 3, 0, "mydomain");
	push(x, T1, 100, 3 | 7ull << 32, 0, "work");
	pop(x, T1, 200, 0); /* the default domain has nothing open on T1 */
	push(x, T1, 300, 0, 0, "main");
	pop(x, T1, 400, 3); /* closes work (300), not main, although main is innermost */
	pop(x, T1, 600, 0); /* main: 300 */
	push(x, T1, 700, 9, 0, "other");
	pop(x, T1, 750, 9 | 1ull << 32);
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(r->nrows, 3);
	expect_row(row_ok(r, "mydomain", "work", 0, PW_RANGE_PUSH), 1, 300, 300, 300);
	expect_row(row_ok(r, "", "main", 0, PW_RANGE_PUSH), 1, 300, 300, 300);
	expect_row(row_ok(r, "domain 9", "other", 0, PW_RANGE_PUSH), 1, 50, 50, 50);
	assert_null(row_of(r, "", "work", 0, PW_RANGE_PUSH));
	assert_int_equal(r->unmatched_pops, 1);
	assert_int_equal(r->closed, 3);
}

/* A pop with nothing open on its thread is counted, and opens nothing. */
static void test_unmatched_pop(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	pop(x, T1, 100, 0);
	pop(x, T1, 200, 0);
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	assert_int_equal(x->r->unmatched_pops, 2);
	assert_int_equal(x->r->nrows, 0);
	assert_int_equal(x->r->closed, 0);
	assert_int_equal(x->r->unclosed, 0);
}

/* ---- start/end ---- */

/* A start/end range is matched by id from any thread, is of kind start at depth 0 whatever is pushed around
 * it, and a pop does not close it; an end with an unknown (or already ended) id is counted. */
static void test_start_end_across_threads(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	push(x, T1, 50, 0, 0, "outer");
	rstart(x, T1, 100, 0, 42, "request");
	pop(x, T1, 200, 0);      /* closes outer (150), not the start/end range */
	rend(x, T2, 600, 42);    /* request: 500, ended from another thread */
	rend(x, T2, 700, 99);    /* unknown id */
	rend(x, T1, 800, 42);    /* already ended */
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(r->nrows, 2);
	const struct pw_range_row *q = row_ok(r, "", "request", 0, PW_RANGE_START);
	expect_row(q, 1, 500, 500, 500);
	assert_null(row_of(r, "", "request", 0, PW_RANGE_PUSH));
	expect_row(row_ok(r, "", "outer", 0, PW_RANGE_PUSH), 1, 150, 150, 150);
	assert_int_equal(r->unmatched_ends, 2);
	assert_int_equal(r->unmatched_pops, 0);
	assert_int_equal(r->unclosed, 0);
	assert_int_equal(r->closed, 2);
}

/* Two start/end ranges of one name overlapping on one thread, ended in either order. */
static void test_start_end_overlapping(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	rstart(x, T1, 100, 0, 1, "io");
	rstart(x, T1, 150, 0, 2, "io");
	rend(x, T2, 300, 1); /* 200 */
	rend(x, T2, 200, 2); /* 50, the end record read late */
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	assert_int_equal(x->r->nrows, 1);
	expect_row(row_ok(x->r, "", "io", 0, PW_RANGE_START), 2, 250, 50, 200);
	assert_int_equal(x->r->unmatched_ends, 0);
}

/* ---- what is still open at the end ---- */

/* Ranges still open when the file ends close at end_ns and are counted unclosed (and closed). */
static void test_unclosed_at_end(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	push(x, T1, 100, 0, 0, "A");
	push(x, T1, 200, 0, 1, "B");
	rstart(x, T2, 300, 0, 5, "S");
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	expect_row(row_ok(r, "", "A", 0, PW_RANGE_PUSH), 1, 900, 900, 900);
	expect_row(row_ok(r, "", "B", 1, PW_RANGE_PUSH), 1, 800, 800, 800);
	expect_row(row_ok(r, "", "S", 0, PW_RANGE_START), 1, 700, 700, 700);
	assert_int_equal(r->unclosed, 3);
	assert_int_equal(r->closed, 3);
	assert_int_equal(r->unmatched_pops, 0);
}

/* A range open inside a capture window that closed before the process ended closes at the window's end; one
 * open in a window still open at the end closes at the process's end. */
static void test_unclosed_at_window_end(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	capture(x, 0, 1, 50, PW_CAPTURE_NVTX, 0, "step");
	push(x, T1, 100, 0, 0, "inner");
	capture(x, 0, 0, 500, PW_CAPTURE_NVTX, 0, "step");
	capture(x, 0, 1, 700, PW_CAPTURE_ON_DEMAND, -1, NULL);
	push(x, T2, 800, 0, 0, "late");
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	expect_row(row_ok(r, "", "inner", 0, PW_RANGE_PUSH), 1, 400, 400, 400);
	expect_row(row_ok(r, "", "late", 0, PW_RANGE_PUSH), 1, 200, 200, 200);
	assert_int_equal(r->unclosed, 2);
	assert_int_equal(r->nwindows, 2);
	assert_int_equal(r->windows[1].end_ns, 1000);
	assert_int_equal(r->captured_ns, 450 + 300);
}

/* ---- folding ---- */

/* 17 distinct "step N" names (one more than PW_RANGE_FOLD_AT) become one row "step #" holding every
 * occurrence; the exact rows are merged into it and hidden; all 17 distinct names are counted as folded. */
static void test_fold_17(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	uint64_t total = 0;
	for (int i = 0; i < 17; i++) {
		char name[32];
		snprintf(name, sizeof name, "step %d", i);
		push(x, T1, (uint64_t)i * 1000, 0, 0, name);
		pop(x, T1, (uint64_t)i * 1000 + 100 + (uint64_t)i, 0);
		total += 100 + (uint64_t)i;
	}
	file_end(x, 0, 100000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(shown(r), 1);
	const struct pw_range_row *s = row_ok(r, "", "step #", 0, PW_RANGE_PUSH);
	expect_row(s, 17, total, 100, 116);
	assert_int_equal(s->folded, 17);
	uint32_t folded_row = (uint32_t)(s - r->rows);
	size_t merged = 0;
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].merged) {
			assert_int_equal(r->rows[i].merged_into, folded_row);
			assert_int_equal(strncmp(r->rows[i].name, "step ", 5), 0);
			merged++;
		}
	assert_int_equal(merged, 16);
	assert_int_equal(r->closed, 17);
	/* "distinct names grouped into rows of their pattern": 17 names went into "step #" */
	if (r->folded_names != 17)
		fail_msg("folded_names is %llu for 17 distinct names folded into \"step #\": the name that folded the "
			 "group (and every later one) is not counted", (unsigned long long)r->folded_names);
}

/* Once folded, further names of the pattern go to the folded row too (20 distinct names in all). */
static void test_fold_later_names(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	for (int i = 0; i < 20; i++) {
		char name[32];
		snprintf(name, sizeof name, "layer%d.fwd", i);
		push(x, T1, (uint64_t)i * 1000, 0, 0, name);
		pop(x, T1, (uint64_t)i * 1000 + 10, 0);
	}
	/* a name seen before folding, again after it */
	push(x, T1, 50000, 0, 0, "layer3.fwd");
	pop(x, T1, 50010, 0);
	file_end(x, 0, 100000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(shown(r), 1);
	const struct pw_range_row *s = row_ok(r, "", "layer#.fwd", 0, PW_RANGE_PUSH);
	expect_row(s, 21, 210, 10, 10);
	assert_int_equal(s->folded, 21);
	assert_null(row_of(r, "", "layer3.fwd", 0, PW_RANGE_PUSH));
	assert_int_equal(r->folded_names, 20); /* layer3.fwd once */
}

/* A recursive function's ranges nest as deep as its calls: under 17 distinct "step N" names, a chain of 5000
 * nested "f", once per step. The fold moves each step's chain under "step #" (a stack of work, not one C
 * call per depth): one chain of 5000 rows, each of 17 occurrences, one at each depth. */
#define DEEP 5000
static void test_fold_deep_children(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	uint64_t t = 0;
	for (int i = 0; i < 17; i++) {
		char name[32];
		snprintf(name, sizeof name, "step %d", i);
		push(x, T1, t++, 0, 0, name);
		for (int d = 1; d <= DEEP; d++)
			push(x, T1, t++, 0, d, "f");
		for (int d = 0; d <= DEEP; d++)
			pop(x, T1, t++, 0);
	}
	file_end(x, 0, t);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(shown(r), 1 + DEEP);
	const struct pw_range_row *s = row_ok(r, "", "step #", 0, PW_RANGE_PUSH);
	assert_int_equal(s->count, 17);
	static uint8_t at_depth[DEEP + 1];
	memset(at_depth, 0, sizeof at_depth);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct pw_range_row *f = &r->rows[i];
		if (f->merged || strcmp(f->name, "f") != 0)
			continue;
		assert_int_equal(f->count, 17);
		assert_in_range(f->depth, 1, DEEP);
		assert_int_equal(at_depth[f->depth]++, 0);
		const struct pw_range_row *up = &r->rows[f->parent];
		assert_string_equal(up->name, f->depth == 1 ? "step #" : "f");
		assert_int_equal(up->depth, f->depth - 1);
	}
	assert_int_equal(r->closed, 17 * (DEEP + 1));
}

/* Many distinct names, in two groups: one row each, every distinct name counted once. */
static void test_fold_many_names(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	uint64_t t = 0;
	for (int rep = 0; rep < 2; rep++)
		for (int i = 0; i < 1000; i++) {
			char name[32];
			snprintf(name, sizeof name, "batch %d", i);
			push(x, T1, t, 0, 0, name);
			pop(x, T1, t + 3, 0);
			if (i < 17) {
				snprintf(name, sizeof name, "epoch %d", i);
				rstart(x, T2, t, 0, 1 + i, name);
				rend(x, T2, t + 1, 1 + i);
			}
			t += 10;
		}
	file_end(x, 0, t);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(shown(r), 2);
	const struct pw_range_row *b = row_ok(r, "", "batch #", 0, PW_RANGE_PUSH);
	expect_row(b, 2000, 6000, 3, 3);
	assert_int_equal(b->folded, 2000);
	const struct pw_range_row *e = row_ok(r, "", "epoch #", 0, PW_RANGE_START);
	expect_row(e, 34, 34, 1, 1);
	assert_int_equal(e->folded, 34);
	assert_int_equal(r->folded_names, 1000 + 17);
}

/* A name already in folded form ("step #", as the preload folds some) is one of the group's names: with 16
 * "step N" it makes 17, and the folded row is a fresh one holding all of them. */
static void test_fold_literal_pattern(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	push(x, T1, 0, 0, 0, "step #");
	pop(x, T1, 5, 0);
	for (int i = 0; i < 16; i++) {
		char name[32];
		snprintf(name, sizeof name, "step %d", i);
		push(x, T1, 100 + (uint64_t)i * 100, 0, 0, name);
		pop(x, T1, 110 + (uint64_t)i * 100, 0);
	}
	push(x, T1, 5000, 0, 0, "step #");
	pop(x, T1, 5020, 0);
	file_end(x, 0, 10000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(shown(r), 1);
	const struct pw_range_row *s = row_ok(r, "", "step #", 0, PW_RANGE_PUSH);
	expect_row(s, 18, 5 + 160 + 20, 5, 20);
	assert_int_equal(s->folded, 18);
	assert_int_equal(r->folded_names, 17);
}

/* 16 distinct names (PW_RANGE_FOLD_AT) stay 16 rows, however often each occurs. */
static void test_fold_16_stay(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	uint64_t t = 0;
	for (int rep = 0; rep < 3; rep++)
		for (int i = 0; i < 16; i++) {
			char name[32];
			snprintf(name, sizeof name, "step %d", i);
			push(x, T1, t, 0, 0, name);
			pop(x, T1, t + 10, 0);
			t += 100;
		}
	file_end(x, 0, t + 100);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(shown(r), 16);
	assert_int_equal(r->nrows, 16);
	for (int i = 0; i < 16; i++) {
		char name[32];
		snprintf(name, sizeof name, "step %d", i);
		const struct pw_range_row *s = row_ok(r, "", name, 0, PW_RANGE_PUSH);
		expect_row(s, 3, 30, 10, 10);
		assert_int_equal(s->folded, 0);
	}
	assert_null(row_of(r, "", "step #", 0, PW_RANGE_PUSH));
	assert_int_equal(r->folded_names, 0);
}

/* Groups are per (domain, depth, kind): 10 "step N" at depth 0, 10 at depth 1 and 10 start/end ranges fold
 * nothing. */
static void test_fold_groups_apart(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	for (int i = 0; i < 10; i++) {
		char name[32];
		snprintf(name, sizeof name, "step %d", i);
		uint64_t t = (uint64_t)i * 1000;
		push(x, T1, t, 0, 0, name);
		push(x, T1, t + 10, 0, 1, name);
		pop(x, T1, t + 20, 0);
		pop(x, T1, t + 30, 0);
		rstart(x, T2, t, 0, i + 1, name);
		rend(x, T2, t + 5, i + 1);
	}
	file_end(x, 0, 100000);
	pw_ranges_finish(x->r);
	assert_int_equal(shown(x->r), 30);
	assert_int_equal(x->r->folded_names, 0);
	assert_null(row_of(x->r, "", "step #", 0, PW_RANGE_PUSH));
}

/* Names without digits never fold, however many there are. */
static void test_no_digits_never_fold(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	for (int i = 0; i < 40; i++) {
		char name[32];
		snprintf(name, sizeof name, "phase %c%c", 'a' + i % 26, 'a' + i / 26);
		push(x, T1, (uint64_t)i * 100, 0, 0, name);
		pop(x, T1, (uint64_t)i * 100 + 50, 0);
	}
	file_end(x, 0, 10000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(r->nrows, 40);
	assert_int_equal(shown(r), 40);
	assert_int_equal(r->folded_names, 0);
	for (size_t i = 0; i < r->nrows; i++) {
		assert_int_equal(r->rows[i].merged, 0);
		assert_int_equal(r->rows[i].folded, 0);
		assert_int_equal(r->rows[i].count, 1);
	}
	expect_row(row_ok(r, "", "phase ab", 0, PW_RANGE_PUSH), 1, 50, 50, 50);
}

/* 17 concurrent start/end ranges "req N" (all open when the 17th name folds the group, e.g. asynchronous
 * requests, or 17 worker threads each inside its own "worker N") then ended: the folded row must count its 17
 * occurrences as folded, like test_fold_17 where each occurrence ended before the next began. */
static void test_fold_while_open(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	for (int i = 0; i < 17; i++) {
		char name[32];
		snprintf(name, sizeof name, "req %d", i);
		rstart(x, T1, 100 + (uint64_t)i, 0, i + 1, name);
	}
	for (int i = 0; i < 17; i++)
		rend(x, T2, 1000 + (uint64_t)i, i + 1);
	file_end(x, 0, 10000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(shown(r), 1);
	const struct pw_range_row *s = row_ok(r, "", "req #", 0, PW_RANGE_START);
	expect_row(s, 17, 17 * 900, 900, 900);
	assert_int_equal(r->closed, 17);
	if (s->folded != 17)
		fail_msg("the folded row \"req #\" has count 17 but folded %llu: its rows had no closed occurrence when "
			 "the group folded, so is_folded_row() does not see it as folded", (unsigned long long)s->folded);
}

/* The name as given: no string -> "(unnamed)", an embedded NUL -> ' ', more than PW_RANGE_MAX_NAME - 1
 * bytes -> cut there. */
static void test_names(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	push(x, T1, 100, 0, 0, NULL);
	pop(x, T1, 200, 0);
	/* "a\0b": str_len 3 */
	struct pw_rec_range rr;
	memset(&rr, 0, sizeof rr);
	rr.c.h.type = PW_EV_NVTX_PUSH;
	rr.c.h.size8 = sizeof rr / 8;
	rr.c.h.tid = T1;
	rr.c.arg1 = STR_REF;
	struct pw_raw_event e = {.rec = &rr.c, .t0_ns = 300, .t1_ns = 300, .str = "a\0b", .str_len = 3};
	assert_int_equal(pw_ranges_event(&x->r, x->f[0], &e), 0);
	pop(x, T1, 350, 0);
	char *lng = malloc(3000);
	assert_non_null(lng);
	memset(lng, 'x', 2999);
	lng[2999] = 0;
	push(x, T1, 400, 0, 0, lng);
	pop(x, T1, 450, 0);
	lng[PW_RANGE_MAX_NAME - 1] = 0;
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	const struct pw_range_row *u = row_of(r, "", "(unnamed)", 0, PW_RANGE_PUSH);
	const struct pw_range_row *ab = row_of(r, "", "a b", 0, PW_RANGE_PUSH);
	const struct pw_range_row *l = row_of(r, "", lng, 0, PW_RANGE_PUSH);
	free(lng);
	assert_non_null(u);
	assert_non_null(ab);
	assert_non_null(l);
	expect_row(u, 1, 100, 100, 100);
	expect_row(ab, 1, 50, 50, 50);
	expect_row(l, 1, 50, 50, 50);
}

/* pw_range_fold: every run of digits -> '#'. */
static void test_fold_function(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"step 12 of 300", "step # of #"},
		{"step 0", "step #"},
		{"step #", "step #"},
		{"layer3.attn.q_proj", "layer#.attn.q_proj"},
		{"a1b22c333d", "a#b#c#d"},
		{"2024-01-31", "#-#-#"},
		{"123", "#"},
		{"no digits", "no digits"},
		{"", ""},
	};
	char buf[64];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memset(buf, 'z', sizeof buf);
		size_t n = pw_range_fold(cases[i].in, strlen(cases[i].in), buf, sizeof buf);
		assert_string_equal(buf, cases[i].out);
		assert_int_equal(n, strlen(cases[i].out));
	}
	/* len bounds the input, size the output (with its NUL) */
	assert_int_equal(pw_range_fold("step 12 of 300", 7, buf, sizeof buf), 6);
	assert_string_equal(buf, "step #");
	assert_int_equal(pw_range_fold("step 12 of 300", 14, buf, 5), 4);
	assert_string_equal(buf, "step");
	assert_int_equal(pw_range_fold("12", 2, buf, 1), 0);
	assert_string_equal(buf, "");
}

/* ---- marks ---- */

static void test_marks(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	feed_call(x, 0, PW_EV_NVTX_NAME_DOMAIN, T1, 1, 3, 0, "mydomain");
	mark(x, T1, 100, 0, "checkpoint");
	mark(x, T2, 200, 0, "checkpoint");
	mark(x, T1, 300, 3, "checkpoint");
	mark(x, T1, 400, 0, "epoch 1");
	mark(x, T1, 500, 0, "epoch 2");
	mark(x, T2, 600, 0, "checkpoint");
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(r->nmarks, 4);
	assert_int_equal(mark_of(r, "", "checkpoint")->count, 3);
	assert_int_equal(mark_of(r, "mydomain", "checkpoint")->count, 1);
	assert_int_equal(mark_of(r, "", "epoch 1")->count, 1);
	assert_int_equal(mark_of(r, "", "epoch 2")->count, 1);
	assert_int_equal(r->nrows, 0);
	assert_int_equal(r->unmatched_pops, 0);
}

/* ---- capture windows ---- */

/* Capture records fed out of time order (the lanes of different threads) still give windows in time order;
 * the windows of another process, ended earlier, are sorted in by pw_ranges_finish; captured_ns is the union;
 * the INITIAL record's string is the settings. */
static void test_capture_windows(void **state)
{
	struct rfx *x = *state;
	/* pid 8: one on-demand window from 250 to its end (600) */
	file_open(x, 1, 8, 0);
	capture(x, 1, 1, 250, PW_CAPTURE_ON_DEMAND, -1, NULL);
	file_end(x, 1, 600);
	/* pid 7: started closed, windows [100, 300] and [500, 700] around occurrences 0 and 1 of "step" */
	file_open(x, 0, 7, 0);
	capture(x, 0, 0, 10, PW_CAPTURE_INITIAL, -1, "nvtx:step, first 2 occurrences");
	capture(x, 0, 0, 300, PW_CAPTURE_NVTX, 0, "step");
	capture(x, 0, 1, 500, PW_CAPTURE_NVTX, 1, "step");
	capture(x, 0, 1, 100, PW_CAPTURE_NVTX, 0, "step");
	capture(x, 0, 0, 700, PW_CAPTURE_NVTX, 1, "step");
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(r->windowed, 1);
	assert_non_null(r->settings);
	assert_string_equal(r->settings, "nvtx:step, first 2 occurrences");
	assert_int_equal(r->nwindows, 3);
	static const struct {
		int pid;
		uint64_t s, e;
		int reason;
		const char *name;
		int64_t occ;
	} want[] = {
		{7, 100, 300, PW_CAPTURE_NVTX, "step", 0},
		{8, 250, 600, PW_CAPTURE_ON_DEMAND, NULL, -1},
		{7, 500, 700, PW_CAPTURE_NVTX, "step", 1},
	};
	for (size_t i = 0; i < 3; i++) {
		const struct pw_capture_window *w = &r->windows[i];
		assert_int_equal(w->pid, want[i].pid);
		assert_int_equal(w->start_ns, want[i].s);
		assert_int_equal(w->end_ns, want[i].e);
		assert_int_equal(w->reason, want[i].reason);
		assert_int_equal(w->occurrence, want[i].occ);
		if (want[i].name) {
			assert_non_null(w->name);
			assert_string_equal(w->name, want[i].name);
		} else {
			assert_null(w->name);
		}
	}
	/* [100, 300] u [250, 600] u [500, 700] = [100, 700] */
	assert_int_equal(r->captured_ns, 600);
}

/* One process alone: the union of disjoint windows is their sum; a start while open and a stop while closed
 * change nothing. */
static void test_capture_disjoint(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 7, 0);
	capture(x, 0, 0, 300, PW_CAPTURE_PROFILER_API, 0, NULL);
	capture(x, 0, 1, 100, PW_CAPTURE_PROFILER_API, 0, NULL);
	capture(x, 0, 1, 200, PW_CAPTURE_PROFILER_API, 1, NULL); /* already open */
	capture(x, 0, 0, 350, PW_CAPTURE_PROFILER_API, 1, NULL); /* already closed */
	capture(x, 0, 1, 500, PW_CAPTURE_TIMER, -1, NULL);
	capture(x, 0, 0, 900, PW_CAPTURE_TIMER, -1, NULL);
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(r->nwindows, 2);
	assert_int_equal(r->windows[0].start_ns, 100);
	assert_int_equal(r->windows[0].end_ns, 300);
	assert_int_equal(r->windows[0].reason, PW_CAPTURE_PROFILER_API);
	assert_int_equal(r->windows[1].start_ns, 500);
	assert_int_equal(r->windows[1].end_ns, 900);
	assert_int_equal(r->windows[1].reason, PW_CAPTURE_TIMER);
	assert_int_equal(r->captured_ns, 200 + 400);
	assert_null(r->settings);
	assert_int_equal(r->windowed, 1);
}

/* Back-to-back windows: the stop of one and the start of the next at the same time, in file order, give two
 * windows (not one that swallows the second start). */
static void test_capture_back_to_back(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 7, 0);
	capture(x, 0, 1, 100, PW_CAPTURE_NVTX, 0, "step");
	capture(x, 0, 0, 200, PW_CAPTURE_NVTX, 0, "step");
	capture(x, 0, 1, 200, PW_CAPTURE_NVTX, 1, "step");
	capture(x, 0, 0, 300, PW_CAPTURE_NVTX, 1, "step");
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(r->nwindows, 2);
	assert_int_equal(r->windows[0].end_ns, 200);
	assert_int_equal(r->windows[1].start_ns, 200);
	assert_int_equal(r->windows[1].occurrence, 1);
	assert_int_equal(r->captured_ns, 200);
}

/* A fork child starts inside its parent's window: an INITIAL start opens a window (not named by the settings
 * string it carries); the first settings string recorded is kept. */
static void test_capture_initial_open(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 7, 0);
	capture(x, 0, 1, 100, PW_CAPTURE_INITIAL, -1, "cudaProfilerApi");
	capture(x, 0, 0, 400, PW_CAPTURE_PROFILER_API, 0, NULL);
	file_end(x, 0, 1000);
	file_open(x, 1, 9, 0);
	capture(x, 1, 1, 50, PW_CAPTURE_INITIAL, -1, "something else");
	file_end(x, 1, 80);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_string_equal(r->settings, "cudaProfilerApi");
	assert_int_equal(r->nwindows, 2);
	assert_int_equal(r->windows[0].pid, 9);
	assert_int_equal(r->windows[0].start_ns, 50);
	assert_int_equal(r->windows[0].end_ns, 80);
	assert_int_equal(r->windows[1].pid, 7);
	assert_int_equal(r->windows[1].start_ns, 100);
	assert_int_equal(r->windows[1].end_ns, 400);
	assert_int_equal(r->windows[1].reason, PW_CAPTURE_INITIAL);
	assert_null(r->windows[1].name);
	assert_int_equal(r->captured_ns, 30 + 300);
}

/* Started closed and never opened: windowed, no window, nothing captured. */
static void test_capture_never_open(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 7, 0);
	capture(x, 0, 0, 10, PW_CAPTURE_INITIAL, -1, "manual (profwrap start|stop PID)");
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	assert_int_equal(x->r->windowed, 1);
	assert_int_equal(x->r->nwindows, 0);
	assert_int_equal(x->r->captured_ns, 0);
	assert_string_equal(x->r->settings, "manual (profwrap start|stop PID)");
}

/* --step-range alone: the steps' name is kept for the trace, and the run is not windowed. */
static void test_step_name_no_window(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 7, 0);
	capture(x, 0, 1, 10, PW_CAPTURE_STEPS, -1, "train step");
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	assert_int_equal(x->r->windowed, 0);
	assert_int_equal(x->r->nwindows, 0);
	assert_null(x->r->settings);
	assert_non_null(x->r->step_name);
	assert_string_equal(x->r->step_name, "train step");
}

static void test_reason_names(void **state)
{
	(void)state;
	assert_string_equal(pw_capture_reason_name(PW_CAPTURE_PROFILER_API), "cudaProfilerApi");
	assert_string_equal(pw_capture_reason_name(PW_CAPTURE_NVTX), "nvtx");
	assert_string_equal(pw_capture_reason_name(PW_CAPTURE_SCHEDULE), "schedule");
	assert_string_equal(pw_capture_reason_name(PW_CAPTURE_TIMER), "timer");
	assert_string_equal(pw_capture_reason_name(PW_CAPTURE_ON_DEMAND), "on-demand");
	assert_string_equal(pw_capture_reason_name(PW_CAPTURE_INITIAL), "initial");
	assert_string_equal(pw_capture_reason_name(0), "unknown");
	assert_string_equal(pw_capture_reason_name(99), "unknown");
}

/* ---- GPU attribution ---- */

/* A GPU op launched on T1 inside A > B adds its duration to A and to B once each; one inside A only to A;
 * ops outside every range, on another thread, or with no thread or launch time add nothing. */
static void test_gpu_nested(void **state)
{
	struct rfx *x = *state;
	struct pw_ranges_file *f = file_open(x, 0, 10, 0);
	push(x, T1, 1000, 0, 0, "A");
	push(x, T1, 2000, 0, 1, "B");
	pop(x, T1, 3000, 0);
	pop(x, T1, 4000, 0);
	pw_ranges_gpu_op(f, T1, 2500, 300); /* A and B */
	pw_ranges_gpu_op(f, T1, 3500, 50);  /* A */
	pw_ranges_gpu_op(f, T1, 1500, 7);   /* A */
	pw_ranges_gpu_op(f, T1, 500, 1000); /* before any range */
	pw_ranges_gpu_op(f, T1, 5000, 1000); /* after */
	pw_ranges_gpu_op(f, T2, 2500, 1000); /* another thread */
	pw_ranges_gpu_op(f, 0, 2500, 1000);  /* no thread */
	pw_ranges_gpu_op(f, T1, 0, 1000);    /* no launch time */
	file_end(x, 0, 10000);
	pw_ranges_finish(x->r);
	assert_int_equal(row_ok(x->r, "", "A", 0, PW_RANGE_PUSH)->gpu_ns, 357);
	assert_int_equal(row_ok(x->r, "", "B", 1, PW_RANGE_PUSH)->gpu_ns, 300);
}

/* Two occurrences of one row open at once on the launching thread (overlapping start/end ranges, or
 * occurrences of names folded into one row) count the op once for that row. */
static void test_gpu_once_per_row(void **state)
{
	struct rfx *x = *state;
	struct pw_ranges_file *f = file_open(x, 0, 10, 0);
	rstart(x, T1, 100, 0, 1, "io");
	rstart(x, T1, 200, 0, 2, "io");
	rend(x, T1, 500, 1);
	rend(x, T1, 600, 2);
	pw_ranges_gpu_op(f, T1, 300, 40); /* inside both */
	pw_ranges_gpu_op(f, T1, 550, 2);  /* inside the second only */
	/* 17 "w N" start/end ranges, all open at 1500 */
	for (int i = 0; i < 17; i++) {
		char name[16];
		snprintf(name, sizeof name, "w %d", i);
		rstart(x, T1, 1000 + (uint64_t)i, 0, 100 + i, name);
	}
	for (int i = 0; i < 17; i++)
		rend(x, T1, 2000, 100 + i);
	pw_ranges_gpu_op(f, T1, 1500, 1000);
	file_end(x, 0, 10000);
	pw_ranges_finish(x->r);
	assert_int_equal(row_ok(x->r, "", "io", 0, PW_RANGE_START)->gpu_ns, 42);
	assert_int_equal(row_ok(x->r, "", "w #", 0, PW_RANGE_START)->gpu_ns, 1000);
}

/* An op inside a range that the file's end closed counts; one in a range whose rows were folded later goes
 * to the folded row. */
static void test_gpu_unclosed_and_folded(void **state)
{
	struct rfx *x = *state;
	struct pw_ranges_file *f = file_open(x, 0, 10, 0);
	for (int i = 0; i < 17; i++) {
		char name[16];
		snprintf(name, sizeof name, "it %d", i);
		push(x, T1, (uint64_t)i * 100, 0, 0, name);
		pop(x, T1, (uint64_t)i * 100 + 50, 0);
	}
	pw_ranges_gpu_op(f, T1, 10, 5);   /* in "it 0", before the group folded */
	pw_ranges_gpu_op(f, T1, 1610, 6); /* in "it 16", the one that folded it */
	pw_ranges_gpu_op(f, T1, 1660, 1000); /* between occurrences */
	push(x, T2, 5000, 0, 0, "tail");
	pw_ranges_gpu_op(f, T2, 9000, 70);
	file_end(x, 0, 10000);
	pw_ranges_finish(x->r);
	assert_int_equal(row_ok(x->r, "", "it #", 0, PW_RANGE_PUSH)->gpu_ns, 11);
	const struct pw_range_row *t = row_ok(x->r, "", "tail", 0, PW_RANGE_PUSH);
	assert_int_equal(t->gpu_ns, 70);
	expect_row(t, 1, 5000, 5000, 5000);
	assert_int_equal(x->r->unclosed, 1);
}

/* ---- edges of the interface ---- */

static void test_null_file(void **state)
{
	struct rfx *x = *state;
	struct pw_rec_range rr;
	memset(&rr, 0, sizeof rr);
	rr.c.h.type = PW_EV_NVTX_POP;
	rr.c.h.tid = T1;
	struct pw_raw_event e = {.rec = &rr.c};
	assert_int_equal(pw_ranges_event(&x->r, NULL, &e), -1);
	assert_int_equal(pw_ranges_file_end(NULL, NULL, 0), 0);
	pw_ranges_gpu_op(NULL, T1, 1, 1);
	pw_ranges_finish(NULL);
	pw_ranges_free(NULL);
}

/* The rows form a tree: one name under two parents is two rows, each child under its own parent. */
static void test_tree_parents(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	push(x, T1, 100, 0, 0, "train");
	push(x, T1, 110, 0, 1, "step");
	pop(x, T1, 150, 0);
	pop(x, T1, 200, 0);
	push(x, T1, 300, 0, 0, "validate");
	push(x, T1, 310, 0, 1, "step");
	pop(x, T1, 320, 0);
	pop(x, T1, 400, 0);
	file_end(x, 0, 1000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(shown(r), 4);
	const struct pw_range_row *train = row_ok(r, "", "train", 0, PW_RANGE_PUSH);
	const struct pw_range_row *validate = row_ok(r, "", "validate", 0, PW_RANGE_PUSH);
	assert_int_equal(train->parent, PW_RANGE_TOP);
	size_t seen = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct pw_range_row *s = &r->rows[i];
		if (s->merged || strcmp(s->name, "step") != 0)
			continue;
		const struct pw_range_row *p = &r->rows[s->parent];
		assert_true(p == train || p == validate);
		assert_int_equal(s->total_ns, p == train ? 40 : 10);
		assert_int_equal(s->depth, 1);
		seen++;
	}
	assert_int_equal(seen, 2);
}

/* A group that folds takes its rows' children with it: 20 "step N", each holding a "forward", end as one
 * "step #" holding one "forward" of 20 calls. */
static void test_fold_adopts_children(void **state)
{
	struct rfx *x = *state;
	file_open(x, 0, 10, 0);
	char name[32];
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof name, "step %d", i);
		push(x, T1, 1000 + 100 * (uint64_t)i, 0, 0, name);
		push(x, T1, 1010 + 100 * (uint64_t)i, 0, 1, "forward");
		pop(x, T1, 1030 + 100 * (uint64_t)i, 0);
		pop(x, T1, 1050 + 100 * (uint64_t)i, 0);
	}
	file_end(x, 0, 10000);
	pw_ranges_finish(x->r);
	const struct pw_range_report *r = x->r;
	assert_int_equal(shown(r), 2);
	const struct pw_range_row *step = row_ok(r, "", "step #", 0, PW_RANGE_PUSH);
	const struct pw_range_row *fwd = row_ok(r, "", "forward", 1, PW_RANGE_PUSH);
	expect_row(step, 20, 20 * 50, 50, 50);
	expect_row(fwd, 20, 20 * 20, 20, 20);
	assert_int_equal(step->folded, 20);
	assert_int_equal(fwd->folded, 0);
	assert_ptr_equal(&r->rows[fwd->parent], step);
}

/* PyTorch's numbering decorations come out of a range's name; sizes and anything else stay. */
static void check_undecorated(const char *in, const char *want)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", in);
	size_t len = pw_range_undecorate(buf);
	assert_string_equal(buf, want);
	assert_int_equal(len, strlen(want));
}

static void test_undecorate(void **state)
{
	(void)state;
	check_undecorated("[pl][profile]run_training_epoch, op_id = 1942", "[pl][profile]run_training_epoch");
	check_undecorated("aten::add, seq = 12, op_id = 7", "aten::add");
	check_undecorated("aten::mm, seq = 3, op_id = 9, sizes = [[2, 3], [3, 4]], input_op_ids = [4, 5]",
			  "aten::mm, sizes = [[2, 3], [3, 4]]");
	check_undecorated("aten::linear, op_id = #", "aten::linear");
	check_undecorated("step, op_id = x1", "step, op_id = x1"); /* not a number: kept */
	check_undecorated("loss, seq = 4 then", "loss, seq = 4 then");
	check_undecorated("plain name", "plain name");
	check_undecorated("", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_undecorate),
		cmocka_unit_test_setup_teardown(test_tree_parents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_adopts_children, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_name_two_depths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_threads_interleaved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_domains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unmatched_pop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_end_across_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_end_overlapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unclosed_at_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unclosed_at_window_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_17, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_later_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_many_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_deep_children, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_literal_pattern, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_16_stay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_groups_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_digits_never_fold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_while_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test(test_fold_function),
		cmocka_unit_test_setup_teardown(test_marks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_disjoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_back_to_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_initial_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_never_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_name_no_window, setup, teardown),
		cmocka_unit_test(test_reason_names),
		cmocka_unit_test_setup_teardown(test_gpu_nested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_once_per_row, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_unclosed_and_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_null_file, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
