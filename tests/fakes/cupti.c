/* Fake libcupti.so.13: CUPTI's activity API (cupti_activity.h) over the simulated GPU of the fake libcudart
 * (tests/fakes/cudart.c), so that a profiler's use of CUPTI can be tested without a GPU.
 *
 * Records come from libcudart's activity callback (fakegpu_set_activity_callback), which runs on the thread
 * that enqueued the work, inside its CUDA call. For each operation, while the kinds are enabled: one
 * external correlation record per kind with an id pushed on that thread, the API record of the call
 * (RUNTIME with the runtime function's cbid; DRIVER with cuLaunchKernel's for work that cuBLAS, cuDNN and
 * NCCL enqueue) and the record of the work (kernel, memcpy, memset). They go at once into the client's
 * buffers, one buffer per thread unless CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER is 0, with CUPTI's
 * timestamps. The simulated device computes start and end at enqueue, so a record can describe work that
 * has not finished: a buffer is complete when every operation in it has.
 *
 * Delivery (bufferCompleted): full, complete buffers from the worker thread, every flush period; complete
 * buffers, full or not, from cuptiActivityFlushAll(0) on the calling thread; every buffer from a forced
 * flush, with the timestamps of unfinished work set to 0, as cuptiActivityGetNextRecord documents for
 * records without timing information. Each buffer the client gave comes back exactly once.
 *
 * Rules (tests/fakes/README.md): no public CUDA name is called, nothing the profiler wraps is called on the
 * program's paths or from the worker thread (waits are raw futex and clock_nanosleep system calls), and the
 * client's callbacks (buffers, timestamps) are never called with the lock held. */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_version.h>

#include "cupti_cbid_names.h"
#include "fakegpu.h"

#define FC_SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(FC_SAME(FAKEGPU_MEM_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE) &&
		       FC_SAME(FAKEGPU_MEM_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_PINNED) &&
		       FC_SAME(FAKEGPU_MEM_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) &&
		       FC_SAME(FAKEGPU_MEM_MANAGED, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED) &&
		       FC_SAME(FAKEGPU_MEM_DEVICE_STATIC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC),
	       "fakegpu_mem_kind is numbered as CUpti_ActivityMemoryKind");

#define FC_ALIGN 8u /* records start at multiples of 8 from the buffer, which must be 8-aligned */
#define FC_EXT_KINDS CUPTI_EXTERNAL_CORRELATION_KIND_SIZE
#define FC_DEFAULT_FLUSH_MS 100
#define FC_REGISTERS_PER_THREAD 32
#define FC_DEVICE_NAME "Fake GPU" /* as cudaGetDeviceProperties names the fake's devices */

#define FC_BIT(kind) ((uint64_t)1 << (kind))
/* The kinds this CUPTI records. */
#define FC_SUPPORTED                                                                                  \
	(FC_BIT(CUPTI_ACTIVITY_KIND_KERNEL) | FC_BIT(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) |          \
	 FC_BIT(CUPTI_ACTIVITY_KIND_MEMCPY) | FC_BIT(CUPTI_ACTIVITY_KIND_MEMSET) |                     \
	 FC_BIT(CUPTI_ACTIVITY_KIND_RUNTIME) | FC_BIT(CUPTI_ACTIVITY_KIND_DRIVER) |                    \
	 FC_BIT(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) | FC_BIT(CUPTI_ACTIVITY_KIND_OVERHEAD) |     \
	 FC_BIT(CUPTI_ACTIVITY_KIND_DEVICE) | FC_BIT(CUPTI_ACTIVITY_KIND_MEMCPY2))
#define FC_KERNEL_KINDS (FC_BIT(CUPTI_ACTIVITY_KIND_KERNEL) | FC_BIT(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
/* The kinds an operation on the device makes records of. */
#define FC_OPERATION_KINDS                                                                                \
	(FC_KERNEL_KINDS | FC_BIT(CUPTI_ACTIVITY_KIND_MEMCPY) | FC_BIT(CUPTI_ACTIVITY_KIND_MEMCPY2) |      \
	 FC_BIT(CUPTI_ACTIVITY_KIND_MEMSET) |                                                             \
	 FC_BIT(CUPTI_ACTIVITY_KIND_RUNTIME) | FC_BIT(CUPTI_ACTIVITY_KIND_DRIVER) |                        \
	 FC_BIT(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION))

/* One record on its way into a buffer. */
struct fc_rec {
	union {
		CUpti_Activity base;
		CUpti_ActivityKernel10 kernel;
		CUpti_ActivityMemcpy6 memcpy;
		CUpti_ActivityMemcpyPtoP4 peer;
		CUpti_ActivityMemset4 memset;
		CUpti_ActivityAPI api;
		CUpti_ActivityExternalCorrelation ext;
		CUpti_ActivityDevice5 device;
	} u;
	size_t size;
	uint64_t done; /* CLOCK_MONOTONIC time from which the record is complete; 0: already */
};

/* A record of a buffer that was not complete when written. */
struct fc_stamp {
	size_t off;
	uint64_t done;
};

/* A buffer the client gave (bufferRequested), until it is handed back (bufferCompleted). */
struct fc_buf {
	uint8_t *base;
	size_t size, used;
	size_t max_records, nrec; /* max_records 0: as many as fit */
	uint64_t owner;           /* the thread filling it (fc_owner), 0 when shared */
	uint64_t done;            /* when every record in it is complete (CLOCK_MONOTONIC) */
	struct fc_stamp *stamps;  /* its records that were not complete when written */
	size_t nstamps, cap_stamps;
	struct fc_buf *next;
};

/* Settings read once from the environment (tests/fakes/README.md). */
static struct {
	char fail[512];      /* FAKECUPTI_FAIL as ",name,name,": these functions return NOT_INITIALIZED */
	int any_fail;
	int no_ts_callback;  /* FAKECUPTI_NO_TIMESTAMP_CALLBACK */
	uint32_t flush_ms;   /* FAKECUPTI_FLUSH_MS: the worker's period when cuptiActivityFlushPeriod set none */
	double mem_bytes;    /* device records: as the fake libcudart's FAKEGPU_MEM_BYTES */
	double copy_bw;      /* FAKEGPU_COPY_BW */
} g_cfg;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* g_lock guards what follows, up to g_off_lock. Nothing called with it held blocks or calls the client. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc g_requested;
static CUpti_BuffersCallbackCompleteFunc g_completed;
static struct fc_buf *g_open;   /* being filled, one per owner */
static struct fc_buf *g_closed; /* full (or too small), oldest first, waiting for their records to complete */
static struct fc_buf *g_spare;  /* given by the client and not used yet */
static size_t g_dropped;        /* records dropped for want of a buffer (cuptiActivityGetNumDroppedRecords) */
static int g_delivering;        /* threads handing buffers back outside the lock */
static int g_attached;          /* the activity callback is set in libcudart */
static int g_worker_running;
static uint32_t g_period_ms;    /* cuptiActivityFlushPeriod; 0: the default */
static struct fc_attrs {
	size_t device_buffer_size, cdp_buffer_size, pool_limit, pre_allocate, graphs_buffer_size;
	uint8_t zeroed, host_pinned, per_thread;
} g_attr;
static const struct fc_attrs g_attr_default = {
	3200000, 8388608, 250, 3, 16777216, 0, 0, 1, /* the defaults cupti_activity.h documents */
};
static char **g_names; /* interned kernel names (open addressing), never freed */
static size_t g_names_cap, g_names_n;
static struct fc_graph {
	const void *exec;
	uint32_t id;
} *g_graphs;
static size_t g_ngraphs, g_cap_graphs;

/* The offset from CLOCK_MONOTONIC to CUPTI's timestamps in use (fc_offset), and the timestamp callback it was
 * measured for: read without a lock, changed under g_off_lock. */
static pthread_mutex_t g_off_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(CUpti_TimestampCallbackFunc) g_off_fn;
static _Atomic int64_t g_off;
static atomic_int g_off_valid;
#define FC_OFFSET_SLACK_NS 1000

