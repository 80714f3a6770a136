#define _GNU_SOURCE
/* Unit tests for the GPU part of OUT/rank<R>.trace.json (collector/report/report_trace.c): each test writes the raw
 * trace of a process with GPU library calls (struct pw_rec_api) and CUPTI activity records (struct
 * pw_rec_gpu) into OUT/raw of a private output directory (monotonic clock: ticks are ns, so every time is
 * exact), runs pw_analyze and pw_write_rank_trace and reads the trace back: the GPU groups and stream tracks,
 * kernels, copies and memsets with their times (in us, as written) and arguments, the flows from the calls
 * that enqueued them (wrapped calls through EXTCORR, CUDA calls CUPTI saw), records delivered out of order,
 * the budget with a large input, and garbage. Every trace is checked against the structure Perfetto reads. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../collector/lib/rawfile.h"
#include "../../collector/report/report_trace.h"
#include "json_reader.h"
#include "out_files.h"
#include "out_fixture.h"
#include "raw_writer.h"
#include "gpu_records.h"

#define PID 100
#define TID 100        /* the main thread */
#define START 1000     /* the process's start, ns: ts 0 */
#define GPU_PID(pid, dev) (1000000000 + (pid) * 100 + (dev))
#define MAX_GPU_EVENTS 100000 /* report_trace.c's PW_TRACE_MAX_GPU_EVENTS */
#define NREC(a) (sizeof(a) / sizeof((a)[0]))

/* ---- raw traces ---- */

static struct pw_rec_gpu device_rec(int32_t device, uint64_t name_ref)
{
	return mkact(PW_EV_GPU_DEVICE, CUPTI_TID, 0, 0, device, 0, 0, 3000000000ull, name_ref);
}

/* ---- the trace ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("%s was not written: %s", path, strerror(errno));
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n + 65536 + 1 > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, 65536, f);
		n += got;
		if (!got)
			break;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* A complete event's place, for lookups. */
struct xkey {
	uint64_t pid;
	uint64_t tid;
	int64_t ts_ns;
	const struct jr *e;
};

struct trace_doc {
	char *text;
	size_t len;
	char *outer_text; /* the document with an empty traceEvents array */
	struct jr *outer;
	struct jr *ev;          /* traceEvents, each parsed on its own line */
	const struct jr *other; /* otherData */
	struct xkey *xs;        /* the complete events, sorted */
	size_t nx;
};

/* ts written as "12.345" (us, 3 decimals) -> ns. */
static int64_t ts_ns(const struct jr *v)
{
	assert_non_null(v);
	assert_int_equal(v->type, JR_NUM);
	int64_t whole = 0, frac = 0;
	size_t i = 0, digits = 0;
	for (; i < v->len && v->text[i] != '.'; i++) {
		assert_true(v->text[i] >= '0' && v->text[i] <= '9');
		whole = whole * 10 + (v->text[i] - '0');
	}
	if (i < v->len)
		i++;
	for (; i < v->len; i++, digits++) {
		assert_true(v->text[i] >= '0' && v->text[i] <= '9');
		frac = frac * 10 + (v->text[i] - '0');
	}
	assert_int_equal(digits, 3);
	return whole * 1000 + frac;
}

static int64_t text_ns(const char *ts)
{
	struct jr v = {.type = JR_NUM, .text = ts, .len = strlen(ts)};
	return ts_ns(&v);
}

