/* GPU activity: CUPTI's records of what the GPU ran (kernels, copies, memsets), converted into our records.
 *
 * When: libcupti is loaded and started by the first wrapped GPU call after the CUDA runtime is loaded (the
 * library scan, pw_cupti_check, only notes the runtime): CUPTI initialises the driver, and a process in which
 * the driver is initialised cannot use CUDA in its fork children, so starting at the load would break a
 * program that forks workers after `import torch` and before using CUDA. Such a child starts CUPTI itself.
 * Programs of the driver API alone (no libcudart: no wrapped call) start it when libcuda is loaded.
 *
 * Which: PROFWRAP_CUPTI when set, else the libcupti already loaded (libtorch links one: by the first CUDA call
 * it is in), else one next to libcudart or in the toolkit's and the pip wheels' layouts, else the loader's
 * search for libcupti.so.13 and .12. Without one, the GPU calls are still recorded and a PW_K_ACT_STATUS
 * record says why there is no activity.
 *
 * Another client (torch.profiler's Kineto, linked into libtorch) shares CUPTI's one set of callbacks, kinds
 * and settings: its calls reach cupti_client.c first, and its first call that changes them makes profwrap
 * step back (pw_cupti_other_client): flush its own buffers, disable its kinds, put back the settings it
 * changed, stop, and say so. From then on the other client has CUPTI as if profwrap had not been there.
 *
 * Buffer protocol: CUPTI asks for buffers (buffer_requested) and hands them back full (buffer_completed) from
 * its worker thread, or from the thread that calls cuptiActivityFlushAll. Buffers come from a pool mapped
 * once; when the pool is empty the request is refused, CUPTI drops the records and counts them, and both
 * counts are recorded. Records are converted and committed to the delivering thread's lane inside
 * buffer_completed: the conversion takes no lock and allocates nothing, so doing it there needs no second
 * thread and returns each buffer to the pool at once.
 *
 * Flushes: CUPTI's worker every PROFWRAP_CUPTI_FLUSH_MS (full buffers only, as CUPTI documents); profwrap's
 * flushing thread every period too, non-forced (records of finished work reach the ring even when buffers
 * fill slowly and the program never waits through a wrapped call, so a crash loses little, and the flush
 * and conversion stay off the program's threads); one when the capture window closes, and a forced one when
 * the process exits (pw_note_exit: before atexit handlers tear the runtime down).
 *
 * Clock: CUPTI is given our CLOCK_MONOTONIC (cuptiActivityRegisterTimestampCallback); a libcupti without
 * that call keeps its own clock and the offset between the two, measured at start, is added.
 *
 * Correlation: wrappers of calls that enqueue GPU work push a process-unique external id around the real
 * call (pw_cupti_push/pop) and store it in their record; CUPTI ties it to the correlation id of every CUDA
 * call made meanwhile (PW_K_ACT_EXTCORR), including the driver launches of cuBLAS, cuDNN and NCCL. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/mman.h>
#include <time.h>

#include <cupti_activity.h>

#include "../common/pw_session.h"
#include "cupti_records.h"
#include "pw_gpu.h"

PW_REAL(void *, dlopen, (const char *, int));

/* The libcupti functions used, resolved from the loaded object's handle. */
#define CUPTI_FN_LIST(X)                                                                                  \
	X(1, cuptiActivityRegisterCallbacks, (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc)) \
	X(1, cuptiActivityEnable, (CUpti_ActivityKind))                                                   \
	X(1, cuptiActivityDisable, (CUpti_ActivityKind))                                                  \
	X(1, cuptiActivityFlushAll, (uint32_t))                                                           \
	X(1, cuptiActivityGetNextRecord, (uint8_t *, size_t, CUpti_Activity **))                          \
	X(1, cuptiActivityGetNumDroppedRecords, (CUcontext, uint32_t, size_t *))                          \
	X(1, cuptiGetTimestamp, (uint64_t *))                                                             \
	X(0, cuptiGetVersion, (uint32_t *))                                                               \
	X(0, cuptiGetResultString, (CUptiResult, const char **))                                          \
	X(0, cuptiActivityPushExternalCorrelationId, (CUpti_ExternalCorrelationKind, uint64_t))           \
	X(0, cuptiActivityPopExternalCorrelationId, (CUpti_ExternalCorrelationKind, uint64_t *))          \
	X(0, cuptiActivityRegisterTimestampCallback, (CUpti_TimestampCallbackFunc))                       \
	X(0, cuptiActivityFlushPeriod, (uint32_t))                                                        \
	X(0, cuptiSetThreadIdType, (CUpti_ActivityThreadIdType))                                          \
	X(0, cuptiActivitySetAttribute, (CUpti_ActivityAttribute, size_t *, void *))                      \
	X(0, cuptiActivityEnableRuntimeApi, (CUpti_CallbackId, uint8_t))                                  \
	X(0, cuptiActivityEnableDriverApi, (CUpti_CallbackId, uint8_t))                                   \
	X(0, cuptiGetCallbackName, (CUpti_CallbackDomain, uint32_t, const char **))

