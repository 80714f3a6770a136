/* profwrap dump DIR|FILE...: what raw traces hold, one JSON object a line, read with the collector's own
 * reader (collector/lib/rawfile.h), so that tests and people debugging profwrap never parse the format again.
 * The keys are listed in docs/ARCHITECTURE.md ("profwrap dump"). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../collector/lib/json.h"
#include "../collector/lib/rawfile.h"
#include "../collector/report/report_format.h"
#include "../common/pw_record.h"
#include "cli.h"

/* The kinds by the names of their enum pw_event_kind constants, lower case. */
static const char *const kind_names[] = {
	[PW_K_PLAIN] = "plain",
	[PW_K_OPEN] = "open",
	[PW_K_FDINFO] = "fdinfo",
	[PW_K_CLOSE] = "close",
	[PW_K_READ] = "read",
	[PW_K_WRITE] = "write",
	[PW_K_MMAP] = "mmap",
	[PW_K_FORK] = "fork",
	[PW_K_WAIT] = "wait",
	[PW_K_EXIT] = "exit",
	[PW_K_DLOPEN] = "dlopen",
	[PW_K_SLEEP] = "sleep",
	[PW_K_EXEC] = "exec",
	[PW_K_DUP] = "dup",
	[PW_K_GPU_LAUNCH] = "gpu_launch",
	[PW_K_GPU_GRAPH] = "gpu_graph",
	[PW_K_GPU_MEMCPY] = "gpu_memcpy",
	[PW_K_GPU_MEMSET] = "gpu_memset",
	[PW_K_GPU_ALLOC] = "gpu_alloc",
	[PW_K_GPU_FREE] = "gpu_free",
	[PW_K_GPU_SYNC] = "gpu_sync",
	[PW_K_GPU_API] = "gpu_api",
	[PW_K_GEMM] = "gemm",
	[PW_K_DNN] = "dnn",
	[PW_K_COLL] = "coll",
	[PW_K_COMM] = "comm",
	[PW_K_ACT_KERNEL] = "act_kernel",
	[PW_K_ACT_MEMCPY] = "act_memcpy",
	[PW_K_ACT_MEMSET] = "act_memset",
	[PW_K_ACT_API] = "act_api",
	[PW_K_ACT_EXTCORR] = "act_extcorr",
	[PW_K_ACT_OVERHEAD] = "act_overhead",
	[PW_K_ACT_DEVICE] = "act_device",
	[PW_K_ACT_DROPPED] = "act_dropped",
	[PW_K_ACT_STATUS] = "act_status",
	[PW_K_RANGE_PUSH] = "range_push",
	[PW_K_RANGE_POP] = "range_pop",
	[PW_K_RANGE_START] = "range_start",
	[PW_K_RANGE_END] = "range_end",
	[PW_K_MARK] = "mark",
	[PW_K_NVTX_NAME] = "nvtx_name",
	[PW_K_CAPTURE] = "capture",
	[PW_K_MODULE] = "module",
	[PW_K_PYSTACK] = "pystack",
	[PW_K_SAMPLE] = "sample",
	[PW_K_MPI_INIT] = "mpi_init",
	[PW_K_MPI_COLL] = "mpi_coll",
	[PW_K_MPI_P2P] = "mpi_p2p",
	[PW_K_MPI_WAIT] = "mpi_wait",
};
#define NKINDS (sizeof kind_names / sizeof kind_names[0])

/* A kind added after the last one named above is shown as "?" rather than read out of bounds. */
static const char *kind_name(enum pw_event_kind k)
{
	return (size_t)k < NKINDS && kind_names[k] ? kind_names[k] : "?";
}

/* One file's dump in progress. The reader announces each chunk before its contents: the chunk is remembered
 * so that the line its contents make carries its offset and size, and a chunk that makes no line (unknown
 * type, too short) still gets one. */