static int compare_xkeys(const void *a, const void *b)
{
	const struct xkey *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct pair {
	uint64_t a, b;
};

static int compare_pairs(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->b < y->b ? -1 : x->b > y->b;
}

/* Parses the trace: each event on its line of the traceEvents array on its own (a large trace as one tree
 * would take the reader quadratic time), the rest as a document with the array empty; a small trace is also
 * parsed whole. */
static void parse_trace(struct trace_doc *d)
{
	/* Kineto's distributedInfo and deviceProperties come first, then the array */
	static const char open_tag[] = "\n  \"traceEvents\":[\n";
	const char *array = d->len > 2 && d->text[0] == '{' ? strstr(d->text, open_tag) : NULL;
	if (!array)
		fail_msg("the trace has no traceEvents array after its metadata");
	if (d->len < (8u << 20)) {
		struct jr *whole = jr_parse(d->text, d->len);
		if (!whole)
			fail_msg("rank0.trace.json is not valid JSON");
		jr_free(whole);
	}
	d->ev = calloc(1, sizeof *d->ev);
	assert_non_null(d->ev);
	d->ev->type = JR_ARR;
	size_t cap = 0, at = (size_t)(array - d->text) + sizeof open_tag - 1;
	int last = 0;
	while (at < d->len && strncmp(d->text + at, "  ]", 3) != 0) {
		assert_false(last); /* only the last event has no comma */
		const char *line = d->text + at, *nl = memchr(line, '\n', d->len - at);
		assert_non_null(nl);
		assert_true(nl - line > 5 && memcmp(line, "    {", 5) == 0);
		size_t n = (size_t)(nl - line);
		if (line[n - 1] == ',')
			n--;
		else
			last = 1;
		struct jr *e = jr_parse(line + 4, n - 4);
		if (!e)
			fail_msg("event %zu is not valid JSON: %.*s", d->ev->n, (int)(n < 300 ? n : 300), line);
		if (d->ev->n == cap) {
			cap = cap ? cap * 2 : 1024;
			d->ev->items = realloc(d->ev->items, cap * sizeof *d->ev->items);
			assert_non_null(d->ev->items);
		}
		d->ev->items[d->ev->n++] = e;
		at = (size_t)(nl - d->text) + 1;
	}
	assert_true(last || d->ev->n == 0);
	assert_true(at < d->len);
	size_t head = (size_t)(array - d->text) + sizeof open_tag - 2; /* up to and with '[' */
	d->outer_text = malloc(d->len + 1);
	assert_non_null(d->outer_text);
	memcpy(d->outer_text, d->text, head);
	memcpy(d->outer_text + head, d->text + at + 2, d->len - at - 2);
	size_t outer_len = head + d->len - at - 2;
	d->outer = jr_parse(d->outer_text, outer_len);
	if (!d->outer)
		fail_msg("the trace outside its events is not valid JSON");
	assert_int_equal(jr_get(d->outer, "traceEvents")->type, JR_ARR);
	assert_int_equal(jr_get(d->outer, "traceEvents")->n, 0);
	d->other = jr_get(d->outer, "otherData");
	assert_int_equal(d->other->type, JR_OBJ);
	assert_true(jr_is(jr_get(d->outer, "displayTimeUnit"), "ns"));
}

/* Analyses OUT, writes OUT/rank0.trace.json and reads it back (parse_trace), checking the structure
 * Perfetto and chrome://tracing read: every event an object with ph and pid (and tid but for process-wide
 * instants); complete events with name, cat, ts and dur >= 0 on a track named by thread_name metadata, in a
 * pid named by process_name metadata; every flow id once as "s" and once as "f", the "f" with "bp":"e". */
static void trace_of(struct fx *fx, struct trace_doc *d)
{
	char err[512] = "";
	if (pw_analyze(fx->dir, &fx->an, err, sizeof err) != 0)
		fail_msg("pw_analyze failed: %s", err);
	assert_true(fx->an.nranks >= 1);
	char path[256];
	snprintf(path, sizeof path, "%s/rank0.trace.json", fx->dir);
	if (pw_write_rank_trace(&fx->an, &fx->an.ranks[0], path, err, sizeof err) != 0)
		fail_msg("pw_write_rank_trace: %s", err);
	memset(d, 0, sizeof *d);
	d->text = slurp(path, &d->len);
	parse_trace(d);

	const struct jr *ev = d->ev;
	uint64_t *pids = calloc(ev->n + 1, sizeof *pids);
	struct pair *threads = calloc(ev->n + 1, sizeof *threads);
	struct pair *flows = calloc(ev->n + 1, sizeof *flows); /* id, 1 for "f" */
	d->xs = calloc(ev->n + 1, sizeof *d->xs);
	assert_true(pids && threads && flows && d->xs);
	size_t npids = 0, nthreads = 0, nflows = 0;
	for (size_t i = 0; i < ev->n; i++) {
		const struct jr *e = ev->items[i];
		assert_int_equal(e->type, JR_OBJ);
		const struct jr *ph = jr_get(e, "ph");
		assert_int_equal(ph->type, JR_STR);
		uint64_t pid = jr_u64(jr_get(e, "pid"));
		uint64_t tid = jr_is(ph, "i") ? 0 : jr_u64(jr_get(e, "tid"));
		if (jr_is(ph, "M")) {
			assert_int_equal(jr_get(jr_get(e, "args"), "name")->type, JR_STR);
			if (jr_is(jr_get(e, "name"), "process_name"))
				pids[npids++] = pid;
			else if (jr_is(jr_get(e, "name"), "thread_name"))
				threads[nthreads++] = (struct pair){pid, tid};
		} else if (jr_is(ph, "X")) {
			assert_int_equal(jr_get(e, "name")->type, JR_STR);
			assert_int_equal(jr_get(e, "cat")->type, JR_STR);
			assert_true(ts_ns(jr_get(e, "dur")) >= 0);
			d->xs[d->nx++] = (struct xkey){pid, tid, ts_ns(jr_get(e, "ts")), e};
		} else if (jr_is(ph, "s") || jr_is(ph, "f")) {
			assert_true(jr_is(jr_get(e, "name"), "ac2g") && jr_is(jr_get(e, "cat"), "ac2g"));
			ts_ns(jr_get(e, "ts"));
			if (jr_is(ph, "f"))
				assert_true(jr_is(jr_get(e, "bp"), "e"));
			flows[nflows++] = (struct pair){jr_u64(jr_get(e, "id")), jr_is(ph, "f")};
		} else {
			assert_true(jr_is(ph, "i"));
		}
	}
	qsort(pids, npids, sizeof *pids, compare_u64);
	qsort(threads, nthreads, sizeof *threads, compare_pairs);
	qsort(flows, nflows, sizeof *flows, compare_pairs);
	qsort(d->xs, d->nx, sizeof *d->xs, compare_xkeys);
	for (size_t i = 0; i < d->nx; i++) {
		struct pair th = {d->xs[i].pid, d->xs[i].tid};
		if (!bsearch(&d->xs[i].pid, pids, npids, sizeof *pids, compare_u64) ||
		    !bsearch(&th, threads, nthreads, sizeof *threads, compare_pairs))
			fail_msg("X event on pid %" PRIu64 " tid %" PRIu64 " without process_name/thread_name", th.a,
				 th.b);
	}
	assert_true(nflows % 2 == 0);
	for (size_t i = 0; i < nflows; i += 2) {
		if (flows[i].a != flows[i + 1].a || flows[i].b != 0 || flows[i + 1].b != 1)
			fail_msg("flow id %" PRIu64 " is not one start and one end", flows[i].a);
		if (i + 2 < nflows && flows[i + 2].a == flows[i].a)
			fail_msg("flow id %" PRIu64 " used twice", flows[i].a);
	}
	free(pids);
	free(threads);
	free(flows);
}

static void trace_free(struct trace_doc *d)
{
	jr_free(d->ev);
	jr_free(d->outer);
	free(d->outer_text);
	free(d->text);
	free(d->xs);
}

static uint64_t other_u64(const struct trace_doc *d, const char *key)
{
	return jr_u64(jr_get(d->other, key));
}

/* Whether the number v is written as text (ts and dur: us with 3 decimals). */
static int num_is(const struct jr *v, const char *text)
{
	return v && v->type == JR_NUM && v->len == strlen(text) && memcmp(v->text, text, v->len) == 0;
}

static int is_ph(const struct jr *e, const char *ph)
{
	return jr_is(jr_get(e, "ph"), ph);
}

/* The complete event on (pid, tid) starting at ts_ns, or NULL. */
static const struct jr *x_at_ns(const struct trace_doc *d, uint64_t pid, uint64_t tid, int64_t ns)
{
	struct xkey k = {pid, tid, ns, NULL};
	const struct xkey *x = bsearch(&k, d->xs, d->nx, sizeof *d->xs, compare_xkeys);
	return x ? x->e : NULL;
}

/* The event with phase ph on (pid, tid) at ts, or NULL. */
static const struct jr *event_at(const struct trace_doc *d, const char *ph, uint64_t pid, uint64_t tid,
				 const char *ts)
{
	if (strcmp(ph, "X") == 0)
		return x_at_ns(d, pid, tid, text_ns(ts));
	for (size_t i = 0; i < d->ev->n; i++) {
		const struct jr *e = d->ev->items[i];
		if (is_ph(e, ph) && jr_u64(jr_get(e, "pid")) == pid && jr_u64(jr_get(e, "tid")) == tid &&
		    num_is(jr_get(e, "ts"), ts))
			return e;
	}
	return NULL;
}

/* The name given by the metadata event what ("process_name", "thread_name") of (pid, tid; UINT64_MAX: any),
 * or NULL. */
static const struct jr *meta_name(const struct trace_doc *d, const char *what, uint64_t pid, uint64_t tid)
{
	for (size_t i = 0; i < d->ev->n; i++) {
		const struct jr *e = d->ev->items[i];
		if (is_ph(e, "M") && jr_is(jr_get(e, "name"), what) && jr_u64(jr_get(e, "pid")) == pid &&
		    (tid == UINT64_MAX || jr_u64(jr_get(e, "tid")) == tid))
			return jr_get(jr_get(e, "args"), "name");
	}
	return NULL;
}

static size_t count_ph(const struct trace_doc *d, const char *ph, const char *cat)
{
	size_t n = 0;
	for (size_t i = 0; i < d->ev->n; i++) {
		const struct jr *e = d->ev->items[i];
		if (is_ph(e, ph) && (!cat || jr_is(jr_get(e, "cat"), cat)))
			n++;
	}
	return n;
}

/* The CUPTI API slices: CUDA calls that CUPTI saw and no wrapped call stands for (their args have a cbid). */
static size_t count_api_slices(const struct trace_doc *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->ev->n; i++) {
		const struct jr *e = d->ev->items[i];
		if (is_ph(e, "X") && jr_has(e, "args") && jr_has(jr_get(e, "args"), "cbid"))
			n++;
	}
	return n;
}