/* Read without the lock. */
static _Atomic uint64_t g_enabled;                  /* FC_BIT of each enabled kind */
static _Atomic(CUpti_TimestampCallbackFunc) g_ts_fn; /* cuptiActivityRegisterTimestampCallback */
static atomic_int g_tid_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
static atomic_int g_in_callback;                     /* activity callbacks running */
static atomic_int g_stop;                            /* the worker is to stop */
static atomic_uint g_wake;                           /* futex: bumped to wake the worker */
static atomic_uint g_worker_exited;                  /* futex: set by the worker when it stops */
static _Atomic uint64_t g_next_serial = 1;
static _Atomic int64_t g_next_grid_id = 1;
static _Atomic uint32_t g_next_graph_id = 1;
static atomic_uint g_pid; /* getpid(), read once per process */

static _Thread_local CUptiResult t_last_error = CUPTI_SUCCESS;
static _Thread_local uint64_t t_serial;  /* this thread's owner id, 0 until needed */
static _Thread_local int t_delivering;   /* inside bufferCompleted */
static _Thread_local int t_is_worker;
static _Thread_local uint32_t t_sys_tid; /* gettid(), 0 until read */
/* External correlation ids pushed on this thread, per kind (cuptiActivityPushExternalCorrelationId). */
static _Thread_local struct fc_stack {
	uint64_t *ids;
	size_t n, cap;
} t_ext[FC_EXT_KINDS];
static pthread_key_t g_ext_key; /* frees a thread's stacks when it ends */

/* ---- configuration, clocks, threads ---- */

static void fc_ext_release(void *p)
{
	struct fc_stack *st = p;

	for (int k = 0; k < FC_EXT_KINDS; k++) {
		free(st[k].ids);
		st[k] = (struct fc_stack){ 0 };
	}
}

static void fc_atfork_prepare(void)
{
	pthread_mutex_lock(&g_lock);
	pthread_mutex_lock(&g_off_lock);
}

static void fc_atfork_parent(void)
{
	pthread_mutex_unlock(&g_off_lock);
	pthread_mutex_unlock(&g_lock);
}

/* The child has no worker thread and no callback or delivery in progress; a later cuptiActivityEnable
 * starts a worker again. */
static void fc_atfork_child(void)
{
	t_sys_tid = 0; /* the forking thread, the child's only one, has a thread id of its own there */
	atomic_store(&g_pid, (unsigned int)getpid());
	g_worker_running = 0;
	g_delivering = 0;
	atomic_store(&g_in_callback, 0);
	atomic_store(&g_stop, 0);
	atomic_store(&g_worker_exited, 0);
	pthread_mutex_unlock(&g_off_lock);
	pthread_mutex_unlock(&g_lock);
}

static void fc_init(void)
{
	const char *fail = getenv("FAKECUPTI_FAIL");
	const char *nots = getenv("FAKECUPTI_NO_TIMESTAMP_CALLBACK");
	double ms = fakegpu_env_double("FAKECUPTI_FLUSH_MS", FC_DEFAULT_FLUSH_MS);

	snprintf(g_cfg.fail, sizeof(g_cfg.fail), ",%s,", fail ? fail : "");
	for (char *c = g_cfg.fail; *c; c++)
		if (*c == ' ' || *c == ':' || *c == ';')
			*c = ',';
	g_cfg.any_fail = fail != NULL && *fail != '\0';
	g_cfg.no_ts_callback = nots != NULL && *nots != '\0' && strcmp(nots, "0") != 0;
	g_cfg.flush_ms = ms < 0 ? 0 : ms > 3600000 ? 3600000 : (uint32_t)ms;
	g_cfg.mem_bytes = fakegpu_env_double("FAKEGPU_MEM_BYTES", 1024.0 * 1024 * 1024);
	g_cfg.copy_bw = fakegpu_env_double("FAKEGPU_COPY_BW", 20e9);
	g_attr = g_attr_default;
	atomic_store(&g_pid, (unsigned int)getpid());
	pthread_key_create(&g_ext_key, fc_ext_release);
	pthread_atfork(fc_atfork_prepare, fc_atfork_parent, fc_atfork_child);
}

/* A failure becomes the thread's last error (cuptiGetLastError). */
static CUptiResult fc_ret(CUptiResult r)
{
	if (r != CUPTI_SUCCESS)
		t_last_error = r;
	return r;
}

/* Every public function starts here: nonzero when FAKECUPTI_FAIL names fn. */
static int fc_fails(const char *fn)
{
	char key[96];

	pthread_once(&g_once, fc_init);
	if (!g_cfg.any_fail)
		return 0;
	snprintf(key, sizeof(key), ",%s,", fn);
	return strstr(g_cfg.fail, key) != NULL;
}

#define FC_ENTER()                                                   \
	do {                                                         \
		if (fc_fails(__func__))                              \
			return fc_ret(CUPTI_ERROR_NOT_INITIALIZED); \
	} while (0)

static uint64_t fc_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return fc_clock(CLOCK_MONOTONIC);
}

/* What to add to a CLOCK_MONOTONIC time (the simulated device's clock) to make it a CUPTI timestamp: the
 * timestamp callback's time base when one is registered, else CLOCK_REALTIME, as CUPTI's on Linux.
 *
 * One mapping for all records, as CUPTI's conversion of GPU times is one function: work that runs back to
 * back on the device stays back to back. Each call reads the other clock between two CLOCK_MONOTONIC reads,
 * which bounds the offset; the offset in use is kept while it stays within those bounds (give or take
 * FC_OFFSET_SLACK_NS), and is measured again when it does not (another callback, a clock step). A new one is
 * 0 when the bounds allow it (a callback that returns CLOCK_MONOTONIC), else their middle. *now (if not
 * NULL) gets the CLOCK_MONOTONIC time of the measurement. Never called with g_lock held (the callback is the
 * client's). */
static int64_t fc_offset(uint64_t *now)
{
	CUpti_TimestampCallbackFunc fn = atomic_load(&g_ts_fn);
	uint64_t before = mono_ns();
	uint64_t t = fn ? fn() : fc_clock(CLOCK_REALTIME);
	uint64_t after = mono_ns();
	int64_t lo = (int64_t)(t - after) - FC_OFFSET_SLACK_NS, hi = (int64_t)(t - before) + FC_OFFSET_SLACK_NS;
	int64_t off = atomic_load(&g_off);

	if (now != NULL)
		*now = after;
	if (atomic_load(&g_off_valid) && atomic_load(&g_off_fn) == fn && off >= lo && off <= hi)
		return off; /* any offset within the bounds is right: no need to read the three together */
	pthread_mutex_lock(&g_off_lock);
	off = atomic_load(&g_off);
	if (!atomic_load(&g_off_valid) || atomic_load(&g_off_fn) != fn || off < lo || off > hi) {
		lo += FC_OFFSET_SLACK_NS;
		hi -= FC_OFFSET_SLACK_NS;
		off = lo <= 0 && hi >= 0 ? 0 : lo + (hi - lo) / 2;
		atomic_store(&g_off, off);
		atomic_store(&g_off_fn, fn);
		atomic_store(&g_off_valid, 1);
	}
	pthread_mutex_unlock(&g_off_lock);
	return off;
}

static uint64_t fc_ts(uint64_t mono, int64_t off)
{
	return mono + (uint64_t)off;
}

/* A short sleep for the rare waits (callbacks or deliveries in progress): a raw system call, as the profiler
 * wraps the libc sleeps. */
static void fc_nap(void)
{
	struct timespec ts = { 0, 50000 };

	syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
}

/* Waits while *w == val, at most ns nanoseconds (0: no limit). */
static void fc_futex_wait(atomic_uint *w, unsigned int val, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	syscall(SYS_futex, (void *)w, FUTEX_WAIT_PRIVATE, val, ns ? &ts : NULL, NULL, 0);
}

