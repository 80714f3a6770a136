#define _GNU_SOURCE
/* Unit tests for collector/merge (profwrap merge): rank<R>.json files written by hand into a fresh
 * directory, pw_merge() run, summary.json read back. Figures are exact: medians of odd and even counts, the
 * straggler by collectives (with the thresholds' edges) and by busy time, none when balanced, the
 * straggler's phase, missing ranks, launchers, damaged and odd files. PW_TEST_KEEP=1 keeps the directories. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../collector/merge/merge.h"
#include "../../collector/report/rank_summary.h"
#include "json_reader.h"

#define START 1795000000123456789ull /* above 2^53 */
#define MS 1000000ull
#define S 1000000000ull

struct mfx {
	char dir[64];
	struct jr *summary;   /* summary.json, parsed (its strings and numbers point into json) */
	char *json;
	char *text;           /* summary.txt */
	char *err;            /* what pw_merge wrote on stderr */
	char msg[1024];
};

static int setup(void **state)
{
	struct mfx *fx = calloc(1, sizeof *fx);
	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof fx->dir, "/tmp/pw-merge-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	*state = fx;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void drop_results(struct mfx *fx)
{
	jr_free(fx->summary);
	free(fx->json);
	fx->json = NULL;
	free(fx->text);
	free(fx->err);
	fx->summary = NULL;
	fx->text = fx->err = NULL;
}

static int teardown(void **state)
{
	struct mfx *fx = *state;
	drop_results(fx);
	if (getenv("PW_TEST_KEEP"))
		fprintf(stderr, "kept %s\n", fx->dir);
	else
		nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (got < 4096)
			break;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

static void write_file(const struct mfx *fx, const char *name, const char *text, size_t len)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", fx->dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* A rank's summary; zero fields are left out of the file (missing keys read as 0). */
struct rk {
	int rank;
	const char *host;
	uint64_t world;
	uint64_t start;
	uint64_t wall, gpu, kernel, coll, io, wait, busy, dropped, procs, events;
	const char *command;
	const char *top;
	const char *phases;      /* the phases array's JSON text */
	const char *colls;       /* the collectives array's JSON text */
	const char *before;      /* top-level members before "summary", with their trailing comma */
	const char *after;       /* the text after the summary object (default: ,"calls":[]}) */
	const char *in_summary;  /* more members at the summary's start, with their trailing comma */
	const char *name;        /* the file name (default rank<R>.json) */
};

static void write_rank(const struct mfx *fx, const struct rk *k)
{
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
#define PUT(...) (n += (size_t)snprintf(buf + n, cap - n, __VA_ARGS__), assert_true(n < cap))
	PUT("{\"format\":\"profwrap-report\",\"version\":2,%s\"summary\":{%s\"rank\":%d", k->before ? k->before : "",
	    k->in_summary ? k->in_summary : "", k->rank);
	if (k->host)
		PUT(",\"host\":\"%s\"", k->host);
	if (k->world)
		PUT(",\"world_size\":%llu", (unsigned long long)k->world);
	PUT(",\"command\":\"%s\"", k->command ? k->command : "python train.py");
	PUT(",\"start_realtime_ns\":%llu", (unsigned long long)(k->start ? k->start : START));
	static const char *const keys[] = {"wall_ns", "gpu_busy_ns", "kernel_ns", "collective_ns", "io_ns",
					   "wait_ns", "busy_ns", "dropped", "processes", "events"};
	const uint64_t vals[] = {k->wall, k->gpu,     k->kernel,  k->coll,  k->io,
				 k->wait, k->busy, k->dropped, k->procs, k->events};
	for (int i = 0; i < 10; i++)
		if (vals[i])
			PUT(",\"%s\":%llu", keys[i], (unsigned long long)vals[i]);
	if (k->top)
		PUT(",\"top_calls\":\"%s\"", k->top);
	if (k->phases)
		PUT(",\"phases\":%s", k->phases);
	if (k->colls)
		PUT(",\"collectives\":%s", k->colls);
	PUT("}%s", k->after ? k->after : ",\"calls\":[]}");
#undef PUT
	char name[64];
	snprintf(name, sizeof name, "rank%d.json", k->rank);
	write_file(fx, k->name ? k->name : name, buf, n);
	free(buf);
}

/* Runs pw_merge with stderr captured; on success (0) reads summary.json and summary.txt back. */
static int merge(struct mfx *fx, int only_if_complete)
{
	drop_results(fx);
	fflush(stderr);
	int saved = dup(2);
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	dup2(fileno(tmp), 2);
	int rc = pw_merge(fx->dir, only_if_complete, fx->msg, sizeof fx->msg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	long size = ftell(tmp);
	rewind(tmp);
	fx->err = calloc(1, (size_t)(size > 0 ? size : 0) + 1);
	assert_non_null(fx->err);
	if (size > 0)
		assert_int_equal(fread(fx->err, 1, (size_t)size, tmp), (size_t)size);
	fclose(tmp);
	char path[256];
	size_t len;
	snprintf(path, sizeof path, "%s/summary.json", fx->dir);
	fx->json = read_all(path, &len);
	if (fx->json) {
		fx->summary = jr_parse(fx->json, len);
		if (!fx->summary)
			fail_msg("summary.json does not parse:\n%s", fx->json);
	}
	snprintf(path, sizeof path, "%s/summary.txt", fx->dir);
	fx->text = read_all(path, NULL);
	if (rc == 0 && fx->text) {
		/* every line under 120 columns */
		const char *line = fx->text;
		while (*line) {
			size_t n = strcspn(line, "\n");
			if (n >= 120)
				fail_msg("a line of %zu columns in summary.txt:\n%.*s", n, (int)n, line);
			line += n + (line[n] == '\n');
		}
	}
	return rc;
}

static const struct jr *top(const struct mfx *fx, const char *key)
{
	assert_non_null(fx->summary);
	return jr_get(fx->summary, key);
}

static const struct jr *row(const struct mfx *fx, size_t i)
{
	return jr_at(top(fx, "ranks"), i);
}

static uint64_t stat_of(const struct mfx *fx, const char *col, const char *which)
{
	return jr_u64(jr_get(jr_get(top(fx, "rank_stats"), col), which));
}

static int is_null(const struct jr *v)
{
	return v && v->type == JR_NULL;
}

/* Looks for part in summary.txt, with wrapped paragraphs joined (a line break and the two spaces of the
 * next line read as one space). */
static void expect_text(const struct mfx *fx, const char *part)
{
	assert_non_null(fx->text);
	char *flat = strdup(fx->text);
	assert_non_null(flat);
	size_t j = 0;
	for (size_t i = 0; fx->text[i]; i++) {
		if (fx->text[i] == '\n' && strncmp(fx->text + i + 1, "  ", 2) == 0 && fx->text[i + 3] != ' ') {
			flat[j++] = ' ';
			i += 2;
		} else {
			flat[j++] = fx->text[i];
		}
	}
	flat[j] = 0;
	int found = strstr(flat, part) != NULL;
	free(flat);
	if (!found) {
		fprintf(stderr, "%s", fx->text);
		fail_msg("summary.txt (above) has no \"%s\"", part);
	}
}

/* The collectives array of one domain: n entries, entry k at k ms + 1 us, the rank last(k) 10 us later; the
 * rank's start_realtime is START + rank * 7 and its offsets make up for it (the k-th collective is at the same
 * wall-clock time on every rank but the late one). Other ranks enter rank * 10 ns apart. */
static void coll_json(char *buf, size_t cap, const char *domain, int rank, size_t n, int (*last)(size_t k, void *),
		      void *ctx)
{
	size_t used = (size_t)snprintf(buf, cap, "{\"domain\":\"%s\",\"entries_ns\":[", domain);
	for (size_t k = 0; k < n; k++) {
		uint64_t late = last(k, ctx) == rank ? 10000 : (uint64_t)rank * 10;
		uint64_t off = k * MS + 1000 - (uint64_t)rank * 7 + late;
		used += (size_t)snprintf(buf + used, cap - used, "%s%llu", k ? "," : "", (unsigned long long)off);
		assert_true(used < cap);
	}
	used += (size_t)snprintf(buf + used, cap - used, "],\"truncated\":false}");
	assert_true(used < cap);
}

/* last(k): the late rank is ctx[0] for k < ctx[1], else k % ctx[2] shifted past ctx[0] */
static int last_mostly(size_t k, void *ctx)
{
	const int *c = ctx;
	if ((int)k < c[1])
		return c[0];
	int r = (int)(k % (size_t)c[2]);
	return r == c[0] ? (r + 1) % c[2] : r;
}

/* nranks ranks with n mpi collectives, rank late entering last in the first `times` of them. */
/* The ranks' wall time in write_collective_job: short enough that the late rank's 10 us per collective
 * matter (PW_MERGE_LATE_MIN_WALL). */
static uint64_t job_wall;

static void write_collective_job(struct mfx *fx, int nranks, size_t n, int late, int times)
{
	int ctx[3] = {late, times, nranks};
	char *colls = malloc(1 << 20), *arr = malloc((1 << 20) + 8);
	assert_non_null(colls);
	assert_non_null(arr);
	for (int r = 0; r < nranks; r++) {
		coll_json(colls, 1 << 20, "mpi", r, n, last_mostly, ctx);
		snprintf(arr, (1 << 20) + 8, "[%s]", colls);
		struct rk k = {.rank = r, .host = r < 2 ? "node0" : "node1", .world = (uint64_t)nranks,
			       .start = START + (uint64_t)r * 7, .wall = job_wall ? job_wall : MS, .coll = r == late ? 200 * MS : 2 * S,
			       .busy = 7 * S, .colls = arr};
		write_rank(fx, &k);
	}
	free(colls);
	free(arr);
}

/* ---- medians ----------------------------------------------------------------------------------------- */

static void test_median_odd_values(void **state)
{
	struct mfx *fx = *state;
	uint64_t walls[] = {10 * S, 30 * S, 20 * S};
	for (int r = 0; r < 3; r++) {
		struct rk k = {.rank = r, .host = "h", .world = 3, .wall = walls[r], .io = (uint64_t)(r + 1) * MS,
			       .dropped = (uint64_t)(2 - r), .procs = 1, .events = 100};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	char want[256];
	snprintf(want, sizeof want, "summary of 3 ranks in %s/summary.txt", fx->dir);
	assert_string_equal(fx->msg, want);
	assert_true(jr_is(top(fx, "format"), "profwrap-summary"));
	assert_int_equal(jr_u64(top(fx, "version")), 2);
	assert_int_equal(jr_u64(top(fx, "world_size")), 3);
	assert_true(jr_is(top(fx, "command"), "python train.py"));
	assert_int_equal(top(fx, "ranks")->n, 3);
	/* the fixed keys of a row, in order */
	static const char *const fixed[] = {"rank", "host", "wall_ns", "gpu_busy_ns", "kernel_ns", "collective_ns",
					    "io_ns", "wait_ns", "dropped", "busy_ns", "processes", "events",
					    "profwrap_cost_ns", "last_arrivals"};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		assert_string_equal(row(fx, 0)->keys[i], fixed[i]);
	assert_int_equal(jr_u64(jr_get(row(fx, 1), "wall_ns")), 30 * S);
	assert_int_equal(stat_of(fx, "wall_ns", "min"), 10 * S);
	assert_int_equal(stat_of(fx, "wall_ns", "median"), 20 * S);
	assert_int_equal(stat_of(fx, "wall_ns", "max"), 30 * S);
	assert_int_equal(jr_u64(jr_get(jr_get(top(fx, "rank_stats"), "wall_ns"), "max_rank")), 1);
	assert_int_equal(stat_of(fx, "io_ns", "median"), 2 * MS);
	assert_int_equal(stat_of(fx, "dropped", "median"), 1);
	assert_int_equal(stat_of(fx, "dropped", "max"), 2);
	assert_int_equal(stat_of(fx, "events", "median"), 100);
	expect_text(fx, "wall         min 10.0 s (rank 0), median 20.0 s, max 30.0 s (rank 1)");
	expect_text(fx, "profwrap summary: 3 ranks of world size 3");
	/* no collectives, equal busy time (0): no straggler */
	assert_true(is_null(top(fx, "straggler")));
	assert_true(is_null(top(fx, "straggler_reason")));
	assert_true(is_null(top(fx, "straggler_phase")));
	assert_int_equal(top(fx, "missing_ranks")->n, 0);
	assert_int_equal(top(fx, "launchers")->n, 0);
	assert_int_equal(top(fx, "collective_skew")->n, 0);
}

/* Every FIGURE member of the summary's table (rank_summary.h) is merged: in each row at its row position
 * (after rank and host), in rank_stats at its stat position, in summary.txt's spreads when it has a label. */
static void test_every_figure_merged(void **state)
{
	struct mfx *fx = *state;
	char in[2048];
	for (int r = 0; r < 3; r++) {
		size_t n = 0;
		for (int m = 0; m < PW_SUM_COUNT; m++)
			if (pw_summary_members[m].merge == PW_MERGE_FIGURE)
				n += (size_t)snprintf(in + n, sizeof in - n, "\"%s\":%llu,", pw_summary_members[m].key,
						      (unsigned long long)((uint64_t)(m + 1) * S + (uint64_t)r));
		assert_true(n < sizeof in);
		struct rk k = {.rank = r, .world = 3, .in_summary = in};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	size_t nfig = 0;
	for (int m = 0; m < PW_SUM_COUNT; m++) {
		const struct pw_summary_member_info *info = &pw_summary_members[m];
		if (info->merge != PW_MERGE_FIGURE)
			continue;
		nfig++;
		for (size_t r = 0; r < 3; r++) {
			assert_string_equal(row(fx, r)->keys[2 + info->row], info->key);
			assert_int_equal(jr_u64(jr_get(row(fx, r), info->key)), (uint64_t)(m + 1) * S + r);
		}
		assert_string_equal(top(fx, "rank_stats")->keys[info->stat], info->key);
		assert_int_equal(stat_of(fx, info->key, "median"), (uint64_t)(m + 1) * S + 1);
		if (info->label) {
			char line[64];
			snprintf(line, sizeof line, "\n%-12s min ", info->label);
			expect_text(fx, line);
		}
	}
	assert_int_equal(top(fx, "rank_stats")->n, nfig);
}

static void test_median_even(void **state)
{
	struct mfx *fx = *state;
	/* the median of an even count is the mean of the middle two (rounded down) */
	uint64_t walls[] = {1000, 301, 100, 200};
	for (int r = 0; r < 4; r++) {
		struct rk k = {.rank = r, .world = 4, .wall = walls[r], .busy = 5 * S};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(stat_of(fx, "wall_ns", "median"), 250);
	assert_int_equal(stat_of(fx, "wall_ns", "min"), 100);
	assert_int_equal(stat_of(fx, "wall_ns", "max"), 1000);
	assert_int_equal(stat_of(fx, "busy_ns", "median"), 5 * S);
	/* extremes: the mean of two values near 2^64 without overflow */
	drop_results(fx);
	uint64_t big[] = {UINT64_MAX, UINT64_MAX - 2, 1, 0};
	for (int r = 0; r < 4; r++) {
		struct rk k = {.rank = r, .world = 4, .wall = 1, .events = big[r]};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_true(stat_of(fx, "events", "median") == UINT64_MAX / 2); /* (1 + (2^64 - 3)) / 2 */
	assert_true(stat_of(fx, "events", "max") == UINT64_MAX);
}

/* ---- the straggler ------------------------------------------------------------------------------------ */

static void test_straggler_by_collectives(void **state)
{
	struct mfx *fx = *state;
	write_collective_job(fx, 4, 20, 2, 18);
	/* its phases against the others' */
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "straggler")), 2);
	assert_true(jr_is(top(fx, "straggler_reason"), "collectives"));
	assert_int_equal(jr_u64(top(fx, "collectives_compared")), 20);
	assert_int_equal(jr_u64(jr_get(row(fx, 2), "last_arrivals")), 18);
	const struct jr *skew = jr_find(top(fx, "collective_skew"), "domain", "mpi");
	assert_int_equal(jr_u64(jr_get(skew, "compared")), 20);
	const struct jr *last = jr_get(skew, "last_arrivals");
	assert_int_equal(jr_u64(jr_get(jr_at(last, 0), "rank")), 2);
	assert_int_equal(jr_u64(jr_get(jr_at(last, 0), "count")), 18);
	/* k = 18, 19: k % 4 = 2 -> 3, and 3 */
	assert_int_equal(jr_u64(jr_get(jr_at(last, 1), "rank")), 3);
	assert_int_equal(jr_u64(jr_get(jr_at(last, 1), "count")), 2);
	/* spreads: the late rank 10 us after rank 0 (10000 ns), exact although the clocks read above 2^53 */
	assert_int_equal(jr_u64(jr_get(skew, "median_spread_ns")), 10000);
	assert_int_equal(jr_u64(jr_get(skew, "max_spread_ns")), 10000);
	assert_int_equal(jr_u64(jr_get(skew, "max_spread_index")), 0);
	assert_int_equal(jr_u64(jr_get(row(fx, 2), "late_ns")), 180000);
	expect_text(fx, "Straggler: rank 2: the others waited 180 us for it to enter collectives, 90 % of all such waiting;");
	expect_text(fx, "it entered last in 90 % of 20 collectives; the others waited for it (their");
	expect_text(fx, "collective time median 2.00 s, its own 200 ms)");
	expect_text(fx, "mpi: 20 compared, spread median 10.0 us, max 10.0 us (collective #0)");
	expect_text(fx, "entered last most often: rank 2 (18), rank 3 (2)");
}

/* One rank late by 10 ms in 2 of 20 collectives, another late by 10 us in the 18 others: the others waited
 * for the first, although it entered last less often. */
static void test_straggler_by_waiting_time(void **state)
{
	struct mfx *fx = *state;
	int n = 4;
	char a[65536], arr[65600];
	for (int r = 0; r < n; r++) {
		char *p = a;
		size_t left = sizeof a;
		for (int k = 0; k < 20; k++) {
			uint64_t at = (uint64_t)k * 100 * 1000000 + (uint64_t)r * 10;
			if (k % 10 == 0 && r == 1)
				at += 10 * 1000000;
			else if (k % 10 != 0 && r == 3)
				at += 10 * 1000;
			int w = snprintf(p, left, "%s%llu", k ? "," : "", (unsigned long long)(at - (uint64_t)r * 7));
			p += w;
			left -= (size_t)w;
		}
		snprintf(arr, sizeof arr, "[{\"domain\":\"mpi\",\"entries_ns\":[%s],\"truncated\":false}]", a);
		struct rk k = {.rank = r, .world = 4, .start = START + (uint64_t)r * 7, .wall = 100 * MS, .coll = S,
			       .busy = S, .colls = arr, .phases = "[]"};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "straggler")), 1);
	assert_int_equal(jr_u64(jr_get(row(fx, 1), "last_arrivals")), 2);
	assert_int_equal(jr_u64(jr_get(row(fx, 3), "last_arrivals")), 18);
}

/* A rank the others waited for, but too briefly to matter: 180 us in a 10 s run (start-up skew does that). */
static void test_no_straggler_when_waiting_is_short(void **state)
{
	struct mfx *fx = *state;
	job_wall = 10 * S;
	write_collective_job(fx, 4, 20, 2, 18);
	job_wall = 0;
	assert_int_equal(merge(fx, 0), 0);
	assert_true(is_null(top(fx, "straggler")));
	expect_text(fx, "No straggler: the others waited for rank 2 longest, but only 180 us in all, under 2 % of the");
}

static void test_straggler_threshold(void **state)
{
	struct mfx *fx = *state;
	/* 4 ranks: half the collectives are enough */
	write_collective_job(fx, 4, 20, 1, 10);
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "straggler")), 1);
	drop_results(fx);
	write_collective_job(fx, 4, 20, 1, 9);
	assert_int_equal(merge(fx, 0), 0);
	assert_true(is_null(top(fx, "straggler")));
	assert_true(is_null(top(fx, "straggler_reason")));
	expect_text(fx, "No straggler: the rank the others waited for longest, rank 1, accounts for 45.0 % of the time the "
			"ranks waited for the last one in 20 collectives (50 %");
}

