#define _GNU_SOURCE
/* Unit tests for the GPU analysis (collector/model/gpu_analysis.c, gpu_names.c, report_gpu.c and the GPU parts of
 * the trace and summary): each test writes raw traces of GPU library calls (struct pw_rec_api records) into
 * OUT/raw of a private output directory (monotonic clock: ticks are ns, so times are exact), runs pw_analyze
 * and checks the figures exactly: copy directions (DEFAULT inferred from the allocations), pinned and
 * pageable host memory, allocation peaks, GEMM FLOPs, collective bytes, kernel launches, errors by code,
 * cuDNN plans, synchronisation, devices and streams, approximate medians, the tables' bounds, hostile
 * values; then the reports, parsed back. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
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
#include "../../collector/model/gpu_analysis.h"
#include "../../collector/model/gpu_names.h"
#include "../../collector/render.h"
#include "../../collector/report/report_format.h"
#include "json_reader.h"
#include "out_files.h"
#include "out_fixture.h"
#include "raw_writer.h"

#define TID 100
#define NREC(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the output directory ---- */

static const struct pw_rank_report *rank0(const struct fx *fx)
{
	assert_true(fx->an.nranks >= 1);
	assert_int_equal(fx->an.ranks[0].rank, 0);
	return &fx->an.ranks[0];
}

static const struct pw_gpu_report *gpu0(const struct fx *fx)
{
	const struct pw_gpu_report *g = rank0(fx)->gpu;
	assert_non_null(g);
	return g;
}

/* ---- records ---- */

static struct pw_rec_api api(uint16_t ev, uint64_t t0, uint64_t dur)
{
	return mkapi(ev, TID, t0, t0 + dur, 0, 0, 0, 0);
}

static struct pw_rec_api failed_api(uint16_t ev, uint64_t t0, uint64_t dur, int64_t status)
{
	return mkapi(ev, TID, t0, t0 + dur, status, 0, 0, 1);
}

static struct pw_rec_api copy(uint16_t ev, uint64_t t0, uint64_t bytes, uint64_t dst, uint64_t src, unsigned sub)
{
	struct pw_rec_api r = mkapi(ev, TID, t0, t0 + 10, 0, bytes, 0, 0);
	r.a[0] = dst;
	r.a[1] = src;
	r.sub = sub;
	return r;
}

static struct pw_rec_api alloc(uint16_t ev, uint64_t t0, uint64_t bytes, uint64_t addr, unsigned mem)
{
	struct pw_rec_api r = mkapi(ev, TID, t0, t0 + 5, 0, bytes, addr, 0);
	r.sub = mem;
	return r;
}

static struct pw_rec_api alloc_failed(uint16_t ev, uint64_t t0, uint64_t bytes, unsigned mem)
{
	struct pw_rec_api r = mkapi(ev, TID, t0, t0 + 5, 2, bytes, 0, 1);
	r.sub = mem;
	return r;
}

static struct pw_rec_api release(uint16_t ev, uint64_t t0, uint64_t addr, unsigned mem)
{
	struct pw_rec_api r = mkapi(ev, TID, t0, t0 + 5, 0, 0, addr, 0);
	r.sub = mem;
	return r;
}

static struct pw_rec_api gemm(uint16_t ev, uint64_t t0, uint64_t dur, uint64_t m, uint64_t n, uint64_t k,
			      uint64_t batch, unsigned dtype, unsigned ta, unsigned tb)
{
	struct pw_rec_api r = mkapi(ev, TID, t0, t0 + dur, 0, (uint64_t)-1, 0, 0);
	r.a[0] = m;
	r.a[1] = n;
	r.a[2] = k;
	r.a[3] = batch;
	r.sub = dtype | ta << 8 | tb << 16;
	return r;
}

static struct pw_rec_api coll(uint16_t ev, uint64_t t0, uint64_t dur, uint64_t count, unsigned dtype, unsigned op,
			      uint32_t nranks)
{
	struct pw_rec_api r = mkapi(ev, TID, t0, t0 + dur, 0, count, 0, 0);
	r.a[0] = 0xc0ffee;
	r.a[1] = (uint64_t)-1;
	r.a[2] = nranks | (uint64_t)1 << 32;
	r.sub = dtype | op << 8;
	return r;
}

static struct pw_rec_api launch(uint16_t ev, uint64_t t0, uint64_t dur, uint64_t name_ref, uint32_t gx, uint32_t gy,
				uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz)
{
	struct pw_rec_api r = mkapi(ev, TID, t0, t0 + dur, 0, 0x401000, name_ref, 0);
	r.a[0] = gx | (uint64_t)gy << 32;
	r.a[1] = gz | (uint64_t)bx << 32;
	r.a[2] = by | (uint64_t)bz << 32;
	return r;
}

/* ---- names ---- */

/* Spot checks of the tables against the CUDA 13 / cuDNN 9 / NCCL headers' values. */
static void test_status_names(void **state)
{
	static const struct {
		int64_t code;
		const char *name;
	} cuda[] = {{0, "cudaSuccess"},
		    {1, "cudaErrorInvalidValue"},
		    {2, "cudaErrorMemoryAllocation"},
		    {3, "cudaErrorInitializationError"},
		    {9, "cudaErrorInvalidConfiguration"},
		    {35, "cudaErrorInsufficientDriver"},
		    {98, "cudaErrorInvalidDeviceFunction"},
		    {100, "cudaErrorNoDevice"},
		    {101, "cudaErrorInvalidDevice"},
		    {400, "cudaErrorInvalidResourceHandle"},
		    {600, "cudaErrorNotReady"},
		    {700, "cudaErrorIllegalAddress"},
		    {719, "cudaErrorLaunchFailure"},
		    {999, "cudaErrorUnknown"}};
	for (size_t i = 0; i < NREC(cuda); i++) {
		const char *n = pw_gpu_status_name(PW_DOM_CUDART, cuda[i].code);
		assert_non_null(n);
		assert_string_equal(n, cuda[i].name);
	}
	assert_null(pw_gpu_status_name(PW_DOM_CUDART, 12345));
	assert_null(pw_gpu_status_name(PW_DOM_CUDART, -1));
	assert_string_equal(pw_gpu_status_name(PW_DOM_CUBLAS, 13), "CUBLAS_STATUS_EXECUTION_FAILED");
	assert_string_equal(pw_gpu_status_name(PW_DOM_CUBLASLT, 3), "CUBLAS_STATUS_ALLOC_FAILED");
	assert_string_equal(pw_gpu_status_name(PW_DOM_CUBLAS, 15), "CUBLAS_STATUS_NOT_SUPPORTED");
	assert_string_equal(pw_gpu_status_name(PW_DOM_CUDNN, 2000), "CUDNN_STATUS_BAD_PARAM");
	assert_string_equal(pw_gpu_status_name(PW_DOM_CUDNN, 3000), "CUDNN_STATUS_NOT_SUPPORTED");
	assert_string_equal(pw_gpu_status_name(PW_DOM_CUDNN, 4000), "CUDNN_STATUS_INTERNAL_ERROR");
	assert_string_equal(pw_gpu_status_name(PW_DOM_CUDNN, 5000), "CUDNN_STATUS_EXECUTION_FAILED");
	assert_string_equal(pw_gpu_status_name(PW_DOM_NCCL, 2), "ncclSystemError");
	assert_string_equal(pw_gpu_status_name(PW_DOM_NCCL, 7), "ncclInProgress");
	assert_null(pw_gpu_status_name(PW_DOM_NCCL, 8));
	assert_null(pw_gpu_status_name(PW_DOM_IO, 0));

	char buf[128];
	pw_gpu_format_status(buf, sizeof buf, PW_DOM_CUDART, 2);
	assert_string_equal(buf, "cudaErrorMemoryAllocation (2)");
	pw_gpu_format_status(buf, sizeof buf, PW_DOM_CUDART, 12345);
	assert_string_equal(buf, "cudaError_t 12345");
	pw_gpu_format_status(buf, sizeof buf, PW_DOM_NCCL, -3);
	assert_string_equal(buf, "ncclResult_t -3");
	pw_gpu_format_status(buf, sizeof buf, PW_DOM_CUBLASLT, 7);
	assert_string_equal(buf, "CUBLAS_STATUS_INVALID_VALUE (7)");
}

static void test_type_names(void **state)
{
	assert_string_equal(pw_cuda_dtype_name(0), "CUDA_R_32F");
	assert_string_equal(pw_cuda_dtype_name(2), "CUDA_R_16F");
	assert_string_equal(pw_cuda_dtype_name(14), "CUDA_R_16BF");
	assert_string_equal(pw_cuda_dtype_name(28), "CUDA_R_8F_E4M3");
	assert_null(pw_cuda_dtype_name(34));
	assert_int_equal(pw_cuda_dtype_bits(0), 32);
	assert_int_equal(pw_cuda_dtype_bits(5), 128);
	assert_int_equal(pw_cuda_dtype_bits(16), 4);
	assert_int_equal(pw_cuda_dtype_bits(200), 0);
	assert_true(pw_cuda_dtype_is_complex(4));  /* CUDA_C_32F */
	assert_true(pw_cuda_dtype_is_complex(5));  /* CUDA_C_64F */
	assert_true(pw_cuda_dtype_is_complex(6));  /* CUDA_C_16F */
	assert_true(pw_cuda_dtype_is_complex(15)); /* CUDA_C_16BF */
	assert_false(pw_cuda_dtype_is_complex(0));
	assert_false(pw_cuda_dtype_is_complex(14));
	assert_false(pw_cuda_dtype_is_complex(255));
	char buf[32];
	pw_cuda_format_dtype(buf, sizeof buf, 255);
	assert_string_equal(buf, "type 255");

	static const unsigned sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
	for (unsigned t = 0; t < NREC(sizes); t++)
		assert_int_equal(pw_nccl_dtype_size(t), sizes[t]);
	assert_int_equal(pw_nccl_dtype_size(12), 0);
	assert_string_equal(pw_nccl_dtype_name(7), "ncclFloat32");
	assert_string_equal(pw_nccl_dtype_name(9), "ncclBfloat16");
	assert_string_equal(pw_nccl_redop_name(0), "sum");
	assert_string_equal(pw_nccl_redop_name(4), "avg");
	assert_string_equal(pw_nccl_redop_name(5), "user op");
	assert_string_equal(pw_cublas_op_name(1), "T");
	assert_string_equal(pw_cublas_op_name(9), "?");
}

