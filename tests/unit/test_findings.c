#define _GNU_SOURCE
/* Unit tests for "What to fix first" (collector/model/findings.c): for each rule, a raw trace built to trigger it
 * exactly at its threshold, and one just below (or missing one condition) that must not; the ranking; the
 * rules evaluated without GPU activity; the findings in rank<R>.txt and rank<R>.json. Every rank here lasts
 * 10 ms (WALL), so a share of 5 % is 500 us. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../collector/lib/rawfile.h"
#include "../../collector/model/findings.h"
#include "../../collector/model/gpu_activity.h"
#include "../../collector/render.h"
#include "json_reader.h"
#include "out_files.h"
#include "out_fixture.h"
#include "raw_writer.h"

#define T 100
#define CUPTI 999
#define KNAME 16
#define NCCL_NAME 24
#define DEV_NAME 32
#define START 1000
#define WALL 10000000ull
#define NREC(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the output directory ---- */

static int pwt_open(const struct fx *fx, int pid)
{
	int fd = fx_raw_open(fx, pid, 0, START, "train", 5);
	put_string(fd, KNAME, "_Z10fwd_kernelPfS_i");
	put_string(fd, NCCL_NAME, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
	put_string(fd, DEV_NAME, "NVIDIA Test GPU");
	return fd;
}

static void pwt_end(int fd)
{
	fx_raw_end(fd, START + WALL);
}

static const struct pw_rank_report *analyze_ok(struct fx *fx)
{
	fx_analyze(fx);
	assert_int_equal(fx->an.nranks, 1);
	assert_int_equal(fx->an.ranks[0].wall_ns, WALL);
	return &fx->an.ranks[0];
}

static const struct pw_finding *find(const struct pw_rank_report *r, const char *id)
{
	for (size_t i = 0; i < r->nfindings; i++)
		if (strcmp(r->findings[i].id, id) == 0)
			return &r->findings[i];
	return NULL;
}

static void expect_only(const struct pw_rank_report *r, const char *id, double share)
{
	if (!id) {
		if (r->nfindings)
			fail_msg("unexpected finding %s (%.6f): %s", r->findings[0].id, r->findings[0].share,
				 r->findings[0].evidence);
		return;
	}
	if (r->nfindings != 1 || strcmp(r->findings[0].id, id) != 0)
		fail_msg("expected only %s, got %zu findings, first %s", id, r->nfindings,
			 r->nfindings ? r->findings[0].id : "-");
	assert_true(fabs(r->findings[0].share - share) < 1e-12);
	assert_non_null(r->findings[0].evidence);
	assert_true(strlen(r->findings[0].advice) > 20);
}

static void expect_evidence(const struct pw_finding *f, const char *part)
{
	assert_non_null(f);
	if (!strstr(f->evidence, part))
		fail_msg("%s evidence lacks \"%s\": %s", f->id, part, f->evidence);
}

/* ---- records ---- */

static struct pw_rec_api call(uint16_t ev, uint64_t t0, uint64_t t1, uint64_t ext)
{
	struct pw_rec_api r = mkapi(ev, T, t0, t1, 0, 0, 0, 0);
	r.corr = ext;
	return r;
}

static struct pw_rec_gpu kern(uint32_t corr, uint64_t t0, uint64_t t1, uint64_t name)
{
	return mkact(PW_EV_GPU_KERNEL, CUPTI, t0, t1, 0, 7, corr, 0, name);
}

static struct pw_rec_gpu extcorr(uint32_t corr, uint64_t ext)
{
	return mkact(PW_EV_GPU_EXTCORR, CUPTI, 0, 0, -1, 0, corr, ext, 1);
}

static struct pw_rec_gpu gcopy(uint32_t corr, uint64_t t0, uint64_t t1, uint64_t bytes, unsigned src, unsigned dst)
{
	return mkact(PW_EV_GPU_MEMCPY, CUPTI, t0, t1, 0, 7, corr, bytes, PW_COPY_HTOD | src << 8 | dst << 16);
}

/* Kernel i launched by T through a wrapped cudaLaunchKernel [launch, launch + 1000) and running [t0, t1). */
struct run {
	int fd;
	struct pw_rec_api calls[64];
	struct pw_rec_gpu act[128];
	struct pw_rec_call cpu[16];
	size_t ncalls, nact, ncpu;
	uint32_t next;
};

static void launched(struct run *r, uint64_t launch, uint64_t t0, uint64_t t1, uint64_t name)
{
	uint32_t id = ++r->next;
	assert_true(r->ncalls < NREC(r->calls) && r->nact + 2 <= NREC(r->act));
	r->calls[r->ncalls++] = call(PW_EV_CUDA_LAUNCH_KERNEL, launch, launch + 1000, id);
	r->act[r->nact++] = extcorr(id, id);
	r->act[r->nact++] = kern(id, t0, t1, name);
}

static void cpu_call(struct run *r, uint16_t ev, uint64_t t0, uint64_t t1)
{
	assert_true(r->ncpu < NREC(r->cpu));
	r->cpu[r->ncpu++] = mkrec(ev, T, t0, t1, 0, 3, 0, 0);
}

static void run_end(struct run *r)
{
	put_api_records(r->fd, r->calls, r->ncalls);
	put_records(r->fd, r->cpu, r->ncpu);
	put_act_records(r->fd, r->act, r->nact); /* activity last: it arrives late */
	pwt_end(r->fd);
}

enum idle_kind { IDLE_INPUT, IDLE_SYNC, IDLE_SYNC_BRIEF, IDLE_CPU, IDLE_SLEEP };

/* One gap of gap_ns on GPU 0 between two 10 us kernels, with T doing `kind` in it. */
static void idle_case(struct fx *fx, enum idle_kind kind, uint64_t gap_ns)
{
	struct run r = {.fd = pwt_open(fx, 10)};
	uint64_t g0 = 20000, g1 = g0 + gap_ns;
	launched(&r, 2000, 10000, g0, KNAME);
	launched(&r, g1 - 2000, g1, g1 + 10000, KNAME);
	switch (kind) {
	case IDLE_INPUT:
		cpu_call(&r, PW_EV_READ, g0, g0 + gap_ns * 6 / 10);
		break;
	case IDLE_SLEEP:
		cpu_call(&r, PW_EV_NANOSLEEP, g0, g0 + gap_ns * 6 / 10);
		break;
	case IDLE_SYNC: /* in the synchronising call for half the gap */
		r.calls[r.ncalls++] = call(PW_EV_CUDA_DEVICE_SYNCHRONIZE, g0 - 500, g0 + (gap_ns + 1) / 2 - 500, 0);
		break;
	case IDLE_SYNC_BRIEF: /* a synchronising call that waited briefly, then CPU work */
		r.calls[r.ncalls++] = call(PW_EV_CUDA_DEVICE_SYNCHRONIZE, g0 - 500, g0 + 500, 0);
		break;
	case IDLE_CPU:
		break;
	}
	run_end(&r);
}

/* ---- idle rules ---- */

static void test_input_bound(void **state)
{
	struct fx *fx = *state;
	idle_case(fx, IDLE_INPUT, 500000);
	const struct pw_rank_report *r = analyze_ok(fx);
	expect_only(r, "input_bound", 0.05);
	const struct pw_finding *f = find(r, "input_bound");
	expect_evidence(f, "GPU 0 sat idle 500 us (5.0% of wall time) in 1 gap");
	expect_evidence(f, "read 300 us");
	assert_non_null(strstr(f->advice, "num_workers"));
	assert_non_null(strstr(f->advice, "pin_memory=True"));
}

static void test_input_bound_below(void **state)
{
	struct fx *fx = *state;
	idle_case(fx, IDLE_INPUT, 499999);
	const struct pw_rank_report *r = analyze_ok(fx);
	assert_int_equal(r->act->classes[PW_GAP_INPUT].gaps, 1);
	expect_only(r, NULL, 0);
}

static void test_sync_bound(void **state)
{
	struct fx *fx = *state;
	idle_case(fx, IDLE_SYNC, 500000);
	const struct pw_rank_report *r = analyze_ok(fx);
	expect_only(r, "sync_bound", 0.05);
	expect_evidence(find(r, "sync_bound"), "most after cudaDeviceSynchronize (1 time, 500 us)");
	assert_non_null(strstr(find(r, "sync_bound")->advice, ".item()"));
}

static void test_sync_bound_below(void **state)
{
	struct fx *fx = *state;
	idle_case(fx, IDLE_SYNC, 499999);
	const struct pw_rank_report *r = analyze_ok(fx);
	assert_int_equal(r->act->classes[PW_GAP_SYNC].gaps, 1);
	expect_only(r, NULL, 0);
}

/* A gap that began in a synchronising call which had waited 500 ns, then 499.5 us of CPU work: removing the
 * call would not have kept the GPU busy, so the gap is the CPU's. */
static void test_sync_brief_is_cpu(void **state)
{
	struct fx *fx = *state;
	idle_case(fx, IDLE_SYNC_BRIEF, 500000);
	const struct pw_rank_report *r = analyze_ok(fx);
	assert_int_equal(r->act->classes[PW_GAP_SYNC].gaps, 0);
	expect_only(r, "cpu_bound", 0.05);
}

static void test_cpu_bound(void **state)
{
	struct fx *fx = *state;
	idle_case(fx, IDLE_CPU, 500000);
	const struct pw_rank_report *r = analyze_ok(fx);
	expect_only(r, "cpu_bound", 0.05);
	expect_evidence(find(r, "cpu_bound"), "without recorded I/O or waits (recorded calls in them: cudaLaunchKernel");
	assert_non_null(strstr(find(r, "cpu_bound")->advice, "py-spy"));
}

static void test_cpu_bound_below(void **state)
{
	struct fx *fx = *state;
	idle_case(fx, IDLE_CPU, 499999);
	const struct pw_rank_report *r = analyze_ok(fx);
	assert_int_equal(r->act->classes[PW_GAP_CPU].gaps, 1);
	expect_only(r, NULL, 0);
}

/* Sleeps have a cause but no rule. */
static void test_sleep_no_rule(void **state)
{
	struct fx *fx = *state;
	idle_case(fx, IDLE_SLEEP, 2000000);
	const struct pw_rank_report *r = analyze_ok(fx);
	assert_int_equal(r->act->classes[PW_GAP_SLEEP].idle_ns, 2000000);
	expect_only(r, NULL, 0);
}

/* n gaps of gap_ns between n + 1 kernels of kernel_ns. */
static void launch_case(struct fx *fx, int n, uint64_t gap_ns, uint64_t kernel_ns)
{
	struct run r = {.fd = pwt_open(fx, 10)};
	uint64_t t = 20000;
	for (int i = 0; i <= n; i++) {
		launched(&r, t - 1500, t, t + kernel_ns, KNAME);
		t += kernel_ns + gap_ns;
	}
	run_end(&r);
}

static void test_launch_bound(void **state)
{
	struct fx *fx = *state;
	launch_case(fx, 10, 50000, 10000);
	const struct pw_rank_report *r = analyze_ok(fx);
	assert_int_equal(r->act->classes[PW_GAP_LAUNCH].gaps, 10);
	expect_only(r, "launch_bound", 0.05);
	expect_evidence(find(r, "launch_bound"), "in 10 gaps shorter than 100 us between kernels whose median duration is "
						  "10.0 us");
	assert_non_null(strstr(find(r, "launch_bound")->advice, "CUDA graph"));
}

static void test_launch_bound_below(void **state)
{
	struct fx *fx = *state;
	launch_case(fx, 10, 49999, 10000); /* idle just under 5 % */
	expect_only(analyze_ok(fx), NULL, 0);
}

static void test_launch_bound_long_kernels(void **state)
{
	struct fx *fx = *state;
	launch_case(fx, 10, 50000, 50000); /* median kernel 50 us: not short */
	const struct pw_rank_report *r = analyze_ok(fx);
	assert_int_equal(r->act->kernel_median_ns, 50000);
	assert_int_equal(r->act->classes[PW_GAP_LAUNCH].idle_ns, 500000);
	expect_only(r, NULL, 0);
}

/* ---- copies ---- */

static void pageable_case(struct fx *fx, uint64_t ns)
{
	struct run r = {.fd = pwt_open(fx, 10)};
	r.act[r.nact++] = gcopy(1, 10000, 10000 + ns, 100000000, PW_ACT_MEM_PAGEABLE, PW_ACT_MEM_DEVICE);
	r.act[r.nact++] = gcopy(2, 300000, 301000, 4000000, PW_ACT_MEM_PINNED, PW_ACT_MEM_DEVICE);
	run_end(&r);
}

static void test_pageable_memcpy(void **state)
{
	struct fx *fx = *state;
	pageable_case(fx, 200000);
	const struct pw_rank_report *r = analyze_ok(fx);
	expect_only(r, "pageable_memcpy", 0.02);
	const struct pw_finding *f = find(r, "pageable_memcpy");
	expect_evidence(f, "1 GPU copy to or from pageable host memory (100 MB) took 200 us of GPU time (2.0% of wall "
			   "time) at 500 GB/s; the 1 pinned copies ran at 4000 GB/s");
	assert_non_null(strstr(f->advice, "pin_memory=True"));
}

static void test_pageable_memcpy_below(void **state)
{
	struct fx *fx = *state;
	pageable_case(fx, 199999);
	expect_only(analyze_ok(fx), NULL, 0);
}

/* n successful cudaMemcpy calls of `bytes` taking cpu_ns each on the CPU, and with gpu_ns > 0, each linked to
 * a GPU copy of gpu_ns. */
static void small_case(struct fx *fx, int n, uint64_t bytes, uint64_t cpu_ns, uint64_t gpu_ns)
{
	int fd = pwt_open(fx, 10);
	static struct pw_rec_api calls[200];
	static struct pw_rec_gpu act[400];
	size_t na = 0;
	assert_true(n <= 200);
	for (int i = 0; i < n; i++) {
		uint64_t t = 20000 + (uint64_t)i * 20000;
		calls[i] = mkapi(PW_EV_CUDA_MEMCPY, T, t, t + cpu_ns, 0, bytes, 0, 0);
		calls[i].sub = PW_COPY_HTOD;
		calls[i].corr = (uint64_t)i + 1;
		if (gpu_ns) {
			act[na++] = extcorr((uint32_t)i + 1, (uint64_t)i + 1);
			act[na++] = gcopy((uint32_t)i + 1, t + 100, t + 100 + gpu_ns, bytes, PW_ACT_MEM_PINNED,
					  PW_ACT_MEM_DEVICE);
		}
	}
	put_api_records(fd, calls, (size_t)n);
	put_act_records(fd, act, na);
	pwt_end(fd);
}

static void test_small_memcpy_cpu(void **state)
{
	struct fx *fx = *state;
	small_case(fx, 100, 65535, 5000, 0); /* no GPU activity: the rule is still evaluated */
	const struct pw_rank_report *r = analyze_ok(fx);
	assert_false(pw_act_recorded(r->act));
	expect_only(r, "small_memcpy", 0.05);
	expect_evidence(find(r, "small_memcpy"), "100 copy calls of under 64 KiB each took 500 us in the calls on the CPU "
						 "(5.0% of wall time)");
}

static void test_small_memcpy_gpu(void **state)
{
	struct fx *fx = *state;
	small_case(fx, 100, 1024, 1000, 5000); /* the GPU time decides */
	const struct pw_rank_report *r = analyze_ok(fx);
	assert_int_equal(r->act->small_copy_gpu_ns, 500000);
	assert_int_equal(r->act->small_copy_cpu_ns, 100000);
	expect_only(r, "small_memcpy", 0.05);
	expect_evidence(find(r, "small_memcpy"), "and 500 us of GPU copy time");
}

static void test_small_memcpy_below(void **state)
{
	struct fx *fx = *state;
	small_case(fx, 99, 65535, 6000, 0); /* 6 % but 99 calls */
	expect_only(analyze_ok(fx), NULL, 0);
}

static void test_small_memcpy_below_time(void **state)
{
	struct fx *fx = *state;
	small_case(fx, 100, 65535, 4999, 0);
	expect_only(analyze_ok(fx), NULL, 0);
}

static void test_small_memcpy_not_small(void **state)
{
	struct fx *fx = *state;
	small_case(fx, 100, 65536, 6000, 0); /* 64 KiB is not under 64 KiB */
	const struct pw_rank_report *r = analyze_ok(fx);
	expect_only(r, NULL, 0);
}

/* ---- collectives ---- */

static void coll_case(struct fx *fx, uint64_t kernel_ns, int linked)
{
	int fd = pwt_open(fx, 10);
	struct pw_rec_api c = call(PW_EV_NCCL_ALL_REDUCE, 5000, 6000, linked ? 1 : 0);
	c.c.arg0 = 1000000; /* floats */
	c.sub = 7;          /* ncclFloat32 */
	c.a[2] = 4 | (uint64_t)1 << 32;
	put_api_records(fd, &c, 1);
	struct pw_rec_gpu g[] = {
		extcorr(1, 1), kern(1, 10000, 10000 + kernel_ns, NCCL_NAME),
		mkact(PW_EV_GPU_DEVICE, CUPTI, 0, 0, 0, 0, 0, 3000000000ull, DEV_NAME),
	};
	put_act_records(fd, linked ? g : g + 1, linked ? NREC(g) : NREC(g) - 1);
	pwt_end(fd);
}

static void test_collective_bound(void **state)
{
	struct fx *fx = *state;
	coll_case(fx, 2000000, 1);
	const struct pw_rank_report *r = analyze_ok(fx);
	expect_only(r, "collective_bound", 0.2);
	/* 4 MB, busbw factor 2(n-1)/n = 1.5: 6 MB over 2 ms */
	expect_evidence(find(r, "collective_bound"), "NCCL kernels ran 2.00 ms on GPU 0 (NVIDIA Test GPU) (20.0% of wall "
						     "time) in 1 kernel; bus bandwidth 3.00 GB/s");
	assert_non_null(strstr(find(r, "collective_bound")->advice, "NCCL_DEBUG=INFO"));
}

static void test_collective_bound_unlinked(void **state)
{
	struct fx *fx = *state;
	coll_case(fx, 2000000, 0);
	const struct pw_rank_report *r = analyze_ok(fx);
	expect_only(r, "collective_bound", 0.2);
	expect_evidence(find(r, "collective_bound"), "bus bandwidth unknown");
}

static void test_collective_bound_below(void **state)
{
	struct fx *fx = *state;
	coll_case(fx, 1999999, 1);
	expect_only(analyze_ok(fx), NULL, 0);
}

/* ---- ranking and reports ---- */

/* Several findings, largest share first; the text's section and the JSON's keys. */
static void test_ranking_and_reports(void **state)
{
	struct fx *fx = *state;
	struct run r = {.fd = pwt_open(fx, 10)};
	/* an input gap of 1 ms (10 %), a sync gap of 600 us (6 %), a pageable copy of 300 us (3 %) */
	launched(&r, 2000, 10000, 20000, KNAME);
	cpu_call(&r, PW_EV_READ, 20000, 800000);
	launched(&r, 1010000, 1020000, 1030000, KNAME);
	r.calls[r.ncalls++] = call(PW_EV_CUDA_STREAM_SYNCHRONIZE, 1025000, 1331000, 0); /* half the gap */
	launched(&r, 1620000, 1630000, 1640000, KNAME);
	r.act[r.nact++] = gcopy(900, 1640000, 1940000, 3000000, PW_ACT_MEM_PAGEABLE, PW_ACT_MEM_DEVICE);
	run_end(&r);
	const struct pw_rank_report *rr = analyze_ok(fx);
	assert_int_equal(rr->nfindings, 3);
	assert_string_equal(rr->findings[0].id, "input_bound");
	assert_true(fabs(rr->findings[0].share - 0.1) < 1e-12);
	assert_string_equal(rr->findings[1].id, "sync_bound");
	assert_true(fabs(rr->findings[1].share - 0.06) < 1e-12);
	assert_string_equal(rr->findings[2].id, "pageable_memcpy");
	assert_true(fabs(rr->findings[2].share - 0.03) < 1e-12);

	char err[512] = "";
	if (pw_write_reports(&fx->an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
	size_t len;
	char *t = fx_slurp(fx, "rank0.txt", &len);
	const char *w = strstr(t, "What to fix first\n  1. input_bound, 10.0% of wall time: GPU 0 sat idle 1.00 ms");
	if (!w) {
		fprintf(stderr, "%s", t);
		fail_msg("rank0.txt lacks the findings");
	}
	assert_true(w < strstr(t, "Processes ("));
	assert_non_null(strstr(t, "  2. sync_bound, 6.0% of wall time:"));
	assert_non_null(strstr(t, "  3. pageable_memcpy, 3.0% of wall time:"));
	assert_non_null(strstr(t, "     Fix: Load and preprocess in background workers"));
	assert_null(strstr(t, "Nothing stands out"));
	free(t);

	t = fx_slurp(fx, "rank0.json", &len);
	struct jr *doc = jr_parse(t, strlen(t));
	assert_non_null(doc);
	const struct jr *fs = jr_get(doc, "findings");
	assert_int_equal(fs->n, 3);
	const struct jr *f = jr_at(fs, 0);
	assert_true(jr_is(jr_get(f, "id"), "input_bound"));
	assert_true(fabs(jr_num(jr_get(f, "share")) - 0.1) < 1e-9);
	assert_true(jr_get(f, "evidence")->len > 20);
	assert_true(jr_get(f, "advice")->len > 20);
	assert_true(jr_is(jr_get(jr_at(fs, 2), "id"), "pageable_memcpy"));
	jr_free(doc);
	free(t);
}

/* ---- rules on calls alone (no GPU activity): ranks of HWALL, so that start-up can reach its minimum ---- */

#define HWALL 1000000000ull
#define MS 1000000ull

/* A raw trace of pid (child of ppid) from START to START + HWALL holding recs; strings 8 (a checkpoint's
 * path), 16 (a data file's), 24 (a library's) and CKPT_K(k) (/ckpt/ckpt-k.pt, k < 6). */
#define CKPT_K(k) (32u + 8u * (k))
static void host_file(struct fx *fx, int pid, int ppid, const struct pw_rec_call *recs, size_t n,
		      const struct pw_rec_api *gpu, size_t ngpu)
{
	char path[256];
	snprintf(path, sizeof path, "%s/0-%d.pwt", fx->raw, pid);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pw_raw_write_header(fd), 0);
	struct pw_raw_proc p = {0};
	p.pid = pid;
	p.ppid = ppid;
	p.world_size = 1;
	p.clock_kind = PW_CLOCK_MONOTONIC;
	p.domain_mask = (1u << PW_DOM_COUNT) - 1;
	p.clock0.ticks = p.clock0.ns = START;
	put_proc(fd, p, "train", 5, "/bin/train", "node0");
	put_clock(fd, START, START);
	put_string(fd, 8, "/ckpt/model-epoch3.pt");
	put_string(fd, 16, "/data/shard-0.bin.txt");
	put_string(fd, 24, "/lib/libtorch.so");
	for (unsigned k = 0; k < 6; k++) {
		char name[32];
		snprintf(name, sizeof name, "/ckpt/ckpt-%u.pt", k);
		put_string(fd, CKPT_K(k), name);
	}
	if (n)
		put_records(fd, recs, n);
	if (ngpu)
		put_api_records(fd, gpu, ngpu);
	fx_raw_end(fd, START + HWALL);
}

static const struct pw_rank_report *host_analyze(struct fx *fx)
{
	fx_analyze(fx);
	assert_int_equal(fx->an.nranks, 1);
	assert_int_equal(fx->an.ranks[0].wall_ns, HWALL);
	return &fx->an.ranks[0];
}

/* Before the first GPU call at ms: 2 loads of 10 ms, 3 opens, 4 stats (one more of each after it). */
static void startup_case(struct fx *fx, uint64_t ms)
{
	uint64_t s = START + ms * MS;
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_DLOPEN, T, START + 10 * MS, START + 20 * MS, 1, 2, 24, 0),
		mkrec(PW_EV_DLOPEN, T, START + 30 * MS, START + 40 * MS, 1, 2, 24, 0),
		mkrec(PW_EV_OPEN, T, START + 50 * MS, START + 51 * MS, 3, 3, 16, 0),
		mkrec(PW_EV_OPEN, T, START + 52 * MS, START + 53 * MS, 4, 4, 16, 0),
		mkrec(PW_EV_OPEN, T, START + 54 * MS, START + 55 * MS, 5, 5, 16, 0),
		mkrec(PW_EV_STAT, T, START + 60 * MS, START + 61 * MS, 0, AT_FDCWD, 16, 0),
		mkrec(PW_EV_STAT, T, START + 62 * MS, START + 63 * MS, 0, AT_FDCWD, 16, 0),
		mkrec(PW_EV_STAT, T, START + 64 * MS, START + 65 * MS, 0, AT_FDCWD, 16, 0),
		mkrec(PW_EV_STAT, T, START + 66 * MS, START + 67 * MS, 0, AT_FDCWD, 16, 0),
		mkrec(PW_EV_DLOPEN, T, s + MS, s + 2 * MS, 1, 2, 24, 0),
		mkrec(PW_EV_OPEN, T, s + 3 * MS, s + 4 * MS, 6, 6, 16, 0),
		mkrec(PW_EV_STAT, T, s + 5 * MS, s + 6 * MS, 0, AT_FDCWD, 16, 0),
	};
	struct pw_rec_api gpu[] = {call(PW_EV_CUDA_LAUNCH_KERNEL, s, s + 1000, 0)};
	host_file(fx, 40, 1, recs, NREC(recs), gpu, NREC(gpu));
}

