#define _GNU_SOURCE
/* Unit tests for the GPU activity model (collector/model/gpu_activity.c) and its reports (report_gpu.c): each test
 * writes raw traces with GPU library calls (struct pw_rec_api), CUPTI activity records (struct pw_rec_gpu)
 * and CPU calls into OUT/raw of a private output directory (monotonic clock: ticks are ns, so times are
 * exact), runs pw_analyze and checks the figures exactly: busy time as a union, idle gaps, correlation
 * through external ids and CUPTI API records, launch latency and queue depth, copies by memory kind, records
 * late and out of order, activity kept out of the call tables, gap causes from a second read of the files,
 * bounded tables, hostile records; then the reports, parsed back. */
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
#include "../../collector/model/gpu_analysis.h"
#include "../../collector/model/gpu_names.h"
#include "../../collector/model/timeline.h"
#include "../../collector/render.h"
#include "../../collector/report/report_format.h"
#include "../../collector/symbols/demangle.h"
#include "json_reader.h"
#include "out_files.h"
#include "out_fixture.h"
#include "raw_writer.h"

#define T 100      /* the thread that launches */
#define CUPTI 999  /* the thread CUPTI delivers its buffers on */
#define KNAME 16   /* string reference of the kernel name */
#define NREC(a) (sizeof(a) / sizeof((a)[0]))

static const char *const kernel_name = "_Z10fwd_kernelPfS_i";

/* ---- the output directory ---- */

static int pwt_open(const struct fx *fx, int pid, int rank, uint64_t start)
{
	int fd = fx_raw_open(fx, pid, rank, start, "train", 5);
	put_string(fd, KNAME, kernel_name);
	return fd;
}

static void reports_ok(struct fx *fx)
{
	char err[512] = "";
	if (pw_write_reports(&fx->an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
}

static const struct pw_rank_report *rank_n(const struct fx *fx, size_t i)
{
	assert_true(fx->an.nranks > i);
	return &fx->an.ranks[i];
}

static const struct pw_act_report *act0(const struct fx *fx)
{
	const struct pw_act_report *a = rank_n(fx, 0)->act;
	assert_non_null(a);
	return a;
}

static const struct pw_act_device *dev(const struct pw_act_report *a, int id)
{
	const struct pw_act_device *d = pw_act_device_of(a, id);
	assert_non_null(d);
	return d;
}

static void expect_text(const char *text, const char *const *expect, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strstr(text, expect[i])) {
			fprintf(stderr, "%s", text);
			fail_msg("the report lacks \"%s\"", expect[i]);
		}
}

/* ---- records ---- */

/* A wrapped GPU library call on thread tid with external id ext. */
static struct pw_rec_api call(uint16_t ev, uint32_t tid, uint64_t t0, uint64_t t1, uint64_t ext)
{
	struct pw_rec_api r = mkapi(ev, tid, t0, t1, 0, 0, 0, 0);
	r.corr = ext;
	return r;
}

static struct pw_rec_gpu kern(int32_t device, uint32_t stream, uint32_t corr, uint64_t t0, uint64_t t1, uint64_t name)
{
	return mkact(PW_EV_GPU_KERNEL, CUPTI, t0, t1, device, stream, corr, 0, name);
}

static struct pw_rec_gpu extcorr(uint32_t corr, uint64_t ext)
{
	return mkact(PW_EV_GPU_EXTCORR, CUPTI, 0, 0, -1, 0, corr, ext, 1);
}

static struct pw_rec_gpu cupti_api(uint32_t corr, uint32_t tid, uint64_t t0, uint64_t t1)
{
	struct pw_rec_gpu r = mkact(PW_EV_GPU_API, CUPTI, t0, t1, -1, 0, corr, 211, PW_ACT_API_RUNTIME);
	r.a[0] = tid;
	return r;
}

static struct pw_rec_gpu gcopy(int32_t device, uint32_t corr, uint64_t t0, uint64_t t1, uint64_t bytes, unsigned dir,
			       unsigned src, unsigned dst)
{
	return mkact(PW_EV_GPU_MEMCPY, CUPTI, t0, t1, device, 7, corr, bytes, dir | src << 8 | dst << 16);
}

static struct pw_rec_gpu gset(int32_t device, uint32_t corr, uint64_t t0, uint64_t t1, uint64_t bytes, unsigned mem)
{
	return mkact(PW_EV_GPU_MEMSET, CUPTI, t0, t1, device, 7, corr, bytes, (uint64_t)mem << 32);
}

static struct pw_rec_gpu gstatus(unsigned state, uint64_t path_ref, int64_t code, uint64_t version, uint64_t clock)
{
	struct pw_rec_gpu r = mkact(PW_EV_GPU_STATUS, CUPTI, 1000, 1000, -1, 0, 0, state, path_ref);
	r.c.ret = code;
	r.a[0] = version;
	r.a[1] = clock;
	return r;
}

/* ---- busy time, idle, kernels table ---- */

/* Two streams whose kernels overlap: busy is their union, not their sum; copies and memsets count too; the
 * kernels table has one row per (name, device, stream). */
static void test_busy_union_two_streams(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, 10, 0, 500);
	put_string(fd, 24, "_Z3bwdv");
	struct pw_rec_gpu g[] = {
		kern(0, 7, 0, 1000, 2000, KNAME),  kern(0, 7, 0, 2500, 3000, KNAME), kern(0, 13, 0, 1500, 2600, KNAME),
		kern(0, 13, 0, 4000, 5000, 24),    gcopy(0, 0, 5200, 5300, 1000, PW_COPY_HTOD, PW_ACT_MEM_PINNED,
						     PW_ACT_MEM_DEVICE),
		gset(0, 0, 5300, 5400, 64, PW_ACT_MEM_DEVICE),
	};
	put_act_records(fd, g, NREC(g));
	fx_raw_end(fd, 10000);
	fx_analyze(fx);
	const struct pw_act_report *a = act0(fx);
	const struct pw_act_device *d = dev(a, 0);
	assert_int_equal(a->ndevices, 1);
	assert_int_equal(d->first_ns, 1000);
	assert_int_equal(d->last_ns, 5400);
	assert_int_equal(d->span_ns, 4400);
	assert_int_equal(d->busy_ns, 2000 + 1000 + 200); /* [1000,3000) [4000,5000) [5200,5400) */
	assert_int_equal(d->idle_ns, 1200);
	assert_int_equal(d->kernel_ns, 1000 + 500 + 1100 + 1000);
	assert_int_equal(d->memcpy_ns, 100);
	assert_int_equal(d->memset_ns, 100);
	assert_int_equal(d->gaps, 2);
	assert_int_equal(d->longest_gap_ns, 1000);
	assert_int_equal(d->kernels, 4);
	assert_int_equal(d->memcpys, 1);
	assert_int_equal(d->memsets, 1);
	assert_int_equal(d->launches, 0);
	assert_int_equal(a->kernels_unlinked, 4);
	assert_int_equal(a->classes[PW_GAP_UNKNOWN].gaps, 2);
	assert_int_equal(a->classes[PW_GAP_UNKNOWN].idle_ns, 1200);
	assert_int_equal(a->kernel_median_ns, 1000); /* 500 1000 1000 1100: the lower median */

	/* rows: fwd on stream 7 (2 kernels), fwd on 13, bwd on 13; by total time */
	assert_int_equal(a->nkernel_rows, 3);
	const struct pw_act_kernel_row *k = &a->kernel_rows[0];
	assert_string_equal(k->name, kernel_name);
	assert_int_equal(k->stream, 7);
	assert_int_equal(k->count, 2);
	assert_int_equal(k->total_ns, 1500);
	assert_int_equal(k->min_ns, 500);
	assert_int_equal(k->max_ns, 1000);
	assert_int_equal(a->kernel_rows[1].total_ns, 1100);
	assert_int_equal(a->kernel_rows[1].stream, 13);
	assert_string_equal(a->kernel_rows[2].name, "_Z3bwdv");
	assert_int_equal(a->kernel_rows[2].total_ns, 1000);
}