static void fc_futex_wake(atomic_uint *w)
{
	syscall(SYS_futex, (void *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* The calling thread's id as the thread id type says: the kernel's thread id (SYSTEM) or pthread_self()
 * (DEFAULT), as cupti_activity.h documents them on Linux. */
static uint32_t fc_tid(void)
{
	if (atomic_load_explicit(&g_tid_type, memory_order_relaxed) == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
		if (t_sys_tid == 0)
			t_sys_tid = (uint32_t)syscall(SYS_gettid);
		return t_sys_tid;
	}
	return (uint32_t)(uintptr_t)pthread_self();
}

static uint32_t fc_pid(void)
{
	return atomic_load_explicit(&g_pid, memory_order_relaxed);
}

/* Whose buffer the calling thread writes (lock held): its own, or the shared one. */
static uint64_t fc_owner(void)
{
	if (!g_attr.per_thread)
		return 0;
	if (t_serial == 0)
		t_serial = atomic_fetch_add(&g_next_serial, 1);
	return t_serial;
}

static int fc_supported(CUpti_ActivityKind kind)
{
	return (unsigned int)kind < 64 && (FC_SUPPORTED >> kind) & 1;
}

/* The size of a record of this kind, 0 for the kinds this CUPTI never writes. */
static size_t fc_record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	default:
		return 0;
	}
}

/* ---- names and ids (lock held) ---- */

static size_t fc_hash(const char *s)
{
	uint64_t h = 1469598103934665603u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return (size_t)h;
}

static int fc_names_grow(void)
{
	size_t cap = g_names_cap ? g_names_cap * 2 : 256;
	char **n = calloc(cap, sizeof(*n));

	if (n == NULL)
		return -1;
	for (size_t i = 0; i < g_names_cap; i++) {
		if (g_names[i] != NULL) {
			size_t j = fc_hash(g_names[i]) & (cap - 1);

			while (n[j] != NULL)
				j = (j + 1) & (cap - 1);
			n[j] = g_names[i];
		}
	}
	free(g_names);
	g_names = n;
	g_names_cap = cap;
	return 0;
}

/* One copy of each kernel name while its module is loaded, shared by every record of that kernel, as CUPTI
 * documents. The copy of a kernel whose module was unregistered is given to the next new name that fits
 * (fc_release), so a client that knows names by their address sees it reused. NULL when out of memory. */
#define FC_NAME_CAP 256
static char *g_free_names[64];
static size_t g_nfree_names;

static const char *fc_intern(const char *s)
{
	size_t i, len = strlen(s);

	if ((g_names_n + 1) * 2 > g_names_cap && fc_names_grow() != 0 && g_names_n + 1 >= g_names_cap)
		return NULL;
	for (i = fc_hash(s) & (g_names_cap - 1); g_names[i] != NULL; i = (i + 1) & (g_names_cap - 1))
		if (strcmp(g_names[i], s) == 0)
			return g_names[i];
	if (len < FC_NAME_CAP && g_nfree_names > 0)
		g_names[i] = g_free_names[--g_nfree_names];
	else
		g_names[i] = malloc(len < FC_NAME_CAP ? FC_NAME_CAP : len + 1);
	if (g_names[i] == NULL)
		return NULL;
	memcpy(g_names[i], s, len + 1);
	g_names_n++;
	return g_names[i];
}

/* A kernel's module was unregistered: its name leaves the table, its copy goes for reuse (lock held). */
static void fc_release(const char *s)
{
	char **old = g_names;
	size_t cap = g_names_cap, found = SIZE_MAX;

	for (size_t i = 0; i < cap; i++)
		if (old[i] != NULL && strcmp(old[i], s) == 0)
			found = i;
	if (found == SIZE_MAX)
		return;
	if (g_nfree_names < sizeof(g_free_names) / sizeof(g_free_names[0]) && strlen(old[found]) < FC_NAME_CAP)
		g_free_names[g_nfree_names++] = old[found];
	else
		free(old[found]);
	old[found] = NULL;
	/* the entries after it are placed again (open addressing) */
	g_names = NULL;
	g_names_cap = g_names_n = 0;
	for (size_t i = 0; i < cap; i++)
		if (old[i] != NULL) {
			if ((g_names_n + 1) * 2 > g_names_cap)
				fc_names_grow();
			size_t j = fc_hash(old[i]) & (g_names_cap - 1);

			while (g_names[j] != NULL)
				j = (j + 1) & (g_names_cap - 1);
			g_names[j] = old[i];
			g_names_n++;
		}
	free(old);
}

/* The id of a graph exec (graphId of its kernels), one per handle, counting up from 1. */
static uint32_t fc_graph_id(const void *exec)
{
	for (size_t i = 0; i < g_ngraphs; i++)
		if (g_graphs[i].exec == exec)
			return g_graphs[i].id;
	if (g_ngraphs == g_cap_graphs) {
		size_t cap = g_cap_graphs ? g_cap_graphs * 2 : 16;
		struct fc_graph *n = realloc(g_graphs, cap * sizeof(*n));

		if (n == NULL)
			return 0;
		g_graphs = n;
		g_cap_graphs = cap;
	}
	g_graphs[g_ngraphs] = (struct fc_graph){ exec, atomic_fetch_add(&g_next_graph_id, 1) };
	return g_graphs[g_ngraphs++].id;
}

/* ---- the runtime functions that enqueue work ---- */

#define FC_RUNTIME_APIS(X)                                                                            \
	X(cudaLaunchKernel, v7000) X(cudaLaunchKernel_ptsz, v7000)                                    \
	X(cudaLaunchCooperativeKernel, v9000) X(cudaLaunchCooperativeKernel_ptsz, v9000)              \
	X(cudaLaunchKernelExC, v11060) X(cudaLaunchKernelExC_ptsz, v11060)                            \
	X(cudaGraphLaunch, v10000) X(cudaGraphLaunch_ptsz, v10000)                                    \
	X(cudaMemcpy, v3020) X(cudaMemcpy_ptds, v7000) X(cudaMemcpyAsync, v3020)                      \
	X(cudaMemcpyAsync_ptsz, v7000) X(cudaMemcpy2D, v3020) X(cudaMemcpy2D_ptds, v7000)             \
	X(cudaMemcpy2DAsync, v3020) X(cudaMemcpy2DAsync_ptsz, v7000) X(cudaMemcpy3D, v3020)           \
	X(cudaMemcpy3D_ptds, v7000) X(cudaMemcpy3DAsync, v3020) X(cudaMemcpy3DAsync_ptsz, v7000)      \
	X(cudaMemcpyToSymbol, v3020) X(cudaMemcpyToSymbol_ptds, v7000)                                \
	X(cudaMemcpyFromSymbol, v3020) X(cudaMemcpyFromSymbol_ptds, v7000)                            \
	X(cudaMemcpyToSymbolAsync, v3020) X(cudaMemcpyToSymbolAsync_ptsz, v7000)                      \
	X(cudaMemcpyFromSymbolAsync, v3020) X(cudaMemcpyFromSymbolAsync_ptsz, v7000)                  \
	X(cudaMemcpyPeer, v4000) X(cudaMemcpyPeerAsync, v4000)                                        \
	X(cudaMemset, v3020) X(cudaMemset_ptds, v7000) X(cudaMemsetAsync, v3020)                      \
	X(cudaMemsetAsync_ptsz, v7000) X(cudaMemset2D, v3020) X(cudaMemset2D_ptds, v7000)             \
	X(cudaMemset2DAsync, v3020) X(cudaMemset2DAsync_ptsz, v7000)                                  \
	X(__cudaLaunchKernel, v13000) X(__cudaLaunchKernel_ptsz, v13000)

static const struct fc_api {
	const char *name;
	CUpti_CallbackId cbid;
} g_apis[] = {
#define FC_X(fn, v) { #fn, CUPTI_RUNTIME_TRACE_CBID_##fn##_##v },
	FC_RUNTIME_APIS(FC_X)
#undef FC_X
};

/* Every runtime and driver function's callback id and name (generated from the cbid headers). */
static const struct fc_api g_runtime_names[] = { FC_RUNTIME_NAMES };
static const struct fc_api g_driver_names[] = { FC_DRIVER_NAMES };

/* The API records enabled one function at a time (cuptiActivityEnableRuntimeApi, ...DriverApi), by cbid. */
#define FC_API_BITS 1024
static _Atomic uint64_t g_runtime_on[FC_API_BITS / 64], g_driver_on[FC_API_BITS / 64];

static int fc_api_on(_Atomic uint64_t *bits, CUpti_CallbackId cbid)
{
	return cbid < FC_API_BITS && (atomic_load(&bits[cbid / 64]) >> (cbid % 64) & 1);
}

/* What an activity record needs to know of the runtime function that enqueued the work. */
struct fc_api_info {
	CUpti_CallbackId cbid; /* CUPTI_RUNTIME_TRACE_CBID_INVALID when not known */
	int async;             /* ...Async: CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC / MEMSET_ASYNC */
	int cooperative;       /* cudaLaunchCooperativeKernel */
};

static struct fc_api_info fc_api(const char *api)
{
	static _Thread_local const char *last;
	static _Thread_local struct fc_api_info last_info;
	struct fc_api_info info = { CUPTI_RUNTIME_TRACE_CBID_INVALID, 0, 0 };

	if (api == NULL)
		return info;
	if (api == last)
		return last_info;
	for (size_t i = 0; i < sizeof(g_apis) / sizeof(g_apis[0]); i++) {
		if (strcmp(g_apis[i].name, api) == 0) {
			info.cbid = g_apis[i].cbid;
			break;
		}
	}
	for (size_t i = 0; info.cbid == CUPTI_RUNTIME_TRACE_CBID_INVALID && i < sizeof(g_runtime_names) /
		     sizeof(g_runtime_names[0]); i++)
		if (strcmp(g_runtime_names[i].name, api) == 0)
			info.cbid = g_runtime_names[i].cbid;
	info.async = strstr(api, "Async") != NULL;
	info.cooperative = strncmp(api, "cudaLaunchCooperativeKernel", 27) == 0;
	last = api;
	last_info = info;
	return info;
}

static uint8_t fc_copy_kind(int kind)
{
	switch (kind) {
	case 0: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH; /* cudaMemcpyHostToHost */
	case 1: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	case 2: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	case 3: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
	default: return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
	}
}

/* ---- buffers (lock held) ---- */

static struct fc_buf *fc_find_open(uint64_t owner)
{
	for (struct fc_buf *b = g_open; b; b = b->next)
		if (b->owner == owner)
			return b;
	return NULL;
}

/* Moves b (open, or not on any list) to the end of the closed list. */
static void fc_close(struct fc_buf *b)
{
	struct fc_buf **pp;

	for (pp = &g_open; *pp; pp = &(*pp)->next) {
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	}
	b->next = NULL;
	for (pp = &g_closed; *pp; pp = &(*pp)->next)
		;
	*pp = b;
}

/* The slot and bytes kept free at the end of each buffer for the overhead record of its delivery. */
static size_t fc_reserve_bytes(void)
{
	return atomic_load(&g_enabled) & FC_BIT(CUPTI_ACTIVITY_KIND_OVERHEAD) ? sizeof(CUpti_ActivityOverhead3) : 0;
}

static int fc_fits(const struct fc_buf *b, size_t size)
{
	size_t reserve = fc_reserve_bytes();
	size_t slots = reserve && b->max_records > 1 ? 1 : 0;

	if ((uintptr_t)b->base % FC_ALIGN != 0 || b->size < b->used || b->size - b->used < size + reserve)
		return 0;
	return b->max_records == 0 || b->nrec + 1 + slots <= b->max_records;
}

static void fc_append(struct fc_buf *b, const struct fc_rec *r)
{
	memcpy(b->base + b->used, &r->u, r->size);
	if (r->done != 0) {
		if (b->nstamps == b->cap_stamps) {
			size_t cap = b->cap_stamps ? b->cap_stamps * 2 : 64;
			struct fc_stamp *n = realloc(b->stamps, cap * sizeof(*n));

			if (n != NULL) {
				b->stamps = n;
				b->cap_stamps = cap;
			}
		}
		if (b->nstamps < b->cap_stamps)
			b->stamps[b->nstamps++] = (struct fc_stamp){ b->used, r->done };
		if (r->done > b->done)
			b->done = r->done;
	}
	b->used += r->size;
	b->nrec++;
	if (b->max_records != 0 && b->nrec + (fc_reserve_bytes() && b->max_records > 1 ? 1 : 0) >= b->max_records)
		fc_close(b); /* full: the worker may deliver it */
}

enum fc_put { FC_PUT_OK, FC_PUT_NO_BUFFER };

/* Writes r into owner's buffer: the open one, else a spare the client gave. A buffer without room is
 * closed: it goes back to the client when its records are complete. */
static enum fc_put fc_put(const struct fc_rec *r, uint64_t owner)
{
	struct fc_buf *b = fc_find_open(owner);

	if (b != NULL && fc_fits(b, r->size)) {
		fc_append(b, r);
		return FC_PUT_OK;
	}
	if (b != NULL)
		fc_close(b);
	while ((b = g_spare) != NULL) {
		g_spare = b->next;
		b->next = NULL;
		if (fc_fits(b, r->size)) {
			b->owner = owner;
			b->next = g_open;
			g_open = b;
			fc_append(b, r);
			return FC_PUT_OK;
		}
		fc_close(b); /* too small (or misaligned) for the record: handed back empty */
	}
	return FC_PUT_NO_BUFFER;
}

/* A record that is not written: what it owns is freed (a device record's name). */
static void fc_discard(struct fc_rec *r)
{
	if (r->u.base.kind == CUPTI_ACTIVITY_KIND_DEVICE)
		free((void *)r->u.device.name);
}

/* Writes the n records, in order, into the calling thread's buffer, asking the client for buffers as
 * needed (with the lock released around bufferRequested). A record for which the client gives no buffer,
 * or one too small, is dropped and counted. Lock held on entry and on return. */
static void fc_write(struct fc_rec *r, int n)
{
	for (int i = 0; i < n; i++) {
		int asked = 0;

		while (fc_put(&r[i], fc_owner()) != FC_PUT_OK) {
			CUpti_BuffersCallbackRequestFunc req = g_requested;
			int zero = !g_attr.zeroed;
			uint8_t *p = NULL;
			size_t size = 0, max = 0;
			struct fc_buf *b;

			if (req == NULL || asked) {
				g_dropped++;
				fc_discard(&r[i]);
				break;
			}
			pthread_mutex_unlock(&g_lock);
			req(&p, &size, &max);
			if (p != NULL && zero)
				memset(p, 0, size); /* ZEROED_OUT_ACTIVITY_BUFFER 0: CUPTI zeroes the buffer itself */
			pthread_mutex_lock(&g_lock);
			asked = 1;
			if (p == NULL)
				continue; /* dropped above */
			b = calloc(1, sizeof(*b));
			if (b == NULL) {
				g_dropped++;
				fc_discard(&r[i]);
				break; /* the buffer cannot even be tracked: lost, as the process is out of memory */
			}
			b->base = p;
			b->size = size;
			b->max_records = max;
			b->next = g_spare;
			g_spare = b;
		}
	}
}

/* ---- delivery ---- */

static void fc_zero_times(uint8_t *rec)
{
	CUpti_ActivityKind kind;

	memcpy(&kind, rec, sizeof(kind));
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)rec;

		k->start = k->end = k->completed = 0;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)rec;

		m->start = m->end = 0;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		CUpti_ActivityMemcpyPtoP4 *m = (CUpti_ActivityMemcpyPtoP4 *)rec;

		m->start = m->end = 0;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *)rec;

		m->start = m->end = 0;
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)rec;

		a->start = a->end = 0;
		break;
	}
	default:
		break;
	}
}

