/* OUT/rank<R>.trace.json: the rank's timeline in the Chrome trace event format (JSON object form), for
 * Perfetto UI and chrome://tracing, rendered from the model's timeline (timeline.h) alone: what it kept
 * (calls, GPU work, NVTX ranges, CPU samples, what enqueued each GPU event) is drawn, and what it folded is
 * one slice per thread or stream that says how many events there were and how long they took together.
 *
 * Processes are tracks by pid, one per thread. GPU activity is drawn beside them: each (process, device) is
 * a process of its own in the viewer, pid GPU_PID_BASE + pid * 100 + device (99 for a device id out of
 * range), named "GPU <d> <device name> (pid N)", with one track per CUPTI stream (tid = the stream id).
 *
 * Flow arrows (v1 "s"/"f" events, "f" with "bp":"e") join each drawn GPU event to the call that enqueued it:
 * the wrapped GPU library call when it is drawn (none when it was folded: the arrow would point at nothing),
 * else the CUDA call CUPTI saw, drawn as a slice of its own when no drawn GPU library call covers it. They
 * are written after the process's other events, so that every slice they bind to comes first. */
#define _GNU_SOURCE
#include "report_trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/hash_index.h"
#include "../lib/json.h"
#include "../model/call_stacks.h"
#include "../model/gpu_activity.h"
#include "../model/gpu_names.h"
#include "../model/ranges.h"
#include "../model/timeline.h"
#include "../symbols/demangle.h"
#include "report_call_stacks.h"
#include "report_format.h"

#define GPU_PID_BASE 1000000000 /* the viewer's pids of GPU groups: above any real pid */
#define GPU_PID_MAX 10000000    /* pids at or above (garbage) share the GPU pids of pid 0 */
#define GPU_DEVICE_SLOTS PW_TL_DEVICE_SLOTS

/* A drawn GPU library call: a CUDA API call inside one needs no slice of its own, and a flow starts at it.
 * reach is the latest end of the spans of the same thread up to this one, once they are sorted. */
struct api_span {
	uint32_t tid;
	uint64_t t0;
	uint64_t t1;
	uint64_t reach;
};


/* A GPU event with the call that launched it, for the GPU spans of the ranges (write_gpu_annotations). */
struct launched {
	uint32_t tid;
	uint32_t gpu; /* index into the timeline's gpus */
	uint64_t t0;  /* the launching call's start */
};

/* Where each kind of event of one image lies in the timeline's arrays (each is in image order). */
struct image_extent {
	size_t calls, calls_end, gpus, gpus_end, ranges, ranges_end, samples, samples_end;
	size_t threads, threads_end, streams, streams_end;
};

struct trace {
	struct pw_json j;
	const struct pw_rank_report *r;
	const struct pw_timeline *tl;
	const struct pw_proc *proc;          /* the process image being written */
	const struct pw_stack_image *stacks; /* its call stacks (call_stacks.h), NULL when none */
	struct image_extent *extents;        /* by timeline image */
	struct api_span *spans;              /* the image's drawn GPU library calls */
	size_t nspans, spans_cap;
	struct pw_keys drawn; /* correlation ids whose CUPTI API slice is drawn */
	struct pw_tl_launches launches; /* the image's wrapped calls that enqueued GPU work: the call carries the
					 * work's correlation id, as Kineto's runtime events do (HTA joins by it) */
	uint32_t *extra_tids; /* threads with CUPTI API slices and no call of their own */
	size_t nextra, extra_cap;
	uint64_t samples_drawn;
	uint64_t flows;
	uint64_t api_slices;
	uint64_t next_flow_id;
	uint64_t steps; /* the image's occurrences of --step-range's range so far: ProfilerStep#N */
	struct launched *launched; /* the image's GPU events with a known launching call, by its thread and start */
	size_t nlaunched, launched_cap;
	int out_of_memory;
};


/* Microseconds since the rank's start, as the format wants, keeping ns precision. */
static double trace_us(const struct trace *t, uint64_t ns)
{
	return (double)(int64_t)(ns - t->r->start_ns) / 1000.0;
}

static int64_t image_pid(const struct trace *t)
{
	return t->proc->pid;
}

/* A path of the model's file table, cut as the timeline cuts the paths it keeps (pw_tl_cut_path). */
static void write_file_path(struct pw_json *j, const char *path)
{
	char buf[PW_TL_PATH_MAX];
	size_t n;
	const char *cut = pw_tl_cut_path(path, strlen(path), buf, &n);
	pw_json_string_n(j, cut, n);
}

static int has_fd(enum pw_event_kind k)
{
	return k == PW_K_OPEN || k == PW_K_CLOSE || k == PW_K_READ || k == PW_K_WRITE || k == PW_K_MMAP ||
	       k == PW_K_STAT_FD || k == PW_K_DIR_READ;
}