/* ---- correlation ---- */

/* The launches of one process (see test_correlation): rank `rank`, pid `pid`; with `reversed`, the activity
 * records come first, in reverse order, split into chunks, and the calls last: as late and out of order as
 * CUPTI's buffers can make them. */
static void write_correlated(const struct fx *fx, int pid, int rank, int reversed)
{
	int fd = pwt_open(fx, pid, rank, 500);
	struct pw_rec_api calls[] = {
		call(PW_EV_CUDA_LAUNCH_KERNEL, T, 1000, 1050, 101),
		call(PW_EV_CUDA_LAUNCH_KERNEL, T, 1050, 1150, 102),
		call(PW_EV_CUBLAS_SGEMM, T, 1200, 1300, 103),
		call(PW_EV_CUDA_MALLOC, T, 1300, 1310, 104), /* enqueues nothing */
	};
	struct pw_rec_gpu g[] = {
		extcorr(1, 101),
		extcorr(2, 102),
		extcorr(3, 103),
		extcorr(6, 103),
		cupti_api(2, T, 1100, 1140),   /* the launch inside cudaLaunchKernel: its start is the launch */
		cupti_api(4, 222, 3500, 3510), /* a launch no wrapper saw (a library's cuLaunchKernel) */
		kern(0, 7, 1, 1500, 3000, KNAME),
		kern(0, 7, 2, 3000, 4000, KNAME),
		kern(0, 7, 3, 4000, 4500, KNAME),
		kern(0, 7, 4, 4500, 5000, KNAME),
		kern(0, 7, 5, 6000, 6100, KNAME), /* linked to nothing */
		kern(1, 9, 6, 4000, 4100, KNAME), /* the sgemm's second kernel, on GPU 1 */
	};
	if (!reversed) {
		put_api_records(fd, calls, NREC(calls));
		put_act_records(fd, g, NREC(g));
	} else {
		for (size_t i = NREC(g); i-- > 0;)
			put_act_records(fd, &g[i], 1);
		put_api_records(fd, calls, NREC(calls));
	}
	fx_raw_end(fd, 10000);
}

static void check_correlated(const struct pw_rank_report *r)
{
	const struct pw_act_report *a = r->act;
	assert_non_null(a);
	assert_int_equal(a->kernels, 6);
	assert_int_equal(a->kernels_linked, 4);
	assert_int_equal(a->kernels_linked_api, 1);
	assert_int_equal(a->kernels_unlinked, 1);
	assert_int_equal(a->by_call[PW_EV_CUDA_LAUNCH_KERNEL].kernels, 2);
	assert_int_equal(a->by_call[PW_EV_CUDA_LAUNCH_KERNEL].kernel_ns, 2500);
	assert_int_equal(a->by_call[PW_EV_CUBLAS_SGEMM].kernels, 2);
	assert_int_equal(a->by_call[PW_EV_CUBLAS_SGEMM].kernel_ns, 600);
	assert_int_equal(a->by_call[PW_EV_CUDA_MALLOC].kernels, 0);
	assert_int_equal(a->by_api_only.kernels, 1);
	assert_int_equal(a->by_api_only.kernel_ns, 500);
	assert_int_equal(a->unlinked.kernels, 1);
	assert_int_equal(a->unlinked.kernel_ns, 100);

	const struct pw_act_device *d = dev(a, 0);
	/* launch latencies 500 (wrapped start 1000), 1900 (CUPTI API start 1100), 2800, 1000 (API only) */
	assert_int_equal(d->launches, 4);
	assert_int_equal(d->latency_mean_ns, 1550);
	assert_int_equal(d->latency_p50_ns, 1000);
	assert_int_equal(d->latency_p95_ns, 2800);
	assert_int_equal(d->latency_max_ns, 2800);
	/* queue depths 0, 1, 2, and 2 at 3500 (the first kernel has ended) */
	assert_true(fabs(d->queue_mean - 1.25) < 1e-12);
	assert_int_equal(d->queue_max, 2);
	assert_int_equal(d->busy_ns, 3600);
	assert_int_equal(d->span_ns, 4600);
	assert_int_equal(d->gaps, 1);
	const struct pw_act_device *d1 = dev(a, 1);
	assert_int_equal(d1->launches, 1);
	assert_int_equal(d1->latency_max_ns, 2800);
	assert_int_equal(d1->queue_max, 0);
	assert_int_equal(d1->busy_ns, 100);

	/* the one gap, [5000, 6000), is ended by an unlinked kernel */
	assert_int_equal(a->ngaps, 1);
	assert_int_equal(a->gaps[0].start_ns, 5000);
	assert_int_equal(a->gaps[0].duration_ns, 1000);
	assert_int_equal(a->gaps[0].tid, 0);
	assert_int_equal(a->gaps[0].cls, PW_GAP_UNKNOWN);

	/* activity records are not calls, and CUPTI's thread is not a thread of the program */
	assert_int_equal(r->calls[PW_EV_GPU_KERNEL].count, 0);
	assert_int_equal(r->calls[PW_EV_GPU_EXTCORR].count, 0);
	assert_int_equal(r->calls[PW_EV_GPU_API].count, 0);
	assert_int_equal(r->calls[PW_EV_CUDA_LAUNCH_KERNEL].count, 2);
	assert_int_equal(r->events, 4);
	assert_int_equal(r->procs[0].events, 4);
	assert_int_equal(r->procs[0].threads, 1);
	assert_int_equal(a->records, 12);
	uint64_t buckets = 0;
	for (int b = 0; b < PW_DURATION_BUCKETS; b++)
		buckets += r->timeline->call_rule.seen[b];
	assert_int_equal(buckets, 4);
}

/* Kernel -> correlation id -> external id -> wrapped call (thread, start, event); else the CUPTI API record
 * (thread, start); else unlinked. Launch latency from the launch's start, queue depth at launch; the same
 * figures when the activity comes first and backwards. */
static void test_correlation(void **state)
{
	struct fx *fx = *state;
	write_correlated(fx, 10, 0, 0);
	write_correlated(fx, 11, 1, 1);
	fx_analyze(fx);
	assert_int_equal(fx->an.nranks, 2);
	check_correlated(rank_n(fx, 0));
	check_correlated(rank_n(fx, 1));
}

/* NCCL's kernels as CUPTI names them: mangled C++ (NCCL 2.19 and later), plain (before); not a prefix of
 * another word. */