static void test_startup_bound(void **state)
{
	struct fx *fx = *state;
	startup_case(fx, 250);
	const struct pw_rank_report *r = host_analyze(fx);
	const struct pw_finding *f = find(r, "startup_bound");
	assert_non_null(f);
	assert_true(fabs(f->share - 0.25) < 1e-6);
	expect_evidence(f, "250 ms of 1.00 s passed before the first GPU library call");
	expect_evidence(f, "2 libraries loaded (20.0 ms in dlopen), 3 files opened and 4 stat calls");
}

static void test_startup_bound_below(void **state)
{
	struct fx *fx = *state;
	startup_case(fx, 240);
	assert_null(find(host_analyze(fx), "startup_bound"));
}

/* No step to tell start-up from the work (no range, no GPU call): no finding, however long the loads. */
static void test_startup_no_step(void **state)
{
	struct fx *fx = *state;
	struct pw_rec_call recs[] = {mkrec(PW_EV_DLOPEN, T, START + MS, START + 900 * MS, 1, 2, 24, 0)};
	host_file(fx, 40, 1, recs, NREC(recs), NULL, 0);
	assert_null(find(host_analyze(fx), "startup_bound"));
}

/* A checkpoint written in calls of 50 ms (5 %) + extra_ms; a data file's 200 ms of writes never count. */
static void checkpoint_case(struct fx *fx, uint64_t extra_ms)
{
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_OPEN, T, START + 100 * MS, START + 101 * MS, 5, 5, 8, 0),
		mkrec(PW_EV_WRITE, T, START + 110 * MS, START + 140 * MS + extra_ms * MS, 1 << 20, 5, 1 << 20, 0),
		mkrec(PW_EV_FSYNC, T, START + 150 * MS, START + 168 * MS, 0, 5, 0, 0),
		mkrec(PW_EV_CLOSE, T, START + 170 * MS, START + 171 * MS, 0, 5, 0, 0),
		mkrec(PW_EV_OPEN, T, START + 200 * MS, START + 201 * MS, 6, 6, 16, 0),
		mkrec(PW_EV_WRITE, T, START + 210 * MS, START + 410 * MS, 4096, 6, 4096, 0),
	};
	host_file(fx, 40, 1, recs, NREC(recs), NULL, 0);
}