static void test_straggler_threshold_two_ranks(void **state)
{
	struct mfx *fx = *state;
	/* 2 ranks: three quarters are needed (of the waiting time: 15 of 20 equal spreads, less the 10 ns rank 1
	 * enters after rank 0, fall just short) */
	write_collective_job(fx, 2, 20, 0, 16);
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "straggler")), 0);
	drop_results(fx);
	write_collective_job(fx, 2, 20, 0, 14);
	assert_int_equal(merge(fx, 0), 0);
	/* 14 of 20: rank 0 (14) + rank 1 (6) */
	assert_int_equal(jr_u64(jr_get(row(fx, 0), "last_arrivals")), 14);
	assert_true(is_null(top(fx, "straggler")));
	expect_text(fx, "(75 % needed to name it)");
}

static void test_straggler_needs_three_collectives(void **state)
{
	struct mfx *fx = *state;
	write_collective_job(fx, 4, 2, 3, 2);
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "collectives_compared")), 2);
	assert_true(is_null(top(fx, "straggler")));
	expect_text(fx, "No straggler: only 2 collectives were entered by every rank (3 needed to name one).");
	drop_results(fx);
	write_collective_job(fx, 4, 3, 3, 3);
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "straggler")), 3);
}

static int last_always(size_t k, void *ctx)
{
	(void)k;
	return *(int *)ctx;
}

