/* cuda_cupti_check: checks that the fake libcupti (tests/fakes/cupti.c) keeps CUPTI's activity API contract
 * as cupti_activity.h documents it: return codes, cuptiActivityGetNextRecord's walk, the records of kernels,
 * copies, memsets, library work and graphs with their fields, the API records sharing their correlation ids,
 * external correlation records, thread ids, timestamps (CLOCK_REALTIME, or the timestamp callback's base),
 * the buffer protocol (flushes withholding unfinished work, forced flushes, the worker thread's deliveries,
 * dropped records, every buffer back exactly once), device and overhead records, threads.
 *
 * Linked like the other cuda_* workloads, but not against libcupti: it loads it with dlopen (argv[1], else the
 * libcupti.so.13 next to the libcudart.so.13 in use), as a profiler does. With FAKECUPTI_FAIL set it checks
 * that the functions named there fail with CUPTI_ERROR_NOT_INITIALIZED; with
 * FAKECUPTI_NO_TIMESTAMP_CALLBACK=1, that the timestamp callback is refused and CUPTI's clock stays
 * CLOCK_REALTIME. Prints one line per failed check and "ok N checks" when all hold; exit 0 then, else 1. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_version.h>
#include <nccl.h>

/* The per-thread default stream entry point, declared by the headers only under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM. */
extern __typeof__(cudaLaunchKernel) cudaLaunchKernel_ptsz;

static int g_failed, g_checks;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		g_checks++;                                                                \
		if (!(cond)) {                                                             \
			g_failed++;                                                        \
			fprintf(stderr, "cuda_cupti_check:%d: failed: %s\n", __LINE__, #cond); \
		}                                                                          \
	} while (0)

#define EQ(expr, want)                                                                                      \
	do {                                                                                                \
		long long got_ = (long long)(expr), want_ = (long long)(want);                              \
		g_checks++;                                                                                 \
		if (got_ != want_) {                                                                        \
			g_failed++;                                                                         \
			fprintf(stderr, "cuda_cupti_check:%d: %s = %lld, want %lld\n", __LINE__, #expr, got_, \
				want_);                                                                     \
		}                                                                                           \
	} while (0)

/* ---- libcupti, loaded ---- */

#define CUPTI_FNS(X)                                                                                   \
	X(cuptiGetVersion) X(cuptiGetResultString) X(cuptiGetLastError) X(cuptiActivityRegisterCallbacks)  \
	X(cuptiActivityEnable) X(cuptiActivityDisable) X(cuptiActivityFlushAll) X(cuptiActivityFlushPeriod) \
	X(cuptiActivityGetNextRecord) X(cuptiActivityGetNumDroppedRecords)                                 \
	X(cuptiActivityPushExternalCorrelationId) X(cuptiActivityPopExternalCorrelationId)                 \
	X(cuptiActivityRegisterTimestampCallback) X(cuptiGetTimestamp) X(cuptiSetThreadIdType)             \
	X(cuptiGetThreadIdType) X(cuptiActivityGetAttribute) X(cuptiActivitySetAttribute) X(cuptiFinalize)

static struct {
#define X(fn) __typeof__(fn) *fn;
	CUPTI_FNS(X)
#undef X
} cu;

static int load_cupti(const char *path)
{
	char buf[4096];
	void *h;

	if (path == NULL) {
		void *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
		struct link_map *lm = NULL;
		char *slash;

		if (rt == NULL || dlinfo(rt, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_name == NULL) {
			fprintf(stderr, "cuda_cupti_check: libcudart.so.13 is not loaded\n");
			return -1;
		}
		snprintf(buf, sizeof(buf), "%s", lm->l_name);
		slash = strrchr(buf, '/');
		snprintf(slash ? slash + 1 : buf, sizeof(buf) - (size_t)(slash ? slash + 1 - buf : 0), "libcupti.so.13");
		path = buf;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "cuda_cupti_check: %s\n", dlerror());
		return -1;
	}
#define X(fn)                                                                               \
	*(void **)&cu.fn = dlvsym(h, #fn, "libcupti.so.13");                                \
	if (cu.fn == NULL) {                                                                \
		fprintf(stderr, "cuda_cupti_check: %s: no %s@libcupti.so.13\n", path, #fn); \
		return -1;                                                                  \
	}
	CUPTI_FNS(X)
#undef X
	return 0;
}

/* ---- kernels: exported host functions (-rdynamic), distinct bodies ---- */

#define KERNEL(name, v)           \
	void name(float *p);      \
	void name(float *p)       \
	{                         \
		p[0] = (float)(v); \
	}
KERNEL(kern_a, 1)
KERNEL(kern_b, 2)
KERNEL(kern_c, 3)
KERNEL(kern_ptsz, 4)
KERNEL(kern_coop, 5)
KERNEL(kern_long, 6)
KERNEL(kern_short, 7)
KERNEL(kern_w, 8)
KERNEL(kern_p, 9)
KERNEL(kern_d, 10)
KERNEL(kern_thread, 11)
KERNEL(kern_ts, 12)
KERNEL(kern_after, 13)
KERNEL(kern_disabled, 14)
KERNEL(kern_first, 15)
KERNEL(kern_second, 16)

static void kern_static(float *p)
{
	p[0] = 99;
}

float device_symbol[16];

static dim3 d3(unsigned int x, unsigned int y, unsigned int z)
{
	dim3 d = { x, y, z };

	return d;
}

static cudaError_t launch(void (*k)(float *), unsigned int blocks, cudaStream_t s)
{
	return cudaLaunchKernel((const void *)k, d3(blocks, 1, 1), d3(32, 1, 1), NULL, 0, s);
}

/* ---- clocks, threads ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static uint32_t tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static uint64_t abs_diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* FAKEGPU_NS_PER_BLOCK, as the fake libcudart reads it (plain numbers only here). */
static uint64_t ns_per_block(void)
{
	const char *s = getenv("FAKEGPU_NS_PER_BLOCK");

	return s && *s ? (uint64_t)strtod(s, NULL) : 2000;
}

/* ---- the client: buffers and what came back ---- */

enum req_mode { REQ_NORMAL, REQ_NULL, REQ_TINY };

struct given {
	uint8_t *p;
	size_t size;
	int returned;
};

/* A delivered record, copied, with who delivered it and in which buffer. */
struct got {
	union {
		CUpti_Activity base;
		CUpti_ActivityKernel10 k;
		CUpti_ActivityMemcpy6 mc;
		CUpti_ActivityMemset4 ms;
		CUpti_ActivityAPI api;
		CUpti_ActivityExternalCorrelation ext;
		CUpti_ActivityOverhead3 o;
		CUpti_ActivityDevice5 d;
	} r;
	uint32_t by;
	int delivery;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct given *g_given;
static size_t g_ngiven, g_capgiven;
static struct got *g_got;
static size_t g_ngot, g_capgot;
static enum req_mode g_req_mode = REQ_NORMAL;
static size_t g_req_size = 64 * 1024, g_req_max;
static int g_requests, g_deliveries, g_worker_deliveries, g_empty_deliveries;
static int g_bad_return, g_bad_ctx, g_bad_zero, g_bad_walk, g_bad_size;
static uint32_t g_main_tid;

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
	case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
	case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
	default: return 0;
	}
}

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	size_t sz;
	uint8_t *p;

	pthread_mutex_lock(&g_mu);
	g_requests++;
	*buffer = NULL;
	*size = 0;
	*max_records = 0;
	if (g_req_mode == REQ_NULL) {
		pthread_mutex_unlock(&g_mu);
		return;
	}
	sz = g_req_mode == REQ_TINY ? 16 : g_req_size;
	p = aligned_alloc(8, (sz + 7) & ~(size_t)7);
	if (p != NULL && g_ngiven == g_capgiven) {
		size_t cap = g_capgiven ? g_capgiven * 2 : 256;
		struct given *n = realloc(g_given, cap * sizeof(*n));

		if (n == NULL) {
			free(p);
			p = NULL;
		} else {
			g_given = n;
			g_capgiven = cap;
		}
	}
	if (p != NULL) {
		memset(p, 0xab, sz); /* CUPTI zeroes it (ZEROED_OUT_ACTIVITY_BUFFER 0) */
		g_given[g_ngiven++] = (struct given){ p, sz, 0 };
		*buffer = p;
		*size = sz;
		*max_records = g_req_max;
	}
	pthread_mutex_unlock(&g_mu);
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	CUptiResult st;
	struct given *gv = NULL;
	uint32_t me = tid();

	pthread_mutex_lock(&g_mu);
	for (size_t i = g_ngiven; i-- > 0;) {
		if (g_given[i].p == buffer) {
			gv = &g_given[i];
			break;
		}
	}
	if (gv == NULL || gv->returned) {
		g_bad_return++;
		pthread_mutex_unlock(&g_mu);
		return;
	}
	gv->returned = 1;
	if (size != gv->size || valid > size)
		g_bad_size++;
	if (ctx != NULL || stream != 0)
		g_bad_ctx++;
	for (size_t i = valid; i < size; i++) {
		if (buffer[i] != 0) {
			g_bad_zero++;
			break;
		}
	}
	g_deliveries++;
	if (me != g_main_tid)
		g_worker_deliveries++;
	if (valid == 0)
		g_empty_deliveries++;
	while ((st = cu.cuptiActivityGetNextRecord(buffer, valid, &rec)) == CUPTI_SUCCESS) {
		struct got *g;

		if (g_ngot == g_capgot) {
			size_t cap = g_capgot ? g_capgot * 2 : 1024;
			struct got *n = realloc(g_got, cap * sizeof(*n));

			if (n == NULL)
				break;
			g_got = n;
			g_capgot = cap;
		}
		g = &g_got[g_ngot++];
		memset(g, 0, sizeof(*g));
		memcpy(&g->r, rec, record_size(rec->kind));
		g->by = me;
		g->delivery = g_deliveries;
	}
	if (st != CUPTI_ERROR_MAX_LIMIT_REACHED)
		g_bad_walk++;
	free(buffer);
	pthread_mutex_unlock(&g_mu);
}

