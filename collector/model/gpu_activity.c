/* The GPU activity part of a rank's model (see gpu_activity.h). Conventions:
 *
 * - An operation (kernel, copy, memset) without times (CUPTI gave none: the preload writes 0), with its end
 *   before its start, or on a negative device id is counted in bad_records and left out of every figure.
 * - Launch time of an operation: the start of the CUPTI API record of its correlation id when there is one
 *   (the launch itself, also inside a library call), else the start of the wrapped call it is linked to.
 *   Launch latency is the kernel's start minus that (0 when the clocks disagree and it would be negative).
 * - Queue depth at a kernel's launch: the device's other operations launched at or before that instant
 *   (among those whose launch time is known) and not yet finished then.
 * - Idle gaps: on each device, the operations sorted by start; a gap is a stretch between the end of
 *   everything started so far and the next start. It is ended by that next operation, whose launching
 *   thread (through the correlation) is the gap's launching thread.
 *
 * Why a second pass over the raw files for the gaps: a gap's cause needs the calls its launching thread made
 * during the gap, and neither side is known while the files are read the first time (activity records
 * arrive late and out of order, so the gaps exist only once every operation is in). Keeping every CPU
 * record of every thread instead would cost memory in proportion to the whole trace; the reader maps the
 * files and is cheap, so once the gaps are known, only the files that hold a launching thread are read
 * again and only that thread's records are looked at. Per gap the state is fixed-size (input and sleep
 * time, the synchronising call at its start) plus its calls merged per event as they come in time order,
 * so memory stays linear in the gaps and the calls that fall in them.
 */
#define _GNU_SOURCE
#include "gpu_activity.h"

#include "../../common/pw_session.h"
#include "../lib/hash_index.h"
#include "gpu_analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_ROW UINT32_MAX
#define NO_PAIR UINT32_MAX

enum { LINK_NONE, LINK_WRAPPED, LINK_API };
enum { OP_NCCL_NAME = 1, OP_GRAPH = 2 };
enum { W_SMALL_COPY = 1, W_COLL = 2 };

/* One GPU operation: 48 bytes, whatever the record held. */
struct act_op {
	uint64_t t0, t1;
	uint64_t launch; /* 0 when unknown */
	uint32_t corr;   /* CUPTI correlation id (meaningful until the file's end links it) */
	uint32_t tid;    /* launching thread, 0 when unknown */
	uint32_t row;    /* kernel or copy row, NO_ROW past the bounds */
	uint32_t file;   /* index into work->files */
	uint16_t dev;    /* slot in act->devices */
	uint16_t call_ev; /* the wrapped call's event, 0 when none */
	uint8_t kind;    /* enum pw_act_op_kind */
	uint8_t link;
	uint8_t flags;
	uint8_t pad;
};

struct pw_act_wrapped {
	uint64_t corr; /* external id */
	uint64_t t0;
	double bus; /* PW_K_COLL: bytes times the bus factor */
	uint32_t tid;
	uint16_t ev;
	uint8_t flags;
	uint8_t used; /* its bus bytes are counted */
};

struct pw_act_corr {
	uint64_t value; /* external id (EXTCORR), or the API record's start */
	uint64_t t1;    /* API: the record's end */
	uint32_t corr;
	uint32_t tid;   /* API: the calling thread */
	uint32_t cbid;  /* API: CUPTI's callback id of the call */
	uint8_t driver; /* API: a driver call (else runtime) */
};

struct act_file {
	char *path;
	int pid;
};

struct pw_act_work {
	struct act_op *ops;
	size_t nops, ops_cap;
	struct pw_hix kernel_ix, copy_ix, graph_ix, graph_launch_ix;
	size_t rows_cap, copy_cap, devices_cap, graph_rows_cap;
	struct graph_launch {
		uint32_t file; /* pw_act_file.serial: correlation ids are per process */
		uint32_t graph_id, corr;
	} *graph_launches; /* each graph launch seen, so that its kernels count it once */
	size_t ngraph_launches, graph_launches_cap;
	struct pw_act_device infos[PW_ACT_MAX_DEVICES]; /* from PW_K_ACT_DEVICE records */
	size_t ninfos;
	struct act_file *files;
	size_t nfiles, files_cap;
	uint64_t coll_ns[PW_ACT_MAX_DEVICES]; /* collective kernel time per device slot */
	int last_dev;                         /* the slot found last (runs are mostly one device) */
	int oom;
};

/* ---- small helpers ---- */

/* qsort of n elements, n possibly 0 with base NULL (which qsort itself must not be given). */
static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static void time_stat_add(struct pw_act_time_stat *s, uint64_t dur)
{
	if (!s->count || dur < s->min_ns)
		s->min_ns = dur;
	if (dur > s->max_ns)
		s->max_ns = dur;
	s->count++;
	s->total_ns = pw_sat_add(s->total_ns, dur);
}

const char *pw_gap_class_name(enum pw_gap_class c)
{
	static const char *const names[PW_GAP_CLASSES] = {"sync", "input", "sleep", "launch", "cpu", "unknown"};
	return (unsigned)c < PW_GAP_CLASSES ? names[c] : "unknown";
}

const char *pw_act_state_name(int state)
{
	switch (state) {
	case PW_ACT_RECORDING:
		return "recording";
	case PW_ACT_NO_CUPTI:
		return "no_cupti";
	case PW_ACT_FAILED:
		return "failed";
	case PW_ACT_DISABLED:
		return "disabled";
	case PW_ACT_NO_DRIVER:
		return "no_driver";
	case PW_ACT_DRIVER_UNUSABLE:
		return "driver_unusable";
	case PW_ACT_OTHER_CLIENT:
		return "shared_with_other_client";
	case PW_ACT_FORKED:
		return "fork_child";
	default:
		return "none";
	}
}

int pw_act_recorded(const struct pw_act_report *act)
{
	return act && (act->kernels || act->memcpys || act->memsets);
}

void pw_act_why_missing(char *buf, size_t len, const struct pw_act_report *act)
{
	switch (act ? act->state : 0) {
	case PW_ACT_NO_CUPTI:
		snprintf(buf, len, "no libcupti could be loaded");
		break;
	case PW_ACT_NO_DRIVER:
		snprintf(buf, len, "no CUDA driver (libcuda.so.1) could be loaded");
		break;
	case PW_ACT_DRIVER_UNUSABLE:
		if (act->error_code == 34) /* CUDA_ERROR_STUB_LIBRARY */
			snprintf(buf, len, "the CUDA driver (libcuda.so.1) is a stub library");
		else if (act->error_code)
			snprintf(buf, len, "the CUDA driver (libcuda.so.1) cannot be used (cuDriverGetVersion: CUresult %lld)",
				 (long long)act->error_code);
		else
			snprintf(buf, len, "the CUDA driver (%llu.%llu) is older than the CUDA %llu runtime in use",
				 (unsigned long long)act->driver_version / 1000,
				 (unsigned long long)act->driver_version % 1000 / 10,
				 (unsigned long long)act->runtime_major);
		break;
	case PW_ACT_FAILED:
		snprintf(buf, len, "CUPTI failed (CUptiResult %lld)", (long long)act->error_code);
		break;
	case PW_ACT_OTHER_CLIENT:
		snprintf(buf, len, "another CUPTI client (torch.profiler, for one) had CUPTI from the start");
		break;
	case PW_ACT_FORKED:
		snprintf(buf, len, "a fork child of a process that used CUDA, where CUDA cannot be used");
		break;
	case PW_ACT_DISABLED:
		snprintf(buf, len, "the gpu domain is not traced");
		break;
	case PW_ACT_RECORDING:
		snprintf(buf, len, "recording, but no CUPTI records of GPU work arrived");
		break;
	default:
		snprintf(buf, len, "no CUPTI records");
		break;
	}
}

const struct pw_act_device *pw_act_device_of(const struct pw_act_report *act, int32_t id)
{
	for (size_t i = 0; act && i < act->ndevices; i++)
		if (act->devices[i].id == id)
			return &act->devices[i];
	return NULL;
}

/* ---- the model ---- */

static struct pw_act_report *report_new(void)
{
	struct pw_act_report *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->work = calloc(1, sizeof *a->work);
	if (!a->work) {
		free(a);
		return NULL;
	}
	a->coll_device = -1;
	a->work->last_dev = -1;
	return a;
}