struct dump {
	struct pw_json j;
	const char *path;
	const uint8_t *want; /* per event id, whether its records are shown; NULL: all */
	size_t chunk_off;
	uint32_t chunk_type, chunk_len;
	int chunk_pending; /* announced and not shown yet */
};

/* Opens a line: {"type":TYPE, with the offset and size of the chunk being read. */
static void begin_chunk_line(struct dump *d, const char *type)
{
	pw_json_init(&d->j, stdout, 0);
	pw_json_begin_object(&d->j);
	pw_json_kv_string(&d->j, "type", type);
	pw_json_kv_uint(&d->j, "offset", d->chunk_off);
	pw_json_kv_uint(&d->j, "size", d->chunk_len);
	d->chunk_pending = 0;
}

static void end_line(struct dump *d)
{
	pw_json_end_object(&d->j);
	fputc('\n', stdout);
}

/* A chunk whose contents the reader did not deliver: of a type it steps over, or damaged (its message says). */
static void show_pending_chunk(struct dump *d)
{
	if (!d->chunk_pending)
		return;
	begin_chunk_line(d, "chunk");
	pw_json_kv_uint(&d->j, "chunk_type", d->chunk_type);
	end_line(d);
}

static void show_file(struct dump *d)
{
	struct stat st;
	pw_json_init(&d->j, stdout, 0);
	pw_json_begin_object(&d->j);
	pw_json_kv_string(&d->j, "type", "file");
	pw_json_kv_string(&d->j, "path", d->path);
	pw_json_kv_uint(&d->j, "format_version", PW_RAW_VERSION); /* the only one the reader delivers */
	if (stat(d->path, &st) == 0)
		pw_json_kv_uint(&d->j, "file_size", (uint64_t)st.st_size);
	end_line(d);
}

static void on_chunk(void *ctx, size_t offset, uint32_t type, uint32_t len)
{
	struct dump *d = ctx;
	show_pending_chunk(d);
	d->chunk_off = offset;
	d->chunk_type = type;
	d->chunk_len = len;
	d->chunk_pending = 1;
	if (type == PW_CHUNK_PROC)
		show_file(d); /* the PROC chunk is the first thing a readable file delivers */
	if (type == PW_CHUNK_RECORDS) { /* its records follow, each a line */
		begin_chunk_line(d, "records");
		end_line(d);
	}
}

/* "a\0b\0" or "a\0b" -> ["a","b"] */
static void show_argv(struct pw_json *j, const char *argv, uint32_t len)
{
	pw_json_key(j, "argv");
	pw_json_begin_array(j);
	uint32_t start = 0;
	for (uint32_t i = 0; i <= len; i++) {
		if (i < len && argv[i])
			continue;
		if (i < len || i > start)
			pw_json_string_n(j, argv + start, i - start);
		start = i + 1;
	}
	pw_json_end_array(j);
}

static void show_domains(struct pw_json *j, uint32_t mask)
{
	pw_json_key(j, "domains");
	pw_json_begin_array(j);
	for (int dom = 0; dom < PW_DOM_COUNT; dom++)
		if (mask & 1u << dom)
			pw_json_string(j, pw_domain_names[dom]);
	pw_json_end_array(j);
}

static void on_proc(void *ctx, const struct pw_raw_proc_view *v)
{
	struct dump *d = ctx;
	const struct pw_raw_proc *p = v->proc;
	begin_chunk_line(d, "proc");
	pw_json_kv_int(&d->j, "pid", p->pid);
	pw_json_kv_int(&d->j, "ppid", p->ppid);
	pw_json_kv_int(&d->j, "rank", p->rank);
	pw_json_kv_int(&d->j, "world_size", p->world_size);
	pw_json_kv_uint(&d->j, "image", p->image);
	show_argv(&d->j, v->argv, p->argv_len);
	pw_json_key(&d->j, "exe");
	pw_json_string_n(&d->j, v->exe, p->exe_len);
	pw_json_key(&d->j, "host");
	pw_json_string_n(&d->j, v->host, p->host_len);
	pw_json_kv_string(&d->j, "clock", p->clock_kind == PW_CLOCK_TSC ? "tsc"
					  : p->clock_kind == PW_CLOCK_MONOTONIC ? "monotonic" : "?");
	pw_json_kv_uint(&d->j, "clock0_ticks", p->clock0.ticks);
	pw_json_kv_uint(&d->j, "clock0_ns", p->clock0.ns);
	pw_json_kv_uint(&d->j, "start_ns", v->start_ns);
	pw_json_kv_uint(&d->j, "start_realtime_ns", p->start_realtime_ns);
	pw_json_kv_uint(&d->j, "domain_mask", p->domain_mask);
	show_domains(&d->j, p->domain_mask);
	end_line(d);
}