static void test_checkpoint_bound(void **state)
{
	struct fx *fx = *state;
	checkpoint_case(fx, 0);
	const struct pw_finding *f = find(host_analyze(fx), "checkpoint_bound");
	assert_non_null(f);
	assert_true(fabs(f->share - 0.05) < 1e-6);
	expect_evidence(f, "1 checkpoint save to /ckpt/model-epoch3.pt (1.05 MB) took 50.0 ms in calls on it.");
}

#define SAVE_BYTES (32u << 20)

/* Six saves of 32 MiB 100 ms apart, each an open (1 ms), a write (10 ms; the fourth's 30 ms), an fsync (5 ms)
 * and a close (1 ms) on fd 5: all to one file (string 8), or each to a file of its own (CKPT_K). The last
 * writes half its bytes through a dup of fd 5, as one save. */
static void saves_case(struct fx *fx, int distinct)
{
	struct pw_rec_call recs[6 * 5 + 2];
	size_t n = 0;
	for (unsigned k = 0; k < 6; k++) {
		uint64_t t = START + k * 100 * MS, w = k == 3 ? 30 : 10;
		recs[n++] = mkrec(PW_EV_OPEN, T, t, t + MS, 5, 5, distinct ? CKPT_K(k) : 8, 0);
		if (k == 5) {
			recs[n++] = mkrec(PW_EV_DUP, T, t + MS, t + MS, 9, 9, 5, 0);
			recs[n++] = mkrec(PW_EV_WRITE, T, t + 2 * MS, t + 7 * MS, SAVE_BYTES / 2, 9, SAVE_BYTES / 2, 0);
			recs[n++] = mkrec(PW_EV_WRITE, T, t + 7 * MS, t + 12 * MS, SAVE_BYTES / 2, 5, SAVE_BYTES / 2, 0);
			recs[n++] = mkrec(PW_EV_CLOSE, T, t + 12 * MS, t + 12 * MS, 0, 9, 0, 0);
		} else {
			recs[n++] = mkrec(PW_EV_WRITE, T, t + 2 * MS, t + (2 + w) * MS, SAVE_BYTES, 5, SAVE_BYTES, 0);
		}
		recs[n++] = mkrec(PW_EV_FSYNC, T, t + 40 * MS, t + 45 * MS, 0, 5, 0, 0);
		recs[n++] = mkrec(PW_EV_CLOSE, T, t + 50 * MS, t + 51 * MS, 0, 5, 0, 0);
	}
	host_file(fx, 40, 1, recs, n, NULL, 0);
}