static void test_nccl_kernel_names(void **state)
{
	(void)state;
	static const char *const nccl[] = {
		"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
		"_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE",
		"_Z30ncclSymkDevKernel_AllGather_LL21ncclSymkDevWorkArgs4K",
		"ncclDevKernel_SendRecv",
		"ncclKernel_AllReduce_RING_LL_Sum_float",
	};
	static const char *const others[] = {"_Z10fwd_kernelPfS_i", "ncclAllReduce", "_Z", "nccl", "_Z99", ""};
	for (size_t i = 0; i < NREC(nccl); i++)
		assert_true(pw_is_nccl_kernel(nccl[i], strlen(nccl[i])));
	for (size_t i = 0; i < NREC(others); i++)
		assert_false(pw_is_nccl_kernel(others[i], strlen(others[i])));
	assert_false(pw_is_nccl_kernel(NULL, 0));
	assert_false(pw_is_nccl_kernel(nccl[0], 10)); /* cut short */
}

/* A driver that cannot serve CUPTI, or none: the status, the driver's version or CUresult, and why in words;
 * a driver with no CUPTI status at all stays "none". */
static void test_driver_states(void **state)
{
	struct fx *fx = *state;
	struct pw_rec_gpu st[] = {
		gstatus(PW_ACT_DRIVER_UNUSABLE, 0, 34, 0, 0), /* a stub library */
		gstatus(PW_ACT_DRIVER_UNUSABLE, 0, 0, 12080, 0),
		gstatus(PW_ACT_NO_DRIVER, 0, 0, 0, 0),
	};
	st[1].a[2] = 13;
	for (int i = 0; i < 3; i++) {
		int fd = pwt_open(fx, 20 + i, i, 500);
		put_act_records(fd, &st[i], 1);
		fx_raw_end(fd, 10000);
	}
	fx_analyze(fx);
	char why[160];
	const struct pw_act_report *a = rank_n(fx, 0)->act;
	assert_int_equal(a->state, PW_ACT_DRIVER_UNUSABLE);
	assert_int_equal(a->error_code, 34);
	assert_int_equal(a->cupti_version, 0);
	pw_act_why_missing(why, sizeof why, a);
	assert_string_equal(why, "the CUDA driver (libcuda.so.1) is a stub library");
	a = rank_n(fx, 1)->act;
	assert_int_equal(a->driver_version, 12080);
	assert_int_equal(a->cupti_version, 0);
	pw_act_why_missing(why, sizeof why, a);
	assert_string_equal(why, "the CUDA driver (12.8) is older than the CUDA 13 runtime in use");
	a = rank_n(fx, 2)->act;
	assert_int_equal(a->state, PW_ACT_NO_DRIVER);
	assert_string_equal(pw_act_state_name(a->state), "no_driver");
	reports_ok(fx);
	struct jr *doc = fx_json(fx, "rank1.json");
	const struct jr *ga = jr_get(jr_at(doc, 0), "gpu_activity");
	assert_true(jr_is(jr_get(ga, "status"), "driver_unusable"));
	assert_int_equal(jr_u64(jr_get(ga, "driver_version")), 12080);
	fx_json_free(doc);
}

/* An NCCL collective of count floats among nranks, inside a group whose external id is ext. */
static struct pw_rec_api coll(uint16_t ev, uint64_t t0, uint64_t count, uint64_t nranks, uint64_t ext)
{
	struct pw_rec_api r = call(ev, T, t0, t0 + 10, ext);
	r.c.arg0 = count;
	r.sub = 7; /* ncclFloat32 */
	r.a[2] = nranks;
	return r;
}

/* An NCCL group's calls share its external id: the kernels its end launched share their time among its
 * collectives by bus bytes (the largest share, the first of equals, takes the rounding) and count once on
 * each kind of call in it, never on ncclGroupStart/End; the collectives' bytes count once. A call made inside
 * another (PW_REC_NESTED) is counted apart, in no other figure, and its kernel is the outer call's. */
static void test_groups_and_nesting(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, 12, 0, 500);
	struct pw_rec_api calls[] = {
		call(PW_EV_NCCL_GROUP_START, T, 1000, 1005, 201),
		coll(PW_EV_NCCL_SEND, 1010, 1000, 2, 201),
		coll(PW_EV_NCCL_SEND, 1020, 1000, 2, 201),
		coll(PW_EV_NCCL_ALL_REDUCE, 1030, 1000, 2, 201), /* bus factor 2(n-1)/n = 1: 4000 bytes, as each send */
		call(PW_EV_NCCL_GROUP_END, T, 1040, 1100, 201),
		call(PW_EV_CUDNN_CONV_FWD, T, 2000, 2500, 301),
		call(PW_EV_CUBLASLT_MATMUL, T, 2100, 2200, 0),
	};
	calls[NREC(calls) - 1].c.h.type |= PW_REC_NESTED;
	struct pw_rec_gpu g[] = {
		extcorr(1, 201), kern(0, 7, 1, 1200, 2200, KNAME), /* 1000 ns, the group's */
		extcorr(2, 301), kern(0, 7, 2, 2300, 2400, KNAME), /* the nested GEMM's kernel */
		extcorr(3, 301), kern(0, 7, 3, 2400, 2450, KNAME), /* the convolution's own */
	};
	put_api_records(fd, calls, NREC(calls));
	put_act_records(fd, g, NREC(g));
	fx_raw_end(fd, 10000);
	fx_analyze(fx);
	const struct pw_rank_report *r = rank_n(fx, 0);
	const struct pw_act_report *a = r->act;
	assert_non_null(a);
	assert_int_equal(a->kernels_linked, 3);
	assert_int_equal(a->by_call[PW_EV_NCCL_SEND].kernels, 1);
	assert_int_equal(a->by_call[PW_EV_NCCL_SEND].kernel_ns, 334 + 333);
	assert_int_equal(a->by_call[PW_EV_NCCL_ALL_REDUCE].kernels, 1);
	assert_int_equal(a->by_call[PW_EV_NCCL_ALL_REDUCE].kernel_ns, 333);
	assert_int_equal(a->by_call[PW_EV_NCCL_GROUP_START].kernels, 0);
	assert_int_equal(a->by_call[PW_EV_NCCL_GROUP_END].kernels, 0);
	assert_int_equal(a->by_call[PW_EV_NCCL_GROUP_END].kernel_ns, 0);
	assert_true(fabs(a->coll_bus_bytes - 12000.0) < 1e-9);
	assert_int_equal(a->coll_kernels, 1);

	assert_int_equal(a->by_call[PW_EV_CUDNN_CONV_FWD].kernels, 2);
	assert_int_equal(a->by_call[PW_EV_CUDNN_CONV_FWD].kernel_ns, 150);
	assert_int_equal(a->by_call[PW_EV_CUBLASLT_MATMUL].kernels, 0);
	assert_int_equal(r->calls[PW_EV_CUBLASLT_MATMUL].count, 0);
	assert_int_equal(r->nested[PW_EV_CUBLASLT_MATMUL].count, 1);
	assert_int_equal(r->nested[PW_EV_CUBLASLT_MATMUL].total_ns, 100);
	assert_int_equal(r->nested[PW_EV_CUBLASLT_MATMUL].min_ns, 100);
	assert_int_equal(r->nested[PW_EV_CUDNN_CONV_FWD].count, 0);
	assert_int_equal(r->nested[PW_EV_CUDNN_CONV_FWD].min_ns, 0);
	assert_int_equal(r->calls[PW_EV_CUDNN_CONV_FWD].count, 1);
	assert_int_equal(r->gpu->ngemms, 0); /* the nested GEMM is in no GPU call table */
}