static void work_free(struct pw_act_work *w)
{
	if (!w)
		return;
	free(w->ops);
	pw_hix_free(&w->kernel_ix);
	pw_hix_free(&w->copy_ix);
	pw_hix_free(&w->graph_ix);
	pw_hix_free(&w->graph_launch_ix);
	free(w->graph_launches);
	for (size_t i = 0; i < w->ninfos; i++)
		free(w->infos[i].name);
	for (size_t i = 0; i < w->nfiles; i++)
		free(w->files[i].path);
	free(w->files);
	free(w);
}

void pw_act_report_free(struct pw_act_report *a)
{
	if (!a)
		return;
	work_free(a->work);
	for (size_t i = 0; i < a->nkernel_rows; i++)
		free(a->kernel_rows[i].name);
	for (size_t i = 0; i < a->ndevices; i++)
		free(a->devices[i].name);
	free(a->kernel_rows);
	free(a->graph_rows);
	free(a->copy_rows);
	free(a->devices);
	free(a->gaps);
	free(a->cupti_path);
	free(a);
}

void pw_act_file_init(struct pw_act_file *f)
{
	static _Atomic uint32_t files;
	memset(f, 0, sizeof *f);
	f->first_op = SIZE_MAX;
	f->serial = ++files;
}

void pw_act_file_free(struct pw_act_file *f)
{
	free(f->wrapped);
	free(f->ext);
	free(f->api);
	pw_act_file_init(f);
}

/* The slot of device id, created on first use; -1 past PW_ACT_MAX_DEVICES, -2 when out of memory. */
static int device_slot(struct pw_act_report *a, int32_t id)
{
	struct pw_act_work *w = a->work;
	if (w->last_dev >= 0 && a->devices[w->last_dev].id == id)
		return w->last_dev;
	for (size_t i = 0; i < a->ndevices; i++)
		if (a->devices[i].id == id)
			return w->last_dev = (int)i;
	if (a->ndevices >= PW_ACT_MAX_DEVICES)
		return -1;
	if (pw_reserve(&a->devices, &w->devices_cap, a->ndevices + 1, sizeof *a->devices))
		return -2;
	a->devices[a->ndevices].id = id;
	return w->last_dev = (int)a->ndevices++;
}

struct kernel_key {
	const struct pw_act_report *a;
	const char *name;
	size_t len;
	int32_t device;
	uint32_t stream;
};

static int kernel_eq(const void *ctx, uint32_t pos)
{
	const struct kernel_key *k = ctx;
	const struct pw_act_kernel_row *r = &k->a->kernel_rows[pos];
	return r->device == k->device && r->stream == k->stream && strlen(r->name) == k->len &&
	       memcmp(r->name, k->name, k->len) == 0;
}

/* The row of (name, device, stream), created while there is room; NO_ROW past the bound. */
static uint32_t kernel_row(struct pw_act_report *a, const char *name, size_t len, int32_t device, uint32_t stream)
{
	struct pw_act_work *w = a->work;
	if (!name || !len) {
		name = "(unknown)";
		len = strlen(name);
	}
	if (len > PW_ACT_MAX_NAME)
		len = PW_ACT_MAX_NAME;
	const char *nul = memchr(name, 0, len);
	if (nul)
		len = (size_t)(nul - name);
	uint64_t h = pw_hix_hash(pw_hash_mix(pw_hash_bytes(PW_HASH_SEED, name, len) ^ pw_hash_mix((uint64_t)(uint32_t)device << 32 | stream)));
	struct kernel_key key = {a, name, len, device, stream};
	int64_t pos = pw_hix_find(&w->kernel_ix, h, kernel_eq, &key);
	if (pos >= 0)
		return (uint32_t)pos;
	if (a->nkernel_rows >= PW_ACT_MAX_KERNEL_ROWS)
		return NO_ROW;
	char *copy = strndup(name, len);
	if (!copy || pw_reserve(&a->kernel_rows, &w->rows_cap, a->nkernel_rows + 1, sizeof *a->kernel_rows) ||
	    pw_hix_add(&w->kernel_ix, h, (uint32_t)a->nkernel_rows)) {
		free(copy);
		w->oom = 1;
		return NO_ROW;
	}
	struct pw_act_kernel_row *r = &a->kernel_rows[a->nkernel_rows];
	r->name = copy;
	r->device = device;
	r->stream = stream;
	return (uint32_t)a->nkernel_rows++;
}

struct graph_key {
	const struct pw_act_report *a;
	uint32_t file, graph_id;
	int32_t device;
};

static int graph_eq(const void *ctx, uint32_t pos)
{
	const struct graph_key *k = ctx;
	const struct pw_act_graph_row *r = &k->a->graph_rows[pos];
	return r->file == k->file && r->graph_id == k->graph_id && r->device == k->device;
}

struct graph_launch_key {
	const struct pw_act_work *w;
	struct graph_launch l;
};

static int graph_launch_eq(const void *ctx, uint32_t pos)
{
	const struct graph_launch_key *k = ctx;
	const struct graph_launch *l = &k->w->graph_launches[pos];
	return l->file == k->l.file && l->graph_id == k->l.graph_id && l->corr == k->l.corr;
}

/* A kernel graph_id ran in the launch of correlation id corr (file f): counted on the graph's row, the launch
 * once per correlation id. */
static void note_graph_kernel(struct pw_act_report *a, const struct pw_act_file *f, uint32_t graph_id,
			      int32_t device, uint32_t corr, uint64_t dur)
{
	struct pw_act_work *w = a->work;
	a->graph_kernels++;
	struct graph_key key = {a, f->serial, graph_id, device};
	uint64_t h = pw_hix_hash(pw_hash_mix((uint64_t)graph_id << 32 | (uint32_t)device) ^ pw_hash_mix(f->serial));
	int64_t pos = pw_hix_find(&w->graph_ix, h, graph_eq, &key);
	struct pw_act_graph_row *r = &a->graphs_other;
	if (pos >= 0) {
		r = &a->graph_rows[pos];
	} else if (a->ngraph_rows < PW_ACT_MAX_GRAPH_ROWS) {
		if (pw_reserve(&a->graph_rows, &w->graph_rows_cap, a->ngraph_rows + 1, sizeof *a->graph_rows) ||
		    pw_hix_add(&w->graph_ix, h, (uint32_t)a->ngraph_rows)) {
			w->oom = 1;
		} else {
			r = &a->graph_rows[a->ngraph_rows++];
			r->graph_id = graph_id;
			r->device = device;
			r->file = f->serial;
		}
	}
	r->kernels++;
	r->total_ns = pw_sat_add(r->total_ns, dur);
	struct graph_launch_key lk = {w, {f->serial, graph_id, corr}};
	uint64_t lh = pw_hix_hash(pw_hash_mix(f->serial ^ pw_hash_mix((uint64_t)graph_id << 32 | corr)));
	if (pw_hix_find(&w->graph_launch_ix, lh, graph_launch_eq, &lk) >= 0)
		return;
	r->launches++;
	if (pw_reserve(&w->graph_launches, &w->graph_launches_cap, w->ngraph_launches + 1,
		       sizeof *w->graph_launches) ||
	    pw_hix_add(&w->graph_launch_ix, lh, (uint32_t)w->ngraph_launches)) {
		w->oom = 1;
		return;
	}
	w->graph_launches[w->ngraph_launches++] = lk.l;
}

struct copy_key {
	const struct pw_act_report *a;
	uint64_t key;
};

static uint64_t copy_key_of(const struct pw_act_copy_row *r)
{
	return (uint64_t)(uint32_t)r->device | (uint64_t)r->memset << 32 | (uint64_t)r->dir << 40 |
	       (uint64_t)r->src << 48 | (uint64_t)r->dst << 56;
}

static int copy_eq(const void *ctx, uint32_t pos)
{
	const struct copy_key *k = ctx;
	return copy_key_of(&k->a->copy_rows[pos]) == k->key;
}