/* One checkpoint rewritten six times is six saves of one file, not one file of six times the bytes (issue 32):
 * 5 x 17 ms + 37 ms of calls. */
static void test_checkpoint_rewrites(void **state)
{
	struct fx *fx = *state;
	saves_case(fx, 0);
	const struct pw_rank_report *r = host_analyze(fx);
	const struct pw_finding *f = find(r, "checkpoint_bound");
	assert_non_null(f);
	assert_true(fabs(f->share - 0.122) < 1e-6);
	expect_evidence(f, "6 checkpoint saves to /ckpt/model-epoch3.pt (33.6 MB each, 201 MB in all) took 122 ms in "
			   "calls on it; the longest save took 37.0 ms.");
	size_t i = 0;
	while (i < r->nfiles && strcmp(r->files[i].path, "/ckpt/model-epoch3.pt"))
		i++;
	assert_true(i < r->nfiles);
	assert_int_equal(r->files[i].saves, 6);
	assert_int_equal(r->files[i].save_min_bytes, SAVE_BYTES);
	assert_int_equal(r->files[i].save_max_bytes, SAVE_BYTES);
	assert_int_equal(r->files[i].save_max_ns, 37 * MS);
	assert_int_equal(r->files[i].write_bytes, 6ull * SAVE_BYTES);
}

