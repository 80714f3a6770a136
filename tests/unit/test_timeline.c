#define _GNU_SOURCE
/* Unit tests for the rank's bounded timeline (collector/model/timeline.c), driven directly with records built in
 * memory the way analysis.c drives it: pw_tl_image when a raw file starts, pw_tl_call per counted call (with the
 * model's file or PW_TL_NONE), pw_tl_gpu, pw_tl_range, pw_tl_sample, pw_tl_image_end.
 *
 * Every figure is checked exactly. Under budget: every call kept, in order, with its fields, and the per-thread
 * counts. Over budget (calls, GPU events by count and by bytes): the test generates a known duration mix, works
 * out each event's duration bucket and its order of arrival in that bucket itself, and checks that what is kept
 * is exactly what the module's final rule (floor, stride) keeps of the whole input, that the rule only tightened
 * (at every change the kept set is exactly the new rule's share of the input so far, so nothing dropped comes
 * back), that the rule is the loosest one that fits (the one before it keeps more than the budget), that every
 * long event is kept, and the counts per thread or stream of every event. Then the strings (interning, the cut
 * path's end behind "...", kernel and launch names cut at their limits on a UTF-8 boundary), NVTX (push/pop as
 * one 'X', start/end by id as 'b'/'e', marks, the caps), samples, device names and the launchers
 * pw_tl_image_end resolves. The over-budget tests feed up to 900,000 events: about a second in all.
 *
 * Three tests show defects of timeline.c (they fail until it is fixed): the GPU bytes budget exceeded when the
 * sampled events' names are longer than their bucket's average (test_gpu_bytes_budget_alternating_names), a
 * pop whose push found no room closing the thread's outer push (test_nvtx_open_pushes_full), and a start
 * that found no room drawn as a 'b' that never gets its 'e' (test_nvtx_open_starts_full). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../collector/lib/rawfile.h"
#include "../../collector/model/gpu_activity.h"
#include "../../collector/model/timeline.h"
#include "../../common/pw_record.h"

#define START_NS 1000000ull /* the images' start */
#define STR_REF 16          /* any non-zero string reference: the reader resolved it into e->str */

/* ---- fixture: the timeline and the test's own buffers, freed even when an assertion fails ---- */

struct tfx {
	struct pw_timeline *tl;
	void *mem[4];
};

static int setup(void **state)
{
	struct tfx *x = calloc(1, sizeof *x);
	if (!x || !(x->tl = pw_tl_new(NULL))) {
		free(x);
		return -1;
	}
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct tfx *x = *state;
	pw_tl_free(x->tl);
	for (size_t i = 0; i < sizeof x->mem / sizeof x->mem[0]; i++)
		free(x->mem[i]);
	free(x);
	return 0;
}

static void *fx_alloc(struct tfx *x, size_t slot, size_t size)
{
	assert_true(slot < sizeof x->mem / sizeof x->mem[0]);
	assert_null(x->mem[slot]);
	x->mem[slot] = calloc(1, size);
	assert_non_null(x->mem[slot]);
	return x->mem[slot];
}

/* ---- records as the reader hands them over ---- */

struct cspec {
	uint16_t type;
	uint8_t err;
	uint32_t tid;
	uint64_t t0, t1;
	int64_t ret;
	uint64_t arg0, arg1, stack_ref;
	const char *str;
	size_t str_len;
	uint32_t file;
};

static void feed_call(struct pw_timeline *tl, const struct cspec *s)
{
	struct pw_rec_call r = {.h = {.type = s->type, .size8 = sizeof r / 8, .err = s->err, .tid = s->tid},
				.t0 = s->t0, .t1 = s->t1, .ret = s->ret, .arg0 = s->arg0, .arg1 = s->arg1};
	struct pw_raw_event e = {.rec = &r, .t0_ns = s->t0, .t1_ns = s->t1, .str = s->str,
				 .str_len = (uint32_t)s->str_len, .stack_ref = s->stack_ref};
	pw_tl_call(tl, &e, s->file);
}

/* A GPU library call (struct pw_rec_api). */
static void feed_api(struct pw_timeline *tl, uint16_t type, uint32_t tid, uint64_t t0, uint64_t t1, uint64_t arg0,
		     uint64_t stream, int32_t device, uint64_t corr, const char *str)
{
	struct pw_rec_api a = {.c = {.h = {.type = type, .size8 = sizeof a / 8, .tid = tid}, .t0 = t0, .t1 = t1,
				     .arg0 = arg0, .arg1 = str ? STR_REF : 0},
			       .stream = stream, .device = device, .sub = 0x100, .a = {11, 22, 33, 44}, .corr = corr};
	struct pw_raw_event e = {.rec = &a.c, .t0_ns = t0, .t1_ns = t1, .str = str,
				 .str_len = str ? (uint32_t)strlen(str) : 0};
	pw_tl_call(tl, &e, PW_TL_NONE);
}

/* An activity record (struct pw_rec_gpu); name: a kernel's (or a device's) name, name_len bytes. */
static void feed_gpu(struct pw_timeline *tl, uint16_t type, int32_t device, uint32_t stream, uint64_t t0,
		     uint64_t t1, uint32_t corr, uint64_t arg0, const char *name, size_t name_len)
{
	struct pw_rec_gpu g = {.c = {.h = {.type = type, .size8 = sizeof g / 8, .tid = 1}, .t0 = t0, .t1 = t1,
				     .arg0 = arg0, .arg1 = name ? STR_REF : 0},
			       .device = device, .stream = stream, .correlation = corr, .a = {5, 6, 7}};
	struct pw_raw_event e = {.rec = &g.c, .t0_ns = t0, .t1_ns = t1, .str = name, .str_len = (uint32_t)name_len};
	pw_tl_gpu(tl, &e);
}

/* An NVTX record (struct pw_rec_range): arg0 = domain | category << 32. */
static void feed_range(struct pw_timeline *tl, uint16_t type, uint32_t tid, uint64_t t, uint32_t domain,
		       uint32_t category, int64_t ret, const char *name, uint64_t payload)
{
	struct pw_rec_range r = {.c = {.h = {.type = type, .size8 = sizeof r / 8, .tid = tid}, .t0 = t, .t1 = t,
				       .ret = ret, .arg0 = domain | (uint64_t)category << 32,
				       .arg1 = name ? STR_REF : 0},
				 .payload = payload, .payload_type = payload ? 1 : 0};
	struct pw_raw_event e = {.rec = &r.c, .t0_ns = t, .t1_ns = t, .str = name,
				 .str_len = name ? (uint32_t)strlen(name) : 0};
	pw_tl_range(tl, &e);
}

static void feed_sample(struct pw_timeline *tl, uint32_t tid, uint64_t t, uint64_t period, uint64_t stack_ref)
{
	struct pw_rec_call r = {.h = {.type = PW_EV_CPU_SAMPLE, .size8 = sizeof r / 8, .tid = tid}, .t0 = t, .t1 = t,
				.arg0 = period};
	struct pw_raw_event e = {.rec = &r, .t0_ns = t, .t1_ns = t, .stack_ref = stack_ref};
	pw_tl_sample(tl, &e);
}

/* ---- the keep rule, worked out independently ---- */

/* The duration bucket by its definition (model.h): 0 holds 0 ns, b in 1..64 holds [2^(b-1), 2^b). */
static unsigned bucket_of(uint64_t ns)
{
	unsigned b = 0;
	for (; ns; ns >>= 1)
		b++;
	return b;
}

/* Whether the rule (floor, stride) keeps the k-th event (0-based, in order of arrival) of bucket b. */
static int keeps(unsigned floor, unsigned stride, unsigned b, uint64_t k)
{
	if (b != floor)
		return b > floor;
	return stride == 0 || (k & ((1ull << stride) - 1)) == 0;
}