static uint32_t copy_row(struct pw_act_report *a, struct pw_act_copy_row proto)
{
	struct pw_act_work *w = a->work;
	struct copy_key key = {a, copy_key_of(&proto)};
	uint64_t h = pw_hix_hash(pw_hash_mix(key.key));
	int64_t pos = pw_hix_find(&w->copy_ix, h, copy_eq, &key);
	if (pos >= 0)
		return (uint32_t)pos;
	if (a->ncopy_rows >= PW_ACT_MAX_COPY_ROWS)
		return NO_ROW;
	if (pw_reserve(&a->copy_rows, &w->copy_cap, a->ncopy_rows + 1, sizeof *a->copy_rows) ||
	    pw_hix_add(&w->copy_ix, h, (uint32_t)a->ncopy_rows)) {
		w->oom = 1;
		return NO_ROW;
	}
	a->copy_rows[a->ncopy_rows] = proto;
	return (uint32_t)a->ncopy_rows++;
}

static int note_op(struct pw_act_report *a, struct pw_act_file *f, const struct pw_raw_event *e,
		   const struct pw_rec_gpu *g, enum pw_act_op_kind kind)
{
	struct pw_act_work *w = a->work;
	uint64_t t0 = g->c.t0, t1 = g->c.t1;
	if (!t0 || t1 < t0 || g->device < 0) {
		a->bad_records++;
		return 0;
	}
	int slot = device_slot(a, g->device);
	if (slot == -2)
		return -1;
	if (slot < 0) {
		a->devices_other++;
		return 0;
	}
	if (pw_reserve(&w->ops, &w->ops_cap, w->nops + 1, sizeof *w->ops))
		return -1;
	struct pw_act_device *d = &a->devices[slot];
	uint64_t dur = t1 - t0;
	struct act_op op = {.t0 = t0, .t1 = t1, .corr = g->correlation, .row = NO_ROW, .dev = (uint16_t)slot,
			    .kind = (uint8_t)kind};
	if (kind == PW_ACT_OP_KERNEL) {
		a->kernels++;
		d->kernels++;
		op.row = kernel_row(a, e->str, e->str_len, g->device, g->stream);
		if (op.row == NO_ROW)
			time_stat_add(&d->kernel_other, dur);
		else {
			struct pw_act_kernel_row *r = &a->kernel_rows[op.row];
			struct pw_act_time_stat s = {r->count, r->total_ns, r->min_ns, r->max_ns};
			time_stat_add(&s, dur);
			r->count = s.count;
			r->total_ns = s.total_ns;
			r->min_ns = s.min_ns;
			r->max_ns = s.max_ns;
		}
		if (pw_is_nccl_kernel(e->str, e->str_len))
			op.flags |= OP_NCCL_NAME;
		uint32_t graph_id = pw_get_kernel_use(g->c.arg0, g->c.ret).graph;
		if (graph_id) {
			op.flags |= OP_GRAPH;
			note_graph_kernel(a, f, graph_id, g->device, g->correlation, dur);
		}
	} else {
		struct pw_act_copy_row proto = {.device = g->device};
		uint64_t bytes = g->c.arg0;
		if (kind == PW_ACT_OP_MEMCPY) {
			a->memcpys++;
			d->memcpys++;
			struct pw_act_copy where = pw_get_act_memcpy(g->c.arg1);
			proto.dir = where.dir;
			proto.src = where.src;
			proto.dst = where.dst;
			int pageable = proto.src == PW_ACT_MEM_PAGEABLE || proto.dst == PW_ACT_MEM_PAGEABLE;
			int pinned = proto.src == PW_ACT_MEM_PINNED || proto.dst == PW_ACT_MEM_PINNED;
			if (pageable) {
				a->pageable_count++;
				a->pageable_bytes = pw_sat_add(a->pageable_bytes, bytes);
				a->pageable_ns = pw_sat_add(a->pageable_ns, dur);
			} else if (pinned) {
				a->pinned_count++;
				a->pinned_bytes = pw_sat_add(a->pinned_bytes, bytes);
				a->pinned_ns = pw_sat_add(a->pinned_ns, dur);
			}
		} else {
			a->memsets++;
			d->memsets++;
			proto.memset = 1;
			proto.dst = pw_get_act_memset(g->c.arg1).dst;
		}
		op.row = copy_row(a, proto);
		if (op.row == NO_ROW) {
			time_stat_add(&a->copy_other, dur);
			a->copy_other_bytes = pw_sat_add(a->copy_other_bytes, bytes);
		} else {
			struct pw_act_copy_row *r = &a->copy_rows[op.row];
			r->count++;
			r->bytes = pw_sat_add(r->bytes, bytes);
			r->total_ns = pw_sat_add(r->total_ns, dur);
		}
	}
	if (f->first_op == SIZE_MAX)
		f->first_op = w->nops;
	w->ops[w->nops++] = op;
	return 0;
}

static int state_rank(int state)
{
	switch (state) {
	case PW_ACT_OTHER_CLIENT:
		return 5;
	case PW_ACT_RECORDING:
		return 4;
	case PW_ACT_FAILED:
		return 3;
	case PW_ACT_NO_CUPTI:
	case PW_ACT_NO_DRIVER:
	case PW_ACT_DRIVER_UNUSABLE:
	case PW_ACT_FORKED:
		return 2;
	case PW_ACT_DISABLED:
		return 1;
	default:
		return 0;
	}
}

static int note_status(struct pw_act_report *a, const struct pw_raw_event *e, const struct pw_rec_gpu *g)
{
	int state = (int)(g->c.arg0 <= PW_ACT_FORKED ? g->c.arg0 : 0);
	if (state == PW_ACT_OTHER_CLIENT && (!a->other_client_ns || e->t0_ns < a->other_client_ns))
		a->other_client_ns = e->t0_ns;
	if (state == PW_ACT_FORKED)
		a->fork_children++;
	if (state_rank(state) <= state_rank(a->state))
		return 0;
	a->state = state;
	a->error_code = g->c.ret;
	/* CUPTI was never asked when the driver could not serve it: a[0] is the driver's version then */
	struct pw_act_status_info info = pw_get_act_status(g->a);
	a->cupti_version = state == PW_ACT_DRIVER_UNUSABLE ? 0 : info.version;
	a->driver_version = state == PW_ACT_DRIVER_UNUSABLE ? info.version : 0;
	a->runtime_major = state == PW_ACT_DRIVER_UNUSABLE ? info.runtime_major : 0;
	a->clock = info.clock == PW_ACT_CLOCK_CALLBACK || info.clock == PW_ACT_CLOCK_OFFSET ? (int)info.clock : 0;
	free(a->cupti_path);
	a->cupti_path = NULL;
	if (e->str && e->str_len && !(a->cupti_path = strndup(e->str, e->str_len < 4096 ? e->str_len : 4096)))
		return -1;
	return 0;
}

static int note_device_info(struct pw_act_report *a, const struct pw_raw_event *e, const struct pw_rec_gpu *g)
{
	struct pw_act_work *w = a->work;
	if (g->device < 0)
		return 0;
	size_t i = 0;
	while (i < w->ninfos && w->infos[i].id != g->device)
		i++;
	if (i == w->ninfos) {
		if (w->ninfos >= PW_ACT_MAX_DEVICES)
			return 0;
		w->ninfos++;
	}
	struct pw_act_device *d = &w->infos[i];
	free(d->name);
	memset(d, 0, sizeof *d);
	d->id = g->device;
	d->has_info = 1;
	d->bandwidth_kbps = g->c.arg0;
	struct pw_device_info info = pw_get_device_info(g->a);
	d->memory_bytes = info.memory_bytes;
	d->sms = info.sms;
	d->cc_major = info.cc_major;
	d->cc_minor = info.cc_minor;
	if (e->str && e->str_len && !(d->name = strndup(e->str, e->str_len < 256 ? e->str_len : 256)))
		return -1;
	return 0;
}