static void on_string(void *ctx, uint64_t ref, const char *s, uint32_t len)
{
	struct dump *d = ctx;
	begin_chunk_line(d, "string");
	pw_json_kv_uint(&d->j, "ref", ref);
	pw_json_key(&d->j, "string");
	pw_json_string_n(&d->j, s, len);
	end_line(d);
}

static void on_clock(void *ctx, const struct pw_clock_pair *pair)
{
	struct dump *d = ctx;
	begin_chunk_line(d, "clock");
	pw_json_kv_uint(&d->j, "ticks", pair->ticks);
	pw_json_kv_uint(&d->j, "ns", pair->ns);
	end_line(d);
}

static void on_lost(void *ctx, uint32_t lane, uint64_t dropped_total)
{
	struct dump *d = ctx;
	begin_chunk_line(d, "lost");
	pw_json_kv_uint(&d->j, "lane", lane);
	pw_json_kv_uint(&d->j, "dropped_total", dropped_total);
	end_line(d);
}

static void on_thread_lost(void *ctx, uint32_t tid, uint64_t dropped_total)
{
	struct dump *d = ctx;
	begin_chunk_line(d, "thread_lost");
	pw_json_kv_uint(&d->j, "tid", tid);
	pw_json_kv_uint(&d->j, "dropped_total", dropped_total);
	end_line(d);
}

static void on_salvage(void *ctx, const struct pw_raw_salvage *s)
{
	struct dump *d = ctx;
	begin_chunk_line(d, "salvage");
	pw_json_kv_uint(&d->j, "realtime_ns", s->realtime_ns);
	end_line(d);
}

static void on_end(void *ctx, const struct pw_raw_end *e, uint64_t end_ns, const char *exec_path)
{
	struct dump *d = ctx;
	begin_chunk_line(d, "end");
	pw_json_kv_string(&d->j, "how", pw_end_how_name((int)e->how));
	pw_json_kv_int(&d->j, "exit_status", e->exit_status);
	pw_json_kv_uint(&d->j, "end_ns", end_ns);
	pw_json_kv_string(&d->j, "exec_path", exec_path);
	pw_json_kv_uint(&d->j, "io_rchar", e->io_rchar);
	pw_json_kv_uint(&d->j, "io_wchar", e->io_wchar);
	pw_json_kv_uint(&d->j, "io_valid", e->io_valid);
	pw_json_kv_uint(&d->j, "arena_dropped", e->arena_dropped);
	pw_json_kv_uint(&d->j, "guard_skipped", e->guard_skipped);
	pw_json_kv_uint(&d->j, "bad_records", e->bad_records);
	pw_json_kv_uint(&d->j, "stacks_dropped", e->stacks_dropped);
	pw_json_kv_uint(&d->j, "samples_skipped", e->samples_skipped);
	pw_json_kv_uint(&d->j, "shm_refused", e->shm_refused);
	end_line(d);
}

/* ---- records ---- */

static void kv_bool(struct pw_json *j, const char *key, int v)
{
	pw_json_key(j, key);
	pw_json_bool(j, v);
}

static void uint_array(struct pw_json *j, const char *key, const uint64_t *a, size_t n)
{
	pw_json_key(j, key);
	pw_json_begin_array(j);
	for (size_t i = 0; i < n; i++)
		pw_json_uint(j, a[i]);
	pw_json_end_array(j);
}