static void test_checkpoint_distinct_files(void **state)
{
	struct fx *fx = *state;
	saves_case(fx, 1);
	const struct pw_finding *f = find(host_analyze(fx), "checkpoint_bound");
	assert_non_null(f);
	assert_true(fabs(f->share - 0.122) < 1e-6);
	expect_evidence(f, "6 checkpoint saves to 6 files (33.6 MB each, 201 MB in all) took 122 ms in calls on them; "
			   "the longest save took 37.0 ms (/ckpt/ckpt-3.pt).");
}

/* Saves of different sizes: the smallest and the largest. */
static void test_checkpoint_sizes(void **state)
{
	struct fx *fx = *state;
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_OPEN, T, START, START + MS, 5, 5, 8, 0),
		mkrec(PW_EV_WRITE, T, START + MS, START + 31 * MS, 1 << 20, 5, 1 << 20, 0),
		mkrec(PW_EV_CLOSE, T, START + 31 * MS, START + 32 * MS, 0, 5, 0, 0),
		mkrec(PW_EV_OPEN, T, START + 100 * MS, START + 101 * MS, 5, 5, 8, 0),
		mkrec(PW_EV_WRITE, T, START + 101 * MS, START + 131 * MS, 2 << 20, 5, 2 << 20, 0),
		mkrec(PW_EV_CLOSE, T, START + 131 * MS, START + 132 * MS, 0, 5, 0, 0),
	};
	host_file(fx, 40, 1, recs, NREC(recs), NULL, 0);
	expect_evidence(find(host_analyze(fx), "checkpoint_bound"),
			"2 checkpoint saves to /ckpt/model-epoch3.pt (1.05 MB to 2.10 MB each, 3.15 MB in all)");
}