/* The op mask of a cudnnBackendExecute named from its bits, in bit order; bit 63 "unknown"; cut with "..."
 * to the buffer. */
static void test_cudnn_op_names(void **state)
{
	char buf[128];
	pw_cudnn_format_ops(buf, sizeof buf, 1ull << 10 | 1ull << 13);
	assert_string_equal(buf, "ConvolutionForward+Pointwise");
	pw_cudnn_format_ops(buf, sizeof buf, 1ull << 19);
	assert_string_equal(buf, "Matmul");
	pw_cudnn_format_ops(buf, sizeof buf, 1ull << 63);
	assert_string_equal(buf, "unknown");
	pw_cudnn_format_ops(buf, sizeof buf, 0);
	assert_string_equal(buf, "(none)");
	pw_cudnn_format_ops(buf, sizeof buf, 1ull << 41 | 1ull << 50 | 1ull << 63);
	assert_string_equal(buf, "SdpaFwd+type50+unknown");
	pw_cudnn_format_ops(buf, sizeof buf, 1ull << 11 | 1ull << 12 | 1ull << 22);
	assert_string_equal(buf, "ConvolutionBackwardFilter+ConvolutionBackwardData+Reduction");
	char small[16];
	pw_cudnn_format_ops(small, sizeof small, 1ull << 10 | 1ull << 13);
	assert_true(strlen(small) < sizeof small);
	assert_string_equal(small + strlen(small) - 3, "...");
	pw_cudnn_format_ops(buf, sizeof buf, UINT64_MAX);
	assert_true(strlen(buf) < sizeof buf);
	assert_string_equal(buf + strlen(buf) - 3, "...");
	assert_true(strncmp(buf, "PointwiseDesc+ConvolutionDesc+Engine+", 37) == 0);
}

/* Figures with 3 significant figures in fixed notation, as the GB/s and GFLOP columns show them. */
static void test_three_figures(void **state)
{
	static const struct {
		double v;
		int max;
		const char *text;
	} cases[] = {
		{0, 6, "0"},          {8, 6, "8.00"},         {12.34, 6, "12.3"},    {123.4, 6, "123"},
		{99.96, 6, "100"},     {9.996, 6, "10.0"},     {0.0041943, 9, "0.00419"}, {0.09996, 6, "0.100"},
		{3.2768e-5, 9, "0.0000328"}, {1e-9, 9, "0.000000001"}, {1e-12, 6, "0.000000"}, {1.8e19, 6, "18000000000000000000"},
	};
	for (size_t i = 0; i < NREC(cases); i++) {
		char buf[64];
		pw_format_3sig(buf, sizeof buf, cases[i].v, cases[i].max);
		if (strcmp(buf, cases[i].text))
			fail_msg("%g: \"%s\", not \"%s\"", cases[i].v, buf, cases[i].text);
	}
	char buf[32];
	pw_format_gbps(buf, sizeof buf, 1000, 0);
	assert_string_equal(buf, "-");
	pw_format_gbps(buf, sizeof buf, 8000, 1000);
	assert_string_equal(buf, "8.00");
	pw_format_flops(buf, sizeof buf, 4194304);
	assert_string_equal(buf, "4.19 MFLOP");
	pw_format_flops(buf, sizeof buf, UINT64_MAX);
	assert_string_equal(buf, "18.4 EFLOP");
	pw_format_flops(buf, sizeof buf, 999);
	assert_string_equal(buf, "999 FLOP");
}

/* ---- medians ---- */

/* Every bucket's middle is within 1/32 of each value in it, across the whole range. */
static void test_median_buckets(void **state)
{
	for (uint64_t v = 0; v < 16; v++)
		assert_int_equal(pw_median_bucket_mid(pw_median_bucket(v)), v);
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t v = x >> (x % 60); /* spread over the magnitudes */
		unsigned b = pw_median_bucket(v);
		assert_true(b < PW_MEDIAN_BUCKETS);
		uint64_t mid = pw_median_bucket_mid(b);
		double err = fabs((double)mid - (double)v) / (double)(v ? v : 1);
		if (err > 1.0 / 32 + 1e-12)
			fail_msg("value %llu: bucket %u middle %llu, %.4f off", (unsigned long long)v, b,
				 (unsigned long long)mid, err);
	}
	assert_int_equal(pw_median_bucket(UINT64_MAX), PW_MEDIAN_BUCKETS - 1);
	assert_true(pw_median_bucket_mid(PW_MEDIAN_BUCKETS - 1) > (UINT64_MAX / 32) * 31);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* GPU calls flow through the generic call figures (count, total, min, max, errors) and get an approximate
 * median within 5 % of the exact (lower) one; calls of other domains get none. */
static void test_calls_and_median(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 10, 0, 1000, "train\0--gpu", 11);
	enum { N = 1001 };
	static struct pw_rec_api recs[N + 7];
	static uint64_t durs[N];
	uint64_t x = 12345, t = 2000, total = 0;
	for (int i = 0; i < N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		durs[i] = 1000 + (x >> 33) % 5000000; /* 1 us .. 5 ms */
		recs[i] = api(PW_EV_CUDA_STREAM_SYNCHRONIZE, t, durs[i]);
		t += durs[i] + 1;
		total += durs[i];
	}
	recs[N] = failed_api(PW_EV_CUBLAS_SGEMM, t, 300, 13);
	recs[N + 1] = gemm(PW_EV_CUBLAS_SGEMM, t + 1000, 100, 2, 2, 2, 1, 0, 0, 0);
	recs[N + 2] = gemm(PW_EV_CUBLAS_SGEMM, t + 2000, 200, 2, 2, 2, 1, 0, 0, 0);
	/* an even count: the lower median, 200 */
	recs[N + 3] = api(PW_EV_CUDA_EVENT_QUERY, t + 2500, 400);
	recs[N + 4] = api(PW_EV_CUDA_EVENT_QUERY, t + 3000, 100);
	recs[N + 5] = api(PW_EV_CUDA_EVENT_QUERY, t + 3500, 300);
	recs[N + 6] = api(PW_EV_CUDA_EVENT_QUERY, t + 4000, 200);
	put_api_records(fd, recs, NREC(recs));
	struct pw_rec_call io[] = {mkrec(PW_EV_READ, TID, t + 5000, t + 5100, 5, 0, 5, 0)};
	put_records(fd, io, 1);
	fx_raw_end(fd, t + 6000);
	fx_analyze(fx);
	const struct pw_rank_report *r = rank0(fx);

	const struct pw_call_stat *c = &r->calls[PW_EV_CUDA_STREAM_SYNCHRONIZE];
	qsort(durs, N, sizeof durs[0], cmp_u64);
	assert_int_equal(c->count, N);
	assert_int_equal(c->total_ns, total);
	assert_int_equal(c->min_ns, durs[0]);
	assert_int_equal(c->max_ns, durs[N - 1]);
	assert_int_equal(c->errors, 0);
	uint64_t exact = durs[N / 2];
	double off = fabs((double)c->median_ns - (double)exact) / (double)exact;
	if (off > 0.05)
		fail_msg("median %llu, exact %llu", (unsigned long long)c->median_ns, (unsigned long long)exact);

	c = &r->calls[PW_EV_CUBLAS_SGEMM];
	assert_int_equal(c->count, 3);
	assert_int_equal(c->total_ns, 600);
	assert_int_equal(c->min_ns, 100);
	assert_int_equal(c->max_ns, 300);
	assert_int_equal(c->errors, 1);
	assert_int_equal(c->median_ns, 204); /* 200's bucket [200, 208), its middle */
	assert_int_equal(r->calls[PW_EV_CUDA_EVENT_QUERY].median_ns, 204);
	assert_int_equal(r->calls[PW_EV_READ].median_ns, 0);
	assert_int_equal(r->calls[PW_EV_READ].count, 1);
	assert_int_equal(r->events, N + 8);
	assert_int_equal(gpu0(fx)->records, N + 7);
}

/* ---- memory operations ---- */

#define DEV_A 0x700000000000ull
#define HOST_PINNED 0x50000000ull
#define HOST_REG 0x60000000ull
#define MANAGED 0x710000000000ull

/* Directions as given; DEFAULT inferred from the allocations; pinned while inside a live cudaMallocHost or
 * cudaHostRegister range (its end excluded), pageable once freed; failed copies count without bytes;
 * memsets. */