static struct {
#define PW_X(needed, name, params) CUptiResult (*name) params;
	CUPTI_FN_LIST(PW_X)
#undef PW_X
	atomic_int start;     /* enum start_state */
	atomic_int active;    /* buffers are being converted */
	atomic_int stepped_back; /* another client has CUPTI (pw_cupti_other_client): 1 stepping back, 2 done */
	atomic_int refusing;  /* buffer requests are refused: profwrap stepped back */
	atomic_int exited;    /* the process is exiting: the flushing thread stops, the exit's forced flush is made */
	atomic_int flushing;  /* the flushing thread is in (or about to enter) a flush */
	uint32_t version;     /* cuptiGetVersion() */
	enum pw_act_clock clock;
	char runtime_path[512]; /* the CUDA runtime noted by pw_cupti_check, for the pending start */
	int64_t ns_offset;    /* added to CUPTI's times (PW_ACT_CLOCK_OFFSET) */
	uint8_t *pool;
	size_t buffer_size;
	uint32_t buffers;
	atomic_uchar *in_use; /* per pool buffer */
	atomic_ulong refused; /* buffer requests refused since the last PW_K_ACT_DROPPED record */
	uint64_t flush_period_ns;
	_Atomic uint64_t next_ext_id;
	pw_strref path_ref;
} cu;

enum start_state {
	START_NONE,      /* no CUDA runtime or driver seen yet */
	START_CLAIMED,   /* a thread is noting the runtime */
	START_PENDING,   /* the runtime is loaded: the first wrapped GPU call starts CUPTI */
	START_STARTING,  /* that call is starting it */
	START_DONE,      /* started, or found it could not */
	START_FORKED,    /* a fork child of a process where CUPTI recorded: the first GPU call says why not */
};

/* Read by the GPU wrappers: external ids are pushed while this is set. */
int pw_cupti_correlating;

static uint64_t CUPTIAPI monotonic_ns(void)
{
	return pw_clock_mono_ns();
}

static void nap(void);
static void emit_gpu(const struct pw_rec_gpu *r);

/* Set when the collector drained nothing in a whole wait (killed, or stuck): no one waits for it again. */
static atomic_int drain_stalled;

/* emit_gpu for the records of a delivered buffer: a burst of them (a buffer holds tens of thousands) can
 * outrun the collector's draining of one lane, and the delivering thread is CUPTI's or profwrap's own (or
 * the exiting one), which may wait for room rather than drop, up to *budget_ns for the whole buffer. */
static void emit_gpu_patient(const struct pw_rec_gpu *r, uint64_t *budget_ns)
{
	struct pw_thread *t = &pw_self;
	if (t->lane && !t->shared && pw_seg && *budget_ns && !atomic_load_explicit(&drain_stalled, memory_order_relaxed)) {
		uint64_t tail = atomic_load_explicit(&t->lane->tail, memory_order_acquire), t0 = pw_clock_mono_ns();
		while (!pw_lane_has_room(pw_seg, t->lane, sizeof *r)) {
			uint64_t waited = pw_clock_mono_ns() - t0;
			if (waited >= *budget_ns) {
				*budget_ns = 0;
				if (atomic_load_explicit(&t->lane->tail, memory_order_acquire) == tail)
					atomic_store_explicit(&drain_stalled, 1, memory_order_relaxed);
				break;
			}
			nap();
		}
		uint64_t waited = pw_clock_mono_ns() - t0;
		*budget_ns = waited < *budget_ns ? *budget_ns - waited : 0;
	}
	emit_gpu(r);
}

static void emit_gpu(const struct pw_rec_gpu *r)
{
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_RECORDING);
	pw_emit_record(r, sizeof *r);
	pw_guard_leave(guard);
}

/* A PW_K_ACT_STATUS record (common/pw_record.h), for emit_status or a caller that adds fields. */
static void status_record(struct pw_rec_gpu *r, enum pw_act_state state, int64_t code, uint32_t version,
			  enum pw_act_clock clock)
{
	memset(r, 0, sizeof *r);
	r->c.h.type = PW_EV_GPU_STATUS;
	r->c.h.size8 = sizeof *r / 8;
	r->c.t0 = r->c.t1 = pw_clock_mono_ns();
	r->c.ret = code;
	r->c.arg0 = state;
	r->c.arg1 = cu.path_ref;
	r->device = -1;
	pw_put_act_status(r, (struct pw_act_status_info){.version = version, .clock = clock});
}

static void emit_status(enum pw_act_state state, int64_t code, uint32_t version, enum pw_act_clock clock)
{
	if (!((pw_recording_now() >> PW_DOM_GPU) & 1))
		return;
	struct pw_rec_gpu r;
	status_record(&r, state, code, version, clock);
	emit_gpu(&r);
}

/* ---- kernel and device names: CUPTI shares one string per name, so they are interned once per pointer ---- */

static struct pw_once_slot names[PW_NAME_SLOTS];         /* by CUPTI's string pointer */
static struct pw_once_slot names_by_text[PW_NAME_SLOTS]; /* by the text's hash, once the first is full */