/* Correlation ids are per process: the same ids in two processes of one rank link within each. */
static void test_correlation_per_process(void **state)
{
	struct fx *fx = *state;
	for (int p = 0; p < 2; p++) {
		int fd = pwt_open(fx, 20 + p, 0, 500);
		uint32_t tid = 300 + (uint32_t)p;
		struct pw_rec_api calls[] = {call(PW_EV_CUDA_LAUNCH_KERNEL, tid, 1000 + 10000 * (uint64_t)p,
						  1010 + 10000 * (uint64_t)p, 7)};
		struct pw_rec_gpu g[] = {extcorr(1, 7),
					 kern(p, 7, 1, 2000 + 10000 * (uint64_t)p, 3000 + 10000 * (uint64_t)p, KNAME)};
		put_api_records(fd, calls, 1);
		put_act_records(fd, g, NREC(g));
		fx_raw_end(fd, 30000);
	}
	fx_analyze(fx);
	const struct pw_act_report *a = act0(fx);
	assert_int_equal(a->kernels_linked, 2);
	assert_int_equal(dev(a, 0)->latency_max_ns, 1000);
	assert_int_equal(dev(a, 1)->latency_max_ns, 1000);
	assert_int_equal(rank_n(fx, 0)->nprocs, 2);
}

/* ---- copies ---- */

/* Copies by (device, direction, source kind, destination kind) with GB/s over their GPU time; memsets by
 * memory kind; pageable and pinned figures for the findings. */
static void test_copies_by_kind(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, 10, 0, 500);
	struct pw_rec_gpu g[] = {
		gcopy(0, 0, 1000, 1001000, 1000000, PW_COPY_HTOD, PW_ACT_MEM_PAGEABLE, PW_ACT_MEM_DEVICE),
		gcopy(0, 0, 2000000, 2500000, 500000, PW_COPY_HTOD, PW_ACT_MEM_PAGEABLE, PW_ACT_MEM_DEVICE),
		gcopy(0, 0, 3000000, 3250000, 4000000, PW_COPY_HTOD, PW_ACT_MEM_PINNED, PW_ACT_MEM_DEVICE),
		gcopy(0, 0, 4000000, 4100000, 200000, PW_COPY_DTOH, PW_ACT_MEM_DEVICE, PW_ACT_MEM_PAGEABLE),
		gcopy(1, 0, 5000000, 5001000, 8000, PW_COPY_DTOD, PW_ACT_MEM_DEVICE, PW_ACT_MEM_DEVICE),
		gset(0, 0, 6000000, 6000100, 1000, PW_ACT_MEM_DEVICE),
		gset(0, 0, 6000200, 6000300, 1000, PW_ACT_MEM_DEVICE),
	};
	put_act_records(fd, g, NREC(g));
	fx_raw_end(fd, 10000000);
	fx_analyze(fx);
	const struct pw_act_report *a = act0(fx);
	assert_int_equal(a->memcpys, 5);
	assert_int_equal(a->memsets, 2);
	assert_int_equal(a->ncopy_rows, 5);
	/* device 0: copies by time (pageable HtoD 1.5 ms, pinned 250 us, DtoH 100 us), then the memset */
	const struct pw_act_copy_row *c = &a->copy_rows[0];
	assert_int_equal(c->device, 0);
	assert_int_equal(c->memset, 0);
	assert_int_equal(c->dir, PW_COPY_HTOD);
	assert_int_equal(c->src, PW_ACT_MEM_PAGEABLE);
	assert_int_equal(c->dst, PW_ACT_MEM_DEVICE);
	assert_int_equal(c->count, 2);
	assert_int_equal(c->bytes, 1500000);
	assert_int_equal(c->total_ns, 1500000);
	assert_int_equal(a->copy_rows[1].src, PW_ACT_MEM_PINNED);
	assert_int_equal(a->copy_rows[1].bytes, 4000000);
	assert_int_equal(a->copy_rows[2].dir, PW_COPY_DTOH);
	assert_int_equal(a->copy_rows[3].memset, 1);
	assert_int_equal(a->copy_rows[3].count, 2);
	assert_int_equal(a->copy_rows[3].total_ns, 200);
	assert_int_equal(a->copy_rows[4].device, 1);
	assert_int_equal(a->pageable_count, 3);
	assert_int_equal(a->pageable_bytes, 1700000);
	assert_int_equal(a->pageable_ns, 1600000);
	assert_int_equal(a->pinned_count, 1);
	assert_int_equal(a->pinned_bytes, 4000000);
	assert_int_equal(a->pinned_ns, 250000);
	assert_int_equal(dev(a, 0)->memcpy_ns, 1850000);
	assert_int_equal(dev(a, 0)->memset_ns, 200);

	reports_ok(fx);
	struct jr *doc = fx_json(fx, "rank0.json");
	const struct jr *j = jr_at(doc, 0);
	const struct jr *m = jr_get(j, "gpu_memcpy");
	assert_int_equal(m->n, 4);
	const struct jr *row = jr_at(m, 0);
	assert_int_equal(jr_i64(jr_get(row, "device")), 0);
	assert_true(jr_is(jr_get(row, "dir"), "HtoD"));
	assert_true(jr_is(jr_get(row, "src"), "pageable"));
	assert_true(jr_is(jr_get(row, "dst"), "device"));
	assert_int_equal(jr_u64(jr_get(row, "count")), 2);
	assert_int_equal(jr_u64(jr_get(row, "bytes")), 1500000);
	assert_int_equal(jr_u64(jr_get(row, "total_ns")), 1500000);
	assert_true(fabs(jr_num(jr_get(row, "gbps")) - 1.0) < 1e-9);
	row = jr_at(m, 1);
	assert_true(jr_is(jr_get(row, "src"), "pinned"));
	assert_true(fabs(jr_num(jr_get(row, "gbps")) - 16.0) < 1e-9);
	row = jr_at(m, 3);
	assert_true(jr_is(jr_get(row, "dir"), "DtoD"));
	assert_int_equal(jr_i64(jr_get(row, "device")), 1);
	const struct jr *s = jr_at(jr_get(j, "gpu_memset"), 0);
	assert_true(jr_is(jr_get(s, "dst"), "device"));
	assert_int_equal(jr_u64(jr_get(s, "bytes")), 2000);
	assert_true(fabs(jr_num(jr_get(s, "gbps")) - 10.0) < 1e-9);
	fx_json_free(doc);
}

/* ---- gaps and their causes ---- */

#define TID_OTHER 300

/* One device, kernels launched by T (wrapped cudaLaunchKernel, linked through external ids), with gaps
 * whose causes are, in order: input, sleep, sync, launch, cpu, unknown, cpu (linked through a CUPTI API
 * record only). Another thread's calls fall into the gaps too and must not count. */