/* Gives b back to the client and forgets it: unfinished work loses its timestamps (forced), the overhead
 * record of the delivery is added when OVERHEAD is enabled and there is room. Called without the lock. */
static void fc_hand_back(struct fc_buf *b, CUpti_BuffersCallbackCompleteFunc fn, int forced)
{
	uint64_t t0 = mono_ns();

	if (forced)
		for (size_t i = 0; i < b->nstamps; i++)
			if (b->stamps[i].done > t0)
				fc_zero_times(b->base + b->stamps[i].off);
	if (b->used > 0 && (atomic_load(&g_enabled) & FC_BIT(CUPTI_ACTIVITY_KIND_OVERHEAD)) &&
	    (uintptr_t)b->base % FC_ALIGN == 0 && b->size - b->used >= sizeof(CUpti_ActivityOverhead3) &&
	    (b->max_records == 0 || b->nrec < b->max_records)) {
		CUpti_ActivityOverhead3 o;
		int64_t off = fc_offset(NULL);

		memset(&o, 0, sizeof(o));
		o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
		o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
		o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
		o.objectId.pt.processId = fc_pid();
		o.objectId.pt.threadId = fc_tid();
		o.start = fc_ts(t0, off);
		o.end = fc_ts(mono_ns(), off);
		memcpy(b->base + b->used, &o, sizeof(o));
		b->used += sizeof(o);
		b->nrec++;
	}
	if (fn != NULL)
		fn(NULL, 0, b->base, b->size, b->used);
	free(b->stamps);
	free(b);
}