static pw_strref intern_string(uint64_t key, const void *unused)
{
	(void)unused;
	return pw_intern_path((const char *)(uintptr_t)(key & ((UINT64_C(1) << 56) - 1)));
}

/* A program with more kernels than the pointer table holds (PyTorch has tens of thousands) still gets every
 * name: by its text when its pointer finds no slot. */
/* Module unloads so far: CUPTI may give an unloaded module's kernel name strings to other names, so the
 * cache's keys are CUPTI's pointers of the current generation (user-space addresses leave the top byte free). */
static atomic_uint names_generation;

static pw_strref intern_name(const char *s, void *ctx)
{
	(void)ctx;
	if (!s)
		return 0;
	unsigned gen = atomic_load_explicit(&names_generation, memory_order_relaxed);
	if (gen > 255 || (uintptr_t)s >> 56)
		return pw_intern_name_by_text(names_by_text, s);
	pw_strref ref = pw_once(names, PW_NAME_SLOTS, (uintptr_t)s | (uint64_t)gen << 56, intern_string, NULL);
	return ref ? ref : pw_intern_name_by_text(names_by_text, s);
}

/* Device names are the client's to free (cupti_activity.h), so their addresses are reused: not cached. */
static pw_strref intern_once(const char *s, void *ctx)
{
	(void)ctx;
	return pw_intern_path(s);
}

/* ---- the buffer protocol ---- */

/* The activity kinds enabled where this CUPTI and GPU allow (kernels are required). MEMCPY2: copies between two
 * devices, which CUPTI reports only as that kind. */
static const CUpti_ActivityKind optional_kinds[] = {
	CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_DEVICE,
};

/* API records: only of the CUDA calls that enqueue work, whose records tie a kernel to the thread and time of
 * its launch (a library's cuLaunchKernel, Triton's). The RUNTIME and DRIVER kinds would record every call
 * (cudaGetDevice, cuCtxGetCurrent, attribute queries: most of PyTorch's), which production profilers turn
 * off; they are the fallback for a CUPTI without per-function control. */
static const char *const launching_prefixes[] = {
	"cudaLaunch", "__cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset",
	"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset",
};
#define API_CBID_BOUND 4096 /* past the last callback id of either domain in CUDA 13.x */
#define API_CBIDS_MAX 512
static struct {
	uint16_t runtime[API_CBIDS_MAX], driver[API_CBIDS_MAX];
	size_t nruntime, ndriver;
} launching;