static const char *copy_dir_name(unsigned dir)
{
	static const char *const dirs[] = {"HtoH", "HtoD", "DtoH", "DtoD", "default", "PtoP"};
	return dir < sizeof dirs / sizeof dirs[0] ? dirs[dir] : "unknown";
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

/* A launch's grid and block, as "XxYxZ" each. */
static void kv_dims(struct pw_json *j, const uint64_t a[3])
{
	struct pw_dims d = pw_get_dims(a);
	char buf[48];
	snprintf(buf, sizeof buf, "%" PRIu32 "x%" PRIu32 "x%" PRIu32, d.grid[0], d.grid[1], d.grid[2]);
	pw_json_kv_string(j, "grid", buf);
	snprintf(buf, sizeof buf, "%" PRIu32 "x%" PRIu32 "x%" PRIu32, d.block[0], d.block[1], d.block[2]);
	pw_json_kv_string(j, "block", buf);
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

/* The arguments of a GPU library call that say what it did. */
static void write_api_args(struct pw_json *j, const struct pw_tl_call *c, const struct pw_tl_api *a)
{
	const struct pw_event_info *info = &pw_events[c->type];
	char buf[160];
	switch (info->kind) {
	case PW_K_GPU_LAUNCH:
		kv_dims(j, a->a);
		if (a->sub)
			pw_json_kv_uint(j, "shared_bytes", a->sub);
		break;
	case PW_K_GPU_MEMCPY: {
		unsigned dir = a->sub & PW_COPY_DIR_MASK;
		pw_json_kv_uint(j, "bytes", c->arg0);
		pw_json_kv_string(j, "kind", copy_dir_name(dir));
		if (a->sub & PW_API_ASYNC)
			kv_true(j, "async");
		if (dir == PW_COPY_PEER) {
			struct pw_copy_call copy = pw_get_copy_call(a->a);
			pw_json_kv_int(j, "dst_device", copy.dst_device);
			pw_json_kv_int(j, "src_device", copy.src_device);
		}
		break;
	}
	case PW_K_GPU_MEMSET:
		pw_json_kv_uint(j, "bytes", c->arg0);
		if (a->sub & PW_API_ASYNC)
			kv_true(j, "async");
		break;
	case PW_K_GPU_ALLOC:
		pw_json_kv_uint(j, "bytes", c->arg0);
		kv_hex(j, "address", c->arg1);
		pw_json_kv_string(j, "memory", pw_gpu_mem_name(a->sub));
		break;
	case PW_K_GPU_FREE:
		kv_hex(j, "address", c->arg1);
		pw_json_kv_string(j, "memory", pw_gpu_mem_name(a->sub));
		break;
	case PW_K_GEMM: {
		struct pw_gemm gemm = pw_get_gemm(a->a, a->sub);
		pw_json_kv_uint(j, "m", gemm.m);
		pw_json_kv_uint(j, "n", gemm.n);
		pw_json_kv_uint(j, "k", gemm.k);
		pw_json_kv_uint(j, "batch", gemm.batch);
		pw_cuda_format_dtype(buf, sizeof buf, gemm.dtype);
		pw_json_kv_string(j, "dtype", buf);
		snprintf(buf, sizeof buf, "%s%s", pw_cublas_op_name(gemm.transa), pw_cublas_op_name(gemm.transb));
		pw_json_kv_string(j, "trans", buf);
		break;
	}
	case PW_K_DNN:
		if (c->type == PW_EV_CUDNN_BACKEND_EXECUTE) {
			pw_cudnn_format_ops(buf, sizeof buf, c->arg0);
			pw_json_kv_string(j, "ops", buf);
		}
		break;
	case PW_K_COLL: {
		struct pw_nccl coll = pw_get_nccl(a->a, a->sub);
		const char *dtype = pw_nccl_dtype_name(coll.dtype);
		pw_json_kv_uint(j, "count", c->arg0);
		pw_json_kv_uint(j, "bytes", a->coll_bytes);
		pw_json_kv_string(j, "dtype", dtype ? dtype : "unknown");
		if (c->type == PW_EV_NCCL_ALL_REDUCE || c->type == PW_EV_NCCL_REDUCE || c->type == PW_EV_NCCL_REDUCE_SCATTER)
			pw_json_kv_string(j, "op", pw_nccl_redop_name(coll.op));
		if (coll.nranks)
			pw_json_kv_uint(j, "nranks", coll.nranks);
		if (coll.peer >= 0)
			pw_json_kv_int(j, c->type == PW_EV_NCCL_SEND || c->type == PW_EV_NCCL_RECV ? "peer" : "root",
				       coll.peer);
		break;
	}
	case PW_K_COMM: {
		struct pw_nccl comm = pw_get_nccl(a->a, a->sub);
		if (comm.nranks) {
			pw_json_kv_uint(j, "nranks", comm.nranks);
			pw_json_kv_uint(j, "rank", comm.rank);
		}
		break;
	}
	default:
		break;
	}
	if (a->device >= 0)
		pw_json_kv_int(j, "device", a->device);
	if (a->stream)
		kv_hex(j, "stream", a->stream);
	if (c->err) {
		pw_gpu_format_status(buf, sizeof buf, info->domain, c->ret);
		pw_json_kv_string(j, "status", buf);
	}
}

/* "stack":[...] in an event's args, when it carried one. */
static void write_stack(struct trace *t, uint32_t tid, uint64_t t0_ns, uint64_t stack_ref)
{
	uint32_t id = pw_stacks_lookup(t->stacks, tid, t0_ns, stack_ref);
	if (id != PW_STACKS_NONE)
		pw_stacks_write_trace_stack(&t->j, t->r->stacks, id);
}

/* A kernel's name as Kineto writes it (HTA tells NCCL's kernels by their name): demangled. */
static void write_kernel_name(struct pw_json *j, const char *name)
{
	char demangled[4096];
	pw_json_string(j, pw_demangle(name, demangled, sizeof demangled) ? demangled : name);
}

static void write_call_path(struct trace *t, const struct pw_tl_call *c)
{
	if (c->path == PW_TL_NONE)
		return;
	pw_json_key(&t->j, "path");
	if (c->path & PW_TL_FILE)
		write_file_path(&t->j, t->r->files[c->path & ~PW_TL_FILE].path);
	else
		pw_json_string(&t->j, pw_tl_string(t->tl, c->path));
}

/* The arguments a call's kind gives meaning to. */
static void write_call_kind_args(struct pw_json *j, const struct pw_tl_call *c, enum pw_event_kind kind)
{
	if (has_fd(kind))
		pw_json_kv_int(j, "fd", (int64_t)c->arg0);
	switch (kind) {
	case PW_K_READ:
	case PW_K_WRITE:
		pw_json_kv_uint(j, "bytes", c->arg1);
		break;
	case PW_K_MMAP:
		pw_json_kv_uint(j, "length", c->arg1);
		break;
	case PW_K_FORK:
		pw_json_kv_int(j, "child_pid", (int64_t)c->arg0);
		break;
	case PW_K_WAIT:
		pw_json_kv_int(j, "pid", (int64_t)c->arg0);
		pw_json_kv_int(j, "status", (int64_t)c->arg1);
		break;
	case PW_K_EXIT:
		pw_json_kv_int(j, "status", (int64_t)c->arg0);
		break;
	default:
		break;
	}
	pw_json_kv_int(j, "ret", c->ret);
}

static void write_call(struct trace *t, const struct pw_tl_call *c, uint32_t tid)
{
	const struct pw_event_info *info = &pw_events[c->type];
	const struct pw_tl_api *a = c->api != PW_TL_NONE ? &t->tl->apis[c->api] : NULL;
	struct pw_json *j = &t->j;
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", pw_events[c->type].name); /* the launched kernel in args: Kineto's way */
	/* the CUDA runtime's calls in Kineto's category, the others by their domain */
	pw_json_kv_string(j, "cat", info->domain == PW_DOM_CUDART ? "cuda_runtime" : pw_domain_names[info->domain]);
	pw_json_kv_string(j, "ph", "X");
	pw_json_kv_int(j, "pid", image_pid(t));
	pw_json_kv_uint(j, "tid", tid);
	pw_json_kv_double(j, "ts", trace_us(t, c->t0), 3);
	pw_json_kv_double(j, "dur", (double)(c->t1 > c->t0 ? c->t1 - c->t0 : 0) / 1000.0, 3);
	pw_json_key(j, "args");
	pw_json_begin_object(j);
	if (a) {
		const char *kernel = pw_tl_string(t->tl, a->launch_name);
		if (kernel) {
			pw_json_key(j, "kernel");
			write_kernel_name(j, kernel);
		}
		const struct pw_tl_launch *l = pw_tl_launches_find(&t->launches, tid, c->t0);
		if (l) {
			pw_json_kv_uint(j, "correlation", l->corr);
			pw_json_kv_uint(j, "External id", l->corr);
		}
	}
	write_call_kind_args(j, c, info->kind);
	if (a) {
		write_api_args(j, c, a);
	} else {
		write_call_path(t, c);
		if (c->err == PW_ERR_NO_ERRNO) {
			pw_json_kv_string(j, "error", "failed");
		} else if (c->err) {
			pw_json_kv_int(j, "errno", c->err);
			pw_json_kv_string(j, "error", strerror(c->err));
		}
	}
	write_stack(t, tid, c->t0, c->stack_ref);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

/* ---- GPU work ---- */


/* A kernel, copy or memset on its stream's track. */
static void write_gpu_event(struct trace *t, const struct pw_tl_gpu *g, const struct pw_tl_stream *s)
{
	struct pw_json *j = &t->j;
	uint64_t duration = g->t1 - g->t0;
	char buf[48];
	pw_json_begin_object(j);
	pw_json_key(j, "name");
	const char *name = pw_tl_string(t->tl, g->name);
	if (g->kind == PW_K_ACT_KERNEL) {
		write_kernel_name(j, name ? name : "kernel (name unknown)");
	} else if (g->kind == PW_K_ACT_MEMCPY) {
		snprintf(buf, sizeof buf, "memcpy %s", copy_dir_name(g->arg1 & PW_COPY_DIR_MASK));
		pw_json_string(j, buf);
	} else {
		pw_json_string(j, "memset");
	}
	pw_json_kv_string(j, "cat", g->kind == PW_K_ACT_KERNEL   ? "kernel"
				    : g->kind == PW_K_ACT_MEMCPY ? "gpu_memcpy"
								 : "gpu_memset");
	pw_json_kv_string(j, "ph", "X");
	pw_json_kv_int(j, "pid", gpu_pid(t->proc->pid, s->slot));
	pw_json_kv_uint(j, "tid", s->stream);
	pw_json_kv_double(j, "ts", trace_us(t, g->t0), 3);
	pw_json_kv_double(j, "dur", (double)duration / 1000.0, 3);
	pw_json_key(j, "args");
	pw_json_begin_object(j);
	switch (g->kind) {
	case PW_K_ACT_KERNEL: {
		struct pw_kernel_use use = pw_get_kernel_use(g->arg0, 0);
		kv_dims(j, g->a);
		pw_json_kv_uint(j, "registers", use.registers);
		pw_json_kv_uint(j, "shared_bytes", use.shared_bytes);
		break;
	}
	case PW_K_ACT_MEMCPY: {
		struct pw_act_copy where = pw_get_act_memcpy(g->arg1);
		pw_json_kv_uint(j, "bytes", g->arg0);
		pw_json_kv_string(j, "kind", copy_dir_name(where.dir));
		pw_json_kv_string(j, "src_memory", act_mem_name(where.src));
		pw_json_kv_string(j, "dst_memory", act_mem_name(where.dst));
		break;
	}
	default: {
		struct pw_act_copy where = pw_get_act_memset(g->arg1);
		pw_json_kv_uint(j, "bytes", g->arg0);
		pw_json_kv_string(j, "memory", act_mem_name(where.dst));
		pw_json_kv_uint(j, "value", where.value);
		break;
	}
	}
	if (g->kind != PW_K_ACT_KERNEL && duration)
		pw_json_kv_double(j, "GB/s", (double)g->arg0 / (double)duration, 2); /* bytes per ns */
	pw_json_kv_int(j, "device", g->device);
	pw_json_kv_uint(j, "stream", s->stream);
	pw_json_kv_uint(j, "correlation", g->corr);
	pw_json_kv_uint(j, "External id", g->corr);
	if (g->has_ext)
		pw_json_kv_uint(j, "external_id", g->ext);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

/* One end of the arrow from a call to the GPU work it enqueued: the start binds to the slice open on its
 * thread at ts (the call, written before it), the end ("bp":"e") to the GPU event that starts at ts. */
static void write_flow(struct trace *t, int end, int64_t pid, uint32_t tid, uint64_t ts_ns, uint64_t id)
{
	struct pw_json *j = &t->j;
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", "ac2g"); /* Kineto's name for the arrow from a launch to its GPU work */
	pw_json_kv_string(j, "cat", "ac2g");
	pw_json_kv_string(j, "ph", end ? "f" : "s");
	if (end)
		pw_json_kv_string(j, "bp", "e");
	pw_json_kv_uint(j, "id", id);
	pw_json_kv_int(j, "pid", pid);
	pw_json_kv_uint(j, "tid", tid);
	pw_json_kv_double(j, "ts", trace_us(t, ts_ns), 3);
	pw_json_end_object(j);
}


/* A CUDA call that CUPTI saw and no drawn call stands for, on the thread that made it. */
static void write_api_slice(struct trace *t, const struct pw_tl_gpu *g)
{
	struct pw_json *j = &t->j;
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", pw_cupti_api_name(g->src_driver, g->src_cbid));
	pw_json_kv_string(j, "cat", g->src_driver ? "cuda_driver" : "cuda_runtime");
	pw_json_kv_string(j, "ph", "X");
	pw_json_kv_int(j, "pid", image_pid(t));
	pw_json_kv_uint(j, "tid", g->src_tid);
	pw_json_kv_double(j, "ts", trace_us(t, g->src_t0), 3);
	pw_json_kv_double(j, "dur", (double)(g->src_t1 - g->src_t0) / 1000.0, 3);
	pw_json_key(j, "args");
	pw_json_begin_object(j);
	pw_json_kv_string(j, "api", g->src_driver ? "driver" : "runtime");
	pw_json_kv_uint(j, "cbid", g->src_cbid);
	pw_json_kv_uint(j, "correlation", g->corr);
	pw_json_kv_uint(j, "External id", g->corr);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

static int compare_launched(const void *a, const void *b)
{
	const struct launched *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* The image's GPU events whose launching call is known, sorted by its thread and start. */
static void note_launched(struct trace *t, const struct image_extent *x)
{
	for (size_t i = x->gpus; i < x->gpus_end; i++) {
		const struct pw_tl_gpu *g = &t->tl->gpus[i];
		if (g->source == PW_ACT_SRC_NONE || !g->src_tid)
			continue;
		if (pw_reserve(&t->launched, &t->launched_cap, t->nlaunched + 1, sizeof *t->launched)) {
			t->out_of_memory = 1;
			return;
		}
		t->launched[t->nlaunched++] = (struct launched){g->src_tid, (uint32_t)i, g->src_t0};
	}
	if (t->nlaunched > 1)
		qsort(t->launched, t->nlaunched, sizeof *t->launched, compare_launched);
}

#define ANNOTATED_STREAMS 16

/* Kineto's gpu_user_annotation: for a range, on each stream that ran GPU work its thread launched inside it,
 * a slice from that work's first start to its last end (HTA's breakdowns of GPU time by annotation). */
static void write_gpu_annotations(struct trace *t, const struct pw_tl_range *r, const char *name)
{
	size_t lo = 0, hi = t->nlaunched;
	while (lo < hi) { /* the first launch of r's thread at or after r's start */
		size_t mid = lo + (hi - lo) / 2;
		const struct launched *l = &t->launched[mid];
		if (l->tid < r->tid || (l->tid == r->tid && l->t0 < r->t0))
			lo = mid + 1;
		else
			hi = mid;
	}
	struct stream_span {
		uint32_t stream;
		uint64_t t0, t1;
	} spans[ANNOTATED_STREAMS];
	size_t nspans = 0;
	for (size_t i = lo; i < t->nlaunched && t->launched[i].tid == r->tid && t->launched[i].t0 <= r->t1; i++) {
		const struct pw_tl_gpu *g = &t->tl->gpus[t->launched[i].gpu];
		size_t k = 0;
		while (k < nspans && spans[k].stream != g->stream)
			k++;
		if (k == nspans) {
			if (nspans == ANNOTATED_STREAMS)
				continue;
			spans[nspans++] = (struct stream_span){g->stream, g->t0, g->t1};
		}
		spans[k].t0 = g->t0 < spans[k].t0 ? g->t0 : spans[k].t0;
		spans[k].t1 = g->t1 > spans[k].t1 ? g->t1 : spans[k].t1;
	}
	struct pw_json *j = &t->j;
	for (size_t k = 0; k < nspans; k++) {
		const struct pw_tl_stream *s = &t->tl->streams[spans[k].stream];
		pw_json_begin_object(j);
		pw_json_kv_string(j, "name", name);
		pw_json_kv_string(j, "cat", "gpu_user_annotation");
		pw_json_kv_string(j, "ph", "X");
		pw_json_kv_int(j, "pid", gpu_pid(t->proc->pid, s->slot));
		pw_json_kv_uint(j, "tid", s->stream);
		pw_json_kv_double(j, "ts", trace_us(t, spans[k].t0), 3);
		pw_json_kv_double(j, "dur", (double)(spans[k].t1 - spans[k].t0) / 1000.0, 3);
		pw_json_end_object(j);
	}
}

/* NVTX: push/pop ranges as complete slices on the thread's track, start/end as async slices (b/e, by range
 * id), marks as instants. */
static void write_range(struct trace *t, const struct pw_tl_range *r)
{
	struct pw_json *j = &t->j;
	const char *name = pw_tl_string(t->tl, r->name);
	char ph[2] = {r->ph, '\0'};
	/* an occurrence of --step-range's range is a step as torch.profiler names one (HTA counts iterations by
	 * them); its own name goes in args */
	const char *step_name = t->r->ranges ? t->r->ranges->step_name : NULL;
	int step = r->ph == 'X' && name && step_name && strcmp(name, step_name) == 0;
	char step_label[40];
	pw_json_begin_object(j);
	if (step) {
		snprintf(step_label, sizeof step_label, "ProfilerStep#%" PRIu64, t->steps++);
		pw_json_kv_string(j, "name", step_label);
	} else {
		pw_json_kv_string(j, "name", name ? name : "");
	}
	pw_json_kv_string(j, "cat", "user_annotation"); /* Kineto's category for the program's own ranges */
	pw_json_kv_string(j, "ph", ph);
	pw_json_kv_int(j, "pid", image_pid(t));
	pw_json_kv_uint(j, "tid", r->tid);
	pw_json_kv_double(j, "ts", trace_us(t, r->t0), 3);
	if (r->ph == 'X')
		pw_json_kv_double(j, "dur", (double)(r->t1 > r->t0 ? r->t1 - r->t0 : 0) / 1000.0, 3);
	if (r->ph == 'i')
		pw_json_kv_string(j, "s", "t");
	if (r->ph == 'b' || r->ph == 'e')
		kv_hex(j, "id", r->id);
	if (r->ph != 'e') {
		pw_json_key(j, "args");
		pw_json_begin_object(j);
		if (step)
			pw_json_kv_string(j, "range", name);
		pw_json_kv_uint(j, "domain", r->domain);
		pw_json_kv_uint(j, "category", r->category);
		if (r->payload_type)
			pw_json_kv_uint(j, "payload", r->payload);
		pw_json_end_object(j);
	}
	pw_json_end_object(j);
	if (r->ph == 'X' && t->nlaunched)
		write_gpu_annotations(t, r, step ? step_label : name ? name : "");
}

/* A CPU sample: an instant on its thread with its stack (none when its stack could not be read). */
static void write_sample(struct trace *t, const struct pw_tl_sample *s)
{
	uint32_t id = pw_stacks_lookup(t->stacks, s->tid, s->t0, s->stack_ref);
	if (id == PW_STACKS_NONE) /* unreadable: the report counts it */
		return;
	t->samples_drawn++;
	struct pw_json *j = &t->j;
	pw_json_begin_object(j);
	pw_json_kv_string(j, "name", "cpu sample");
	pw_json_kv_string(j, "cat", "cpu");
	pw_json_kv_string(j, "ph", "i");
	pw_json_kv_string(j, "s", "t");
	pw_json_kv_int(j, "pid", image_pid(t));
	pw_json_kv_uint(j, "tid", s->tid);
	pw_json_kv_double(j, "ts", trace_us(t, s->t0), 3);
	pw_json_key(j, "args");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "period_ns", s->period_ns);
	pw_json_kv_uint(j, "cpu_ns", s->cpu_ns);
	pw_stacks_write_trace_stack(j, t->r->stacks, id);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

/* ---- the image's GPU library calls, for the flows ---- */

/* The wrapped calls of the image that enqueued GPU work, before its calls are written. */
static void note_launches(struct trace *t, const struct image_extent *x)
{
	for (size_t i = x->gpus; i < x->gpus_end; i++)
		if (pw_tl_launches_note(&t->launches, &t->tl->gpus[i]) < 0) {
			t->out_of_memory = 1;
			return;
		}
}

/* A drawn GPU library call. */
static void note_span(struct trace *t, uint32_t tid, const struct pw_tl_call *c)
{
	if (pw_reserve(&t->spans, &t->spans_cap, t->nspans + 1, sizeof *t->spans)) {
		t->out_of_memory = 1;
		return;
	}
	t->spans[t->nspans++] = (struct api_span){tid, c->t0, c->t1, 0};
}

static int compare_spans(const void *a, const void *b)
{
	const struct api_span *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* Sorts the spans by thread and start, each with the latest end up to it. */
static void sort_spans(struct trace *t)
{
	if (!t->nspans)
		return;
	qsort(t->spans, t->nspans, sizeof *t->spans, compare_spans);
	for (size_t i = 0; i < t->nspans; i++) {
		struct api_span *s = &t->spans[i];
		s->reach = s->t1;
		if (i > 0 && t->spans[i - 1].tid == s->tid && t->spans[i - 1].reach > s->reach)
			s->reach = t->spans[i - 1].reach;
	}
}

/* The number of spans (sorted) of thread tid that start at or before t0; the last of them is at that
 * count less one. */
static size_t spans_upto(const struct trace *t, uint32_t tid, uint64_t t0)
{
	size_t lo = 0, hi = t->nspans;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct api_span *s = &t->spans[mid];
		if (s->tid < tid || (s->tid == tid && s->t0 <= t0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether the GPU library call of thread tid that started at t0 is drawn. */
static int drawn_call(const struct trace *t, uint32_t tid, uint64_t t0)
{
	size_t n = spans_upto(t, tid, t0);
	return n > 0 && t->spans[n - 1].tid == tid && t->spans[n - 1].t0 == t0;
}

/* Whether a drawn GPU library call of thread tid covers [t0, t1]. */
static int span_covers(const struct trace *t, uint32_t tid, uint64_t t0, uint64_t t1)
{
	size_t n = spans_upto(t, tid, t0);
	return n > 0 && t->spans[n - 1].tid == tid && t->spans[n - 1].reach >= t1;
}

/* Marks corr's CUPTI API slice drawn. Returns whether it was not yet. */
static int first_draw(struct trace *t, uint32_t corr)
{
	int added;
	if (pw_keys_add(&t->drawn, corr, &added) < 0)
		t->out_of_memory = 1;
	return added;
}

/* A thread that has a CUPTI API slice: named with the others when it has no call of its own. */
static void note_api_thread(struct trace *t, const struct image_extent *x, uint32_t tid)
{
	for (size_t i = x->threads; i < x->threads_end; i++)
		if (t->tl->threads[i].tid == tid)
			return;
	for (size_t i = 0; i < t->nextra; i++)
		if (t->extra_tids[i] == tid)
			return;
	if (pw_reserve(&t->extra_tids, &t->extra_cap, t->nextra + 1, sizeof *t->extra_tids)) {
		t->out_of_memory = 1;
		return;
	}
	t->extra_tids[t->nextra++] = tid;
}

/* The flow of a drawn GPU event: from the wrapped call that enqueued it when that is drawn, else from the
 * CUDA call CUPTI saw (a slice of its own when no drawn GPU library call covers it). */
static void write_gpu_flow(struct trace *t, const struct image_extent *x, const struct pw_tl_gpu *g)
{
	if (g->source == PW_ACT_SRC_WRAPPED) {
		if (!drawn_call(t, g->src_tid, g->src_t0))
			return; /* folded: the arrow would point at nothing */
	} else if (g->source == PW_ACT_SRC_API && g->src_tid && g->src_t0 >= t->r->start_ns && g->src_t1 >= g->src_t0) {
		if (!span_covers(t, g->src_tid, g->src_t0, g->src_t1) && first_draw(t, g->corr)) {
			write_api_slice(t, g);
			note_api_thread(t, x, g->src_tid);
			t->api_slices++;
		}
	} else {
		return;
	}
	const struct pw_tl_stream *s = &t->tl->streams[g->stream];
	uint64_t id = ++t->next_flow_id;
	write_flow(t, 0, image_pid(t), g->src_tid, g->src_t0, id);
	write_flow(t, 1, gpu_pid(t->proc->pid, s->slot), s->stream, g->t0, id);
	t->flows++;
}

/* ---- tracks ---- */

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
static void write_process_tracks(struct trace *t, const struct image_extent *x)
{
	const struct pw_proc *p = t->proc;
	struct pw_json *j = &t->j;
	for (size_t i = x->threads; i < x->threads_end; i++) {
		const struct pw_tl_thread *th = &t->tl->threads[i];
		write_metadata(j, "thread_name", p->pid, th->tid, th->tid == (uint32_t)p->pid ? "main" : "thread");
		uint64_t folded = th->calls - th->kept;
		if (!folded)
			continue;
		char name[96], threshold[32];
		pw_format_duration(threshold, sizeof threshold, pw_tl_rule_threshold_ns(&t->tl->call_rule));
		snprintf(name, sizeof name, "folded: %" PRIu64 " calls < %s", folded, threshold);
		write_folded(t, name, "profwrap", p->pid, th->tid, th->first_ns, th->last_ns, folded,
			     th->calls_ns - th->kept_ns);
	}
	for (size_t i = 0; i < t->nextra; i++)
		write_metadata(j, "thread_name", p->pid, t->extra_tids[i],
			       t->extra_tids[i] == (uint32_t)p->pid ? "main" : "thread");
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
static void write_gpu_tracks(struct trace *t, const struct image_extent *x)
{
	const struct pw_tl_image *im = &t->tl->images[t->proc->timeline_image];
	int pid = t->proc->pid;
	uint64_t named[2] = {0, 0}; /* per device slot, 0..GPU_DEVICE_SLOTS */
	char threshold[32];
	pw_format_duration(threshold, sizeof threshold, pw_tl_rule_threshold_ns(&t->tl->gpu_rule));
	for (size_t i = x->streams; i < x->streams_end; i++) {
		const struct pw_tl_stream *s = &t->tl->streams[i];
		int64_t gpid = gpu_pid(pid, s->slot);
		char name[64 + 128 + 4];
		if (!(named[s->slot / 64] & (uint64_t)1 << (s->slot % 64))) {
			named[s->slot / 64] |= (uint64_t)1 << (s->slot % 64);
			const char *dev = s->slot < GPU_DEVICE_SLOTS ? pw_tl_string(t->tl, im->device_names[s->slot]) : NULL;
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
		uint64_t folded = s->events - s->kept;
		if (!folded)
			continue;
		snprintf(name, sizeof name, "folded: %" PRIu64 " GPU events < %s", folded, threshold);
		write_folded(t, name, "gpu", gpid, s->stream, s->first_ns, s->last_ns, folded, s->events_ns - s->kept_ns);
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


static uint64_t sum_folded_calls(const struct pw_timeline *tl)
{
	uint64_t n = 0;
	for (size_t i = 0; i < tl->nthreads; i++)
		n += tl->threads[i].calls - tl->threads[i].kept;
	return n;
}

static uint64_t sum_folded_gpu(const struct pw_timeline *tl)
{
	uint64_t n = 0;
	for (size_t i = 0; i < tl->nstreams; i++)
		n += tl->streams[i].events - tl->streams[i].kept;
	return n;
}

static void write_other_data(struct trace *t, const struct pw_analysis *a)
{
	const struct pw_rank_report *r = t->r;
	const struct pw_timeline *tl = t->tl;
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
	pw_json_kv_uint(j, "max_events", PW_TL_MAX_CALLS);
	pw_json_kv_uint(j, "folded_events", sum_folded_calls(tl));
	pw_json_kv_uint(j, "threshold_ns", pw_tl_rule_threshold_ns(&tl->call_rule));
	pw_json_kv_uint(j, "kept_below_threshold", pw_tl_calls_sampled(tl));
	pw_json_kv_uint(j, "kept_events", tl->ncalls);
	/* GPU work (kernels, copies, memsets): the same rule with a budget of its own */
	pw_json_kv_uint(j, "gpu_records", tl->gpu_records);
	pw_json_kv_uint(j, "gpu_max_events", PW_TL_MAX_GPU_EVENTS);
	pw_json_kv_uint(j, "gpu_max_bytes", PW_TL_MAX_GPU_BYTES);
	pw_json_kv_uint(j, "gpu_folded_events", sum_folded_gpu(tl));
	pw_json_kv_uint(j, "gpu_threshold_ns", pw_tl_rule_threshold_ns(&tl->gpu_rule));
	pw_json_kv_uint(j, "gpu_kept_below_threshold", pw_tl_gpu_sampled(tl));
	pw_json_kv_uint(j, "gpu_kept_events", tl->ngpus);
	pw_json_kv_uint(j, "gpu_unplaced_events", tl->gpu_unplaced);
	pw_json_kv_uint(j, "gpu_activity_dropped", tl->gpu_dropped);
	pw_json_kv_uint(j, "flows", t->flows);
	pw_json_kv_uint(j, "nvtx_events", tl->nranges);
	pw_json_kv_uint(j, "nvtx_not_drawn", tl->ranges_not_drawn);
	pw_json_kv_uint(j, "cupti_api_slices", t->api_slices);
	pw_json_kv_uint(j, "cpu_samples_drawn", t->samples_drawn);
	pw_json_kv_uint(j, "cpu_samples_not_drawn", tl->samples_not_drawn);
	pw_json_kv_uint(j, "strings_not_kept", tl->strings_refused);
	pw_json_kv_uint(j, "skipped_records", r->skipped); /* damaged raw files: records the reader refused */
	pw_json_end_object(j);
}

/* What PyTorch's traces say first, where tools that read them (HTA) look: the rank (the first "rank" key of
 * the file) and the GPUs, by the index their events carry in "device". */
static void write_kineto_metadata(struct trace *t)
{
	const struct pw_rank_report *r = t->r;
	struct pw_json *j = &t->j;
	if (r->rank >= 0) {
		pw_json_key(j, "distributedInfo");
		pw_json_begin_object(j);
		pw_json_key_spaced(j, "rank");
		pw_json_int(j, r->rank);
		pw_json_kv_int(j, "world_size", r->world_size > 0 ? r->world_size : 1);
		pw_json_end_object(j);
	}
	pw_json_key(j, "deviceProperties");
	pw_json_begin_array(j);
	uint64_t listed[GPU_DEVICE_SLOTS / 64 + 1] = {0};
	for (size_t i = 0; i < t->tl->nimages; i++) {
		const struct pw_tl_image *im = &t->tl->images[i];
		for (unsigned d = 0; d < GPU_DEVICE_SLOTS; d++) {
			const char *name = pw_tl_string(t->tl, im->device_names[d]);
			if (!name || listed[d / 64] & (uint64_t)1 << (d % 64))
				continue;
			listed[d / 64] |= (uint64_t)1 << (d % 64);
			pw_json_begin_object(j);
			pw_json_kv_int(j, "id", d);
			pw_json_kv_string(j, "name", name);
			pw_json_end_object(j);
		}
	}
	pw_json_end_array(j);
}

/* Where each image's events lie in the timeline's arrays (each array is in image order). */
static struct image_extent *image_extents(const struct pw_timeline *tl)
{
	struct image_extent *x = calloc(tl->nimages ? tl->nimages : 1, sizeof *x);
	if (!x)
		return NULL;
#define EXTENT(arr, n, field, image_of)                                    \
	for (size_t i = 0; i < tl->n; i++) {                               \
		struct image_extent *e = &x[image_of(tl->arr[i])];         \
		if (e->field##_end == 0)                                   \
			e->field = i;                                      \
		e->field##_end = i + 1;                                    \
	}
#define CALL_IMAGE(c) tl->threads[(c).thread].image
#define GPU_IMAGE(g) tl->streams[(g).stream].image
#define OWN_IMAGE(v) (v).image
	EXTENT(calls, ncalls, calls, CALL_IMAGE)
	EXTENT(gpus, ngpus, gpus, GPU_IMAGE)
	EXTENT(ranges, nranges, ranges, OWN_IMAGE)
	EXTENT(samples, nsamples, samples, OWN_IMAGE)
	EXTENT(threads, nthreads, threads, OWN_IMAGE)
	EXTENT(streams, nstreams, streams, OWN_IMAGE)
#undef EXTENT
#undef CALL_IMAGE
#undef GPU_IMAGE
#undef OWN_IMAGE
	return x;
}

static void clear_image_state(struct trace *t)
{
	t->nspans = 0;
	t->steps = 0;
	t->nlaunched = 0;
	pw_keys_free(&t->drawn);
	pw_tl_launches_reset(&t->launches);
	t->nextra = 0;
}

/* One process image: its calls, GPU events, ranges and samples, then the flows and the tracks. */
static void write_image(struct trace *t, const struct pw_proc *p)
{
	const struct pw_timeline *tl = t->tl;
	const struct image_extent *x = &t->extents[p->timeline_image];
	t->proc = p;
	t->stacks = pw_stacks_image(t->r->stacks, p);
	note_launches(t, x);
	for (size_t i = x->calls; i < x->calls_end; i++) {
		const struct pw_tl_call *c = &tl->calls[i];
		uint32_t tid = tl->threads[c->thread].tid;
		write_call(t, c, tid);
		if (c->api != PW_TL_NONE)
			note_span(t, tid, c);
	}
	for (size_t i = x->gpus; i < x->gpus_end; i++)
		write_gpu_event(t, &tl->gpus[i], &tl->streams[tl->gpus[i].stream]);
	note_launched(t, x);
	for (size_t i = x->ranges; i < x->ranges_end; i++)
		write_range(t, &tl->ranges[i]);
	for (size_t i = x->samples; i < x->samples_end; i++)
		write_sample(t, &tl->samples[i]);
	sort_spans(t);
	for (size_t i = x->gpus; i < x->gpus_end; i++)
		write_gpu_flow(t, x, &tl->gpus[i]);
	write_process_tracks(t, x);
	write_gpu_tracks(t, x);
	clear_image_state(t);
}

static void trace_free(struct trace *t)
{
	clear_image_state(t);
	free(t->spans);
	pw_tl_launches_free(&t->launches);
	free(t->launched);
	free(t->extra_tids);
	free(t->extents);
	free(t);
}

int pw_write_rank_trace(const struct pw_analysis *a, const struct pw_rank_report *r, const char *path, char *err,
			size_t errlen)
{
	static const struct pw_timeline empty = {.image = PW_TL_NONE};
	struct trace *t = calloc(1, sizeof *t);
	if (t) {
		t->r = r;
		t->tl = r->timeline ? r->timeline : &empty;
		t->extents = image_extents(t->tl);
	}
	if (!t || !t->extents) {
		free(t);
		snprintf(err, errlen, "cannot write %s: out of memory", path);
		return -1;
	}
	FILE *f = pw_report_open(path, err, errlen);
	if (!f) {
		trace_free(t);
		return -1;
	}
	pw_json_init(&t->j, f, 2);
	pw_json_begin_object(&t->j);
	write_kineto_metadata(t);
	pw_json_key(&t->j, "traceEvents");
	pw_json_begin_array(&t->j);
	if (write_process_names(&t->j, r))
		t->out_of_memory = 1;
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].timeline_image != PW_TL_NONE && r->procs[i].timeline_image < t->tl->nimages)
			write_image(t, &r->procs[i]);
	pw_json_end_array(&t->j);
	pw_json_kv_string(&t->j, "displayTimeUnit", "ns");
	write_other_data(t, a);
	pw_json_end_object(&t->j);
	fputc('\n', f);

	int out_of_memory = t->out_of_memory;
	trace_free(t);
	if (out_of_memory)
		return pw_report_abandon(f, path, "out of memory", err, errlen);
	return pw_report_close(f, path, err, errlen);
}