static void show_dims(struct pw_json *j, const uint64_t a[3])
{
	struct pw_dims dims = pw_get_dims(a);
	pw_json_key(j, "dims");
	pw_json_begin_object(j);
	pw_json_key(j, "grid");
	pw_json_begin_array(j);
	for (int i = 0; i < 3; i++)
		pw_json_uint(j, dims.grid[i]);
	pw_json_end_array(j);
	pw_json_key(j, "block");
	pw_json_begin_array(j);
	for (int i = 0; i < 3; i++)
		pw_json_uint(j, dims.block[i]);
	pw_json_end_array(j);
	pw_json_end_object(j);
}

/* The call's stack: its reference and, when the file holds a whole stack there, its frames. */
static void show_stack(struct pw_json *j, const struct pw_raw_event *e)
{
	pw_json_key(j, "stack");
	if (!e->stack_ref) {
		pw_json_null(j);
		return;
	}
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "ref", e->stack_ref & ~PW_STACK_PY_PENDING);
	kv_bool(j, "py_pending", (e->stack_ref & PW_STACK_PY_PENDING) != 0);
	struct pw_stack_view v;
	if (pw_stack_parse(e->stack, e->stack_len, &v) < 0) { /* not in the file, or not a whole stack */
		pw_json_key(j, "native");
		pw_json_null(j);
		pw_json_end_object(j);
		return;
	}
	kv_bool(j, "interrupted", (v.flags & PW_STACK_INTERRUPTED) != 0);
	kv_bool(j, "truncated", (v.flags & PW_STACK_TRUNCATED) != 0);
	pw_json_key(j, "native");
	pw_json_begin_array(j);
	for (uint32_t i = 0; i < v.native_count; i++)
		pw_json_uint(j, pw_stack_native(&v, i));
	pw_json_end_array(j);
	pw_json_key(j, "python");
	pw_json_begin_array(j);
	const uint8_t *pos = v.python;
	uint32_t line, file_len, func_len;
	const char *file, *func;
	while (pw_stack_py_next(&v, &pos, &line, &file, &file_len, &func, &func_len)) {
		pw_json_begin_object(j);
		pw_json_key(j, "file");
		pw_json_string_n(j, file, file_len);
		pw_json_kv_uint(j, "line", line);
		pw_json_key(j, "func");
		pw_json_string_n(j, func, func_len);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	pw_json_end_object(j);
}

static void show_gemm(struct pw_json *j, const struct pw_rec_api *a)
{
	struct pw_gemm g = pw_get_gemm(a->a, a->sub);
	pw_json_key(j, "gemm");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "m", g.m);
	pw_json_kv_uint(j, "n", g.n);
	pw_json_kv_uint(j, "k", g.k);
	pw_json_kv_uint(j, "batch", g.batch);
	pw_json_kv_uint(j, "dtype", g.dtype);
	pw_json_kv_uint(j, "transa", g.transa);
	pw_json_kv_uint(j, "transb", g.transb);
	pw_json_end_object(j);
}

static void show_nccl(struct pw_json *j, const struct pw_rec_api *a)
{
	struct pw_nccl n = pw_get_nccl(a->a, a->sub);
	pw_json_key(j, "nccl");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "comm", n.comm);
	pw_json_kv_int(j, "peer", n.peer);
	pw_json_kv_uint(j, "nranks", n.nranks);
	pw_json_kv_uint(j, "rank", n.rank);
	pw_json_kv_uint(j, "dtype", n.dtype);
	pw_json_kv_uint(j, "op", n.op);
	pw_json_end_object(j);
}