/* The callback ids of domain whose functions enqueue work, by their names. */
static size_t select_launching(CUpti_CallbackDomain domain, uint16_t *out)
{
	size_t n = 0;
	for (uint32_t cbid = 1; cbid < API_CBID_BOUND && n < API_CBIDS_MAX; cbid++) {
		const char *name = NULL;
		if (cu.cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		for (size_t p = 0; p < sizeof launching_prefixes / sizeof launching_prefixes[0]; p++)
			if (strncmp(name, launching_prefixes[p], strlen(launching_prefixes[p])) == 0) {
				out[n++] = (uint16_t)cbid;
				break;
			}
	}
	return n;
}

/* Enables or disables the API records profwrap uses. */
static void toggle_api_records(int on)
{
	if (!launching.nruntime && !launching.ndriver) {
		CUptiResult (*toggle)(CUpti_ActivityKind) = on ? cu.cuptiActivityEnable : cu.cuptiActivityDisable;
		toggle(CUPTI_ACTIVITY_KIND_RUNTIME);
		toggle(CUPTI_ACTIVITY_KIND_DRIVER);
		return;
	}
	for (size_t i = 0; i < launching.nruntime; i++)
		cu.cuptiActivityEnableRuntimeApi(launching.runtime[i], (uint8_t)on);
	for (size_t i = 0; i < launching.ndriver; i++)
		cu.cuptiActivityEnableDriverApi(launching.driver[i], (uint8_t)on);
}

uint32_t pw_cupti_window_seen = 1;

/* Serialises what changes CUPTI's kinds (following the capture window) with stepping back for another client. */
static atomic_flag control = ATOMIC_FLAG_INIT;
/* Set on the thread that is starting CUPTI: its own calls (a signal handler's among them) never wait for it. */
static _Thread_local int starting_here;

/* A sleep of profwrap's own (a raw system call: the libc sleeps are wrapped). */
static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
	PW_SYSCALL(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
}

/* A short sleep for the rare waits below. */
static void nap(void)
{
	sleep_ns(100000);
}

/* Waits while cu.start is START_STARTING, at most about a second: a waiter may hold what the start needs (the
 * loader's lock, when it calls from a library's constructor), and then goes on without waiting longer. */
static void wait_started(void)
{
	for (int i = 0; i < 10000 && !starting_here &&
			atomic_load_explicit(&cu.start, memory_order_acquire) == START_STARTING;
	     i++)
		nap();
}

static void start_pending(void);
static void emit_status(enum pw_act_state state, int64_t code, uint32_t version, enum pw_act_clock clock);

/* Enables or disables every kind profwrap uses. */
static void toggle_kinds(int on)
{
	CUptiResult (*toggle)(CUpti_ActivityKind) = on ? cu.cuptiActivityEnable : cu.cuptiActivityDisable;
	toggle(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	for (size_t i = 0; i < sizeof optional_kinds / sizeof optional_kinds[0]; i++)
		toggle(optional_kinds[i]);
	toggle_api_records(on);
}

static void follow_window(void)
{
	if (atomic_flag_test_and_set_explicit(&control, memory_order_acquire))
		return; /* another thread is switching: this call will see the result, or the next one */
	uint32_t open = (pw_window_now() >> PW_DOM_GPU) & 1;
	if (open != __atomic_load_n(&pw_cupti_window_seen, __ATOMIC_RELAXED) &&
	    atomic_load_explicit(&cu.active, memory_order_acquire)) {
		struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
		toggle_kinds(open);
		if (!open)
			cu.cuptiActivityFlushAll(0);
		pw_guard_leave(guard);
	}
	__atomic_store_n(&pw_cupti_window_seen, open, __ATOMIC_RELAXED);
	atomic_flag_clear_explicit(&control, memory_order_release);
}

void pw_cupti_catch_up(void)
{
	int state = atomic_load_explicit(&cu.start, memory_order_acquire);
	if (state == START_PENDING || state == START_STARTING || state == START_FORKED)
		start_pending();
	follow_window();
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*max_records = 0; /* as many as fit */
	for (uint32_t i = 0; i < cu.buffers && !atomic_load_explicit(&cu.refusing, memory_order_acquire); i++) {
		unsigned char free_ = 0;
		if (atomic_load_explicit(&cu.in_use[i], memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&cu.in_use[i], &free_, 1)) {
			*buffer = cu.pool + (size_t)i * cu.buffer_size;
			*size = cu.buffer_size;
			return;
		}
	}
	atomic_fetch_add_explicit(&cu.refused, 1, memory_order_relaxed);
	*buffer = NULL;
	*size = 0;
}

/* Returns a buffer to the pool zeroed, as CUPTI is told buffers come (so it does not zero them itself on
 * the launching thread); this runs where buffers are delivered, mostly CUPTI's worker. */
static void give_back(uint8_t *buffer, size_t valid)
{
	if (!buffer || buffer < cu.pool || buffer >= cu.pool + (size_t)cu.buffers * cu.buffer_size)
		return;
	size_t i = (size_t)(buffer - cu.pool) / cu.buffer_size;
	memset(buffer, 0, valid < cu.buffer_size ? valid : cu.buffer_size);
	atomic_store_explicit(&cu.in_use[i], 0, memory_order_release);
}

static void emit_dropped(CUcontext ctx, uint32_t stream)
{
	size_t dropped = 0;
	if (cu.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS)
		dropped = 0;
	uint64_t refused = atomic_exchange_explicit(&cu.refused, 0, memory_order_relaxed);
	if (!dropped && !refused)
		return;
	struct pw_rec_gpu r;
	memset(&r, 0, sizeof r);
	r.c.h.type = PW_EV_GPU_DROPPED;
	r.c.h.size8 = sizeof r / 8;
	r.c.t0 = r.c.t1 = pw_clock_mono_ns();
	r.c.arg0 = dropped;
	r.c.arg1 = refused;
	r.device = -1;
	emit_gpu(&r);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	(void)size;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	if (atomic_load_explicit(&cu.active, memory_order_acquire) && ((pw_recording_now() >> PW_DOM_GPU) & 1) && valid) {
		CUpti_Activity *rec = NULL;
		struct pw_rec_gpu out;
		uint64_t patience_ns = 200000000; /* per buffer */
		while (cu.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
			int device = rec->kind == CUPTI_ACTIVITY_KIND_DEVICE;
			if (pw_cupti_convert(rec, &out, cu.ns_offset, device ? intern_once : intern_name, NULL))
				emit_gpu_patient(&out, &patience_ns);
			if (device)
				free((void *)((CUpti_ActivityDevice5 *)rec)->name);
		}
		emit_dropped(ctx, stream);
	}
	give_back(buffer, valid);
	pw_guard_leave(guard);
}

/* ---- finding libcupti ---- */

/* Opens path if it exists (dlopen of a missing absolute path would only fail more slowly). */
static void *try_open(const char *path, char *found, size_t found_len)
{
	void *h = real_dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h)
		snprintf(found, found_len, "%s", path);
	return h;
}

static int find_loaded_cupti(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;
	base = base ? base + 1 : name;
	if (base && strncmp(base, "libcupti.so", 11) == 0 && strlen(name) < 512) {
		strcpy(data, name);
		return 1;
	}
	return 0;
}

/* The major version in a file name like libcudart.so.12[.x]; 0 when none. */
static int major_of(const char *path)
{
	const char *so = strstr(path, ".so.");
	return so ? atoi(so + 4) : 0;
}

static void *open_cupti(const char *cuda_path, char *found, size_t found_len)
{
	if (pw_cfg.cupti)
		return try_open(pw_cfg.cupti, found, found_len);
	char loaded[512] = "";
	pw_loader_iterate(find_loaded_cupti, loaded);
	if (loaded[0])
		return try_open(loaded, found, found_len);

	/* Near the runtime, of its major version. A driver's path (a program with the runtime linked in
	 * statically) says neither: libcuda.so.1's version is the driver API's, and its directory the system's. */
	const char *slash = strrchr(cuda_path, '/');
	int runtime = strncmp(slash ? slash + 1 : cuda_path, "libcudart", 9) == 0;
	int major = runtime ? major_of(cuda_path) : 0;
	char dir[512];
	int dirlen = slash && runtime ? (int)(slash - cuda_path) : 0;
	snprintf(dir, sizeof dir, "%.*s", dirlen, cuda_path);
	static const int majors[] = {13, 12};
	/* next to the runtime (toolkit lib64, conda), the toolkit's CUPTI directory, pip's nvidia/ packages */
	static const char *const rel[] = {"", "/../extras/CUPTI/lib64", "/../../cuda_cupti/lib"};
	char path[700];
	void *h = NULL;
	for (size_t r = 0; r < sizeof rel / sizeof rel[0] && !h && dirlen; r++) {
		if (major) {
			snprintf(path, sizeof path, "%s%s/libcupti.so.%d", dir, rel[r], major);
			h = try_open(path, found, found_len);
		}
		for (size_t m = 0; m < sizeof majors / sizeof majors[0] && !h; m++)
			if (majors[m] != major) {
				snprintf(path, sizeof path, "%s%s/libcupti.so.%d", dir, rel[r], majors[m]);
				h = try_open(path, found, found_len);
			}
	}
	for (size_t m = 0; m < sizeof majors / sizeof majors[0] && !h; m++) {
		snprintf(path, sizeof path, "libcupti.so.%d", major ? major : majors[m]);
		h = try_open(path, found, found_len);
		if (major)
			break;
	}
	if (!h)
		h = try_open("libcupti.so", found, found_len);
	if (h) {
		/* the file the loader chose, for the report */
		struct link_map *lm = NULL;
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
			snprintf(found, found_len, "%s", lm->l_name);
	}
	dlerror(); /* our failed attempts are not the program's error */
	return h;
}

static int resolve(void *h)
{
	int missing = 0;
#define PW_X(needed, name, params)                                                   \
	*(void **)&cu.name = pw_real_dlsym(h, #name);                                \
	if (!cu.name && needed)                                                      \
		missing = 1;
	CUPTI_FN_LIST(PW_X)
#undef PW_X
	dlerror();
	return missing ? -1 : 0;
}

/* ---- start ---- */

static void say(const char *what)
{
	if (!pw_cfg.quiet)
		dprintf(2, "profwrap: %s; GPU library calls are recorded, GPU activity (kernels, copies) is not\n",
			what);
}

/* The CUDA driver the runtime will use: the one in the process, else the loader's libcuda.so.1 (what the
 * runtime opens), else one next to the runtime. NULL when none. */
static void *driver_handle(const char *cuda_path)
{
	void *h = real_dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		h = real_dlopen("libcuda.so.1", RTLD_LAZY);
	char path[600];
	const char *slash = strrchr(cuda_path, '/');
	if (!h && slash &&
	    snprintf(path, sizeof path, "%.*s/libcuda.so.1", (int)(slash - cuda_path), cuda_path) < (int)sizeof path)
		h = real_dlopen(path, RTLD_LAZY);
	return h;
}

/* Whether the driver can serve CUPTI, asked with cuDriverGetVersion (which does not initialise CUDA): a stub
 * library (build containers put the toolkit's first on LD_LIBRARY_PATH) answers CUDA_ERROR_STUB_LIBRARY, and
 * libcupti crashes in its first call over a stub, a missing driver or one older than the runtime. Says why
 * not, once, and writes the status. */
static int driver_usable(void *driver, const char *cuda_path)
{
	int (*get_version)(int *) = NULL;
	int version = 0, rc = -1;
	*(void **)&get_version = pw_real_dlsym ? pw_real_dlsym(driver, "cuDriverGetVersion") : NULL;
	if (get_version)
		rc = get_version(&version);
	dlerror();
	int runtime_major = strstr(cuda_path, "libcudart") ? major_of(cuda_path) : 0;
	char msg[300];
	if (rc != 0 || version <= 0)
		snprintf(msg, sizeof msg, "the CUDA driver (libcuda.so.1) cannot be used: cuDriverGetVersion %s (%d)",
			 rc == 34 ? "says it is a stub library" : "failed", rc);
	else if (runtime_major && version < runtime_major * 1000)
		snprintf(msg, sizeof msg, "the CUDA driver (%d.%d) is older than the CUDA %d runtime in use",
			 version / 1000, version % 1000 / 10, runtime_major);
	else
		return 1;
	say(msg);
	struct pw_rec_gpu r;
	status_record(&r, PW_ACT_DRIVER_UNUSABLE, rc, 0, 0);
	pw_put_act_status(&r, (struct pw_act_status_info){.version = (uint32_t)(version > 0 ? version : 0),
							  .runtime_major = (uint32_t)(runtime_major > 0 ? runtime_major : 0)});
	emit_gpu(&r);
	return 0;
}

/* profwrap's flushing thread: every flush period, a non-forced flush delivers the buffers whose records are
 * complete, full or not, and converts them here. CUPTI's own worker delivers only full buffers; without this,
 * a program that never waits through a wrapped call would keep its activity in CUPTI until it exits (and lose
 * it if killed), and flushing on the program's threads would put CUPTI's flush and the conversion on its
 * training loop. Ends when profwrap stops recording activity (stepped back for another client). */
static void *flusher_main(void *unused)
{
	(void)unused;
	pw_guard_set(PW_GUARD_INTERNAL); /* its sleeps and CUPTI's calls are not the program's */
	for (;;) {
		sleep_ns(cu.flush_period_ns);
		/* announced before the last check, so that the exit either sees it flushing or it sees the exit */
		atomic_store(&cu.flushing, 1);
		if (!atomic_load(&cu.active) || atomic_load(&cu.exited)) {
			atomic_store(&cu.flushing, 0);
			return NULL;
		}
		cu.cuptiActivityFlushAll(0);
		atomic_store(&cu.flushing, 0);
	}
}

static void start(const char *cuda_path)
{
	char found[512] = "";
	if (atomic_load_explicit(&cu.stepped_back, memory_order_acquire))
		return; /* another client had CUPTI first (said and recorded then) */
	void *h = open_cupti(cuda_path, found, sizeof found);
	if (!h) {
		char msg[700];
		if (pw_cfg.cupti)
			snprintf(msg, sizeof msg, "%s=%s cannot be loaded", PW_ENV_CUPTI, pw_cfg.cupti);
		else
			snprintf(msg, sizeof msg, "no libcupti found (set %s to its path)", PW_ENV_CUPTI);
		say(msg);
		emit_status(PW_ACT_NO_CUPTI, 0, 0, 0);
		return;
	}
	cu.path_ref = pw_intern_path(found);
	if (!pw_real_dlsym || resolve(h) < 0) {
		say("the libcupti found lacks the activity API");
		emit_status(PW_ACT_FAILED, 0, 0, 0);
		return;
	}
	uint32_t version = 0;
	if (cu.cuptiGetVersion)
		cu.cuptiGetVersion(&version);
	if (cu.cuptiSetThreadIdType)
		cu.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); /* kernel tids, like our records */

	enum pw_act_clock clock = PW_ACT_CLOCK_CALLBACK;
	if (!cu.cuptiActivityRegisterTimestampCallback ||
	    cu.cuptiActivityRegisterTimestampCallback(monotonic_ns) != CUPTI_SUCCESS) {
		clock = PW_ACT_CLOCK_OFFSET;
		int64_t best_gap = INT64_MAX;
		for (int i = 0; i < 5; i++) {
			uint64_t before = pw_clock_mono_ns(), theirs = 0;
			cu.cuptiGetTimestamp(&theirs);
			uint64_t after = pw_clock_mono_ns();
			if ((int64_t)(after - before) < best_gap) {
				best_gap = (int64_t)(after - before);
				cu.ns_offset = (int64_t)(before + (after - before) / 2) - (int64_t)theirs;
			}
		}
	}

	cu.version = version;
	cu.clock = clock;
	cu.buffer_size = (size_t)pw_cfg.cupti_buffer_size;
	cu.buffers = pw_cfg.cupti_buffers;
	cu.flush_period_ns = (uint64_t)pw_cfg.cupti_flush_ms * 1000000u;
	/* the pool is reserved, not committed: pages are touched only by the buffers CUPTI fills */
	size_t pool_len = (size_t)cu.buffers * cu.buffer_size;
	void *pool = mmap(NULL, pool_len + cu.buffers, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (pool == MAP_FAILED) {
		say("no memory for CUPTI's buffers");
		emit_status(PW_ACT_FAILED, 0, version, clock);
		return;
	}
	cu.pool = pool;
	cu.in_use = (atomic_uchar *)(cu.pool + pool_len);

	if (cu.cuptiActivitySetAttribute) {
		uint8_t on = 1;
		size_t len = sizeof on;
		cu.cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len, &on);
		/* a buffer per launching thread, as CUDA 13's CUPTI does by default and CUDA 12's does not: no lock
		 * between launching threads; the pool (PROFWRAP_CUPTI_BUFFERS, 128 by default) has room for
		 * PyTorch's threads and what CUPTI's worker has not delivered yet */
		len = sizeof on;
		cu.cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &len, &on);
	}
	if (atomic_load_explicit(&cu.stepped_back, memory_order_acquire))
		return; /* another client began meanwhile: its callbacks are not to be replaced */
	CUptiResult rc = cu.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	/* Kernels are what the report needs; the rest is enabled where this CUPTI and GPU allow. */
	if (rc == CUPTI_SUCCESS)
		rc = cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (rc != CUPTI_SUCCESS) {
		char msg[300];
		const char *what = NULL;
		if (!cu.cuptiGetResultString || cu.cuptiGetResultString(rc, &what) != CUPTI_SUCCESS || !what)
			what = "an unknown error";
		snprintf(msg, sizeof msg, "CUPTI could not start recording (%s, CUptiResult %d)", what, (int)rc);
		say(msg);
		emit_status(PW_ACT_FAILED, rc, version, clock);
		return;
	}
	for (size_t i = 0; i < sizeof optional_kinds / sizeof optional_kinds[0]; i++)
		cu.cuptiActivityEnable(optional_kinds[i]);
	if (cu.cuptiActivityEnableRuntimeApi && cu.cuptiActivityEnableDriverApi && cu.cuptiGetCallbackName) {
		launching.nruntime = select_launching(CUPTI_CB_DOMAIN_RUNTIME_API, launching.runtime);
		launching.ndriver = select_launching(CUPTI_CB_DOMAIN_DRIVER_API, launching.driver);
	}
	toggle_api_records(1);
	if (cu.cuptiActivityFlushPeriod)
		cu.cuptiActivityFlushPeriod((uint32_t)(cu.flush_period_ns / 1000000u));
	atomic_store_explicit(&cu.active, 1, memory_order_release);
	if (cu.flush_period_ns)
		pw_start_thread("profwrap-cupti", flusher_main, 256u << 10);
	if (cu.cuptiActivityPushExternalCorrelationId && cu.cuptiActivityPopExternalCorrelationId &&
	    cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) == CUPTI_SUCCESS)
		__atomic_store_n(&pw_cupti_correlating, 1, __ATOMIC_RELEASE);
	emit_status(PW_ACT_RECORDING, 0, version, clock);
	follow_window();
}