static int stricter(unsigned floor, unsigned stride, unsigned pfloor, unsigned pstride)
{
	return floor > pfloor || (floor == pfloor && stride > pstride);
}

static uint64_t margin(uint64_t max)
{
	return max - max / 64; /* the budget a tightening aims for (timeline.c's margin) */
}

static const struct pw_tl_thread *find_thread(const struct pw_timeline *tl, uint32_t image, uint32_t tid)
{
	for (size_t i = 0; i < tl->nthreads; i++)
		if (tl->threads[i].image == image && tl->threads[i].tid == tid)
			return &tl->threads[i];
	return NULL;
}

static const struct pw_tl_stream *find_stream(const struct pw_timeline *tl, uint32_t image, uint32_t slot,
					      uint32_t stream)
{
	for (size_t i = 0; i < tl->nstreams; i++)
		if (tl->streams[i].image == image && tl->streams[i].slot == slot && tl->streams[i].stream == stream)
			return &tl->streams[i];
	return NULL;
}

/* ---- calls under budget ---- */

static void test_calls_under_budget(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	pw_tl_call(NULL, NULL, PW_TL_NONE); /* no timeline: nothing (analysis.c passes NULL when out of memory) */
	/* before any image, a call is not the timeline's */
	feed_call(tl, &(struct cspec){.type = PW_EV_READ, .tid = 1, .t0 = 5, .t1 = 6, .file = PW_TL_NONE});
	assert_int_equal(tl->nthreads, 0);
	assert_int_equal(pw_tl_image(tl, START_NS), 0);

	const char *path = "/data/train/shard-0001.bin";
	const char *kernel = "void gemm_kernel<float, 128, 128>(float const*, float const*, float*, int, int, int)";
	const struct cspec in[] = {
		{.type = PW_EV_OPEN, .tid = 100, .t0 = 2000000, .t1 = 2000500, .ret = 7, .arg0 = 7, .arg1 = STR_REF,
		 .str = path, .str_len = strlen(path), .file = PW_TL_NONE},
		{.type = PW_EV_READ, .tid = 100, .t0 = 2001000, .t1 = 2004000, .ret = 4096, .arg0 = 7, .arg1 = 4096,
		 .stack_ref = 0x1234, .file = 3},
		{.type = PW_EV_READ, .err = 11, .tid = 101, .t0 = 2002000, .t1 = 2002010, .ret = -1, .arg0 = 9,
		 .file = 4},
		{.type = PW_EV_NANOSLEEP, .tid = 101, .t0 = 2003000, .t1 = 2103000, .file = PW_TL_NONE},
		{.type = PW_EV_CLOSE, .tid = 100, .t0 = 2005000, .t1 = 2005000, .arg0 = 7, .file = 3}, /* 0 ns */
		{.type = PW_EV_WRITE, .tid = 102, .t0 = 2006000, .t1 = 2005990, .ret = 10, .arg0 = 1, .arg1 = 10,
		 .file = PW_TL_NONE}, /* t1 < t0: 0 ns */
		{.type = PW_EV_OPEN, .tid = 102, .t0 = 2007000, .t1 = 2007100, .ret = 8, .arg0 = 8, .arg1 = STR_REF,
		 .str = path, .str_len = strlen(path), .file = PW_TL_NONE}, /* the same path: the same string */
	};
	const size_t n = sizeof in / sizeof in[0];
	for (size_t i = 0; i < n; i++)
		feed_call(tl, &in[i]);
	/* GPU library calls keep what they said beyond the common part, the launch its kernel's name */
	feed_api(tl, PW_EV_CUDA_MEMCPY_ASYNC, 101, 2008000, 2008300, 1 << 20, 0xabc, 1, 77, NULL);
	feed_api(tl, PW_EV_CUDA_LAUNCH_KERNEL, 100, 2009000, 2009040, 0xfeed, 0xabc, 1, 78, kernel);

	assert_int_equal(tl->ncalls, n + 2);
	for (size_t i = 0; i < n; i++) {
		const struct pw_tl_call *c = &tl->calls[i];
		assert_int_equal(c->t0, in[i].t0);
		assert_int_equal(c->t1, in[i].t1);
		assert_int_equal(c->ret, in[i].ret);
		assert_int_equal(c->arg0, in[i].arg0);
		assert_int_equal(c->arg1, in[i].arg1);
		assert_int_equal(c->stack_ref, in[i].stack_ref);
		assert_int_equal(c->type, in[i].type);
		assert_int_equal(c->err, in[i].err);
		assert_int_equal(c->api, PW_TL_NONE);
		assert_int_equal(tl->threads[c->thread].tid, in[i].tid);
		assert_int_equal(tl->threads[c->thread].image, 0);
		if (in[i].file != PW_TL_NONE)
			assert_int_equal(c->path, PW_TL_FILE | in[i].file);
		else if (in[i].str)
			assert_string_equal(pw_tl_string(tl, c->path), in[i].str);
		else
			assert_int_equal(c->path, PW_TL_NONE);
	}
	assert_int_equal(tl->calls[0].path, tl->calls[6].path); /* one path, one string */
	assert_int_equal(tl->strings_len, strlen(path) + 1 + strlen(kernel) + 1);
	/* the order of arrival in its bucket: the first open is the first of bucket 9 (63), the 0 ns write the
	 * second of bucket 0 after the close (order 1: no trailing zero) */
	assert_int_equal(tl->calls[0].seq_tz, 63);
	assert_int_equal(tl->calls[4].seq_tz, 63);
	assert_int_equal(tl->calls[5].seq_tz, 0);

	const struct pw_tl_call *m = &tl->calls[n], *l = &tl->calls[n + 1];
	assert_int_equal(m->type, PW_EV_CUDA_MEMCPY_ASYNC);
	assert_int_equal(m->path, PW_TL_NONE);
	assert_int_equal(tl->napis, 2);
	assert_int_equal(m->api, 0);
	assert_int_equal(l->api, 1);
	const struct pw_tl_api *ma = &tl->apis[0], *la = &tl->apis[1];
	assert_int_equal(ma->stream, 0xabc);
	assert_int_equal(ma->device, 1);
	assert_int_equal(ma->corr, 77);
	assert_int_equal(ma->sub, 0x100);
	assert_int_equal(ma->a[0], 11);
	assert_int_equal(ma->a[3], 44);
	assert_int_equal(ma->launch_name, PW_TL_NONE);
	assert_int_equal(la->corr, 78);
	assert_string_equal(pw_tl_string(tl, la->launch_name), kernel); /* 84 bytes: under the 120 cut */

	/* per thread: every call counted, kept counted */
	const struct pw_tl_thread *t100 = find_thread(tl, 0, 100), *t101 = find_thread(tl, 0, 101),
				  *t102 = find_thread(tl, 0, 102);
	assert_non_null(t100);
	assert_non_null(t101);
	assert_non_null(t102);
	assert_int_equal(tl->nthreads, 3);
	assert_int_equal(t100->calls, 4);
	assert_int_equal(t100->calls_ns, 500 + 3000 + 0 + 40);
	assert_int_equal(t100->first_ns, 2000000);
	assert_int_equal(t100->last_ns, 2009040);
	assert_int_equal(t100->kept, 4);
	assert_int_equal(t100->kept_ns, t100->calls_ns);
	assert_int_equal(t101->calls, 3);
	assert_int_equal(t101->calls_ns, 10 + 100000 + 300);
	assert_int_equal(t101->first_ns, 2002000);
	assert_int_equal(t101->last_ns, 2103000);
	assert_int_equal(t101->kept, 3);
	assert_int_equal(t102->calls, 2);
	assert_int_equal(t102->calls_ns, 100);
	assert_int_equal(t102->first_ns, 2006000);
	assert_int_equal(t102->last_ns, 2007100);

	/* under budget the rule keeps everything */
	assert_int_equal(tl->call_rule.floor, 0);
	assert_int_equal(tl->call_rule.stride, 0);
	assert_int_equal(pw_tl_rule_threshold_ns(&tl->call_rule), 0);
	assert_int_equal(pw_tl_calls_sampled(tl), 0);

	/* the file ends: its calls are no longer the timeline's; the next file's thread 100 is a thread apart */
	struct pw_act_file act;
	pw_act_file_init(&act);
	pw_tl_image_end(tl, &act);
	feed_call(tl, &in[1]);
	assert_int_equal(tl->ncalls, n + 2);
	assert_int_equal(pw_tl_image(tl, START_NS + 1), 1);
	feed_call(tl, &in[1]);
	assert_int_equal(tl->ncalls, n + 3);
	assert_int_equal(tl->nthreads, 4);
	const struct pw_tl_thread *t100b = find_thread(tl, 1, 100);
	assert_non_null(t100b);
	assert_int_equal(tl->calls[n + 2].thread, t100b - tl->threads);
	assert_int_equal(t100b->calls, 1);
	assert_int_equal(t100->calls, 4);
	pw_act_file_free(&act);
}