static void show_copy_call(struct pw_json *j, const struct pw_rec_api *a)
{
	struct pw_copy_call c = pw_get_copy_call(a->a);
	pw_json_key(j, "copy_call");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "dst", c.dst);
	pw_json_kv_uint(j, "src", c.src);
	pw_json_kv_int(j, "dst_device", c.dst_device);
	pw_json_kv_int(j, "src_device", c.src_device);
	pw_json_kv_uint(j, "dir", a->sub & PW_COPY_DIR_MASK);
	pw_json_end_object(j);
}

/* A GPU library call: where it ran, its raw fields, then what its kind packs into them. */
static void show_api(struct pw_json *j, enum pw_event_kind k, const struct pw_rec_api *a)
{
	pw_json_kv_uint(j, "stream", a->stream);
	pw_json_kv_int(j, "device", a->device);
	pw_json_kv_uint(j, "sub", a->sub);
	uint_array(j, "a", a->a, 4);
	pw_json_kv_uint(j, "corr", a->corr);
	if (k == PW_K_GPU_LAUNCH)
		show_dims(j, a->a);
	else if (k == PW_K_GEMM)
		show_gemm(j, a);
	else if (k == PW_K_COLL || k == PW_K_COMM)
		show_nccl(j, a);
	else if (k == PW_K_GPU_MEMCPY)
		show_copy_call(j, a);
	if (k == PW_K_GPU_MEMCPY || k == PW_K_GPU_MEMSET) { /* other kinds use sub for fields of their own */
		kv_bool(j, "async", (a->sub & PW_API_ASYNC) != 0);
		kv_bool(j, "ptsz", (a->sub & PW_API_PTSZ) != 0);
	}
}

static void show_act_copy(struct pw_json *j, const char *key, struct pw_act_copy c, int memset)
{
	pw_json_key(j, key);
	pw_json_begin_object(j);
	if (memset) {
		pw_json_kv_uint(j, "value", c.value);
	} else {
		pw_json_kv_uint(j, "dir", c.dir);
		pw_json_kv_uint(j, "src", c.src);
	}
	pw_json_kv_uint(j, "dst", c.dst);
	pw_json_end_object(j);
}

static void show_act_peer(struct pw_json *j, uint64_t a0)
{
	uint32_t src, dst;
	pw_get_act_peer(a0, &src, &dst);
	pw_json_key(j, "act_peer");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "src_device", src);
	pw_json_kv_uint(j, "dst_device", dst);
	pw_json_end_object(j);
}

static void show_kernel_use(struct pw_json *j, const struct pw_rec_call *c)
{
	struct pw_kernel_use u = pw_get_kernel_use(c->arg0, c->ret);
	pw_json_key(j, "kernel_use");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "registers", u.registers);
	pw_json_kv_uint(j, "shared_bytes", u.shared_bytes);
	pw_json_kv_uint(j, "graph", u.graph);
	pw_json_kv_uint(j, "graph_node", u.graph_node);
	pw_json_end_object(j);
}

static void show_device_info(struct pw_json *j, const uint64_t a[2])
{
	struct pw_device_info i = pw_get_device_info(a);
	pw_json_key(j, "device_info");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "memory_bytes", i.memory_bytes);
	pw_json_kv_uint(j, "sms", i.sms);
	pw_json_kv_uint(j, "cc_major", i.cc_major);
	pw_json_kv_uint(j, "cc_minor", i.cc_minor);
	pw_json_end_object(j);
}

static void show_act_status(struct pw_json *j, const uint64_t a[3])
{
	struct pw_act_status_info s = pw_get_act_status(a);
	pw_json_key(j, "act_status");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "version", s.version);
	pw_json_kv_uint(j, "clock", s.clock);
	pw_json_kv_uint(j, "runtime_major", s.runtime_major);
	pw_json_end_object(j);
}