/* Whether a driver that can serve CUPTI is there; says why not, once, and records it. Neither loading the
 * driver nor asking its version initialises CUDA, so this is done when the runtime is loaded: a program that
 * never makes a wrapped call still has its report say why there is no GPU activity. */
static int driver_ok(const char *cuda_path)
{
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	int ok = 0;
	void *driver = driver_handle(cuda_path);
	if (!driver) {
		say("no CUDA driver (libcuda.so.1) could be loaded");
		emit_status(PW_ACT_NO_DRIVER, 0, 0, 0);
	} else {
		ok = driver_usable(driver, cuda_path);
	}
	pw_guard_leave(guard);
	return ok;
}

/* Runs start() with the program's errno and without recording what it calls. */
static void start_guarded(const char *cuda_path)
{
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	start(cuda_path);
	pw_guard_leave(guard);
}

void pw_cupti_check(const char *cuda_path)
{
	int none = START_NONE;
	if (atomic_load_explicit(&cu.start, memory_order_relaxed) != START_NONE || !pw_seg ||
	    !((pw_recording_now() >> PW_DOM_GPU) & 1) ||
	    !atomic_compare_exchange_strong(&cu.start, &none, START_CLAIMED))
		return;
	if (!driver_ok(cuda_path)) {
		atomic_store_explicit(&cu.start, START_DONE, memory_order_release);
		return;
	}
	const char *slash = strrchr(cuda_path, '/');
	if (strncmp(slash ? slash + 1 : cuda_path, "libcudart", 9) == 0 &&
	    strlen(cuda_path) < sizeof cu.runtime_path) {
		strcpy(cu.runtime_path, cuda_path);
		atomic_store_explicit(&cu.start, START_PENDING, memory_order_release);
		__atomic_store_n(&pw_cupti_window_seen, PW_CUPTI_CATCH_UP, __ATOMIC_RELAXED);
		return;
	}
	atomic_store_explicit(&cu.start, START_STARTING, memory_order_release);
	starting_here = 1;
	start_guarded(cuda_path);
	starting_here = 0;
	atomic_store_explicit(&cu.start, START_DONE, memory_order_release);
}