static void test_memcpy_directions_and_pinned(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 10, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_api recs[] = {
		alloc(PW_EV_CUDA_MALLOC, 1000, 1 << 20, DEV_A, PW_MEM_DEVICE),
		alloc(PW_EV_CUDA_MALLOC_HOST, 1100, 4096, HOST_PINNED, PW_MEM_HOST_PINNED),
		alloc(PW_EV_CUDA_MALLOC_MANAGED, 1150, 4096, MANAGED, PW_MEM_MANAGED),
		copy(PW_EV_CUDA_MEMCPY, 1200, 1000, DEV_A, HOST_PINNED + 100, PW_COPY_HTOD),
		copy(PW_EV_CUDA_MEMCPY, 1300, 2000, DEV_A, 0x1234, PW_COPY_HTOD),
		copy(PW_EV_CUDA_MEMCPY_ASYNC, 1400, 3000, HOST_PINNED, DEV_A, PW_COPY_DTOH | PW_API_ASYNC),
		copy(PW_EV_CUDA_MEMCPY, 1500, 500, 0x9999, DEV_A, PW_COPY_DTOH),
		copy(PW_EV_CUDA_MEMCPY, 1600, 64, DEV_A + 10, HOST_PINNED, PW_COPY_DEFAULT),
		copy(PW_EV_CUDA_MEMCPY, 1700, 32, 0x1111, DEV_A + 5, PW_COPY_DEFAULT),
		copy(PW_EV_CUDA_MEMCPY_ASYNC, 1800, 16, DEV_A, DEV_A + 512, PW_COPY_DEFAULT | PW_API_ASYNC),
		copy(PW_EV_CUDA_MEMCPY, 1900, 8, 0x10, 0x20, PW_COPY_DEFAULT),
		copy(PW_EV_CUDA_MEMCPY, 2000, 9, 0x30, MANAGED + 7, PW_COPY_DEFAULT),
		copy(PW_EV_CUDA_MEMCPY, 2100, 7, 0x10, 0x20, PW_COPY_HTOH),
		copy(PW_EV_CUDA_MEMCPY_2D, 2200, 11, DEV_A, DEV_A + 64, PW_COPY_DTOD),
		copy(PW_EV_CUDA_MEMCPY_PEER, 2300, 4096, DEV_A, 0x7f0000000000ull, PW_COPY_PEER),
		release(PW_EV_CUDA_FREE_HOST, 2400, HOST_PINNED, PW_MEM_HOST_PINNED),
		copy(PW_EV_CUDA_MEMCPY, 2500, 100, DEV_A, HOST_PINNED, PW_COPY_HTOD),
		alloc(PW_EV_CUDA_HOST_REGISTER, 2600, 8192, HOST_REG, PW_MEM_HOST_REGISTERED),
		copy(PW_EV_CUDA_MEMCPY, 2700, 50, DEV_A, HOST_REG + 8191, PW_COPY_HTOD),
		copy(PW_EV_CUDA_MEMCPY, 2800, 60, DEV_A, HOST_REG + 8192, PW_COPY_HTOD),
		copy(PW_EV_CUDA_MEMCPY, 2900, 999, DEV_A, 0x4444, PW_COPY_HTOD),
		copy(PW_EV_CUDA_MEMSET, 3000, 4096, DEV_A, 0, 0),
		copy(PW_EV_CUDA_MEMSET_ASYNC, 3100, 100, DEV_A, 0, PW_API_ASYNC),
		copy(PW_EV_CUDA_MEMSET, 3200, 7, DEV_A, 0, 0),
	};
	recs[20].c.h.err = PW_ERR_NO_ERRNO; /* the 999-byte copy failed */
	recs[20].c.ret = 1;
	recs[23].c.h.err = PW_ERR_NO_ERRNO; /* so did the 7-byte memset */
	recs[23].c.ret = 1;
	put_api_records(fd, recs, NREC(recs));
	fx_raw_end(fd, 5000);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);

	const struct pw_gpu_copy_stat *s = &g->copies[PW_DIR_HTOD];
	assert_int_equal(s->count, 7);
	assert_int_equal(s->bytes, 1000 + 2000 + 64 + 100 + 50 + 60);
	assert_int_equal(s->total_ns, 70);
	assert_int_equal(s->failed, 1);
	assert_int_equal(s->async_count, 0);
	assert_int_equal(s->pinned_count, 3); /* 1000, 64 (inferred), 50 (registered) */
	assert_int_equal(s->pinned_bytes, 1114);
	assert_int_equal(s->pinned_ns, 30);
	assert_int_equal(s->pageable_count, 4); /* 2000, 100 (after cudaFreeHost), 60 (past the end), failed */
	assert_int_equal(s->pageable_bytes, 2160);
	assert_int_equal(s->pageable_ns, 40);

	s = &g->copies[PW_DIR_DTOH];
	assert_int_equal(s->count, 4);
	assert_int_equal(s->bytes, 3000 + 500 + 32 + 9);
	assert_int_equal(s->async_count, 1);
	assert_int_equal(s->pinned_count, 1);
	assert_int_equal(s->pinned_bytes, 3000);
	assert_int_equal(s->pageable_count, 3);
	assert_int_equal(s->pageable_bytes, 541);

	s = &g->copies[PW_DIR_DTOD];
	assert_int_equal(s->count, 2);
	assert_int_equal(s->bytes, 27);
	assert_int_equal(s->async_count, 1);
	assert_int_equal(s->pinned_count + s->pageable_count, 0);
	s = &g->copies[PW_DIR_HTOH];
	assert_int_equal(s->count, 2);
	assert_int_equal(s->bytes, 15);
	s = &g->copies[PW_DIR_PTOP];
	assert_int_equal(s->count, 1);
	assert_int_equal(s->bytes, 4096);

	assert_int_equal(g->memset.count, 3);
	assert_int_equal(g->memset.bytes, 4196);
	assert_int_equal(g->memset.total_ns, 30);
	assert_int_equal(rank0(fx)->calls[PW_EV_CUDA_MEMCPY].errors, 1);
	assert_int_equal(g->alloc.host_pinned_peak_bytes, 8192); /* cudaMallocHost freed before the register */
}

/* ---- allocations ---- */

/* Live device bytes follow cudaMalloc/cudaMallocPitch/cudaMallocAsync and their frees (cudaFreeAsync
 * included); an allocation at a live address replaces it; unknown frees and cudaFree(NULL) are ignored;
 * failed allocations are counted with the largest request; managed and pinned memory have their own peaks;
 * the rank's peaks are its largest process's, its counts the sums. */
static void test_allocation_peaks(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 20, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_api a[] = {
		alloc(PW_EV_CUDA_MALLOC, 1000, 100, 0x1000, PW_MEM_DEVICE),        /* 100 */
		alloc(PW_EV_CUDA_MALLOC, 1010, 200, 0x2000, PW_MEM_DEVICE),        /* 300 */
		release(PW_EV_CUDA_FREE, 1020, 0x1000, PW_MEM_DEVICE),             /* 200 */
		alloc(PW_EV_CUDA_MALLOC_ASYNC, 1030, 50, 0x3000, PW_MEM_DEVICE_ASYNC), /* 250 */
		release(PW_EV_CUDA_FREE_ASYNC, 1040, 0x2000, PW_MEM_DEVICE_ASYNC), /* 50 */
		alloc(PW_EV_CUDA_MALLOC_PITCH, 1050, 1000, 0x4000, PW_MEM_DEVICE), /* 1050 */
		release(PW_EV_CUDA_FREE, 1060, 0xdead, PW_MEM_DEVICE),             /* unknown */
		release(PW_EV_CUDA_FREE, 1070, 0, PW_MEM_DEVICE),                  /* cudaFree(NULL) */
		alloc_failed(PW_EV_CUDA_MALLOC, 1080, 1ull << 40, PW_MEM_DEVICE),
		alloc_failed(PW_EV_CUDA_MALLOC, 1090, 500, PW_MEM_DEVICE),
		alloc(PW_EV_CUDA_MALLOC_MANAGED, 1100, 300, 0x8000, PW_MEM_MANAGED),
		release(PW_EV_CUDA_FREE, 1110, 0x8000, PW_MEM_DEVICE), /* cudaFree of managed memory */
		alloc(PW_EV_CUDA_MALLOC_HOST, 1120, 64, 0x9000, PW_MEM_HOST_PINNED),
		alloc(PW_EV_CUDA_HOST_REGISTER, 1130, 32, 0xa000, PW_MEM_HOST_REGISTERED), /* pinned 96 */
		release(PW_EV_CUDA_HOST_UNREGISTER, 1140, 0xa000, PW_MEM_HOST_REGISTERED),
		alloc(PW_EV_CUDA_MALLOC, 1150, 70, 0x3000, PW_MEM_DEVICE), /* replaces 0x3000: 1070 */
		release(PW_EV_CUDA_FREE, 1160, 0x4000, PW_MEM_DEVICE),     /* 70 */
		release(PW_EV_CUDA_FREE, 1170, 0x3000, PW_MEM_DEVICE),     /* failed below: stays */
		alloc(PW_EV_CUDA_MALLOC, 1180, 1000, 0x5000, PW_MEM_DEVICE), /* 1070 again, not past */
	};
	a[17].c.h.err = PW_ERR_NO_ERRNO;
	a[17].c.ret = 1;
	put_api_records(fd, a, NREC(a));
	fx_raw_end(fd, 2000);

	fd = fx_raw_open(fx, 21, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_api b[] = {
		alloc(PW_EV_CUDA_MALLOC, 1000, 5000, 0x1000, PW_MEM_DEVICE),
		release(PW_EV_CUDA_FREE, 1100, 0x1000, PW_MEM_DEVICE),
		release(PW_EV_CUDA_FREE, 1200, 0x2000, PW_MEM_DEVICE), /* process 20's, not this one's */
	};
	put_api_records(fd, b, NREC(b));
	fx_raw_end(fd, 2000);

	fd = fx_raw_open(fx, 22, 0, 1000, "train\0--gpu", 11); /* a data-loader worker: no GPU calls */
	struct pw_rec_call c[] = {mkrec(PW_EV_READ, 22, 1100, 1200, 10, 3, 10, 0)};
	put_records(fd, c, 1);
	fx_raw_end(fd, 2000);
	fx_analyze(fx);

	const struct pw_gpu_alloc_stat *s = &gpu0(fx)->alloc;
	assert_int_equal(s->device_peak_bytes, 5000);
	assert_int_equal(s->device_allocs, 6 + 1);
	assert_int_equal(s->device_frees, 3 + 1);
	assert_int_equal(s->failed_allocs, 2);
	assert_int_equal(s->largest_failed_bytes, 1ull << 40);
	assert_int_equal(s->host_pinned_peak_bytes, 96);
	assert_int_equal(s->host_pinned_allocs, 2);
	assert_int_equal(s->managed_peak_bytes, 300);
	assert_int_equal(s->managed_allocs, 1);
	assert_int_equal(s->unknown_frees, 1 + 1);
	assert_int_equal(s->untracked, 0);
	assert_int_equal(rank0(fx)->calls[PW_EV_CUDA_MALLOC].errors, 2);
	assert_int_equal(rank0(fx)->calls[PW_EV_CUDA_FREE].errors, 1);
	pw_analysis_free(&fx->an);

	/* process 21 alone: its own peak is the rank's (the other file renamed away) */
	char from[256], to[256];
	snprintf(from, sizeof from, "%s/0-21.pwt", fx->raw);
	snprintf(to, sizeof to, "%s/0-21.pwt.off", fx->raw);
	assert_int_equal(rename(from, to), 0);
	fx_analyze(fx);
	s = &gpu0(fx)->alloc;
	assert_int_equal(s->device_peak_bytes, 1070);
	assert_int_equal(s->device_allocs, 6);
	assert_int_equal(s->device_frees, 3);
	assert_int_equal(s->unknown_frees, 1);
}

/* Thousands of allocations and frees at random against a plain reference: live bytes, peak and the
 * pinned/pageable verdict of copies match at every step (the tree rebalances, reuses freed nodes). */
static void test_allocation_tree_against_reference(void **state)
{
	struct fx *fx = *state;
	enum { SLOTS = 3000, OPS = 40000 };
	static uint64_t size[SLOTS];
	static unsigned char kind[SLOTS]; /* 0 free, else enum pw_mem */
	static struct pw_rec_api recs[OPS];
	uint64_t live = 0, peak = 0, allocs = 0, frees = 0, pinned_copies = 0, pageable_copies = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull, t = 2000;
	for (int i = 0; i < OPS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t slot = (size_t)(x % SLOTS);
		/* slots interleave so that ranges are adjacent: slot i spans [base + i*0x10000, +size) */
		uint64_t addr = 0x100000000ull + slot * 0x10000ull;
		if (x >> 60 == 0) {
			/* a copy from inside (or just past) the slot's range */
			uint64_t off = (x >> 20) % 0x10000;
			int pinned = kind[slot] == PW_MEM_HOST_PINNED && off < size[slot];
			recs[i] = copy(PW_EV_CUDA_MEMCPY, t, 1, 0x7000, addr + off, PW_COPY_HTOD);
			pinned ? pinned_copies++ : pageable_copies++;
		} else if (!kind[slot]) {
			size[slot] = 1 + (x >> 32) % 0x10000;
			kind[slot] = (x >> 50) & 1 ? PW_MEM_DEVICE : PW_MEM_HOST_PINNED;
			recs[i] = alloc(kind[slot] == PW_MEM_DEVICE ? PW_EV_CUDA_MALLOC : PW_EV_CUDA_MALLOC_HOST, t,
					size[slot], addr, kind[slot]);
			if (kind[slot] == PW_MEM_DEVICE) {
				live += size[slot];
				allocs++;
				if (live > peak)
					peak = live;
			}
		} else {
			recs[i] = release(kind[slot] == PW_MEM_DEVICE ? PW_EV_CUDA_FREE : PW_EV_CUDA_FREE_HOST, t, addr,
					  kind[slot]);
			if (kind[slot] == PW_MEM_DEVICE) {
				live -= size[slot];
				frees++;
			}
			kind[slot] = 0;
		}
		t += 20;
	}
	int fd = fx_raw_open(fx, 30, 0, 1000, "train\0--gpu", 11);
	put_api_records(fd, recs, OPS);
	fx_raw_end(fd, t);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);
	assert_int_equal(g->alloc.device_peak_bytes, peak);
	assert_int_equal(g->alloc.device_allocs, allocs);
	assert_int_equal(g->alloc.device_frees, frees);
	assert_int_equal(g->alloc.unknown_frees, 0);
	assert_int_equal(g->copies[PW_DIR_HTOD].pinned_count, pinned_copies);
	assert_int_equal(g->copies[PW_DIR_HTOD].pageable_count, pageable_copies);
	assert_true(pinned_copies > 100 && pageable_copies > 100);
}