int pw_act_event(struct pw_act_report **actp, struct pw_act_file *f, const struct pw_raw_event *e)
{
	uint16_t ev = e->rec->h.type;
	if (ev >= PW_EV_COUNT || !pw_kind_is_activity(pw_events[ev].kind))
		return 0;
	struct pw_act_report *a = *actp;
	if (!a && !(a = *actp = report_new()))
		return -1;
	const struct pw_rec_gpu *g = (const struct pw_rec_gpu *)e->rec;
	enum pw_event_kind kind = pw_events[ev].kind;
	if (kind != PW_K_ACT_STATUS && kind != PW_K_ACT_DROPPED) /* those two are the preload's, not CUPTI's */
		a->records++;
	switch (kind) {
	case PW_K_ACT_KERNEL:
		return note_op(a, f, e, g, PW_ACT_OP_KERNEL);
	case PW_K_ACT_MEMCPY:
		return note_op(a, f, e, g, PW_ACT_OP_MEMCPY);
	case PW_K_ACT_MEMSET:
		return note_op(a, f, e, g, PW_ACT_OP_MEMSET);
	case PW_K_ACT_API:
		if (!g->correlation)
			return 0;
		if (pw_reserve(&f->api, &f->api_cap, f->napi + 1, sizeof *f->api))
			return -1;
		f->api[f->napi++] = (struct pw_act_corr){.value = g->c.t0, .t1 = g->c.t1, .corr = g->correlation,
							  .tid = (uint32_t)g->a[0], .cbid = (uint32_t)g->c.arg0,
							  .driver = g->c.arg1 == PW_ACT_API_DRIVER};
		return 0;
	case PW_K_ACT_EXTCORR:
		if (!g->correlation || !g->c.arg0)
			return 0;
		if (pw_reserve(&f->ext, &f->ext_cap, f->next + 1, sizeof *f->ext))
			return -1;
		f->ext[f->next++] = (struct pw_act_corr){.value = g->c.arg0, .corr = g->correlation};
		return 0;
	case PW_K_ACT_OVERHEAD:
		if (g->c.t0 && g->c.t1 >= g->c.t0) {
			a->overhead_records++;
			a->overhead_ns = pw_sat_add(a->overhead_ns, g->c.t1 - g->c.t0);
		}
		return 0;
	case PW_K_ACT_DEVICE:
		return note_device_info(a, e, g);
	case PW_K_ACT_DROPPED:
		a->dropped = pw_sat_add(a->dropped, g->c.arg0);
		a->buffers_refused = pw_sat_add(a->buffers_refused, g->c.arg1);
		return 0;
	case PW_K_ACT_STATUS:
		return note_status(a, e, g);
	default:
		return 0;
	}
}

int pw_act_api(struct pw_act_report **actp, struct pw_act_file *f, const struct pw_raw_event *e, uint64_t dur)
{
	uint16_t ev = e->rec->h.type;
	if (ev >= PW_EV_COUNT || !pw_kind_is_api(pw_events[ev].kind))
		return 0;
	enum pw_event_kind kind = pw_events[ev].kind;
	const struct pw_rec_api *r = (const struct pw_rec_api *)e->rec;
	int failed = r->c.h.err != 0;
	struct pw_act_wrapped w = {.corr = r->corr, .t0 = e->t0_ns, .tid = r->c.h.tid, .ev = ev};
	if (kind == PW_K_GPU_MEMCPY && !failed && r->c.arg0 < PW_ACT_SMALL_COPY) {
		w.flags |= W_SMALL_COPY;
	}
	if (kind == PW_K_COLL && !failed) {
		uint64_t nranks;
		uint64_t bytes = pw_coll_bytes(r, &nranks);
		w.bus = (double)bytes * pw_coll_bus_factor(ev, nranks);
		w.flags |= W_COLL;
	}
	if (!w.corr && !(w.flags & W_SMALL_COPY))
		return 0;
	struct pw_act_report *a = *actp;
	if (!a && !(a = *actp = report_new()))
		return -1;
	if (w.flags & W_SMALL_COPY) {
		a->small_copy_calls++;
		a->small_copy_cpu_ns = pw_sat_add(a->small_copy_cpu_ns, dur);
	}
	if (!w.corr)
		return 0;
	if (pw_reserve(&f->wrapped, &f->wrapped_cap, f->nwrapped + 1, sizeof *f->wrapped))
		return -1;
	f->wrapped[f->nwrapped++] = w;
	return 0;
}

/* ---- linking a file's operations to their calls ---- */

static int by_corr(const void *x, const void *y)
{
	const struct pw_act_corr *a = x, *b = y;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return (a->value > b->value) - (a->value < b->value);
}

static int by_ext(const void *x, const void *y)
{
	const struct pw_act_wrapped *a = x, *b = y;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return (a->t0 > b->t0) - (a->t0 < b->t0);
}

/* The first entry of sorted v[0..n) with correlation id corr, or NULL. */
static const struct pw_act_corr *find_corr(const struct pw_act_corr *v, size_t n, uint32_t corr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].corr == corr ? &v[lo] : NULL;
}

static struct pw_act_wrapped *find_wrapped(struct pw_act_wrapped *v, size_t n, uint64_t ext)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].corr < ext)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].corr == ext ? &v[lo] : NULL;
}

/* Adds dur of the operation's time to a call's row; counted says whether the operation is counted there. */
static void add_call_share(struct pw_act_call_time *c, const struct act_op *op, uint64_t dur, int counted)
{
	if (op->kind == PW_ACT_OP_KERNEL) {
		c->kernels += counted != 0;
		c->kernel_ns = pw_sat_add(c->kernel_ns, dur);
	} else {
		c->copies += counted != 0;
		c->copy_ns = pw_sat_add(c->copy_ns, dur);
	}
}

static void add_call_time(struct pw_act_call_time *c, const struct act_op *op)
{
	add_call_share(c, op, op->t1 - op->t0, 1);
}

/* Whether wr[i]'s call is the first of its kind among wr[0..i). */
static int first_of_kind(const struct pw_act_wrapped *wr, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if ((wr[j].flags & W_COLL) && wr[j].ev == wr[i].ev)
			return 0;
	return 1;
}

/* The calls sharing wr's external id (wr the first of them): an NCCL group's when more than one. */
static size_t group_size(const struct pw_act_file *f, const struct pw_act_wrapped *wr)
{
	size_t n = 0;
	while (wr + n < f->wrapped + f->nwrapped && wr[n].corr == wr->corr)
		n++;
	return n;
}

/* The call of a group (wr, n of them, by time) whose work an operation is taken for: the collective with the
 * most bus bytes (the first of equals), else the group's end, which launched the work. */
static struct pw_act_wrapped *group_launcher(struct pw_act_wrapped *wr, size_t n)
{
	struct pw_act_wrapped *main = NULL;
	for (size_t i = 0; i < n; i++)
		if ((wr[i].flags & W_COLL) && (!main || wr[i].bus > main->bus))
			main = &wr[i];
	return main ? main : &wr[n - 1];
}

/* The calls of an NCCL group share its external id (wr is the first, n of them, by time): the group's end
 * launched its work, which is its collectives'. The operation's time goes to them by their bus bytes (evenly
 * when none says; the largest share takes the rounding, so that the parts add up), and the operation counts
 * once on the row of each kind of call in the group. Returns the call with the largest share (the group's
 * end when the group had no collective). */
static struct pw_act_wrapped *link_group(struct pw_act_report *a, struct pw_act_wrapped *wr, size_t n,
					 const struct act_op *op)
{
	double total = 0;
	size_t colls = 0;
	struct pw_act_wrapped *main = group_launcher(wr, n);
	for (size_t i = 0; i < n; i++)
		if (wr[i].flags & W_COLL) {
			total += wr[i].bus;
			colls++;
		}
	if (!colls) {
		add_call_time(&a->by_call[main->ev < PW_EV_COUNT ? main->ev : 0], op);
		return main;
	}
	uint64_t dur = op->t1 - op->t0, given = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(wr[i].flags & W_COLL) || &wr[i] == main)
			continue;
		double share = total > 0 ? wr[i].bus / total : 1.0 / (double)colls;
		uint64_t part = (uint64_t)((double)dur * share);
		given += part;
		add_call_share(&a->by_call[wr[i].ev < PW_EV_COUNT ? wr[i].ev : 0], op, part, first_of_kind(wr, i));
	}
	add_call_share(&a->by_call[main->ev < PW_EV_COUNT ? main->ev : 0], op, dur > given ? dur - given : 0,
		       first_of_kind(wr, (size_t)(main - wr)));
	return main;
}