static void test_checkpoint_bound_below(void **state)
{
	struct fx *fx = *state;
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_OPEN, T, START + 100 * MS, START + 101 * MS, 5, 5, 8, 0),
		mkrec(PW_EV_WRITE, T, START + 110 * MS, START + 158 * MS, 1 << 20, 5, 1 << 20, 0),
	};
	host_file(fx, 40, 1, recs, NREC(recs), NULL, 0);
	assert_null(find(host_analyze(fx), "checkpoint_bound"));
}

/* The main thread of 40 polls wait_ms while its child 41 reads child_kib KiB of data. */
static void host_input_case(struct fx *fx, uint64_t wait_ms, uint64_t child_kib)
{
	struct pw_rec_call main_recs[] = {mkrec(PW_EV_POLL, 40, START + 10 * MS, START + (10 + wait_ms) * MS, 1, 0, 0, 0)};
	host_file(fx, 40, 1, main_recs, NREC(main_recs), NULL, 0);
	struct pw_rec_call child[] = {
		mkrec(PW_EV_OPEN, 41, START + 20 * MS, START + 21 * MS, 3, 3, 16, 0),
		mkrec(PW_EV_READ, 41, START + 30 * MS, START + 40 * MS, (int64_t)child_kib << 10, 3, child_kib << 10, 0),
	};
	host_file(fx, 41, 40, child, NREC(child), NULL, 0);
}