/* ---- calls over budget ---- */

struct gen_ev {
	uint64_t t0, t1;
	uint64_t k; /* its order of arrival in its bucket */
	uint32_t tid;
	uint8_t bucket;
	uint8_t api;
};

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define CALLS_N 900000u
#define CALL_FILES 7u

/* The kept calls are exactly the rule's share of the first n events, in order, with their own fields. */
static void check_kept_calls(const struct pw_timeline *tl, const struct gen_ev *ev, size_t n, unsigned floor,
			     unsigned stride)
{
	size_t j = 0, napis = 0;
	for (size_t i = 0; i < n; i++) {
		if (!keeps(floor, stride, ev[i].bucket, ev[i].k))
			continue;
		assert_true(j < tl->ncalls);
		const struct pw_tl_call *c = &tl->calls[j++];
		assert_int_equal(c->arg0, i); /* the call's identity */
		assert_int_equal(c->t0, ev[i].t0);
		assert_int_equal(c->t1, ev[i].t1);
		assert_int_equal(tl->threads[c->thread].tid, ev[i].tid);
		if (ev[i].api) {
			/* compaction moved its API part along with it */
			assert_int_equal(c->api, napis);
			assert_int_equal(tl->apis[c->api].stream, i + 1);
			napis++;
		} else {
			assert_int_equal(c->api, PW_TL_NONE);
			assert_int_equal(c->path, PW_TL_FILE | (uint32_t)(i % CALL_FILES));
		}
	}
	assert_int_equal(j, tl->ncalls);
	assert_int_equal(napis, tl->napis);
}

static void test_calls_over_budget(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	struct gen_ev *ev = fx_alloc(x, 0, CALLS_N * sizeof *ev);
	/* The mix: 10 % 0 ns (half with t1 < t0), 20 % in bucket 4 (8..15 ns), 59.5 % in bucket 7 (64..127 ns),
	 * 10 % in bucket 12 (2..4 us), 0.5 % long (1 ms, bucket 20). Bucket 7 alone holds ~535,000: the rule must
	 * drop buckets 0 and 4 whole and sample bucket 7. Every stride-1 rule on it keeps ~267,750 + 94,500 >
	 * 295,313 (the budget less its margin), stride 2 keeps ~133,900 + 94,500: the final rule is (7, 2). */
	uint64_t seen[PW_DURATION_BUCKETS] = {0}, s = 0x9e3779b97f4a7c15ull, nlong = 0;
	for (size_t i = 0; i < CALLS_N; i++) {
		uint64_t r = rng_next(&s), t0 = START_NS + (uint64_t)i * 3000, dur, t1;
		unsigned cls = (unsigned)(r % 1000);
		if (cls < 100)
			dur = 0;
		else if (cls < 300)
			dur = 8 + (r >> 20) % 8;
		else if (cls < 895)
			dur = 64 + (r >> 20) % 64;
		else if (cls < 995)
			dur = 2048 + (r >> 20) % 2048;
		else
			dur = 1000000 + (r >> 20) % 1000, nlong++;
		t1 = cls < 50 ? t0 - 5 : t0 + dur; /* t1 < t0 counts as 0 ns */
		unsigned b = bucket_of(dur);
		ev[i] = (struct gen_ev){.t0 = t0, .t1 = t1, .k = seen[b]++, .tid = 100 + (uint32_t)(i % 3),
					.bucket = (uint8_t)b, .api = i % 5 == 0};
	}
	assert_int_equal(pw_tl_image(tl, START_NS), 0);

	unsigned pfloor = 0, pstride = 0, changes = 0;
	for (size_t i = 0; i < CALLS_N; i++) {
		if (ev[i].api)
			feed_api(tl, PW_EV_CUDA_MEMCPY_ASYNC, ev[i].tid, ev[i].t0, ev[i].t1, i, i + 1, 0, 0, NULL);
		else
			feed_call(tl, &(struct cspec){.type = PW_EV_READ, .tid = ev[i].tid, .t0 = ev[i].t0, .t1 = ev[i].t1,
						     .arg0 = i, .file = (uint32_t)(i % CALL_FILES)});
		assert_true(tl->ncalls <= PW_TL_MAX_CALLS);
		unsigned floor = tl->call_rule.floor, stride = tl->call_rule.stride;
		if (floor == pfloor && stride == pstride)
			continue;
		/* the rule only tightens, and what it keeps then is exactly its share of the calls so far: what an
		 * earlier rule dropped does not come back */
		assert_true(stricter(floor, stride, pfloor, pstride));
		check_kept_calls(tl, ev, i + 1, floor, stride);
		pfloor = floor, pstride = stride, changes++;
	}
	assert_true(changes >= 2);

	const struct pw_tl_rule *k = &tl->call_rule;
	assert_int_equal(k->floor, 7);
	assert_int_equal(k->stride, 2);
	for (unsigned b = 0; b < PW_DURATION_BUCKETS; b++)
		assert_int_equal(k->seen[b], seen[b]);
	check_kept_calls(tl, ev, CALLS_N, k->floor, k->stride);

	uint64_t kept = 0, kept_long = 0, sampled = 0, looser = 0;
	for (size_t i = 0; i < CALLS_N; i++) {
		int in = keeps(k->floor, k->stride, ev[i].bucket, ev[i].k);
		kept += in;
		kept_long += in && ev[i].bucket == 20;
		sampled += in && ev[i].bucket == k->floor;
		looser += keeps(k->floor, k->stride - 1, ev[i].bucket, ev[i].k);
	}
	assert_int_equal(tl->ncalls, kept);
	assert_int_equal(kept_long, nlong); /* every long call kept */
	assert_int_equal(sampled, (seen[7] + 3) / 4);
	assert_int_equal(pw_tl_calls_sampled(tl), sampled);
	/* the shortest duration kept whole: bucket 8's, 128 ns */
	assert_int_equal(pw_tl_rule_threshold_ns(k), 128);
	/* the loosest rule that fits: the one before it keeps more than the budget allows */
	assert_true(looser > margin(PW_TL_MAX_CALLS));

	/* per thread, every call counted; kept as kept */
	for (uint32_t t = 0; t < 3; t++) {
		uint64_t calls = 0, ns = 0, kn = 0, kns = 0, first = UINT64_MAX, last = 0;
		for (size_t i = t; i < CALLS_N; i += 3) {
			uint64_t d = ev[i].t1 > ev[i].t0 ? ev[i].t1 - ev[i].t0 : 0;
			calls++, ns += d;
			first = ev[i].t0 < first ? ev[i].t0 : first;
			last = ev[i].t1 > last ? ev[i].t1 : last;
			if (keeps(k->floor, k->stride, ev[i].bucket, ev[i].k))
				kn++, kns += d;
		}
		const struct pw_tl_thread *th = find_thread(tl, 0, 100 + t);
		assert_non_null(th);
		assert_int_equal(th->calls, calls);
		assert_int_equal(th->calls_ns, ns);
		assert_int_equal(th->first_ns, first);
		assert_int_equal(th->last_ns, last);
		assert_int_equal(th->kept, kn);
		assert_int_equal(th->kept_ns, kns);
	}
	assert_int_equal(tl->nthreads, 3);
}

