/* Fake libcudart.so.13: a simulated GPU for testing the profiler on machines without one.
 *
 * The device is a set of streams, each with a busy_until time (CLOCK_MONOTONIC ns). Work of duration d
 * enqueued on a stream starts at max(now, the stream's busy_until, and what CUDA's default-stream rules add)
 * and ends d later; nothing runs in the background. Synchronising calls sleep until the time they wait for.
 * Kernels are not run (their "function" is a host function pointer used as a name); copies and memsets act
 * on the memory at once and take the time of their size. Device memory is host memory counted against the
 * device's capacity.
 *
 * Rules (tests/fakes/README.md): no public CUDA name is called through the dynamic linker (every public
 * function is a thin shell around static code), and nothing the profiler wraps is called on a path the
 * program's calls take (sleeps are raw system calls). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "fakegpu.h"

/* The per-thread-default-stream variants have the prototypes of their base names; the headers declare them
 * only under CUDA_API_PER_THREAD_DEFAULT_STREAM, which renames the base names, so they are declared here from
 * the base declarations (a definition that differs from the real prototype is a compile error). */
#define FG_VARIANT(base, suffix) extern __typeof__(base) base##suffix;
FG_VARIANT(cudaLaunchKernel, _ptsz)
FG_VARIANT(cudaLaunchKernelExC, _ptsz)
FG_VARIANT(cudaLaunchCooperativeKernel, _ptsz)
FG_VARIANT(cudaGraphLaunch, _ptsz)
FG_VARIANT(cudaMallocAsync, _ptsz)
FG_VARIANT(cudaFreeAsync, _ptsz)
FG_VARIANT(cudaMemcpy, _ptds)
FG_VARIANT(cudaMemcpy2D, _ptds)
FG_VARIANT(cudaMemcpy3D, _ptds)
FG_VARIANT(cudaMemcpyToSymbol, _ptds)
FG_VARIANT(cudaMemcpyFromSymbol, _ptds)
FG_VARIANT(cudaMemcpyAsync, _ptsz)
FG_VARIANT(cudaMemcpy2DAsync, _ptsz)
FG_VARIANT(cudaMemcpy3DAsync, _ptsz)
FG_VARIANT(cudaMemcpyToSymbolAsync, _ptsz)
FG_VARIANT(cudaMemcpyFromSymbolAsync, _ptsz)
FG_VARIANT(cudaMemset, _ptds)
FG_VARIANT(cudaMemset2D, _ptds)
FG_VARIANT(cudaMemsetAsync, _ptsz)
FG_VARIANT(cudaMemset2DAsync, _ptsz)
FG_VARIANT(cudaStreamSynchronize, _ptsz)
FG_VARIANT(cudaStreamQuery, _ptsz)
FG_VARIANT(cudaStreamWaitEvent, _ptsz)
FG_VARIANT(cudaStreamGetFlags, _ptsz)
FG_VARIANT(cudaStreamGetPriority, _ptsz)
FG_VARIANT(cudaStreamGetDevice, _ptsz)
FG_VARIANT(cudaEventRecord, _ptsz)
FG_VARIANT(cudaEventRecordWithFlags, _ptsz)

#define FG_MAX_DEVICES 64
#define FG_STREAM_MAGIC 0x5354524dU
#define FG_EVENT_MAGIC 0x45564e54U
#define FG_PRIORITY_GREATEST (-5)
#define FG_PRIORITY_LEAST 0

enum fg_stream_kind { FG_LEGACY, FG_USER, FG_PTDS };

struct fg_stream {
	uint32_t magic;
	enum fg_stream_kind kind;
	int device;
	unsigned int flags; /* cudaStreamNonBlocking or 0 */
	int priority;
	uint64_t id;
	uint64_t busy_until;
	struct fg_graph *capture; /* being captured into (cudaStreamBeginCapture): launches add nodes, run nothing */
	struct fg_stream *next;   /* the device's list of user and per-thread streams */
};

struct fg_device {
	size_t used; /* device memory bytes in use (cudaMalloc, Pitch, Async, Managed) */
	struct fg_stream legacy;
	struct fg_stream *streams;
	uint64_t retired_busy;          /* latest end of work on streams destroyed since */
	uint64_t retired_blocking_busy; /* the same for blocking streams (the legacy stream waits for those) */
};

struct fg_event {
	uint32_t magic;
	int device;
	unsigned int flags;
	int recorded;
	uint64_t when; /* completion time of the work before the last record */
	struct fg_event *next;
};

enum fg_mem { FG_MEM_NONE = 0, FG_MEM_DEVICE, FG_MEM_DEVICE_ASYNC, FG_MEM_MANAGED, FG_MEM_PINNED, FG_MEM_REGISTERED };

struct fg_alloc {
	uintptr_t base;
	size_t size;
	enum fg_mem type;
	int device;
};

/* An activity record waiting for the lock to be released. */
struct fg_pending {
	fakegpu_activity_fn fn;
	void *arg;
	struct fakegpu_activity act;
};

static struct {
	int ndev;
	uint64_t mem_bytes;
	double ns_per_block;
	double copy_bps;     /* pinned host or device memory */
	double pageable_bps; /* pageable host memory on either side */
	uint64_t graph_ns;
} g_cfg;

/* g_lock guards everything below it; no call made with it held blocks or calls back into the program. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_ptds_key;
static struct fg_device *g_dev;
static struct fg_event *g_events;
static struct fg_alloc *g_allocs; /* sorted by base, no overlaps */
static size_t g_nallocs, g_cap_allocs;
static uint64_t g_next_stream_id = 1;
static uint64_t g_next_corr = 1;
static fakegpu_activity_fn g_act_fn;
static void *g_act_arg;
static atomic_int g_act_on; /* g_act_fn is set: public calls note their name and entry time */

static _Thread_local int t_device;
static _Thread_local cudaError_t t_last_error = cudaSuccess;
static _Thread_local struct fg_stream **t_ptds; /* per device, made on first use */
static _Thread_local const char *t_api;        /* the public function the thread is in (activity records) */
static _Thread_local uint64_t t_api_start;     /* when it was entered; 0 when no activity callback was set */
static _Thread_local int t_enqueued;            /* it enqueued work (whose activity carries its API record) */

/* ---- configuration, clock ---- */

static double env_double(const char *name, double def)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return def;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0)
		return def;
	switch (*end) {
	case 'k': case 'K': v *= 1024.0; end++; break;
	case 'm': case 'M': v *= 1024.0 * 1024.0; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; end++; break;
	default: break;
	}
	return *end == '\0' ? v : def;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleeps until CLOCK_MONOTONIC reaches t. A raw system call: the profiler wraps clock_nanosleep, and a
 * synchronising CUDA call must not show up as a sleep of its own. */
static void wait_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u) };

	while (now_ns() < t)
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t duration_ns(double bytes, double bps)
{
	double ns = bytes * 1e9 / (bps > 0 ? bps : 1.0);

	return ns < 1.0 ? 1 : (uint64_t)ns;
}

static void ptds_release(void *p);

static void fg_init(void)
{
	double n = env_double("FAKEGPU_DEVICES", 1);

	g_cfg.ndev = n < 0 ? 0 : n > FG_MAX_DEVICES ? FG_MAX_DEVICES : (int)n;
	g_cfg.mem_bytes = (uint64_t)env_double("FAKEGPU_MEM_BYTES", 1024.0 * 1024 * 1024);
	g_cfg.ns_per_block = env_double("FAKEGPU_NS_PER_BLOCK", 2000);
	g_cfg.copy_bps = env_double("FAKEGPU_COPY_BW", 20e9);
	g_cfg.pageable_bps = env_double("FAKEGPU_PAGEABLE_BW", 5e9);
	g_cfg.graph_ns = (uint64_t)env_double("FAKEGPU_GRAPH_NS", 10000);
	g_dev = calloc(g_cfg.ndev > 0 ? (size_t)g_cfg.ndev : 1, sizeof(*g_dev));
	if (g_dev == NULL) {
		fprintf(stderr, "fake libcudart: out of memory\n");
		abort();
	}
	for (int d = 0; d < g_cfg.ndev; d++) {
		g_dev[d].legacy.magic = FG_STREAM_MAGIC;
		g_dev[d].legacy.kind = FG_LEGACY;
		g_dev[d].legacy.device = d;
	}
	pthread_key_create(&g_ptds_key, ptds_release);
}

/* The driver is initialised (the first runtime call that is not a registration or a version or error query,
 * or a CUPTI client's start), and whether this process is a fork child of one in which it was: CUDA cannot
 * be used there, and every runtime call fails with cudaErrorInitializationError, as with the real driver. */
static atomic_int g_initialized, g_forked_after_init;

static void fg_atfork_child(void)
{
	atomic_store(&g_forked_after_init, atomic_load(&g_initialized));
}

static void fg_register_atfork(void)
{
	pthread_atfork(NULL, NULL, fg_atfork_child);
}

void fakegpu_init_driver(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fg_register_atfork);
	atomic_store(&g_initialized, 1);
}

/* Every public function starts here: fg_enter() names the function for activity records, initialises the
 * driver and returns cudaErrorInitializationError in a fork child of a process that had; fg_enter_quiet()
 * (registrations, the fakegpu_* calls of the other fakes) only names it. */
static void fg_enter_api(const char *api)
{
	pthread_once(&g_once, fg_init);
	t_api = api;
	t_api_start = atomic_load_explicit(&g_act_on, memory_order_relaxed) ? now_ns() : 0;
	t_enqueued = 0;
}
#define fg_enter_quiet() fg_enter_api(__func__)
#define fg_enter()                                                    \
	do {                                                          \
		fg_enter_api(__func__);                               \
		if (atomic_load(&g_forked_after_init))                \
			return fin(cudaErrorInitializationError);     \
		if (!atomic_load_explicit(&g_initialized, memory_order_relaxed)) \
			fakegpu_init_driver();                        \
	} while (0)

/* Every public runtime function returns through here: a failure becomes the thread's last error
 * (cudaGetLastError). cudaErrorNotReady is a status, not an error, as in CUDA. */
static void api_activity(void);