static void link_op(struct pw_act_report *a, struct pw_act_file *f, struct act_op *op)
{
	struct pw_act_work *w = a->work;
	const struct pw_act_corr *x = find_corr(f->ext, f->next, op->corr);
	struct pw_act_wrapped *wr = x ? find_wrapped(f->wrapped, f->nwrapped, x->value) : NULL;
	const struct pw_act_corr *api = find_corr(f->api, f->napi, op->corr);
	uint64_t dur = op->t1 - op->t0;
	size_t group = wr ? group_size(f, wr) : 0;
	if (wr) {
		struct pw_act_wrapped *by = group > 1 ? link_group(a, wr, group, op) : wr;
		op->link = LINK_WRAPPED;
		op->tid = by->tid;
		op->call_ev = by->ev;
		op->launch = api && api->value ? api->value : wr[group - 1].t0;
		if (group == 1)
			add_call_time(&a->by_call[wr->ev < PW_EV_COUNT ? wr->ev : 0], op);
	} else if (api) {
		op->link = LINK_API;
		op->tid = api->tid;
		op->launch = api->value;
		add_call_time(&a->by_api_only, op);
	} else {
		add_call_time(&a->unlinked, op);
	}
	if (op->kind == PW_ACT_OP_KERNEL) {
		if (op->link == LINK_WRAPPED)
			a->kernels_linked++;
		else if (op->link == LINK_API)
			a->kernels_linked_api++;
		else
			a->kernels_unlinked++;
		int coll = wr ? 0 : (op->flags & OP_NCCL_NAME) != 0;
		for (size_t i = 0; i < group; i++)
			coll |= (wr[i].flags & W_COLL) != 0;
		if (coll) {
			a->coll_kernels++;
			a->coll_kernel_ns = pw_sat_add(a->coll_kernel_ns, dur);
			w->coll_ns[op->dev] = pw_sat_add(w->coll_ns[op->dev], dur);
			if (wr)
				a->coll_linked_ns = pw_sat_add(a->coll_linked_ns, dur);
			for (size_t i = 0; i < group; i++) {
				if ((wr[i].flags & W_COLL) && !wr[i].used)
					a->coll_bus_bytes += wr[i].bus;
				wr[i].used = 1;
			}
		}
	} else if (op->kind == PW_ACT_OP_MEMCPY && wr && (wr->flags & W_SMALL_COPY)) {
		a->small_copy_gpu_ns = pw_sat_add(a->small_copy_gpu_ns, dur);
	}
}

int pw_act_file_end(struct pw_act_report *a, struct pw_act_file *f, const char *path, int pid)
{
	sort(f->ext, f->next, sizeof *f->ext, by_corr);
	sort(f->api, f->napi, sizeof *f->api, by_corr);
	sort(f->wrapped, f->nwrapped, sizeof *f->wrapped, by_ext);
	if (!a || f->first_op == SIZE_MAX || f->first_op >= a->work->nops)
		return 0;
	int rc = 0;
	struct pw_act_work *w = a->work;
	uint32_t fi = (uint32_t)w->nfiles;
	char *copy = strdup(path ? path : "");
	if (!copy || pw_reserve(&w->files, &w->files_cap, w->nfiles + 1, sizeof *w->files)) {
		free(copy);
		fi = UINT32_MAX; /* the operations are linked, their gaps will have no thread's calls */
		rc = -1;
	} else {
		w->files[w->nfiles++] = (struct act_file){copy, pid};
	}
	for (size_t i = f->first_op; i < w->nops; i++) {
		w->ops[i].file = fi;
		link_op(a, f, &w->ops[i]);
	}
	return rc;
}

void pw_act_file_launcher(const struct pw_act_file *f, uint32_t corr, struct pw_act_launcher *out)
{
	*out = (struct pw_act_launcher){.source = PW_ACT_SRC_NONE};
	const struct pw_act_corr *x = find_corr(f->ext, f->next, corr);
	if (x) {
		out->has_ext = 1;
		out->ext = x->value;
		struct pw_act_wrapped *wr = find_wrapped(f->wrapped, f->nwrapped, x->value);
		if (wr) {
			const struct pw_act_wrapped *by = group_launcher(wr, group_size(f, wr));
			out->source = PW_ACT_SRC_WRAPPED;
			out->tid = by->tid;
			out->t0 = by->t0;
			return;
		}
	}
	const struct pw_act_corr *api = find_corr(f->api, f->napi, corr);
	if (api) {
		out->source = PW_ACT_SRC_API;
		out->tid = api->tid;
		out->t0 = api->value;
		out->t1 = api->t1;
		out->cbid = api->cbid;
		out->driver = api->driver;
	}
}

/* ---- the devices ---- */

static int by_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

static int by_dev_start(const void *x, const void *y)
{
	const struct act_op *a = x, *b = y;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	return (a->t1 > b->t1) - (a->t1 < b->t1);
}

/* How many of sorted v[0..n) are <= x. */
static size_t count_le(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* One idle gap while it is classified. */
struct gap_w {
	uint64_t g0, g1;
	uint64_t input_ns, sleep_ns;
	uint64_t sync_ns; /* how long the synchronising call at g0 had waited by then, plus T's time in the gap in
			   * synchronising calls */
	uint32_t file, tid;
	uint32_t op;        /* the operation that ended it */
	uint32_t last_pair; /* its latest call pair, NO_PAIR when none */
	uint16_t dev;
	uint16_t sync_ev;
	uint8_t cls;
	uint8_t unreadable; /* the launching thread's file could not be read again */
};

/* Time of one event's calls inside one gap. */
struct gap_pair {
	uint64_t ns;
	uint64_t count;
	uint32_t gap;
	uint16_t ev;
};

struct finish {
	struct pw_act_report *a;
	struct gap_w *gaps;
	size_t ngaps, gaps_cap;
	struct gap_pair *pairs;
	size_t npairs, pairs_cap;
	int oom;
};

/* Latency, queue depth, busy time and gaps of the device whose operations are ops[0..n), sorted by start.
 * lat, launch, end: scratch arrays of n. */
static void device_figures(struct finish *fs, struct pw_act_device *d, const struct act_op *ops, size_t n,
			   size_t base, uint64_t *lat, uint64_t *launch, uint64_t *end)
{
	if (!n)
		return;
	uint64_t cur_s = ops[0].t0, cur_e = ops[0].t1, last = ops[0].t1;
	for (size_t i = 0; i < n; i++) {
		const struct act_op *op = &ops[i];
		uint64_t dur = op->t1 - op->t0;
		if (op->kind == PW_ACT_OP_KERNEL)
			d->kernel_ns = pw_sat_add(d->kernel_ns, dur);
		else if (op->kind == PW_ACT_OP_MEMCPY)
			d->memcpy_ns = pw_sat_add(d->memcpy_ns, dur);
		else
			d->memset_ns = pw_sat_add(d->memset_ns, dur);
		if (op->t1 > last)
			last = op->t1;
		if (i == 0)
			continue;
		if (op->t0 > cur_e) {
			d->busy_ns += cur_e - cur_s;
			uint64_t gap = op->t0 - cur_e;
			d->gaps++;
			if (gap > d->longest_gap_ns)
				d->longest_gap_ns = gap;
			if (!fs->oom && !pw_reserve(&fs->gaps, &fs->gaps_cap, fs->ngaps + 1, sizeof *fs->gaps)) {
				fs->gaps[fs->ngaps++] = (struct gap_w){.g0 = cur_e, .g1 = op->t0, .file = op->file,
								       .tid = op->tid, .op = (uint32_t)(base + i),
								       .last_pair = NO_PAIR, .dev = op->dev};
			} else {
				fs->oom = 1;
			}
			cur_s = op->t0;
			cur_e = op->t1;
		} else if (op->t1 > cur_e) {
			cur_e = op->t1;
		}
	}
	d->busy_ns += cur_e - cur_s;
	d->first_ns = ops[0].t0;
	d->last_ns = last;
	d->span_ns = last - ops[0].t0;
	d->idle_ns = d->span_ns > d->busy_ns ? d->span_ns - d->busy_ns : 0;

	/* launch latency: kernels with a known launch */
	size_t nlat = 0, nl = 0;
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		const struct act_op *op = &ops[i];
		if (!op->launch || (op->flags & OP_GRAPH))
			continue; /* a graph's kernels were launched together, by its launch */
		launch[nl] = op->launch;
		end[nl++] = op->t1 > op->launch ? op->t1 : op->launch;
		if (op->kind == PW_ACT_OP_KERNEL) {
			lat[nlat] = op->t0 > op->launch ? op->t0 - op->launch : 0;
			sum = pw_sat_add(sum, lat[nlat++]);
		}
	}
	d->launches = nlat;
	if (!nlat)
		return;
	sort(lat, nlat, sizeof *lat, by_u64);
	d->latency_mean_ns = sum / nlat;
	d->latency_p50_ns = lat[(nlat - 1) / 2];
	d->latency_p95_ns = lat[(nlat * 95 + 99) / 100 - 1];
	d->latency_max_ns = lat[nlat - 1];

	/* queue depth at each kernel's launch: launched at or before it, not finished by then, itself excluded */
	sort(launch, nl, sizeof *launch, by_u64);
	sort(end, nl, sizeof *end, by_u64);
	double depth_sum = 0;
	for (size_t i = 0; i < n; i++) {
		const struct act_op *op = &ops[i];
		if (!op->launch || op->kind != PW_ACT_OP_KERNEL || (op->flags & OP_GRAPH))
			continue;
		uint64_t L = op->launch;
		size_t launched = count_le(launch, nl, L), ended = count_le(end, nl, L);
		uint64_t self_end = op->t1 > L ? op->t1 : L;
		size_t minus = ended + (self_end > L ? 1 : 0);
		uint64_t depth = launched > minus ? launched - minus : 0;
		depth_sum += (double)depth;
		if (depth > d->queue_max)
			d->queue_max = depth;
	}
	d->queue_mean = depth_sum / (double)nlat;
}