/* The flow that ends on (gpid, stream) at ts: asserts it starts on (pid, tid) at start_ts with the same id. */
static void assert_flow(const struct trace_doc *d, uint64_t pid, uint64_t tid, const char *start_ts, uint64_t gpid,
			uint64_t stream, const char *ts)
{
	const struct jr *f = event_at(d, "f", gpid, stream, ts);
	if (!f)
		fail_msg("no flow end on %" PRIu64 "/%" PRIu64 " at %s", gpid, stream, ts);
	assert_true(jr_is(jr_get(f, "bp"), "e"));
	const struct jr *s = event_at(d, "s", pid, tid, start_ts);
	if (!s)
		fail_msg("no flow start on %" PRIu64 "/%" PRIu64 " at %s", pid, tid, start_ts);
	assert_int_equal(jr_u64(jr_get(s, "id")), jr_u64(jr_get(f, "id")));
}

/* ---- tests ---- */

/* A launch and a copy linked to their wrapped calls, an unlinked memset: the GPU group and its stream track,
 * the events' times, names and arguments, the flows. */
static void test_tracks_events_flows(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	put_string(fd, 8, "_Z6kernelPfi");
	put_string(fd, 16, "NVIDIA H100 80GB HBM3");
	struct pw_rec_api calls[2];
	calls[0] = launch(TID, 2000, 2500, 7, 8);
	calls[1] = mkapi(PW_EV_CUDA_MEMCPY_ASYNC, TID, 6000, 6100, 0, 4000, 0, 0);
	calls[1].sub = PW_COPY_HTOD | PW_API_ASYNC;
	calls[1].corr = 8;
	put_api_records(fd, calls, NREC(calls));
	struct pw_rec_gpu act[6];
	act[0] = device_rec(0, 16);
	act[1] = extcorr(50, 7);
	act[2] = kernel(3000, 5500, 0, 7, 50, 8);
	act[3] = extcorr(51, 8);
	act[4] = mkact(PW_EV_GPU_MEMCPY, CUPTI_TID, 7000, 9000, 0, 7, 51, 4000,
		       PW_COPY_HTOD | PW_ACT_MEM_PINNED << 8 | PW_ACT_MEM_DEVICE << 16);
	act[5] = mkact(PW_EV_GPU_MEMSET, CUPTI_TID, 10000, 10500, 0, 7, 52, 1000,
		       0xab | (uint64_t)PW_ACT_MEM_DEVICE << 32);
	put_act_records(fd, act, NREC(act));
	fx_raw_end(fd, 20000);

	struct trace_doc d;
	trace_of(fx, &d);
	const uint64_t gpid = GPU_PID(PID, 0);
	assert_true(jr_is(meta_name(&d, "process_name", gpid, UINT64_MAX), "GPU 0 NVIDIA H100 80GB HBM3 (pid 100)"));
	assert_true(jr_is(meta_name(&d, "thread_name", gpid, 7), "stream 7"));

	const struct jr *k = event_at(&d, "X", gpid, 7, "2.000");
	assert_non_null(k);
	assert_true(jr_is(jr_get(k, "name"), "kernel(float*, int)")); /* demangled, as Kineto writes it */
	assert_true(jr_is(jr_get(k, "cat"), "kernel"));
	assert_true(num_is(jr_get(k, "dur"), "2.500"));
	const struct jr *a = jr_get(k, "args");
	assert_true(jr_is(jr_get(a, "grid"), "128x2x1"));
	assert_true(jr_is(jr_get(a, "block"), "256x1x1"));
	assert_int_equal(jr_u64(jr_get(a, "registers")), 32);
	assert_int_equal(jr_u64(jr_get(a, "shared_bytes")), 1024);
	assert_int_equal(jr_u64(jr_get(a, "correlation")), 50);
	assert_int_equal(jr_u64(jr_get(a, "external_id")), 7);
	assert_int_equal(jr_u64(jr_get(a, "device")), 0);
	assert_int_equal(jr_u64(jr_get(a, "stream")), 7);

	const struct jr *m = event_at(&d, "X", gpid, 7, "6.000");
	assert_non_null(m);
	assert_true(jr_is(jr_get(m, "name"), "memcpy HtoD"));
	assert_true(jr_is(jr_get(m, "cat"), "gpu_memcpy"));
	assert_true(num_is(jr_get(m, "dur"), "2.000"));
	a = jr_get(m, "args");
	assert_int_equal(jr_u64(jr_get(a, "bytes")), 4000);
	assert_true(jr_is(jr_get(a, "kind"), "HtoD"));
	assert_true(jr_is(jr_get(a, "src_memory"), "pinned"));
	assert_true(jr_is(jr_get(a, "dst_memory"), "device"));
	assert_true(num_is(jr_get(a, "GB/s"), "2.00"));
	assert_int_equal(jr_u64(jr_get(a, "external_id")), 8);

	const struct jr *s = event_at(&d, "X", gpid, 7, "9.000");
	assert_non_null(s);
	assert_true(jr_is(jr_get(s, "name"), "memset"));
	assert_true(jr_is(jr_get(s, "cat"), "gpu_memset"));
	a = jr_get(s, "args");
	assert_true(jr_is(jr_get(a, "memory"), "device"));
	assert_int_equal(jr_u64(jr_get(a, "bytes")), 1000);
	assert_true(num_is(jr_get(a, "GB/s"), "2.00"));
	assert_false(jr_has(a, "external_id"));

	/* launch -> kernel, copy call -> copy; the memset has none */
	assert_flow(&d, PID, TID, "1.000", gpid, 7, "2.000");
	assert_flow(&d, PID, TID, "5.000", gpid, 7, "6.000");
	assert_null(event_at(&d, "f", gpid, 7, "9.000"));
	assert_int_equal(count_ph(&d, "s", NULL), 2);
	assert_int_equal(other_u64(&d, "flows"), 2);

	/* the calls stay on their thread, nothing is drawn on the thread that delivered the activity */
	assert_non_null(event_at(&d, "X", PID, TID, "1.000"));
	for (size_t i = 0; i < d.ev->n; i++)
		assert_true(jr_u64(jr_get(d.ev->items[i], "tid")) != CUPTI_TID);
	assert_int_equal(other_u64(&d, "kept_events"), 2);
	assert_int_equal(other_u64(&d, "folded_events"), 0);
	assert_int_equal(other_u64(&d, "gpu_records"), 6);
	assert_int_equal(other_u64(&d, "gpu_kept_events"), 3);
	assert_int_equal(other_u64(&d, "gpu_folded_events"), 0);
	assert_int_equal(other_u64(&d, "gpu_threshold_ns"), 0);
	assert_int_equal(other_u64(&d, "gpu_unplaced_events"), 0);
	trace_free(&d);
}