static cudaError_t fin(cudaError_t e)
{
	if (e != cudaSuccess && e != cudaErrorNotReady)
		t_last_error = e;
	if (t_api != NULL && !t_enqueued && atomic_load_explicit(&g_act_on, memory_order_relaxed))
		api_activity();
	return e;
}

/* ---- allocation table (lock held) ---- */

/* Index of the first allocation whose base is > p. */
static size_t alloc_upper(uintptr_t p)
{
	size_t lo = 0, hi = g_nallocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g_allocs[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The allocation containing p, or NULL. */
static struct fg_alloc *alloc_find(const void *ptr)
{
	uintptr_t p = (uintptr_t)ptr;
	size_t i = alloc_upper(p);

	if (i == 0)
		return NULL;
	if (p - g_allocs[i - 1].base < g_allocs[i - 1].size)
		return &g_allocs[i - 1];
	return NULL;
}

static int alloc_overlaps(uintptr_t base, size_t size)
{
	size_t i = alloc_upper(base);

	if (i > 0 && base - g_allocs[i - 1].base < g_allocs[i - 1].size)
		return 1;
	return i < g_nallocs && g_allocs[i].base - base < size;
}

/* 0, or -1 when out of memory. */
static int alloc_insert(uintptr_t base, size_t size, enum fg_mem type, int device)
{
	size_t i;

	if (g_nallocs == g_cap_allocs) {
		size_t cap = g_cap_allocs ? g_cap_allocs * 2 : 64;
		struct fg_alloc *n = realloc(g_allocs, cap * sizeof(*n));

		if (n == NULL)
			return -1;
		g_allocs = n;
		g_cap_allocs = cap;
	}
	i = alloc_upper(base);
	memmove(&g_allocs[i + 1], &g_allocs[i], (g_nallocs - i) * sizeof(*g_allocs));
	g_allocs[i] = (struct fg_alloc){ .base = base, .size = size, .type = type, .device = device };
	g_nallocs++;
	return 0;
}

static void alloc_remove(struct fg_alloc *a)
{
	size_t i = (size_t)(a - g_allocs);

	memmove(&g_allocs[i], &g_allocs[i + 1], (g_nallocs - i - 1) * sizeof(*g_allocs));
	g_nallocs--;
}

static int mem_is_device(enum fg_mem t)
{
	return t == FG_MEM_DEVICE || t == FG_MEM_DEVICE_ASYNC || t == FG_MEM_MANAGED;
}

/* ---- streams (lock held) ---- */

static struct fg_stream *ptds_stream(int dev)
{
	if (t_ptds == NULL) {
		t_ptds = calloc((size_t)g_cfg.ndev, sizeof(*t_ptds));
		if (t_ptds == NULL)
			return NULL;
		pthread_setspecific(g_ptds_key, t_ptds);
	}
	if (t_ptds[dev] == NULL) {
		struct fg_stream *s = calloc(1, sizeof(*s));

		if (s == NULL)
			return NULL;
		*s = (struct fg_stream){ .magic = FG_STREAM_MAGIC, .kind = FG_PTDS, .device = dev,
					 .id = g_next_stream_id++, .next = g_dev[dev].streams };
		g_dev[dev].streams = s;
		t_ptds[dev] = s;
	}
	return t_ptds[dev];
}

/* Takes s off its device's list; its pending work still counts for the device's synchronisation. */
static void stream_retire(struct fg_stream *s)
{
	struct fg_device *d = &g_dev[s->device];

	for (struct fg_stream **pp = &d->streams; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	d->retired_busy = max_u64(d->retired_busy, s->busy_until);
	if (!(s->flags & cudaStreamNonBlocking))
		d->retired_blocking_busy = max_u64(d->retired_blocking_busy, s->busy_until);
	s->magic = 0;
	free(s);
}

/* pthread key destructor: a thread's per-thread default streams end with it. */
static void ptds_release(void *p)
{
	struct fg_stream **arr = p;

	pthread_mutex_lock(&g_lock);
	for (int d = 0; d < g_cfg.ndev; d++)
		if (arr[d] != NULL)
			stream_retire(arr[d]);
	pthread_mutex_unlock(&g_lock);
	if (arr == t_ptds)
		t_ptds = NULL;
	free(arr);
}

/* The stream a handle names. NULL is the legacy default stream, or the per-thread one for the _ptsz/_ptds
 * entry points (per_thread). */
static cudaError_t stream_resolve(cudaStream_t h, int per_thread, struct fg_stream **out)
{
	if (g_cfg.ndev == 0)
		return cudaErrorNoDevice;
	if (h == NULL)
		h = per_thread ? cudaStreamPerThread : cudaStreamLegacy;
	if (h == cudaStreamLegacy) {
		*out = &g_dev[t_device].legacy;
		return cudaSuccess;
	}
	if (h == cudaStreamPerThread) {
		*out = ptds_stream(t_device);
		return *out ? cudaSuccess : cudaErrorMemoryAllocation;
	}
	for (int d = 0; d < g_cfg.ndev; d++) {
		for (struct fg_stream *s = g_dev[d].streams; s; s = s->next) {
			if ((cudaStream_t)s == h && s->kind == FG_USER) {
				*out = s;
				return cudaSuccess;
			}
		}
	}
	return cudaErrorInvalidResourceHandle;
}

/* When work enqueued now on s could start: after s's own work; the legacy stream also waits for every
 * blocking stream of its device, and a blocking stream for the legacy stream. */
static uint64_t stream_ready(const struct fg_stream *s, uint64_t now)
{
	const struct fg_device *d = &g_dev[s->device];
	uint64_t t = max_u64(now, s->busy_until);

	if (s->kind == FG_LEGACY) {
		for (const struct fg_stream *o = d->streams; o; o = o->next)
			if (!(o->flags & cudaStreamNonBlocking))
				t = max_u64(t, o->busy_until);
		t = max_u64(t, d->retired_blocking_busy);
	} else if (!(s->flags & cudaStreamNonBlocking)) {
		t = max_u64(t, d->legacy.busy_until);
	}
	return t;
}

/* Puts ns of work on s; returns its end. pend (may be NULL) gets the activity's common fields. */
static uint64_t enqueue_locked(struct fg_stream *s, uint64_t ns, enum fakegpu_activity_kind kind,
			       struct fg_pending *pend)
{
	uint64_t start = stream_ready(s, now_ns());

	t_enqueued = 1;
	s->busy_until = start + ns;
	if (pend != NULL) {
		memset(pend, 0, sizeof(*pend));
		pend->fn = g_act_fn;
		pend->arg = g_act_arg;
		pend->act.kind = kind;
		pend->act.device = s->device;
		pend->act.stream_id = s->id;
		pend->act.correlation_id = g_next_corr++;
		pend->act.src_device = pend->act.dst_device = -1;
		pend->act.start_ns = start;
		pend->act.end_ns = start + ns;
		pend->act.api = t_api;
		pend->act.api_start_ns = t_api_start ? t_api_start : now_ns();
	}
	return start + ns;
}

/* The activity of a runtime call that enqueued nothing (CUPTI still makes an API record of it), once. */
static void api_activity(void)
{
	struct fg_pending p;

	memset(&p, 0, sizeof(p));
	pthread_mutex_lock(&g_lock);
	p.fn = g_act_fn;
	p.arg = g_act_arg;
	p.act.correlation_id = g_next_corr++;
	pthread_mutex_unlock(&g_lock);
	p.act.kind = FAKEGPU_ACT_API;
	p.act.device = t_device;
	p.act.src_device = p.act.dst_device = -1;
	p.act.api = t_api;
	p.act.api_start_ns = t_api_start ? t_api_start : now_ns();
	p.act.api_end_ns = now_ns();
	t_api = NULL;
	if (p.fn != NULL)
		p.fn(&p.act, p.arg);
}

static void pending_emit(struct fg_pending *p)
{
	if (p->fn != NULL)
		p->fn(&p->act, p->arg);
}

/* When every stream of device d will be idle. */
static uint64_t device_busy_until(int d)
{
	uint64_t t = max_u64(g_dev[d].legacy.busy_until, g_dev[d].retired_busy);

	for (const struct fg_stream *s = g_dev[d].streams; s; s = s->next)
		t = max_u64(t, s->busy_until);
	return t;
}

static cudaError_t device_synchronize(void)
{
	uint64_t t;

	pthread_mutex_lock(&g_lock);
	if (g_cfg.ndev == 0) {
		pthread_mutex_unlock(&g_lock);
		return cudaErrorNoDevice;
	}
	t = device_busy_until(t_device);
	pthread_mutex_unlock(&g_lock);
	wait_until(t);
	return cudaSuccess;
}

/* ---- private API for the other fakes ---- */

static cudaError_t enqueue_library(cudaStream_t h, uint64_t ns, const char *name)
{
	struct fg_stream *s;
	struct fg_pending pend;
	cudaError_t e;

	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, 0, &s);
	if (e == cudaSuccess)
		enqueue_locked(s, ns, FAKEGPU_ACT_LIBRARY, &pend);
	pthread_mutex_unlock(&g_lock);
	if (e == cudaSuccess) {
		pend.act.name = name;
		pending_emit(&pend);
	}
	return e;
}

int fakegpu_enqueue_named(cudaStream_t stream, uint64_t ns, const char *name)
{
	fg_enter_quiet();
	return enqueue_library(stream, ns, name);
}

int fakegpu_enqueue(cudaStream_t stream, uint64_t ns)
{
	fg_enter_quiet();
	return enqueue_library(stream, ns, NULL);
}

int fakegpu_stream_device(cudaStream_t stream, int *device)
{
	struct fg_stream *s;
	cudaError_t e;

	fg_enter_quiet();
	pthread_mutex_lock(&g_lock);
	e = stream_resolve(stream, 0, &s);
	if (e == cudaSuccess && device != NULL)
		*device = s->device;
	pthread_mutex_unlock(&g_lock);
	return e;
}

int fakegpu_stream_check(cudaStream_t stream)
{
	return fakegpu_stream_device(stream, NULL);
}

int fakegpu_current_device(void)
{
	fg_enter_quiet();
	return g_cfg.ndev > 0 ? t_device : -1;
}

int fakegpu_device_count(void)
{
	fg_enter_quiet();
	return g_cfg.ndev;
}

uint64_t fakegpu_now_ns(void)
{
	return now_ns();
}

double fakegpu_env_double(const char *name, double def)
{
	return env_double(name, def);
}

void fakegpu_set_activity_callback(fakegpu_activity_fn fn, void *arg)
{
	fg_enter_quiet();
	pthread_mutex_lock(&g_lock);
	g_act_fn = fn;
	g_act_arg = fn ? arg : NULL;
	atomic_store_explicit(&g_act_on, fn != NULL, memory_order_relaxed);
	pthread_mutex_unlock(&g_lock);
}

/* ---- kernels and graphs ---- */

/* Kernels that modules registered (__cudaRegisterFunction), with the handle __cudaGetKernel gives out for
 * each: the host stub a launch names, whether by stub or by handle. A module's kernels go when it is
 * unregistered (__cudaUnregisterFatBinary: a library unloaded, or the process exiting). */
#define FG_KERNEL_MAGIC 0x4b524e4cU
struct fg_kernel {
	uint32_t magic;
	const void *stub;
	const char *name;
	void **module; /* the fat binary handle it was registered with */
	struct fg_kernel *next;
};
static struct fg_kernel *g_kernels;

static struct fg_kernel *kernel_find(const void *stub_or_handle)
{
	struct fg_kernel *k;

	for (k = g_kernels; k != NULL; k = k->next)
		if (k == stub_or_handle || k->stub == stub_or_handle)
			return k;
	return NULL;
}

/* The host stub a launch's function stands for: a registered kernel's handle is turned back into its stub. */
static const void *kernel_stub(const void *func)
{
	struct fg_kernel *k;

	pthread_mutex_lock(&g_lock);
	k = kernel_find(func);
	pthread_mutex_unlock(&g_lock);
	return k ? k->stub : func;
}

/* The registered device function name of a stub, else its symbol (dladdr), else NULL. */
static const char *kernel_name(const void *stub)
{
	struct fg_kernel *k;
	Dl_info info;

	pthread_mutex_lock(&g_lock);
	k = kernel_find(stub);
	pthread_mutex_unlock(&g_lock);
	if (k != NULL)
		return k->name;
	if (dladdr(stub, &info) && info.dli_saddr == stub)
		return info.dli_sname;
	return NULL;
}

/* A graph: the kernels launched on a stream while it was captured, in order. Instantiating copies it into an
 * executable graph; launching that runs its kernels one after the other on the stream, each a kernel of its
 * own for CUPTI, all under the graph launch's correlation id. */
#define FG_GRAPH_MAGIC 0x47524150U
#define FG_GRAPH_EXEC_MAGIC 0x47455845U
#define FG_GRAPH_NODES 64
struct fg_graph {
	uint32_t magic;
	size_t n;
	struct fg_graph_node {
		const void *stub;
		dim3 grid, block;
		size_t shared;
		uint64_t ns;
	} nodes[FG_GRAPH_NODES];
};

/* Lock held. */
static cudaError_t capture_add(struct fg_graph *g, const void *stub, dim3 grid, dim3 block, size_t shared, uint64_t ns)
{
	if (g->n == FG_GRAPH_NODES)
		return cudaErrorMemoryAllocation;
	g->nodes[g->n++] = (struct fg_graph_node){ stub, grid, block, shared, ns };
	return cudaSuccess;
}

static cudaError_t launch(const void *func, dim3 grid, dim3 block, size_t shared, cudaStream_t h, int per_thread)
{
	struct fg_stream *s;
	struct fg_pending pend;
	uint64_t blocks, threads;
	cudaError_t e;

	if (func == NULL)
		return cudaErrorInvalidDeviceFunction;
	func = kernel_stub(func);
	blocks = (uint64_t)grid.x * grid.y * grid.z;
	threads = (uint64_t)block.x * block.y * block.z;
	if (blocks == 0 || threads == 0 || threads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64 ||
	    grid.x > INT_MAX || grid.y > 65535 || grid.z > 65535)
		return cudaErrorInvalidConfiguration;
	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, per_thread, &s);
	if (e == cudaSuccess && s->capture != NULL) {
		e = capture_add(s->capture, func, grid, block, shared, (uint64_t)(g_cfg.ns_per_block * (double)blocks));
		pthread_mutex_unlock(&g_lock);
		return e;
	}
	if (e == cudaSuccess)
		enqueue_locked(s, (uint64_t)(g_cfg.ns_per_block * (double)blocks), FAKEGPU_ACT_KERNEL, &pend);
	pthread_mutex_unlock(&g_lock);
	if (e == cudaSuccess && pend.fn != NULL) {
		pend.act.name = kernel_name(func);
		pend.act.grid[0] = grid.x, pend.act.grid[1] = grid.y, pend.act.grid[2] = grid.z;
		pend.act.block[0] = block.x, pend.act.block[1] = block.y, pend.act.block[2] = block.z;
		pend.act.handle = func;
		pend.act.shared_bytes = shared;
		pending_emit(&pend);
	}
	return e;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
			     cudaStream_t stream)
{
	(void)args;
	fg_enter();
	return fin(launch(func, gridDim, blockDim, sharedMem, stream, 0));
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
				  cudaStream_t stream)
{
	(void)args;
	fg_enter();
	return fin(launch(func, gridDim, blockDim, sharedMem, stream, 1));
}

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
					size_t sharedMem, cudaStream_t stream)
{
	(void)args;
	fg_enter();
	return fin(launch(func, gridDim, blockDim, sharedMem, stream, 0));
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
					     size_t sharedMem, cudaStream_t stream)
{
	(void)args;
	fg_enter();
	return fin(launch(func, gridDim, blockDim, sharedMem, stream, 1));
}