/* ---- GPU work over budget ---- */

#define GPU_N 300000u

struct gpu_place {
	int32_t device;
	uint32_t slot, stream;
};
static const struct gpu_place gpu_places[] = {{0, 0, 7}, {1, 1, 9}, {99, PW_TL_DEVICE_SLOTS, 7},
					      {-1, PW_TL_DEVICE_SLOTS, 3}};
#define NPLACES (sizeof gpu_places / sizeof gpu_places[0])

static uint16_t gpu_type(size_t i)
{
	return i % 10 == 3 ? PW_EV_GPU_MEMCPY : i % 10 == 7 ? PW_EV_GPU_MEMSET : PW_EV_GPU_KERNEL;
}

/* Kept GPU events: exactly the rule's share of the first n, in order, with their fields; returns their bytes. */
static uint64_t check_kept_gpus(const struct pw_timeline *tl, const struct gen_ev *ev, size_t n, unsigned floor,
				unsigned stride, char names[][8])
{
	size_t j = 0;
	uint64_t bytes = 0;
	for (size_t i = 0; i < n; i++) {
		if (!keeps(floor, stride, ev[i].bucket, ev[i].k))
			continue;
		assert_true(j < tl->ngpus);
		const struct pw_tl_gpu *g = &tl->gpus[j++];
		const struct gpu_place *p = &gpu_places[i % NPLACES];
		assert_int_equal(g->arg0, i);
		assert_int_equal(g->t0, ev[i].t0);
		assert_int_equal(g->t1, ev[i].t1);
		assert_int_equal(g->corr, (uint32_t)i + 1);
		assert_int_equal(g->device, p->device);
		assert_int_equal(g->a[2], 7);
		const struct pw_tl_stream *st = &tl->streams[g->stream];
		assert_int_equal(st->slot, p->slot);
		assert_int_equal(st->stream, p->stream);
		uint16_t type = gpu_type(i);
		assert_int_equal(g->kind, pw_events[type].kind);
		if (type == PW_EV_GPU_KERNEL) {
			assert_string_equal(pw_tl_string(tl, g->name), names[i % 5]);
			bytes += PW_TL_GPU_EVENT_BYTES + strlen(names[i % 5]);
		} else {
			assert_int_equal(g->name, PW_TL_NONE);
			bytes += PW_TL_GPU_EVENT_BYTES;
		}
	}
	assert_int_equal(j, tl->ngpus);
	return bytes;
}

static void test_gpu_over_count_budget(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	struct gen_ev *ev = fx_alloc(x, 0, GPU_N * sizeof *ev);
	char names[5][8];
	for (int i = 0; i < 5; i++)
		snprintf(names[i], sizeof names[i], "k%d", i);
	/* 10 % 0 ns, 33 % in bucket 9 (256..511 ns), 55 % in bucket 13 (4..8 us), 2 % long (1 ms, bucket 20). The
	 * events are at most 402 bytes: 100,000 of them fit the bytes budget, the count binds. Bucket 13 whole
	 * with the long ones: ~171,000 > 98,438 (the count less its margin); every other one: ~88,500: the final
	 * rule is (13, 1). */
	uint64_t seen[PW_DURATION_BUCKETS] = {0}, s = 0x2545f4914f6cdd1dull, nlong = 0;
	for (size_t i = 0; i < GPU_N; i++) {
		uint64_t r = rng_next(&s), t0 = START_NS + 1000 + (uint64_t)i * 1000, dur;
		unsigned cls = (unsigned)(r % 100);
		if (cls < 10)
			dur = 0;
		else if (cls < 43)
			dur = 256 + (r >> 20) % 256;
		else if (cls < 98)
			dur = 4096 + (r >> 20) % 4096;
		else
			dur = 1000000 + (r >> 20) % 1000, nlong++;
		unsigned b = bucket_of(dur);
		ev[i] = (struct gen_ev){.t0 = t0, .t1 = t0 + dur, .k = seen[b]++, .bucket = (uint8_t)b};
	}
	assert_int_equal(pw_tl_image(tl, START_NS), 0);
	/* records that are not GPU work: counted as records only; device names and CUPTI's losses noted */
	feed_gpu(tl, PW_EV_GPU_DEVICE, 1, 0, 0, 0, 0, 0, "NVIDIA H100 80GB HBM3", 21);
	feed_gpu(tl, PW_EV_GPU_DEVICE, 1, 0, 0, 0, 0, 0, "another name", 12); /* the first name stays */
	feed_gpu(tl, PW_EV_GPU_DEVICE, 99, 0, 0, 0, 0, 0, "out of range", 12);
	feed_gpu(tl, PW_EV_GPU_DROPPED, -1, 0, START_NS, START_NS, 0, 12, NULL, 0);
	feed_gpu(tl, PW_EV_GPU_DROPPED, -1, 0, START_NS, START_NS, 0, 30, NULL, 0);
	feed_gpu(tl, PW_EV_GPU_API, -1, 0, START_NS, START_NS + 5, 9, 0, NULL, 0);
	/* impossible times: not drawn, not counted per stream, not in the rule */
	feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 7, 0, 100, 1, 0, "k0", 2);
	feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 7, START_NS - 1, START_NS + 100, 1, 0, "k0", 2);
	feed_gpu(tl, PW_EV_GPU_MEMCPY, 0, 7, START_NS + 100, START_NS + 99, 1, 0, NULL, 0);
	assert_int_equal(tl->gpu_unplaced, 3);
	assert_int_equal(tl->nstreams, 0);
	assert_int_equal(tl->gpu_dropped, 42);
	assert_string_equal(pw_tl_string(tl, tl->images[0].device_names[1]), "NVIDIA H100 80GB HBM3");
	assert_int_equal(tl->images[0].device_names[0], PW_TL_NONE);

	unsigned pfloor = 0, pstride = 0, changes = 0;
	for (size_t i = 0; i < GPU_N; i++) {
		const struct gpu_place *p = &gpu_places[i % NPLACES];
		uint16_t type = gpu_type(i);
		const char *name = type == PW_EV_GPU_KERNEL ? names[i % 5] : NULL;
		feed_gpu(tl, type, p->device, p->stream, ev[i].t0, ev[i].t1, (uint32_t)i + 1, i, name,
			 name ? strlen(name) : 0);
		assert_true(tl->ngpus <= PW_TL_MAX_GPU_EVENTS);
		assert_true(tl->gpu_bytes <= PW_TL_MAX_GPU_BYTES);
		unsigned floor = tl->gpu_rule.floor, stride = tl->gpu_rule.stride;
		if (floor == pfloor && stride == pstride)
			continue;
		assert_true(stricter(floor, stride, pfloor, pstride));
		assert_int_equal(check_kept_gpus(tl, ev, i + 1, floor, stride, names), tl->gpu_bytes);
		pfloor = floor, pstride = stride, changes++;
	}
	assert_true(changes >= 1);
	assert_int_equal(tl->gpu_records, 9 + GPU_N);

	const struct pw_tl_rule *k = &tl->gpu_rule;
	assert_int_equal(k->floor, 13);
	assert_int_equal(k->stride, 1);
	for (unsigned b = 0; b < PW_DURATION_BUCKETS; b++)
		assert_int_equal(k->seen[b], seen[b]);
	assert_int_equal(check_kept_gpus(tl, ev, GPU_N, k->floor, k->stride, names), tl->gpu_bytes);
	uint64_t kept = 0, kept_long = 0, sampled = 0, looser = 0;
	for (size_t i = 0; i < GPU_N; i++) {
		int in = keeps(k->floor, k->stride, ev[i].bucket, ev[i].k);
		kept += in;
		kept_long += in && ev[i].bucket == 20;
		sampled += in && ev[i].bucket == k->floor;
		looser += keeps(k->floor, k->stride - 1, ev[i].bucket, ev[i].k);
	}
	assert_int_equal(tl->ngpus, kept);
	assert_int_equal(kept_long, nlong);
	assert_int_equal(sampled, (seen[13] + 1) / 2);
	assert_int_equal(pw_tl_gpu_sampled(tl), sampled);
	assert_int_equal(pw_tl_rule_threshold_ns(k), 8192);
	assert_true(looser > margin(PW_TL_MAX_GPU_EVENTS));
	/* the calls' rule is untouched */
	assert_int_equal(tl->call_rule.floor, 0);
	assert_int_equal(tl->call_rule.stride, 0);

	/* per stream: every event counted */
	assert_int_equal(tl->nstreams, NPLACES); /* devices 99 and -1 share slot 64, their streams 7 and 3 apart */
	for (size_t p = 0; p < NPLACES; p++) {
		uint64_t events = 0, ns = 0, kn = 0, kns = 0, first = UINT64_MAX, last = 0;
		for (size_t i = 0; i < GPU_N; i++) {
			const struct gpu_place *q = &gpu_places[i % NPLACES];
			if (q->slot != gpu_places[p].slot || q->stream != gpu_places[p].stream)
				continue;
			uint64_t d = ev[i].t1 - ev[i].t0;
			events++, ns += d;
			first = ev[i].t0 < first ? ev[i].t0 : first;
			last = ev[i].t1 > last ? ev[i].t1 : last;
			if (keeps(k->floor, k->stride, ev[i].bucket, ev[i].k))
				kn++, kns += d;
		}
		const struct pw_tl_stream *st = find_stream(tl, 0, gpu_places[p].slot, gpu_places[p].stream);
		assert_non_null(st);
		assert_int_equal(st->events, events);
		assert_int_equal(st->events_ns, ns);
		assert_int_equal(st->first_ns, first);
		assert_int_equal(st->last_ns, last);
		assert_int_equal(st->kept, kn);
		assert_int_equal(st->kept_ns, kns);
	}
	/* five names, each interned once */
	size_t strings = strlen("NVIDIA H100 80GB HBM3") + 1;
	for (int i = 0; i < 5; i++)
		strings += strlen(names[i]) + 1;
	assert_int_equal(tl->strings_len, strings);
}