/* Kernels a library launched through the driver: only CUPTI's record of the call links them. A call on a
 * thread with no wrapped call over it becomes a slice of that thread; one inside a written wrapped call
 * (cublasSgemm without an external id) starts its flow inside that call, with no slice of its own. */
static void test_library_launch(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	put_string(fd, 8, "sm90_xmma_gemm");
	struct pw_rec_api gemm = mkapi(PW_EV_CUBLAS_SGEMM, TID, 6000, 9000, 0, 0, 0, 0);
	put_api_records(fd, &gemm, 1);
	struct pw_rec_gpu act[4];
	act[0] = cupti_api(101, 2000, 2300, 60, 307, 1);
	act[1] = kernel(4000, 5000, 1, 3, 60, 8);
	act[2] = cupti_api(TID, 7000, 7200, 61, 307, 1);
	act[3] = kernel(8000, 8500, 1, 3, 61, 8);
	put_act_records(fd, act, NREC(act));
	fx_raw_end(fd, 20000);

	struct trace_doc d;
	trace_of(fx, &d);
	const uint64_t gpid = GPU_PID(PID, 1);
	assert_true(jr_is(meta_name(&d, "process_name", gpid, UINT64_MAX), "GPU 1 (pid 100)"));
	const struct jr *api = event_at(&d, "X", PID, 101, "1.000");
	assert_non_null(api);
	assert_true(jr_is(jr_get(api, "name"), "cuLaunchKernel"));
	assert_true(num_is(jr_get(api, "dur"), "0.300"));
	assert_true(jr_is(jr_get(jr_get(api, "args"), "api"), "driver"));
	assert_int_equal(jr_u64(jr_get(jr_get(api, "args"), "correlation")), 60);
	assert_non_null(meta_name(&d, "thread_name", PID, 101));
	assert_flow(&d, PID, 101, "1.000", gpid, 3, "3.000");

	/* inside the written cublasSgemm: no slice of its own, the flow starts in the gemm */
	assert_null(event_at(&d, "X", PID, TID, "6.000"));
	assert_non_null(event_at(&d, "X", PID, TID, "5.000"));
	assert_flow(&d, PID, TID, "6.000", gpid, 3, "7.000");
	assert_int_equal(count_api_slices(&d), 1);
	assert_int_equal(other_u64(&d, "cupti_api_slices"), 1);
	assert_int_equal(other_u64(&d, "flows"), 2);
	/* the kernels carry no external id */
	assert_false(jr_has(jr_get(event_at(&d, "X", gpid, 3, "3.000"), "args"), "external_id"));
	trace_free(&d);
}