/* The allocation tree stays balanced whatever order addresses come in (ascending here, the worst case for a
 * plain search tree), through inserts and removals; the figures stay right. Driven through the API
 * directly, as analysis.c drives it. */
static void test_allocation_tree_balanced(void **state)
{
	enum { N = 100000 };
	struct pw_gpu_proc gp;
	struct pw_gpu_report *g = NULL;
	static struct pw_call_stat calls[PW_EV_COUNT];
	pw_gpu_proc_init(&gp, 7);
	for (uint64_t i = 0; i < N; i++) {
		struct pw_rec_api r = alloc(PW_EV_CUDA_MALLOC, 1000 + i, 16, 0x10000 + i * 0x100, PW_MEM_DEVICE);
		struct pw_raw_event e = {.rec = &r.c, .t0_ns = r.c.t0, .t1_ns = r.c.t1};
		assert_int_equal(pw_gpu_event(&g, &gp, &e, 5), 0);
	}
	/* 1.44 log2(100000) = 23.9 */
	unsigned h = pw_gpu_proc_height(&gp);
	if (h > 24)
		fail_msg("tree of %d nodes is %u high", N, h);
	assert_int_equal(gp.device_live, 16ull * N);
	for (uint64_t i = 0; i < N; i += 2) {
		struct pw_rec_api r = release(PW_EV_CUDA_FREE, 200000 + i, 0x10000 + i * 0x100, PW_MEM_DEVICE);
		struct pw_raw_event e = {.rec = &r.c, .t0_ns = r.c.t0, .t1_ns = r.c.t1};
		assert_int_equal(pw_gpu_event(&g, &gp, &e, 5), 0);
	}
	h = pw_gpu_proc_height(&gp);
	if (h > 23)
		fail_msg("tree of %d nodes is %u high after removals", N / 2, h);
	assert_int_equal(gp.device_live, 16ull * N / 2);
	/* a copy from inside each remaining allocation finds it: device to device */
	for (uint64_t i = 1; i < N; i += 2) {
		struct pw_rec_api r = copy(PW_EV_CUDA_MEMCPY, 400000 + i, 1, 0x10000 + i * 0x100 + 15,
					   0x10000 + i * 0x100, PW_COPY_DEFAULT);
		struct pw_raw_event e = {.rec = &r.c, .t0_ns = r.c.t0, .t1_ns = r.c.t1};
		assert_int_equal(pw_gpu_event(&g, &gp, &e, 5), 0);
	}
	pw_gpu_proc_end(g, &gp);
	pw_gpu_finish(g, calls);
	assert_int_equal(g->copies[PW_DIR_DTOD].count, N / 2);
	assert_int_equal(g->alloc.device_peak_bytes, 16ull * N);
	assert_int_equal(g->alloc.device_frees, N / 2);
	assert_true(calls[PW_EV_CUDA_MALLOC].median_ns == 0); /* no count given: no median */
	pw_gpu_report_free(g);
}

/* ---- GEMMs ---- */

/* Shapes group by (call, m, n, k, batch, dtype, transa, transb); FLOPs are 2*m*n*k*batch per successful
 * call (a batch of 0 does nothing), x4 for complex types; failed calls count without FLOPs; the rows are
 * sorted by total time. */
static void test_gemm_shapes(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 40, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_api recs[] = {
		gemm(PW_EV_CUBLAS_SGEMM, 1000, 100, 128, 256, 64, 1, 0, 0, 0),
		gemm(PW_EV_CUBLAS_SGEMM, 1200, 100, 128, 256, 64, 1, 0, 0, 0),
		gemm(PW_EV_CUBLAS_SGEMM, 1400, 100, 128, 256, 64, 1, 0, 0, 0),
		gemm(PW_EV_CUBLAS_SGEMM, 1600, 50, 128, 256, 64, 1, 0, 1, 0), /* transa T: another shape */
		gemm(PW_EV_CUBLAS_SGEMM_STRIDED_BATCHED, 1700, 40, 32, 32, 32, 8, 0, 0, 0),
		gemm(PW_EV_CUBLAS_CGEMM, 1800, 30, 16, 16, 16, 1, 4, 0, 2),  /* CUDA_C_32F */
		gemm(PW_EV_CUBLAS_ZGEMM, 1900, 20, 2, 3, 4, 1, 5, 0, 0),     /* CUDA_C_64F */
		gemm(PW_EV_CUBLAS_SGEMM, 2000, 100, 128, 256, 64, 1, 0, 0, 0), /* failed below */
		gemm(PW_EV_CUBLAS_GEMM_EX, 2200, 500, 1024, 1024, 1024, 1, 2, 1, 1),
		gemm(PW_EV_CUBLASLT_MATMUL, 2800, 10, 64, 64, 64, 1, 14, 0, 1),
		gemm(PW_EV_CUBLAS_SGEMM_BATCHED, 2900, 5, 64, 64, 64, 0, 0, 0, 0), /* a batch of none */
	};
	recs[7].c.h.err = PW_ERR_NO_ERRNO;
	recs[7].c.ret = 13;
	put_api_records(fd, recs, NREC(recs));
	fx_raw_end(fd, 5000);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);

	assert_int_equal(g->ngemms, 8);
	assert_int_equal(g->gemm_calls, 11);
	assert_int_equal(g->gemm_flops, 3ull * 4194304 + 4194304 + 524288 + 32768 + 192 + 2147483648ull + 524288);
	const struct pw_gemm_stat *s = &g->gemms[0]; /* the longest: GemmEx 500 ns */
	assert_int_equal(s->ev, PW_EV_CUBLAS_GEMM_EX);
	assert_int_equal(s->flops, 2147483648ull);
	assert_int_equal(s->dtype, 2);
	assert_int_equal(s->transa, 1);
	assert_int_equal(s->transb, 1);
	s = &g->gemms[1]; /* Sgemm NN 128x256x64: 4 calls, 400 ns */
	assert_int_equal(s->ev, PW_EV_CUBLAS_SGEMM);
	assert_int_equal(s->m, 128);
	assert_int_equal(s->n, 256);
	assert_int_equal(s->k, 64);
	assert_int_equal(s->batch, 1);
	assert_int_equal(s->transa, 0);
	assert_int_equal(s->count, 4);
	assert_int_equal(s->total_ns, 400);
	assert_int_equal(s->flops, 3ull * 2 * 128 * 256 * 64);
	s = &g->gemms[2];
	assert_int_equal(s->transa, 1);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->total_ns, 50);
	s = &g->gemms[3];
	assert_int_equal(s->ev, PW_EV_CUBLAS_SGEMM_STRIDED_BATCHED);
	assert_int_equal(s->batch, 8);
	assert_int_equal(s->flops, 2ull * 32 * 32 * 32 * 8);
	s = &g->gemms[4];
	assert_int_equal(s->ev, PW_EV_CUBLAS_CGEMM);
	assert_int_equal(s->flops, 2ull * 16 * 16 * 16 * 4);
	assert_int_equal(s->transb, 2);
	s = &g->gemms[5];
	assert_int_equal(s->ev, PW_EV_CUBLAS_ZGEMM);
	assert_int_equal(s->flops, 2ull * 2 * 3 * 4 * 4);
	s = &g->gemms[6];
	assert_int_equal(s->ev, PW_EV_CUBLASLT_MATMUL);
	assert_int_equal(s->flops, 2ull * 64 * 64 * 64);
	s = &g->gemms[7];
	assert_int_equal(s->ev, PW_EV_CUBLAS_SGEMM_BATCHED);
	assert_int_equal(s->batch, 0);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->flops, 0);
	assert_int_equal(g->gemm_other.count, 0);
}