#define BYTES_N 60000u
#define LONG_NAME 3000u

static void test_gpu_over_bytes_budget(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	struct gen_ev *ev = fx_alloc(x, 0, BYTES_N * sizeof *ev);
	/* eight kernel names of 3,000 bytes: 3,400 bytes an event, so the bytes budget (48 MiB less its margin:
	 * 14,572 events) binds long before the count. 5 % 0 ns, 20 % in bucket 9, 70 % in bucket 13, 5 % long:
	 * bucket 13 every other one keeps ~21,000 + 3,000, every 4th ~10,500 + 3,000: the final rule is (13, 2). */
	char(*names)[LONG_NAME + 1] = fx_alloc(x, 1, 8 * sizeof *names);
	for (int n = 0; n < 8; n++) {
		memset(names[n], 'a' + n, LONG_NAME);
		names[n][LONG_NAME] = '\0';
	}
	uint64_t seen[PW_DURATION_BUCKETS] = {0}, s = 0x853c49e6748fea9bull, nlong = 0;
	for (size_t i = 0; i < BYTES_N; i++) {
		uint64_t r = rng_next(&s), t0 = START_NS + (uint64_t)i * 1000, dur;
		unsigned cls = (unsigned)(r % 100);
		if (cls < 5)
			dur = 0;
		else if (cls < 25)
			dur = 256 + (r >> 20) % 256;
		else if (cls < 95)
			dur = 4096 + (r >> 20) % 4096;
		else
			dur = 1000000, nlong++;
		unsigned b = bucket_of(dur);
		ev[i] = (struct gen_ev){.t0 = t0, .t1 = t0 + dur, .k = seen[b]++, .bucket = (uint8_t)b};
	}
	assert_int_equal(pw_tl_image(tl, START_NS), 0);
	unsigned pfloor = 0, pstride = 0;
	for (size_t i = 0; i < BYTES_N; i++) {
		feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 7, ev[i].t0, ev[i].t1, 0, i, names[i % 8], LONG_NAME);
		assert_true(tl->gpu_bytes <= PW_TL_MAX_GPU_BYTES);
		assert_int_equal(tl->gpu_bytes, tl->ngpus * (PW_TL_GPU_EVENT_BYTES + LONG_NAME));
		unsigned floor = tl->gpu_rule.floor, stride = tl->gpu_rule.stride;
		if (floor != pfloor || stride != pstride)
			assert_true(stricter(floor, stride, pfloor, pstride));
		pfloor = floor, pstride = stride;
	}
	const struct pw_tl_rule *k = &tl->gpu_rule;
	assert_int_equal(k->floor, 13);
	assert_int_equal(k->stride, 2);
	uint64_t kept = 0, kept_long = 0, looser = 0;
	size_t j = 0;
	for (size_t i = 0; i < BYTES_N; i++) {
		looser += keeps(k->floor, k->stride - 1, ev[i].bucket, ev[i].k);
		if (!keeps(k->floor, k->stride, ev[i].bucket, ev[i].k))
			continue;
		kept++;
		kept_long += ev[i].bucket == 20;
		assert_true(j < tl->ngpus);
		assert_int_equal(tl->gpus[j].arg0, i);
		assert_string_equal(pw_tl_string(tl, tl->gpus[j].name), names[i % 8]);
		j++;
	}
	assert_int_equal(tl->ngpus, kept);
	assert_int_equal(kept_long, nlong);
	assert_true(tl->ngpus < margin(PW_TL_MAX_GPU_EVENTS)); /* the bytes bound, not the count */
	assert_true(looser * (PW_TL_GPU_EVENT_BYTES + LONG_NAME) > margin(PW_TL_MAX_GPU_BYTES));
	assert_int_equal(tl->strings_len, 8 * (LONG_NAME + 1)); /* each name once */
	const struct pw_tl_stream *st = find_stream(tl, 0, 0, 7);
	assert_non_null(st);
	assert_int_equal(st->events, BYTES_N);
	assert_int_equal(st->kept, kept);
}

/* Kernels in one duration bucket alternate a long name and a short one (two kernels a loop launches in turn).
 * The rule's sample of that bucket, every 2^k-th event, then keeps only the long-named ones, while the rule
 * counts the bucket's bytes as their average: the kept events must still fit the bytes budget, as
 * pw_tl_gpu's own test before it appends (gpu_bytes + bytes > PW_TL_MAX_GPU_BYTES) means them to. */