/* Index of the nth (from 0) kernel record named name, -1 when none. */
static long find_kernel(const char *name, int nth)
{
	long found = -1;

	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < g_ngot; i++) {
		const CUpti_ActivityKernel10 *k = &g_got[i].r.k;

		if ((k->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || k->kind == CUPTI_ACTIVITY_KIND_KERNEL) &&
		    k->name != NULL && strcmp(k->name, name) == 0 && nth-- == 0) {
			found = (long)i;
			break;
		}
	}
	pthread_mutex_unlock(&g_mu);
	return found;
}

static int count_kernels(const char *name)
{
	int n = 0;

	while (find_kernel(name, n) >= 0)
		n++;
	return n;
}

/* Index of the record of this kind with this correlation id, -1 when none; *count gets how many there are. */
static long find_corr(CUpti_ActivityKind kind, uint32_t corr, int *count)
{
	long found = -1;
	int n = 0;

	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < g_ngot; i++) {
		const struct got *g = &g_got[i];
		uint32_t c;

		if (g->r.base.kind != kind)
			continue;
		switch (kind) {
		case CUPTI_ACTIVITY_KIND_RUNTIME:
		case CUPTI_ACTIVITY_KIND_DRIVER: c = g->r.api.correlationId; break;
		case CUPTI_ACTIVITY_KIND_MEMCPY: c = g->r.mc.correlationId; break;
		case CUPTI_ACTIVITY_KIND_MEMSET: c = g->r.ms.correlationId; break;
		default: c = g->r.k.correlationId; break;
		}
		if (c == corr) {
			if (found < 0)
				found = (long)i;
			n++;
		}
	}
	pthread_mutex_unlock(&g_mu);
	if (count != NULL)
		*count = n;
	return found;
}

/* The external id of kind ext recorded for correlation id corr, 0 when none; *count gets how many records. */
static uint64_t find_ext(uint32_t corr, CUpti_ExternalCorrelationKind ext, int *count, long *at)
{
	uint64_t id = 0;
	int n = 0;

	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < g_ngot; i++) {
		const CUpti_ActivityExternalCorrelation *x = &g_got[i].r.ext;

		if (x->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION && x->correlationId == corr &&
		    x->externalKind == ext) {
			id = x->externalId;
			if (at != NULL)
				*at = (long)i;
			n++;
		}
	}
	pthread_mutex_unlock(&g_mu);
	if (count != NULL)
		*count = n;
	return id;
}

static int count_ext(uint32_t corr)
{
	int n = 0;

	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < g_ngot; i++)
		if (g_got[i].r.base.kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION &&
		    g_got[i].r.ext.correlationId == corr)
			n++;
	pthread_mutex_unlock(&g_mu);
	return n;
}

static struct got got_at(long i)
{
	struct got g;

	memset(&g, 0, sizeof(g));
	if (i < 0)
		return g;
	pthread_mutex_lock(&g_mu);
	g = g_got[i];
	pthread_mutex_unlock(&g_mu);
	return g;
}

static size_t got_count(void)
{
	size_t n;

	pthread_mutex_lock(&g_mu);
	n = g_ngot;
	pthread_mutex_unlock(&g_mu);
	return n;
}

/* Every buffer given has come back, once. */
static void check_all_returned(void)
{
	size_t out = 0;

	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < g_ngiven; i++)
		if (!g_given[i].returned)
			out++;
	pthread_mutex_unlock(&g_mu);
	EQ(out, 0);
	EQ(g_bad_return, 0);
	EQ(g_bad_ctx, 0);
	EQ(g_bad_size, 0);
	EQ(g_bad_zero, 0);
	EQ(g_bad_walk, 0);
}

/* A kernel record and its API record: the same correlation id, once each; times in order. */
static struct got check_kernel(const char *name, int nth, CUpti_ActivityKind api_kind, CUpti_CallbackId cbid)
{
	long k = find_kernel(name, nth), a;
	int n = 0;
	struct got kg = got_at(k), ag;