/* More distinct shapes than the table holds: the rest go to "other", and every total stays exact; a shape
 * already in the table keeps counting there. */
static void test_gemm_shape_bound(void **state)
{
	struct fx *fx = *state;
	enum { EXTRA = 10, N = PW_GPU_MAX_SHAPES + EXTRA };
	static struct pw_rec_api recs[N + 1];
	uint64_t flops = 0, other_flops = 0;
	for (uint64_t i = 0; i < N; i++) {
		recs[i] = gemm(PW_EV_CUBLAS_DGEMM, 1000 + i * 10, 1, i + 1, 1, 1, 1, 1, 0, 0);
		flops += 2 * (i + 1);
		if (i >= PW_GPU_MAX_SHAPES)
			other_flops += 2 * (i + 1);
	}
	recs[N] = gemm(PW_EV_CUBLAS_DGEMM, 1000 + N * 10, 5, 1, 1, 1, 1, 1, 0, 0); /* m=1 again */
	flops += 2;
	int fd = fx_raw_open(fx, 41, 0, 1000, "train\0--gpu", 11);
	put_api_records(fd, recs, NREC(recs));
	fx_raw_end(fd, 1000 + N * 10 + 100);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);
	assert_int_equal(g->ngemms, PW_GPU_MAX_SHAPES);
	assert_int_equal(g->gemm_other.count, EXTRA);
	assert_int_equal(g->gemm_other.total_ns, EXTRA);
	assert_int_equal(g->gemm_other.flops, other_flops);
	assert_int_equal(g->gemm_calls, N + 1);
	assert_int_equal(g->gemm_flops, flops);
	assert_int_equal(g->gemms[0].m, 1); /* 1 + 5 ns: the longest */
	assert_int_equal(g->gemms[0].count, 2);
	uint64_t sum = g->gemm_other.flops;
	for (size_t i = 0; i < g->ngemms; i++)
		sum += g->gemms[i].flops;
	assert_int_equal(sum, flops);
}

/* ---- collectives ---- */

/* Bytes as nccl-tests counts them (AllGather and ReduceScatter: x nranks), nranks 0 taken as 1, an unknown
 * data type moves nothing, failed calls count without bytes; bus bytes with nccl-tests' factors. */
static void test_collectives(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 50, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_api recs[] = {
		coll(PW_EV_NCCL_ALL_REDUCE, 1000, 1000, 1 << 20, 7, 0, 4),
		coll(PW_EV_NCCL_ALL_REDUCE, 3000, 500, 1 << 20, 7, 0, 4), /* failed below */
		coll(PW_EV_NCCL_ALL_GATHER, 4000, 400, 1000, 6, 0, 4),
		coll(PW_EV_NCCL_ALL_GATHER, 5000, 100, 4, 2, 0, 0),
		coll(PW_EV_NCCL_REDUCE_SCATTER, 6000, 200, 10, 4, 1, 2),
		coll(PW_EV_NCCL_SEND, 7000, 50, 100, 1, 0, 0),
		coll(PW_EV_NCCL_BROADCAST, 8000, 40, 5, 8, 0, 8),
		coll(PW_EV_NCCL_REDUCE, 9000, 30, 10, 200, 0, 8),
	};
	recs[1].c.h.err = PW_ERR_NO_ERRNO;
	recs[1].c.ret = 2;
	recs[5].a[1] = 3; /* peer */
	put_api_records(fd, recs, NREC(recs));
	fx_raw_end(fd, 10000);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);

	const struct pw_coll_stat *c = &g->colls[PW_EV_NCCL_ALL_REDUCE];
	assert_int_equal(c->count, 2);
	assert_int_equal(c->bytes, 4u << 20);
	assert_int_equal(c->total_ns, 1500);
	assert_true(c->bus_bytes == (double)(4u << 20) * 1.5);
	c = &g->colls[PW_EV_NCCL_ALL_GATHER];
	assert_int_equal(c->count, 2);
	assert_int_equal(c->bytes, 1000 * 2 * 4 + 4 * 4);
	assert_true(c->bus_bytes == 8000 * 0.75 + 0.0);
	c = &g->colls[PW_EV_NCCL_REDUCE_SCATTER];
	assert_int_equal(c->bytes, 10 * 8 * 2);
	assert_true(c->bus_bytes == 80.0);
	c = &g->colls[PW_EV_NCCL_SEND];
	assert_int_equal(c->bytes, 100);
	assert_true(c->bus_bytes == 100.0);
	c = &g->colls[PW_EV_NCCL_BROADCAST];
	assert_int_equal(c->bytes, 40);
	c = &g->colls[PW_EV_NCCL_REDUCE];
	assert_int_equal(c->count, 1);
	assert_int_equal(c->bytes, 0);
	assert_int_equal(g->colls[PW_EV_NCCL_RECV].count, 0);

	assert_true(pw_coll_bus_factor(PW_EV_NCCL_ALL_REDUCE, 8) == 1.75);
	assert_true(pw_coll_bus_factor(PW_EV_NCCL_ALL_REDUCE, 0) == 0.0);
	assert_true(pw_coll_bus_factor(PW_EV_NCCL_REDUCE_SCATTER, 4) == 0.75);
	assert_true(pw_coll_bus_factor(PW_EV_NCCL_RECV, 4) == 1.0);
}

/* ---- kernel launches ---- */

/* Launches group by kernel name across the launch calls; the most frequent grid and block; no name is
 * "(unknown)", graph launches are "CUDA graph"; a configuration that dominates is found among more than
 * the tracked ones. */
static void test_kernel_launches(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 60, 0, 1000, "train\0--gpu", 11);
	put_string(fd, 8, "kernA");
	put_string(fd, 24, "kernB");
	put_string(fd, 40, "kernC");
	struct pw_rec_api recs[40];
	size_t n = 0;
	uint64_t t = 1000;
	for (int i = 0; i < 3; i++, t += 100)
		recs[n++] = launch(PW_EV_CUDA_LAUNCH_KERNEL, t, 10, 8, 128, 1, 1, 256, 1, 1);
	recs[n++] = launch(PW_EV_CUDA_LAUNCH_KERNEL, t += 100, 10, 8, 64, 2, 1, 128, 1, 1);
	recs[n++] = launch(PW_EV_CUDA_LAUNCH_KERNEL_EXC, t += 100, 20, 8, 128, 1, 1, 256, 1, 1);
	recs[n++] = launch(PW_EV_CUDA_LAUNCH_KERNEL, t += 100, 7, 24, 1, 1, 1, 32, 1, 1);
	recs[n] = launch(PW_EV_CUDA_LAUNCH_KERNEL, t += 100, 3, 24, 1, 1, 1, 32, 1, 1);
	recs[n].c.h.err = PW_ERR_NO_ERRNO;
	recs[n++].c.ret = 98;
	recs[n++] = launch(PW_EV_CUDA_LAUNCH_KERNEL, t += 100, 1, 0, 2, 2, 2, 4, 4, 4);
	recs[n++] = launch(PW_EV_CUDA_LAUNCH_COOPERATIVE_KERNEL, t += 100, 1, 0, 2, 2, 2, 4, 4, 4);
	recs[n++] = api(PW_EV_CUDA_GRAPH_LAUNCH, t += 100, 30);
	recs[n++] = api(PW_EV_CUDA_GRAPH_LAUNCH, t += 100, 30);
	/* kernC: 4 launches of one configuration, then 10 others once each */
	for (int i = 0; i < 4; i++)
		recs[n++] = launch(PW_EV_CUDA_LAUNCH_KERNEL, t += 100, 1, 40, 7, 7, 7, 8, 8, 1);
	for (uint32_t i = 0; i < 10; i++)
		recs[n++] = launch(PW_EV_CUDA_LAUNCH_KERNEL, t += 100, 1, 40, 100 + i, 1, 1, 32, 1, 1);
	assert_true(n <= NREC(recs));
	put_api_records(fd, recs, n);
	fx_raw_end(fd, t + 1000);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);

	assert_int_equal(g->nkernels, 5);
	const struct pw_kernel_stat *k = &g->kernels[0];
	assert_string_equal(k->name, "kernC");
	assert_int_equal(k->launches, 14);
	assert_int_equal(k->grid[0], 7);
	assert_int_equal(k->block[1], 8);
	assert_int_equal(k->block[2], 1);
	k = &g->kernels[1];
	assert_string_equal(k->name, "kernA");
	assert_int_equal(k->launches, 5);
	assert_int_equal(k->total_ns, 60);
	assert_int_equal(k->grid[0], 128);
	assert_int_equal(k->grid[1], 1);
	assert_int_equal(k->grid[2], 1);
	assert_int_equal(k->block[0], 256);
	assert_int_equal(k->config_count, 4);
	k = &g->kernels[2]; /* 2 launches each: by time then name */
	assert_string_equal(k->name, "CUDA graph");
	assert_int_equal(k->launches, 2);
	assert_int_equal(k->total_ns, 60);
	assert_int_equal(k->config_count, 0);
	k = &g->kernels[3];
	assert_string_equal(k->name, "(unknown)");
	assert_int_equal(k->launches, 2);
	assert_int_equal(k->grid[2], 2);
	assert_int_equal(k->block[2], 4);
	k = &g->kernels[4]; /* its failed launch launched nothing: counted apart, its call time in */
	assert_string_equal(k->name, "kernB");
	assert_int_equal(k->launches, 1);
	assert_int_equal(k->failed, 1);
	assert_int_equal(k->total_ns, 10);
	assert_int_equal(k->block[0], 32);
	assert_int_equal(g->nerrors, 1);
	assert_int_equal(g->errors[0].code, 98);
}