static void test_gpu_bytes_budget_alternating_names(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	char *long_name = fx_alloc(x, 0, 4001);
	memset(long_name, 'L', 4000);
	assert_int_equal(pw_tl_image(tl, START_NS), 0);
	/* 4,400 and 401 bytes an event: the first tightening (about 21,000 events in) samples every other one of
	 * the bucket, all long-named, which it counts as half the budget when they take 92 % of it; the test stops
	 * at the first event kept past the budget (the module goes on to about 1.8 times it, compacting its whole
	 * array for every event it admits while over) */
	const size_t n = 40000;
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = START_NS + i * 10000;
		if (i % 2 == 0)
			feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 1, t0, t0 + 5000, 0, i, long_name, 4000);
		else
			feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 1, t0, t0 + 5000, 0, i, "s", 1);
		if (tl->gpu_bytes > PW_TL_MAX_GPU_BYTES)
			print_error("event %zu: the kept GPU events take %llu bytes, the budget is %u (rule %u, %u)\n", i,
				    (unsigned long long)tl->gpu_bytes, PW_TL_MAX_GPU_BYTES, tl->gpu_rule.floor,
				    tl->gpu_rule.stride);
		assert_true(tl->gpu_bytes <= PW_TL_MAX_GPU_BYTES);
	}
	/* what is kept is still exactly the final rule's share, its bytes counted as kept */
	const struct pw_tl_rule *k = &tl->gpu_rule;
	assert_int_equal(k->floor, 13);
	uint64_t kept_bytes = 0;
	for (size_t i = 0; i < tl->ngpus; i++) {
		assert_int_equal(tl->gpus[i].arg0 & ((1u << k->stride) - 1), 0);
		kept_bytes += PW_TL_GPU_EVENT_BYTES + strlen(pw_tl_string(tl, tl->gpus[i].name));
	}
	assert_int_equal(kept_bytes, tl->gpu_bytes);
	assert_int_equal(tl->ngpus, (n + (1u << k->stride) - 1) >> k->stride);
}

/* ---- strings ---- */

static void test_strings(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	assert_int_equal(pw_tl_image(tl, START_NS), 0);
	char path[400];
	/* a path exactly PW_TL_PATH_MAX bytes long: kept whole */
	memset(path, 'p', PW_TL_PATH_MAX);
	path[0] = '/';
	path[PW_TL_PATH_MAX] = '\0';
	feed_call(tl, &(struct cspec){.type = PW_EV_OPEN, .tid = 1, .t0 = 2000000, .t1 = 2000010, .str = path,
				     .str_len = PW_TL_PATH_MAX, .file = PW_TL_NONE});
	assert_string_equal(pw_tl_string(tl, tl->calls[0].path), path);

	/* 300 bytes: "..." and its last 157 bytes */
	for (int i = 0; i < 300; i++)
		path[i] = (char)('a' + i % 26);
	path[0] = '/';
	path[300] = '\0';
	feed_call(tl, &(struct cspec){.type = PW_EV_OPEN, .tid = 1, .t0 = 2000020, .t1 = 2000030, .str = path,
				     .str_len = 300, .file = PW_TL_NONE});
	const char *cut = pw_tl_string(tl, tl->calls[1].path);
	assert_int_equal(strlen(cut), PW_TL_PATH_MAX);
	assert_memory_equal(cut, "...", 3);
	assert_string_equal(cut + 3, path + 300 - (PW_TL_PATH_MAX - 3));
	/* the same long path again: the same string */
	feed_call(tl, &(struct cspec){.type = PW_EV_OPEN, .tid = 2, .t0 = 2000040, .t1 = 2000050, .str = path,
				     .str_len = 300, .file = PW_TL_NONE});
	assert_int_equal(tl->calls[2].path, tl->calls[1].path);

	/* the cut falls inside a 2-byte UTF-8 character: its end is kept from the next character on */
	size_t at = 300 - (PW_TL_PATH_MAX - 3); /* the first byte kept */
	path[at - 1] = (char)0xc3;
	path[at] = (char)0xa9; /* é */
	feed_call(tl, &(struct cspec){.type = PW_EV_OPEN, .tid = 1, .t0 = 2000060, .t1 = 2000070, .str = path,
				     .str_len = 300, .file = PW_TL_NONE});
	cut = pw_tl_string(tl, tl->calls[3].path);
	assert_int_equal(strlen(cut), PW_TL_PATH_MAX - 1);
	assert_string_equal(cut + 3, path + at + 1);

	/* the string ends at a NUL inside it */
	feed_call(tl, &(struct cspec){.type = PW_EV_OPEN, .tid = 1, .t0 = 2000080, .t1 = 2000090, .str = "/a\0/b",
				     .str_len = 5, .file = PW_TL_NONE});
	assert_string_equal(pw_tl_string(tl, tl->calls[4].path), "/a");

	/* a launch's kernel name: its first 120 bytes and "..." */
	char kname[300];
	for (int i = 0; i < 299; i++)
		kname[i] = (char)('A' + i % 26);
	kname[299] = '\0';
	feed_api(tl, PW_EV_CUDA_LAUNCH_KERNEL, 1, 2000100, 2000110, 0, 0, 0, 0, kname);
	const char *ln = pw_tl_string(tl, tl->apis[tl->calls[5].api].launch_name);
	assert_int_equal(strlen(ln), PW_TL_LAUNCH_KERNEL_MAX + 3);
	assert_memory_equal(ln, kname, PW_TL_LAUNCH_KERNEL_MAX);
	assert_string_equal(ln + PW_TL_LAUNCH_KERNEL_MAX, "...");

	/* a kernel's name on its GPU track: 4,096 bytes and "..."; at a UTF-8 boundary (€ = e2 82 ac across the
	 * cut: cut before it) */
	char *big = fx_alloc(x, 0, 5001);
	memset(big, 'x', 5000);
	feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 1, START_NS + 10, START_NS + 20, 0, 0, big, 5000);
	const char *kn = pw_tl_string(tl, tl->gpus[0].name);
	assert_int_equal(strlen(kn), PW_TL_KERNEL_MAX + 3);
	assert_memory_equal(kn, big, PW_TL_KERNEL_MAX);
	assert_string_equal(kn + PW_TL_KERNEL_MAX, "...");
	assert_int_equal(tl->gpu_bytes, PW_TL_GPU_EVENT_BYTES + PW_TL_KERNEL_MAX); /* its bytes as cut */
	big[PW_TL_KERNEL_MAX - 1] = (char)0xe2;
	big[PW_TL_KERNEL_MAX] = (char)0x82;
	big[PW_TL_KERNEL_MAX + 1] = (char)0xac;
	feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 1, START_NS + 30, START_NS + 40, 0, 0, big, 5000);
	kn = pw_tl_string(tl, tl->gpus[1].name);
	assert_int_equal(strlen(kn), PW_TL_KERNEL_MAX - 1 + 3);
	assert_memory_equal(kn, big, PW_TL_KERNEL_MAX - 1);
	assert_string_equal(kn + PW_TL_KERNEL_MAX - 1, "...");
	/* a name of exactly PW_TL_KERNEL_MAX bytes: whole */
	big[PW_TL_KERNEL_MAX - 1] = big[PW_TL_KERNEL_MAX] = big[PW_TL_KERNEL_MAX + 1] = 'y';
	feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 1, START_NS + 50, START_NS + 60, 0, 0, big, PW_TL_KERNEL_MAX);
	kn = pw_tl_string(tl, tl->gpus[2].name);
	assert_int_equal(strlen(kn), PW_TL_KERNEL_MAX);
	assert_memory_equal(kn, big, PW_TL_KERNEL_MAX);
	assert_int_equal(tl->strings_refused, 0);
}

/* ---- NVTX ---- */

static size_t count_ph(const struct pw_timeline *tl, char ph)
{
	size_t n = 0;
	for (size_t i = 0; i < tl->nranges; i++)
		n += tl->ranges[i].ph == ph;
	return n;
}