enum fc_mode {
	FC_FULL,     /* the worker: full buffers whose records are all complete */
	FC_COMPLETE, /* cuptiActivityFlushAll(0): buffers whose records are all complete */
	FC_FORCED,   /* CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: every buffer */
};

/* Takes the buffers of list *pp that mode delivers (lock held), appending them to *tail. */
static struct fc_buf **fc_take(struct fc_buf **pp, struct fc_buf **tail, enum fc_mode mode, uint64_t now)
{
	while (*pp != NULL) {
		struct fc_buf *b = *pp;

		if (mode == FC_FORCED || b->done <= now) {
			*pp = b->next;
			b->next = NULL;
			*tail = b;
			tail = &b->next;
		} else {
			pp = &b->next;
		}
	}
	return tail;
}

/* Hands back, on the calling thread, the buffers mode says. Called without the lock. */
static void fc_deliver(enum fc_mode mode)
{
	struct fc_buf *list = NULL, **tail = &list;
	CUpti_BuffersCallbackCompleteFunc fn;
	uint64_t now = mono_ns();

	pthread_mutex_lock(&g_lock);
	tail = fc_take(&g_closed, tail, mode, now);
	if (mode != FC_FULL)
		tail = fc_take(&g_open, tail, mode, now);
	if (mode == FC_FORCED)
		tail = fc_take(&g_spare, tail, mode, now);
	fn = g_completed;
	if (list != NULL)
		g_delivering++;
	pthread_mutex_unlock(&g_lock);
	if (list == NULL)
		return;
	t_delivering++;
	while (list != NULL) {
		struct fc_buf *b = list;

		list = b->next;
		fc_hand_back(b, fn, mode == FC_FORCED);
	}
	t_delivering--;
	pthread_mutex_lock(&g_lock);
	g_delivering--;
	pthread_mutex_unlock(&g_lock);
}

/* Waits until no other thread is handing buffers back (cuptiActivityFlushAll returns when the records are
 * delivered). Not from inside bufferCompleted, which would wait for itself. */
static void fc_wait_deliveries(void)
{
	for (;;) {
		int busy;

		if (t_delivering)
			return;
		pthread_mutex_lock(&g_lock);
		busy = g_delivering;
		pthread_mutex_unlock(&g_lock);
		if (!busy)
			return;
		fc_nap();
	}
}

/* ---- the worker thread ---- */

static void *fc_worker(void *arg)
{
	(void)arg;
	t_is_worker = 1;
	while (!atomic_load(&g_stop)) {
		unsigned int seq = atomic_load(&g_wake);
		uint32_t ms;

		fc_deliver(FC_FULL);
		pthread_mutex_lock(&g_lock);
		ms = g_period_ms ? g_period_ms : g_cfg.flush_ms;
		pthread_mutex_unlock(&g_lock);
		if (atomic_load(&g_stop))
			break;
		fc_futex_wait(&g_wake, seq, (uint64_t)ms * 1000000u);
	}
	atomic_store(&g_worker_exited, 1);
	fc_futex_wake(&g_worker_exited);
	return NULL;
}

static void fc_wake_worker(void)
{
	atomic_fetch_add(&g_wake, 1);
	fc_futex_wake(&g_wake);
}

/* Starts the worker (signals blocked: they are the program's) and sets the activity callback, once (lock
 * held). libcudart's lock is taken after this one, never the other way round. */
static void fc_on_activity(const struct fakegpu_activity *a, void *arg);

static void fc_attach(void)
{
	if (!g_attached) {
		fakegpu_set_activity_callback(fc_on_activity, NULL);
		g_attached = 1;
	}
	if (!g_worker_running) {
		pthread_attr_t attr;
		pthread_t th;
		sigset_t all, old;

		atomic_store(&g_stop, 0);
		atomic_store(&g_worker_exited, 0);
		sigfillset(&all);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&th, &attr, fc_worker, NULL) == 0)
			g_worker_running = 1;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
}

/* ---- records of operations ---- */

static void fc_api_record(struct fc_rec *r, CUpti_ActivityKind kind, CUpti_CallbackId cbid,
			  const struct fakegpu_activity *a, uint64_t now, int64_t off)
{
	CUpti_ActivityAPI *api = &r->u.api;
	uint64_t end = a->api_end_ns > now ? a->api_end_ns : now;

	memset(r, 0, sizeof(*r));
	api->kind = kind;
	api->cbid = cbid;
	api->start = fc_ts(a->api_start_ns < end ? a->api_start_ns : end, off);
	api->end = fc_ts(end, off);
	api->processId = fc_pid();
	api->threadId = fc_tid();
	api->correlationId = (uint32_t)a->correlation_id;
	api->returnValue = 0; /* only successful calls enqueue work */
	r->size = sizeof(*api);
	r->done = end > now ? end : 0;
}