static void test_host_input_bound(void **state)
{
	struct fx *fx = *state;
	host_input_case(fx, 200, 1024);
	const struct pw_finding *f = find(host_analyze(fx), "input_bound");
	assert_non_null(f);
	assert_true(fabs(f->share - 0.20) < 1e-6);
	expect_evidence(f, "The main thread of pid 40 waited 200 ms while 1 child process read 1.05 MB (it read 0 B");
}

static void test_host_input_bound_below(void **state)
{
	struct fx *fx = *state;
	host_input_case(fx, 190, 1024);
	assert_null(find(host_analyze(fx), "input_bound"));
}

static void test_host_input_bound_little_read(void **state)
{
	struct fx *fx = *state;
	host_input_case(fx, 500, 1000);
	assert_null(find(host_analyze(fx), "input_bound"));
}

/* A raw trace of image image of pid (child of ppid) from start, string 16 a data file's; returns its fd. */
static int image_file(struct fx *fx, int pid, int ppid, uint32_t image, uint64_t start)
{
	char path[256];
	if (image)
		snprintf(path, sizeof path, "%s/0-%d.%u.pwt", fx->raw, pid, image);
	else
		snprintf(path, sizeof path, "%s/0-%d.pwt", fx->raw, pid);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pw_raw_write_header(fd), 0);
	struct pw_raw_proc p = {.pid = pid, .ppid = ppid, .world_size = 1, .clock_kind = PW_CLOCK_MONOTONIC,
				.domain_mask = (1u << PW_DOM_COUNT) - 1, .clock0 = {start, start}, .image = image};
	put_proc(fd, p, "train", 5, "/bin/train", "node0");
	put_clock(fd, start, start);
	put_string(fd, 16, "/data/shard-0.bin.txt");
	return fd;
}