static void test_nvtx(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	feed_range(tl, PW_EV_NVTX_MARK, 1, 10, 0, 0, 0, "before any image", 0);
	assert_int_equal(tl->nranges, 0);
	assert_int_equal(pw_tl_image(tl, START_NS), 0);
	/* thread 1: outer { inner { } } on domain 0; a push of domain 5 in between, popped after */
	feed_range(tl, PW_EV_NVTX_PUSH, 1, 2000, 0, 3, 0, "outer", 0xaa);
	feed_range(tl, PW_EV_NVTX_PUSH, 1, 2100, 5, 0, 0, "other domain", 0);
	feed_range(tl, PW_EV_NVTX_PUSH, 1, 2200, 0, 0, 1, "inner", 0);
	feed_range(tl, PW_EV_NVTX_PUSH, 2, 2250, 0, 0, 0, "thread 2", 0);
	feed_range(tl, PW_EV_NVTX_POP, 1, 2300, 0, 0, 1, NULL, 0);  /* inner */
	feed_range(tl, PW_EV_NVTX_POP, 1, 2400, 0, 0, 0, NULL, 0);  /* outer */
	feed_range(tl, PW_EV_NVTX_POP, 1, 2500, 5, 0, 0, NULL, 0);  /* other domain */
	feed_range(tl, PW_EV_NVTX_POP, 1, 2600, 0, 0, -1, NULL, 0); /* none open: nothing */
	feed_range(tl, PW_EV_NVTX_POP, 2, 2700, 0, 0, 0, NULL, 0);  /* thread 2's */
	assert_int_equal(tl->nranges, 4);
	assert_int_equal(count_ph(tl, 'X'), 4);
	const struct pw_tl_range *r = tl->ranges;
	assert_string_equal(pw_tl_string(tl, r[0].name), "inner");
	assert_int_equal(r[0].t0, 2200);
	assert_int_equal(r[0].t1, 2300);
	assert_int_equal(r[0].tid, 1);
	assert_string_equal(pw_tl_string(tl, r[1].name), "outer");
	assert_int_equal(r[1].t0, 2000);
	assert_int_equal(r[1].t1, 2400);
	assert_int_equal(r[1].category, 3);
	assert_int_equal(r[1].payload, 0xaa);
	assert_int_equal(r[1].payload_type, 1);
	assert_int_equal(r[1].domain, 0);
	assert_int_equal(r[1].image, 0);
	assert_string_equal(pw_tl_string(tl, r[2].name), "other domain");
	assert_int_equal(r[2].domain, 5);
	assert_int_equal(r[2].t1, 2500);
	assert_string_equal(pw_tl_string(tl, r[3].name), "thread 2");
	assert_int_equal(r[3].tid, 2);
	assert_int_equal(r[3].t0, 2250);
	assert_int_equal(r[3].t1, 2700);
	assert_int_equal(tl->npushes, 0);
	assert_int_equal(tl->ranges_not_drawn, 0);

	/* start/end by id, across threads and overlapping; an end whose start is unknown is not drawn */
	feed_range(tl, PW_EV_NVTX_START, 1, 3000, 0, 0, 41, "load", 0);
	feed_range(tl, PW_EV_NVTX_START, 1, 3100, 0, 0, 42, "step", 0);
	feed_range(tl, PW_EV_NVTX_END, 3, 3200, 0, 0, 41, NULL, 0);
	feed_range(tl, PW_EV_NVTX_END, 4, 3300, 0, 0, 99, NULL, 0);
	feed_range(tl, PW_EV_NVTX_MARK, 2, 3350, 0, 2, 0, "checkpoint", 0);
	feed_range(tl, PW_EV_NVTX_END, 1, 3400, 0, 0, 42, NULL, 0);
	assert_int_equal(tl->ranges_not_drawn, 1);
	assert_int_equal(tl->nranges, 9);
	r = tl->ranges + 4;
	assert_int_equal(r[0].ph, 'b');
	assert_int_equal(r[0].id, 41);
	assert_int_equal(r[0].t0, 3000);
	assert_string_equal(pw_tl_string(tl, r[0].name), "load");
	assert_int_equal(r[1].ph, 'b');
	assert_int_equal(r[1].id, 42);
	assert_int_equal(r[2].ph, 'e');
	assert_int_equal(r[2].id, 41);
	assert_int_equal(r[2].t0, 3200);
	assert_int_equal(r[2].tid, 3);
	assert_string_equal(pw_tl_string(tl, r[2].name), "load"); /* the start's name */
	assert_int_equal(r[3].ph, 'i');
	assert_int_equal(r[3].t0, 3350);
	assert_int_equal(r[3].category, 2);
	assert_string_equal(pw_tl_string(tl, r[3].name), "checkpoint");
	assert_int_equal(r[4].ph, 'e');
	assert_int_equal(r[4].id, 42);
	assert_string_equal(pw_tl_string(tl, r[4].name), "step");
	assert_int_equal(tl->nstarts, 0);

	/* a name is cut to PW_TL_RANGE_NAME_MAX bytes */
	char name[300];
	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	feed_range(tl, PW_EV_NVTX_MARK, 1, 3500, 0, 0, 0, name, 0);
	const char *cut = pw_tl_string(tl, tl->ranges[9].name);
	assert_int_equal(strlen(cut), PW_TL_RANGE_NAME_MAX);
	assert_memory_equal(cut, name, PW_TL_RANGE_NAME_MAX);

	/* a new image: what the previous one left open is not matched there */
	feed_range(tl, PW_EV_NVTX_PUSH, 1, 3600, 0, 0, 0, "left open", 0);
	feed_range(tl, PW_EV_NVTX_START, 1, 3600, 0, 0, 50, "left open", 0);
	assert_int_equal(pw_tl_image(tl, START_NS), 1);
	feed_range(tl, PW_EV_NVTX_POP, 1, 3700, 0, 0, 0, NULL, 0);
	feed_range(tl, PW_EV_NVTX_END, 1, 3700, 0, 0, 50, NULL, 0);
	assert_int_equal(tl->nranges, 11); /* the start's 'b' of image 0 only */
	assert_int_equal(tl->ranges_not_drawn, 2);
}

static void test_nvtx_cap(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	assert_int_equal(pw_tl_image(tl, START_NS), 0);
	/* a push before the cap, popped after it: its pop is not drawn */
	feed_range(tl, PW_EV_NVTX_PUSH, 1, 1000, 0, 0, 0, "open across", 0);
	for (uint64_t i = 0; i < PW_TL_MAX_RANGE_EVENTS; i++)
		feed_range(tl, PW_EV_NVTX_MARK, 2, 2000 + i, 0, 0, 0, "m", 0);
	assert_int_equal(tl->nranges, PW_TL_MAX_RANGE_EVENTS);
	assert_int_equal(tl->ranges_not_drawn, 0);
	assert_int_equal(tl->ranges[PW_TL_MAX_RANGE_EVENTS - 1].t0, 2000 + PW_TL_MAX_RANGE_EVENTS - 1);
	/* past the cap each record is counted, not drawn: marks, starts, ends, pushes, pops */
	feed_range(tl, PW_EV_NVTX_POP, 1, 5000000, 0, 0, 0, NULL, 0);
	feed_range(tl, PW_EV_NVTX_MARK, 2, 5000001, 0, 0, 0, "late", 0);
	feed_range(tl, PW_EV_NVTX_START, 2, 5000002, 0, 0, 7, "late", 0);
	feed_range(tl, PW_EV_NVTX_END, 2, 5000003, 0, 0, 7, NULL, 0);
	feed_range(tl, PW_EV_NVTX_PUSH, 2, 5000004, 0, 0, 0, "late", 0);
	feed_range(tl, PW_EV_NVTX_POP, 2, 5000005, 0, 0, 0, NULL, 0);
	assert_int_equal(tl->nranges, PW_TL_MAX_RANGE_EVENTS);
	assert_int_equal(tl->ranges_not_drawn, 6);
	assert_int_equal(tl->strings_len, strlen("open across") + 1 + strlen("m") + 1);
}

/* More pushes open at once than PW_TL_OPEN_RANGES: the one past them is counted not drawn, and so its pop
 * must draw nothing ("nothing when its push was not recorded"), least of all close the thread's outer push
 * at the inner one's time. */