static void write_gap_run(const struct fx *fx)
{
	int fd = pwt_open(fx, 10, 0, 1000);
	struct pw_rec_api calls[] = {
		call(PW_EV_CUDA_LAUNCH_KERNEL, T, 5000, 6000, 1),       /* a */
		call(PW_EV_CUDA_LAUNCH_KERNEL, T, 1010000, 1011000, 2), /* b */
		call(PW_EV_CUDA_LAUNCH_KERNEL, T, 1900000, 1901000, 3), /* c */
		call(PW_EV_CUDA_STREAM_SYNCHRONIZE, T, 1950000, 2550000, 0), /* waits into the gap it began */
		call(PW_EV_CUDA_LAUNCH_KERNEL, T, 3020000, 3021000, 4), /* d */
		call(PW_EV_CUDA_LAUNCH_KERNEL, T, 3060000, 3061000, 5), /* e */
		call(PW_EV_CUDA_LAUNCH_KERNEL, T, 4100000, 4101000, 6), /* f */
	};
	struct pw_rec_call cpu[] = {
		mkrec(PW_EV_READ, T, 50000, 700000, 4096, 3, 4096, 0),
		mkrec(PW_EV_POLL, T, 700000, 800000, 1, 0, 0, 0),
		mkrec(PW_EV_NANOSLEEP, T, 1100000, 1800000, 0, 0, 0, 0),
		mkrec(PW_EV_READ, T, 2600000, 3000000, 4096, 3, 4096, 0), /* less than the sync in its gap */
		mkrec(PW_EV_READ, T, 3200000, 3600000, 4096, 3, 4096, 0),
		mkrec(PW_EV_READ, TID_OTHER, 3110000, 4100000, 4096, 5, 4096, 0), /* not the launching thread */
		mkrec(PW_EV_SEM_WAIT, TID_OTHER, 20000, 1000000, 0, 0, 0, 0),
	};
	struct pw_rec_gpu g[] = {
		extcorr(11, 1), extcorr(12, 2), extcorr(13, 3), extcorr(14, 4), extcorr(15, 5), extcorr(16, 6),
		cupti_api(18, T, 4300000, 4300100),
		kern(0, 7, 11, 10000, 20000, KNAME),     /* a */
		kern(0, 7, 12, 1020000, 1030000, KNAME), /* b: ends an input gap */
		kern(0, 7, 13, 2030000, 2040000, KNAME), /* c: ends a sleep gap */
		kern(0, 7, 14, 3040000, 3050000, KNAME), /* d: ends a sync gap */
		kern(0, 7, 15, 3100000, 3110000, KNAME), /* e: ends a 50 us gap */
		kern(0, 7, 16, 4110000, 4120000, KNAME), /* f: ends a cpu gap */
		kern(0, 7, 17, 4220000, 4230000, KNAME), /* g: unlinked, ends an unknown gap */
		kern(0, 7, 18, 4400000, 4410000, KNAME), /* h: linked by the CUPTI API record, ends a cpu gap */
	};
	put_act_records(fd, g, NREC(g)); /* before the calls, as late buffers can be in another file order */
	put_api_records(fd, calls, NREC(calls));
	put_records(fd, cpu, NREC(cpu));
	fx_raw_end(fd, 10000000);
}

static void test_gap_causes(void **state)
{
	struct fx *fx = *state;
	write_gap_run(fx);
	fx_analyze(fx);
	const struct pw_act_report *a = act0(fx);
	const struct pw_act_device *d = dev(a, 0);
	assert_int_equal(d->gaps, 7);
	assert_int_equal(a->gaps_total, 7);
	assert_int_equal(d->longest_gap_ns, 1000000);
	const struct pw_act_class *k = a->classes;
	assert_int_equal(k[PW_GAP_INPUT].gaps, 1);
	assert_int_equal(k[PW_GAP_INPUT].idle_ns, 1000000);
	assert_int_equal(k[PW_GAP_SLEEP].gaps, 1);
	assert_int_equal(k[PW_GAP_SLEEP].idle_ns, 1000000);
	assert_int_equal(k[PW_GAP_SYNC].gaps, 1);
	assert_int_equal(k[PW_GAP_SYNC].idle_ns, 1000000);
	assert_int_equal(k[PW_GAP_LAUNCH].gaps, 1);
	assert_int_equal(k[PW_GAP_LAUNCH].idle_ns, 50000);
	assert_int_equal(k[PW_GAP_CPU].gaps, 2);
	assert_int_equal(k[PW_GAP_CPU].idle_ns, 1000000 + 170000);
	assert_int_equal(k[PW_GAP_UNKNOWN].gaps, 1);
	assert_int_equal(k[PW_GAP_UNKNOWN].idle_ns, 100000);
	assert_int_equal(d->idle_by_class[PW_GAP_CPU], 1170000);
	/* the calls inside each class's gaps */
	assert_int_equal(k[PW_GAP_INPUT].call_ns[PW_EV_READ], 650000);
	assert_int_equal(k[PW_GAP_INPUT].call_ns[PW_EV_POLL], 100000);
	assert_int_equal(k[PW_GAP_INPUT].call_ns[PW_EV_CUDA_LAUNCH_KERNEL], 1000);
	assert_int_equal(k[PW_GAP_INPUT].call_ns[PW_EV_SEM_WAIT], 0); /* the other thread's */
	assert_int_equal(k[PW_GAP_SLEEP].call_ns[PW_EV_NANOSLEEP], 700000);
	assert_int_equal(k[PW_GAP_SLEEP].call_ns[PW_EV_CUDA_STREAM_SYNCHRONIZE], 80000);
	assert_int_equal(k[PW_GAP_SYNC].call_ns[PW_EV_CUDA_STREAM_SYNCHRONIZE], 510000);
	assert_int_equal(k[PW_GAP_SYNC].call_ns[PW_EV_READ], 400000);
	assert_int_equal(k[PW_GAP_SYNC].sync_gaps[PW_EV_CUDA_STREAM_SYNCHRONIZE], 1);
	assert_int_equal(k[PW_GAP_SYNC].sync_ns[PW_EV_CUDA_STREAM_SYNCHRONIZE], 1000000);
	assert_int_equal(k[PW_GAP_CPU].call_ns[PW_EV_READ], 400000);
	assert_int_equal(k[PW_GAP_CPU].call_count[PW_EV_READ], 1);

	/* the 5 longest gaps, longest first, ties by start */
	assert_int_equal(a->ngaps, 5);
	static const uint64_t starts[] = {20000, 1030000, 2040000, 3110000, 4230000};
	static const enum pw_gap_class cls[] = {PW_GAP_INPUT, PW_GAP_SLEEP, PW_GAP_SYNC, PW_GAP_CPU, PW_GAP_CPU};
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(a->gaps[i].start_ns, starts[i]);
		assert_int_equal(a->gaps[i].cls, cls[i]);
		assert_int_equal(a->gaps[i].tid, T);
		assert_int_equal(a->gaps[i].pid, 10);
		assert_string_equal(a->gaps[i].next, kernel_name);
	}
	const struct pw_act_gap *g = &a->gaps[0];
	assert_int_equal(g->duration_ns, 1000000);
	assert_int_equal(g->ncalls, 3);
	assert_int_equal(g->calls[0].ev, PW_EV_READ);
	assert_int_equal(g->calls[0].ns, 650000);
	assert_int_equal(g->calls[1].ev, PW_EV_POLL);
	assert_int_equal(g->calls[1].ns, 100000);
	assert_int_equal(g->calls[2].ev, PW_EV_CUDA_LAUNCH_KERNEL);
	assert_int_equal(g->running_ns, 249000);
	assert_int_equal(a->gaps[2].sync_ev, PW_EV_CUDA_STREAM_SYNCHRONIZE);
	assert_int_equal(a->gaps[4].duration_ns, 170000);
	assert_int_equal(a->gaps[4].ncalls, 0);
	assert_int_equal(a->gaps[4].running_ns, 170000);
}