/* What the GPU did: where, CUPTI's ids, its raw fields, then what its kind packs into them. */
static void show_gpu(struct pw_json *j, enum pw_event_kind k, const struct pw_rec_gpu *g)
{
	pw_json_kv_int(j, "device", g->device);
	pw_json_kv_uint(j, "stream", g->stream);
	pw_json_kv_uint(j, "correlation", g->correlation);
	pw_json_kv_uint(j, "context", g->context);
	uint_array(j, "a", g->a, 3);
	if (k == PW_K_ACT_KERNEL) {
		show_dims(j, g->a);
		show_kernel_use(j, &g->c);
	} else if (k == PW_K_ACT_MEMCPY) {
		struct pw_act_copy c = pw_get_act_memcpy(g->c.arg1);
		show_act_copy(j, "act_memcpy", c, 0);
		if (c.dir == PW_COPY_PEER)
			show_act_peer(j, g->a[0]);
	} else if (k == PW_K_ACT_MEMSET) {
		show_act_copy(j, "act_memset", pw_get_act_memset(g->c.arg1), 1);
	} else if (k == PW_K_ACT_DEVICE) {
		show_device_info(j, g->a);
	} else if (k == PW_K_ACT_STATUS) {
		show_act_status(j, g->a);
	}
}

static void show_nvtx_scope(struct pw_json *j, uint64_t arg0)
{
	struct pw_nvtx_scope s = pw_get_nvtx_scope(arg0);
	pw_json_key(j, "nvtx_scope");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "domain", s.domain);
	pw_json_kv_uint(j, "category", s.category);
	pw_json_end_object(j);
}

static void show_mpi_comm(struct pw_json *j, uint64_t arg1)
{
	struct pw_mpi_comm c = pw_get_mpi_comm(arg1);
	pw_json_key(j, "mpi_comm");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "size", c.size);
	pw_json_kv_int(j, "root", c.root);
	pw_json_end_object(j);
}

static void show_module(struct pw_json *j, const struct pw_raw_event *e)
{
	const struct pw_rec_module *m = (const struct pw_rec_module *)e->rec;
	pw_json_kv_uint(j, "lo", m->lo);
	pw_json_kv_uint(j, "hi", m->hi);
	pw_json_key(j, "build_id");
	pw_json_string_n(j, e->build_id, e->build_id_len); /* null when none */
	pw_json_kv_uint(j, "image_bytes", e->image ? e->image_len : 0); /* an in-memory object's ELF (the vDSO) */
}

/* The fields of the record's own struct (pw_rec_api, pw_rec_gpu, pw_rec_range, pw_rec_module) and what the
 * kind packs into the common ones. */
static void show_kind_fields(struct pw_json *j, const struct pw_raw_event *e, unsigned id)
{
	enum pw_event_kind k = pw_events[id].kind;
	if (pw_kind_is_api(k))
		show_api(j, k, (const struct pw_rec_api *)e->rec);
	else if (pw_kind_is_activity(k))
		show_gpu(j, k, (const struct pw_rec_gpu *)e->rec);
	else if (k == PW_K_MODULE)
		show_module(j, e);
	if (pw_kind_is_range(k)) {
		const struct pw_rec_range *r = (const struct pw_rec_range *)e->rec;
		pw_json_kv_uint(j, "payload", r->payload);
		pw_json_kv_uint(j, "payload_type", r->payload_type);
		pw_json_kv_uint(j, "color", r->color);
	}
	if (pw_kind_is_range(k) || id == PW_EV_NVTX_NAME_CATEGORY)
		show_nvtx_scope(j, e->rec->arg0);
	else if (k == PW_K_MPI_COLL)
		show_mpi_comm(j, e->rec->arg1);
	if (k == PW_K_OPEN || k == PW_K_STAT) {
		pw_json_kv_int(j, "dirfd", e->dirfd);
		pw_json_key(j, "cwd");
		pw_json_string_n(j, e->cwd, e->cwd_len); /* null when not recorded */
	}
}