static int last_rotating(size_t k, void *ctx)
{
	return (int)(k % (size_t)*(int *)ctx);
}

static void test_straggler_over_both_domains(void **state)
{
	struct mfx *fx = *state;
	/* mpi: rank 3 last in 4 of 10 (then rank 0, 1, 2 ...); nccl: rank 3 last in 7 of 10: 11 of 20 */
	int mpi_ctx[3] = {3, 4, 4}, nccl_ctx[3] = {3, 7, 4};
	char a[8192], b[8192], arr[16500];
	for (int r = 0; r < 4; r++) {
		coll_json(a, sizeof a, "mpi", r, 10, last_mostly, mpi_ctx);
		coll_json(b, sizeof b, "nccl", r, 10, last_mostly, nccl_ctx);
		snprintf(arr, sizeof arr, "[%s,%s]", a, b);
		struct rk k = {.rank = r, .world = 4, .start = START + (uint64_t)r * 7, .wall = MS,
			       .coll = r == 3 ? 2 * S : S, .colls = arr};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "collectives_compared")), 20);
	assert_int_equal(jr_u64(top(fx, "straggler")), 3);
	assert_int_equal(jr_u64(jr_get(row(fx, 3), "last_arrivals")), 11);
	assert_int_equal(top(fx, "collective_skew")->n, 2);
	assert_int_equal(jr_u64(jr_get(jr_find(top(fx, "collective_skew"), "domain", "nccl"), "compared")), 10);
	/* its own collective time is not the shortest: said so */
	expect_text(fx, "is not the shortest");
}