/* ---- the second pass: the launching threads' calls inside the gaps ---- */

struct pass {
	struct finish *fs;
	size_t gb, ge;     /* this file's gaps with a known thread, sorted by (tid, g0) */
	uint32_t *tids;    /* distinct tids of those gaps, ascending */
	size_t *tb, *te;   /* each tid's range of gaps */
	size_t ntids;
	uint64_t *maxend;  /* per gap: the largest g1 of its thread's gaps up to it */
};

static int is_input_event(uint16_t ev, enum pw_event_kind kind)
{
	switch (ev) {
	case PW_EV_POLL:
	case PW_EV_PPOLL:
	case PW_EV_SELECT:
	case PW_EV_PSELECT:
	case PW_EV_EPOLL_WAIT:
	case PW_EV_EPOLL_PWAIT:
	case PW_EV_MUTEX_LOCK:
	case PW_EV_COND_WAIT:
	case PW_EV_COND_TIMEDWAIT:
	case PW_EV_SEM_WAIT:
	case PW_EV_SEM_TIMEDWAIT:
	case PW_EV_PTHREAD_JOIN:
		return 1;
	default:
		return kind == PW_K_READ || kind == PW_K_WAIT;
	}
}

static int is_sleep_event(uint16_t ev)
{
	return ev == PW_EV_NANOSLEEP || ev == PW_EV_CLOCK_NANOSLEEP || ev == PW_EV_USLEEP || ev == PW_EV_SLEEP;
}

static int is_sync_call(const struct pw_rec_call *rec, enum pw_event_kind kind)
{
	if (kind == PW_K_GPU_SYNC)
		return 1;
	return kind == PW_K_GPU_MEMCPY && !(((const struct pw_rec_api *)rec)->sub & PW_API_ASYNC);
}

static void note_pair(struct finish *fs, struct gap_w *g, size_t gi, uint16_t ev, uint64_t ns)
{
	if (g->last_pair != NO_PAIR && fs->pairs[g->last_pair].ev == ev) {
		struct gap_pair *p = &fs->pairs[g->last_pair];
		p->ns = pw_sat_add(p->ns, ns);
		p->count++;
		return;
	}
	if (fs->npairs >= NO_PAIR || pw_reserve(&fs->pairs, &fs->pairs_cap, fs->npairs + 1, sizeof *fs->pairs)) {
		fs->oom = 1;
		return;
	}
	fs->pairs[fs->npairs] = (struct gap_pair){ns, 1, (uint32_t)gi, ev};
	g->last_pair = (uint32_t)fs->npairs++;
}

static void pass_event(void *ctx, const struct pw_raw_event *e)
{
	struct pass *p = ctx;
	const struct pw_rec_call *rec = e->rec;
	uint16_t ev = rec->h.type;
	enum pw_event_kind kind = pw_events[ev].kind;
	if (pw_kind_is_activity(kind) || kind == PW_K_FDINFO || ev == PW_EV_PAD)
		return;
	size_t lo = 0, hi = p->ntids;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->tids[mid] < rec->h.tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= p->ntids || p->tids[lo] != rec->h.tid)
		return;
	size_t b = p->tb[lo], en = p->te[lo];
	struct gap_w *gaps = p->fs->gaps;
	uint64_t r0 = e->t0_ns, r1 = e->t1_ns > e->t0_ns ? e->t1_ns : e->t0_ns;
	/* the gaps that start at or before r1, walked back while one of them may still end after r0 */
	size_t l = b, h = en;
	while (l < h) {
		size_t mid = l + (h - l) / 2;
		if (gaps[mid].g0 <= r1)
			l = mid + 1;
		else
			h = mid;
	}
	int sync = is_sync_call(rec, kind), input = is_input_event(ev, kind), sleep = is_sleep_event(ev);
	for (size_t i = l; i-- > b && p->maxend[i] > r0;) {
		struct gap_w *g = &gaps[i];
		if (g->g1 <= r0)
			continue;
		if (sync && r0 <= g->g0 && g->g0 <= r1 && !g->sync_ev) {
			g->sync_ev = ev;
			g->sync_ns = pw_sat_add(g->sync_ns, g->g0 - r0);
		}
		uint64_t s = r0 > g->g0 ? r0 : g->g0, t = r1 < g->g1 ? r1 : g->g1;
		if (t <= s)
			continue;
		if (sync)
			g->sync_ns = pw_sat_add(g->sync_ns, t - s);
		if (input)
			g->input_ns = pw_sat_add(g->input_ns, t - s);
		if (sleep)
			g->sleep_ns = pw_sat_add(g->sleep_ns, t - s);
		note_pair(p->fs, g, i, ev, t - s);
	}
}

static int by_file_tid_start(const void *x, const void *y)
{
	const struct gap_w *a = x, *b = y;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->g0 > b->g0) - (a->g0 < b->g0);
}

/* Reads the file of gaps [gb, ge) (one file, known threads, sorted by tid then start) for their threads'
 * calls. */
static void pass_file(struct finish *fs, const char *path, size_t gb, size_t ge)
{
	struct pass p = {.fs = fs, .gb = gb, .ge = ge};
	size_t n = ge - gb;
	p.tids = malloc(n * sizeof *p.tids);
	p.tb = malloc(n * sizeof *p.tb);
	p.te = malloc(n * sizeof *p.te);
	p.maxend = malloc(fs->ngaps * sizeof *p.maxend);
	if (!p.tids || !p.tb || !p.te || !p.maxend) {
		fs->oom = 1;
		goto out;
	}
	for (size_t i = gb; i < ge; i++) {
		int first = i == gb || fs->gaps[i].tid != fs->gaps[i - 1].tid;
		if (first) {
			p.tids[p.ntids] = fs->gaps[i].tid;
			p.tb[p.ntids] = i;
			p.ntids++;
		}
		p.te[p.ntids - 1] = i + 1;
		uint64_t prev = first ? 0 : p.maxend[i - 1];
		p.maxend[i] = fs->gaps[i].g1 > prev ? fs->gaps[i].g1 : prev;
	}
	static const struct pw_raw_visitor v = {.event = pass_event};
	uint64_t skipped = 0;
	char err[512];
	if (pw_raw_read(path, &v, &p, &skipped, err, sizeof err) < 0)
		for (size_t i = gb; i < ge; i++)
			fs->gaps[i].unreadable = 1;
out:
	free(p.tids);
	free(p.tb);
	free(p.te);
	free(p.maxend);
}

