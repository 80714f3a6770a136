/* OUT/rank<R>.trace.json: the rank's timeline in the Chrome trace event format (JSON object form), for
 * Perfetto UI and chrome://tracing.
 *
 * The raw traces keep every call, but a viewer must be able to open this file however long the run was. The
 * analysis's histogram of call durations (power-of-two buckets) gives the smallest threshold that keeps at
 * most PW_TRACE_MAX_EVENTS calls; one pass over the raw traces writes the calls at or above it, plus an
 * evenly spread sample of the bucket just below it that fills the rest of the budget, and folds the others
 * into one slice per thread that says how many there were. Paths are cut to TRACE_PATH_MAX bytes, so the
 * file stays under about 100 MB.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "gpu_analysis.h"
#include "json.h"
#include "rawfile.h"
#include "report_format.h"

#define PW_TRACE_MAX_EVENTS 300000u
#define TRACE_PATH_MAX 160     /* bytes of a path argument; longer ones keep their end */
#define FD_LIMIT (1 << 20)     /* fds above this are taken for garbage and get no path */
#define TRACE_KERNEL_MAX 120   /* bytes of a kernel name in a launch slice's name */

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

struct trace {
	struct pw_json j;
	const struct pw_rank_report *r;
	const struct pw_proc *proc; /* the process image being read */
	uint64_t histogram[PW_DURATION_BUCKETS];
	unsigned keep_bucket; /* calls in this bucket and above are written */
	/* The bucket below keep_bucket fills what is left of the budget: every k-th of its calls, spread over
	 * the run, so a run of calls that all take about as long is sampled rather than dropped whole. */
	uint64_t boundary_total;
	uint64_t boundary_budget;
	uint64_t boundary_seen;
	uint64_t boundary_kept;
	char threshold_text[32];
	uint64_t kept;
	uint64_t folded;
	struct thread_table threads;
	struct fd_paths fds;
	int out_of_memory;
	uint64_t read_errors;
	char first_read_error[512];
};

/* The smallest bucket such that the calls from it up number at most PW_TRACE_MAX_EVENTS, and the share of
 * the bucket below it that still fits. */
static void choose_keep_bucket(struct trace *t)
{
	uint64_t kept = 0;
	for (unsigned b = 0; b < PW_DURATION_BUCKETS; b++)
		kept += t->histogram[b];
	unsigned b = 0;
	while (kept > PW_TRACE_MAX_EVENTS) {
		kept -= t->histogram[b];
		b++;
	}
	t->keep_bucket = b;
	if (b > 0) {
		t->boundary_total = t->histogram[b - 1];
		t->boundary_budget = PW_TRACE_MAX_EVENTS - kept;
	}
}

/* Whether a call of this duration goes into the trace. */
static int keep_call(struct trace *t, uint64_t duration)
{
	unsigned b = pw_duration_bucket(duration);
	if (b >= t->keep_bucket)
		return 1;
	if (b + 1 != t->keep_bucket || !t->boundary_budget)
		return 0;
	uint64_t i = t->boundary_seen++;
	int keep = (i + 1) * t->boundary_budget / t->boundary_total > i * t->boundary_budget / t->boundary_total;
	t->boundary_kept += (uint64_t)keep;
	return keep;
}

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
		static const char *const dirs[] = {"HtoH", "HtoD", "DtoH", "DtoD", "default", "PtoP"};
		pw_json_kv_uint(j, "bytes", a->c.arg0);
		pw_json_kv_string(j, "kind", dir < sizeof dirs / sizeof dirs[0] ? dirs[dir] : "unknown");
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

static void write_or_fold(void *ctx, const struct pw_raw_event *e)
{
	struct trace *t = ctx;
	const struct pw_rec_call *rec = e->rec;
	if (rec->h.type >= PW_EV_COUNT)
		return;
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
	if (keep_call(t, duration)) {
		write_call(t, e, duration);
		t->kept++;
	} else {
		th->folded++;
		th->folded_ns += duration;
		t->folded++;
	}
	follow_fd(t, e); /* after writing, so that a close still shows what it closed */
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
		pw_json_begin_object(j);
		pw_json_kv_string(j, "name", name);
		pw_json_kv_string(j, "cat", "profwrap");
		pw_json_kv_string(j, "ph", "X");
		pw_json_kv_int(j, "pid", p->pid);
		pw_json_kv_uint(j, "tid", th->tid);
		/* Starts 1 ns before the thread's first call: a viewer that meets a kept call and this slice at the
		 * same ts, kept call first, would take them for overlapping instead of nested. */
		uint64_t start = th->first_ns ? th->first_ns - 1 : 0;
		pw_json_kv_double(j, "ts", trace_us(t, start), 3);
		pw_json_kv_double(j, "dur", th->last_ns > start ? (double)(th->last_ns - start) / 1000.0 : 0.0, 3);
		pw_json_key(j, "args");
		pw_json_begin_object(j);
		pw_json_kv_uint(j, "count", th->folded);
		pw_json_kv_uint(j, "total_ns", th->folded_ns);
		pw_json_end_object(j);
		pw_json_end_object(j);
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
	pw_json_kv_uint(j, "folded_events", t->folded);
	pw_json_kv_uint(j, "threshold_ns", bucket_floor_ns(t->keep_bucket));
	pw_json_kv_uint(j, "kept_below_threshold", t->boundary_kept);
	pw_json_kv_uint(j, "kept_events", t->kept);
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

/* The calls kept, then each image's tracks. A file that cannot be read is counted and the others still go
 * in. */
static void write_calls(struct trace *t)
{
	const struct pw_raw_visitor v = {.event = write_or_fold};
	for (size_t i = 0; i < t->r->nprocs; i++) {
		char err[sizeof t->first_read_error];
		t->proc = &t->r->procs[i];
		if (read_process(t, &v, err, sizeof err) && !t->read_errors++)
			memcpy(t->first_read_error, err, sizeof err);
		write_process_tracks(t);
		free(t->threads.slots);
		t->threads = (struct thread_table){0};
		fd_paths_clear(&t->fds);
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
	memcpy(t->histogram, r->durations, sizeof t->histogram); /* counted by the analysis */
	choose_keep_bucket(t);
	pw_format_duration(t->threshold_text, sizeof t->threshold_text, bucket_floor_ns(t->keep_bucket));

	FILE *f = pw_report_open(path, err, errlen);
	if (!f) {
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
	free(t);
	if (out_of_memory) {
		return pw_report_abandon(f, path, "out of memory", err, errlen);
	}
	return pw_report_close(f, path, err, errlen);
}