static void test_none_when_balanced(void **state)
{
	struct mfx *fx = *state;
	int n = 4;
	char a[65536], arr[65600];
	for (int r = 0; r < n; r++) {
		coll_json(a, sizeof a, "mpi", r, 100, last_rotating, &n);
		snprintf(arr, sizeof arr, "[%s]", a);
		struct rk k = {.rank = r, .world = 4, .start = START + (uint64_t)r * 7, .wall = 10 * S, .coll = S,
			       .busy = (9 + (uint64_t)r % 2) * S, .colls = arr,
			       .phases = "[{\"name\":\"forward\",\"ns\":1000}]"};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_true(is_null(top(fx, "straggler")));
	assert_true(is_null(top(fx, "straggler_phase")));
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(jr_u64(jr_get(row(fx, i), "last_arrivals")), 25);
	/* ties: the lowest rank is named first */
	const struct jr *last = jr_get(jr_find(top(fx, "collective_skew"), "domain", "mpi"), "last_arrivals");
	assert_int_equal(last->n, 3);
	assert_int_equal(jr_u64(jr_get(jr_at(last, 0), "rank")), 0);
	assert_int_equal(jr_u64(jr_get(jr_at(last, 2), "rank")), 2);
	expect_text(fx, "No straggler: the rank the others waited for longest, rank 1, accounts for 25.0 % of the time");
}

static void test_straggler_by_busy(void **state)
{
	struct mfx *fx = *state;
	uint64_t busy[] = {10 * S, 10 * S, 12 * S, 11 * S};
	for (int r = 0; r < 4; r++) {
		struct rk k = {.rank = r, .world = 4, .wall = 13 * S, .busy = busy[r]};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	/* median 10.5 s; 12 s is 14 % above it */
	assert_int_equal(stat_of(fx, "busy_ns", "median"), 10500 * MS);
	assert_int_equal(jr_u64(top(fx, "straggler")), 2);
	assert_true(jr_is(top(fx, "straggler_reason"), "busy"));
	expect_text(fx, "Straggler: rank 2: its main thread was busy 12.0 s, 14.3 % more than the median rank's "
			"10.5 s");
	/* 9.5 % above: none */
	drop_results(fx);
	uint64_t busy2[] = {10 * S, 10 * S, 10950 * MS, 10 * S};
	for (int r = 0; r < 4; r++) {
		struct rk k = {.rank = r, .world = 4, .wall = 13 * S, .busy = busy2[r]};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_true(is_null(top(fx, "straggler")));
	expect_text(fx, "No straggler: no collectives to compare; the busiest main thread, rank 2's (10.9 s), is "
			"9.5 % above");
	/* exactly 10 % above the median: named */
	drop_results(fx);
	uint64_t busy3[] = {10 * S, 10 * S, 11 * S, 10 * S};
	for (int r = 0; r < 4; r++) {
		struct rk k = {.rank = r, .world = 4, .wall = 13 * S, .busy = busy3[r]};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "straggler")), 2);
}

static void test_one_rank(void **state)
{
	struct mfx *fx = *state;
	int late = 0;
	char a[8192], arr[8300];
	coll_json(a, sizeof a, "mpi", 0, 10, last_always, &late);
	snprintf(arr, sizeof arr, "[%s]", a);
	struct rk k = {.rank = 0, .world = 1, .wall = S, .busy = S, .colls = arr};
	write_rank(fx, &k);
	assert_int_equal(merge(fx, 0), 0);
	assert_string_equal(strstr(fx->msg, "summary of"), fx->msg);
	assert_non_null(strstr(fx->msg, "summary of 1 rank in"));
	assert_true(is_null(top(fx, "straggler")));
	assert_int_equal(jr_u64(jr_get(jr_at(top(fx, "collective_skew"), 0), "compared")), 0);
	expect_text(fx, "No straggler: one rank");
}

static void test_straggler_phase(void **state)
{
	struct mfx *fx = *state;
	/* rank 1 is late; forward: others 3, 3, 9 s (median 3, mean 5), its own 5.5 s: +2.5 s over the median;
	 * backward: others 1 s, its own 2 s: +1 s; data: only rank 0 has it (3 s), the others count 0, its own
	 * 1.6 s: +1.6 s over the median 0. */
	int ctx[3] = {1, 10, 4};
	char a[8192], arr[8300];
	const char *phases[4] = {
		"[{\"name\":\"forward\",\"ns\":3000000000},{\"name\":\"backward\",\"ns\":1000000000},"
		"{\"name\":\"data\",\"ns\":3000000000}]",
		"[{\"name\":\"forward\",\"ns\":5500000000},{\"name\":\"backward\",\"ns\":2000000000},"
		"{\"name\":\"data\",\"ns\":1600000000},{\"name\":\"idle\",\"ns\":1}]",
		"[{\"name\":\"backward\",\"ns\":1000000000},{\"name\":\"forward\",\"ns\":9000000000}]",
		"[{\"name\":\"forward\",\"ns\":3000000000},{\"name\":\"backward\",\"ns\":1000000000},"
		"{\"name\":\"idle\",\"ns\":5}]",
	};
	for (int r = 0; r < 4; r++) {
		coll_json(a, sizeof a, "nccl", r, 10, last_mostly, ctx);
		snprintf(arr, sizeof arr, "[%s]", a);
		struct rk k = {.rank = r, .world = 4, .start = START + (uint64_t)r * 7, .wall = MS, .coll = S,
			       .colls = arr, .phases = phases[r]};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "straggler")), 1);
	assert_true(jr_is(top(fx, "straggler_phase"), "forward"));
	assert_int_equal(jr_u64(top(fx, "straggler_phase_excess_ns")), 2500 * MS);
	expect_text(fx, "It loses its time in phase \"forward\" (+2.50 s over the median of the other ranks).");
	expect_text(fx, "See rank1.txt");

	/* a phase only the straggler has wins over one every rank has */
	drop_results(fx);
	const char *phases2[4] = {
		"[{\"name\":\"forward\",\"ns\":3000000000}]",
		"[{\"name\":\"forward\",\"ns\":4000000000},{\"name\":\"checkpoint\",\"ns\":1500000000}]",
		"[{\"name\":\"forward\",\"ns\":3000000000}]",
		"[]",
	};
	for (int r = 0; r < 4; r++) {
		coll_json(a, sizeof a, "nccl", r, 10, last_mostly, ctx);
		snprintf(arr, sizeof arr, "[%s]", a);
		struct rk k = {.rank = r, .world = 4, .start = START + (uint64_t)r * 7, .wall = MS, .coll = S,
			       .colls = arr, .phases = phases2[r]};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	/* forward: others 3, 3, 0 -> median 3, +1 s; checkpoint: others 0 -> +1.5 s */
	assert_true(jr_is(top(fx, "straggler_phase"), "checkpoint"));
	assert_int_equal(jr_u64(top(fx, "straggler_phase_excess_ns")), 1500 * MS);

	/* no phase above the others': none */
	drop_results(fx);
	for (int r = 0; r < 4; r++) {
		coll_json(a, sizeof a, "nccl", r, 10, last_mostly, ctx);
		snprintf(arr, sizeof arr, "[%s]", a);
		struct rk k = {.rank = r, .world = 4, .start = START + (uint64_t)r * 7, .wall = MS, .coll = S,
			       .colls = arr, .phases = "[{\"name\":\"forward\",\"ns\":3000000000}]"};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "straggler")), 1);
	assert_true(is_null(top(fx, "straggler_phase")));
	assert_true(is_null(top(fx, "straggler_phase_excess_ns")));
	expect_text(fx, "None of its phases takes longer than on the median rank.");
}