/* Activity delivered before the calls that enqueued it, EXTCORR before and after its kernel, kernels out of
 * time order, two threads: every kernel still finds its launch. A wrapped launch wins over CUPTI's record of
 * the same call. */
static void test_out_of_order(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	put_string(fd, 8, "k");
	struct pw_rec_gpu early[5];
	early[0] = kernel(30000, 31000, 0, 13, 72, 8); /* launched at 20000 by thread 102 */
	early[1] = kernel(12000, 13000, 0, 7, 71, 8);  /* launched at 3000 by thread 100 */
	early[2] = extcorr(72, 302);
	early[3] = cupti_api(TID, 3000, 3400, 71, 211, 0);
	early[4] = kernel(40000, 41000, 0, 7, 73, 8); /* launched at 35000 by thread 100 */
	put_act_records(fd, early, NREC(early));
	struct pw_rec_api calls[3] = {launch(TID, 3000, 3500, 301, 8), launch(102, 20000, 20400, 302, 8),
				      launch(TID, 35000, 35200, 303, 8)};
	put_api_records(fd, calls, NREC(calls));
	struct pw_rec_gpu late[2] = {extcorr(71, 301), extcorr(73, 303)};
	put_act_records(fd, late, NREC(late));
	fx_raw_end(fd, 50000);

	struct trace_doc d;
	trace_of(fx, &d);
	const uint64_t gpid = GPU_PID(PID, 0);
	assert_flow(&d, PID, TID, "2.000", gpid, 7, "11.000");
	assert_flow(&d, PID, 102, "19.000", gpid, 13, "29.000");
	assert_flow(&d, PID, TID, "34.000", gpid, 7, "39.000");
	assert_int_equal(other_u64(&d, "flows"), 3);
	assert_int_equal(count_api_slices(&d), 0);
	assert_true(jr_is(meta_name(&d, "thread_name", gpid, 13), "stream 13"));
	/* flow ids are distinct */
	uint64_t ids[3];
	size_t n = 0;
	for (size_t i = 0; i < d.ev->n; i++)
		if (is_ph(d.ev->items[i], "s"))
			ids[n++] = jr_u64(jr_get(d.ev->items[i], "id"));
	assert_int_equal(n, 3);
	assert_true(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
	trace_free(&d);
}

/* No flow where nothing written enqueued the work: no correlation id, an external id no call of this process
 * carries (another process's call has it), an EXTCORR to nothing and no CUPTI record. */
static void test_unlinked(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 200, 0, START, "train", 5);
	struct pw_rec_api other = launch(200, 2000, 2100, 900, 0);
	put_api_records(fd, &other, 1);
	fx_raw_end(fd, 30000);

	fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	struct pw_rec_api call = launch(TID, 2000, 2100, 0, 0); /* no external id */
	put_api_records(fd, &call, 1);
	struct pw_rec_gpu act[5];
	act[0] = kernel(5000, 6000, 0, 7, 0, 0);  /* no correlation id */
	act[1] = kernel(7000, 8000, 0, 7, 81, 0); /* external id of another process's call */
	act[2] = extcorr(81, 900);
	act[3] = kernel(9000, 9500, 0, 7, 82, 0); /* EXTCORR to no call */
	act[4] = extcorr(82, 901);
	put_act_records(fd, act, NREC(act));
	fx_raw_end(fd, 30000);

	struct trace_doc d;
	trace_of(fx, &d);
	assert_int_equal(count_ph(&d, "X", "kernel"), 3);
	assert_int_equal(count_ph(&d, "s", NULL), 0);
	assert_int_equal(count_ph(&d, "f", NULL), 0);
	assert_int_equal(other_u64(&d, "flows"), 0);
	const struct jr *k = event_at(&d, "X", GPU_PID(PID, 0), 7, "6.000");
	assert_non_null(k);
	assert_true(jr_is(jr_get(k, "name"), "kernel (name unknown)"));
	assert_int_equal(jr_u64(jr_get(jr_get(k, "args"), "external_id")), 900);
	/* the other process has no GPU group */
	assert_null(meta_name(&d, "process_name", GPU_PID(200, 0), UINT64_MAX));
	trace_free(&d);
}