/* Ends an image by an exec at end, then closes its file. */
static void image_execed(int fd, uint64_t end)
{
	struct pw_raw_end e = {0};
	e.how = PW_END_EXECED;
	e.end_ticks = end;
	put_end(fd, &e);
	close(fd);
}

/* A loader worker, child of 40, from start_ms to start_ms + 100, its first read startup_ms after its start;
 * spawned, it exec'd 1 ms after its start (fork, then exec of the interpreter) and reads in its second
 * image. */
static void worker_file(struct fx *fx, int pid, uint64_t start_ms, uint64_t startup_ms, int spawned)
{
	uint64_t s = START + start_ms * MS;
	int fd = image_file(fx, pid, 40, 0, s);
	if (spawned) {
		image_execed(fd, s + MS);
		fd = image_file(fx, pid, 40, 1, s + 2 * MS);
	}
	uint64_t r = s + startup_ms * MS;
	struct pw_rec_call recs[] = {mkrec(PW_EV_OPEN, (uint32_t)pid, r - MS / 2, r - MS / 4, 3, 3, 16, 0),
				     mkrec(PW_EV_READ, (uint32_t)pid, r, r + MS, 4096, 3, 4096, 0)};
	put_records(fd, recs, NREC(recs));
	fx_raw_end(fd, s + 100 * MS);
}

/* rounds of two workers, taking 20 ms and 30 ms before their first reads: 20 ms waited per round, 60 ms (6 %)
 * over three rounds; two rounds are too few to tell restarts */
static void worker_rounds(struct fx *fx, int rounds, int spawned)
{
	for (int i = 0; i < rounds; i++) {
		worker_file(fx, 100 + 2 * i, 100 + 200 * (uint64_t)i, 20, spawned);
		worker_file(fx, 101 + 2 * i, 105 + 200 * (uint64_t)i, 30, spawned);
	}
}

static void worker_case(struct fx *fx, int rounds, int spawned)
{
	host_file(fx, 40, 1, NULL, 0, NULL, 0);
	worker_rounds(fx, rounds, spawned);
}

static void test_worker_startup(void **state)
{
	struct fx *fx = *state;
	worker_case(fx, 3, 0);
	const struct pw_finding *f = find(host_analyze(fx), "worker_startup");
	assert_non_null(f);
	assert_true(fabs(f->share - 0.06) < 1e-6);
	expect_evidence(f, "pid 40 started 6 worker processes in 3 rounds of up to 2: each took 25.0 ms");
}

/* Spawned workers (fork, then exec) read in their second image: each starts up from its fork to that read. */
static void test_worker_startup_spawned(void **state)
{
	struct fx *fx = *state;
	worker_case(fx, 3, 1);
	const struct pw_finding *f = find(host_analyze(fx), "worker_startup");
	assert_non_null(f);
	assert_true(fabs(f->share - 0.06) < 1e-6);
	expect_evidence(f, "pid 40 started 6 worker processes in 3 rounds of up to 2: each took 25.0 ms");
}

/* The same children started by a wrapper (pid 40's first image) before it exec'd the program are the
 * wrapper's (a pyenv shim's lookups), not the program's workers. */
static void test_worker_startup_wrapper_children(void **state)
{
	struct fx *fx = *state;
	image_execed(image_file(fx, 40, 1, 0, START), START + 800 * MS);
	fx_raw_end(image_file(fx, 40, 1, 1, START + 801 * MS), START + HWALL);
	worker_rounds(fx, 3, 1);
	const struct pw_rank_report *r = host_analyze(fx);
	assert_int_equal(r->nprocs, 2 + 12);
	assert_null(find(r, "worker_startup"));
}

static void test_worker_startup_two_rounds(void **state)
{
	struct fx *fx = *state;
	worker_case(fx, 2, 0);
	assert_null(find(host_analyze(fx), "worker_startup"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_startup_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_startup_bound_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_startup_no_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoint_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoint_bound_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoint_rewrites, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoint_distinct_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoint_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_input_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_input_bound_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_input_bound_little_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_startup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_startup_spawned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_startup_wrapper_children, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_startup_two_rounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_input_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_input_bound_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_bound_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_brief_is_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_bound_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sleep_no_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launch_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launch_bound_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launch_bound_long_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pageable_memcpy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pageable_memcpy_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_memcpy_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_memcpy_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_memcpy_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_memcpy_below_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_memcpy_not_small, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collective_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collective_bound_unlinked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collective_bound_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ranking_and_reports, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
