/* OUT/rank<R>.trace.json: the rank's timeline in the Chrome trace event format (JSON object form), for
 * Perfetto UI and chrome://tracing.
 *
 * The raw traces keep every call, but a viewer must be able to open this file however long the run was. A
 * first pass over the rank's raw traces counts call durations (power-of-two buckets), which give the
 * smallest threshold that keeps at most PW_TRACE_MAX_EVENTS calls; the writing pass writes the calls at or
 * above it, plus an evenly spread sample of the bucket just below it that fills the rest of the budget, and
 * folds the others into one slice per thread that says how many there were. Paths are cut to TRACE_PATH_MAX
 * bytes, so the file stays under about 100 MB.
 *
 * GPU activity (CUPTI records) is drawn beside the threads: each (process, device) is a process of its own
 * in the viewer, pid GPU_PID_BASE + pid * 100 + device (99 for a device id out of range), named
 * "GPU <d> <device name> (pid N)", with one track per CUPTI stream (tid = the stream id). Kernels, copies
 * and memsets are complete events there. They are bounded the same way as calls, by their own budget of
 * PW_TRACE_MAX_GPU_EVENTS events and about PW_TRACE_MAX_GPU_BYTES bytes (kernel names are long): the longest
 * are kept, the bucket at the threshold is sampled, the rest is folded into one slice per stream.
 *
 * Flow arrows (v1 "s"/"f" events, "f" with "bp":"e") join each written GPU event to the call that enqueued
 * it: the wrapped GPU library call whose external correlation id (pw_rec_api corr) an EXTCORR record ties to
 * the event's correlation id, else the CUDA call CUPTI saw (PW_K_ACT_API) on the calling thread, drawn as a
 * slice of its own when no written GPU library call covers it. A flow is written only when both its ends
 * are. Activity arrives late and out of order, so a process with GPU work is read four times, each pass
 * keeping memory bounded by the budgets rather than by the run's length:
 *   0. (the whole rank, once) the duration histograms of calls and of GPU work;
 *   1. the correlation ids of the GPU events that will be written (the keep decisions replayed), and the
 *      devices' names;
 *   2. the EXTCORR and CUDA API records of those correlation ids;
 *   3. the writing pass, which also notes which of the external ids' calls it wrote; the flows, and the
 *      CUDA API slices they start from, are written after the process's other events.
 */
#define _GNU_SOURCE
#include "report_trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "gpu_analysis.h"
#include "json.h"
#include "rawfile.h"
#include "report_format.h"
#include "stacks.h"

#define PW_TRACE_MAX_EVENTS 300000u
#define PW_TRACE_MAX_RANGE_EVENTS 400000u /* NVTX range begins, ends and marks drawn */
#define PW_TRACE_OPEN_STARTS 1024u        /* start/end ranges open at once per image, for their end's name */
#define PW_TRACE_MAX_GPU_EVENTS 100000u
#define PW_TRACE_MAX_SAMPLE_EVENTS 200000u /* CPU samples drawn */
#define PW_TRACE_MAX_GPU_BYTES (48u << 20)
#define TRACE_GPU_EVENT_BYTES 400  /* what a GPU event and its flow take in the file, its name aside */
#define TRACE_PATH_MAX 160         /* bytes of a path argument; longer ones keep their end */
#define FD_LIMIT (1 << 20)         /* fds above this are taken for garbage and get no path */
#define TRACE_KERNEL_MAX 120       /* bytes of a kernel name in a launch slice's name */
#define TRACE_GPU_NAME_MAX 4096    /* bytes of a kernel's name on its GPU track (longer: garbage, cut) */
#define TRACE_DEVICE_NAME_MAX 128  /* bytes of a device's name */
#define GPU_PID_BASE 1000000000    /* the viewer's pids of GPU groups: above any real pid */
#define GPU_PID_MAX 10000000       /* pids at or above (garbage) share the GPU pids of pid 0 */
#define GPU_DEVICE_SLOTS 64        /* device ids with a group of their own; the others share slot 64 */
#define NONE UINT32_MAX            /* an index's empty value */

static uint64_t event_duration(const struct pw_raw_event *e)
{
	return e->t1_ns > e->t0_ns ? e->t1_ns - e->t0_ns : 0;
}

struct thread_stat {
	uint32_t tid;
	int used;
	uint64_t first_ns; /* start of its first call */
	uint64_t last_ns;  /* end of its last call */
	uint64_t folded;
	uint64_t folded_ns;
};

/* The threads of one process image, by tid: open addressing, at most half full. */
struct thread_table {
	struct thread_stat *slots;
	size_t cap;
	size_t used;
};