/* ---- the directory -------------------------------------------------------------------------------------- */

static void test_missing_ranks(void **state)
{
	struct mfx *fx = *state;
	int present[] = {0, 1, 3, 4};
	for (int i = 0; i < 4; i++) {
		struct rk k = {.rank = present[i], .world = 8, .wall = S};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 1), 1);
	assert_string_equal(fx->msg, "ranks 2, 5-7 of 8 have no report yet");
	assert_null(fx->summary); /* nothing written */
	assert_null(fx->text);
	assert_int_equal(merge(fx, 0), 0);
	const struct jr *missing = top(fx, "missing_ranks");
	assert_int_equal(missing->n, 4);
	uint64_t want[] = {2, 5, 6, 7};
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(jr_u64(jr_at(missing, i)), want[i]);
	assert_int_equal(jr_u64(top(fx, "world_size")), 8);
	expect_text(fx, "Missing: ranks 2, 5-7 of 8 have no report.");
	/* one missing */
	for (int r = 5; r < 8; r++) {
		struct rk k = {.rank = r, .world = 8, .wall = S};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 1), 1);
	assert_string_equal(fx->msg, "rank 2 of 8 has no report yet");
	/* complete: written, and then up to date */
	struct rk k = {.rank = 2, .world = 8, .wall = S};
	write_rank(fx, &k);
	char path[256];
	snprintf(path, sizeof path, "%s/summary.json", fx->dir);
	unlink(path);
	/* reports written within the last second never count as older than summary.json: age them */
	struct timespec past[2] = {{0, UTIME_OMIT}, {0, 0}};
	clock_gettime(CLOCK_REALTIME, &past[1]);
	past[1].tv_sec -= 10;
	for (int r = 0; r < 8; r++) {
		snprintf(path, sizeof path, "%s/rank%d.json", fx->dir, r);
		assert_int_equal(utimensat(AT_FDCWD, path, past, 0), 0);
	}
	assert_int_equal(merge(fx, 1), 0);
	assert_int_equal(top(fx, "ranks")->n, 8);
	assert_int_equal(top(fx, "missing_ranks")->n, 0);
	snprintf(path, sizeof path, "%s/summary.txt", fx->dir);
	unlink(path);
	assert_int_equal(merge(fx, 1), 0);
	assert_non_null(strstr(fx->msg, "is up to date"));
	assert_null(fx->text); /* not written again */
	/* a report newer than summary.json: merged again */
	snprintf(path, sizeof path, "%s/rank3.json", fx->dir);
	struct timespec later[2] = {{0, UTIME_OMIT}, {0, 0}};
	clock_gettime(CLOCK_REALTIME, &later[1]);
	later[1].tv_sec += 2;
	assert_int_equal(utimensat(AT_FDCWD, path, later, 0), 0);
	assert_int_equal(merge(fx, 1), 0);
	assert_non_null(fx->text);
	assert_non_null(strstr(fx->msg, "summary of 8 ranks"));
	/* the directory's own rank beyond world_size widens it */
	drop_results(fx);
	struct rk k9 = {.rank = 9, .world = 8, .wall = S};
	write_rank(fx, &k9);
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "world_size")), 10);
	assert_int_equal(top(fx, "missing_ranks")->n, 1);
}