static cudaError_t launch_ex(const cudaLaunchConfig_t *config, const void *func, int per_thread)
{
	if (config == NULL)
		return cudaErrorInvalidValue;
	return launch(func, config->gridDim, config->blockDim, config->dynamicSmemBytes, config->stream, per_thread);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	(void)args;
	fg_enter();
	return fin(launch_ex(config, func, 0));
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	(void)args;
	fg_enter();
	return fin(launch_ex(config, func, 1));
}

cudaError_t cudaFuncGetName(const char **name, const void *func)
{
	const char *found;

	fg_enter();
	if (name == NULL)
		return fin(cudaErrorInvalidValue);
	found = func ? kernel_name(kernel_stub(func)) : NULL;
	if (found == NULL)
		return fin(cudaErrorInvalidDeviceFunction);
	*name = found;
	return fin(cudaSuccess);
}

/* ---- what nvcc's generated code calls (crt/host_runtime.h, crt/device_functions.h) ---- */

/* Module registration, called by each translation unit's constructor. The fatbinary is not read: the
 * simulated device runs no code. */
static void *g_fatbin_handle;

void **__cudaRegisterFatBinary(void *fatCubin)
{
	void **handle;

	(void)fatCubin;
	fg_enter_quiet();
	handle = calloc(1, sizeof(*handle));
	return handle ? handle : &g_fatbin_handle;
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
	(void)fatCubinHandle;
	fg_enter_quiet();
}

/* The module's kernels are forgotten, and the activity callback is told each one's name (FAKEGPU_ACT_UNLOAD). */
void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
	struct fg_kernel *gone = NULL, **pp;
	fakegpu_activity_fn fn;
	void *arg;

	fg_enter_quiet();
	pthread_mutex_lock(&g_lock);
	for (pp = &g_kernels; *pp != NULL;) {
		struct fg_kernel *k = *pp;

		if (k->module == fatCubinHandle) {
			*pp = k->next;
			k->next = gone;
			gone = k;
		} else {
			pp = &k->next;
		}
	}
	fn = g_act_fn;
	arg = g_act_arg;
	pthread_mutex_unlock(&g_lock);
	while (gone != NULL) {
		struct fg_kernel *k = gone;
		struct fakegpu_activity a;

		gone = k->next;
		if (fn != NULL) {
			memset(&a, 0, sizeof(a));
			a.kind = FAKEGPU_ACT_UNLOAD;
			a.name = k->name;
			a.src_device = a.dst_device = -1;
			fn(&a, arg);
		}
		k->magic = 0;
		free(k);
	}
	if (fatCubinHandle != &g_fatbin_handle)
		free(fatCubinHandle);
}

char __cudaInitModule(void **fatCubinHandle)
{
	(void)fatCubinHandle;
	fg_enter_quiet();
	return 1;
}

void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
		       size_t size, int constant, int global)
{
	(void)fatCubinHandle, (void)hostVar, (void)deviceAddress, (void)deviceName, (void)ext, (void)size,
		(void)constant, (void)global;
	fg_enter_quiet();
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
			    int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
	struct fg_kernel *k;

	(void)fatCubinHandle, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
	fg_enter_quiet();
	k = calloc(1, sizeof *k);
	if (k == NULL || hostFun == NULL) {
		free(k);
		return;
	}
	k->magic = FG_KERNEL_MAGIC;
	k->module = fatCubinHandle;
	k->stub = hostFun;
	k->name = deviceFun ? deviceFun : deviceName;
	pthread_mutex_lock(&g_lock);
	k->next = g_kernels;
	g_kernels = k;
	pthread_mutex_unlock(&g_lock);
}

/* The handle of a registered stub, a pointer of the runtime's own as the real one's (CUkern_st). Without a
 * device the real runtime fails with the stub itself left as the handle, and so does this one. */
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *entryFuncAddr)
{
	struct fg_kernel *k;

	fg_enter();
	if (kernel == NULL || entryFuncAddr == NULL)
		return fin(cudaErrorInvalidValue);
	if (g_cfg.ndev == 0) {
		*kernel = (cudaKernel_t)(uintptr_t)entryFuncAddr;
		return fin(cudaErrorNoDevice);
	}
	pthread_mutex_lock(&g_lock);
	k = kernel_find(entryFuncAddr);
	pthread_mutex_unlock(&g_lock);
	if (k == NULL)
		return fin(cudaErrorInvalidDeviceFunction);
	*kernel = (cudaKernel_t)(void *)k;
	return fin(cudaSuccess);
}

cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
	return __cudaGetKernel(kernelPtr, entryFuncAddr);
}