static void on_event(void *ctx, const struct pw_raw_event *e)
{
	struct dump *d = ctx;
	const struct pw_rec_call *c = e->rec;
	unsigned id = c->h.type; /* the reader hands out known types, flags masked off */
	if (d->want && !d->want[id])
		return;
	struct pw_json *j = &d->j;
	pw_json_init(j, stdout, 0);
	pw_json_begin_object(j);
	pw_json_kv_string(j, "type", "record");
	pw_json_kv_uint(j, "offset", e->offset);
	pw_json_kv_uint(j, "size", (uint64_t)c->h.size8 * 8);
	pw_json_kv_string(j, "event", pw_events[id].name);
	pw_json_kv_uint(j, "id", id);
	pw_json_kv_string(j, "domain", pw_domain_names[pw_events[id].domain]);
	pw_json_kv_string(j, "kind", kind_name(pw_events[id].kind));
	pw_json_kv_uint(j, "tid", c->h.tid);
	pw_json_kv_uint(j, "t0", e->t0_ns);
	pw_json_kv_uint(j, "t1", e->t1_ns);
	pw_json_kv_int(j, "ret", c->ret);
	pw_json_kv_uint(j, "err", c->h.err);
	/* signed: most kinds keep descriptors, ranks and indexes there, -1 meaning none */
	pw_json_kv_int(j, "arg0", (int64_t)c->arg0);
	pw_json_kv_int(j, "arg1", (int64_t)c->arg1);
	kv_bool(j, "outside", e->outside);
	kv_bool(j, "nested", e->nested);
	if (pw_kind_has_string(pw_events[id].kind)) {
		pw_json_key(j, "string");
		pw_json_string_n(j, e->str, e->str_len); /* null when the reference resolves to nothing */
	}
	show_kind_fields(j, e, id);
	show_stack(j, e);
	end_line(d);
}

/* ---- the command ---- */

static const struct pw_raw_visitor visitor = {
	.proc = on_proc,
	.event = on_event,
	.lost = on_lost,
	.thread_lost = on_thread_lost,
	.salvage = on_salvage,
	.end = on_end,
	.chunk = on_chunk,
	.clock = on_clock,
	.string = on_string,
};

/* Dumps one raw trace. Returns 0, or 1 after the reader's one line (damage, or nothing readable). */
static int dump_file(const char *path, const uint8_t *want)
{
	struct dump d = {.path = path, .want = want};
	uint64_t skipped = 0;
	char err[1024];
	int rc = pw_raw_read(path, &visitor, &d, &skipped, err, sizeof err);
	show_pending_chunk(&d);
	if (rc == 0 && !err[0])
		return 0;
	fflush(stdout); /* the message comes after what could be read */
	fprintf(stderr, "profwrap: %s\n", err);
	return 1;
}

static int is_trace_name(const struct dirent *de)
{
	size_t n = strlen(de->d_name);
	return n > 4 && strcmp(de->d_name + n - 4, ".pwt") == 0;
}

/* strcmp, not the locale's collation: the same order everywhere. */
static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Dumps every *.pwt of dir/raw (or of dir itself, when it has no raw/) in name order. Returns 0, or 1 after a
 * line for each file that could not be read whole, or for a folder with no trace. */