static void fc_kernel_record(struct fc_rec *r, uint64_t en, const struct fakegpu_activity *a,
			     const struct fc_api_info *info, int64_t off)
{
	CUpti_ActivityKernel10 *k = &r->u.kernel;

	memset(r, 0, sizeof(*r));
	k->kind = en & FC_BIT(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
								      : CUPTI_ACTIVITY_KIND_KERNEL;
	k->registersPerThread = FC_REGISTERS_PER_THREAD;
	k->partitionedGlobalCacheRequested = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
	k->partitionedGlobalCacheExecuted = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
	k->start = fc_ts(a->start_ns, off);
	k->end = fc_ts(a->end_ns, off);
	k->completed = k->end;
	k->deviceId = (uint32_t)a->device;
	k->contextId = (uint32_t)a->device + 1; /* one primary context per device */
	k->streamId = (uint32_t)a->stream_id;
	k->gridX = (int32_t)a->grid[0], k->gridY = (int32_t)a->grid[1], k->gridZ = (int32_t)a->grid[2];
	k->blockX = (int32_t)a->block[0], k->blockY = (int32_t)a->block[1], k->blockZ = (int32_t)a->block[2];
	k->dynamicSharedMemory = (int32_t)a->shared_bytes;
	k->sharedMemoryExecuted = (uint32_t)a->shared_bytes;
	k->correlationId = (uint32_t)a->correlation_id;
	k->gridId = atomic_fetch_add(&g_next_grid_id, 1);
	k->queued = k->submitted = CUPTI_TIMESTAMP_UNKNOWN; /* cuptiActivityEnableLatencyTimestamps: not collected */
	k->launchType = info->cooperative ? CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE
					  : CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
	k->shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
	k->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
	r->size = sizeof(*k);
	r->done = a->end_ns;
}

static void fc_memcpy_record(struct fc_rec *r, const struct fakegpu_activity *a, const struct fc_api_info *info,
			     int64_t off)
{
	CUpti_ActivityMemcpy6 *m = &r->u.memcpy;

	memset(r, 0, sizeof(*r));
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = fc_copy_kind(a->copy_kind);
	m->srcKind = (uint8_t)a->src_mem;
	m->dstKind = (uint8_t)a->dst_mem;
	m->flags = info->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	m->bytes = a->bytes;
	m->start = fc_ts(a->start_ns, off);
	m->end = fc_ts(a->end_ns, off);
	m->deviceId = (uint32_t)a->device;
	m->contextId = (uint32_t)a->device + 1;
	m->streamId = (uint32_t)a->stream_id;
	m->correlationId = (uint32_t)a->correlation_id;
	m->runtimeCorrelationId = (uint32_t)a->correlation_id;
	m->channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
	m->copyCount = 1;
	r->size = sizeof(*m);
	r->done = a->end_ns;
}

/* A copy between two devices: CUPTI reports those only as MEMCPY2 (CUpti_ActivityMemcpyPtoP4), never as MEMCPY. */
static void fc_peer_record(struct fc_rec *r, const struct fakegpu_activity *a, const struct fc_api_info *info,
			   int64_t off)
{
	CUpti_ActivityMemcpyPtoP4 *m = &r->u.peer;

	memset(r, 0, sizeof(*r));
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	m->srcKind = (uint8_t)a->src_mem;
	m->dstKind = (uint8_t)a->dst_mem;
	m->flags = info->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	m->bytes = a->bytes;
	m->start = fc_ts(a->start_ns, off);
	m->end = fc_ts(a->end_ns, off);
	m->deviceId = (uint32_t)a->device;
	m->contextId = (uint32_t)a->device + 1;
	m->streamId = (uint32_t)a->stream_id;
	m->srcDeviceId = (uint32_t)a->src_device;
	m->srcContextId = (uint32_t)a->src_device + 1;
	m->dstDeviceId = (uint32_t)a->dst_device;
	m->dstContextId = (uint32_t)a->dst_device + 1;
	m->correlationId = (uint32_t)a->correlation_id;
	m->channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
	r->size = sizeof(*m);
	r->done = a->end_ns;
}

static void fc_memset_record(struct fc_rec *r, const struct fakegpu_activity *a, const struct fc_api_info *info,
			     int64_t off)
{
	CUpti_ActivityMemset4 *m = &r->u.memset;

	memset(r, 0, sizeof(*r));
	m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m->value = (uint32_t)(unsigned char)a->value; /* cudaMemset sets bytes */
	m->bytes = a->bytes;
	m->start = fc_ts(a->start_ns, off);
	m->end = fc_ts(a->end_ns, off);
	m->deviceId = (uint32_t)a->device;
	m->contextId = (uint32_t)a->device + 1;
	m->streamId = (uint32_t)a->stream_id;
	m->correlationId = (uint32_t)a->correlation_id;
	m->flags = info->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
	m->memoryKind = (uint16_t)a->dst_mem;
	m->channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
	r->size = sizeof(*m);
	r->done = a->end_ns;
}

/* libcudart's activity callback: on the enqueuing thread, inside its CUDA call, without libcudart's lock. */
static void fc_on_activity(const struct fakegpu_activity *a, void *arg)
{
	struct fc_rec recs[FC_EXT_KINDS + 2];
	char synth[64];
	const char *name = a->name;
	int n = 0, kernel_at = -1;
	uint64_t en, now;
	int64_t off;
	struct fc_api_info info;
	int library = a->kind == FAKEGPU_ACT_LIBRARY;

	(void)arg;
	if (a->kind == FAKEGPU_ACT_UNLOAD) {
		pthread_mutex_lock(&g_lock);
		fc_release(a->name);
		pthread_mutex_unlock(&g_lock);
		return;
	}
	/* Counted before the kinds are read: cuptiFinalize clears the kinds, then waits for the count. */
	atomic_fetch_add(&g_in_callback, 1);
	en = atomic_load(&g_enabled);
	if (!(en & FC_OPERATION_KINDS)) {
		atomic_fetch_sub(&g_in_callback, 1);
		return;
	}
	off = fc_offset(&now);
	info = fc_api(library ? NULL : a->api);

	/* a graph launch is one call: its API and external correlation records come with its first node only */
	if (a->graph_node > 1)
		en &= ~(FC_BIT(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) | FC_BIT(CUPTI_ACTIVITY_KIND_RUNTIME) |
			FC_BIT(CUPTI_ACTIVITY_KIND_DRIVER));
	if (en & FC_BIT(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
		for (int k = CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN; k < FC_EXT_KINDS; k++) {
			if (t_ext[k].n == 0)
				continue;
			memset(&recs[n], 0, sizeof(recs[n]));
			recs[n].u.ext.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
			recs[n].u.ext.externalKind = (CUpti_ExternalCorrelationKind)k;
			recs[n].u.ext.externalId = t_ext[k].ids[t_ext[k].n - 1];
			recs[n].u.ext.correlationId = (uint32_t)a->correlation_id;
			recs[n].size = sizeof(recs[n].u.ext);
			n++;
		}
	}
	if (library && ((en & FC_BIT(CUPTI_ACTIVITY_KIND_DRIVER)) ||
			(a->graph_node <= 1 && fc_api_on(g_driver_on, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel))))
		fc_api_record(&recs[n++], CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, a, now, off);
	else if (!library && ((en & FC_BIT(CUPTI_ACTIVITY_KIND_RUNTIME)) ||
			      (a->graph_node <= 1 && fc_api_on(g_runtime_on, info.cbid))))
		fc_api_record(&recs[n++], CUPTI_ACTIVITY_KIND_RUNTIME, info.cbid, a, now, off);

	switch (a->kind) {
	case FAKEGPU_ACT_API:
		break; /* the API record alone */
	case FAKEGPU_ACT_UNLOAD:
		break; /* not work (handled above) */
	case FAKEGPU_ACT_KERNEL:
	case FAKEGPU_ACT_LIBRARY:
	case FAKEGPU_ACT_GRAPH:
		if (!(en & FC_KERNEL_KINDS))
			break;
		if (a->kind == FAKEGPU_ACT_GRAPH && name == NULL) {
			name = a->graph_node ? "fakegpu_graph_node" : "fakegpu_graph";
		} else if (name == NULL && a->kind == FAKEGPU_ACT_KERNEL) {
			snprintf(synth, sizeof(synth), "fakegpu_kernel_%p", a->handle);
			name = synth;
		} else if (name == NULL) {
			name = "fakegpu_library_work";
		}
		kernel_at = n;
		fc_kernel_record(&recs[n++], en, a, &info, off);
		break;
	case FAKEGPU_ACT_MEMCPY:
		if (a->src_device >= 0 && a->src_device != a->dst_device) {
			if (en & FC_BIT(CUPTI_ACTIVITY_KIND_MEMCPY2))
				fc_peer_record(&recs[n++], a, &info, off);
		} else if (en & FC_BIT(CUPTI_ACTIVITY_KIND_MEMCPY)) {
			fc_memcpy_record(&recs[n++], a, &info, off);
		}
		break;
	case FAKEGPU_ACT_MEMSET:
		if (en & FC_BIT(CUPTI_ACTIVITY_KIND_MEMSET))
			fc_memset_record(&recs[n++], a, &info, off);
		break;
	}

	if (n > 0) {
		pthread_mutex_lock(&g_lock);
		if (kernel_at >= 0) {
			CUpti_ActivityKernel10 *k = &recs[kernel_at].u.kernel;

			k->name = fc_intern(name);
			if (a->kind == FAKEGPU_ACT_GRAPH) {
				k->graphId = fc_graph_id(a->handle);
				k->graphNodeId = (uint64_t)k->graphId << 32 | (a->graph_node ? a->graph_node : 1);
			}
		}
		fc_write(recs, n);
		pthread_mutex_unlock(&g_lock);
	}
	atomic_fetch_sub(&g_in_callback, 1);
}

/* One device record per simulated device (CUPTI_ACTIVITY_KIND_DEVICE is being enabled), with the properties
 * the fake libcudart reports. */
static void fc_device_records(void)
{
	int ndev = fakegpu_device_count();

	for (int d = 0; d < ndev; d++) {
		struct fc_rec r;
		CUpti_ActivityDevice5 *v = &r.u.device;

		memset(&r, 0, sizeof(r));
		v->kind = CUPTI_ACTIVITY_KIND_DEVICE;
		v->flags = CUPTI_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS;
		v->globalMemoryBandwidth = (uint64_t)(g_cfg.copy_bw / 1000.0);
		v->globalMemorySize = (uint64_t)g_cfg.mem_bytes;
		v->constantMemorySize = 65536;
		v->l2CacheSize = 50 * 1024 * 1024;
		v->numThreadsPerWarp = 32;
		v->coreClockRate = 1980000;
		v->numMemcpyEngines = 2;
		v->numMultiprocessors = 132;
		v->maxIPC = 4;
		v->maxWarpsPerMultiprocessor = 64;
		v->maxBlocksPerMultiprocessor = 32;
		v->maxSharedMemoryPerMultiprocessor = 228 * 1024;
		v->maxRegistersPerMultiprocessor = 65536;
		v->maxRegistersPerBlock = 65536;
		v->maxSharedMemoryPerBlock = 48 * 1024;
		v->maxThreadsPerBlock = 1024;
		v->maxBlockDimX = 1024, v->maxBlockDimY = 1024, v->maxBlockDimZ = 64;
		v->maxGridDimX = INT_MAX, v->maxGridDimY = 65535, v->maxGridDimZ = 65535;
		v->computeCapabilityMajor = 9;
		v->computeCapabilityMinor = 0;
		v->id = (uint32_t)d;
		v->uuid.bytes[0] = 0x7a; /* as cudaGetDeviceProperties */
		v->uuid.bytes[15] = (char)d;
		v->name = strdup(FC_DEVICE_NAME); /* the client frees it, as cupti_activity.h says */
		v->isCudaVisible = 1;
		v->gpuInstanceId = UINT32_MAX;
		v->computeInstanceId = UINT32_MAX;
		v->numaId = UINT32_MAX;
		r.size = sizeof(*v);
		pthread_mutex_lock(&g_lock);
		fc_write(&r, 1);
		pthread_mutex_unlock(&g_lock);
	}
}

/* ---- the API ---- */

CUptiResult cuptiGetVersion(uint32_t *version)
{
	FC_ENTER();
	if (version == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

#define FC_RESULTS(X)                                                                                   \
	X(CUPTI_SUCCESS) X(CUPTI_ERROR_INVALID_PARAMETER) X(CUPTI_ERROR_INVALID_DEVICE)                 \
	X(CUPTI_ERROR_INVALID_CONTEXT) X(CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID)                           \
	X(CUPTI_ERROR_INVALID_EVENT_ID) X(CUPTI_ERROR_INVALID_EVENT_NAME) X(CUPTI_ERROR_INVALID_OPERATION) \
	X(CUPTI_ERROR_OUT_OF_MEMORY) X(CUPTI_ERROR_HARDWARE) X(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT) \
	X(CUPTI_ERROR_API_NOT_IMPLEMENTED) X(CUPTI_ERROR_MAX_LIMIT_REACHED) X(CUPTI_ERROR_NOT_READY)    \
	X(CUPTI_ERROR_NOT_COMPATIBLE) X(CUPTI_ERROR_NOT_INITIALIZED) X(CUPTI_ERROR_INVALID_METRIC_ID)   \
	X(CUPTI_ERROR_INVALID_METRIC_NAME) X(CUPTI_ERROR_QUEUE_EMPTY) X(CUPTI_ERROR_INVALID_HANDLE)     \
	X(CUPTI_ERROR_INVALID_STREAM) X(CUPTI_ERROR_INVALID_KIND) X(CUPTI_ERROR_INVALID_EVENT_VALUE)    \
	X(CUPTI_ERROR_DISABLED) X(CUPTI_ERROR_INVALID_MODULE) X(CUPTI_ERROR_INVALID_METRIC_VALUE)       \
	X(CUPTI_ERROR_HARDWARE_BUSY) X(CUPTI_ERROR_NOT_SUPPORTED) X(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED) \
	X(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE)                                             \
	X(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES)                                    \
	X(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS) X(CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED)      \
	X(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED) X(CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE)     \
	X(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) X(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED)              \
	X(CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE) X(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED)           \
	X(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)                                               \
	X(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)                                       \
	X(CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED) X(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED)      \
	X(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED) X(CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED)                 \
	X(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED) X(CUPTI_ERROR_INVALID_CHIP_NAME) X(CUPTI_ERROR_UNKNOWN)

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	FC_ENTER();
	if (str == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	switch (result) {
#define FC_X(code)            \
	case code:            \
		*str = #code; \
		return CUPTI_SUCCESS;
		FC_RESULTS(FC_X)
#undef FC_X
	default:
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	}
}

CUptiResult cuptiGetLastError(void)
{
	CUptiResult e;

	FC_ENTER();
	e = t_last_error;
	t_last_error = CUPTI_SUCCESS;
	return e;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
					   CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
	FC_ENTER();
	if (funcBufferRequested == NULL || funcBufferCompleted == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g_lock);
	g_requested = funcBufferRequested;
	g_completed = funcBufferCompleted;
	pthread_mutex_unlock(&g_lock);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
	const struct fc_api *t;
	size_t n;

	FC_ENTER();
	if (name == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	*name = NULL;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		t = g_runtime_names, n = sizeof(g_runtime_names) / sizeof(g_runtime_names[0]);
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		t = g_driver_names, n = sizeof(g_driver_names) / sizeof(g_driver_names[0]);
	} else {
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	}
	for (size_t i = 0; i < n; i++)
		if (t[i].cbid == cbid) {
			*name = t[i].name;
			return CUPTI_SUCCESS;
		}
	return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
}

static CUptiResult fc_enable_api(_Atomic uint64_t *bits, CUpti_CallbackId cbid, uint8_t enable)
{
	if (cbid >= FC_API_BITS)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	if (enable) {
		fakegpu_init_driver();
		pthread_mutex_lock(&g_lock);
		fc_attach();
		pthread_mutex_unlock(&g_lock);
		atomic_fetch_or(&bits[cbid / 64], (uint64_t)1 << (cbid % 64));
	} else {
		atomic_fetch_and(&bits[cbid / 64], ~((uint64_t)1 << (cbid % 64)));
	}
	return CUPTI_SUCCESS;
}

/* One function's API records; the RUNTIME and DRIVER kinds, enabled or disabled afterwards, set every one. */
CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	FC_ENTER();
	return fc_enable_api(g_runtime_on, cbid, enable);
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	FC_ENTER();
	return fc_enable_api(g_driver_on, cbid, enable);
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	int devices;

	FC_ENTER();
	if (!fc_supported(kind))
		return fc_ret(CUPTI_ERROR_INVALID_KIND);
	fakegpu_init_driver(); /* as CUPTI initialises the driver: a process forked from here on cannot use CUDA */
	pthread_mutex_lock(&g_lock);
	fc_attach();
	devices = kind == CUPTI_ACTIVITY_KIND_DEVICE && !(atomic_load(&g_enabled) & FC_BIT(kind));
	atomic_fetch_or(&g_enabled, FC_BIT(kind));
	pthread_mutex_unlock(&g_lock);
	if (devices)
		fc_device_records();
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	FC_ENTER();
	if (!fc_supported(kind))
		return fc_ret(CUPTI_ERROR_INVALID_KIND);
	atomic_fetch_and(&g_enabled, ~FC_BIT(kind));
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	int registered;

	FC_ENTER();
	pthread_mutex_lock(&g_lock);
	registered = g_completed != NULL;
	pthread_mutex_unlock(&g_lock);
	if (!registered)
		return fc_ret(CUPTI_ERROR_INVALID_OPERATION);
	fc_deliver(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? FC_FORCED : FC_COMPLETE);
	fc_wait_deliveries();
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushPeriod(uint32_t time)
{
	FC_ENTER();
	pthread_mutex_lock(&g_lock);
	g_period_ms = time;
	pthread_mutex_unlock(&g_lock);
	fc_wake_worker();
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes, CUpti_Activity **record)
{
	uint8_t *p, *end;
	CUpti_ActivityKind kind;
	size_t size;

	FC_ENTER();
	if (buffer == NULL || record == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	end = buffer + validBufferSizeBytes;
	if (*record == NULL) {
		p = buffer;
	} else {
		p = (uint8_t *)*record;
		if (p < buffer || p >= end)
			return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
		memcpy(&kind, p, sizeof(kind));
		size = fc_record_size(kind);
		if (size == 0)
			return fc_ret(CUPTI_ERROR_INVALID_KIND);
		p += size;
	}
	if (p >= end)
		return fc_ret(CUPTI_ERROR_MAX_LIMIT_REACHED);
	if ((size_t)(end - p) < sizeof(kind))
		return fc_ret(CUPTI_ERROR_INVALID_KIND);
	memcpy(&kind, p, sizeof(kind));
	size = fc_record_size(kind);
	if (size == 0 || size > (size_t)(end - p))
		return fc_ret(CUPTI_ERROR_INVALID_KIND);
	*record = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped)
{
	(void)streamId;
	FC_ENTER();
	if (dropped == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	if (context != NULL) {
		*dropped = 0; /* every buffer is global since CUDA 6: no context has a queue of its own */
		return CUPTI_SUCCESS;
	}
	pthread_mutex_lock(&g_lock);
	*dropped = g_dropped;
	g_dropped = 0;
	pthread_mutex_unlock(&g_lock);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
	struct fc_stack *st;

	FC_ENTER();
	if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	st = &t_ext[kind];
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 8;
		uint64_t *n = realloc(st->ids, cap * sizeof(*n));

		if (n == NULL)
			return fc_ret(CUPTI_ERROR_OUT_OF_MEMORY);
		if (st->ids == NULL)
			pthread_setspecific(g_ext_key, t_ext);
		st->ids = n;
		st->cap = cap;
	}
	st->ids[st->n++] = id;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *lastId)
{
	struct fc_stack *st;

	FC_ENTER();
	if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	st = &t_ext[kind];
	if (st->n == 0)
		return fc_ret(CUPTI_ERROR_QUEUE_EMPTY);
	st->n--;
	if (lastId != NULL)
		*lastId = st->ids[st->n];
	return CUPTI_SUCCESS;
}

/* Accepted at any time: records made afterwards use the new time base (cupti_activity.h asks for it to be
 * registered before the kinds are enabled, and warns that records made before keep the previous one). */
CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
	FC_ENTER();
	if (funcTimestamp == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	if (g_cfg.no_ts_callback)
		return fc_ret(CUPTI_ERROR_NOT_SUPPORTED);
	atomic_store(&g_ts_fn, funcTimestamp);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	CUpti_TimestampCallbackFunc fn;

	FC_ENTER();
	if (timestamp == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	fn = atomic_load(&g_ts_fn);
	*timestamp = fn ? fn() : fc_clock(CLOCK_REALTIME);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	FC_ENTER();
	if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return fc_ret(CUPTI_ERROR_NOT_SUPPORTED);
	atomic_store(&g_tid_type, (int)type);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
	FC_ENTER();
	if (type == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	*type = (CUpti_ActivityThreadIdType)atomic_load(&g_tid_type);
	return CUPTI_SUCCESS;
}

/* Where an attribute lives and its size (lock held); CUPTI_SUCCESS or why it has none. */
static CUptiResult fc_attr(CUpti_ActivityAttribute attr, void **where, size_t *size)
{
	switch (attr) {
	case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE:
		*where = &g_attr.device_buffer_size, *size = sizeof(size_t);
		return CUPTI_SUCCESS;
	case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP:
		*where = &g_attr.cdp_buffer_size, *size = sizeof(size_t);
		return CUPTI_SUCCESS;
	case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT:
		*where = &g_attr.pool_limit, *size = sizeof(size_t);
		return CUPTI_SUCCESS;
	case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE:
		*where = &g_attr.pre_allocate, *size = sizeof(size_t);
		return CUPTI_SUCCESS;
	case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS:
		*where = &g_attr.graphs_buffer_size, *size = sizeof(size_t);
		return CUPTI_SUCCESS;
	case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER:
		*where = &g_attr.zeroed, *size = sizeof(uint8_t);
		return CUPTI_SUCCESS;
	case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED:
		*where = &g_attr.host_pinned, *size = sizeof(uint8_t);
		return CUPTI_SUCCESS;
	case CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER:
		*where = &g_attr.per_thread, *size = sizeof(uint8_t);
		return CUPTI_SUCCESS;
	case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE:
	case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_LIMIT:
	case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_PRE_ALLOCATE_VALUE:
		return CUPTI_ERROR_NOT_SUPPORTED; /* "not supported starting with CUDA 12.3" */
	default:
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
}

CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
	void *where;
	size_t size;
	CUptiResult e;

	FC_ENTER();
	if (valueSize == NULL || value == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g_lock);
	e = fc_attr(attr, &where, &size);
	if (e == CUPTI_SUCCESS && *valueSize < size)
		e = CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
	if (e == CUPTI_SUCCESS) {
		memcpy(value, where, size);
		*valueSize = size;
	}
	pthread_mutex_unlock(&g_lock);
	return fc_ret(e);
}

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
	void *where;
	size_t size;
	CUptiResult e;

	FC_ENTER();
	if (valueSize == NULL || value == NULL)
		return fc_ret(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g_lock);
	e = fc_attr(attr, &where, &size);
	if (e == CUPTI_SUCCESS && *valueSize < size)
		e = CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
	if (e == CUPTI_SUCCESS)
		memcpy(where, value, size);
	pthread_mutex_unlock(&g_lock);
	return fc_ret(e);
}

/* Detaches: no more records, every buffer handed back (forced flush), the worker stopped, and the settings
 * (callbacks, timestamp callback, flush period, thread id type, attributes, dropped count) back to their
 * defaults; the kinds may be enabled again afterwards. Kernel names stay valid. */
CUptiResult cuptiFinalize(void)
{
	int attached, running;

	FC_ENTER();
	pthread_mutex_lock(&g_lock);
	atomic_store(&g_enabled, 0);
	attached = g_attached;
	running = g_worker_running;
	g_attached = 0;
	g_worker_running = 0;
	pthread_mutex_unlock(&g_lock);
	if (attached)
		fakegpu_set_activity_callback(NULL, NULL);
	while (atomic_load(&g_in_callback) != 0)
		fc_nap();
	if (running) {
		atomic_store(&g_stop, 1);
		fc_wake_worker();
		while (!t_is_worker && !atomic_load(&g_worker_exited))
			fc_futex_wait(&g_worker_exited, 0, 0);
	}
	fc_deliver(FC_FORCED);
	fc_wait_deliveries();
	pthread_mutex_lock(&g_lock);
	g_requested = NULL;
	g_completed = NULL;
	g_dropped = 0;
	g_period_ms = 0;
	g_attr = g_attr_default;
	pthread_mutex_unlock(&g_lock);
	atomic_store(&g_ts_fn, NULL);
	atomic_store(&g_tid_type, CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
	pthread_mutex_lock(&g_off_lock);
	atomic_store(&g_off_valid, 0);
	pthread_mutex_unlock(&g_off_lock);
	return CUPTI_SUCCESS;
}