/* `<<<grid, block, shared, stream>>>` pushes its configuration, the stub pops it before it launches. */
#define FG_CALL_CONFIGS 8
struct fg_call_config {
	dim3 grid, block;
	size_t shared;
	cudaStream_t stream;
};
static _Thread_local struct fg_call_config t_configs[FG_CALL_CONFIGS];
static _Thread_local unsigned t_nconfigs;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream)
{
	fg_enter_quiet();
	if (t_nconfigs == FG_CALL_CONFIGS)
		return 1;
	t_configs[t_nconfigs++] = (struct fg_call_config){gridDim, blockDim, sharedMem, stream};
	return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
	struct fg_call_config c;

	fg_enter();
	if (t_nconfigs == 0)
		return fin(cudaErrorMissingConfiguration);
	c = t_configs[--t_nconfigs];
	*gridDim = c.grid;
	*blockDim = c.block;
	*sharedMem = c.shared;
	*(cudaStream_t *)stream = c.stream;
	return fin(cudaSuccess);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
			       cudaStream_t stream)
{
	(void)args;
	fg_enter();
	return fin(launch((const void *)kernel, gridDim, blockDim, sharedMem, stream, 0));
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
				    cudaStream_t stream)
{
	(void)args;
	fg_enter();
	return fin(launch((const void *)kernel, gridDim, blockDim, sharedMem, stream, 1));
}

/* An executable graph made by cudaGraphInstantiate: its nodes run, all under one correlation id. */
static cudaError_t graph_exec_launch(struct fg_graph *x, cudaStream_t h, int per_thread)
{
	struct fg_pending pend[FG_GRAPH_NODES];
	struct fg_stream *s;
	cudaError_t e;

	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, per_thread, &s);
	for (size_t i = 0; e == cudaSuccess && i < x->n; i++) {
		enqueue_locked(s, x->nodes[i].ns, FAKEGPU_ACT_GRAPH, &pend[i]);
		if (i > 0) {
			pend[i].act.correlation_id = pend[0].act.correlation_id;
			g_next_corr--;
		}
	}
	pthread_mutex_unlock(&g_lock);
	for (size_t i = 0; e == cudaSuccess && i < x->n; i++) {
		const struct fg_graph_node *nd = &x->nodes[i];

		if (pend[i].fn == NULL)
			continue;
		pend[i].act.name = kernel_name(nd->stub);
		pend[i].act.grid[0] = nd->grid.x, pend[i].act.grid[1] = nd->grid.y, pend[i].act.grid[2] = nd->grid.z;
		pend[i].act.block[0] = nd->block.x, pend[i].act.block[1] = nd->block.y;
		pend[i].act.block[2] = nd->block.z;
		pend[i].act.shared_bytes = nd->shared;
		pend[i].act.handle = x;
		pend[i].act.graph_node = (uint32_t)i + 1;
		pending_emit(&pend[i]);
	}
	return e;
}

static cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t h, int per_thread)
{
	struct fg_stream *s;
	struct fg_pending pend;
	cudaError_t e;

	if (exec == NULL)
		return cudaErrorInvalidValue;
	if (((struct fg_graph *)exec)->magic == FG_GRAPH_EXEC_MAGIC)
		return graph_exec_launch((struct fg_graph *)exec, h, per_thread);
	/* any other handle: a graph of one node that takes FAKEGPU_GRAPH_NS */
	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, per_thread, &s);
	if (e == cudaSuccess)
		enqueue_locked(s, g_cfg.graph_ns, FAKEGPU_ACT_GRAPH, &pend);
	pthread_mutex_unlock(&g_lock);
	if (e == cudaSuccess) {
		pend.act.handle = exec;
		pending_emit(&pend);
	}
	return e;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	fg_enter();
	return fin(graph_launch(graphExec, stream, 0));
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	fg_enter();
	return fin(graph_launch(graphExec, stream, 1));
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	struct fg_stream *s;
	cudaError_t e;

	(void)mode;
	fg_enter();
	if (stream == NULL || stream == cudaStreamLegacy)
		return fin(cudaErrorStreamCaptureUnsupported);
	pthread_mutex_lock(&g_lock);
	e = stream_resolve(stream, 0, &s);
	if (e == cudaSuccess && s->capture != NULL)
		e = cudaErrorIllegalState;
	if (e == cudaSuccess && (s->capture = calloc(1, sizeof(*s->capture))) == NULL)
		e = cudaErrorMemoryAllocation;
	if (e == cudaSuccess)
		s->capture->magic = FG_GRAPH_MAGIC;
	pthread_mutex_unlock(&g_lock);
	return fin(e);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
	struct fg_stream *s;
	cudaError_t e;

	fg_enter();
	if (graph == NULL)
		return fin(cudaErrorInvalidValue);
	pthread_mutex_lock(&g_lock);
	e = stream_resolve(stream, 0, &s);
	if (e == cudaSuccess && s->capture == NULL)
		e = cudaErrorIllegalState;
	if (e == cudaSuccess) {
		*graph = (cudaGraph_t)s->capture;
		s->capture = NULL;
	}
	pthread_mutex_unlock(&g_lock);
	return fin(e);
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
	struct fg_stream *s;
	cudaError_t e;

	fg_enter();
	if (status == NULL)
		return fin(cudaErrorInvalidValue);
	pthread_mutex_lock(&g_lock);
	e = stream_resolve(stream, 0, &s);
	if (e == cudaSuccess)
		*status = s->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
	pthread_mutex_unlock(&g_lock);
	return fin(e);
}

static cudaError_t graph_instantiate(cudaGraphExec_t *exec, cudaGraph_t graph)
{
	const struct fg_graph *g = (const struct fg_graph *)graph;
	struct fg_graph *x;

	if (exec == NULL || g == NULL || g->magic != FG_GRAPH_MAGIC)
		return cudaErrorInvalidValue;
	if ((x = malloc(sizeof(*x))) == NULL)
		return cudaErrorMemoryAllocation;
	*x = *g;
	x->magic = FG_GRAPH_EXEC_MAGIC;
	*exec = (cudaGraphExec_t)x;
	return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
	(void)flags;
	fg_enter();
	return fin(graph_instantiate(pGraphExec, graph));
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
	(void)flags;
	fg_enter();
	return fin(graph_instantiate(pGraphExec, graph));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	struct fg_graph *g = (struct fg_graph *)graph;

	fg_enter();
	if (g == NULL || g->magic != FG_GRAPH_MAGIC)
		return fin(cudaErrorInvalidValue);
	g->magic = 0;
	free(g);
	return fin(cudaSuccess);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	struct fg_graph *x = (struct fg_graph *)graphExec;

	fg_enter();
	if (x == NULL || x->magic != FG_GRAPH_EXEC_MAGIC)
		return fin(cudaErrorInvalidValue);
	x->magic = 0;
	free(x);
	return fin(cudaSuccess);
}

/* ---- memory ---- */

/* Device memory (cudaMalloc, Pitch, Async, Managed) on the current device. */
static cudaError_t dev_alloc(void **out, size_t size, enum fg_mem type)
{
	struct fg_device *d;
	void *p;

	pthread_mutex_lock(&g_lock);
	if (g_cfg.ndev == 0) {
		pthread_mutex_unlock(&g_lock);
		return cudaErrorNoDevice;
	}
	d = &g_dev[t_device];
	if (size > g_cfg.mem_bytes - d->used || size > SIZE_MAX - 255) {
		pthread_mutex_unlock(&g_lock);
		*out = NULL;
		return cudaErrorMemoryAllocation;
	}
	p = aligned_alloc(256, (size + 255) & ~(size_t)255);
	if (p == NULL || alloc_insert((uintptr_t)p, size, type, t_device) != 0) {
		pthread_mutex_unlock(&g_lock);
		free(p);
		*out = NULL;
		return cudaErrorMemoryAllocation;
	}
	d->used += size;
	pthread_mutex_unlock(&g_lock);
	*out = p;
	return cudaSuccess;
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	fg_enter();
	if (devPtr == NULL)
		return fin(cudaErrorInvalidValue);
	if (size == 0) {
		*devPtr = NULL;
		return fin(cudaSuccess);
	}
	return fin(dev_alloc(devPtr, size, FG_MEM_DEVICE));
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
	size_t p;

	fg_enter();
	if (devPtr == NULL || pitch == NULL)
		return fin(cudaErrorInvalidValue);
	p = (width + 511) & ~(size_t)511;
	if (width == 0 || height == 0) {
		*devPtr = NULL;
		*pitch = p;
		return fin(cudaSuccess);
	}
	if (p < width || height > SIZE_MAX / p)
		return fin(cudaErrorMemoryAllocation);
	*pitch = p;
	return fin(dev_alloc(devPtr, p * height, FG_MEM_DEVICE));
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	fg_enter();
	if (devPtr == NULL || size == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
		return fin(cudaErrorInvalidValue);
	return fin(dev_alloc(devPtr, size, FG_MEM_MANAGED));
}

static cudaError_t malloc_async(void **devPtr, size_t size, cudaStream_t h, int per_thread)
{
	struct fg_stream *s;
	cudaError_t e;

	if (devPtr == NULL)
		return cudaErrorInvalidValue;
	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, per_thread, &s);
	pthread_mutex_unlock(&g_lock);
	if (e != cudaSuccess)
		return e;
	if (size == 0) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	return dev_alloc(devPtr, size, FG_MEM_DEVICE_ASYNC);
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	fg_enter();
	return fin(malloc_async(devPtr, size, hStream, 0));
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
	fg_enter();
	return fin(malloc_async(devPtr, size, hStream, 1));
}

/* Takes the allocation at base p of one of the given types out of the table; its memory is the caller's to
 * free. */
static cudaError_t take_alloc(void *p, int want_device, int want_async_only, int want_host)
{
	struct fg_alloc *a = alloc_find(p);

	if (a == NULL || a->base != (uintptr_t)p)
		return cudaErrorInvalidValue;
	if (want_device && !mem_is_device(a->type))
		return cudaErrorInvalidValue;
	if (want_async_only && a->type != FG_MEM_DEVICE_ASYNC)
		return cudaErrorInvalidValue;
	if (want_host && a->type != FG_MEM_PINNED)
		return cudaErrorInvalidValue;
	if (mem_is_device(a->type))
		g_dev[a->device].used -= a->size;
	alloc_remove(a);
	return cudaSuccess;
}