static struct thread_stat *thread_slot(struct thread_stat *slots, size_t cap, uint32_t tid)
{
	size_t i = (size_t)(tid * 0x9e3779b1u) & (cap - 1);
	while (slots[i].used && slots[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

/* Returns the thread's entry, created empty on first sight, or NULL when out of memory. */
static struct thread_stat *thread_get(struct thread_table *t, uint32_t tid)
{
	if ((t->used + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct thread_stat *slots = calloc(ncap, sizeof *slots);
		if (!slots)
			return NULL;
		for (size_t i = 0; i < t->cap; i++)
			if (t->slots[i].used)
				*thread_slot(slots, ncap, t->slots[i].tid) = t->slots[i];
		free(t->slots);
		t->slots = slots;
		t->cap = ncap;
	}
	struct thread_stat *s = thread_slot(t->slots, t->cap, tid);
	if (!s->used) {
		*s = (struct thread_stat){.tid = tid, .used = 1, .first_ns = UINT64_MAX};
		t->used++;
	}
	return s;
}

/* What each fd of one process image refers to, from its opens and the fds it inherited. */
struct fd_paths {
	char **paths;
	size_t n;
};

static void fd_paths_clear(struct fd_paths *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->paths[i]);
	free(m->paths);
	*m = (struct fd_paths){0};
}

/* path NULL forgets the fd. Returns 0, or -1 when out of memory. */
static int fd_paths_set(struct fd_paths *m, int64_t fd, const char *path, size_t len)
{
	if (fd < 0 || fd >= FD_LIMIT)
		return 0;
	if ((size_t)fd >= m->n) {
		if (!path)
			return 0;
		size_t n = m->n ? m->n : 64;
		while (n <= (size_t)fd)
			n *= 2;
		char **paths = realloc(m->paths, n * sizeof *paths);
		if (!paths)
			return -1;
		memset(paths + m->n, 0, (n - m->n) * sizeof *paths);
		m->paths = paths;
		m->n = n;
	}
	free(m->paths[fd]);
	m->paths[fd] = NULL;
	if (path && !(m->paths[fd] = strndup(path, len)))
		return -1;
	return 0;
}

static const char *fd_paths_get(const struct fd_paths *m, int64_t fd)
{
	return fd >= 0 && (uint64_t)fd < m->n ? m->paths[fd] : NULL;
}

/* An open-addressing map from a 64-bit key to an index into an array, at most half full. */
struct index {
	uint64_t *keys;
	uint32_t *vals; /* NONE: empty */
	size_t cap;
	size_t used;
};

static size_t index_home(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* Returns the value stored for key, or NONE. */
static uint32_t index_find(const struct index *x, uint64_t key)
{
	if (!x->cap)
		return NONE;
	for (size_t i = index_home(key, x->cap);; i = (i + 1) & (x->cap - 1))
		if (x->vals[i] == NONE || x->keys[i] == key)
			return x->vals[i];
}

/* Stores val for key, which is not in x yet. Returns 0, or -1 when out of memory. */
static int index_put(struct index *x, uint64_t key, uint32_t val)
{
	if ((x->used + 1) * 2 > x->cap) {
		size_t ncap = x->cap ? x->cap * 2 : 64;
		uint64_t *keys = malloc(ncap * sizeof *keys);
		uint32_t *vals = malloc(ncap * sizeof *vals);
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -1;
		}
		memset(vals, 0xff, ncap * sizeof *vals);
		for (size_t i = 0; i < x->cap; i++) {
			if (x->vals[i] == NONE)
				continue;
			size_t k = index_home(x->keys[i], ncap);
			while (vals[k] != NONE)
				k = (k + 1) & (ncap - 1);
			keys[k] = x->keys[i];
			vals[k] = x->vals[i];
		}
		free(x->keys);
		free(x->vals);
		x->keys = keys;
		x->vals = vals;
		x->cap = ncap;
	}
	size_t i = index_home(key, x->cap);
	while (x->vals[i] != NONE)
		i = (i + 1) & (x->cap - 1);
	x->keys[i] = key;
	x->vals[i] = val;
	x->used++;
	return 0;
}

static void index_free(struct index *x)
{
	free(x->keys);
	free(x->vals);
	*x = (struct index){0};
}

/* p (capacity *cap elements of size bytes) grown to hold n. Returns the array, maybe moved, or NULL when out
 * of memory (or when n does not fit an index), p then left as it was. */
static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return p;
	if (n >= NONE)
		return NULL;
	size_t ncap = *cap ? *cap * 2 : 64;
	while (ncap < n)
		ncap *= 2;
	void *np = realloc(p, ncap * size);
	if (np)
		*cap = ncap;
	return np;
}

/* Which events of a kind (calls, or GPU work) go into the trace: those whose duration falls in bucket or
 * above. The bucket below fills what is left of the budget: every k-th of its events, spread over the run,
 * so a run of events that all take about as long is sampled rather than dropped whole. */
struct keep_rule {
	unsigned bucket;
	uint64_t boundary_total;
	uint64_t boundary_budget;
	uint64_t boundary_seen;
	uint64_t boundary_kept;
};

/* The smallest bucket such that the events from it up number at most max_n (and, with bytes, take at most
 * max_bytes), and the share of the bucket below it that still fits. */
static void choose_rule(struct keep_rule *k, const uint64_t count[PW_DURATION_BUCKETS],
			const uint64_t bytes[PW_DURATION_BUCKETS], uint64_t max_n, uint64_t max_bytes)
{
	uint64_t n = 0, b = 0;
	for (unsigned i = 0; i < PW_DURATION_BUCKETS; i++) {
		n += count[i];
		b += bytes ? bytes[i] : 0;
	}
	unsigned i = 0;
	while (n > max_n || b > max_bytes) {
		n -= count[i];
		b -= bytes ? bytes[i] : 0;
		i++;
	}
	*k = (struct keep_rule){.bucket = i};
	if (i == 0 || !count[i - 1])
		return;
	uint64_t room = max_n - n;
	if (bytes && bytes[i - 1] > max_bytes - b) {
		uint64_t by_bytes = (uint64_t)((double)(max_bytes - b) / (double)bytes[i - 1] * (double)count[i - 1]);
		if (by_bytes < room)
			room = by_bytes;
	}
	k->boundary_total = count[i - 1];
	k->boundary_budget = room < count[i - 1] ? room : count[i - 1];
}

/* Whether an event of this duration goes into the trace. */
static int keep_event(struct keep_rule *k, uint64_t duration)
{
	unsigned b = pw_duration_bucket(duration);
	if (b >= k->bucket)
		return 1;
	if (b + 1 != k->bucket || !k->boundary_budget)
		return 0;
	uint64_t i = k->boundary_seen++;
	int keep = (i + 1) * k->boundary_budget / k->boundary_total > i * k->boundary_budget / k->boundary_total;
	k->boundary_kept += (uint64_t)keep;
	return keep;
}

/* A correlation id of a GPU event that is written, and what enqueued it. */
struct corr_slot {
	uint32_t corr;
	uint8_t has_ext;    /* an EXTCORR record gave ext */
	uint8_t has_api;    /* a CUDA API record (PW_K_ACT_API) gave the api_ fields */
	uint8_t api_driver; /* that record is of a driver call */
	uint8_t api_drawn;  /* its slice is written */
	uint32_t api_tid;
	uint32_t api_cbid;
	uint64_t ext;
	uint64_t api_t0;
	uint64_t api_t1;
};

/* A wrapped GPU library call by its external correlation id, as the writing pass found it. */
struct launch_slot {
	uint64_t ext;
	uint64_t t0;
	uint32_t tid;
	uint8_t found;
	uint8_t written;
};

/* A stream's track: its extent and the GPU events folded into it. */
struct stream_stat {
	uint32_t slot; /* device slot, GPU_DEVICE_SLOTS for a device out of range */
	uint32_t stream;
	uint64_t first_ns;
	uint64_t last_ns;
	uint64_t folded;
	uint64_t folded_ns;
};

/* A written GPU event whose flow is decided after the writing pass. */
struct pending_flow {
	uint32_t corr;
	uint32_t stream;
	int64_t gpu_pid;
	uint64_t ts_ns;
};

/* A written GPU library call: a CUDA API call inside one needs no slice of its own. reach is the latest end
 * of the spans of the same thread up to this one, once they are sorted. */
struct api_span {
	uint32_t tid;
	uint64_t t0;
	uint64_t t1;
	uint64_t reach;
};

/* The GPU state of the process image being read. */
struct gpu_proc {
	int active; /* the image has GPU work to draw: passes 1 and 2 ran */
	int need_spans;
	struct corr_slot *corrs;
	size_t ncorrs, corrs_cap;
	struct index corr_ix; /* correlation id -> corrs */
	struct launch_slot *launches;
	size_t nlaunches, launches_cap;
	struct index launch_ix; /* external id -> launches */
	struct stream_stat *streams;
	size_t nstreams, streams_cap;
	struct index stream_ix; /* slot << 32 | stream -> streams */
	struct pending_flow *pending;
	size_t npending, pending_cap;
	struct api_span *spans;
	size_t nspans, spans_cap;
	char *device_names[GPU_DEVICE_SLOTS];
};

static void gpu_proc_clear(struct gpu_proc *g)
{
	free(g->corrs);
	index_free(&g->corr_ix);
	free(g->launches);
	index_free(&g->launch_ix);
	free(g->streams);
	index_free(&g->stream_ix);
	free(g->pending);
	free(g->spans);
	for (size_t i = 0; i < GPU_DEVICE_SLOTS; i++)
		free(g->device_names[i]);
	*g = (struct gpu_proc){0};
}

/* A start/end range open in the image being written: its end carries only the id. */
struct open_start {
	uint64_t id;
	char name[128];
};

/* A push/pop range open in the image being written: drawn as one complete slice at its pop. */
struct open_push {
	uint32_t tid, domain;
	uint64_t t0_ns, category, payload;
	uint32_t payload_type;
	char name[128];
};

struct trace {
	struct pw_json j;
	struct open_start starts[PW_TRACE_OPEN_STARTS];
	size_t nstarts;
	struct open_push pushes[PW_TRACE_OPEN_STARTS];
	size_t npushes;
	uint64_t range_events, ranges_not_drawn;
	const struct pw_rank_report *r;
	const struct pw_proc *proc; /* the process image being read */
	const struct pw_stack_image *stacks; /* its call stacks (stacks.h), NULL when none */
	uint64_t samples_drawn, samples_not_drawn;
	uint64_t histogram[PW_DURATION_BUCKETS]; /* calls */
	struct keep_rule calls;
	char threshold_text[32];
	uint64_t kept;
	uint64_t folded;
	struct thread_table threads;
	struct fd_paths fds;
	/* GPU work (kernels, copies, memsets) */
	uint64_t gpu_histogram[PW_DURATION_BUCKETS];
	uint64_t gpu_bytes[PW_DURATION_BUCKETS]; /* what the events of each bucket would take in the file */
	uint64_t *proc_gpu_events;               /* per image of r->procs: GPU events to draw */
	size_t proc_index;                       /* of t->proc */
	struct keep_rule gpu;
	struct keep_rule gpu_replay; /* pass 1 replays the decisions the writing pass will make */
	char gpu_threshold_text[32];
	struct gpu_proc g;
	uint64_t gpu_kept;
	uint64_t gpu_folded;
	uint64_t gpu_records;   /* activity records of every kind */
	uint64_t gpu_unplaced;  /* kernels, copies, memsets with impossible times, not drawn */
	uint64_t gpu_dropped;   /* activity records CUPTI said it lost */
	uint64_t flows;
	uint64_t api_slices;
	uint64_t next_flow_id;
	int out_of_memory;
	uint64_t read_errors;
	char first_read_error[512];
};

static uint64_t bucket_floor_ns(unsigned b)
{
	if (b == 0)
		return 0;
	return b < PW_DURATION_BUCKETS ? (uint64_t)1 << (b - 1) : UINT64_MAX;
}

/* Microseconds since the rank's start, as the format wants, keeping ns precision. */
static double trace_us(const struct trace *t, uint64_t ns)
{
	return (double)(int64_t)(ns - t->r->start_ns) / 1000.0;
}

/* A path argument, cut to its last TRACE_PATH_MAX bytes (not inside a UTF-8 sequence) behind "...". */
static void write_path(struct pw_json *j, const char *path, size_t len)
{
	if (len <= TRACE_PATH_MAX) {
		pw_json_string_n(j, path, len);
		return;
	}
	const char *tail = path + len - (TRACE_PATH_MAX - 3);
	while (tail < path + len && ((unsigned char)*tail & 0xc0) == 0x80)
		tail++;
	char buf[TRACE_PATH_MAX];
	size_t tail_len = (size_t)(path + len - tail);
	memcpy(buf, "...", 3);
	memcpy(buf + 3, tail, tail_len);
	pw_json_string_n(j, buf, 3 + tail_len);
}

static int has_fd(enum pw_event_kind k)
{
	return k == PW_K_OPEN || k == PW_K_CLOSE || k == PW_K_READ || k == PW_K_WRITE || k == PW_K_MMAP;
}

static void kv_hex(struct pw_json *j, const char *key, uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%" PRIx64, v);
	pw_json_kv_string(j, key, buf);
}

static void kv_true(struct pw_json *j, const char *key)
{
	pw_json_key(j, key);
	pw_json_bool(j, 1);
}

static void kv_dims(struct pw_json *j, const char *key, uint32_t x, uint32_t y, uint32_t z)
{
	char buf[48];
	snprintf(buf, sizeof buf, "%" PRIu32 "x%" PRIu32 "x%" PRIu32, x, y, z);
	pw_json_kv_string(j, key, buf);
}

/* "cudaLaunchKernel: <kernel>", the kernel cut to TRACE_KERNEL_MAX bytes (not inside a UTF-8 sequence). */
static void write_launch_name(struct pw_json *j, const char *call, const struct pw_raw_event *e)
{
	char buf[64 + TRACE_KERNEL_MAX + 4];
	size_t len = e->str ? e->str_len : 0;
	if (!e->str) {
		snprintf(buf, sizeof buf, "%s", call);
		pw_json_string(j, buf);
		return;
	}
	if (len > TRACE_KERNEL_MAX) {
		len = TRACE_KERNEL_MAX;
		while (len > 0 && ((unsigned char)e->str[len] & 0xc0) == 0x80)
			len--;
	}
	int n = snprintf(buf, sizeof buf, "%s: ", call);
	if (n < 0 || (size_t)n >= sizeof buf)
		n = 0;
	memcpy(buf + n, e->str, len);
	size_t total = (size_t)n + len;
	if (len < e->str_len) {
		memcpy(buf + total, "...", 3);
		total += 3;
	}
	pw_json_string_n(j, buf, total);
}

static const char *copy_dir_name(unsigned dir)
{
	static const char *const dirs[] = {"HtoH", "HtoD", "DtoH", "DtoD", "default", "PtoP"};
	return dir < sizeof dirs / sizeof dirs[0] ? dirs[dir] : "unknown";
}

/* The arguments of a GPU library call that say what it did. */
static void write_api_args(struct pw_json *j, const struct pw_raw_event *e)
{
	const struct pw_rec_api *a = (const struct pw_rec_api *)e->rec;
	uint16_t ev = a->c.h.type;
	const struct pw_event_info *info = &pw_events[ev];
	char buf[160];
	switch (info->kind) {
	case PW_K_GPU_LAUNCH:
		kv_dims(j, "grid", (uint32_t)a->a[0], (uint32_t)(a->a[0] >> 32), (uint32_t)a->a[1]);
		kv_dims(j, "block", (uint32_t)(a->a[1] >> 32), (uint32_t)a->a[2], (uint32_t)(a->a[2] >> 32));
		if (a->sub)
			pw_json_kv_uint(j, "shared_bytes", a->sub);
		break;
	case PW_K_GPU_MEMCPY: {
		unsigned dir = a->sub & PW_COPY_DIR_MASK;
		pw_json_kv_uint(j, "bytes", a->c.arg0);
		pw_json_kv_string(j, "kind", copy_dir_name(dir));
		if (a->sub & PW_API_ASYNC)
			kv_true(j, "async");
		if (dir == PW_COPY_PEER) {
			pw_json_kv_int(j, "dst_device", (int32_t)(uint32_t)a->a[2]);
			pw_json_kv_int(j, "src_device", (int32_t)(uint32_t)(a->a[2] >> 32));
		}
		break;
	}
	case PW_K_GPU_MEMSET:
		pw_json_kv_uint(j, "bytes", a->c.arg0);
		if (a->sub & PW_API_ASYNC)
			kv_true(j, "async");
		break;
	case PW_K_GPU_ALLOC:
		pw_json_kv_uint(j, "bytes", a->c.arg0);
		kv_hex(j, "address", a->c.arg1);
		pw_json_kv_string(j, "memory", pw_gpu_mem_name(a->sub));
		break;
	case PW_K_GPU_FREE:
		kv_hex(j, "address", a->c.arg1);
		pw_json_kv_string(j, "memory", pw_gpu_mem_name(a->sub));
		break;
	case PW_K_GEMM:
		pw_json_kv_uint(j, "m", a->a[0]);
		pw_json_kv_uint(j, "n", a->a[1]);
		pw_json_kv_uint(j, "k", a->a[2]);
		pw_json_kv_uint(j, "batch", a->a[3]);
		pw_cuda_format_dtype(buf, sizeof buf, a->sub & 0xff);
		pw_json_kv_string(j, "dtype", buf);
		snprintf(buf, sizeof buf, "%s%s", pw_cublas_op_name(a->sub >> 8 & 0xff),
			 pw_cublas_op_name(a->sub >> 16 & 0xff));
		pw_json_kv_string(j, "trans", buf);
		break;
	case PW_K_DNN:
		if (ev == PW_EV_CUDNN_BACKEND_EXECUTE) {
			pw_cudnn_format_ops(buf, sizeof buf, a->c.arg0);
			pw_json_kv_string(j, "ops", buf);
		}
		break;
	case PW_K_COLL: {
		uint64_t nranks;
		const char *dtype = pw_nccl_dtype_name(a->sub & 0xff);
		pw_json_kv_uint(j, "count", a->c.arg0);
		pw_json_kv_uint(j, "bytes", pw_coll_bytes(a, &nranks));
		pw_json_kv_string(j, "dtype", dtype ? dtype : "unknown");
		if (ev == PW_EV_NCCL_ALL_REDUCE || ev == PW_EV_NCCL_REDUCE || ev == PW_EV_NCCL_REDUCE_SCATTER)
			pw_json_kv_string(j, "op", pw_nccl_redop_name(a->sub >> 8 & 0xff));
		if ((uint32_t)a->a[2])
			pw_json_kv_uint(j, "nranks", (uint32_t)a->a[2]);
		if ((int64_t)a->a[1] >= 0)
			pw_json_kv_int(j, ev == PW_EV_NCCL_SEND || ev == PW_EV_NCCL_RECV ? "peer" : "root", (int64_t)a->a[1]);
		break;
	}
	case PW_K_COMM:
		if ((uint32_t)a->a[2]) {
			pw_json_kv_uint(j, "nranks", (uint32_t)a->a[2]);
			pw_json_kv_uint(j, "rank", (uint32_t)(a->a[2] >> 32));
		}
		break;
	default:
		break;
	}
	if (a->device >= 0)
		pw_json_kv_int(j, "device", a->device);
	if (a->stream)
		kv_hex(j, "stream", a->stream);
	if (a->c.h.err) {
		pw_gpu_format_status(buf, sizeof buf, info->domain, a->c.ret);
		pw_json_kv_string(j, "status", buf);
	}
}

/* "stack":[...] in an event's args, when it carried one. */
static void write_stack(struct trace *t, const struct pw_raw_event *e)
{
	uint32_t id = pw_stacks_lookup(t->stacks, e->rec->h.tid, e->t0_ns, e->stack_ref);
	if (id != PW_STACKS_NONE)
		pw_stacks_write_trace_stack(&t->j, t->r->stacks, id);
}

static void write_call(struct trace *t, const struct pw_raw_event *e, uint64_t duration)
{
	const struct pw_rec_call *rec = e->rec;
	const struct pw_event_info *info = &pw_events[rec->h.type];
	struct pw_json *j = &t->j;
	int api = pw_kind_is_api(info->kind);
	pw_json_begin_object(j);
	pw_json_key(j, "name");
	if (info->kind == PW_K_GPU_LAUNCH)
		write_launch_name(j, info->name, e);
	else
		pw_json_string(j, info->name);
	pw_json_kv_string(j, "cat", pw_domain_names[info->domain]);
	pw_json_kv_string(j, "ph", "X");
	pw_json_kv_int(j, "pid", t->proc->pid);
	pw_json_kv_uint(j, "tid", rec->h.tid);
	pw_json_kv_double(j, "ts", trace_us(t, e->t0_ns), 3);
	pw_json_kv_double(j, "dur", (double)duration / 1000.0, 3);
	pw_json_key(j, "args");
	pw_json_begin_object(j);
	if (has_fd(info->kind))
		pw_json_kv_int(j, "fd", (int64_t)rec->arg0);
	switch (info->kind) {
	case PW_K_READ:
	case PW_K_WRITE:
		pw_json_kv_uint(j, "bytes", rec->arg1);
		break;
	case PW_K_MMAP:
		pw_json_kv_uint(j, "length", rec->arg1);
		break;
	case PW_K_FORK:
		pw_json_kv_int(j, "child_pid", (int64_t)rec->arg0);
		break;
	case PW_K_WAIT:
		pw_json_kv_int(j, "pid", (int64_t)rec->arg0);
		pw_json_kv_int(j, "status", (int64_t)rec->arg1);
		break;
	case PW_K_EXIT:
		pw_json_kv_int(j, "status", (int64_t)rec->arg0);
		break;
	default:
		break;
	}
	pw_json_kv_int(j, "ret", rec->ret);
	if (api) {
		write_api_args(j, e);
		write_stack(t, e);
		pw_json_end_object(j);
		pw_json_end_object(j);
		return;
	}
	const char *fd_path = has_fd(info->kind) ? fd_paths_get(&t->fds, (int64_t)rec->arg0) : NULL;
	if (e->str) {
		pw_json_key(j, "path");
		write_path(j, e->str, e->str_len);
	} else if (fd_path) {
		pw_json_key(j, "path");
		write_path(j, fd_path, strlen(fd_path));
	}
	if (rec->h.err == PW_ERR_NO_ERRNO) {
		pw_json_kv_string(j, "error", "failed");
	} else if (rec->h.err) {
		pw_json_kv_int(j, "errno", rec->h.err);
		pw_json_kv_string(j, "error", strerror(rec->h.err));
	}
	write_stack(t, e);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

static void follow_fd(struct trace *t, const struct pw_raw_event *e)
{
	int64_t fd, from;
	int rc = 0;
	switch (pw_fd_effect_of(e, &fd, &from)) {
	case PW_FD_BIND:
		rc = fd_paths_set(&t->fds, fd, e->str, e->str_len);
		break;
	case PW_FD_UNBIND:
		rc = fd_paths_set(&t->fds, fd, NULL, 0);
		break;
	case PW_FD_COPY: {
		const char *src = fd_paths_get(&t->fds, from);
		rc = fd_paths_set(&t->fds, fd, src, src ? strlen(src) : 0);
		break;
	}
	case PW_FD_NONE:
		break;
	}
	if (rc)
		t->out_of_memory = 1;
}

/* ---- GPU activity ---- */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The kind of an activity record drawn on a stream track (kernel, copy, memset) whose times can be placed on
 * the run's timeline; PW_K_PLAIN for every other record. */
static enum pw_event_kind gpu_drawable(const struct trace *t, const struct pw_raw_event *e)
{
	enum pw_event_kind k = pw_events[e->rec->h.type].kind;
	if (k != PW_K_ACT_KERNEL && k != PW_K_ACT_MEMCPY && k != PW_K_ACT_MEMSET)
		return PW_K_PLAIN;
	if (!e->t0_ns || e->t0_ns < t->r->start_ns || e->t1_ns < e->t0_ns)
		return PW_K_PLAIN;
	return k;
}

/* About what a GPU event takes in the file, with its flow. */
static uint64_t gpu_event_bytes(const struct pw_raw_event *e)
{
	uint64_t name = e->str && pw_events[e->rec->h.type].kind == PW_K_ACT_KERNEL ? e->str_len : 0;
	return TRACE_GPU_EVENT_BYTES + (name < TRACE_GPU_NAME_MAX ? name : TRACE_GPU_NAME_MAX);
}

static unsigned device_slot(int32_t device)
{
	return device >= 0 && device < GPU_DEVICE_SLOTS ? (unsigned)device : GPU_DEVICE_SLOTS;
}

/* The viewer's pid for the GPU work of process pid on a device slot: pid and device read in decimal. */
static int64_t gpu_pid(int pid, unsigned slot)
{
	int64_t base = pid >= 0 && pid < GPU_PID_MAX ? (int64_t)pid * 100 : 0;
	return GPU_PID_BASE + base + (slot < GPU_DEVICE_SLOTS ? slot : 99);
}

static const char *act_mem_name(unsigned m)
{
	static const char *const names[] = {"unknown", "pageable", "pinned",        "device",
					    "array",   "managed",  "device static", "managed static"};
	return m < sizeof names / sizeof names[0] ? names[m] : "unknown";
}

/* The name of a CUDA call CUPTI saw, for the calls that launch work (the numbers are CUPTI's callback ids,
 * CUpti_driver_api_trace_cbid and CUpti_runtime_api_trace_cbid, which never change meaning). */
static const char *cupti_api_name(int driver, uint32_t cbid)
{
	static const struct {
		uint16_t cbid;
		uint8_t driver;
		const char *name;
	} names[] = {
		{307, 1, "cuLaunchKernel"},        {442, 1, "cuLaunchKernel_ptsz"},
		{477, 1, "cuLaunchCooperativeKernel"}, {478, 1, "cuLaunchCooperativeKernel_ptsz"},
		{514, 1, "cuGraphLaunch"},         {515, 1, "cuGraphLaunch_ptsz"},
		{652, 1, "cuLaunchKernelEx"},      {653, 1, "cuLaunchKernelEx_ptsz"},
		{211, 0, "cudaLaunchKernel"},      {214, 0, "cudaLaunchKernel_ptsz"},
		{269, 0, "cudaLaunchCooperativeKernel"}, {270, 0, "cudaLaunchCooperativeKernel_ptsz"},
		{311, 0, "cudaGraphLaunch"},       {312, 0, "cudaGraphLaunch_ptsz"},
		{430, 0, "cudaLaunchKernelExC"},   {431, 0, "cudaLaunchKernelExC_ptsz"},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].cbid == cbid && names[i].driver == !!driver)
			return names[i].name;
	return driver ? "CUDA driver call" : "CUDA runtime call";
}

/* A kernel's name as CUPTI gave it (mangled: the collector links no demangler), cut to TRACE_GPU_NAME_MAX
 * bytes (not inside a UTF-8 sequence) behind "..." when longer. */
static void write_kernel_name(struct pw_json *j, const char *s, size_t len)
{
	if (len <= TRACE_GPU_NAME_MAX) {
		pw_json_string_n(j, s, len);
		return;
	}
	char buf[TRACE_GPU_NAME_MAX + 3];
	size_t n = TRACE_GPU_NAME_MAX;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(buf, s, n);
	memcpy(buf + n, "...", 3);
	pw_json_string_n(j, buf, n + 3);
}

/* A kernel, copy or memset on its stream's track. c: its correlation's entry (NULL: none). */
static void write_gpu_event(struct trace *t, const struct pw_raw_event *e, enum pw_event_kind kind, int64_t gpid,
			    uint64_t duration, const struct corr_slot *c)
{
	const struct pw_rec_gpu *g = (const struct pw_rec_gpu *)e->rec;
	struct pw_json *j = &t->j;
	char buf[48];
	pw_json_begin_object(j);
	pw_json_key(j, "name");
	if (kind == PW_K_ACT_KERNEL && e->str) {
		write_kernel_name(j, e->str, e->str_len);
	} else if (kind == PW_K_ACT_KERNEL) {
		pw_json_string(j, "kernel (name unknown)");
	} else if (kind == PW_K_ACT_MEMCPY) {
		snprintf(buf, sizeof buf, "memcpy %s", copy_dir_name(g->c.arg1 & PW_COPY_DIR_MASK));
		pw_json_string(j, buf);
	} else {
		pw_json_string(j, "memset");
	}
	pw_json_kv_string(j, "cat", kind == PW_K_ACT_KERNEL ? "kernel" : kind == PW_K_ACT_MEMCPY ? "memcpy" : "memset");
	pw_json_kv_string(j, "ph", "X");
	pw_json_kv_int(j, "pid", gpid);
	pw_json_kv_uint(j, "tid", g->stream);
	pw_json_kv_double(j, "ts", trace_us(t, e->t0_ns), 3);
	pw_json_kv_double(j, "dur", (double)duration / 1000.0, 3);
	pw_json_key(j, "args");
	pw_json_begin_object(j);
	switch (kind) {
	case PW_K_ACT_KERNEL:
		kv_dims(j, "grid", (uint32_t)g->a[0], (uint32_t)(g->a[0] >> 32), (uint32_t)g->a[1]);
		kv_dims(j, "block", (uint32_t)(g->a[1] >> 32), (uint32_t)g->a[2], (uint32_t)(g->a[2] >> 32));
		pw_json_kv_uint(j, "registers", (uint32_t)g->c.arg0);
		pw_json_kv_uint(j, "shared_bytes", (uint32_t)(g->c.arg0 >> 32));
		break;
	case PW_K_ACT_MEMCPY:
		pw_json_kv_uint(j, "bytes", g->c.arg0);
		pw_json_kv_string(j, "kind", copy_dir_name(g->c.arg1 & PW_COPY_DIR_MASK));
		pw_json_kv_string(j, "src_memory", act_mem_name(g->c.arg1 >> 8 & 0xff));
		pw_json_kv_string(j, "dst_memory", act_mem_name(g->c.arg1 >> 16 & 0xff));
		break;
	default:
		pw_json_kv_uint(j, "bytes", g->c.arg0);
		pw_json_kv_string(j, "memory", act_mem_name(g->c.arg1 >> 32 & 0xff));
		pw_json_kv_uint(j, "value", (uint32_t)g->c.arg1);
		break;
	}
	if (kind != PW_K_ACT_KERNEL && duration)
		pw_json_kv_double(j, "GB/s", (double)g->c.arg0 / (double)duration, 2); /* bytes per ns */
	pw_json_kv_int(j, "device", g->device);
	pw_json_kv_uint(j, "stream", g->stream);
	pw_json_kv_uint(j, "correlation", g->correlation);
	if (c && c->has_ext)
		pw_json_kv_uint(j, "external_id", c->ext);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

/* One end of the arrow from a call to the GPU work it enqueued: the start binds to the slice open on its
 * thread at ts (the call, written before it), the end ("bp":"e") to the GPU event that starts at ts. */
static void write_flow(struct trace *t, int end, int64_t pid, uint32_t tid, uint64_t ts_ns, uint64_t id)
{
	struct pw_json *j = &t->j;
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", "launch");
	pw_json_kv_string(j, "cat", "launch");
	pw_json_kv_string(j, "ph", end ? "f" : "s");
	if (end)
		pw_json_kv_string(j, "bp", "e");
	pw_json_kv_uint(j, "id", id);
	pw_json_kv_int(j, "pid", pid);
	pw_json_kv_uint(j, "tid", tid);
	pw_json_kv_double(j, "ts", trace_us(t, ts_ns), 3);
	pw_json_end_object(j);
}

/* A CUDA call that CUPTI saw and no wrapped call stands for, on the thread that made it. */
static void write_api_slice(struct trace *t, const struct corr_slot *c)
{
	struct pw_json *j = &t->j;
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", cupti_api_name(c->api_driver, c->api_cbid));
	pw_json_kv_string(j, "cat", "cupti");
	pw_json_kv_string(j, "ph", "X");
	pw_json_kv_int(j, "pid", t->proc->pid);
	pw_json_kv_uint(j, "tid", c->api_tid);
	pw_json_kv_double(j, "ts", trace_us(t, c->api_t0), 3);
	pw_json_kv_double(j, "dur", (double)(c->api_t1 - c->api_t0) / 1000.0, 3);
	pw_json_key(j, "args");
	pw_json_begin_object(j);
	pw_json_kv_string(j, "api", c->api_driver ? "driver" : "runtime");
	pw_json_kv_uint(j, "cbid", c->api_cbid);
	pw_json_kv_uint(j, "correlation", c->corr);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

/* Pass 0, over every image of the rank: the duration histograms of calls and of GPU work, and how many GPU
 * events each image has to draw. */
static void scan_event(void *ctx, const struct pw_raw_event *e)
{
	struct trace *t = ctx;
	uint16_t type = e->rec->h.type;
	if (type >= PW_EV_COUNT)
		return;
	enum pw_event_kind kind = pw_events[type].kind;
	uint64_t duration = event_duration(e);
	if (!pw_kind_is_activity(kind)) {
		if (pw_event_is_call(type) && !e->outside)
			t->histogram[pw_duration_bucket(duration)]++;
		return;
	}
	t->gpu_records++;
	if (kind == PW_K_ACT_DROPPED)
		t->gpu_dropped = add_sat(t->gpu_dropped, e->rec->arg0);
	if (kind != PW_K_ACT_KERNEL && kind != PW_K_ACT_MEMCPY && kind != PW_K_ACT_MEMSET)
		return;
	if (gpu_drawable(t, e) == PW_K_PLAIN) {
		t->gpu_unplaced++;
		return;
	}
	unsigned b = pw_duration_bucket(duration);
	t->gpu_histogram[b]++;
	t->gpu_bytes[b] = add_sat(t->gpu_bytes[b], gpu_event_bytes(e));
	t->proc_gpu_events[t->proc_index]++;
}

/* Pass 1: the correlation ids of the GPU events the writing pass will keep (its decisions replayed from the
 * same state), and the devices' names. */
static void collect_kept(void *ctx, const struct pw_raw_event *e)
{
	struct trace *t = ctx;
	struct gpu_proc *gp = &t->g;
	if (e->rec->h.type >= PW_EV_COUNT || !pw_kind_is_activity(pw_events[e->rec->h.type].kind))
		return;
	const struct pw_rec_gpu *g = (const struct pw_rec_gpu *)e->rec;
	if (pw_events[g->c.h.type].kind == PW_K_ACT_DEVICE) {
		unsigned slot = device_slot(g->device);
		if (slot < GPU_DEVICE_SLOTS && e->str && e->str_len && !gp->device_names[slot]) {
			size_t n = e->str_len < TRACE_DEVICE_NAME_MAX ? e->str_len : TRACE_DEVICE_NAME_MAX;
			if (!(gp->device_names[slot] = strndup(e->str, n)))
				t->out_of_memory = 1;
		}
		return;
	}
	if (gpu_drawable(t, e) == PW_K_PLAIN || !keep_event(&t->gpu_replay, event_duration(e)) || !g->correlation ||
	    index_find(&gp->corr_ix, g->correlation) != NONE)
		return;
	struct corr_slot *corrs = grow(gp->corrs, &gp->corrs_cap, gp->ncorrs + 1, sizeof *corrs);
	if (corrs)
		gp->corrs = corrs;
	if (!corrs || index_put(&gp->corr_ix, g->correlation, (uint32_t)gp->ncorrs)) {
		t->out_of_memory = 1;
		return;
	}
	gp->corrs[gp->ncorrs++] = (struct corr_slot){.corr = g->correlation};
}

/* Pass 2: what enqueued the work of those correlation ids: the external id of the wrapped call (EXTCORR),
 * and the CUDA call CUPTI saw. The first record of each wins. */
static void join_launchers(void *ctx, const struct pw_raw_event *e)
{
	struct trace *t = ctx;
	struct gpu_proc *gp = &t->g;
	if (e->rec->h.type >= PW_EV_COUNT)
		return;
	enum pw_event_kind kind = pw_events[e->rec->h.type].kind;
	if (kind != PW_K_ACT_EXTCORR && kind != PW_K_ACT_API)
		return;
	const struct pw_rec_gpu *g = (const struct pw_rec_gpu *)e->rec;
	uint32_t i = index_find(&gp->corr_ix, g->correlation);
	if (i == NONE)
		return;
	struct corr_slot *c = &gp->corrs[i];
	if (kind == PW_K_ACT_EXTCORR) {
		if (!c->has_ext && g->c.arg0) {
			c->has_ext = 1;
			c->ext = g->c.arg0;
		}
	} else if (!c->has_api) {
		c->has_api = 1;
		c->api_driver = g->c.arg1 == PW_ACT_API_DRIVER;
		c->api_tid = (uint32_t)g->a[0];
		c->api_cbid = (uint32_t)g->c.arg0;
		c->api_t0 = e->t0_ns;
		c->api_t1 = e->t1_ns;
	}
}

/* After pass 2: one entry per external id for the writing pass to fill. */
static void prepare_launches(struct trace *t)
{
	struct gpu_proc *gp = &t->g;
	for (size_t i = 0; i < gp->ncorrs; i++) {
		const struct corr_slot *c = &gp->corrs[i];
		if (c->has_api)
			gp->need_spans = 1;
		if (!c->has_ext || index_find(&gp->launch_ix, c->ext) != NONE)
			continue;
		struct launch_slot *launches =
			grow(gp->launches, &gp->launches_cap, gp->nlaunches + 1, sizeof *launches);
		if (launches)
			gp->launches = launches;
		if (!launches || index_put(&gp->launch_ix, c->ext, (uint32_t)gp->nlaunches)) {
			t->out_of_memory = 1;
			return;
		}
		gp->launches[gp->nlaunches++] = (struct launch_slot){.ext = c->ext};
	}
}

/* Pass 3, a GPU library call: where the call of an external id is and whether it was written; the written
 * calls' spans. */
static void note_gpu_call(struct trace *t, const struct pw_raw_event *e, int written)
{
	struct gpu_proc *gp = &t->g;
	const struct pw_rec_api *a = (const struct pw_rec_api *)e->rec;
	uint32_t i = a->corr ? index_find(&gp->launch_ix, a->corr) : NONE;
	if (i != NONE && !gp->launches[i].found) {
		struct launch_slot *l = &gp->launches[i];
		l->found = 1;
		l->written = (uint8_t)written;
		l->tid = a->c.h.tid;
		l->t0 = e->t0_ns;
	}
	if (!written || !gp->need_spans)
		return;
	struct api_span *spans = grow(gp->spans, &gp->spans_cap, gp->nspans + 1, sizeof *spans);
	if (!spans) {
		t->out_of_memory = 1;
		return;
	}
	gp->spans = spans;
	gp->spans[gp->nspans++] = (struct api_span){a->c.h.tid, e->t0_ns, e->t1_ns, 0};
}

/* Pass 3, an activity record: kernels, copies and memsets kept or folded into their stream's track. */
static void write_or_fold_gpu(struct trace *t, const struct pw_raw_event *e)
{
	struct gpu_proc *gp = &t->g;
	enum pw_event_kind kind = gpu_drawable(t, e);
	if (kind == PW_K_PLAIN)
		return;
	const struct pw_rec_gpu *g = (const struct pw_rec_gpu *)e->rec;
	unsigned slot = device_slot(g->device);
	uint64_t key = (uint64_t)slot << 32 | g->stream;
	uint32_t si = index_find(&gp->stream_ix, key);
	if (si == NONE) {
		struct stream_stat *streams = grow(gp->streams, &gp->streams_cap, gp->nstreams + 1, sizeof *streams);
		if (streams)
			gp->streams = streams;
		if (!streams || index_put(&gp->stream_ix, key, (uint32_t)gp->nstreams)) {
			t->out_of_memory = 1;
			return;
		}
		si = (uint32_t)gp->nstreams++;
		gp->streams[si] = (struct stream_stat){.slot = slot, .stream = g->stream, .first_ns = UINT64_MAX};
	}
	struct stream_stat *s = &gp->streams[si];
	if (e->t0_ns < s->first_ns)
		s->first_ns = e->t0_ns;
	if (e->t1_ns > s->last_ns)
		s->last_ns = e->t1_ns;
	uint64_t duration = event_duration(e);
	if (!keep_event(&t->gpu, duration)) {
		s->folded++;
		s->folded_ns = add_sat(s->folded_ns, duration);
		t->gpu_folded++;
		return;
	}
	uint32_t ci = index_find(&gp->corr_ix, g->correlation);
	const struct corr_slot *c = ci != NONE ? &gp->corrs[ci] : NULL;
	int64_t gpid = gpu_pid(t->proc->pid, slot);
	write_gpu_event(t, e, kind, gpid, duration, c);
	t->gpu_kept++;
	if (!c)
		return;
	struct pending_flow *pending = grow(gp->pending, &gp->pending_cap, gp->npending + 1, sizeof *pending);
	if (!pending) {
		t->out_of_memory = 1;
		return;
	}
	gp->pending = pending;
	gp->pending[gp->npending++] = (struct pending_flow){g->correlation, g->stream, gpid, e->t0_ns};
}

/* NVTX: push/pop ranges as complete slices on the thread's track, drawn at their pop (they nest per
 * thread), start/end as async slices (b/e, by range id), marks as instants. */
static void write_range(struct trace *t, const struct pw_raw_event *e, enum pw_event_kind kind)
{
	const struct pw_rec_call *rec = e->rec;
	struct pw_json *j = &t->j;
	if (kind == PW_K_NVTX_NAME || kind == PW_K_CAPTURE)
		return;
	if (t->range_events >= PW_TRACE_MAX_RANGE_EVENTS) {
		t->ranges_not_drawn++;
		return;
	}
	char name[128] = "";
	if (e->str)
		snprintf(name, sizeof name, "%.*s", (int)e->str_len, e->str);
	const struct pw_rec_range *rr = (const struct pw_rec_range *)rec;
	uint64_t t0_ns = e->t0_ns, category = rec->arg0 >> 32, payload = rr->payload;
	uint32_t payload_type = rr->payload_type;
	if (kind == PW_K_RANGE_PUSH) { /* drawn at its pop, as one slice */
		if (t->npushes < PW_TRACE_OPEN_STARTS) {
			struct open_push *o = &t->pushes[t->npushes++];
			*o = (struct open_push){rec->h.tid, (uint32_t)rec->arg0, e->t0_ns, category, payload, payload_type, ""};
			memcpy(o->name, name, sizeof name);
		} else {
			t->ranges_not_drawn++;
		}
		return;
	}
	if (kind == PW_K_RANGE_POP) {
		size_t i = t->npushes;
		while (i-- > 0 && !(t->pushes[i].tid == rec->h.tid && t->pushes[i].domain == (uint32_t)rec->arg0))
			;
		if (i == (size_t)-1) /* its push was not recorded (before the window) */
			return;
		t0_ns = t->pushes[i].t0_ns;
		category = t->pushes[i].category;
		payload = t->pushes[i].payload;
		payload_type = t->pushes[i].payload_type;
		memcpy(name, t->pushes[i].name, sizeof name);
		memmove(&t->pushes[i], &t->pushes[i + 1], (t->npushes - i - 1) * sizeof *t->pushes);
		t->npushes--;
	}
	const char *ph = kind == PW_K_RANGE_POP ? "X" : kind == PW_K_MARK ? "i" : kind == PW_K_RANGE_START ? "b" : "e";
	if (kind == PW_K_RANGE_START && t->nstarts < PW_TRACE_OPEN_STARTS) {
		t->starts[t->nstarts].id = (uint64_t)rec->ret;
		memcpy(t->starts[t->nstarts++].name, name, sizeof name);
	} else if (kind == PW_K_RANGE_END) {
		size_t i = 0;
		while (i < t->nstarts && t->starts[i].id != (uint64_t)rec->ret)
			i++;
		if (i == t->nstarts) { /* its start was not drawn */
			t->ranges_not_drawn++;
			return;
		}
		memcpy(name, t->starts[i].name, sizeof name);
		t->starts[i] = t->starts[--t->nstarts];
	}
	t->range_events++;
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", name);
	pw_json_kv_string(j, "cat", "nvtx");
	pw_json_kv_string(j, "ph", ph);
	pw_json_kv_int(j, "pid", t->proc->pid);
	pw_json_kv_uint(j, "tid", rec->h.tid);
	pw_json_kv_double(j, "ts", trace_us(t, t0_ns), 3);
	if (kind == PW_K_RANGE_POP)
		pw_json_kv_double(j, "dur", (double)(e->t0_ns > t0_ns ? e->t0_ns - t0_ns : 0) / 1000.0, 3);
	if (kind == PW_K_MARK)
		pw_json_kv_string(j, "s", "t");
	if (kind == PW_K_RANGE_START || kind == PW_K_RANGE_END)
		kv_hex(j, "id", (uint64_t)rec->ret);
	if (kind != PW_K_RANGE_END) {
		pw_json_key(j, "args");
		pw_json_begin_object(j);
		pw_json_kv_uint(j, "domain", (uint32_t)rec->arg0);
		pw_json_kv_uint(j, "category", category);
		if (payload_type)
			pw_json_kv_uint(j, "payload", payload);
		pw_json_end_object(j);
	}
	pw_json_end_object(j);
}

/* A CPU sample: an instant on its thread with its stack, up to PW_TRACE_MAX_SAMPLE_EVENTS. */
static void write_sample(struct trace *t, const struct pw_raw_event *e)
{
	uint32_t id = pw_stacks_lookup(t->stacks, e->rec->h.tid, e->t0_ns, e->stack_ref);
	if (id == PW_STACKS_NONE) /* unreadable: the report counts it */
		return;
	if (t->samples_drawn >= PW_TRACE_MAX_SAMPLE_EVENTS) {
		t->samples_not_drawn++;
		return;
	}
	t->samples_drawn++;
	struct pw_json *j = &t->j;
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", "cpu sample");
	pw_json_kv_string(j, "cat", "cpu");
	pw_json_kv_string(j, "ph", "i");
	pw_json_kv_string(j, "s", "t");
	pw_json_kv_int(j, "pid", t->proc->pid);
	pw_json_kv_uint(j, "tid", e->rec->h.tid);
	pw_json_kv_double(j, "ts", trace_us(t, e->t0_ns), 3);
	pw_json_key(j, "args");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "period_ns", e->rec->arg0);
	pw_stacks_write_trace_stack(j, t->r->stacks, id);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

static void write_or_fold(void *ctx, const struct pw_raw_event *e)
{
	struct trace *t = ctx;
	const struct pw_rec_call *rec = e->rec;
	if (rec->h.type >= PW_EV_COUNT)
		return;
	enum pw_event_kind kind = pw_events[rec->h.type].kind;
	if (pw_kind_is_activity(kind)) {
		write_or_fold_gpu(t, e);
		return;
	}
	if (pw_kind_is_range(kind) || kind == PW_K_NVTX_NAME || kind == PW_K_CAPTURE) {
		write_range(t, e, kind);
		return;
	}
	if (e->outside) { /* outside the capture window: only what names descriptors */
		follow_fd(t, e);
		return;
	}
	if (kind == PW_K_SAMPLE) {
		write_sample(t, e);
		return;
	}
	if (!pw_event_is_call(rec->h.type)) {
		follow_fd(t, e);
		return;
	}
	struct thread_stat *th = thread_get(&t->threads, rec->h.tid);
	if (!th) {
		t->out_of_memory = 1;
		return;
	}
	uint64_t duration = event_duration(e);
	if (e->t0_ns < th->first_ns)
		th->first_ns = e->t0_ns;
	if (e->t1_ns > th->last_ns)
		th->last_ns = e->t1_ns;
	int keep = keep_event(&t->calls, duration);
	if (keep) {
		write_call(t, e, duration);
		t->kept++;
	} else {
		th->folded++;
		th->folded_ns += duration;
		t->folded++;
	}
	if (t->g.active && pw_kind_is_api(kind))
		note_gpu_call(t, e, keep);
	follow_fd(t, e); /* after writing, so that a close still shows what it closed */
}

static int compare_spans(const void *a, const void *b)
{
	const struct api_span *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* Whether a written GPU library call of thread tid covers [t0, t1] (spans sorted, reach set). */
static int span_covers(const struct gpu_proc *gp, uint32_t tid, uint64_t t0, uint64_t t1)
{
	size_t lo = 0, hi = gp->nspans;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct api_span *s = &gp->spans[mid];
		if (s->tid < tid || (s->tid == tid && s->t0 <= t0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && gp->spans[lo - 1].tid == tid && gp->spans[lo - 1].reach >= t1;
}

/* After the writing pass: the flows of the GPU events written, from the wrapped call that enqueued each
 * when it was written, else from the CUDA call CUPTI saw (a slice of its own when no written GPU library
 * call covers it). Written after every slice they bind to. */
static void write_flows(struct trace *t)
{
	struct gpu_proc *gp = &t->g;
	if (gp->nspans) {
		qsort(gp->spans, gp->nspans, sizeof *gp->spans, compare_spans);
		for (size_t i = 0; i < gp->nspans; i++) {
			struct api_span *s = &gp->spans[i];
			s->reach = s->t1;
			if (i > 0 && gp->spans[i - 1].tid == s->tid && gp->spans[i - 1].reach > s->reach)
				s->reach = gp->spans[i - 1].reach;
		}
	}
	for (size_t i = 0; i < gp->npending; i++) {
		const struct pending_flow *p = &gp->pending[i];
		uint32_t ci = index_find(&gp->corr_ix, p->corr);
		if (ci == NONE)
			continue;
		struct corr_slot *c = &gp->corrs[ci];
		uint32_t li = c->has_ext ? index_find(&gp->launch_ix, c->ext) : NONE;
		uint32_t tid;
		uint64_t ts;
		if (li != NONE && gp->launches[li].found) {
			if (!gp->launches[li].written)
				continue; /* folded: the arrow would point at nothing */
			tid = gp->launches[li].tid;
			ts = gp->launches[li].t0;
		} else if (c->has_api && c->api_tid && c->api_t0 >= t->r->start_ns && c->api_t1 >= c->api_t0) {
			if (!c->api_drawn && !span_covers(gp, c->api_tid, c->api_t0, c->api_t1)) {
				struct thread_stat *th = thread_get(&t->threads, c->api_tid);
				if (!th) {
					t->out_of_memory = 1;
					return;
				}
				if (c->api_t0 < th->first_ns)
					th->first_ns = c->api_t0;
				if (c->api_t1 > th->last_ns)
					th->last_ns = c->api_t1;
				write_api_slice(t, c);
				c->api_drawn = 1;
				t->api_slices++;
			}
			tid = c->api_tid;
			ts = c->api_t0;
		} else {
			continue;
		}
		uint64_t id = ++t->next_flow_id;
		write_flow(t, 0, t->proc->pid, tid, ts, id);
		write_flow(t, 1, p->gpu_pid, p->stream, p->ts_ns, id);
		t->flows++;
	}
}

static void write_metadata(struct pw_json *j, const char *what, int pid, uint32_t tid, const char *name)
{
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", what);
	pw_json_kv_string(j, "ph", "M");
	pw_json_kv_int(j, "pid", pid);
	pw_json_kv_uint(j, "tid", tid);
	pw_json_key(j, "args");
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", name);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

/* The slice that stands for the events of a track that were folded: it starts 1 ns before the track's first
 * event (a viewer that meets a kept event and this slice at the same ts, kept event first, would take them
 * for overlapping instead of nested) and ends with its last. */
static void write_folded(struct trace *t, const char *name, const char *cat, int64_t pid, uint32_t tid,
			 uint64_t first_ns, uint64_t last_ns, uint64_t count, uint64_t total_ns)
{
	struct pw_json *j = &t->j;
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", name);
	pw_json_kv_string(j, "cat", cat);
	pw_json_kv_string(j, "ph", "X");
	pw_json_kv_int(j, "pid", pid);
	pw_json_kv_uint(j, "tid", tid);
	uint64_t start = first_ns ? first_ns - 1 : 0;
	pw_json_kv_double(j, "ts", trace_us(t, start), 3);
	pw_json_kv_double(j, "dur", last_ns > start ? (double)(last_ns - start) / 1000.0 : 0.0, 3);
	pw_json_key(j, "args");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "count", count);
	pw_json_kv_uint(j, "total_ns", total_ns);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

/* Thread names, the slices that stand for each thread's folded calls, and the instant the image ended. */
static void write_process_tracks(struct trace *t)
{
	const struct pw_proc *p = t->proc;
	struct pw_json *j = &t->j;
	for (size_t i = 0; i < t->threads.cap; i++) {
		const struct thread_stat *th = &t->threads.slots[i];
		if (!th->used)
			continue;
		write_metadata(j, "thread_name", p->pid, th->tid, th->tid == (uint32_t)p->pid ? "main" : "thread");
		if (!th->folded)
			continue;
		char name[96];
		snprintf(name, sizeof name, "folded: %" PRIu64 " calls < %s", th->folded, t->threshold_text);
		write_folded(t, name, "profwrap", p->pid, th->tid, th->first_ns, th->last_ns, th->folded,
			     th->folded_ns);
	}
	if (p->end_ns) {
		char how[256];
		pw_format_end(how, sizeof how, p);
		pw_json_begin_object(j);
		pw_json_kv_string(j, "name", how);
		pw_json_kv_string(j, "cat", "process");
		pw_json_kv_string(j, "ph", "i");
		pw_json_kv_string(j, "s", "p");
		pw_json_kv_int(j, "pid", p->pid);
		pw_json_kv_int(j, "tid", p->pid);
		pw_json_kv_double(j, "ts", trace_us(t, p->end_ns), 3);
		pw_json_end_object(j);
	}
}

/* The image's GPU groups ("GPU <d> <name> (pid N)"), their stream tracks, and the slices that stand for
 * each stream's folded GPU events. */
static void write_gpu_tracks(struct trace *t)
{
	const struct gpu_proc *gp = &t->g;
	int pid = t->proc->pid;
	uint64_t named[2] = {0, 0}; /* per device slot, 0..GPU_DEVICE_SLOTS */
	for (size_t i = 0; i < gp->nstreams; i++) {
		const struct stream_stat *s = &gp->streams[i];
		int64_t gpid = gpu_pid(pid, s->slot);
		char name[64 + TRACE_DEVICE_NAME_MAX];
		if (!(named[s->slot / 64] & (uint64_t)1 << (s->slot % 64))) {
			named[s->slot / 64] |= (uint64_t)1 << (s->slot % 64);
			const char *dev = s->slot < GPU_DEVICE_SLOTS ? gp->device_names[s->slot] : NULL;
			if (s->slot >= GPU_DEVICE_SLOTS)
				snprintf(name, sizeof name, "GPU ? (pid %d)", pid);
			else if (dev)
				snprintf(name, sizeof name, "GPU %u %s (pid %d)", s->slot, dev, pid);
			else
				snprintf(name, sizeof name, "GPU %u (pid %d)", s->slot, pid);
			write_metadata(&t->j, "process_name", (int)gpid, (uint32_t)gpid, name);
		}
		snprintf(name, sizeof name, "stream %" PRIu32, s->stream);
		write_metadata(&t->j, "thread_name", (int)gpid, s->stream, name);
		if (!s->folded)
			continue;
		snprintf(name, sizeof name, "folded: %" PRIu64 " GPU events < %s", s->folded, t->gpu_threshold_text);
		write_folded(t, name, "gpu", gpid, s->stream, s->first_ns, s->last_ns, s->folded, s->folded_ns);
	}
}

/* Basename of the first word of argv ("python3" for "/usr/bin/python3 train.py"), else of exe. */
static void program_name(char *buf, size_t len, const struct pw_proc *p)
{
	const char *s = p->argv && *p->argv ? p->argv : p->exe ? p->exe : "?";
	size_t n = strcspn(s, " ");
	const char *slash = memrchr(s, '/', n);
	if (slash && slash + 1 < s + n) {
		n -= (size_t)(slash + 1 - s);
		s = slash + 1;
	}
	snprintf(buf, len, "%.*s", (int)n, s);
}

static int compare_images(const void *a, const void *b, void *ctx)
{
	const struct pw_proc *procs = ctx;
	const struct pw_proc *pa = &procs[*(const size_t *)a], *pb = &procs[*(const size_t *)b];
	if (pa->pid != pb->pid)
		return pa->pid < pb->pid ? -1 : 1;
	if (pa->start_ns != pb->start_ns)
		return pa->start_ns < pb->start_ns ? -1 : 1;
	return pa->image < pb->image ? -1 : pa->image > pb->image;
}

/* One process_name per pid, naming its images in the order they started: "sh -> python3 (1234)".
 * Returns 0 or -1 when out of memory. */
static int write_process_names(struct pw_json *j, const struct pw_rank_report *r)
{
	size_t *order = malloc((r->nprocs ? r->nprocs : 1) * sizeof *order);
	if (!order)
		return -1;
	for (size_t i = 0; i < r->nprocs; i++)
		order[i] = i;
	qsort_r(order, r->nprocs, sizeof *order, compare_images, r->procs);
	for (size_t i = 0; i < r->nprocs;) {
		int pid = r->procs[order[i]].pid;
		char name[256] = "", prog[64];
		size_t used = 0;
		for (; i < r->nprocs && r->procs[order[i]].pid == pid; i++) {
			program_name(prog, sizeof prog, &r->procs[order[i]]);
			int n = snprintf(name + used, sizeof name - used, "%s%s", used ? " -> " : "", prog);
			if (n > 0 && (size_t)n < sizeof name - used)
				used += (size_t)n;
		}
		snprintf(name + used, sizeof name - used, " (%d)", pid);
		write_metadata(j, "process_name", pid, (uint32_t)pid, name);
	}
	free(order);
	return 0;
}

static void write_other_data(struct trace *t, const struct pw_analysis *a)
{
	const struct pw_rank_report *r = t->r;
	struct pw_json *j = &t->j;
	pw_json_key(j, "otherData");
	pw_json_begin_object(j);
	pw_json_kv_string(j, "format", "profwrap-trace");
	pw_json_kv_int(j, "version", 1);
	pw_json_kv_int(j, "rank", r->rank);
	pw_json_kv_int(j, "world_size", r->world_size);
	pw_json_kv_string(j, "host", r->host);
	pw_json_kv_string(j, "command", r->command ? r->command : a->command);
	pw_json_kv_uint(j, "start_realtime_ns", r->start_realtime_ns);
	/* calls: at most max_events, those of threshold_ns and longer first */
	pw_json_kv_uint(j, "max_events", PW_TRACE_MAX_EVENTS);
	pw_json_kv_uint(j, "folded_events", t->folded);
	pw_json_kv_uint(j, "threshold_ns", bucket_floor_ns(t->calls.bucket));
	pw_json_kv_uint(j, "kept_below_threshold", t->calls.boundary_kept);
	pw_json_kv_uint(j, "kept_events", t->kept);
	/* GPU work (kernels, copies, memsets): the same rule with a budget of its own */
	pw_json_kv_uint(j, "gpu_records", t->gpu_records);
	pw_json_kv_uint(j, "gpu_max_events", PW_TRACE_MAX_GPU_EVENTS);
	pw_json_kv_uint(j, "gpu_max_bytes", PW_TRACE_MAX_GPU_BYTES);
	pw_json_kv_uint(j, "gpu_folded_events", t->gpu_folded);
	pw_json_kv_uint(j, "gpu_threshold_ns", bucket_floor_ns(t->gpu.bucket));
	pw_json_kv_uint(j, "gpu_kept_below_threshold", t->gpu.boundary_kept);
	pw_json_kv_uint(j, "gpu_kept_events", t->gpu_kept);
	pw_json_kv_uint(j, "gpu_unplaced_events", t->gpu_unplaced);
	pw_json_kv_uint(j, "gpu_activity_dropped", t->gpu_dropped);
	pw_json_kv_uint(j, "flows", t->flows);
	pw_json_kv_uint(j, "nvtx_events", t->range_events);
	pw_json_kv_uint(j, "nvtx_not_drawn", t->ranges_not_drawn);
	pw_json_kv_uint(j, "cupti_api_slices", t->api_slices);
	pw_json_kv_uint(j, "cpu_samples_drawn", t->samples_drawn);
	pw_json_kv_uint(j, "cpu_samples_not_drawn", t->samples_not_drawn);
	pw_json_kv_uint(j, "read_errors", t->read_errors);
	if (t->read_errors)
		pw_json_kv_string(j, "first_read_error", t->first_read_error);
	pw_json_end_object(j);
}

/* Reads the raw trace of t->proc with v. Returns 0, or -1 with the reason in err. */
static int read_process(struct trace *t, const struct pw_raw_visitor *v, char *err, size_t errlen)
{
	uint64_t skipped = 0;
	if (!t->proc->raw_path)
		return 0;
	return pw_raw_read(t->proc->raw_path, v, t, &skipped, err, errlen);
}

/* Pass 0 over every image, then the keep rules. Returns 0, or -1 when out of memory. */
static int scan_rank(struct trace *t)
{
	const struct pw_raw_visitor v = {.event = scan_event};
	t->proc_gpu_events = calloc(t->r->nprocs ? t->r->nprocs : 1, sizeof *t->proc_gpu_events);
	if (!t->proc_gpu_events)
		return -1;
	for (size_t i = 0; i < t->r->nprocs; i++) {
		char err[sizeof t->first_read_error];
		t->proc = &t->r->procs[i];
		t->proc_index = i;
		read_process(t, &v, err, sizeof err); /* the writing pass counts the errors */
	}
	choose_rule(&t->calls, t->histogram, NULL, PW_TRACE_MAX_EVENTS, UINT64_MAX);
	choose_rule(&t->gpu, t->gpu_histogram, t->gpu_bytes, PW_TRACE_MAX_GPU_EVENTS, PW_TRACE_MAX_GPU_BYTES);
	pw_format_duration(t->threshold_text, sizeof t->threshold_text, bucket_floor_ns(t->calls.bucket));
	pw_format_duration(t->gpu_threshold_text, sizeof t->gpu_threshold_text, bucket_floor_ns(t->gpu.bucket));
	return 0;
}

/* The calls and GPU events kept, then each image's flows and tracks. A file that cannot be read is counted
 * and the others still go in. */
static void write_calls(struct trace *t)
{
	const struct pw_raw_visitor write = {.event = write_or_fold};
	const struct pw_raw_visitor collect = {.event = collect_kept};
	const struct pw_raw_visitor join = {.event = join_launchers};
	for (size_t i = 0; i < t->r->nprocs; i++) {
		char err[sizeof t->first_read_error];
		t->proc = &t->r->procs[i];
		t->proc_index = i;
		if (t->proc_gpu_events[i]) {
			t->g.active = 1;
			t->gpu_replay = t->gpu;
			read_process(t, &collect, err, sizeof err);
			read_process(t, &join, err, sizeof err);
			prepare_launches(t);
		}
		t->stacks = pw_stacks_image(t->r->stacks, t->proc);
		if (read_process(t, &write, err, sizeof err) && !t->read_errors++)
			memcpy(t->first_read_error, err, sizeof err);
		write_flows(t);
		write_process_tracks(t);
		write_gpu_tracks(t);
		free(t->threads.slots);
		t->threads = (struct thread_table){0};
		t->nstarts = 0;
		t->npushes = 0;
		fd_paths_clear(&t->fds);
		gpu_proc_clear(&t->g);
	}
}

int pw_write_rank_trace(const struct pw_analysis *a, const struct pw_rank_report *r, const char *path, char *err,
			size_t errlen)
{
	struct trace *t = calloc(1, sizeof *t);
	if (!t) {
		snprintf(err, errlen, "cannot write %s: out of memory", path);
		return -1;
	}
	t->r = r;
	if (scan_rank(t)) {
		free(t->proc_gpu_events);
		free(t);
		snprintf(err, errlen, "cannot write %s: out of memory", path);
		return -1;
	}

	FILE *f = pw_report_open(path, err, errlen);
	if (!f) {
		free(t->proc_gpu_events);
		free(t);
		return -1;
	}
	pw_json_init(&t->j, f, 2);
	pw_json_begin_object(&t->j);
	pw_json_key(&t->j, "traceEvents");
	pw_json_begin_array(&t->j);
	if (write_process_names(&t->j, r))
		t->out_of_memory = 1;
	write_calls(t);
	pw_json_end_array(&t->j);
	pw_json_kv_string(&t->j, "displayTimeUnit", "ns");
	write_other_data(t, a);
	pw_json_end_object(&t->j);
	fputc('\n', f);

	int out_of_memory = t->out_of_memory;
	free(t->proc_gpu_events);
	free(t);
	if (out_of_memory) {
		return pw_report_abandon(f, path, "out of memory", err, errlen);
	}
	return pw_report_close(f, path, err, errlen);
}