/* The first wrapped GPU call of the process (or of a fork child) starts CUPTI, or says why a fork child has
 * none. The calls of other threads meanwhile wait, so that none of their work goes unrecorded; calls made
 * inside the start (the internal guard is held) go on. */
static void start_pending(void)
{
	int state = atomic_load_explicit(&cu.start, memory_order_acquire);
	starting_here = 1; /* before the exchange: a signal handler's call on this thread must not wait for it */
	if (state == START_PENDING && atomic_compare_exchange_strong(&cu.start, &state, START_STARTING)) {
		start_guarded(cu.runtime_path);
		atomic_store_explicit(&cu.start, START_DONE, memory_order_release);
	} else if (state == START_FORKED && atomic_compare_exchange_strong(&cu.start, &state, START_DONE)) {
		struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
		say("this process is a fork child of one in which CUDA was in use: CUDA cannot be used here");
		emit_status(PW_ACT_FORKED, 0, 0, 0);
		pw_guard_leave(guard);
	}
	starting_here = 0;
	wait_started();
}

/* CUPTI's default time base on Linux (cupti_activity.h), put back when profwrap steps back. */
static uint64_t CUPTIAPI realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pw_cupti_other_client(const char *call)
{
	if (atomic_load_explicit(&cu.stepped_back, memory_order_relaxed) == 2)
		return;
	if (atomic_exchange(&cu.stepped_back, 1)) {
		/* another thread is stepping back: its call and this one go through once it has */
		for (int i = 0; i < 10000 && atomic_load(&cu.stepped_back) != 2; i++)
			nap();
		return;
	}
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	/* a start not made yet is never made; one in progress is finished first, then undone below */
	int state = START_PENDING;
	atomic_compare_exchange_strong(&cu.start, &state, START_DONE);
	wait_started();
	/* no window switch in between (follow_window holds this too, and finds CUPTI inactive after) */
	for (int i = 0; i < 10000 && atomic_flag_test_and_set_explicit(&control, memory_order_acquire); i++)
		nap();
	uint32_t version = 0;
	int recorded = atomic_load_explicit(&cu.active, memory_order_acquire);
	if (recorded) {
		__atomic_store_n(&pw_cupti_correlating, 0, __ATOMIC_RELEASE);
		toggle_kinds(0);
		cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
		/* what CUPTI holds of profwrap's comes back now, converted; then requests are refused and what was
		 * given meanwhile comes back too, so that no buffer of profwrap's is handed to the other client */
		cu.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		atomic_store_explicit(&cu.refusing, 1, memory_order_release);
		cu.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		atomic_store_explicit(&cu.active, 0, memory_order_release);
		/* the settings profwrap changed, as CUPTI's defaults have them */
		if (cu.cuptiActivitySetAttribute) {
			uint8_t zeroed = 0;
			size_t len = sizeof zeroed;
			cu.cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len, &zeroed);
		}
		if (cu.cuptiSetThreadIdType)
			cu.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
		if (cu.cuptiActivityFlushPeriod)
			cu.cuptiActivityFlushPeriod(0);
		if (cu.clock == PW_ACT_CLOCK_CALLBACK)
			cu.cuptiActivityRegisterTimestampCallback(realtime_ns);
		version = cu.version;
	}
	atomic_flag_clear_explicit(&control, memory_order_release);
	/* said and recorded only where profwrap records GPU activity (not in a process it does not profile) */
	if (pw_seg && ((pw_recording_now() >> PW_DOM_GPU) & 1)) {
		if (!pw_cfg.quiet)
			dprintf(2, "profwrap: another CUPTI client (%s; torch.profiler, for one) is recording GPU "
				   "activity; profwrap %s and records no GPU activity from here on (GPU library calls "
				   "still are)\n",
				call, recorded ? "stepped back" : "leaves CUPTI to it");
		emit_status(PW_ACT_OTHER_CLIENT, 0, version, cu.clock);
	}
	atomic_store(&cu.stepped_back, 2);
	pw_guard_leave(guard);
}