static int dump_dir(const char *dir, const uint8_t *want)
{
	char raw[4096];
	struct stat st;
	snprintf(raw, sizeof raw, "%s/raw", dir);
	if (stat(raw, &st) != 0 || !S_ISDIR(st.st_mode))
		snprintf(raw, sizeof raw, "%s", dir);
	struct dirent **names;
	int n = scandir(raw, &names, is_trace_name, by_name);
	if (n < 0) {
		fprintf(stderr, "profwrap: %s: %s\n", raw, strerror(errno));
		return 1;
	}
	int rc = n == 0;
	if (n == 0)
		fprintf(stderr, "profwrap: no raw trace (*.pwt) in %s\n", raw);
	for (int i = 0; i < n; i++) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", raw, names[i]->d_name);
		rc |= dump_file(path, want);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* The struct a record of this kind is (pw_event_min_size's choice). */
static const char *record_struct(enum pw_event_kind k)
{
	return pw_kind_is_api(k)	? "api"
	       : pw_kind_is_activity(k) ? "gpu"
	       : pw_kind_is_range(k)	? "range"
	       : k == PW_K_MODULE	? "module"
					: "call";
}

/* The event table, one line an event: what the names in --events and in the records mean. */
static void show_event_table(void)
{
	struct pw_json j;
	for (unsigned id = 0; id < PW_EV_COUNT; id++) {
		pw_json_init(&j, stdout, 0);
		pw_json_begin_object(&j);
		pw_json_kv_string(&j, "type", "event");
		pw_json_kv_uint(&j, "id", id);
		pw_json_kv_string(&j, "event", pw_events[id].name);
		pw_json_kv_string(&j, "domain", pw_domain_names[pw_events[id].domain]);
		pw_json_kv_string(&j, "kind", kind_name(pw_events[id].kind));
		pw_json_kv_string(&j, "record", record_struct(pw_events[id].kind));
		pw_json_end_object(&j);
		fputc('\n', stdout);
	}
}

/* Marks in want the events a comma-separated list names: event names (--events) or kind names (--kinds).
 * Returns 0, or 2 after a line naming what is not known. */
static int select_events(const char *list, int kinds, uint8_t *want)
{
	const char *p = list;
	for (;;) {
		size_t len = strcspn(p, ",");
		int found = 0;
		for (unsigned id = 1; id < PW_EV_COUNT; id++) {
			const char *name = kinds ? kind_name(pw_events[id].kind) : pw_events[id].name;
			if (strlen(name) == len && memcmp(name, p, len) == 0)
				want[id] = 1, found = 1;
		}
		if (!found) {
			fprintf(stderr, "profwrap: dump: no %s named '%.*s' (profwrap dump --event-table lists them)\n",
				kinds ? "kind" : "event", (int)len, p);
			return 2;
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static int dump_usage(FILE *f, int rc)
{
	fputs("usage: profwrap dump [--events NAME[,NAME...]] [--kinds KIND[,KIND...]] DIR|FILE...\n"
	      "       profwrap dump --event-table\n"
	      "Prints the raw traces of DIR (DIR/raw/*.pwt, in name order) or the FILEs as JSON lines: the file,\n"
	      "its process, strings, clock pairs, each record (times in ns), losses and how the process ended.\n"
	      "  --events LIST   only the records of these events (as named in the event table)\n"
	      "  --kinds LIST    only the records of events of these kinds (with --events: of either)\n"
	      "  --event-table   the events profwrap records: id, name, domain, kind, record struct\n"
	      "Exits 1 after a line on stderr when a file is damaged (dumped up to there) or cannot be read.\n",
	      f);
	return rc;
}

int pw_cli_dump(int argc, char **argv)
{
	enum { OPT_EVENTS = 256, OPT_KINDS, OPT_TABLE };
	static const struct option opts[] = {
		{"events", required_argument, 0, OPT_EVENTS}, {"kinds", required_argument, 0, OPT_KINDS},
		{"event-table", no_argument, 0, OPT_TABLE},   {"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	static uint8_t want[PW_EV_COUNT];
	int filtered = 0, table = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == OPT_EVENTS || c == OPT_KINDS) {
			if (select_events(optarg, c == OPT_KINDS, want))
				return 2;
			filtered = 1;
		} else if (c == OPT_TABLE) {
			table = 1;
		} else {
			return dump_usage(c == 'h' ? stdout : stderr, c == 'h' ? 0 : 2);
		}
	}
	if (table ? optind != argc || filtered : optind >= argc)
		return dump_usage(stderr, 2);
	if (table)
		show_event_table();
	int rc = 0;
	for (int i = optind; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "profwrap: %s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else {
			rc |= S_ISDIR(st.st_mode) ? dump_dir(argv[i], filtered ? want : NULL)
						  : dump_file(argv[i], filtered ? want : NULL);
		}
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "profwrap: dump: cannot write the output: %s\n", strerror(errno));
		return 1;
	}
	return rc;
}