/* An NVTX push (level) or pop record on the main thread; name_ref 0 for a pop. */
static void put_range(int fd, uint16_t type, uint64_t t, int32_t level, uint64_t name_ref)
{
	struct pw_rec_range rr;
	memset(&rr, 0, sizeof rr);
	rr.c = mkrec(type, TID, t, t, level, 0, name_ref, 0);
	rr.c.h.size8 = sizeof rr / 8;
	put_chunk(fd, PW_CHUNK_RECORDS, &rr, sizeof rr, NULL, 0);
}

/* --step-range: each occurrence of the step range is ProfilerStep#N (its name in args.range), other ranges keep
 * theirs; and every range that launched GPU work has, per stream that ran it, a gpu_user_annotation from the
 * work's first start to its last end (Kineto's), none for work launched outside it. */
static void test_steps_and_gpu_annotations(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	put_string(fd, 8, "k");
	put_string(fd, 24, "step");
	put_string(fd, 32, "other");
	struct pw_rec_call steps = mkrec(PW_EV_CAPTURE_START, TID, 1000, 1000, -1, PW_CAPTURE_STEPS, 24, 0);
	put_records(fd, &steps, 1);
	put_range(fd, PW_EV_NVTX_PUSH, 2000, 0, 24);
	put_range(fd, PW_EV_NVTX_POP, 2500, 0, 0);
	put_range(fd, PW_EV_NVTX_PUSH, 6000, 0, 24);
	put_range(fd, PW_EV_NVTX_POP, 6500, 0, 0);
	put_range(fd, PW_EV_NVTX_PUSH, 10000, 0, 32);
	put_range(fd, PW_EV_NVTX_POP, 10100, 0, 0);
	struct pw_rec_api calls[] = {launch(TID, 2100, 2200, 7, 8), launch(TID, 2300, 2400, 8, 8),
				     launch(TID, 6100, 6200, 9, 8), launch(TID, 9000, 9100, 10, 8)};
	put_api_records(fd, calls, NREC(calls));
	struct pw_rec_gpu act[] = {extcorr(50, 7), kernel(3000, 5000, 0, 7, 50, 8), extcorr(51, 8),
				   kernel(3500, 4000, 0, 9, 51, 8), extcorr(52, 9), kernel(7000, 8000, 0, 7, 52, 8),
				   extcorr(53, 10), kernel(9500, 9900, 0, 7, 53, 8)};
	put_act_records(fd, act, NREC(act));
	fx_raw_end(fd, 20000);

	struct trace_doc d;
	trace_of(fx, &d);
	const struct jr *s0 = event_at(&d, "X", PID, TID, "1.000");
	assert_non_null(s0);
	assert_true(jr_is(jr_get(s0, "name"), "ProfilerStep#0"));
	assert_true(jr_is(jr_get(s0, "cat"), "user_annotation"));
	assert_true(jr_is(jr_get(jr_get(s0, "args"), "range"), "step"));
	const struct jr *s1 = event_at(&d, "X", PID, TID, "5.000");
	assert_non_null(s1);
	assert_true(jr_is(jr_get(s1, "name"), "ProfilerStep#1"));
	const struct jr *o = event_at(&d, "X", PID, TID, "9.000");
	assert_non_null(o);
	assert_true(jr_is(jr_get(o, "name"), "other"));

	const uint64_t gpid = GPU_PID(PID, 0);
	static const struct {
		const char *name;
		uint64_t stream;
		const char *ts, *dur;
	} want[] = {{"ProfilerStep#0", 7, "2.000", "2.000"}, {"ProfilerStep#0", 9, "2.500", "0.500"},
		    {"ProfilerStep#1", 7, "6.000", "1.000"}};
	size_t found = 0;
	for (size_t i = 0; i < d.ev->n; i++) {
		const struct jr *e = d.ev->items[i];
		if (!jr_has(e, "cat") || !jr_is(jr_get(e, "cat"), "gpu_user_annotation"))
			continue;
		assert_int_equal(jr_u64(jr_get(e, "pid")), gpid);
		size_t k = 0;
		while (k < NREC(want) && !(jr_is(jr_get(e, "name"), want[k].name) &&
					   jr_u64(jr_get(e, "tid")) == want[k].stream && num_is(jr_get(e, "ts"), want[k].ts)))
			k++;
		assert_true(k < NREC(want));
		assert_true(num_is(jr_get(e, "dur"), want[k].dur));
		found++;
	}
	assert_int_equal(found, NREC(want));
	trace_free(&d);
}

/* More kernels than the budget: at most MAX_GPU_EVENTS written, the longest all in, kept + folded = all, the
 * folded ones counted on their stream's folded slice, and every flow between written events. */