/* cudaFree synchronises the device, as CUDA's does. */
cudaError_t cudaFree(void *devPtr)
{
	cudaError_t e;

	fg_enter();
	if (devPtr == NULL)
		return fin(cudaSuccess);
	pthread_mutex_lock(&g_lock);
	e = take_alloc(devPtr, 1, 0, 0);
	pthread_mutex_unlock(&g_lock);
	if (e != cudaSuccess)
		return fin(e);
	device_synchronize();
	free(devPtr);
	return fin(cudaSuccess);
}

static cudaError_t free_async(void *p, cudaStream_t h, int per_thread)
{
	struct fg_stream *s;
	cudaError_t e;

	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, per_thread, &s);
	if (e == cudaSuccess && p != NULL)
		e = take_alloc(p, 1, 1, 0);
	pthread_mutex_unlock(&g_lock);
	if (e == cudaSuccess)
		free(p);
	return e;
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	fg_enter();
	return fin(free_async(devPtr, hStream, 0));
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	fg_enter();
	return fin(free_async(devPtr, hStream, 1));
}

static cudaError_t host_alloc(void **out, size_t size, unsigned int flags)
{
	void *p;

	if (out == NULL || (flags & ~(unsigned int)(cudaHostAllocPortable | cudaHostAllocMapped |
						     cudaHostAllocWriteCombined)))
		return cudaErrorInvalidValue;
	if (size == 0) {
		*out = NULL;
		return cudaSuccess;
	}
	if (size > SIZE_MAX - 4095)
		return cudaErrorMemoryAllocation;
	p = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	if (p == NULL)
		return cudaErrorMemoryAllocation;
	pthread_mutex_lock(&g_lock);
	if (alloc_insert((uintptr_t)p, size, FG_MEM_PINNED, g_cfg.ndev > 0 ? t_device : 0) != 0) {
		pthread_mutex_unlock(&g_lock);
		free(p);
		return cudaErrorMemoryAllocation;
	}
	pthread_mutex_unlock(&g_lock);
	*out = p;
	return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	fg_enter();
	return fin(host_alloc(ptr, size, 0));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	fg_enter();
	return fin(host_alloc(pHost, size, flags));
}

cudaError_t cudaFreeHost(void *ptr)
{
	cudaError_t e;

	fg_enter();
	if (ptr == NULL)
		return fin(cudaSuccess);
	pthread_mutex_lock(&g_lock);
	e = take_alloc(ptr, 0, 0, 1);
	pthread_mutex_unlock(&g_lock);
	if (e != cudaSuccess)
		return fin(e);
	free(ptr);
	return fin(cudaSuccess);
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	cudaError_t e = cudaSuccess;

	fg_enter();
	if (ptr == NULL || size == 0 || (uintptr_t)ptr > UINTPTR_MAX - size ||
	    (flags & ~(unsigned int)(cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
				     cudaHostRegisterReadOnly)))
		return fin(cudaErrorInvalidValue);
	pthread_mutex_lock(&g_lock);
	if (alloc_overlaps((uintptr_t)ptr, size))
		e = cudaErrorHostMemoryAlreadyRegistered;
	else if (alloc_insert((uintptr_t)ptr, size, FG_MEM_REGISTERED, g_cfg.ndev > 0 ? t_device : 0) != 0)
		e = cudaErrorMemoryAllocation;
	pthread_mutex_unlock(&g_lock);
	return fin(e);
}

cudaError_t cudaHostUnregister(void *ptr)
{
	struct fg_alloc *a;
	cudaError_t e = cudaSuccess;

	fg_enter();
	if (ptr == NULL)
		return fin(cudaErrorInvalidValue);
	pthread_mutex_lock(&g_lock);
	a = alloc_find(ptr);
	if (a == NULL || a->base != (uintptr_t)ptr || a->type != FG_MEM_REGISTERED)
		e = cudaErrorHostMemoryNotRegistered;
	else
		alloc_remove(a);
	pthread_mutex_unlock(&g_lock);
	return fin(e);
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
	struct fg_alloc *a;
	enum fg_mem t;

	fg_enter();
	if (pDevice == NULL || flags != 0)
		return fin(cudaErrorInvalidValue);
	pthread_mutex_lock(&g_lock);
	a = alloc_find(pHost);
	t = a ? a->type : FG_MEM_NONE;
	pthread_mutex_unlock(&g_lock);
	if (t != FG_MEM_PINNED && t != FG_MEM_REGISTERED)
		return fin(cudaErrorInvalidValue);
	*pDevice = pHost;
	return fin(cudaSuccess);
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
	struct fg_alloc *a;
	struct fg_alloc copy = { 0 };

	fg_enter();
	if (attributes == NULL)
		return fin(cudaErrorInvalidValue);
	pthread_mutex_lock(&g_lock);
	a = alloc_find(ptr);
	if (a != NULL)
		copy = *a;
	pthread_mutex_unlock(&g_lock);
	memset(attributes, 0, sizeof(*attributes));
	switch (copy.type) {
	case FG_MEM_DEVICE:
	case FG_MEM_DEVICE_ASYNC:
		attributes->type = cudaMemoryTypeDevice;
		attributes->device = copy.device;
		attributes->devicePointer = (void *)ptr;
		break;
	case FG_MEM_MANAGED:
		attributes->type = cudaMemoryTypeManaged;
		attributes->device = copy.device;
		attributes->devicePointer = (void *)ptr;
		attributes->hostPointer = (void *)ptr;
		break;
	case FG_MEM_PINNED:
	case FG_MEM_REGISTERED:
		attributes->type = cudaMemoryTypeHost;
		attributes->device = copy.device;
		attributes->devicePointer = (void *)ptr;
		attributes->hostPointer = (void *)ptr;
		break;
	default:
		attributes->type = cudaMemoryTypeUnregistered;
		attributes->device = -2;
		attributes->hostPointer = (void *)ptr;
		break;
	}
	return fin(cudaSuccess);
}

cudaError_t cudaMemGetInfo(size_t *freeBytes, size_t *totalBytes)
{
	fg_enter();
	if (g_cfg.ndev == 0)
		return fin(cudaErrorNoDevice);
	pthread_mutex_lock(&g_lock);
	if (freeBytes != NULL)
		*freeBytes = g_cfg.mem_bytes - g_dev[t_device].used;
	if (totalBytes != NULL)
		*totalBytes = g_cfg.mem_bytes;
	pthread_mutex_unlock(&g_lock);
	return fin(cudaSuccess);
}

/* ---- copies and memsets ---- */

/* What a copy touches on one side. */
enum fg_side { FG_SIDE_HOST, FG_SIDE_DEVICE, FG_SIDE_SYMBOL };

/* [p, p + extent) checked against the tables (lock held): inside a known allocation it must stay inside it;
 * a device side must be memory the device can reach (device, managed, pinned or registered). *pageable is
 * set when p is plain host memory. */
static cudaError_t check_side(const void *p, size_t extent, enum fg_side side, int *pageable)
{
	struct fg_alloc *a;

	if (side == FG_SIDE_SYMBOL)
		return cudaSuccess;
	a = alloc_find(p);
	if (a == NULL) {
		*pageable = 1;
		return side == FG_SIDE_DEVICE ? cudaErrorInvalidValue : cudaSuccess;
	}
	if (extent > a->size - ((uintptr_t)p - a->base))
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

static int is_device_ptr(const void *p)
{
	struct fg_alloc *a = alloc_find(p);

	return a != NULL && mem_is_device(a->type);
}

/* What memory p is, for activity records (lock held). */
static enum fakegpu_mem_kind mem_kind(const void *p, enum fg_side side)
{
	struct fg_alloc *a;

	if (side == FG_SIDE_SYMBOL)
		return FAKEGPU_MEM_DEVICE_STATIC;
	a = alloc_find(p);
	if (a == NULL)
		return FAKEGPU_MEM_PAGEABLE;
	switch (a->type) {
	case FG_MEM_DEVICE:
	case FG_MEM_DEVICE_ASYNC:
		return FAKEGPU_MEM_DEVICE;
	case FG_MEM_MANAGED:
		return FAKEGPU_MEM_MANAGED;
	case FG_MEM_PINNED:
	case FG_MEM_REGISTERED:
		return FAKEGPU_MEM_PINNED;
	default:
		return FAKEGPU_MEM_UNKNOWN;
	}
}

struct fg_copy {
	void *dst;
	const void *src;
	size_t dpitch, spitch, width, height; /* rows of width bytes */
	size_t depth, dslice, sslice;         /* slices of height rows (3D); depth 1 otherwise */
	enum cudaMemcpyKind kind;
	enum fg_side dst_side, src_side; /* FG_SIDE_SYMBOL for the symbol of ToSymbol/FromSymbol */
	int peer;                        /* cudaMemcpyPeer*: between src_device and dst_device */
	int src_device, dst_device;
};

/* Copies for real, and takes the time of the bytes on the stream; a synchronous copy (sync) returns when
 * the stream has done it. */
static cudaError_t copy_run(struct fg_copy *c, cudaStream_t h, int per_thread, int sync)
{
	struct fg_stream *s;
	struct fg_pending pend;
	size_t dext, sext, bytes;
	int pageable = 0;
	uint64_t end;
	cudaError_t e;

	if ((unsigned int)c->kind > cudaMemcpyDefault)
		return cudaErrorInvalidMemcpyDirection;
	if (c->height > 1 && (c->width > c->dpitch || c->width > c->spitch))
		return cudaErrorInvalidPitchValue;
	bytes = c->width * c->height * c->depth;
	if (bytes != 0 && (c->dst == NULL || c->src == NULL))
		return cudaErrorInvalidValue;
	dext = bytes ? (c->depth - 1) * c->dslice + (c->height - 1) * c->dpitch + c->width : 0;
	sext = bytes ? (c->depth - 1) * c->sslice + (c->height - 1) * c->spitch + c->width : 0;

	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, per_thread, &s);
	if (e != cudaSuccess)
		goto out;
	if (c->kind == cudaMemcpyDefault) {
		int dd = c->dst_side == FG_SIDE_SYMBOL || is_device_ptr(c->dst);
		int sd = c->src_side == FG_SIDE_SYMBOL || is_device_ptr(c->src);

		c->kind = dd && sd ? cudaMemcpyDeviceToDevice
			  : dd     ? cudaMemcpyHostToDevice
			  : sd     ? cudaMemcpyDeviceToHost
				   : cudaMemcpyHostToHost;
	} else {
		if (c->dst_side != FG_SIDE_SYMBOL)
			c->dst_side = c->kind == cudaMemcpyHostToDevice || c->kind == cudaMemcpyDeviceToDevice
					      ? FG_SIDE_DEVICE
					      : FG_SIDE_HOST;
		if (c->src_side != FG_SIDE_SYMBOL)
			c->src_side = c->kind == cudaMemcpyDeviceToHost || c->kind == cudaMemcpyDeviceToDevice
					      ? FG_SIDE_DEVICE
					      : FG_SIDE_HOST;
	}
	if (bytes == 0)
		goto out;
	e = check_side(c->dst, dext, c->dst_side, &pageable);
	if (e == cudaSuccess)
		e = check_side(c->src, sext, c->src_side, &pageable);
	if (e != cudaSuccess)
		goto out;
	end = enqueue_locked(s, duration_ns((double)bytes, pageable ? g_cfg.pageable_bps : g_cfg.copy_bps),
			     FAKEGPU_ACT_MEMCPY, &pend);
	pend.act.src_mem = mem_kind(c->src, c->src_side);
	pend.act.dst_mem = mem_kind(c->dst, c->dst_side);
	if (c->peer) {
		pend.act.src_device = c->src_device;
		pend.act.dst_device = c->dst_device;
	}
out:
	pthread_mutex_unlock(&g_lock);
	if (e != cudaSuccess || bytes == 0)
		return e;
	for (size_t z = 0; z < c->depth; z++) {
		for (size_t y = 0; y < c->height; y++)
			memmove((char *)c->dst + z * c->dslice + y * c->dpitch,
				(const char *)c->src + z * c->sslice + y * c->spitch, c->width);
	}
	pend.act.bytes = bytes;
	pend.act.copy_kind = c->kind;
	if (sync)
		pend.act.api_end_ns = end;
	pending_emit(&pend);
	if (sync)
		wait_until(end);
	return cudaSuccess;
}