/* A rank<R>.json with R of PW_MERGE_MAX_WORLD or more is skipped with a warning: its rank would list every
 * rank below it as missing (found by the report fuzz target: a damaged raw trace's rank gave rank1234567890.json,
 * and a rank of 9 digits cost the merge a billion missing ranks). */
static void test_rank_not_believable(void **state)
{
	struct mfx *fx = *state;
	struct rk k = {.rank = 0, .world = 2, .wall = S};
	write_rank(fx, &k);
	const char *names[] = {"rank1048576.json", "rank999999999.json", "rank12345678901.json"};
	for (int i = 0; i < 3; i++) {
		struct rk big = {.rank = 1, .world = 2, .wall = S, .name = names[i]};
		write_rank(fx, &big);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_int_equal(jr_u64(top(fx, "world_size")), 2);
	assert_int_equal(top(fx, "ranks")->n, 1);
	assert_int_equal(top(fx, "missing_ranks")->n, 1);
	for (int i = 0; i < 3; i++) {
		char want[256];
		snprintf(want, sizeof want, "%s/%s: a rank of 1048576 or more is not believable; skipped\n", fx->dir,
			 names[i]);
		if (!strstr(fx->err, want))
			fail_msg("no \"%s\" in:\n%s", want, fx->err);
	}
}

static void test_launchers(void **state)
{
	struct mfx *fx = *state;
	for (int r = 0; r < 2; r++) {
		struct rk k = {.rank = r, .world = 2, .wall = S, .host = r ? "node1" : "node0"};
		write_rank(fx, &k);
	}
	struct rk l0 = {.rank = -1, .host = "node0", .world = 2, .wall = 3 * S, .procs = 2,
			.command = "mpirun -np 2 python train.py", .name = "launcher-node0.json"};
	struct rk l1 = {.rank = -1, .host = "node1", .wall = 2 * S, .procs = 1, .command = "orted",
			.name = "launcher-node1.json"};
	write_rank(fx, &l0);
	write_rank(fx, &l1);
	write_file(fx, "launcher-.json", "{", 1);      /* no host part: not a launcher file */
	write_file(fx, "rank1.trace.json", "[", 1);    /* not a rank report */
	write_file(fx, "rank01.json", "{", 1);         /* not canonical */
	write_file(fx, "rank2.json.tmp", "{", 1);
	assert_int_equal(merge(fx, 0), 0);
	assert_string_equal(fx->err, "");
	const struct jr *ls = top(fx, "launchers");
	assert_int_equal(ls->n, 2);
	const struct jr *l = jr_find(ls, "file", "launcher-node0.json");
	assert_true(jr_is(jr_get(l, "host"), "node0"));
	assert_true(jr_is(jr_get(l, "command"), "mpirun -np 2 python train.py"));
	assert_int_equal(jr_u64(jr_get(l, "processes")), 2);
	assert_int_equal(jr_u64(jr_get(l, "wall_ns")), 3 * S);
	assert_true(jr_is(jr_get(jr_at(ls, 1), "file"), "launcher-node1.json"));
	assert_int_equal(top(fx, "ranks")->n, 2); /* launchers are not ranks */
	assert_true(jr_is(top(fx, "command"), "python train.py"));
	expect_text(fx, "profwrap summary: 2 ranks of world size 2, 2 launchers");
	expect_text(fx, "node0: mpirun -np 2 python train.py (2 processes, 3.00 s; launcher-node0.json)");
	expect_text(fx, "node1: orted (1 process, 2.00 s; launcher-node1.json)");
}

static void test_damaged_file_skipped(void **state)
{
	struct mfx *fx = *state;
	for (int r = 0; r < 3; r++) {
		struct rk k = {.rank = r, .world = 3, .wall = (uint64_t)(r + 1) * S};
		write_rank(fx, &k);
	}
	/* rank 1 cut inside its summary */
	const char *cut = "{\"format\":\"profwrap-report\",\"version\":2,\"summary\":{\"rank\":1,\"wall_ns\":12";
	write_file(fx, "rank1.json", cut, strlen(cut));
	/* an empty file, a directory, and a launcher whose summary holds a wrong type */
	write_file(fx, "rank3.json", "", 0);
	char path[256];
	snprintf(path, sizeof path, "%s/rank4.json", fx->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	const char *wrong = "{\"summary\":{\"wall_ns\":\"12\"}}";
	write_file(fx, "launcher-x.json", wrong, strlen(wrong));
	assert_int_equal(merge(fx, 0), 0);
	char want[512];
	snprintf(want, sizeof want, "profwrap: merge: %s/rank1.json: at byte %zu: unexpected end of input; skipped",
		 fx->dir, strlen(cut));
	if (!strstr(fx->err, want))
		fail_msg("stderr has no \"%s\":\n%s", want, fx->err);
	assert_non_null(strstr(fx->err, "rank3.json: at byte 0: unexpected end of input; skipped"));
	assert_non_null(strstr(fx->err, "rank4.json: not a regular file; skipped"));
	assert_non_null(strstr(fx->err, "launcher-x.json: at byte 22: expected an integer; skipped"));
	assert_int_equal(top(fx, "ranks")->n, 2);
	assert_int_equal(jr_u64(jr_get(row(fx, 1), "rank")), 2);
	const struct jr *bad = top(fx, "unreadable");
	assert_int_equal(bad->n, 4);
	assert_true(jr_is(jr_get(jr_at(bad, 0), "file"), "rank1.json"));
	/* world size 3 from the others; rank 1 has a file (unreadable), so it is not missing */
	assert_int_equal(jr_u64(top(fx, "world_size")), 3);
	assert_int_equal(top(fx, "missing_ranks")->n, 0);
	expect_text(fx, "Unreadable, skipped: rank1.json: at byte");
	assert_int_equal(top(fx, "launchers")->n, 0);
}

/* A FIFO named like a report is refused at once, not opened to wait for a writer that never comes (the
 * alarm turns a hang into a failure). */
static void test_fifo_skipped(void **state)
{
	struct mfx *fx = *state;
	struct rk k = {.rank = 0, .world = 2, .wall = S};
	write_rank(fx, &k);
	char path[256];
	snprintf(path, sizeof path, "%s/rank1.json", fx->dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(10);
	assert_int_equal(merge(fx, 0), 0);
	alarm(0);
	char want[512];
	snprintf(want, sizeof want, "profwrap: merge: %s/rank1.json: not a regular file; skipped\n", fx->dir);
	assert_string_equal(fx->err, want);
	assert_int_equal(top(fx, "ranks")->n, 1);
	assert_int_equal(top(fx, "unreadable")->n, 1);
	assert_int_equal(top(fx, "missing_ranks")->n, 0);
}

static void test_unknown_keys_ignored(void **state)
{
	struct mfx *fx = *state;
	int late = 1;
	char a[8192], arr[9000];
	for (int r = 0; r < 2; r++) {
		coll_json(a, sizeof a, "mpi", r, 5, last_always, &late);
		/* unknown keys inside a collective list, and an unknown domain's list */
		snprintf(arr, sizeof arr,
			 "[{\"future\":{\"x\":[1,2,{\"y\":null}]},\"domain\":\"gloo\",\"entries_ns\":[1,2,3]},%.*s,"
			 "\"extra\":[true,false,null,-1.5e3,\"\\u00e9\"]}]",
			 (int)strlen(a) - 1, a);
		struct rk k = {.rank = r, .world = 2, .start = START + (uint64_t)r * 7, .wall = MS, .coll = S,
			       .colls = arr,
			       .in_summary = "\"schema_2\":{\"nested\":[[[{}]]],\"n\":-3.25},\"flags\":[true,null],"
					     "\"note\":\"\\ud83d\\ude00\",\"rank_float\":1.5,",
			       .phases = "[{\"name\":\"fwd\",\"ns\":1,\"color\":\"red\","
					 "\"children\":[{\"name\":\"x\"}]}]"};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_string_equal(fx->err, "");
	assert_int_equal(top(fx, "ranks")->n, 2);
	assert_int_equal(jr_u64(jr_get(row(fx, 0), "wall_ns")), MS);
	const struct jr *skew = top(fx, "collective_skew");
	assert_int_equal(skew->n, 2);
	assert_int_equal(jr_u64(jr_get(jr_find(skew, "domain", "mpi"), "compared")), 5);
	/* gloo: entries 1, 2, 3 ns after each rank's start, which differs by 7 ns: rank 1 last */
	assert_int_equal(jr_u64(jr_get(jr_find(skew, "domain", "gloo"), "compared")), 3);
	assert_int_equal(jr_u64(top(fx, "straggler")), 1);
}

static void test_summary_not_first(void **state)
{
	struct mfx *fx = *state;
	/* a large member before the summary, nested and with strings that hold brackets and quotes */
	size_t cap = 400000, n = 0;
	char *before = malloc(cap);
	assert_non_null(before);
	n += (size_t)snprintf(before + n, cap - n, "\"calls\":[");
	for (int i = 0; n + 200 < cap; i++)
		n += (size_t)snprintf(before + n, cap - n, "%s{\"name\":\"x]}\\\"{%d\",\"a\":[[%d,{}]],\"b\":null}",
				      i ? "," : "", i, i);
	snprintf(before + n, cap - n, "],");
	for (int r = 0; r < 3; r++) {
		struct rk k = {.rank = r, .world = 3, .wall = (uint64_t)(r + 1) * S, .before = r == 1 ? before : NULL,
			       .host = "h1"};
		write_rank(fx, &k);
	}
	free(before);
	assert_int_equal(merge(fx, 0), 0);
	assert_string_equal(fx->err, "");
	assert_int_equal(top(fx, "ranks")->n, 3);
	assert_int_equal(jr_u64(jr_get(row(fx, 1), "wall_ns")), 2 * S);
	assert_true(jr_is(jr_get(row(fx, 1), "host"), "h1"));
}

static void test_rest_not_parsed(void **state)
{
	struct mfx *fx = *state;
	/* what follows the summary is never read: here it is not even JSON */
	for (int r = 0; r < 2; r++) {
		struct rk k = {.rank = r, .world = 2, .wall = S, .after = ",\"calls\":[1,2,@@@ not json"};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	assert_string_equal(fx->err, "");
	assert_int_equal(top(fx, "ranks")->n, 2);
	/* a file without a summary is reported as such */
	const char *none = "{\"format\":\"profwrap-report\",\"calls\":[]}";
	write_file(fx, "rank2.json", none, strlen(none));
	assert_int_equal(merge(fx, 0), 0);
	assert_non_null(strstr(fx->err, "rank2.json: at byte 38: no \"summary\" object; skipped"));
}

static void test_odd_values(void **state)
{
	struct mfx *fx = *state;
	/* null reads as 0 or empty; the file name's rank wins over the summary's; text stays printable */
	const char *doc = "{\"summary\":{\"rank\":7,\"host\":null,\"wall_ns\":null,\"world_size\":2,\"phases\":null,"
			  "\"collectives\":null,\"command\":\"caf\\u00e9\\n\\\"x\\\"\",\"top_calls\":null}}";
	write_file(fx, "rank0.json", doc, strlen(doc));
	struct rk k = {.rank = 1, .world = 2, .wall = S, .host = "node\\u00e9"};
	write_rank(fx, &k);
	assert_int_equal(merge(fx, 0), 0);
	assert_non_null(strstr(fx->err, "rank0.json: its summary says rank 7; read as rank 0"));
	assert_int_equal(jr_u64(jr_get(row(fx, 0), "rank")), 0);
	assert_int_equal(jr_u64(jr_get(row(fx, 0), "wall_ns")), 0);
	assert_true(jr_is(jr_get(row(fx, 0), "host"), ""));
	/* the JSON keeps the command's characters (escaped), the text makes them printable */
	assert_true(jr_is(top(fx, "command"), "caf\xc3\xa9\\u000a\\\"x\\\""));
	expect_text(fx, "Command: caf???\"x\"\n");
	expect_text(fx, "| node?? |");
}

static void test_no_reports(void **state)
{
	struct mfx *fx = *state;
	assert_int_equal(merge(fx, 0), -1);
	char want[256];
	snprintf(want, sizeof want, "no rank<R>.json report in %s", fx->dir);
	assert_string_equal(fx->msg, want);
	struct rk l = {.rank = -1, .wall = S, .name = "launcher-a.json"};
	write_rank(fx, &l);
	assert_int_equal(merge(fx, 0), -1);
	assert_string_equal(fx->msg, want);
	write_file(fx, "rank0.json", "[]", 2);
	assert_int_equal(merge(fx, 0), -1);
	snprintf(want, sizeof want, "no readable rank report in %s (1 unreadable)", fx->dir);
	assert_string_equal(fx->msg, want);
	assert_null(fx->summary);
	assert_int_equal(pw_merge("/nonexistent/pw-merge", 0, fx->msg, sizeof fx->msg), -1);
	assert_non_null(strstr(fx->msg, "/nonexistent/pw-merge"));
}

static void test_truncated_and_uneven_collectives(void **state)
{
	struct mfx *fx = *state;
	/* rank 2 has 3 entries fewer: only the indexes every rank has are compared */
	int late = 2;
	char a[8192], arr[8300];
	for (int r = 0; r < 3; r++) {
		coll_json(a, sizeof a, "mpi", r, r == 2 ? 7 : 10, last_always, &late);
		if (r == 2) /* said to be cut */
			memcpy(strstr(a, "\"truncated\":false"), "\"truncated\":true ", 17);
		snprintf(arr, sizeof arr, "[%s]", a);
		struct rk k = {.rank = r, .world = 3, .start = START + (uint64_t)r * 7, .wall = MS, .colls = arr};
		write_rank(fx, &k);
	}
	assert_int_equal(merge(fx, 0), 0);
	const struct jr *skew = jr_at(top(fx, "collective_skew"), 0);
	assert_int_equal(jr_u64(jr_get(skew, "compared")), 7);
	assert_int_equal(jr_get(skew, "truncated")->type, JR_BOOL);
	assert_int_equal(jr_get(skew, "truncated")->text[0], 't');
	assert_int_equal(jr_u64(top(fx, "straggler")), 2);
	expect_text(fx, "entries past the per-rank limit not recorded");
}

static void test_lock_serialises(void **state)
{
	struct mfx *fx = *state;
	for (int r = 0; r < 2; r++) {
		struct rk k = {.rank = r, .world = 2, .wall = S};
		write_rank(fx, &k);
	}
	/* another merge holds the lock: this one waits for it */
	char lock[256], json[256];
	snprintf(lock, sizeof lock, "%s/.profwrap-merge.lock", fx->dir);
	snprintf(json, sizeof json, "%s/summary.json", fx->dir);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char msg[512];
		_exit(pw_merge(fx->dir, 0, msg, sizeof msg) == 0 ? 0 : 1);
	}
	struct timespec pause = {0, 300 * 1000000};
	nanosleep(&pause, NULL);
	struct stat st;
	assert_int_not_equal(stat(json, &st), 0); /* not written while the lock is held */
	int status;
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
	assert_int_equal(flock(fd, LOCK_UN), 0);
	close(fd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(stat(json, &st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_median_odd_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_median_even, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_figure_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_straggler_by_collectives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_straggler_by_waiting_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_straggler_when_waiting_is_short, setup, teardown),
		cmocka_unit_test_setup_teardown(test_straggler_threshold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_straggler_threshold_two_ranks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_straggler_needs_three_collectives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_straggler_over_both_domains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_none_when_balanced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_straggler_by_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_rank, setup, teardown),
		cmocka_unit_test_setup_teardown(test_straggler_phase, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_ranks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rank_not_believable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launchers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_file_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_keys_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_not_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rest_not_parsed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_odd_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_reports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_and_uneven_collectives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_serialises, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