static void test_bound(void **state)
{
	struct fx *fx = *state;
	enum { N = 150000, LONG_EVERY = 1000, LAUNCH_EVERY = 7, CHUNK = 4096 };
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	put_string(fd, 8, "_Z3fooPf");
	struct pw_rec_gpu *act = calloc(CHUNK, sizeof *act);
	struct pw_rec_api *calls = calloc(CHUNK, sizeof *calls);
	assert_non_null(act);
	assert_non_null(calls);
	size_t na = 0, nc = 0;
	uint64_t t = 10000;
	for (uint32_t i = 1; i <= N; i++) {
		/* durations 100..1099 ns, every LONG_EVERY-th 50 us */
		uint64_t dur = i % LONG_EVERY == 0 ? 50000 : 100 + (i * 7919u) % 1000;
		act[na++] = kernel(t + 500, t + 500 + dur, 0, 1 + i % 4, i, 8);
		if (i % LAUNCH_EVERY == 0) {
			calls[nc++] = launch(TID, t, t + 300 + i % 200, 100000 + i, 8);
			act[na++] = extcorr(i, 100000 + i);
		}
		t += 500 + dur + 10;
		if (na + 2 > CHUNK) {
			put_act_records(fd, act, na);
			na = 0;
		}
		if (nc + 1 > CHUNK) {
			put_api_records(fd, calls, nc);
			nc = 0;
		}
	}
	put_act_records(fd, act, na);
	put_api_records(fd, calls, nc);
	free(act);
	free(calls);
	fx_raw_end(fd, t + 1000);

	struct trace_doc d;
	trace_of(fx, &d);
	uint64_t kept = other_u64(&d, "gpu_kept_events"), folded = other_u64(&d, "gpu_folded_events");
	assert_true(kept <= MAX_GPU_EVENTS);
	assert_true(kept >= MAX_GPU_EVENTS / 2);
	assert_int_equal(kept + folded, N);
	assert_int_equal(count_ph(&d, "X", "kernel"), kept);
	assert_true(other_u64(&d, "gpu_threshold_ns") > 0);
	assert_int_equal(other_u64(&d, "gpu_max_events"), MAX_GPU_EVENTS);

	uint64_t folded_sum = 0, long_kernels = 0;
	const uint64_t gpid = GPU_PID(PID, 0);
	for (size_t i = 0; i < d.ev->n; i++) {
		const struct jr *e = d.ev->items[i];
		if (!is_ph(e, "X") || jr_u64(jr_get(e, "pid")) != gpid)
			continue;
		if (jr_is(jr_get(e, "cat"), "gpu")) {
			assert_true(strncmp(jr_get(e, "name")->text, "folded: ", 8) == 0);
			folded_sum += jr_u64(jr_get(jr_get(e, "args"), "count"));
		} else if (num_is(jr_get(e, "dur"), "50.000")) {
			long_kernels++;
		}
	}
	assert_int_equal(folded_sum, folded);
	assert_int_equal(long_kernels, N / LONG_EVERY);

	/* every flow ends where a written kernel starts and starts where a written launch starts */
	size_t flows = 0;
	for (size_t i = 0; i < d.ev->n; i++) {
		const struct jr *e = d.ev->items[i];
		if (is_ph(e, "f")) {
			const struct jr *k = x_at_ns(&d, gpid, jr_u64(jr_get(e, "tid")), ts_ns(jr_get(e, "ts")));
			assert_non_null(k);
			assert_true(jr_is(jr_get(k, "cat"), "kernel"));
			flows++;
		} else if (is_ph(e, "s")) {
			const struct jr *l = x_at_ns(&d, PID, TID, ts_ns(jr_get(e, "ts")));
			assert_non_null(l);
			assert_true(jr_is(jr_get(l, "name"), "cudaLaunchKernel"));
			assert_true(jr_is(jr_get(jr_get(l, "args"), "kernel"), "foo(float*)")); /* demangled */
		}
	}
	assert_true(flows > 0);
	assert_int_equal(flows, other_u64(&d, "flows"));
	assert_int_equal(other_u64(&d, "kept_events"), N / LAUNCH_EVERY);
	trace_free(&d);
}

/* Long kernel names fill the byte budget before the event budget: fewer events are kept, the file stays
 * small, the names are whole. */
static void test_bound_bytes(void **state)
{
	struct fx *fx = *state;
	enum { N = 30000, NAME = 3000 };
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	char *name = malloc(NAME + 1);
	assert_non_null(name);
	memcpy(name, "_ZN7cutlass", 11);
	memset(name + 11, 'x', NAME - 11);
	name[NAME] = 0;
	put_string(fd, 8, name);
	struct pw_rec_gpu *act = calloc(N, sizeof *act);
	assert_non_null(act);
	for (uint32_t i = 0; i < N; i++)
		act[i] = kernel(10000 + (uint64_t)i * 2000, 10000 + (uint64_t)i * 2000 + 100 + i % 900, 0, 7, i + 1, 8);
	put_act_records(fd, act, N);
	free(act);
	fx_raw_end(fd, 10000 + (uint64_t)N * 2000 + 1000);

	struct trace_doc d;
	trace_of(fx, &d);
	uint64_t kept = other_u64(&d, "gpu_kept_events");
	assert_true(kept < N / 2);
	assert_true(kept > 1000);
	assert_int_equal(kept + other_u64(&d, "gpu_folded_events"), N);
	assert_true(d.len < (size_t)other_u64(&d, "gpu_max_bytes") + (1u << 20));
	for (size_t i = 0; i < d.ev->n; i++) {
		const struct jr *e = d.ev->items[i];
		if (is_ph(e, "X") && jr_is(jr_get(e, "cat"), "kernel")) {
			assert_true(jr_is(jr_get(e, "name"), name));
			break;
		}
	}
	free(name);
	trace_free(&d);
}