static cudaError_t copy_1d(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t h,
			   int per_thread, int sync)
{
	struct fg_copy c = { .dst = dst, .src = src, .dpitch = count, .spitch = count, .width = count, .height = 1,
			     .depth = 1, .kind = kind };

	return copy_run(&c, h, per_thread, sync);
}

static cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
			   enum cudaMemcpyKind kind, cudaStream_t h, int per_thread, int sync)
{
	struct fg_copy c = { .dst = dst, .src = src, .dpitch = dpitch, .spitch = spitch, .width = width,
			     .height = height, .depth = 1, .kind = kind };

	return copy_run(&c, h, per_thread, sync);
}

/* Linear memory only: CUDA arrays are not simulated. */
static cudaError_t copy_3d(const struct cudaMemcpy3DParms *p, cudaStream_t h, int per_thread, int sync)
{
	struct fg_copy c;

	if (p == NULL || p->srcArray != NULL || p->dstArray != NULL)
		return cudaErrorInvalidValue;
	if (p->extent.width > p->dstPtr.pitch || p->extent.width > p->srcPtr.pitch)
		return cudaErrorInvalidPitchValue;
	c = (struct fg_copy){
		.dst = (char *)p->dstPtr.ptr + (p->dstPos.z * p->dstPtr.ysize + p->dstPos.y) * p->dstPtr.pitch +
		       p->dstPos.x,
		.src = (const char *)p->srcPtr.ptr + (p->srcPos.z * p->srcPtr.ysize + p->srcPos.y) * p->srcPtr.pitch +
		       p->srcPos.x,
		.dpitch = p->dstPtr.pitch, .spitch = p->srcPtr.pitch, .width = p->extent.width,
		.height = p->extent.height, .depth = p->extent.depth,
		.dslice = p->dstPtr.pitch * p->dstPtr.ysize, .sslice = p->srcPtr.pitch * p->srcPtr.ysize,
		.kind = p->kind,
	};
	return copy_run(&c, h, per_thread, sync);
}

/* symbol is the address of a host variable standing for the device symbol. */
static cudaError_t copy_symbol(void *dst, const void *src, const void *symbol, int to_symbol, size_t count,
			       size_t offset, enum cudaMemcpyKind kind, cudaStream_t h, int per_thread, int sync)
{
	struct fg_copy c = { .dpitch = count, .spitch = count, .width = count, .height = 1, .depth = 1,
			     .kind = kind };

	if (symbol == NULL)
		return cudaErrorInvalidSymbol;
	if ((unsigned int)kind > cudaMemcpyDefault)
		return cudaErrorInvalidMemcpyDirection;
	if (to_symbol) {
		if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost)
			return cudaErrorInvalidMemcpyDirection;
		c.dst = (char *)symbol + offset;
		c.src = src;
		c.dst_side = FG_SIDE_SYMBOL;
	} else {
		if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost)
			return cudaErrorInvalidMemcpyDirection;
		c.dst = dst;
		c.src = (const char *)symbol + offset;
		c.src_side = FG_SIDE_SYMBOL;
	}
	return copy_run(&c, h, per_thread, sync);
}

static cudaError_t copy_peer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
			     cudaStream_t h, int sync)
{
	struct fg_copy c = { .dst = dst, .src = src, .dpitch = count, .spitch = count, .width = count, .height = 1,
			     .depth = 1, .kind = cudaMemcpyDeviceToDevice, .peer = srcDevice != dstDevice,
			     .src_device = srcDevice, .dst_device = dstDevice };

	if (dstDevice < 0 || dstDevice >= g_cfg.ndev || srcDevice < 0 || srcDevice >= g_cfg.ndev)
		return g_cfg.ndev == 0 ? cudaErrorNoDevice : cudaErrorInvalidDevice;
	return copy_run(&c, h, 0, sync);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	fg_enter();
	return fin(copy_1d(dst, src, count, kind, NULL, 0, 1));
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	fg_enter();
	return fin(copy_1d(dst, src, count, kind, NULL, 1, 1));
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
			    cudaStream_t stream)
{
	fg_enter();
	return fin(copy_1d(dst, src, count, kind, stream, 0, 0));
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
				 cudaStream_t stream)
{
	fg_enter();
	return fin(copy_1d(dst, src, count, kind, stream, 1, 0));
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
			 enum cudaMemcpyKind kind)
{
	fg_enter();
	return fin(copy_2d(dst, dpitch, src, spitch, width, height, kind, NULL, 0, 1));
}

cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
			      size_t height, enum cudaMemcpyKind kind)
{
	fg_enter();
	return fin(copy_2d(dst, dpitch, src, spitch, width, height, kind, NULL, 1, 1));
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
			      size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	fg_enter();
	return fin(copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, 0, 0));
}

cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
				   size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	fg_enter();
	return fin(copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, 1, 0));
}

cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
	fg_enter();
	return fin(copy_3d(p, NULL, 0, 1));
}

cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
	fg_enter();
	return fin(copy_3d(p, NULL, 1, 1));
}

cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
	fg_enter();
	return fin(copy_3d(p, stream, 0, 0));
}

cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
	fg_enter();
	return fin(copy_3d(p, stream, 1, 0));
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
			       enum cudaMemcpyKind kind)
{
	fg_enter();
	return fin(copy_symbol(NULL, src, symbol, 1, count, offset, kind, NULL, 0, 1));
}

cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count, size_t offset,
				    enum cudaMemcpyKind kind)
{
	fg_enter();
	return fin(copy_symbol(NULL, src, symbol, 1, count, offset, kind, NULL, 1, 1));
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
				 enum cudaMemcpyKind kind)
{
	fg_enter();
	return fin(copy_symbol(dst, NULL, symbol, 0, count, offset, kind, NULL, 0, 1));
}

cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
				      enum cudaMemcpyKind kind)
{
	fg_enter();
	return fin(copy_symbol(dst, NULL, symbol, 0, count, offset, kind, NULL, 1, 1));
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
				    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	fg_enter();
	return fin(copy_symbol(NULL, src, symbol, 1, count, offset, kind, stream, 0, 0));
}

cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count, size_t offset,
					 enum cudaMemcpyKind kind, cudaStream_t stream)
{
	fg_enter();
	return fin(copy_symbol(NULL, src, symbol, 1, count, offset, kind, stream, 1, 0));
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
				      enum cudaMemcpyKind kind, cudaStream_t stream)
{
	fg_enter();
	return fin(copy_symbol(dst, NULL, symbol, 0, count, offset, kind, stream, 0, 0));
}

cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count, size_t offset,
					   enum cudaMemcpyKind kind, cudaStream_t stream)
{
	fg_enter();
	return fin(copy_symbol(dst, NULL, symbol, 0, count, offset, kind, stream, 1, 0));
}

cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
	fg_enter();
	return fin(copy_peer(dst, dstDevice, src, srcDevice, count, NULL, 1));
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
				cudaStream_t stream)
{
	fg_enter();
	return fin(copy_peer(dst, dstDevice, src, srcDevice, count, stream, 0));
}

/* Sets rows of width bytes; asynchronous with respect to the host for device memory, as CUDA's. */
static cudaError_t memset_run(void *p, size_t pitch, int value, size_t width, size_t height, cudaStream_t h,
			      int per_thread)
{
	struct fg_stream *s;
	struct fg_pending pend;
	size_t bytes = width * height;
	int pageable = 0;
	cudaError_t e;

	if (height > 1 && width > pitch)
		return cudaErrorInvalidValue;
	if (bytes != 0 && p == NULL)
		return cudaErrorInvalidValue;
	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, per_thread, &s);
	if (e == cudaSuccess && bytes != 0)
		e = check_side(p, (height - 1) * pitch + width, FG_SIDE_DEVICE, &pageable);
	if (e == cudaSuccess && bytes != 0) {
		enqueue_locked(s, duration_ns((double)bytes, g_cfg.copy_bps), FAKEGPU_ACT_MEMSET, &pend);
		pend.act.dst_mem = mem_kind(p, FG_SIDE_DEVICE);
	}
	pthread_mutex_unlock(&g_lock);
	if (e != cudaSuccess || bytes == 0)
		return e;
	for (size_t y = 0; y < height; y++)
		memset((char *)p + y * pitch, value, width);
	pend.act.bytes = bytes;
	pend.act.value = value;
	pending_emit(&pend);
	return cudaSuccess;
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	fg_enter();
	return fin(memset_run(devPtr, count, value, count, 1, NULL, 0));
}

cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	fg_enter();
	return fin(memset_run(devPtr, count, value, count, 1, NULL, 1));
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	fg_enter();
	return fin(memset_run(devPtr, count, value, count, 1, stream, 0));
}

cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	fg_enter();
	return fin(memset_run(devPtr, count, value, count, 1, stream, 1));
}

cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
	fg_enter();
	return fin(memset_run(devPtr, pitch, value, width, height, NULL, 0));
}

cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
	fg_enter();
	return fin(memset_run(devPtr, pitch, value, width, height, NULL, 1));
}

cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
			      cudaStream_t stream)
{
	fg_enter();
	return fin(memset_run(devPtr, pitch, value, width, height, stream, 0));
}

cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width, size_t height,
				   cudaStream_t stream)
{
	fg_enter();
	return fin(memset_run(devPtr, pitch, value, width, height, stream, 1));
}

/* ---- synchronisation ---- */

cudaError_t cudaDeviceSynchronize(void)
{
	fg_enter();
	return fin(device_synchronize());
}

/* When the work already on the stream is done, into *until. */
static cudaError_t stream_until(cudaStream_t h, int per_thread, uint64_t *until)
{
	struct fg_stream *s;
	cudaError_t e;

	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, per_thread, &s);
	if (e == cudaSuccess)
		*until = s->busy_until;
	pthread_mutex_unlock(&g_lock);
	return e;
}

static cudaError_t stream_synchronize(cudaStream_t h, int per_thread)
{
	uint64_t t;
	cudaError_t e = stream_until(h, per_thread, &t);

	if (e == cudaSuccess)
		wait_until(t);
	return e;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	fg_enter();
	return fin(stream_synchronize(stream, 0));
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	fg_enter();
	return fin(stream_synchronize(stream, 1));
}

static cudaError_t stream_query(cudaStream_t h, int per_thread)
{
	uint64_t t;
	cudaError_t e = stream_until(h, per_thread, &t);

	if (e == cudaSuccess && t > now_ns())
		return cudaErrorNotReady;
	return e;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	fg_enter();
	return fin(stream_query(stream, 0));
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
	fg_enter();
	return fin(stream_query(stream, 1));
}

/* ---- events ---- */

static struct fg_event *event_find(cudaEvent_t h)
{
	for (struct fg_event *ev = g_events; ev; ev = ev->next)
		if ((cudaEvent_t)ev == h && ev->magic == FG_EVENT_MAGIC)
			return ev;
	return NULL;
}

static cudaError_t event_create(cudaEvent_t *out, unsigned int flags)
{
	struct fg_event *ev;

	if (out == NULL ||
	    (flags & ~(unsigned int)(cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess)) ||
	    ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
		return cudaErrorInvalidValue;
	if (g_cfg.ndev == 0)
		return cudaErrorNoDevice;
	ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		return cudaErrorMemoryAllocation;
	ev->magic = FG_EVENT_MAGIC;
	ev->device = t_device;
	ev->flags = flags;
	pthread_mutex_lock(&g_lock);
	ev->next = g_events;
	g_events = ev;
	pthread_mutex_unlock(&g_lock);
	*out = (cudaEvent_t)ev;
	return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	fg_enter();
	return fin(event_create(event, 0));
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	fg_enter();
	return fin(event_create(event, flags));
}

static void event_unlink(struct fg_event *ev)
{
	for (struct fg_event **pp = &g_events; *pp; pp = &(*pp)->next) {
		if (*pp == ev) {
			*pp = ev->next;
			break;
		}
	}
	ev->magic = 0;
	free(ev);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	struct fg_event *ev;

	fg_enter();
	pthread_mutex_lock(&g_lock);
	ev = event_find(event);
	if (ev != NULL)
		event_unlink(ev);
	pthread_mutex_unlock(&g_lock);
	return fin(ev ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

/* The event completes when the work enqueued on the stream before it does (a legacy-stream record also
 * waits for the blocking streams, as any legacy-stream work). */
static cudaError_t event_record(cudaEvent_t event, cudaStream_t h, unsigned int flags, int per_thread)
{
	struct fg_event *ev;
	struct fg_stream *s;
	cudaError_t e;

	if (flags & ~(unsigned int)cudaEventRecordExternal)
		return cudaErrorInvalidValue;
	pthread_mutex_lock(&g_lock);
	ev = event_find(event);
	e = ev ? stream_resolve(h, per_thread, &s) : cudaErrorInvalidResourceHandle;
	if (e == cudaSuccess) {
		ev->when = enqueue_locked(s, 0, FAKEGPU_ACT_LIBRARY, NULL);
		ev->recorded = 1;
	}
	pthread_mutex_unlock(&g_lock);
	return e;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	fg_enter();
	return fin(event_record(event, stream, 0, 0));
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	fg_enter();
	return fin(event_record(event, stream, 0, 1));
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
	fg_enter();
	return fin(event_record(event, stream, flags, 0));
}

cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
	fg_enter();
	return fin(event_record(event, stream, flags, 1));
}

/* When the event completes (0: never recorded, complete), into *until. */
static cudaError_t event_until(cudaEvent_t event, uint64_t *until)
{
	struct fg_event *ev;

	pthread_mutex_lock(&g_lock);
	ev = event_find(event);
	if (ev != NULL)
		*until = ev->recorded ? ev->when : 0;
	pthread_mutex_unlock(&g_lock);
	return ev ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	uint64_t t;
	cudaError_t e;

	fg_enter();
	e = event_until(event, &t);
	if (e == cudaSuccess)
		wait_until(t);
	return fin(e);
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
	uint64_t t;
	cudaError_t e;

	fg_enter();
	e = event_until(event, &t);
	if (e == cudaSuccess && t > now_ns())
		e = cudaErrorNotReady;
	return fin(e);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	struct fg_event *a, *b;
	cudaError_t e = cudaSuccess;

	fg_enter();
	if (ms == NULL)
		return fin(cudaErrorInvalidValue);
	pthread_mutex_lock(&g_lock);
	a = event_find(start);
	b = event_find(end);
	if (a == NULL || b == NULL || !a->recorded || !b->recorded ||
	    ((a->flags | b->flags) & cudaEventDisableTiming))
		e = cudaErrorInvalidResourceHandle;
	else if (max_u64(a->when, b->when) > now_ns())
		e = cudaErrorNotReady;
	else
		*ms = (float)((double)((int64_t)(b->when - a->when)) / 1e6);
	pthread_mutex_unlock(&g_lock);
	return fin(e);
}

/* The stream waits (on the device) for the work before the event's last record. */
static cudaError_t stream_wait_event(cudaStream_t h, cudaEvent_t event, unsigned int flags, int per_thread)
{
	struct fg_event *ev;
	struct fg_stream *s;
	cudaError_t e;

	if (flags & ~(unsigned int)cudaEventWaitExternal)
		return cudaErrorInvalidValue;
	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, per_thread, &s);
	ev = event_find(event);
	if (e == cudaSuccess && ev == NULL)
		e = cudaErrorInvalidResourceHandle;
	if (e == cudaSuccess && ev->recorded)
		s->busy_until = max_u64(s->busy_until, ev->when);
	pthread_mutex_unlock(&g_lock);
	return e;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	fg_enter();
	return fin(stream_wait_event(stream, event, flags, 0));
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	fg_enter();
	return fin(stream_wait_event(stream, event, flags, 1));
}

/* ---- streams ---- */

static cudaError_t stream_create(cudaStream_t *out, unsigned int flags, int priority)
{
	struct fg_stream *s;

	if (out == NULL || (flags & ~(unsigned int)cudaStreamNonBlocking))
		return cudaErrorInvalidValue;
	if (g_cfg.ndev == 0)
		return cudaErrorNoDevice;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return cudaErrorMemoryAllocation;
	if (priority < FG_PRIORITY_GREATEST)
		priority = FG_PRIORITY_GREATEST;
	if (priority > FG_PRIORITY_LEAST)
		priority = FG_PRIORITY_LEAST;
	pthread_mutex_lock(&g_lock);
	*s = (struct fg_stream){ .magic = FG_STREAM_MAGIC, .kind = FG_USER, .device = t_device, .flags = flags,
				 .priority = priority, .id = g_next_stream_id++, .next = g_dev[t_device].streams };
	g_dev[t_device].streams = s;
	pthread_mutex_unlock(&g_lock);
	*out = (cudaStream_t)s;
	return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	fg_enter();
	return fin(stream_create(pStream, 0, 0));
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	fg_enter();
	return fin(stream_create(pStream, flags, 0));
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
	fg_enter();
	return fin(stream_create(pStream, flags, priority));
}

/* Returns at once; work still on the stream completes (and counts for device synchronisation). */
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	struct fg_stream *s = NULL;
	cudaError_t e;

	fg_enter();
	pthread_mutex_lock(&g_lock);
	if (stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
		e = cudaErrorInvalidResourceHandle;
	else
		e = stream_resolve(stream, 0, &s);
	if (e == cudaSuccess)
		stream_retire(s);
	pthread_mutex_unlock(&g_lock);
	return fin(e);
}

static cudaError_t stream_info(cudaStream_t h, int per_thread, unsigned int *flags, int *priority, int *device)
{
	struct fg_stream *s;
	cudaError_t e;

	pthread_mutex_lock(&g_lock);
	e = stream_resolve(h, per_thread, &s);
	if (e == cudaSuccess) {
		if (flags != NULL)
			*flags = s->flags;
		if (priority != NULL)
			*priority = s->priority;
		if (device != NULL)
			*device = s->device;
	}
	pthread_mutex_unlock(&g_lock);
	return e;
}

cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
	fg_enter();
	return fin(flags ? stream_info(hStream, 0, flags, NULL, NULL) : cudaErrorInvalidValue);
}

cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags)
{
	fg_enter();
	return fin(flags ? stream_info(hStream, 1, flags, NULL, NULL) : cudaErrorInvalidValue);
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
	fg_enter();
	return fin(priority ? stream_info(hStream, 0, NULL, priority, NULL) : cudaErrorInvalidValue);
}

cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{
	fg_enter();
	return fin(priority ? stream_info(hStream, 1, NULL, priority, NULL) : cudaErrorInvalidValue);
}

cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int *device)
{
	fg_enter();
	return fin(device ? stream_info(hStream, 0, NULL, NULL, device) : cudaErrorInvalidValue);
}

cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t hStream, int *device)
{
	fg_enter();
	return fin(device ? stream_info(hStream, 1, NULL, NULL, device) : cudaErrorInvalidValue);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	fg_enter();
	if (leastPriority != NULL)
		*leastPriority = FG_PRIORITY_LEAST;
	if (greatestPriority != NULL)
		*greatestPriority = FG_PRIORITY_GREATEST;
	return fin(cudaSuccess);
}

/* ---- devices ---- */

cudaError_t cudaGetDeviceCount(int *count)
{
	fg_enter();
	if (count == NULL)
		return fin(cudaErrorInvalidValue);
	*count = g_cfg.ndev;
	return fin(g_cfg.ndev > 0 ? cudaSuccess : cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device)
{
	fg_enter();
	if (g_cfg.ndev == 0)
		return fin(cudaErrorNoDevice);
	if (device < 0 || device >= g_cfg.ndev)
		return fin(cudaErrorInvalidDevice);
	t_device = device;
	return fin(cudaSuccess);
}

cudaError_t cudaGetDevice(int *device)
{
	fg_enter();
	if (device == NULL)
		return fin(cudaErrorInvalidValue);
	if (g_cfg.ndev == 0)
		return fin(cudaErrorNoDevice);
	*device = t_device;
	return fin(cudaSuccess);
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	fg_enter();
	if (prop == NULL)
		return fin(cudaErrorInvalidValue);
	if (device < 0 || device >= g_cfg.ndev)
		return fin(g_cfg.ndev == 0 ? cudaErrorNoDevice : cudaErrorInvalidDevice);
	memset(prop, 0, sizeof(*prop));
	snprintf(prop->name, sizeof(prop->name), "Fake GPU");
	for (size_t i = 0; i < sizeof(prop->uuid.bytes); i++)
		prop->uuid.bytes[i] = (char)(i == 0 ? 0x7a : i == 15 ? device : 0);
	prop->totalGlobalMem = g_cfg.mem_bytes;
	prop->sharedMemPerBlock = 48 * 1024;
	prop->regsPerBlock = 65536;
	prop->warpSize = 32;
	prop->memPitch = INT_MAX;
	prop->maxThreadsPerBlock = 1024;
	prop->maxThreadsDim[0] = 1024, prop->maxThreadsDim[1] = 1024, prop->maxThreadsDim[2] = 64;
	prop->maxGridSize[0] = INT_MAX, prop->maxGridSize[1] = 65535, prop->maxGridSize[2] = 65535;
	prop->totalConstMem = 65536;
	prop->major = 9;
	prop->minor = 0;
	prop->textureAlignment = 512;
	prop->texturePitchAlignment = 32;
	prop->multiProcessorCount = 132;
	prop->canMapHostMemory = 1;
	prop->concurrentKernels = 1;
	prop->pciBusID = device + 1;
	prop->asyncEngineCount = 2;
	prop->unifiedAddressing = 1;
	prop->memoryBusWidth = 5120;
	prop->l2CacheSize = 50 * 1024 * 1024;
	prop->maxThreadsPerMultiProcessor = 2048;
	prop->streamPrioritiesSupported = 1;
	prop->sharedMemPerMultiprocessor = 228 * 1024;
	prop->regsPerMultiprocessor = 65536;
	prop->managedMemory = 1;
	prop->cooperativeLaunch = 1;
	prop->sharedMemPerBlockOptin = 227 * 1024;
	prop->maxBlocksPerMultiProcessor = 32;
	prop->hostRegisterSupported = 1;
	prop->memoryPoolsSupported = 1;
	prop->hostNumaId = -1;
	return fin(cudaSuccess);
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	int v;

	fg_enter();
	if (value == NULL)
		return fin(cudaErrorInvalidValue);
	if (device < 0 || device >= g_cfg.ndev)
		return fin(g_cfg.ndev == 0 ? cudaErrorNoDevice : cudaErrorInvalidDevice);
	switch (attr) {
	case cudaDevAttrMaxThreadsPerBlock: v = 1024; break;
	case cudaDevAttrMaxBlockDimX: v = 1024; break;
	case cudaDevAttrMaxBlockDimY: v = 1024; break;
	case cudaDevAttrMaxBlockDimZ: v = 64; break;
	case cudaDevAttrMaxGridDimX: v = INT_MAX; break;
	case cudaDevAttrMaxGridDimY: v = 65535; break;
	case cudaDevAttrMaxGridDimZ: v = 65535; break;
	case cudaDevAttrMaxSharedMemoryPerBlock: v = 48 * 1024; break;
	case cudaDevAttrWarpSize: v = 32; break;
	case cudaDevAttrMultiProcessorCount: v = 132; break;
	case cudaDevAttrComputeCapabilityMajor: v = 9; break;
	case cudaDevAttrComputeCapabilityMinor: v = 0; break;
	case cudaDevAttrConcurrentKernels: v = 1; break;
	case cudaDevAttrUnifiedAddressing: v = 1; break;
	case cudaDevAttrManagedMemory: v = 1; break;
	case cudaDevAttrMemoryPoolsSupported: v = 1; break;
	case cudaDevAttrPciBusId: v = device + 1; break;
	default: return fin(cudaErrorInvalidValue);
	}
	*value = v;
	return fin(cudaSuccess);
}

/* Destroys the current device's memory, streams and events (pinned host memory made on it too); per-thread
 * default streams stay, idle. */
cudaError_t cudaDeviceReset(void)
{
	struct fg_device *d;
	int dev;

	fg_enter();
	if (device_synchronize() != cudaSuccess)
		return fin(cudaErrorNoDevice);
	pthread_mutex_lock(&g_lock);
	dev = t_device;
	d = &g_dev[dev];
	for (size_t i = 0; i < g_nallocs;) {
		struct fg_alloc *a = &g_allocs[i];

		if (a->device == dev && a->type != FG_MEM_NONE) {
			if (a->type != FG_MEM_REGISTERED)
				free((void *)a->base);
			alloc_remove(a);
		} else {
			i++;
		}
	}
	d->used = 0;
	for (struct fg_stream **pp = &d->streams; *pp;) {
		struct fg_stream *s = *pp;

		if (s->kind == FG_USER) {
			*pp = s->next;
			s->magic = 0;
			free(s);
		} else {
			s->busy_until = 0;
			pp = &s->next;
		}
	}
	for (struct fg_event **pp = &g_events; *pp;) {
		struct fg_event *ev = *pp;

		if (ev->device == dev) {
			*pp = ev->next;
			ev->magic = 0;
			free(ev);
		} else {
			pp = &ev->next;
		}
	}
	d->legacy.busy_until = 0;
	d->retired_busy = d->retired_blocking_busy = 0;
	pthread_mutex_unlock(&g_lock);
	return fin(cudaSuccess);
}

cudaError_t cudaProfilerStart(void)
{
	fg_enter();
	return fin(cudaSuccess);
}

cudaError_t cudaProfilerStop(void)
{
	fg_enter();
	return fin(cudaSuccess);
}

cudaError_t cudaGetLastError(void)
{
	cudaError_t e = t_last_error;

	t_last_error = cudaSuccess;
	return e;
}

cudaError_t cudaPeekAtLastError(void)
{
	return t_last_error;
}

#define FG_ERRORS(X)                                                                                   \
	X(cudaSuccess, "no error")                                                                     \
	X(cudaErrorInvalidValue, "invalid argument")                                                   \
	X(cudaErrorMemoryAllocation, "out of memory")                                                  \
	X(cudaErrorInitializationError, "initialization error")                                        \
	X(cudaErrorInvalidConfiguration, "invalid configuration argument")                             \
	X(cudaErrorInvalidPitchValue, "invalid pitch argument")                                        \
	X(cudaErrorInvalidSymbol, "invalid device symbol")                                             \
	X(cudaErrorInvalidDevicePointer, "invalid device pointer")                                     \
	X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")                        \
	X(cudaErrorInvalidDeviceFunction, "invalid device function")                                   \
	X(cudaErrorNoDevice, "no CUDA-capable device is detected")                                     \
	X(cudaErrorInvalidDevice, "invalid device ordinal")                                            \
	X(cudaErrorInvalidResourceHandle, "invalid resource handle")                                   \
	X(cudaErrorNotReady, "device not ready")                                                       \
	X(cudaErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped") \
	X(cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region") \
	X(cudaErrorNotSupported, "operation not supported")                                           \
	X(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing")      \
	X(cudaErrorIllegalState, "the operation cannot be performed in the present state")            \
	X(cudaErrorUnknown, "unknown error")

const char *cudaGetErrorString(cudaError_t error)
{
#define FG_STR(code, text) case code: return text;
	switch (error) {
	FG_ERRORS(FG_STR)
	default: return "unrecognized error code";
	}
#undef FG_STR
}

const char *cudaGetErrorName(cudaError_t error)
{
#define FG_NAME(code, text) case code: return #code;
	switch (error) {
	FG_ERRORS(FG_NAME)
	default: return "unrecognized error code";
	}
#undef FG_NAME
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	if (runtimeVersion == NULL)
		return fin(cudaErrorInvalidValue);
	*runtimeVersion = CUDART_VERSION;
	return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	if (driverVersion == NULL)
		return fin(cudaErrorInvalidValue);
	*driverVersion = 13000;
	return cudaSuccess;
}