	CHECK(k >= 0);
	if (k < 0) {
		fprintf(stderr, "cuda_cupti_check: no kernel record of %s (%d)\n", name, nth);
		return kg;
	}
	find_corr(kg.r.base.kind, kg.r.k.correlationId, &n);
	EQ(n, 1);
	a = find_corr(api_kind, kg.r.k.correlationId, &n);
	EQ(n, 1);
	ag = got_at(a);
	EQ(ag.r.api.cbid, cbid);
	EQ(ag.r.api.processId, getpid());
	EQ(ag.r.api.returnValue, 0);
	CHECK(ag.r.api.start != 0 && ag.r.api.start <= ag.r.api.end);
	CHECK(ag.r.api.start <= kg.r.k.start);
	CHECK(kg.r.k.start != 0 && kg.r.k.start <= kg.r.k.end && kg.r.k.completed == kg.r.k.end);
	EQ(kg.r.k.deviceId, 0);
	return kg;
}

/* Work back to back on the device is back to back in the records: one mapping of the device's times. */
static void check_back_to_back(int nth)
{
	cudaStream_t s;
	struct got a, b;

	EQ(cudaStreamCreate(&s), cudaSuccess);
	EQ(launch(kern_first, 10000000 / (unsigned int)ns_per_block(), s), cudaSuccess); /* 10 ms */
	EQ(launch(kern_second, 1, s), cudaSuccess);
	EQ(cudaStreamSynchronize(s), cudaSuccess);
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	a = got_at(find_kernel("kern_first", nth));
	b = got_at(find_kernel("kern_second", nth));
	CHECK(a.r.k.end != 0);
	EQ(b.r.k.start, a.r.k.end);
	cudaStreamDestroy(s);
}

/* ---- checks ---- */

static void check_basics(void)
{
	uint32_t v = 0;
	const char *s = NULL;
	size_t sz, val = 0;
	uint8_t u8 = 0;
	uint64_t ts = 0, id = 0, before, after;
	CUpti_ActivityThreadIdType tt = CUPTI_ACTIVITY_THREAD_ID_TYPE_SIZE;

	EQ(cu.cuptiGetVersion(&v), CUPTI_SUCCESS);
	EQ(v, CUPTI_API_VERSION);
	EQ(cu.cuptiGetVersion(NULL), CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiGetLastError(), CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiGetLastError(), CUPTI_SUCCESS);
	EQ(cu.cuptiGetResultString(CUPTI_ERROR_QUEUE_EMPTY, &s), CUPTI_SUCCESS);
	CHECK(s != NULL && strcmp(s, "CUPTI_ERROR_QUEUE_EMPTY") == 0);
	EQ(cu.cuptiGetResultString((CUptiResult)12345, &s), CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiGetResultString(CUPTI_SUCCESS, NULL), CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiActivityRegisterCallbacks(NULL, buf_completed), CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiActivityRegisterCallbacks(buf_requested, NULL), CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION);
	EQ(cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER), CUPTI_ERROR_INVALID_KIND);
	EQ(cu.cuptiActivityEnable((CUpti_ActivityKind)1000), CUPTI_ERROR_INVALID_KIND);
	EQ(cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MARKER), CUPTI_ERROR_INVALID_KIND);
	EQ(cu.cuptiGetLastError(), CUPTI_ERROR_INVALID_KIND);
	EQ(cu.cuptiActivityGetNumDroppedRecords(NULL, 0, NULL), CUPTI_ERROR_INVALID_PARAMETER);

	/* external correlation stacks */
	EQ(cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id),
	   CUPTI_ERROR_QUEUE_EMPTY);
	EQ(cu.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1),
	   CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_SIZE, 1),
	   CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, &id),
	   CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 5), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 6), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, NULL), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &id), CUPTI_SUCCESS);
	EQ(id, 5);
	EQ(cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &id),
	   CUPTI_ERROR_QUEUE_EMPTY);

	/* thread id types */
	EQ(cu.cuptiGetThreadIdType(&tt), CUPTI_SUCCESS);
	EQ(tt, CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
	EQ(cu.cuptiGetThreadIdType(NULL), CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SIZE), CUPTI_ERROR_NOT_SUPPORTED);

	/* attributes: the documented defaults, exact sizes */
	sz = sizeof(val);
	EQ(cu.cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &val), CUPTI_SUCCESS);
	EQ(sz, sizeof(size_t));
	EQ(val, 3200000);
	sz = 4;
	EQ(cu.cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &val),
	   CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
	sz = sizeof(val);
	EQ(cu.cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, &sz, &val), CUPTI_SUCCESS);
	EQ(val, 250);
	val = 1 << 20;
	sz = sizeof(val);
	EQ(cu.cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &val), CUPTI_SUCCESS);
	val = 0;
	EQ(cu.cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &val), CUPTI_SUCCESS);
	EQ(val, 1 << 20);
	sz = 2;
	EQ(cu.cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &val),
	   CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
	sz = 1;
	EQ(cu.cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &sz, &u8), CUPTI_SUCCESS);
	EQ(sz, 1);
	EQ(u8, 1);
	sz = 1;
	EQ(cu.cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz, &u8), CUPTI_SUCCESS);
	EQ(u8, 0);
	EQ(cu.cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, NULL, &val),
	   CUPTI_ERROR_INVALID_PARAMETER);
	sz = sizeof(val);
	EQ(cu.cuptiActivityGetAttribute((CUpti_ActivityAttribute)999, &sz, &val), CUPTI_ERROR_INVALID_PARAMETER);

	/* CUPTI's clock: CLOCK_REALTIME without a timestamp callback */
	EQ(cu.cuptiGetTimestamp(NULL), CUPTI_ERROR_INVALID_PARAMETER);
	before = real_ns();
	EQ(cu.cuptiGetTimestamp(&ts), CUPTI_SUCCESS);
	after = real_ns();
	CHECK(before <= ts && ts <= after);
	cu.cuptiGetLastError();
}

/* cuptiActivityGetNextRecord on buffers made here. */
static void check_next_record(void)
{
	uint64_t store[64];
	uint8_t *buf = (uint8_t *)store;
	CUpti_ActivityAPI a;
	CUpti_ActivityExternalCorrelation x;
	CUpti_Activity *rec = NULL;
	size_t valid = sizeof(x) + sizeof(a);
	CUpti_ActivityKind bad = (CUpti_ActivityKind)0x7777;

	memset(store, 0, sizeof(store));
	memset(&a, 0, sizeof(a));
	memset(&x, 0, sizeof(x));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.correlationId = 7;
	x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	x.externalId = 9;
	memcpy(buf, &x, sizeof(x));
	memcpy(buf + sizeof(x), &a, sizeof(a));
	EQ(cu.cuptiActivityGetNextRecord(buf, valid, &rec), CUPTI_SUCCESS);
	CHECK(rec == (CUpti_Activity *)buf);
	EQ(cu.cuptiActivityGetNextRecord(buf, valid, &rec), CUPTI_SUCCESS);
	CHECK(rec == (CUpti_Activity *)(buf + sizeof(x)));
	EQ(((CUpti_ActivityAPI *)rec)->correlationId, 7);
	EQ(cu.cuptiActivityGetNextRecord(buf, valid, &rec), CUPTI_ERROR_MAX_LIMIT_REACHED);
	rec = NULL;
	EQ(cu.cuptiActivityGetNextRecord(buf, 0, &rec), CUPTI_ERROR_MAX_LIMIT_REACHED);
	rec = NULL;
	EQ(cu.cuptiActivityGetNextRecord(buf, valid - 8, &rec), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityGetNextRecord(buf, valid - 8, &rec), CUPTI_ERROR_INVALID_KIND); /* cut short */
	memcpy(buf + sizeof(x), &bad, sizeof(bad));
	rec = NULL;
	EQ(cu.cuptiActivityGetNextRecord(buf, valid, &rec), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityGetNextRecord(buf, valid, &rec), CUPTI_ERROR_INVALID_KIND); /* corrupt */
	EQ(cu.cuptiActivityGetNextRecord(NULL, valid, &rec), CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiActivityGetNextRecord(buf, valid, NULL), CUPTI_ERROR_INVALID_PARAMETER);
	cu.cuptiGetLastError();
}