/* Garbage activity: devices out of range, impossible times, string references to nothing, unknown copy
 * kinds, hostile names, CUPTI records with no thread: valid JSON, nothing placed where it cannot be. */
static void test_garbage(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	put_string(fd, 8, "bad \"name\"\n\xff\xfe end");
	put_string(fd, 16, "GPU of device 999");
	struct pw_rec_api call = launch(TID, 2000, 2100, 5, 77777); /* name ref to nothing */
	put_api_records(fd, &call, 1);
	struct pw_rec_gpu act[16];
	size_t n = 0;
	act[n++] = device_rec(999, 16);
	act[n++] = device_rec(-1, 16);
	act[n++] = kernel(3000, 4000, -5, 7, 90, 8);                       /* device -5: GPU ? */
	act[n++] = kernel(5000, 6000, 1000000, UINT32_MAX, 91, 12345);     /* device 1e6, unknown name */
	act[n++] = kernel(8000, 7000, 0, 7, 92, 8);                        /* t1 < t0 */
	act[n++] = kernel(0, 0, 0, 7, 93, 8);                              /* no times */
	act[n++] = kernel(500, 900, 0, 7, 94, 8);                          /* before the process started */
	act[n++] = mkact(PW_EV_GPU_MEMCPY, CUPTI_TID, 9000, 9000, 0, 7, 95, 1 << 20, 200 | 255 << 8 | 250 << 16);
	act[n++] = extcorr(0, 5);                                          /* correlation 0 */
	act[n++] = extcorr(90, 0);                                         /* external id 0 */
	act[n++] = cupti_api(0, 3000, 3100, 90, 9999, 1);                  /* no thread */
	act[n++] = cupti_api(TID, 3000, 2000, 91, 211, 0);                 /* t1 < t0 */
	act[n++] = mkact(PW_EV_GPU_DROPPED, CUPTI_TID, 9500, 9500, -1, 0, 0, 12, 3);
	act[n++] = mkact(PW_EV_GPU_OVERHEAD, CUPTI_TID, 9600, 9700, -1, 0, 0, 1, 1);
	act[n++] = mkact(PW_EV_GPU_STATUS, CUPTI_TID, 9800, 9800, -1, 0, 0, PW_ACT_RECORDING, 424242);
	put_act_records(fd, act, n);
	/* a record too short for its type is refused by the reader */
	struct pw_rec_call shortrec = mkrec(PW_EV_GPU_KERNEL, CUPTI_TID, 3000, 4000, 0, 0, 8, 0);
	put_records(fd, &shortrec, 1);
	fx_raw_end(fd, 20000);

	struct trace_doc d;
	trace_of(fx, &d);
	const uint64_t unknown = GPU_PID(PID, 99);
	assert_true(jr_is(meta_name(&d, "process_name", unknown, UINT64_MAX), "GPU ? (pid 100)"));
	const struct jr *k = event_at(&d, "X", unknown, 7, "2.000");
	assert_non_null(k);
	assert_int_equal(jr_i64(jr_get(jr_get(k, "args"), "device")), -5);
	k = event_at(&d, "X", unknown, UINT32_MAX, "4.000");
	assert_non_null(k);
	assert_true(jr_is(jr_get(k, "name"), "kernel (name unknown)"));
	const struct jr *m = event_at(&d, "X", GPU_PID(PID, 0), 7, "8.000");
	assert_non_null(m);
	assert_true(jr_is(jr_get(m, "name"), "memcpy unknown"));
	assert_true(jr_is(jr_get(jr_get(m, "args"), "src_memory"), "unknown"));
	assert_false(jr_has(jr_get(m, "args"), "GB/s"));
	assert_int_equal(other_u64(&d, "gpu_kept_events"), 3);
	assert_int_equal(other_u64(&d, "gpu_unplaced_events"), 3);
	assert_int_equal(other_u64(&d, "gpu_activity_dropped"), 12);
	assert_int_equal(count_api_slices(&d), 0);
	assert_int_equal(count_ph(&d, "s", NULL), 0);
	assert_int_equal(other_u64(&d, "flows"), 0);
	trace_free(&d);
}

/* A rank without GPU activity has no GPU group and the same calls as before. */
static void test_no_activity(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	struct pw_rec_call io[2] = {mkrec(PW_EV_READ, TID, 1100, 1200, 5, 0, 5, 0),
				    mkrec(PW_EV_WRITE, TID, 1300, 1500, 5, 1, 5, 0)};
	put_records(fd, io, NREC(io));
	fx_raw_end(fd, 2000);
	struct trace_doc d;
	trace_of(fx, &d);
	assert_int_equal(other_u64(&d, "kept_events"), 2);
	assert_int_equal(other_u64(&d, "gpu_records"), 0);
	assert_int_equal(other_u64(&d, "gpu_kept_events"), 0);
	for (size_t i = 0; i < d.ev->n; i++)
		assert_true(jr_u64(jr_get(d.ev->items[i], "pid")) == PID);
	trace_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tracks_events_flows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_library_launch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlinked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_activity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_steps_and_gpu_annotations, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