/* More kernel names than the table holds: the rest go to "(other kernels)", launches stay exact. */
static void test_kernel_bound(void **state)
{
	struct fx *fx = *state;
	enum { EXTRA = 4, N = PW_GPU_MAX_KERNELS + EXTRA };
	int fd = fx_raw_open(fx, 61, 0, 1000, "train\0--gpu", 11);
	static struct pw_rec_api recs[N];
	for (int i = 0; i < N; i++) {
		char name[32];
		snprintf(name, sizeof name, "kernel_%05d", i);
		put_string(fd, 8 + (uint64_t)i * 32, name);
		recs[i] = launch(PW_EV_CUDA_LAUNCH_KERNEL, 1000 + (uint64_t)i * 10, 2, 8 + (uint64_t)i * 32, 1, 1, 1, 1,
				 1, 1);
	}
	put_api_records(fd, recs, N);
	fx_raw_end(fd, 1000 + N * 10 + 100);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);
	assert_int_equal(g->nkernels, PW_GPU_MAX_KERNELS);
	assert_int_equal(g->kernel_other.count, EXTRA);
	assert_int_equal(g->kernel_other.total_ns, 2 * EXTRA);
	uint64_t launches = g->kernel_other.count;
	for (size_t i = 0; i < g->nkernels; i++)
		launches += g->kernels[i].launches;
	assert_int_equal(launches, N);
}

/* ---- errors, cuDNN, synchronisation, devices ---- */

/* Failed GPU calls by (call, status code), most frequent first; a query's cudaErrorNotReady is no failure. */
static void test_errors_by_code(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 70, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_api recs[] = {
		failed_api(PW_EV_CUDA_MALLOC, 1000, 5, 2),
		failed_api(PW_EV_CUDA_MALLOC, 1100, 5, 2),
		failed_api(PW_EV_CUDA_MALLOC, 1200, 5, 2),
		failed_api(PW_EV_CUDA_MEMCPY, 1300, 5, 1),
		failed_api(PW_EV_CUBLAS_SGEMM, 1400, 5, 13),
		failed_api(PW_EV_CUDNN_CONV_FWD, 1500, 5, 2000),
		failed_api(PW_EV_NCCL_ALL_REDUCE, 1600, 5, 4),
		failed_api(PW_EV_NCCL_ALL_REDUCE, 1650, 5, 4),
		failed_api(PW_EV_CUDA_MALLOC, 1700, 5, 12345),
		mkapi(PW_EV_CUDA_STREAM_QUERY, TID, 1800, 1805, 600, 0, 0, 0),
	};
	put_api_records(fd, recs, NREC(recs));
	fx_raw_end(fd, 2000);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);
	assert_int_equal(g->nerrors, 6);
	assert_int_equal(g->errors[0].ev, PW_EV_CUDA_MALLOC);
	assert_int_equal(g->errors[0].code, 2);
	assert_int_equal(g->errors[0].count, 3);
	assert_int_equal(g->errors[1].ev, PW_EV_NCCL_ALL_REDUCE);
	assert_int_equal(g->errors[1].code, 4);
	assert_int_equal(g->errors[1].count, 2);
	/* then the single ones by event id (cudaMemcpy's comes before cudaMalloc's in the table) */
	assert_int_equal(g->errors[2].ev, PW_EV_CUDA_MEMCPY);
	assert_int_equal(g->errors[2].code, 1);
	assert_int_equal(g->errors[3].ev, PW_EV_CUDA_MALLOC);
	assert_int_equal(g->errors[3].code, 12345);
	assert_int_equal(g->errors[4].ev, PW_EV_CUBLAS_SGEMM);
	assert_int_equal(g->errors[4].code, 13);
	assert_int_equal(g->errors[5].ev, PW_EV_CUDNN_CONV_FWD);
	assert_int_equal(g->errors_other, 0);
	assert_int_equal(rank0(fx)->calls[PW_EV_CUDA_STREAM_QUERY].errors, 0);
	assert_int_equal(rank0(fx)->calls[PW_EV_CUDA_MALLOC].errors, 4);
}

/* cudnnBackendExecute groups by the plan's operation mask; legacy calls are only call figures. */
static void test_cudnn_graphs(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 80, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_api recs[] = {
		mkapi(PW_EV_CUDNN_BACKEND_EXECUTE, TID, 1000, 1100, 0, 1ull << 10 | 1ull << 13, 0, 0),
		mkapi(PW_EV_CUDNN_BACKEND_EXECUTE, TID, 1200, 1500, 0, 1ull << 10 | 1ull << 13, 0, 0),
		mkapi(PW_EV_CUDNN_BACKEND_EXECUTE, TID, 1600, 1650, 0, 1ull << 19, 0, 0),
		mkapi(PW_EV_CUDNN_CONV_FWD, TID, 1700, 1800, 0, 0, 0, 0),
	};
	put_api_records(fd, recs, NREC(recs));
	fx_raw_end(fd, 2000);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);
	assert_int_equal(g->ndnn_graphs, 2);
	assert_int_equal(g->dnn_graphs[0].mask, 1ull << 10 | 1ull << 13);
	assert_int_equal(g->dnn_graphs[0].count, 2);
	assert_int_equal(g->dnn_graphs[0].total_ns, 400);
	assert_int_equal(g->dnn_graphs[1].mask, 1ull << 19);
	assert_int_equal(g->dnn_graphs[1].count, 1);
	assert_int_equal(rank0(fx)->calls[PW_EV_CUDNN_CONV_FWD].count, 1);
}

/* Time blocked in synchronising calls; devices and the distinct streams work went to (per process, the
 * per-thread default stream per thread). */
static void test_sync_devices_streams(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 90, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_api recs[] = {
		api(PW_EV_CUDA_DEVICE_SYNCHRONIZE, 1000, 1000),
		api(PW_EV_CUDA_STREAM_SYNCHRONIZE, 3000, 500),
		api(PW_EV_CUDA_EVENT_SYNCHRONIZE, 4000, 250),
		api(PW_EV_CUDA_STREAM_WAIT_EVENT, 5000, 100),
		launch(PW_EV_CUDA_LAUNCH_KERNEL, 6000, 1, 0, 1, 1, 1, 1, 1, 1),
		launch(PW_EV_CUDA_LAUNCH_KERNEL, 6100, 1, 0, 1, 1, 1, 1, 1, 1),
		launch(PW_EV_CUDA_LAUNCH_KERNEL, 6200, 1, 0, 1, 1, 1, 1, 1, 1),
		copy(PW_EV_CUDA_MEMCPY, 6300, 1, 0, 0, PW_COPY_HTOD),
		copy(PW_EV_CUDA_MEMCPY, 6400, 1, 0, 0, PW_COPY_HTOD | PW_API_PTSZ),
		copy(PW_EV_CUDA_MEMCPY, 6500, 1, 0, 0, PW_COPY_HTOD | PW_API_PTSZ),
		gemm(PW_EV_CUBLAS_SGEMM, 6600, 1, 1, 1, 1, 1, 0, 0, 0),
		api(PW_EV_CUDA_SET_DEVICE, 6700, 1),
		api(PW_EV_CUDA_GET_DEVICE, 6800, 1),
	};
	recs[4].stream = 0x10;
	recs[5].stream = 0x20;
	recs[6].stream = 0x10;
	recs[9].c.h.tid = TID + 1; /* another thread's per-thread default stream */
	recs[10].device = 1;
	recs[10].stream = 0x10;
	recs[11].device = 2;
	recs[12].device = -1;
	put_api_records(fd, recs, NREC(recs));
	fx_raw_end(fd, 11000);
	fd = fx_raw_open(fx, 91, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_api other[] = {launch(PW_EV_CUDA_LAUNCH_KERNEL, 2000, 1, 0, 1, 1, 1, 1, 1, 1)};
	other[0].stream = 0x10; /* the same handle in another process is another stream */
	put_api_records(fd, other, 1);
	fx_raw_end(fd, 3000);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);
	assert_int_equal(g->sync_count, 3);
	assert_int_equal(g->sync_ns, 1750);
	assert_int_equal(g->ndevices, 3);
	assert_int_equal(g->devices[0].id, 0);
	assert_int_equal(g->devices[0].streams, 2 + 1 + 2 + 1); /* 0x10, 0x20, legacy 0, 2 per-thread, 0x10 of 91 */
	assert_int_equal(g->devices[1].id, 1);
	assert_int_equal(g->devices[1].streams, 1);
	assert_int_equal(g->devices[2].id, 2);
	assert_int_equal(g->devices[2].streams, 0);
	assert_int_equal(rank0(fx)->wall_ns, 10000);
}

/* ---- hostile values ---- */

/* Products and sums that overflow saturate; nranks 0, unknown directions, memory kinds and data types, huge
 * dims and addresses at the top of the address space neither crash nor wrap; the reports still write. */