static void second_pass(struct finish *fs)
{
	struct pw_act_work *w = fs->a->work;
	if (!fs->ngaps)
		return;
	sort(fs->gaps, fs->ngaps, sizeof *fs->gaps, by_file_tid_start);
	for (size_t i = 0; i < fs->ngaps;) {
		size_t j = i;
		while (j < fs->ngaps && fs->gaps[j].file == fs->gaps[i].file)
			j++;
		size_t k = i;
		while (k < j && !fs->gaps[k].tid) /* unknown thread: nothing to read */
			k++;
		if (k < j && fs->gaps[i].file < w->nfiles)
			pass_file(fs, w->files[fs->gaps[i].file].path, k, j);
		else
			for (; k < j; k++) /* the file was not registered (out of memory) */
				fs->gaps[k].unreadable = 1;
		i = j;
	}
}

static enum pw_gap_class classify(const struct gap_w *g)
{
	uint64_t dur = g->g1 - g->g0;
	if (!g->tid || g->unreadable)
		return PW_GAP_UNKNOWN;
	/* The work the call at g0 waited for could have covered as much of T's time after it, had the call not
	 * waited; the synchronisation is the cause when that and T's further synchronising calls cover at
	 * least half the gap. */
	uint64_t sync = g->sync_ns < dur ? g->sync_ns : dur;
	if (g->sync_ev && sync >= dur - sync)
		return PW_GAP_SYNC;
	uint64_t input = g->input_ns < dur ? g->input_ns : dur, sleep = g->sleep_ns < dur ? g->sleep_ns : dur;
	if (input >= dur - input) /* at least half, without overflow */
		return PW_GAP_INPUT;
	if (sleep >= dur - sleep)
		return PW_GAP_SLEEP;
	if (dur < PW_ACT_LAUNCH_GAP_NS)
		return PW_GAP_LAUNCH;
	return PW_GAP_CPU;
}

/* ---- the kept gaps ---- */

struct top_call {
	uint32_t slot;
	uint16_t ev;
	uint64_t ns, count;
};

static int by_slot_ev(const void *x, const void *y)
{
	const struct top_call *a = x, *b = y;
	if (a->slot != b->slot)
		return a->slot < b->slot ? -1 : 1;
	return (a->ev > b->ev) - (a->ev < b->ev);
}

static int by_call_ns(const void *x, const void *y)
{
	const struct pw_act_gap_call *a = x, *b = y;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return (a->ev > b->ev) - (a->ev < b->ev);
}

/* A kept gap: its index in the finish's gaps, and in the report's. */
struct kept_gap {
	uint32_t gap, slot;
};

static int by_gap_index(const void *x, const void *y)
{
	uint32_t a = ((const struct kept_gap *)x)->gap, b = ((const struct kept_gap *)y)->gap;
	return (a > b) - (a < b);
}

static const char *op_label(const struct pw_act_report *a, const struct act_op *op)
{
	static const char *const copies[] = {"memcpy HtoH", "memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memcpy",
					     "memcpy PtoP"};
	if (op->kind == PW_ACT_OP_KERNEL)
		return op->row != NO_ROW ? a->kernel_rows[op->row].name : "(kernel)";
	if (op->kind == PW_ACT_OP_MEMSET)
		return "memset";
	if (op->row != NO_ROW && a->copy_rows[op->row].dir < sizeof copies / sizeof copies[0])
		return copies[a->copy_rows[op->row].dir];
	return "memcpy";
}

/* Per device, the indexes of its PW_ACT_TOP_GAPS longest gaps (ties: the earliest first) into
 * top[dev * PW_ACT_TOP_GAPS ...], longest first, and how many into ntop[dev]. */
static void rank_top_gaps(const struct finish *fs, uint32_t *top, size_t *ntop)
{
	size_t per = PW_ACT_TOP_GAPS;
	for (size_t i = 0; i < fs->ngaps; i++) {
		const struct gap_w *g = &fs->gaps[i];
		uint32_t *t = top + (size_t)g->dev * per;
		size_t *k = &ntop[g->dev];
		uint64_t dur = g->g1 - g->g0;
		size_t at = *k;
		while (at > 0) {
			const struct gap_w *o = &fs->gaps[t[at - 1]];
			uint64_t od = o->g1 - o->g0;
			if (od > dur || (od == dur && o->g0 <= g->g0))
				break;
			at--;
		}
		if (at >= per)
			continue;
		size_t last = *k < per ? *k : per - 1;
		memmove(t + at + 1, t + at, (last - at) * sizeof *t);
		t[at] = (uint32_t)i;
		if (*k < per)
			(*k)++;
	}
}

/* The ranked gaps into a->gaps (device by device), and into kept[0 .. a->ngaps) sorted by their index in
 * fs->gaps, for slot_of(). */
static void copy_kept_gaps(struct finish *fs, const uint32_t *top, const size_t *ntop, struct kept_gap *kept)
{
	struct pw_act_report *a = fs->a;
	const struct pw_act_work *w = a->work;
	for (size_t d = 0; d < a->ndevices; d++)
		for (size_t k = 0; k < ntop[d]; k++) {
			uint32_t gi = top[d * PW_ACT_TOP_GAPS + k];
			const struct gap_w *g = &fs->gaps[gi];
			struct pw_act_gap *o = &a->gaps[a->ngaps];
			o->device = a->devices[d].id;
			o->start_ns = g->g0;
			o->duration_ns = g->g1 - g->g0;
			o->tid = g->tid;
			o->pid = g->file < w->nfiles && g->tid ? w->files[g->file].pid : 0;
			o->cls = (enum pw_gap_class)g->cls;
			o->sync_ev = g->cls == PW_GAP_SYNC ? g->sync_ev : 0;
			o->running_ns = o->duration_ns;
			o->next = op_label(a, &w->ops[g->op]);
			kept[a->ngaps] = (struct kept_gap){gi, (uint32_t)a->ngaps};
			a->ngaps++;
		}
	sort(kept, a->ngaps, sizeof *kept, by_gap_index);
}

/* The index in a->gaps of gap gi of fs->gaps, or -1 when it is not kept. */
static long slot_of(const struct kept_gap *kept, size_t n, uint32_t gi)
{
	const struct kept_gap key = {gi, 0};
	const struct kept_gap *hit = n ? bsearch(&key, kept, n, sizeof *kept, by_gap_index) : NULL;
	return hit ? (long)hit->slot : -1;
}

/* The call pairs of the kept gaps, by slot. Returns 0, or -1 when out of memory (with those gathered so far). */
static int gather_gap_calls(const struct finish *fs, const struct kept_gap *kept, struct top_call **calls,
			    size_t *ncalls)
{
	size_t cap = 0;
	for (size_t i = 0; i < fs->npairs; i++) {
		long slot = slot_of(kept, fs->a->ngaps, fs->pairs[i].gap);
		if (slot < 0)
			continue;
		if (pw_reserve(calls, &cap, *ncalls + 1, sizeof **calls))
			return -1;
		(*calls)[(*ncalls)++] = (struct top_call){(uint32_t)slot, fs->pairs[i].ev, fs->pairs[i].ns,
							   fs->pairs[i].count};
	}
	return 0;
}

/* One call of gap o, which keeps its PW_ACT_GAP_CALLS longest; the others' time goes to other_calls_ns. */
static void add_gap_call(struct pw_act_gap *o, struct pw_act_gap_call c)
{
	o->running_ns = o->running_ns > c.ns ? o->running_ns - c.ns : 0;
	if (o->ncalls < PW_ACT_GAP_CALLS) {
		o->calls[o->ncalls++] = c;
		return;
	}
	size_t min = 0;
	for (size_t k = 1; k < PW_ACT_GAP_CALLS; k++)
		if (o->calls[k].ns < o->calls[min].ns)
			min = k;
	if (c.ns > o->calls[min].ns) {
		o->other_calls_ns = pw_sat_add(o->other_calls_ns, o->calls[min].ns);
		o->calls[min] = c;
	} else {
		o->other_calls_ns = pw_sat_add(o->other_calls_ns, c.ns);
	}
}