static void test_nvtx_open_pushes_full(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	assert_int_equal(pw_tl_image(tl, START_NS), 0);
	for (uint32_t t = 0; t < PW_TL_OPEN_RANGES - 1; t++) /* other threads, each in a range */
		feed_range(tl, PW_EV_NVTX_PUSH, 1000 + t, 100 + t, 0, 0, 0, "worker", 0);
	feed_range(tl, PW_EV_NVTX_PUSH, 1, 5000, 0, 0, 0, "outer", 0); /* the last one open */
	feed_range(tl, PW_EV_NVTX_PUSH, 1, 5100, 0, 0, 1, "inner", 0); /* no room */
	assert_int_equal(tl->ranges_not_drawn, 1);
	feed_range(tl, PW_EV_NVTX_POP, 1, 5200, 0, 0, 1, NULL, 0); /* inner's */
	feed_range(tl, PW_EV_NVTX_POP, 1, 5300, 0, 0, 0, NULL, 0); /* outer's */
	/* whatever is drawn for thread 1 is "outer" from its push to its own pop */
	for (size_t i = 0; i < tl->nranges; i++) {
		const struct pw_tl_range *r = &tl->ranges[i];
		if (r->tid != 1)
			continue;
		assert_string_equal(pw_tl_string(tl, r->name), "outer");
		assert_int_equal(r->t0, 5000);
		assert_int_equal(r->t1, 5300);
	}
}

/* More starts open at once than PW_TL_OPEN_RANGES: each start drawn ('b') must have its end drawn ('e') when
 * that end comes, or the trace shows an async range that never ends; every record is drawn or counted. */
static void test_nvtx_open_starts_full(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	assert_int_equal(pw_tl_image(tl, START_NS), 0);
	const uint64_t n = PW_TL_OPEN_RANGES + 1;
	for (uint64_t id = 1; id <= n; id++)
		feed_range(tl, PW_EV_NVTX_START, 1, 1000 + id, 0, 0, (int64_t)id, "request", 0);
	for (uint64_t id = 1; id <= n; id++)
		feed_range(tl, PW_EV_NVTX_END, 2, 5000 + id, 0, 0, (int64_t)id, NULL, 0);
	assert_int_equal(tl->nranges + tl->ranges_not_drawn, 2 * n);
	for (size_t i = 0; i < tl->nranges; i++) {
		if (tl->ranges[i].ph != 'b')
			continue;
		size_t j = i + 1;
		while (j < tl->nranges && !(tl->ranges[j].ph == 'e' && tl->ranges[j].id == tl->ranges[i].id))
			j++;
		if (j == tl->nranges)
			print_error("range id %llu: drawn 'b', no 'e'\n", (unsigned long long)tl->ranges[i].id);
		assert_true(j < tl->nranges);
	}
	assert_int_equal(count_ph(tl, 'b'), count_ph(tl, 'e'));
}

/* ---- samples ---- */

static void test_samples(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	feed_sample(tl, 1, 10, 1000, 5); /* before any image: nothing */
	assert_int_equal(tl->nsamples, 0);
	assert_int_equal(pw_tl_image(tl, START_NS), 0);
	for (uint64_t i = 0; i < PW_TL_MAX_SAMPLES + 5; i++)
		feed_sample(tl, 7 + (uint32_t)(i % 2), START_NS + i * 1000, 999, 0x100 + i);
	assert_int_equal(tl->nsamples, PW_TL_MAX_SAMPLES);
	assert_int_equal(tl->samples_not_drawn, 5);
	const struct pw_tl_sample *first = &tl->samples[0], *last = &tl->samples[PW_TL_MAX_SAMPLES - 1];
	assert_int_equal(first->t0, START_NS);
	assert_int_equal(first->period_ns, 999);
	assert_int_equal(first->stack_ref, 0x100);
	assert_int_equal(first->tid, 7);
	assert_int_equal(first->image, 0);
	assert_int_equal(last->t0, START_NS + (PW_TL_MAX_SAMPLES - 1) * 1000ull);
	assert_int_equal(last->stack_ref, 0x100 + PW_TL_MAX_SAMPLES - 1);
	assert_int_equal(last->tid, 8);
}

/* ---- what enqueued the GPU work, resolved when its file ends ---- */

static void test_image_end_launchers(void **state)
{
	struct tfx *x = *state;
	struct pw_timeline *tl = x->tl;
	struct pw_act_report *act = NULL;
	struct pw_act_file f0, f1;
	pw_act_file_init(&f0);
	pw_act_file_init(&f1);
	assert_int_equal(pw_tl_image(tl, START_NS), 0);
	/* CUPTI's record of the driver call with correlation 7, made on thread 4242 */
	struct pw_rec_gpu api = {.c = {.h = {.type = PW_EV_GPU_API, .size8 = sizeof api / 8, .tid = 1},
				       .t0 = START_NS + 100, .t1 = START_NS + 150, .arg0 = 307,
				       .arg1 = PW_ACT_API_DRIVER},
				 .device = -1, .correlation = 7, .a = {4242}};
	struct pw_raw_event e = {.rec = &api.c, .t0_ns = api.c.t0, .t1_ns = api.c.t1};
	assert_int_equal(pw_act_event(&act, &f0, &e), 0);
	pw_tl_gpu(tl, &e);
	feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 1, START_NS + 200, START_NS + 300, 7, 0, "k", 1);
	feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 1, START_NS + 400, START_NS + 500, 8, 0, "k", 1); /* no record of 8 */
	feed_gpu(tl, PW_EV_GPU_MEMSET, 0, 1, START_NS + 600, START_NS + 700, 0, 0, NULL, 0); /* no correlation */
	assert_int_equal(pw_act_file_end(NULL, &f0, NULL, 0), 0);
	pw_tl_image_end(tl, &f0);
	assert_int_equal(tl->image, PW_TL_NONE);
	const struct pw_tl_gpu *g = tl->gpus;
	assert_int_equal(g[0].source, PW_ACT_SRC_API);
	assert_int_equal(g[0].src_tid, 4242);
	assert_int_equal(g[0].src_t0, START_NS + 100);
	assert_int_equal(g[0].src_t1, START_NS + 150);
	assert_int_equal(g[0].src_cbid, 307);
	assert_int_equal(g[0].src_driver, 1);
	assert_int_equal(g[0].has_ext, 0);
	assert_int_equal(g[1].source, PW_ACT_SRC_NONE);
	assert_int_equal(g[2].source, PW_ACT_SRC_NONE);
	/* GPU work after the file's end is not the timeline's */
	feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 1, START_NS + 800, START_NS + 900, 7, 0, "k", 1);
	assert_int_equal(tl->ngpus, 3);

	/* the next file has its own correlation ids: its end leaves the first file's events as they are */
	assert_int_equal(pw_tl_image(tl, START_NS), 1);
	feed_gpu(tl, PW_EV_GPU_KERNEL, 0, 1, START_NS + 200, START_NS + 300, 7, 0, "k", 1);
	assert_int_equal(pw_act_file_end(NULL, &f1, NULL, 0), 0);
	pw_tl_image_end(tl, &f1);
	assert_int_equal(tl->ngpus, 4);
	assert_int_equal(tl->nstreams, 2); /* stream 1 of device 0 in each image */
	assert_int_equal(tl->streams[tl->gpus[3].stream].image, 1);
	assert_int_equal(tl->gpus[3].source, PW_ACT_SRC_NONE);
	assert_int_equal(tl->gpus[0].source, PW_ACT_SRC_API);
	assert_int_equal(tl->gpus[0].src_tid, 4242);
	pw_act_file_free(&f0);
	pw_act_file_free(&f1);
	pw_act_report_free(act);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_calls_under_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_calls_over_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_over_count_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_over_bytes_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_bytes_budget_alternating_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_open_pushes_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx_open_starts_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_end_launchers, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