/* ppoll, pselect, epoll_pwait and a contended mutex are waits on other threads or processes, as poll and
 * condition waits are: four 990 us gaps, each 800 us of it in one of them on the launching thread, are four
 * input gaps. */
static void test_gap_input_waits(void **state)
{
	struct fx *fx = *state;
	static const uint16_t waits[] = {PW_EV_MUTEX_LOCK, PW_EV_PPOLL, PW_EV_PSELECT, PW_EV_EPOLL_PWAIT};
	int fd = pwt_open(fx, 10, 0, 1000);
	struct pw_rec_api calls[5];
	struct pw_rec_gpu g[10];
	struct pw_rec_call cpu[4];
	for (uint64_t i = 0; i < 5; i++) { /* kernel i runs [i ms + 20 us, i ms + 30 us), launched just before */
		calls[i] = call(PW_EV_CUDA_LAUNCH_KERNEL, T, i * 1000000 + 5000, i * 1000000 + 6000, i + 1);
		g[i] = extcorr((uint32_t)(11 + i), i + 1);
		g[5 + i] = kern(0, 7, (uint32_t)(11 + i), i * 1000000 + 20000, i * 1000000 + 30000, KNAME);
	}
	for (uint64_t i = 0; i < 4; i++)
		cpu[i] = mkrec(waits[i], T, i * 1000000 + 100000, i * 1000000 + 900000, 0, 0, 0, 0);
	put_act_records(fd, g, NREC(g));
	put_api_records(fd, calls, NREC(calls));
	put_records(fd, cpu, NREC(cpu));
	fx_raw_end(fd, 10000000);
	fx_analyze(fx);
	const struct pw_act_class *k = act0(fx)->classes;
	assert_int_equal(k[PW_GAP_INPUT].gaps, 4);
	assert_int_equal(k[PW_GAP_INPUT].idle_ns, 4 * 990000);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(k[PW_GAP_INPUT].call_ns[waits[i]], 800000);
}

/* The gap sections of the reports. */
static void test_gap_reports(void **state)
{
	struct fx *fx = *state;
	write_gap_run(fx);
	fx_analyze(fx);
	reports_ok(fx);
	struct jr *doc = fx_json(fx, "rank0.json");
	const struct jr *j = jr_at(doc, 0);
	const struct jr *gaps = jr_get(j, "gpu_gaps");
	assert_int_equal(gaps->n, 5);
	const struct jr *g = jr_at(gaps, 0);
	assert_int_equal(jr_i64(jr_get(g, "device")), 0);
	assert_int_equal(jr_u64(jr_get(g, "start_ns")), 20000);
	assert_int_equal(jr_u64(jr_get(g, "duration_ns")), 1000000);
	assert_int_equal(jr_u64(jr_get(g, "thread")), T);
	assert_int_equal(jr_i64(jr_get(g, "pid")), 10);
	assert_true(jr_is(jr_get(g, "class"), "input"));
	const struct jr *cpu = jr_at(jr_get(g, "cpu"), 0);
	assert_true(jr_is(jr_get(cpu, "call"), "read"));
	assert_int_equal(jr_u64(jr_get(cpu, "ns")), 650000);
	assert_int_equal(jr_u64(jr_get(g, "running_ns")), 249000);
	assert_true(jr_is(jr_get(jr_at(gaps, 2), "class"), "sync"));
	assert_true(jr_is(jr_get(jr_at(gaps, 2), "sync_call"), "cudaStreamSynchronize"));

	const struct jr *causes = jr_get(j, "gpu_idle_causes");
	const struct jr *c = jr_find(causes, "class", "cpu");
	assert_int_equal(jr_u64(jr_get(c, "gaps")), 2);
	assert_int_equal(jr_u64(jr_get(c, "idle_ns")), 1170000);
	c = jr_find(causes, "class", "sync");
	const struct jr *after = jr_at(jr_get(c, "after"), 0);
	assert_true(jr_is(jr_get(after, "call"), "cudaStreamSynchronize"));
	assert_int_equal(jr_u64(jr_get(after, "idle_ns")), 1000000);

	const struct jr *gpu = jr_at(jr_get(j, "gpus"), 0);
	assert_int_equal(jr_u64(jr_get(gpu, "idle_gaps")), 7);
	assert_int_equal(jr_u64(jr_get(gpu, "longest_idle_ns")), 1000000);
	assert_int_equal(jr_u64(jr_get(gpu, "kernel_ns")), 80000);
	assert_int_equal(jr_u64(jr_get(gpu, "span_ns")), 4400000);
	assert_int_equal(jr_u64(jr_get(gpu, "busy_ns")), 80000);
	assert_int_equal(jr_u64(jr_get(jr_get(gpu, "idle_by_cause"), "launch")), 50000);
	fx_json_free(doc);

	size_t n;
	char *t = fx_slurp(fx, "rank0.txt", &n);
	static const char *const expect[] = {
		"GPU utilisation (CUPTI activity records",
		"  GPU 0: busy 1.8% of 4.40 ms (first activity start to last end)\n",
		"    8 kernels 80.0 us, 0 copies 0 ns, 0 memsets 0 ns",
		("    idle 4.32 ms in 7 gaps, longest 1.00 ms; by cause: sync 1.00 ms, input 1.00 ms, sleep 1.00 ms, "
		 "launch 50.0 us, cpu 1.17 ms, unknown 100 us\n"),
		"Largest idle gaps",
		"|   0 | +19.0 us | 1.00 ms |    100 | input ",
		"| read 650 us, poll 100 us, cudaLaunchKernel 1.00 us, running (no recorded call) 249 us ",
		"| sync (cudaStreamSynchronize) |",
		"fwd_kernel(float*, float*, int)",
		"GPU kernels on GPU 0 (8 kernels, 80.0 us;",
		"| fwd_kernel(float*, float*, int) |      7 |     8 | 80.0 us | 100.0 | 10.0 us | 10.0 us | 10.0 us |",
		"GPU time by call",
		"| cudaLaunchKernel         |       6 |     60.0 us |      0 |      0 ns |",
		"| (CUDA calls not wrapped) |       1 |     10.0 us |",
		"| (not linked to a call)   |       1 |     10.0 us |",
		"GPU activity recording\n",
		"  Records: 15; 8 kernels (6 linked to wrapped calls, 1 to CUDA API records only, 1 unlinked)",
	};
	expect_text(t, expect, NREC(expect));
	/* the GPU activity comes after the calls and before the CPU side of the GPU calls */
	assert_true(strstr(t, "Calls (") < strstr(t, "GPU utilisation"));
	assert_true(strstr(t, "GPU activity recording") < strstr(t, "CUDA API summary"));
	assert_null(strstr(t, "gpu.kernel"));
	free(t);
}

/* ---- bounds and hostile input ---- */

/* Past PW_ACT_MAX_KERNEL_ROWS distinct (name, device, stream) the kernels go to the device's "other"
 * figures: counts and times stay exact; rows seen before the bound keep counting. */