/* The gathered calls, summed per (gap, event), into their gaps, each gap's by time. */
static void attach_gap_calls(struct pw_act_report *a, struct top_call *calls, size_t ncalls)
{
	sort(calls, ncalls, sizeof *calls, by_slot_ev);
	for (size_t i = 0; i < ncalls;) {
		size_t j = i;
		struct pw_act_gap_call c = {calls[i].ev, 0, 0};
		while (j < ncalls && calls[j].slot == calls[i].slot && calls[j].ev == calls[i].ev) {
			c.ns = pw_sat_add(c.ns, calls[j].ns);
			c.count += calls[j].count;
			j++;
		}
		add_gap_call(&a->gaps[calls[i].slot], c);
		i = j;
	}
	for (size_t k = 0; k < a->ngaps; k++)
		sort(a->gaps[k].calls, a->gaps[k].ncalls, sizeof a->gaps[k].calls[0], by_call_ns);
}

/* The PW_ACT_TOP_GAPS largest gaps of each device, with their calls. */
static int keep_top_gaps(struct finish *fs)
{
	struct pw_act_report *a = fs->a;
	size_t nslots = a->ndevices * PW_ACT_TOP_GAPS;
	uint32_t *top = malloc((nslots ? nslots : 1) * sizeof *top);
	size_t *ntop = calloc(a->ndevices ? a->ndevices : 1, sizeof *ntop);
	struct kept_gap *kept = NULL;
	struct top_call *calls = NULL;
	size_t ncalls = 0;
	int rc = -1;
	if (!top || !ntop)
		goto out;
	rank_top_gaps(fs, top, ntop);
	size_t n = 0;
	for (size_t d = 0; d < a->ndevices; d++)
		n += ntop[d];
	a->gaps = calloc(n ? n : 1, sizeof *a->gaps);
	kept = malloc((n ? n : 1) * sizeof *kept);
	if (!a->gaps || !kept)
		goto out;
	copy_kept_gaps(fs, top, ntop, kept);
	rc = gather_gap_calls(fs, kept, &calls, &ncalls);
	attach_gap_calls(a, calls, ncalls);
out:
	free(calls);
	free(top);
	free(ntop);
	free(kept);
	return rc;
}

/* ---- finishing ---- */

static int by_graph_time(const void *x, const void *y)
{
	const struct pw_act_graph_row *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns < b->total_ns ? 1 : -1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return (a->graph_id > b->graph_id) - (a->graph_id < b->graph_id);
}

static int by_kernel_row(const void *x, const void *y)
{
	const struct pw_act_kernel_row *a = x, *b = y;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->stream > b->stream) - (a->stream < b->stream);
}

static int by_copy_row(const void *x, const void *y)
{
	const struct pw_act_copy_row *a = x, *b = y;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->memset != b->memset)
		return a->memset < b->memset ? -1 : 1;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	uint64_t ka = copy_key_of(a), kb = copy_key_of(b);
	return (ka > kb) - (ka < kb);
}

static int by_device(const void *x, const void *y)
{
	const struct pw_act_device *a = x, *b = y;
	return (a->id > b->id) - (a->id < b->id);
}

static int by_gap(const void *x, const void *y)
{
	const struct pw_act_gap *a = x, *b = y;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->duration_ns != b->duration_ns)
		return a->duration_ns > b->duration_ns ? -1 : 1;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static void aggregate_classes(struct finish *fs)
{
	struct pw_act_report *a = fs->a;
	for (size_t i = 0; i < fs->ngaps; i++) {
		struct gap_w *g = &fs->gaps[i];
		enum pw_gap_class c = classify(g);
		uint64_t dur = g->g1 - g->g0;
		g->cls = (uint8_t)c;
		struct pw_act_class *k = &a->classes[c];
		k->gaps++;
		k->idle_ns = pw_sat_add(k->idle_ns, dur);
		a->devices[g->dev].idle_by_class[c] = pw_sat_add(a->devices[g->dev].idle_by_class[c], dur);
		if (c == PW_GAP_SYNC && g->sync_ev < PW_EV_COUNT) {
			k->sync_ns[g->sync_ev] = pw_sat_add(k->sync_ns[g->sync_ev], dur);
			k->sync_gaps[g->sync_ev]++;
		}
	}
	a->gaps_total = fs->ngaps;
	for (size_t i = 0; i < fs->npairs; i++) {
		const struct gap_pair *p = &fs->pairs[i];
		struct pw_act_class *k = &a->classes[fs->gaps[p->gap].cls];
		k->call_ns[p->ev] = pw_sat_add(k->call_ns[p->ev], p->ns);
		k->call_count[p->ev] += p->count;
	}
}

int pw_act_finish(struct pw_act_report *a)
{
	if (!a || !a->work)
		return 0;
	struct pw_act_work *w = a->work;
	struct finish fs = {.a = a, .oom = w->oom};
	uint64_t *s1 = NULL, *s2 = NULL, *s3 = NULL;
	size_t n = w->nops;
	if (n) {
		s1 = malloc(n * sizeof *s1);
		s2 = malloc(n * sizeof *s2);
		s3 = malloc(n * sizeof *s3);
	}
	if (n && (!s1 || !s2 || !s3)) {
		fs.oom = 1;
		n = 0;
	}
	/* the median kernel */
	size_t nk = 0;
	for (size_t i = 0; i < n; i++)
		if (w->ops[i].kind == PW_ACT_OP_KERNEL)
			s1[nk++] = w->ops[i].t1 - w->ops[i].t0;
	if (nk) {
		sort(s1, nk, sizeof *s1, by_u64);
		a->kernel_median_ns = s1[(nk - 1) / 2];
	}
	if (n)
		sort(w->ops, n, sizeof *w->ops, by_dev_start);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && w->ops[j].dev == w->ops[i].dev)
			j++;
		device_figures(&fs, &a->devices[w->ops[i].dev], w->ops + i, j - i, i, s1, s2, s3);
		i = j;
	}
	free(s1);
	free(s2);
	free(s3);
	second_pass(&fs);
	aggregate_classes(&fs);
	if (keep_top_gaps(&fs))
		fs.oom = 1;
	/* the collective device */
	uint64_t best = 0;
	for (size_t d = 0; d < a->ndevices; d++)
		if (w->coll_ns[d] > best) {
			best = w->coll_ns[d];
			a->coll_device = a->devices[d].id;
		}
	/* the devices' descriptions */
	for (size_t d = 0; d < a->ndevices; d++)
		for (size_t i = 0; i < w->ninfos; i++)
			if (w->infos[i].id == a->devices[d].id) {
				struct pw_act_device *o = &a->devices[d];
				o->has_info = 1;
				o->name = w->infos[i].name;
				w->infos[i].name = NULL;
				o->sms = w->infos[i].sms;
				o->cc_major = w->infos[i].cc_major;
				o->cc_minor = w->infos[i].cc_minor;
				o->memory_bytes = w->infos[i].memory_bytes;
				o->bandwidth_kbps = w->infos[i].bandwidth_kbps;
			}
	if (a->ndevices)
		sort(a->devices, a->ndevices, sizeof *a->devices, by_device);
	if (a->nkernel_rows)
		sort(a->kernel_rows, a->nkernel_rows, sizeof *a->kernel_rows, by_kernel_row);
	sort(a->graph_rows, a->ngraph_rows, sizeof *a->graph_rows, by_graph_time);
	if (a->ncopy_rows)
		sort(a->copy_rows, a->ncopy_rows, sizeof *a->copy_rows, by_copy_row);
	if (a->ngaps)
		sort(a->gaps, a->ngaps, sizeof *a->gaps, by_gap);
	free(fs.gaps);
	free(fs.pairs);
	work_free(w);
	a->work = NULL;
	return fs.oom ? -1 : 0;
}

size_t pw_act_op_count(const struct pw_act_report *a)
{
	return a && a->work ? a->work->nops : 0;
}

int pw_act_op_launch(const struct pw_act_report *a, size_t i, uint32_t *tid, uint64_t *launch_ns, uint64_t *dur_ns)
{
	if (!a || !a->work || i >= a->work->nops)
		return 0;
	const struct act_op *op = &a->work->ops[i];
	if (!op->tid || !op->launch)
		return 0;
	*tid = op->tid;
	*launch_ns = op->launch;
	*dur_ns = op->t1 > op->t0 ? op->t1 - op->t0 : 0;
	return 1;
}