static void test_hostile_values(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 99, 0, 1000, "train\0--gpu", 11);
	put_string(fd, 8, "k\xff\x01 \"quoted\"");
	put_string(fd, 40, "");
	struct pw_rec_api recs[] = {
		gemm(PW_EV_CUBLAS_SGEMM, 1000, 10, 1ull << 40, 1ull << 40, 1ull << 40, 1, 0, 0, 0),
		gemm(PW_EV_CUBLAS_SGEMM, 1100, 10, 1ull << 40, 1ull << 40, 1ull << 40, 1, 0, 0, 0),
		gemm(PW_EV_CUBLAS_CGEMM, 1200, 10, 1ull << 20, 1ull << 20, 1ull << 20, 1ull << 10, 4, 0, 0),
		gemm(PW_EV_CUBLAS_GEMM_EX, 1300, 10, 0, 5, 5, UINT64_MAX, 255, 255, 255),
		coll(PW_EV_NCCL_ALL_REDUCE, 1400, 10, 1ull << 62, 8, 0, 0),
		coll(PW_EV_NCCL_ALL_GATHER, 1500, 10, 1ull << 40, 8, 0, 0xffffffffu),
		coll(PW_EV_NCCL_ALL_GATHER, 1600, 0, 1, 255, 255, 0),
		copy(PW_EV_CUDA_MEMCPY, 1700, UINT64_MAX, 1, 2, PW_COPY_HTOD),
		copy(PW_EV_CUDA_MEMCPY, 1800, UINT64_MAX, 1, 2, PW_COPY_HTOD),
		copy(PW_EV_CUDA_MEMCPY, 1900, 5, 1, 2, 77),
		alloc(PW_EV_CUDA_MALLOC, 2000, UINT64_MAX, 0x1000, PW_MEM_DEVICE),
		alloc(PW_EV_CUDA_MALLOC, 2100, UINT64_MAX, 0x2000, PW_MEM_DEVICE),
		alloc(PW_EV_CUDA_MALLOC, 2200, 100, UINT64_MAX - 10, PW_MEM_HOST_PINNED),
		alloc(PW_EV_CUDA_MALLOC, 2300, 100, 0x3000, 99),
		copy(PW_EV_CUDA_MEMCPY, 2400, 1, 0x7000, UINT64_MAX, PW_COPY_HTOD),
		release(PW_EV_CUDA_FREE, 2500, 0x1000, PW_MEM_DEVICE),
		release(PW_EV_CUDA_FREE, 2600, 0x3000, 99),
		launch(PW_EV_CUDA_LAUNCH_KERNEL, 2700, 10, 8, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX,
		       UINT32_MAX),
		mkapi(PW_EV_CUDNN_BACKEND_EXECUTE, TID, 2800, 2810, 0, UINT64_MAX, 0, 0),
		mkapi(PW_EV_CUDA_MALLOC, TID, 3000, 2900, 1, 0, 0, 1), /* ends before it starts */
		failed_api(PW_EV_NCCL_SEND, 3100, 10, INT64_MIN),
		launch(PW_EV_CUDA_LAUNCH_KERNEL, 3200, 1, 40, 1, 1, 1, 1, 1, 1), /* an empty name */
	};
	recs[7].c.t1 = UINT64_MAX / 2; /* a huge duration */
	recs[20].device = INT32_MIN;
	put_api_records(fd, recs, NREC(recs));
	fx_raw_end(fd, 5000);
	fx_analyze(fx);
	const struct pw_gpu_report *g = gpu0(fx);
	assert_int_equal(g->gemm_flops, UINT64_MAX);
	assert_int_equal(g->gemms[0].flops == UINT64_MAX || g->gemms[1].flops == UINT64_MAX, 1);
	assert_int_equal(g->ngemms, 3);
	assert_int_equal(g->colls[PW_EV_NCCL_ALL_REDUCE].bytes, UINT64_MAX);
	assert_int_equal(g->colls[PW_EV_NCCL_ALL_GATHER].bytes, UINT64_MAX);
	assert_int_equal(g->colls[PW_EV_NCCL_ALL_GATHER].count, 2);
	assert_int_equal(g->copies[PW_DIR_HTOD].bytes, UINT64_MAX);
	assert_int_equal(g->copies[PW_DIR_HTOD].count, 3);
	assert_int_equal(g->copies[PW_DIR_HTOD].pinned_count, 1); /* the copy from UINT64_MAX */
	assert_int_equal(g->copies[PW_DIR_HTOH].count, 1);        /* direction 77: inferred */
	assert_int_equal(g->alloc.device_peak_bytes, UINT64_MAX);
	assert_int_equal(g->alloc.host_pinned_peak_bytes, 100);
	assert_int_equal(g->alloc.unknown_frees, 1); /* the unknown kind was never tracked */
	assert_int_equal(g->nkernels, 2);
	assert_int_equal(g->kernels[0].grid[0], UINT32_MAX); /* 10 ns: first */
	assert_int_equal(g->kernels[0].block[2], UINT32_MAX);
	assert_string_equal(g->kernels[1].name, "(unknown)");
	assert_int_equal(g->errors[0].count + g->errors[1].count, 2);
	char err[512] = "";
	if (pw_write_reports(&fx->an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
}

/* ---- reports ---- */

/* A run with a bit of everything: one rank, a GPU process and a loader. */
static void build_gpu_run(const struct fx *fx)
{
	int fd = fx_raw_open(fx, 100, 0, 1000, "train\0--gpu", 11);
	put_string(fd, 8, "kernA");
	struct pw_rec_api recs[] = {
		alloc(PW_EV_CUDA_MALLOC, 1000, 1 << 20, DEV_A, PW_MEM_DEVICE),
		alloc(PW_EV_CUDA_MALLOC_HOST, 1100, 4096, HOST_PINNED, PW_MEM_HOST_PINNED),
		alloc_failed(PW_EV_CUDA_MALLOC, 1200, 1ull << 36, PW_MEM_DEVICE),
		copy(PW_EV_CUDA_MEMCPY, 1300, 1000, DEV_A, HOST_PINNED, PW_COPY_HTOD),
		copy(PW_EV_CUDA_MEMCPY, 1400, 2000, DEV_A, 0x1234, PW_COPY_DEFAULT),
		copy(PW_EV_CUDA_MEMCPY_ASYNC, 1500, 500, 0x1234, DEV_A, PW_COPY_DTOH | PW_API_ASYNC),
		copy(PW_EV_CUDA_MEMSET, 1600, 64, DEV_A, 0, 0),
		launch(PW_EV_CUDA_LAUNCH_KERNEL, 1700, 10, 8, 128, 1, 1, 256, 1, 1),
		launch(PW_EV_CUDA_LAUNCH_KERNEL, 1800, 10, 8, 128, 1, 1, 256, 1, 1),
		gemm(PW_EV_CUBLAS_SGEMM, 1900, 100, 128, 256, 64, 1, 0, 0, 1),
		coll(PW_EV_NCCL_ALL_GATHER, 2000, 1000, 1000, 6, 0, 4),
		mkapi(PW_EV_CUDNN_BACKEND_EXECUTE, TID, 3000, 3100, 0, 1ull << 10 | 1ull << 13, 0, 0),
		api(PW_EV_CUDA_DEVICE_SYNCHRONIZE, 4000, 2000),
	};
	recs[12].stream = 0;
	put_api_records(fd, recs, NREC(recs));
	struct pw_rec_call io[] = {mkrec(PW_EV_READ, TID, 6500, 6600, 5, 0, 5, 0)};
	put_records(fd, io, 1);
	fx_raw_end(fd, 11000);
	fd = fx_raw_open(fx, 101, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_call lo[] = {mkrec(PW_EV_READ, 101, 1100, 1200, 10, 3, 10, 0)};
	put_records(fd, lo, 1);
	fx_raw_end(fd, 2000);
}

/* rank0.json carries the GPU keys with the exact figures; every GPU call of "calls" has a median. */
static void test_json_report(void **state)
{
	struct fx *fx = *state;
	build_gpu_run(fx);
	fx_analyze(fx);
	char err[512] = "";
	if (pw_write_reports(&fx->an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
	struct jr *doc = fx_json(fx, "rank0.json");
	const struct jr *j = jr_at(doc, 0);

	const struct jr *calls = jr_get(j, "calls");
	const struct jr *c = jr_find(calls, "name", "cudaMalloc");
	assert_true(jr_is(jr_get(c, "domain"), "cudart"));
	assert_int_equal(jr_u64(jr_get(c, "count")), 2);
	assert_int_equal(jr_u64(jr_get(c, "errors")), 1);
	assert_int_equal(jr_u64(jr_get(c, "median_ns")), 5);
	c = jr_find(calls, "name", "ncclAllGather");
	assert_true(jr_is(jr_get(c, "domain"), "nccl"));
	assert_int_equal(jr_u64(jr_get(c, "median_ns")), 1000);
	c = jr_find(calls, "name", "cublasSgemm_v2");
	assert_true(jr_is(jr_get(c, "domain"), "cublas"));
	c = jr_find(calls, "name", "cudnnBackendExecute");
	assert_true(jr_is(jr_get(c, "domain"), "cudnn"));
	assert_false(jr_has(jr_find(calls, "name", "read"), "median_ns"));

	const struct jr *m = jr_find(jr_get(j, "memcpy"), "kind", "HtoD");
	assert_int_equal(jr_u64(jr_get(m, "count")), 2);
	assert_int_equal(jr_u64(jr_get(m, "bytes")), 3000);
	assert_int_equal(jr_u64(jr_get(m, "total_ns")), 20);
	assert_int_equal(jr_u64(jr_get(m, "pinned_count")), 1);
	assert_int_equal(jr_u64(jr_get(m, "pinned_bytes")), 1000);
	assert_int_equal(jr_u64(jr_get(m, "pageable_count")), 1);
	assert_int_equal(jr_u64(jr_get(m, "pageable_bytes")), 2000);
	m = jr_find(jr_get(j, "memcpy"), "kind", "DtoH");
	assert_int_equal(jr_u64(jr_get(m, "bytes")), 500);
	assert_int_equal(jr_u64(jr_get(m, "async_count")), 1);
	assert_int_equal(jr_get(j, "memcpy")->n, 2);
	const struct jr *ms = jr_get(j, "memset");
	assert_int_equal(jr_u64(jr_get(ms, "count")), 1);
	assert_int_equal(jr_u64(jr_get(ms, "bytes")), 64);
	assert_int_equal(jr_u64(jr_get(ms, "total_ns")), 10);

	const struct jr *al = jr_get(j, "allocations");
	assert_int_equal(jr_u64(jr_get(al, "device_peak_bytes")), 1 << 20);
	assert_int_equal(jr_u64(jr_get(al, "device_allocs")), 1);
	assert_int_equal(jr_u64(jr_get(al, "device_frees")), 0);
	assert_int_equal(jr_u64(jr_get(al, "failed_allocs")), 1);
	assert_int_equal(jr_u64(jr_get(al, "largest_failed_bytes")), 1ull << 36);
	assert_int_equal(jr_u64(jr_get(al, "host_pinned_peak_bytes")), 4096);
	assert_int_equal(jr_u64(jr_get(al, "managed_peak_bytes")), 0);

	const struct jr *ge = jr_at(jr_get(j, "gemms"), 0);
	assert_true(jr_is(jr_get(ge, "name"), "cublasSgemm_v2"));
	assert_int_equal(jr_u64(jr_get(ge, "m")), 128);
	assert_int_equal(jr_u64(jr_get(ge, "n")), 256);
	assert_int_equal(jr_u64(jr_get(ge, "k")), 64);
	assert_int_equal(jr_u64(jr_get(ge, "batch")), 1);
	assert_true(jr_is(jr_get(ge, "dtype"), "CUDA_R_32F"));
	assert_true(jr_is(jr_get(ge, "transb"), "T"));
	assert_int_equal(jr_u64(jr_get(ge, "count")), 1);
	assert_int_equal(jr_u64(jr_get(ge, "total_ns")), 100);
	assert_int_equal(jr_u64(jr_get(ge, "flops")), 4194304);
	assert_int_equal(jr_u64(jr_get(j, "gemm_flops")), 4194304);

	const struct jr *co = jr_find(jr_get(j, "collectives"), "name", "ncclAllGather");
	assert_int_equal(jr_u64(jr_get(co, "count")), 1);
	assert_int_equal(jr_u64(jr_get(co, "bytes")), 8000);
	assert_int_equal(jr_u64(jr_get(co, "total_ns")), 1000);
	assert_true(fabs(jr_num(jr_get(co, "algbw_gbps")) - 8.0) < 1e-9);
	assert_true(fabs(jr_num(jr_get(co, "busbw_gbps")) - 6.0) < 1e-9);

	const struct jr *k = jr_find(jr_get(j, "kernels_launched"), "name", "kernA");
	assert_int_equal(jr_u64(jr_get(k, "launches")), 2);
	assert_int_equal(jr_u64(jr_get(k, "total_ns")), 20);
	assert_int_equal(jr_u64(jr_at(jr_get(k, "grid"), 0)), 128);
	assert_int_equal(jr_u64(jr_at(jr_get(k, "grid"), 2)), 1);
	assert_int_equal(jr_u64(jr_at(jr_get(k, "block"), 0)), 256);

	const struct jr *e = jr_at(jr_get(j, "gpu_errors"), 0);
	assert_true(jr_is(jr_get(e, "call"), "cudaMalloc"));
	assert_int_equal(jr_i64(jr_get(e, "code")), 2);
	assert_true(jr_is(jr_get(e, "name"), "cudaErrorMemoryAllocation"));
	assert_int_equal(jr_u64(jr_get(e, "count")), 1);

	const struct jr *d = jr_at(jr_get(j, "cudnn_graphs"), 0);
	assert_true(jr_is(jr_get(d, "ops"), "ConvolutionForward+Pointwise"));
	assert_int_equal(jr_u64(jr_get(d, "count")), 1);
	assert_int_equal(jr_u64(jr_get(d, "total_ns")), 100);

	const struct jr *s = jr_get(j, "gpu_sync");
	assert_int_equal(jr_u64(jr_get(s, "count")), 1);
	assert_int_equal(jr_u64(jr_get(s, "total_ns")), 2000);
	assert_true(fabs(jr_num(jr_get(s, "wall_share")) - 0.2) < 1e-9);
	fx_json_free(doc);

	doc = fx_json(fx, "summary.json");
	const struct jr *r0 = jr_at(jr_get(jr_at(doc, 0), "ranks"), 0);
	/* the summary's waits hold the time blocked on the GPU */
	assert_int_equal(jr_u64(jr_get(r0, "wait_ns")), 2000);
	fx_json_free(doc);
}

/* rank0.txt has the GPU sections with their figures; summary.txt the time blocked on the GPU. */
static void test_text_report(void **state)
{
	struct fx *fx = *state;
	build_gpu_run(fx);
	fx_analyze(fx);
	char err[512] = "";
	if (pw_write_reports(&fx->an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
	size_t n;
	char *t = fx_slurp(fx, "rank0.txt", &n);
	static const char *const expect[] = {
		"Blocked on the GPU: 2.00 us (20.0% of wall) in 1 synchronising call\n",
		"(explicit synchronisation only: the 2 synchronous copies wait for the GPU too",
		"CUDA API summary",
		"| cudart | cudaDeviceSynchronize |",
		"GPU API errors",
		"| cudaMalloc | cudaErrorMemoryAllocation (2) |     1 |",
		"Kernel launches (1 kernel,",
		"| kernA  |        2 |           20 ns | 128x1x1 | 256x1x1 |",
		"GEMM shapes (1,",
		"| cublasSgemm_v2 NT | 128 | 256 | 64 |     1 | CUDA_R_32F |     1 | 100 ns | 0.00419 |",
		"Total: 4.19 MFLOP in 1 GEMM call",
		"achieved TFLOP/s needs GPU times (CUPTI)",
		"cuDNN graph executions",
		"| ConvolutionForward+Pointwise |     1 | 100 ns |",
		"Collectives (CPU-side; GPU times need CUPTI",
		"| ncclAllGather |     1 | 8.00 kB |  1.00 us |       8.00 |       6.00 |",
		"Memory operations",
		"| HtoD      | pinned      |     1 | 1.00 kB | 10 ns |  100 |",
		"| HtoD      | pageable    |     1 | 2.00 kB | 10 ns |  200 |",
		"| DtoH      | pageable    |     1 |   500 B | 10 ns | 50.0 |",
		"| Memset    | -           |     1 |    64 B | 10 ns | 6.40 |",
		"1 of the copies were asynchronous",
		"Device allocations",
		"|   1.05 MB |      1 |     0 |      1 |        68.7 GB |          4.10 kB |          0 B |",
	};
	for (size_t i = 0; i < NREC(expect); i++)
		if (!strstr(t, expect[i])) {
			fprintf(stderr, "%s", t);
			fail_msg("rank0.txt lacks \"%s\"", expect[i]);
		}
	/* the GPU part comes after Calls and before Files */
	assert_true(strstr(t, "Calls (") < strstr(t, "GPU\n"));
	assert_true(strstr(t, "Device allocations") < strstr(t, "Files"));
	free(t);
	t = fx_slurp(fx, "summary.txt", &n);
	if (!strstr(t, "Waits") || !strstr(t, "2.00 us")) {
		fprintf(stderr, "%s", t);
		fail_msg("summary.txt lacks the time blocked on the GPU");
	}
	free(t);
}

/* GPU calls are slices of their thread with the arguments that say what they did. */
static void test_trace_args(void **state)
{
	struct fx *fx = *state;
	build_gpu_run(fx);
	fx_analyze(fx);
	char err[512] = "";
	if (pw_write_reports(&fx->an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
	struct jr *doc = fx_json(fx, "rank0.trace.json");
	const struct jr *ev = jr_get(jr_at(doc, 0), "traceEvents");

	const struct jr *s = jr_find(ev, "name", "cudaLaunchKernel");
	assert_true(jr_is(jr_get(s, "cat"), "cuda_runtime"));
	assert_true(jr_is(jr_get(jr_get(s, "args"), "kernel"), "kernA"));
	assert_int_equal(jr_u64(jr_get(s, "tid")), TID);
	assert_int_equal(jr_u64(jr_get(s, "pid")), 100);
	const struct jr *a = jr_get(s, "args");
	assert_true(jr_is(jr_get(a, "grid"), "128x1x1"));
	assert_true(jr_is(jr_get(a, "block"), "256x1x1"));
	assert_int_equal(jr_u64(jr_get(a, "device")), 0);

	s = jr_find(ev, "name", "cudaMemcpyAsync");
	a = jr_get(s, "args");
	assert_int_equal(jr_u64(jr_get(a, "bytes")), 500);
	assert_true(jr_is(jr_get(a, "kind"), "DtoH"));
	assert_true(jr_get(a, "async")->type == JR_BOOL);

	s = jr_find(ev, "name", "cublasSgemm_v2");
	a = jr_get(s, "args");
	assert_int_equal(jr_u64(jr_get(a, "m")), 128);
	assert_int_equal(jr_u64(jr_get(a, "n")), 256);
	assert_int_equal(jr_u64(jr_get(a, "k")), 64);
	assert_int_equal(jr_u64(jr_get(a, "batch")), 1);
	assert_true(jr_is(jr_get(a, "trans"), "NT"));

	s = jr_find(ev, "name", "ncclAllGather");
	a = jr_get(s, "args");
	assert_int_equal(jr_u64(jr_get(a, "count")), 1000);
	assert_int_equal(jr_u64(jr_get(a, "bytes")), 8000);
	assert_int_equal(jr_u64(jr_get(a, "nranks")), 4);
	assert_true(jr_is(jr_get(a, "dtype"), "ncclFloat16"));

	s = jr_find(ev, "name", "cudnnBackendExecute");
	assert_true(jr_is(jr_get(jr_get(s, "args"), "ops"), "ConvolutionForward+Pointwise"));

	/* the failed cudaMalloc says its status */
	int found = 0;
	for (size_t i = 0; i < ev->n; i++) {
		const struct jr *x = jr_at(ev, i);
		if (jr_has(x, "name") && jr_is(jr_get(x, "name"), "cudaMalloc") &&
		    jr_has(jr_get(x, "args"), "status")) {
			assert_true(jr_is(jr_get(jr_get(x, "args"), "status"), "cudaErrorMemoryAllocation (2)"));
			found = 1;
		}
	}
	assert_true(found);
	fx_json_free(doc);
}

/* A run without GPU calls: no GPU model, no GPU section, the GPU keys empty. */
static void test_no_gpu(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 110, 0, 1000, "train\0--gpu", 11);
	struct pw_rec_call io[] = {mkrec(PW_EV_READ, 110, 1100, 1200, 5, 0, 5, 0)};
	put_records(fd, io, 1);
	fx_raw_end(fd, 2000);
	fx_analyze(fx);
	assert_null(rank0(fx)->gpu);
	char err[512] = "";
	if (pw_write_reports(&fx->an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
	size_t n;
	char *t = fx_slurp(fx, "rank0.txt", &n);
	assert_null(strstr(t, "CUDA API summary"));
	assert_null(strstr(t, "Blocked on the GPU"));
	free(t);
	t = fx_slurp(fx, "summary.txt", &n);
	assert_non_null(strstr(t, "Rank"));
	free(t);
	struct jr *doc = fx_json(fx, "rank0.json");
	const struct jr *j = jr_at(doc, 0);
	assert_int_equal(jr_get(j, "memcpy")->n, 0);
	assert_int_equal(jr_get(j, "gemms")->n, 0);
	assert_int_equal(jr_u64(jr_get(j, "gemm_flops")), 0);
	assert_int_equal(jr_u64(jr_get(jr_get(j, "allocations"), "device_peak_bytes")), 0);
	fx_json_free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_names),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_cudnn_op_names),
		cmocka_unit_test(test_three_figures),
		cmocka_unit_test(test_median_buckets),
		cmocka_unit_test_setup_teardown(test_calls_and_median, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memcpy_directions_and_pinned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allocation_peaks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allocation_tree_against_reference, setup, teardown),
		cmocka_unit_test(test_allocation_tree_balanced),
		cmocka_unit_test_setup_teardown(test_gemm_shapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gemm_shape_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collectives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_launches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_by_code, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cudnn_graphs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_devices_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_gpu, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