/* ---- correlation and flushes ---- */

uint64_t pw_cupti_push(void)
{
	uint64_t id = atomic_fetch_add_explicit(&cu.next_ext_id, 1, memory_order_relaxed) + 1;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	CUptiResult rc = cu.cuptiActivityPushExternalCorrelationId(PW_CUPTI_EXT_KIND, id);
	pw_guard_leave(guard);
	return rc == CUPTI_SUCCESS ? id : 0;
}

void pw_cupti_pop(void)
{
	uint64_t last;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	cu.cuptiActivityPopExternalCorrelationId(PW_CUPTI_EXT_KIND, &last);
	pw_guard_leave(guard);
}

void pw_cupti_flush(int forced)
{
	if (!atomic_load_explicit(&cu.active, memory_order_acquire))
		return;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	cu.cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	pw_guard_leave(guard);
}

void pw_cupti_at_exit(void)
{
	/* the flushing thread must not be in CUPTI while the exit tears the runtime down */
	atomic_store(&cu.exited, 1);
	for (int i = 0; i < 10000 && atomic_load(&cu.flushing); i++)
		nap();
	pw_cupti_flush(1);
}

void pw_cupti_module_unloading(void)
{
	/* at exit every module is unregistered, after the last flush: nothing is left to convert then */
	if (!atomic_load(&cu.exited))
		pw_cupti_flush(0);
	atomic_fetch_add_explicit(&names_generation, 1, memory_order_relaxed);
}

void pw_cupti_after_fork(void)
{
	/* CUPTI's worker thread and the device state stay with the parent: nothing here may call it. A start
	 * still pending is the child's to make (CUDA was not used yet); one made means CUDA was in use; one
	 * being made by another thread of the parent is never finished here. */
	int state = START_STARTING;
	atomic_compare_exchange_strong(&cu.start, &state, START_FORKED); /* the driver may be initialised */
	state = START_CLAIMED;
	atomic_compare_exchange_strong(&cu.start, &state, START_NONE);    /* the child's scan notes it again */
	atomic_flag_clear(&control);                                    /* a parent's thread may have held it */
	atomic_store(&cu.flushing, 0);                                  /* the flushing thread is the parent's */
	starting_here = 0;
	if (atomic_load(&cu.active)) {
		atomic_store(&cu.active, 0);
		__atomic_store_n(&pw_cupti_correlating, 0, __ATOMIC_RELEASE);
		atomic_store(&cu.start, START_FORKED);
	}
	if (atomic_load(&cu.start) == START_FORKED)
		__atomic_store_n(&pw_cupti_window_seen, PW_CUPTI_CATCH_UP, __ATOMIC_RELAXED);
}