static const CUpti_ActivityKind g_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
	CUPTI_ACTIVITY_KIND_OVERHEAD,
};

/* The records of kernels, copies, memsets, library work and graphs, with their fields. */
static void check_records(void)
{
	cudaStream_t s;
	float *dev, *dev2, *managed, *pinned, pageable[1024];
	float host_sym[16] = { 0 };
	int graph_dummy = 0;
	uint64_t nsb = ns_per_block(), rt_launch, id = 0;
	cublasHandle_t h;
	ncclComm_t comm;
	ncclUniqueId nid;
	float one = 1, zero = 0;
	struct got k, g, a;
	long i, at_ext = -1;
	int n;
	uint32_t stream_s;

	memset(pageable, 0, sizeof(pageable));
	EQ(cu.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityRegisterCallbacks(buf_requested, buf_completed), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE), CUPTI_SUCCESS);
	for (size_t j = 0; j < sizeof(g_kinds) / sizeof(g_kinds[0]); j++)
		EQ(cu.cuptiActivityEnable(g_kinds[j]), CUPTI_SUCCESS);

	/* work done while MEMSET is disabled makes no memset record */
	EQ(cudaStreamCreate(&s), cudaSuccess);
	EQ(cudaMalloc((void **)&dev, 4096), cudaSuccess);
	EQ(cudaMalloc((void **)&dev2, 4096), cudaSuccess);
	EQ(cudaMallocManaged((void **)&managed, 4096, cudaMemAttachGlobal), cudaSuccess);
	EQ(cudaMallocHost((void **)&pinned, 4096), cudaSuccess);
	EQ(cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET), CUPTI_SUCCESS);
	EQ(cudaMemsetAsync(dev2, 0x11, 512, s), cudaSuccess);
	EQ(cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), CUPTI_SUCCESS);

	/* kernels */
	rt_launch = real_ns();
	EQ(cudaLaunchKernel((const void *)kern_a, d3(3, 2, 1), d3(64, 2, 1), NULL, 128, s), cudaSuccess);
	EQ(cu.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 111), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 222), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 333), CUPTI_SUCCESS);
	EQ(launch(kern_b, 4, NULL), cudaSuccess);
	EQ(cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id), CUPTI_SUCCESS);
	EQ(id, 333);
	EQ(launch(kern_b, 5, NULL), cudaSuccess);
	EQ(cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &id), CUPTI_SUCCESS);
	EQ(id, 222);
	EQ(cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id), CUPTI_SUCCESS);
	EQ(id, 111);
	EQ(cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id),
	   CUPTI_ERROR_QUEUE_EMPTY);
	EQ(launch(kern_c, 1, NULL), cudaSuccess);
	EQ(launch(kern_static, 2, NULL), cudaSuccess);
	EQ(cudaLaunchKernel_ptsz((const void *)kern_ptsz, d3(1, 1, 1), d3(1, 1, 1), NULL, 0, NULL), cudaSuccess);
	EQ(cudaLaunchCooperativeKernel((const void *)kern_coop, d3(2, 1, 1), d3(32, 1, 1), NULL, 0, s), cudaSuccess);
	EQ(cudaGraphLaunch((cudaGraphExec_t)&graph_dummy, s), cudaSuccess);
	EQ(cudaGraphLaunch((cudaGraphExec_t)&graph_dummy, s), cudaSuccess);

	/* copies and memsets */
	EQ(cudaMemcpy(dev, pinned, 4096, cudaMemcpyHostToDevice), cudaSuccess);
	EQ(cudaMemcpyAsync(dev, pageable, 1000, cudaMemcpyHostToDevice, s), cudaSuccess);
	EQ(cudaMemcpy(dev2, dev, 2048, cudaMemcpyDeviceToDevice), cudaSuccess);
	EQ(cudaMemcpy(pageable, dev, 300, cudaMemcpyDefault), cudaSuccess);
	EQ(cudaMemcpy(dev2, managed, 256, cudaMemcpyDeviceToDevice), cudaSuccess);
	EQ(cudaMemcpyToSymbol(device_symbol, host_sym, sizeof(host_sym), 0, cudaMemcpyHostToDevice), cudaSuccess);
	EQ(cudaMemsetAsync(dev, 0x5a, 1000, s), cudaSuccess);
	EQ(cudaMemset(managed, 1, 64), cudaSuccess);

	/* library work */
	EQ(cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
	EQ(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, dev, 8, dev, 8, &zero, dev2, 8),
	   CUBLAS_STATUS_SUCCESS);
	EQ(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, dev, 8, dev, 8, &zero, dev2, 8),
	   CUBLAS_STATUS_SUCCESS);
	EQ(cublasDestroy_v2(h), CUBLAS_STATUS_SUCCESS);
	EQ(ncclGetUniqueId(&nid), ncclSuccess);
	EQ(ncclCommInitRank(&comm, 1, nid, 0), ncclSuccess);
	EQ(ncclAllReduce(dev, dev2, 64, ncclFloat, ncclSum, comm, s), ncclSuccess);
	EQ(ncclAllGather(dev, dev2, 16, ncclFloat, comm, s), ncclSuccess);

	EQ(cudaDeviceSynchronize(), cudaSuccess);
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_SUCCESS);

	/* kern_a: the launch's fields, exact duration, CLOCK_REALTIME times, the caller's thread */
	k = check_kernel("kern_a", 0, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	EQ(k.r.k.kind, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	EQ(k.r.k.gridX, 3);
	EQ(k.r.k.gridY, 2);
	EQ(k.r.k.gridZ, 1);
	EQ(k.r.k.blockX, 64);
	EQ(k.r.k.blockY, 2);
	EQ(k.r.k.blockZ, 1);
	EQ(k.r.k.dynamicSharedMemory, 128);
	EQ(k.r.k.end - k.r.k.start, 6 * nsb);
	EQ(k.r.k.launchType, CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR);
	CHECK(k.r.k.streamId != 0);
	CHECK(k.r.k.contextId != 0);
	CHECK(abs_diff(k.r.k.start, rt_launch) < 50000000u);
	stream_s = k.r.k.streamId;
	a = got_at(find_corr(CUPTI_ACTIVITY_KIND_RUNTIME, k.r.k.correlationId, NULL));
	EQ(a.r.api.threadId, g_main_tid);
	EQ(count_ext(k.r.k.correlationId), 0);

	/* nested external ids: the top of each kind's stack, before the API record */
	k = check_kernel("kern_b", 0, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	EQ(k.r.k.end - k.r.k.start, 4 * nsb);
	EQ(k.r.k.streamId, 0); /* the legacy default stream */
	EQ(find_ext(k.r.k.correlationId, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &n, &at_ext), 333);
	EQ(n, 1);
	CHECK(at_ext >= 0 && at_ext < find_corr(CUPTI_ACTIVITY_KIND_RUNTIME, k.r.k.correlationId, NULL));
	EQ(find_ext(k.r.k.correlationId, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &n, NULL), 222);
	EQ(n, 1);
	EQ(count_ext(k.r.k.correlationId), 2);
	g = check_kernel("kern_b", 1, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	EQ(g.r.k.end - g.r.k.start, 5 * nsb);
	EQ(find_ext(g.r.k.correlationId, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &n, NULL), 111);
	EQ(find_ext(g.r.k.correlationId, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &n, NULL), 222);
	CHECK(g.r.k.name == k.r.k.name); /* one name string per kernel */
	CHECK(g.r.k.correlationId != k.r.k.correlationId);
	k = check_kernel("kern_c", 0, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	EQ(count_ext(k.r.k.correlationId), 0);

	/* a kernel without a symbol, the per-thread and cooperative launches, graphs */
	n = 0;
	pthread_mutex_lock(&g_mu);
	for (size_t j = 0; j < g_ngot; j++)
		if (g_got[j].r.base.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && g_got[j].r.k.name != NULL &&
		    strncmp(g_got[j].r.k.name, "fakegpu_kernel_", 15) == 0 && g_got[j].r.k.gridX == 2)
			n++;
	pthread_mutex_unlock(&g_mu);
	EQ(n, 1);
	check_kernel("kern_ptsz", 0, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000);
	k = check_kernel("kern_coop", 0, CUPTI_ACTIVITY_KIND_RUNTIME,
			 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000);
	EQ(k.r.k.launchType, CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE);
	k = check_kernel("fakegpu_graph", 0, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
	g = check_kernel("fakegpu_graph", 1, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
	CHECK(k.r.k.graphId != 0);
	EQ(g.r.k.graphId, k.r.k.graphId);
	EQ(k.r.k.streamId, stream_s);

	/* copies: kinds from the allocation tables, direction, bytes, flags, stream */
	{
		static const struct {
			uint8_t copy, src, dst;
			uint64_t bytes;
			CUpti_CallbackId cbid;
			int async;
		} want[] = {
			{ CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
			  4096, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 0 },
			{ CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
			  CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1000, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 1 },
			{ CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
			  2048, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 0 },
			{ CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
			  CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 300, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 0 },
			{ CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED,
			  CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 256, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 0 },
			{ CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
			  CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, sizeof(host_sym),
			  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020, 0 },
		};
		size_t w = 0;

		pthread_mutex_lock(&g_mu);
		for (size_t j = 0; j < g_ngot && w < sizeof(want) / sizeof(want[0]); j++) {
			if (g_got[j].r.base.kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
				CUpti_ActivityMemcpy6 copy = g_got[j].r.mc;
				const CUpti_ActivityMemcpy6 *m = &copy;

				pthread_mutex_unlock(&g_mu);
				EQ(m->copyKind, want[w].copy);
				EQ(m->srcKind, want[w].src);
				EQ(m->dstKind, want[w].dst);
				EQ(m->bytes, want[w].bytes);
				EQ(m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC, want[w].async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0);
				EQ(m->streamId, want[w].async ? stream_s : 0);
				EQ(m->deviceId, 0);
				EQ(m->runtimeCorrelationId, m->correlationId);
				CHECK(m->start != 0 && m->start < m->end);
				a = got_at(find_corr(CUPTI_ACTIVITY_KIND_RUNTIME, m->correlationId, &n));
				EQ(n, 1);
				EQ(a.r.api.cbid, want[w].cbid);
				if (!want[w].async)
					CHECK(a.r.api.end >= m->end); /* a synchronous copy returns when done */
				w++;
				pthread_mutex_lock(&g_mu);
			}
		}
		pthread_mutex_unlock(&g_mu);
		EQ(w, sizeof(want) / sizeof(want[0]));
	}

	/* memsets: value, bytes, memory kind, flags; none from the one done while MEMSET was disabled */
	n = 0;
	pthread_mutex_lock(&g_mu);
	for (size_t j = 0; j < g_ngot; j++) {
		CUpti_ActivityMemset4 copy = g_got[j].r.ms;
		const CUpti_ActivityMemset4 *m = &copy;

		if (m->kind != CUPTI_ACTIVITY_KIND_MEMSET)
			continue;
		pthread_mutex_unlock(&g_mu);
		if (n == 0) {
			EQ(m->value, 0x5a);
			EQ(m->bytes, 1000);
			EQ(m->memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
			EQ(m->flags, CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC);
			EQ(m->streamId, stream_s);
			a = got_at(find_corr(CUPTI_ACTIVITY_KIND_RUNTIME, m->correlationId, NULL));
			EQ(a.r.api.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020);
		} else {
			EQ(m->value, 1);
			EQ(m->bytes, 64);
			EQ(m->memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED);
			EQ(m->flags, 0);
			a = got_at(find_corr(CUPTI_ACTIVITY_KIND_RUNTIME, m->correlationId, NULL));
			EQ(a.r.api.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020);
		}
		CHECK(m->start != 0 && m->start < m->end);
		n++;
		pthread_mutex_lock(&g_mu);
	}
	pthread_mutex_unlock(&g_mu);
	EQ(n, 2);

	/* library work: kernels launched through the driver, named as the libraries name them */
	k = check_kernel("ampere_sgemm_128x64_nn", 0, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	g = check_kernel("ampere_sgemm_128x64_nn", 1, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	CHECK(k.r.k.name == g.r.k.name);
	EQ(find_corr(CUPTI_ACTIVITY_KIND_RUNTIME, k.r.k.correlationId, NULL), -1);
	a = got_at(find_corr(CUPTI_ACTIVITY_KIND_DRIVER, k.r.k.correlationId, NULL));
	EQ(a.r.api.threadId, g_main_tid);
	/* NCCL's kernels are C++ functions: CUPTI gives their mangled names, as NCCL 2.30's strings have them */
	k = check_kernel("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE", 0,
			 CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	EQ(k.r.k.streamId, stream_s);
	check_kernel("_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE", 0, CUPTI_ACTIVITY_KIND_DRIVER,
		     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);

	/* the device record */
	n = 0;
	pthread_mutex_lock(&g_mu);
	for (size_t j = 0; j < g_ngot; j++) {
		CUpti_ActivityDevice5 *d = &g_got[j].r.d;

		if (d->kind != CUPTI_ACTIVITY_KIND_DEVICE)
			continue;
		n++;
		CHECK(d->name != NULL && strcmp(d->name, "Fake GPU") == 0);
		EQ(d->id, 0);
		EQ(d->numMultiprocessors, 132);
		EQ(d->computeCapabilityMajor, 9);
		EQ(d->computeCapabilityMinor, 0);
		CHECK(d->globalMemorySize > 0 && d->globalMemoryBandwidth > 0);
		free((void *)d->name); /* the client's, as cupti_activity.h says */
		d->name = NULL;
	}
	pthread_mutex_unlock(&g_mu);
	EQ(n, 1);

	/* overhead records: one per buffer delivered, by the delivering thread */
	n = 0;
	pthread_mutex_lock(&g_mu);
	for (size_t j = 0; j < g_ngot; j++) {
		const CUpti_ActivityOverhead3 *o = &g_got[j].r.o;

		if (o->kind != CUPTI_ACTIVITY_KIND_OVERHEAD)
			continue;
		n++;
		EQ(o->overheadKind, CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH);
		EQ(o->objectKind, CUPTI_ACTIVITY_OBJECT_THREAD);
		EQ(o->objectId.pt.processId, getpid());
		EQ(o->objectId.pt.threadId, g_got[j].by);
		CHECK(o->start != 0 && o->start <= o->end);
	}
	EQ(n, g_deliveries - g_empty_deliveries);
	pthread_mutex_unlock(&g_mu);
	CHECK(n >= 1);

	/* every activity record has its API record */
	pthread_mutex_lock(&g_mu);
	i = 0;
	for (size_t j = 0; j < g_ngot; j++) {
		const struct got *x = &g_got[j];
		uint32_t corr;
		int apis = 0;

		if (x->r.base.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			corr = x->r.k.correlationId;
		else if (x->r.base.kind == CUPTI_ACTIVITY_KIND_MEMCPY)
			corr = x->r.mc.correlationId;
		else if (x->r.base.kind == CUPTI_ACTIVITY_KIND_MEMSET)
			corr = x->r.ms.correlationId;
		else
			continue;
		for (size_t m = 0; m < g_ngot; m++)
			if ((g_got[m].r.base.kind == CUPTI_ACTIVITY_KIND_RUNTIME ||
			     g_got[m].r.base.kind == CUPTI_ACTIVITY_KIND_DRIVER) &&
			    g_got[m].r.api.correlationId == corr)
				apis++;
		if (apis != 1)
			i++;
	}
	pthread_mutex_unlock(&g_mu);
	EQ(i, 0);

	cudaFree(dev);
	cudaFree(dev2);
	cudaFree(managed);
	cudaFreeHost(pinned);
	ncclCommDestroy(comm);
	cudaStreamDestroy(s);
}

/* Default flushes withhold buffers with unfinished work; forced ones deliver it without times. */
static void check_flushes(void)
{
	cudaStream_t s;
	size_t before;
	long i;
	int n;
	struct got k, a;

	EQ(cudaStreamCreate(&s), cudaSuccess);
	before = got_count();
	EQ(launch(kern_long, 100000000 / (unsigned int)ns_per_block(), s), cudaSuccess); /* 100 ms */
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	EQ(find_kernel("kern_long", 0), -1);
	EQ(got_count(), before); /* the launch's API record is in the same buffer */
	EQ(cu.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	i = find_kernel("kern_long", 0);
	CHECK(i >= 0);
	k = got_at(i);
	EQ(k.r.k.start, 0);
	EQ(k.r.k.end, 0);
	EQ(k.r.k.completed, 0);
	a = got_at(find_corr(CUPTI_ACTIVITY_KIND_RUNTIME, k.r.k.correlationId, &n));
	EQ(n, 1);
	CHECK(a.r.api.start != 0 && a.r.api.start <= a.r.api.end); /* the call itself had returned */
	EQ(cudaStreamSynchronize(s), cudaSuccess);
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	EQ(count_kernels("kern_long"), 1);

	/* finished work comes with a default flush, full buffer or not */
	EQ(launch(kern_short, 1, s), cudaSuccess);
	EQ(cudaStreamSynchronize(s), cudaSuccess);
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	k = got_at(find_kernel("kern_short", 0));
	CHECK(k.r.k.start != 0 && k.r.k.end - k.r.k.start == ns_per_block());
	EQ(k.by, g_main_tid);
	cudaStreamDestroy(s);
	check_back_to_back(0);
}

/* The worker thread delivers full buffers whose work is done, every flush period, without flush calls; it
 * leaves partly filled ones for cuptiActivityFlushAll. */
static void check_worker(void)
{
	int worker_before, delivered = 0, by_worker = 0;

	EQ(cu.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	pthread_mutex_lock(&g_mu);
	g_req_max = 4; /* an API and a kernel record per launch, and room for the overhead record */
	worker_before = g_worker_deliveries;
	pthread_mutex_unlock(&g_mu);
	EQ(cu.cuptiActivityFlushPeriod(20), CUPTI_SUCCESS);
	for (int i = 0; i < 12; i++)
		EQ(launch(kern_w, 1, NULL), cudaSuccess);
	EQ(cudaDeviceSynchronize(), cudaSuccess);
	for (int tries = 0; tries < 200 && delivered < 12; tries++) {
		sleep_ms(10);
		delivered = count_kernels("kern_w");
	}
	EQ(delivered, 12);
	for (int i = 0; i < delivered; i++) {
		struct got k = got_at(find_kernel("kern_w", i));

		if (k.by != g_main_tid && k.by != 0)
			by_worker++;
	}
	EQ(by_worker, 12);
	pthread_mutex_lock(&g_mu);
	CHECK(g_worker_deliveries - worker_before >= 6);
	pthread_mutex_unlock(&g_mu);

	/* a partly filled buffer: room for the launch's two records and the synchronisation's API record */
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	pthread_mutex_lock(&g_mu);
	g_req_max = 8;
	pthread_mutex_unlock(&g_mu);
	EQ(launch(kern_p, 1, NULL), cudaSuccess);
	EQ(cudaDeviceSynchronize(), cudaSuccess);
	sleep_ms(150);
	EQ(find_kernel("kern_p", 0), -1);
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	EQ(got_at(find_kernel("kern_p", 0)).by, g_main_tid);
	pthread_mutex_lock(&g_mu);
	g_req_max = 0;
	pthread_mutex_unlock(&g_mu);
	EQ(cu.cuptiActivityFlushPeriod(0), CUPTI_SUCCESS);
}

/* Records without a buffer are dropped and counted; the count resets when read. */
static void check_drops(void)
{
	size_t dropped = 99, other = 99;
	int requests;

	EQ(cu.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS);
	EQ(dropped, 0);
	pthread_mutex_lock(&g_mu);
	g_req_mode = REQ_NULL;
	requests = g_requests;
	pthread_mutex_unlock(&g_mu);
	for (int i = 0; i < 3; i++)
		EQ(launch(kern_d, 1, NULL), cudaSuccess); /* an API and a kernel record each */
	pthread_mutex_lock(&g_mu);
	g_req_mode = REQ_NORMAL;
	CHECK(g_requests > requests);
	pthread_mutex_unlock(&g_mu);
	EQ(cu.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS);
	EQ(dropped, 6);
	EQ(cu.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS);
	EQ(dropped, 0);

	/* buffers too small for a record: given back empty */
	pthread_mutex_lock(&g_mu);
	g_req_mode = REQ_TINY;
	requests = g_empty_deliveries;
	pthread_mutex_unlock(&g_mu);
	EQ(launch(kern_d, 1, NULL), cudaSuccess);
	pthread_mutex_lock(&g_mu);
	g_req_mode = REQ_NORMAL;
	pthread_mutex_unlock(&g_mu);
	EQ(cudaDeviceSynchronize(), cudaSuccess);
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityGetNumDroppedRecords((CUcontext)&other, 0, &other), CUPTI_SUCCESS);
	EQ(other, 0); /* no context has a queue of its own */
	EQ(cu.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS);
	EQ(dropped, 2);
	pthread_mutex_lock(&g_mu);
	EQ(g_empty_deliveries - requests, 2);
	pthread_mutex_unlock(&g_mu);
	EQ(find_kernel("kern_d", 0), -1);
}

#define THREADS 4
#define PER_THREAD 50

struct worker_arg {
	int index;
	uint32_t tid;
	int failures;
};

static void *thread_main(void *p)
{
	struct worker_arg *w = p;
	uint64_t last = 0;

	w->tid = tid();
	for (int i = 0; i < PER_THREAD; i++) {
		uint64_t id = (uint64_t)(w->index + 1) * 1000 + (uint64_t)i;

		w->failures += cu.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id) !=
			       CUPTI_SUCCESS;
		w->failures += launch(kern_thread, 1, NULL) != cudaSuccess;
		w->failures += cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last) !=
			       CUPTI_SUCCESS;
		w->failures += last != id;
	}
	return NULL;
}

/* Threads launching at once: each record has its thread's id and its thread's external id; one buffer per
 * thread. */
static void check_threads(void)
{
	pthread_t th[THREADS];
	struct worker_arg args[THREADS];
	int per[THREADS] = { 0 }, mismatched = 0, mixed = 0;

	EQ(cu.cuptiActivityFlushPeriod(5), CUPTI_SUCCESS);
	for (int i = 0; i < THREADS; i++) {
		args[i] = (struct worker_arg){ i, 0, 0 };
		pthread_create(&th[i], NULL, thread_main, &args[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		EQ(args[i].failures, 0);
	}
	EQ(cudaDeviceSynchronize(), cudaSuccess);
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	EQ(count_kernels("kern_thread"), THREADS * PER_THREAD);
	for (int i = 0; i < THREADS * PER_THREAD; i++) {
		struct got k = got_at(find_kernel("kern_thread", i));
		struct got a = got_at(find_corr(CUPTI_ACTIVITY_KIND_RUNTIME, k.r.k.correlationId, NULL));
		uint64_t ext = find_ext(k.r.k.correlationId, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, NULL, NULL);
		int t = (int)(ext / 1000) - 1;

		if (t < 0 || t >= THREADS || a.r.api.threadId != args[t].tid) {
			mismatched++;
			continue;
		}
		per[t]++;
	}
	EQ(mismatched, 0);
	for (int i = 0; i < THREADS; i++)
		EQ(per[i], PER_THREAD);
	/* per-thread buffers: the API records of a buffer share their thread */
	pthread_mutex_lock(&g_mu);
	for (size_t j = 0; j < g_ngot; j++) {
		if (g_got[j].r.base.kind != CUPTI_ACTIVITY_KIND_RUNTIME)
			continue;
		for (size_t m = j + 1; m < g_ngot && g_got[m].delivery == g_got[j].delivery; m++)
			if (g_got[m].r.base.kind == CUPTI_ACTIVITY_KIND_RUNTIME &&
			    g_got[m].r.api.threadId != g_got[j].r.api.threadId)
				mixed++;
	}
	pthread_mutex_unlock(&g_mu);
	EQ(mixed, 0);
	EQ(cu.cuptiActivityFlushPeriod(0), CUPTI_SUCCESS);
}

/* cuptiFinalize: everything handed back, nothing recorded after, the settings back to their defaults. */
static void check_finalize(void)
{
	CUpti_ActivityThreadIdType tt = CUPTI_ACTIVITY_THREAD_ID_TYPE_SIZE;
	size_t before;

	EQ(launch(kern_after, 1, NULL), cudaSuccess); /* left in a buffer: Finalize hands it back */
	EQ(cu.cuptiFinalize(), CUPTI_SUCCESS);
	check_all_returned();
	EQ(count_kernels("kern_after"), 1);
	before = got_count();
	EQ(launch(kern_after, 1, NULL), cudaSuccess);
	EQ(cudaDeviceSynchronize(), cudaSuccess);
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION); /* no callbacks registered any more */
	EQ(got_count(), before);
	EQ(cu.cuptiGetThreadIdType(&tt), CUPTI_SUCCESS);
	EQ(tt, CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
	cu.cuptiGetLastError();
}

#define TS_SHIFT 1000000000000000ull /* 1e6 s: the callback's base is far from both clocks */

static uint64_t CUPTIAPI shifted_clock(void)
{
	return mono_ns() + TS_SHIFT;
}

/* After cuptiFinalize, again: a timestamp callback puts every timestamp in its base (unless
 * FAKECUPTI_NO_TIMESTAMP_CALLBACK refuses it: CLOCK_REALTIME then); the DEFAULT thread id type is
 * pthread_self(). */
static void check_timestamp_callback(void)
{
	const char *env = getenv("FAKECUPTI_NO_TIMESTAMP_CALLBACK");
	int refused = env != NULL && *env != '\0' && strcmp(env, "0") != 0;
	uint64_t m0, m1, r0, ts = 0, t0, t1;
	struct got k, a;

	EQ(cu.cuptiActivityRegisterTimestampCallback(NULL), CUPTI_ERROR_INVALID_PARAMETER);
	EQ(cu.cuptiActivityRegisterTimestampCallback(shifted_clock),
	   refused ? CUPTI_ERROR_NOT_SUPPORTED : CUPTI_SUCCESS);
	EQ(cu.cuptiActivityRegisterCallbacks(buf_requested, buf_completed), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	EQ(cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	r0 = real_ns();
	m0 = mono_ns();
	EQ(launch(kern_ts, 5, NULL), cudaSuccess);
	m1 = mono_ns();
	EQ(cudaDeviceSynchronize(), cudaSuccess);
	EQ(cu.cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	k = check_kernel("kern_ts", 0, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	EQ(k.r.k.end - k.r.k.start, 5 * ns_per_block());
	a = got_at(find_corr(CUPTI_ACTIVITY_KIND_RUNTIME, k.r.k.correlationId, NULL));
	EQ(a.r.api.threadId, (uint32_t)(uintptr_t)pthread_self());
	t0 = shifted_clock();
	EQ(cu.cuptiGetTimestamp(&ts), CUPTI_SUCCESS);
	t1 = shifted_clock();
	if (!refused) {
		CHECK(k.r.k.start + 1000000 >= m0 + TS_SHIFT && k.r.k.start <= m1 + TS_SHIFT + 1000000);
		CHECK(a.r.api.start + 1000000 >= m0 + TS_SHIFT && a.r.api.start <= m1 + TS_SHIFT + 1000000);
		CHECK(t0 <= ts && ts <= t1);
	} else {
		CHECK(abs_diff(k.r.k.start, r0) < 50000000u);
		CHECK(abs_diff(ts, real_ns()) < 50000000u);
	}
	check_back_to_back(1);
	EQ(cu.cuptiFinalize(), CUPTI_SUCCESS);
	check_all_returned();
}

/* FAKECUPTI_FAIL: the functions named fail with CUPTI_ERROR_NOT_INITIALIZED (and say so in
 * cuptiGetLastError); the others work. */
static CUptiResult call(const char *fn)
{
	uint32_t v;
	uint64_t u;
	size_t sz = sizeof(size_t), val;
	const char *s;
	CUpti_ActivityThreadIdType tt;
	CUpti_Activity *rec = NULL;
	uint64_t buf[8] = { 0 };

	if (!strcmp(fn, "cuptiGetVersion"))
		return cu.cuptiGetVersion(&v);
	if (!strcmp(fn, "cuptiGetResultString"))
		return cu.cuptiGetResultString(CUPTI_SUCCESS, &s);
	if (!strcmp(fn, "cuptiActivityRegisterCallbacks"))
		return cu.cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
	if (!strcmp(fn, "cuptiActivityEnable"))
		return cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (!strcmp(fn, "cuptiActivityDisable"))
		return cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
	if (!strcmp(fn, "cuptiActivityFlushAll"))
		return cu.cuptiActivityFlushAll(0);
	if (!strcmp(fn, "cuptiActivityFlushPeriod"))
		return cu.cuptiActivityFlushPeriod(0);
	if (!strcmp(fn, "cuptiActivityGetNextRecord"))
		return cu.cuptiActivityGetNextRecord((uint8_t *)buf, 0, &rec);
	if (!strcmp(fn, "cuptiActivityGetNumDroppedRecords"))
		return cu.cuptiActivityGetNumDroppedRecords(NULL, 0, &val);
	if (!strcmp(fn, "cuptiActivityPushExternalCorrelationId"))
		return cu.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 1);
	if (!strcmp(fn, "cuptiActivityPopExternalCorrelationId"))
		return cu.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &u);
	if (!strcmp(fn, "cuptiActivityRegisterTimestampCallback"))
		return cu.cuptiActivityRegisterTimestampCallback(shifted_clock);
	if (!strcmp(fn, "cuptiGetTimestamp"))
		return cu.cuptiGetTimestamp(&u);
	if (!strcmp(fn, "cuptiSetThreadIdType"))
		return cu.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (!strcmp(fn, "cuptiGetThreadIdType"))
		return cu.cuptiGetThreadIdType(&tt);
	if (!strcmp(fn, "cuptiActivityGetAttribute"))
		return cu.cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &val);
	if (!strcmp(fn, "cuptiActivitySetAttribute")) {
		val = 3200000;
		return cu.cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &val);
	}
	if (!strcmp(fn, "cuptiFinalize"))
		return cu.cuptiFinalize();
	return (CUptiResult)-1;
}

static int listed(const char *list, const char *fn)
{
	size_t n = strlen(fn);

	for (const char *p = list; (p = strstr(p, fn)) != NULL; p += n)
		if ((p == list || strchr(", :;", p[-1])) && (p[n] == '\0' || strchr(", :;", p[n])))
			return 1;
	return 0;
}

static void check_fail(const char *list)
{
	static const char *const fns[] = {
		"cuptiGetVersion", "cuptiGetResultString", "cuptiActivityRegisterCallbacks", "cuptiActivityEnable",
		"cuptiActivityDisable", "cuptiActivityFlushPeriod", "cuptiActivityGetNextRecord",
		"cuptiActivityGetNumDroppedRecords", "cuptiActivityPushExternalCorrelationId",
		"cuptiActivityPopExternalCorrelationId", "cuptiActivityRegisterTimestampCallback",
		"cuptiGetTimestamp", "cuptiSetThreadIdType", "cuptiGetThreadIdType", "cuptiActivityGetAttribute",
		"cuptiActivitySetAttribute", "cuptiActivityFlushAll", "cuptiFinalize",
	};
	int named = 0;

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		CUptiResult r = call(fns[i]);

		if (listed(list, fns[i])) {
			named++;
			EQ(r, CUPTI_ERROR_NOT_INITIALIZED);
			EQ(cu.cuptiGetLastError(), CUPTI_ERROR_NOT_INITIALIZED);
		} else if (strcmp(fns[i], "cuptiActivityGetNextRecord") == 0) {
			EQ(r, CUPTI_ERROR_MAX_LIMIT_REACHED); /* an empty buffer */
		} else if (strcmp(fns[i], "cuptiActivityPopExternalCorrelationId") == 0) {
			EQ(r, listed(list, "cuptiActivityPushExternalCorrelationId") ? CUPTI_ERROR_QUEUE_EMPTY
										  : CUPTI_SUCCESS);
		} else if (strcmp(fns[i], "cuptiActivityFlushAll") == 0) {
			EQ(r, listed(list, "cuptiActivityRegisterCallbacks") ? CUPTI_ERROR_INVALID_OPERATION
									  : CUPTI_SUCCESS);
		} else {
			EQ(r, CUPTI_SUCCESS);
		}
		cu.cuptiGetLastError();
	}
	CHECK(named > 0);
	/* with cuptiActivityEnable failing, nothing is recorded */
	if (listed(list, "cuptiActivityEnable") && !listed(list, "cuptiActivityRegisterCallbacks") &&
	    !listed(list, "cuptiActivityFlushAll") && !listed(list, "cuptiFinalize")) {
		EQ(cu.cuptiActivityRegisterCallbacks(buf_requested, buf_completed), CUPTI_SUCCESS);
		EQ(launch(kern_disabled, 1, NULL), cudaSuccess);
		EQ(cudaDeviceSynchronize(), cudaSuccess);
		EQ(cu.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
		EQ(got_count(), 0);
	}
}

int main(int argc, char **argv)
{
	const char *fail = getenv("FAKECUPTI_FAIL");
	int n = 0;

	g_main_tid = tid();
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		fprintf(stderr, "cuda_cupti_check: no (fake) device\n");
		return 1;
	}
	if (load_cupti(argc > 1 ? argv[1] : NULL) != 0)
		return 1;
	if (fail != NULL && *fail != '\0') {
		check_fail(fail);
	} else {
		check_basics();
		check_next_record();
		check_records();
		check_flushes();
		check_worker();
		check_drops();
		check_threads();
		check_finalize();
		check_timestamp_callback();
	}
	if (g_failed) {
		fprintf(stderr, "cuda_cupti_check: %d of %d checks failed\n", g_failed, g_checks);
		return 1;
	}
	printf("ok %d checks\n", g_checks);
	return 0;
}