static void test_kernel_row_bound(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, 10, 0, 500);
	enum { N = PW_ACT_MAX_KERNEL_ROWS + 5 };
	static struct pw_rec_gpu g[N + 3];
	for (int i = 0; i < N; i++) {
		char name[32];
		snprintf(name, sizeof name, "k%05d", i);
		put_string(fd, 100 + (uint64_t)i, name);
		g[i] = kern(0, 7, 0, 1000 + 100 * (uint64_t)i, 1010 + 100 * (uint64_t)i + (uint64_t)(i % 7), 100 + (uint64_t)i);
	}
	for (int i = 0; i < 3; i++) /* the first name again */
		g[N + i] = kern(0, 7, 0, 10000000 + 100 * (uint64_t)i, 10000020 + 100 * (uint64_t)i, 100);
	put_act_records(fd, g, NREC(g));
	fx_raw_end(fd, 20000000);
	fx_analyze(fx);
	const struct pw_act_report *a = act0(fx);
	const struct pw_act_device *d = dev(a, 0);
	assert_int_equal(a->nkernel_rows, PW_ACT_MAX_KERNEL_ROWS);
	assert_int_equal(d->kernel_other.count, 5);
	uint64_t total = 0, count = 0, expect = 0;
	for (size_t i = 0; i < a->nkernel_rows; i++) {
		total += a->kernel_rows[i].total_ns;
		count += a->kernel_rows[i].count;
	}
	for (int i = 0; i < N; i++)
		expect += 10 + (uint64_t)(i % 7);
	expect += 60;
	assert_int_equal(count + d->kernel_other.count, N + 3);
	assert_int_equal(total + d->kernel_other.total_ns, expect);
	assert_int_equal(d->kernel_ns, expect);
	assert_int_equal(a->kernel_rows[0].count, 4); /* k00000: 10 + 60 ns, the longest */

	reports_ok(fx);
	size_t n;
	char *t = fx_slurp(fx, "rank0.txt", &n);
	static const char *const expect_t[] = {"(other kernels)", "... 4076 more kernels (all are in the JSON report)"};
	expect_text(t, expect_t, NREC(expect_t));
	free(t);
	struct jr *doc = fx_json(fx, "rank0.json");
	const struct jr *j = jr_at(doc, 0);
	assert_int_equal(jr_get(j, "kernels")->n, PW_ACT_MAX_KERNEL_ROWS);
	assert_int_equal(jr_u64(jr_get(jr_at(jr_get(j, "gpu_kernels_other"), 0), "count")), 5);
	fx_json_free(doc);
}

/* Garbage activity records: no crash, no negative or NaN figure, reports that parse. */
static void test_hostile_records(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, 10, 0, 500);
	put_string(fd, 40, "dev\x01name");
	static struct pw_rec_gpu g[200];
	size_t n = 0;
	g[n++] = kern(-5, 7, 1, 1000, 2000, KNAME);              /* bad device */
	g[n++] = kern(0, 7, 1, 3000, 2000, KNAME);               /* ends before it starts */
	g[n++] = kern(0, 7, 1, 0, 0, KNAME);                     /* no times */
	g[n++] = kern(0, 7, 2, 1ull << 62, UINT64_MAX, 77777);   /* huge, unknown name */
	g[n++] = kern(0, 7, 3, 1000, 1000, 0);                   /* zero length */
	g[n++] = kern(0, 7, 4, UINT64_MAX - 10, UINT64_MAX, KNAME);
	g[n++] = gcopy(0, 5, 5000, 6000, UINT64_MAX, 200, 99, 255);
	g[n++] = gcopy(0, 5, 7000, 8000, UINT64_MAX, 200, 99, 255);
	g[n++] = gset(0, 6, 9000, 9000, UINT64_MAX, 250);
	g[n++] = extcorr(2, 888888);                             /* to no call */
	g[n++] = extcorr(0, 5);
	g[n++] = cupti_api(3, 0, 0, 0);                          /* no thread, no time */
	g[n++] = cupti_api(4, 77, UINT64_MAX, 0);
	g[n++] = gstatus(99, 0, 0, 0, 0);                        /* unknown state */
	g[n++] = gstatus(PW_ACT_DISABLED, 12345, 0, 0, 7);       /* path ref to nothing, bad clock */
	struct pw_rec_gpu dr = mkact(PW_EV_GPU_DROPPED, CUPTI, 1, 1, -1, 0, 0, UINT64_MAX, UINT64_MAX);
	g[n++] = dr;
	g[n++] = dr;
	g[n++] = mkact(PW_EV_GPU_OVERHEAD, CUPTI, 5000, 10, -1, 0, 0, 1, 1);
	g[n++] = mkact(PW_EV_GPU_DEVICE, CUPTI, 0, 0, -1, 0, 0, 1, 40);
	g[n++] = mkact(PW_EV_GPU_DEVICE, CUPTI, 0, 0, 0, 0, 0, UINT64_MAX, 40);
	for (int i = 0; i < 70; i++) /* more devices than the bound */
		g[n++] = kern(1 + i, 7, 9, 1000, 2000, KNAME);
	for (int i = 0; i < 70; i++)
		g[n++] = mkact(PW_EV_GPU_DEVICE, CUPTI, 0, 0, 1000 + i, 0, 0, 1, 40);
	assert_true(n <= NREC(g));
	put_act_records(fd, g, n);
	struct pw_rec_api calls[] = {call(PW_EV_CUDA_LAUNCH_KERNEL, T, 100, 50, 999999),
				     call(PW_EV_NCCL_ALL_REDUCE, T, 100, 200, 5)};
	calls[1].a[2] = UINT32_MAX;
	calls[1].c.arg0 = UINT64_MAX;
	calls[1].sub = 7;
	put_api_records(fd, calls, NREC(calls));
	/* a record cut to the size of a plain call: refused by the reader, never read past */
	struct pw_rec_call small = mkrec(PW_EV_GPU_KERNEL, CUPTI, 1, 2, 0, 0, 0, 0);
	put_records(fd, &small, 1);
	fx_raw_end(fd, 10000);
	fx_analyze(fx);
	const struct pw_act_report *a = act0(fx);
	assert_int_equal(a->bad_records, 3);
	assert_int_equal(a->ndevices, PW_ACT_MAX_DEVICES);
	assert_int_equal(a->devices_other, 70 - (PW_ACT_MAX_DEVICES - 1));
	assert_int_equal(a->dropped, UINT64_MAX);
	assert_int_equal(a->buffers_refused, UINT64_MAX);
	assert_int_equal(a->overhead_ns, 0);
	assert_int_equal(a->state, PW_ACT_DISABLED);
	assert_int_equal(a->clock, 0);
	assert_null(a->cupti_path);
	const struct pw_act_device *d = dev(a, 0);
	assert_true(d->busy_ns <= d->span_ns);
	assert_int_equal(d->idle_ns, d->span_ns - d->busy_ns);
	assert_int_equal(d->memcpy_ns, 2000);
	assert_int_equal(a->copy_rows[0].bytes, UINT64_MAX); /* saturated */
	assert_true(d->has_info);
	assert_string_equal(d->name, "dev\x01name");
	assert_int_equal(a->kernels_linked, 0);
	assert_true(isfinite(d->queue_mean));
	assert_true(rank_n(fx, 0)->skipped >= 1);
	for (size_t i = 0; i < rank_n(fx, 0)->nfindings; i++) {
		assert_true(rank_n(fx, 0)->findings[i].share >= 0);
		assert_true(rank_n(fx, 0)->findings[i].share <= 1);
	}

	reports_ok(fx);
	struct jr *doc = fx_json(fx, "rank0.json");
	const struct jr *j = jr_at(doc, 0);
	assert_true(jr_is(jr_get(jr_get(j, "gpu_activity"), "status"), "disabled"));
	assert_true(jr_get(jr_get(j, "gpu_activity"), "clock")->type == JR_NULL);
	const struct jr *m = jr_at(jr_get(j, "gpu_memcpy"), 0);
	assert_true(jr_is(jr_get(m, "dir"), "other"));
	assert_true(jr_is(jr_get(m, "src"), "unknown"));
	assert_true(jr_is(jr_get(m, "dst"), "unknown"));
	fx_json_free(doc);
	size_t len;
	char *t = fx_slurp(fx, "rank0.txt", &len);
	assert_null(strstr(t, "nan"));
	assert_null(strstr(t, "\x01"));
	assert_non_null(strstr(t, "WARNING: CUPTI dropped"));
	free(t);
}

/* ---- recording status ---- */

/* GPU calls, no activity: the status says why, the JSON keys are there and empty. */
static void test_not_recorded(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, 10, 0, 500);
	struct pw_rec_gpu st = gstatus(PW_ACT_NO_CUPTI, 0, 0, 0, 0);
	put_act_records(fd, &st, 1);
	struct pw_rec_api calls[] = {call(PW_EV_CUDA_LAUNCH_KERNEL, T, 1000, 1100, 1)};
	put_api_records(fd, calls, 1);
	fx_raw_end(fd, 10000);
	int fd2 = pwt_open(fx, 11, 1, 500);
	put_string(fd2, 48, "/usr/lib/libcupti.so.13");
	st = gstatus(PW_ACT_FAILED, 48, 17, 130000, PW_ACT_CLOCK_CALLBACK);
	put_act_records(fd2, &st, 1);
	st = gstatus(PW_ACT_DISABLED, 0, 0, 0, 0); /* a less telling status of another process */
	put_act_records(fd2, &st, 1);
	fx_raw_end(fd2, 10000);
	fx_analyze(fx);
	assert_false(pw_act_recorded(rank_n(fx, 0)->act));
	assert_int_equal(rank_n(fx, 0)->act->state, PW_ACT_NO_CUPTI);
	const struct pw_act_report *a1 = rank_n(fx, 1)->act;
	assert_int_equal(a1->state, PW_ACT_FAILED);
	assert_int_equal(a1->error_code, 17);
	assert_int_equal(a1->cupti_version, 130000);
	assert_int_equal(a1->clock, PW_ACT_CLOCK_CALLBACK);
	assert_string_equal(a1->cupti_path, "/usr/lib/libcupti.so.13");
	char why[128];
	pw_act_why_missing(why, sizeof why, a1);
	assert_string_equal(why, "CUPTI failed (CUptiResult 17)");
	pw_act_why_missing(why, sizeof why, NULL);
	assert_string_equal(why, "no CUPTI records");

	reports_ok(fx);
	struct jr *doc = fx_json(fx, "rank0.json");
	const struct jr *j = jr_at(doc, 0);
	const struct jr *ga = jr_get(j, "gpu_activity");
	assert_true(jr_is(jr_get(ga, "status"), "no_cupti"));
	assert_true(jr_is(jr_get(ga, "not_recorded_why"), "no libcupti could be loaded"));
	assert_int_equal(jr_u64(jr_get(ga, "kernels")), 0);
	assert_int_equal(jr_get(j, "gpus")->n, 0);
	assert_int_equal(jr_get(j, "kernels")->n, 0);
	assert_int_equal(jr_get(j, "gpu_gaps")->n, 0);
	assert_int_equal(jr_get(j, "findings")->n, 0);
	fx_json_free(doc);
	doc = fx_json(fx, "rank1.json");
	ga = jr_get(jr_at(doc, 0), "gpu_activity");
	assert_true(jr_is(jr_get(ga, "status"), "failed"));
	assert_true(jr_is(jr_get(ga, "clock"), "callback"));
	assert_int_equal(jr_u64(jr_get(ga, "cupti_version")), 130000);
	fx_json_free(doc);

	size_t n;
	char *t = fx_slurp(fx, "rank0.txt", &n);
	static const char *const expect[] = {
		"What to fix first\n  Nothing stands out: no rule fired",
		"  GPU activity was not recorded (no libcupti could be loaded): only the rules on calls were evaluated.\n",
		"  Not recorded: no libcupti could be loaded.",
	};
	expect_text(t, expect, NREC(expect));
	assert_null(strstr(t, "GPU utilisation"));
	free(t);
}

/* A rank without any GPU record: no model, the keys empty, no GPU line in the findings. */
static void test_no_gpu(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, 10, 0, 500);
	struct pw_rec_call io[] = {mkrec(PW_EV_READ, 10, 1100, 1200, 5, 0, 5, 0)};
	put_records(fd, io, 1);
	fx_raw_end(fd, 2000);
	fx_analyze(fx);
	assert_null(rank_n(fx, 0)->act);
	reports_ok(fx);
	struct jr *doc = fx_json(fx, "rank0.json");
	const struct jr *j = jr_at(doc, 0);
	assert_true(jr_is(jr_get(jr_get(j, "gpu_activity"), "status"), "none"));
	assert_int_equal(jr_get(j, "gpus")->n, 0);
	assert_int_equal(jr_get(j, "gpu_memcpy")->n, 0);
	assert_int_equal(jr_get(j, "gpu_time_by_call")->n, 0);
	assert_int_equal(jr_get(j, "findings")->n, 0);
	fx_json_free(doc);
	size_t n;
	char *t = fx_slurp(fx, "rank0.txt", &n);
	assert_non_null(strstr(t, "Nothing stands out: no rule fired (start-up, checkpoints, input; the GPU rules"));
	assert_null(strstr(t, "GPU activity"));
	free(t);
}

/* ---- names ---- */

static void test_names(void **state)
{
	(void)state;
	char buf[256];
	assert_int_equal(pw_demangle("_Z10fwd_kernelPfS_i", buf, sizeof buf), 1);
	assert_string_equal(buf, "fwd_kernel(float*, float*, int)");
	assert_int_equal(pw_demangle("fwd_kernel", buf, sizeof buf), 0);
	assert_int_equal(pw_demangle("_Zgarbage!!", buf, sizeof buf), 0);
	char small[8];
	assert_int_equal(pw_demangle("_Z10fwd_kernelPfS_i", small, sizeof small), 1);
	assert_string_equal(small, "fwd_ker");

	const char *s = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
			"at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";
	char out[128];
	assert_string_equal(pw_shorten_name(out, sizeof out, "short", 60), "short");
	assert_string_equal(pw_shorten_name(out, sizeof out, s, 104),
			    "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<...>, "
			    "at::detail::Array<...> >(...)");
	assert_string_equal(pw_shorten_name(out, sizeof out, s, 60), "at::native::vectorized_elementwise_kernel<...>(...)");
	const char *r = pw_shorten_name(out, sizeof out, s, 30);
	assert_int_equal(strlen(r), 30);
	assert_non_null(strstr(r, "..."));
	r = pw_shorten_name(out, sizeof out, "a<<<b", 4); /* unbalanced: cut, never overrun */
	assert_true(strlen(r) <= 5);
	char big[3000];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	r = pw_shorten_name(out, sizeof out, big, 60);
	assert_int_equal(strlen(r), 60);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_busy_union_two_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_correlation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_correlation_per_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copies_by_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gap_causes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gap_input_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gap_reports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_row_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_recorded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_groups_and_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_driver_states, setup, teardown),
		cmocka_unit_test(test_nccl_kernel_names),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
