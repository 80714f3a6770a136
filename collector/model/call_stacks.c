/* Call stacks of a rank: per-file collection, symbolisation, merging with Python frames, rank tables
 * (call_stacks.h). */
#define _GNU_SOURCE
#include "call_stacks.h"

#include <stdlib.h>
#include <string.h>

#include "../../common/pw_session.h"
#include "../lib/hash_index.h"
#include "../symbols/symbolize.h"
#include "model.h"

#define NONE PW_STACKS_NONE
#define CHAIN_MAX 16 /* inlined frames kept per address */

/* ---- rank tables ---- */

/* A stack's frame ids as the tables compare them. */
struct frame_seq {
	const uint32_t *ids;
	uint32_t len;
};

/* One process image's lookups, for the trace writer. */
struct ref_stack {
	uint64_t ref; /* without PW_STACK_PY_PENDING */
	uint32_t stack;
};
struct deferred_stack {
	uint32_t tid;
	uint32_t stack;
	uint64_t t0_ns;
};
struct pw_stack_image {
	int pid;
	uint32_t image;
	uint64_t start_ns;
	struct ref_stack *refs; /* sorted by ref */
	size_t nrefs;
	struct deferred_stack *deferred; /* events whose Python frames came later, sorted by (tid, t0) */
	size_t ndeferred;
};

struct index {
	char **strs;
	size_t nstrs, strs_cap;
	struct pw_hix strs_ix, frames_ix, stacks_ix, rows_ix;
	struct pw_stack_image *images;
	size_t nimages, images_cap;
};

struct str_key {
	const struct index *ix;
	const char *s;
	size_t len;
};

static int str_eq(const void *ctx, uint32_t pos)
{
	const struct str_key *k = ctx;
	const char *s = k->ix->strs[pos];
	return strlen(s) == k->len && memcmp(s, k->s, k->len) == 0;
}

/* The interned copy of len bytes of s. Returns NULL for a NULL s or when out of memory (*oom set). */
static const char *intern(struct index *ix, const char *s, size_t len, int *oom)
{
	if (!s)
		return NULL;
	struct str_key k = {ix, s, len};
	uint64_t h = pw_hix_hash(pw_hash_bytes(PW_HASH_SEED, s, len));
	int64_t at = pw_hix_find(&ix->strs_ix, h, str_eq, &k);
	if (at >= 0)
		return ix->strs[at];
	char *copy = strndup(s, len);
	if (!copy || pw_reserve(&ix->strs, &ix->strs_cap, ix->nstrs + 1, sizeof *ix->strs) ||
	    pw_hix_add(&ix->strs_ix, h, (uint32_t)ix->nstrs)) {
		free(copy);
		*oom = 1;
		return NULL;
	}
	ix->strs[ix->nstrs++] = copy;
	return copy;
}

struct frame_key {
	const struct pw_stack_report *r;
	const struct pw_stack_frame *fr;
};

static int frame_eq(const void *ctx, uint32_t pos)
{
	const struct frame_key *k = ctx;
	const struct pw_stack_frame *a = &k->r->frames[pos], *b = k->fr;
	/* interned strings: equal text is the same pointer */
	return a->function == b->function && a->file == b->file && a->module == b->module && a->line == b->line &&
	       a->offset == b->offset && a->python == b->python;
}

const char *pw_stack_basename(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path ? path : "?";
}

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Whether a native frame's module is a system, CUDA or profiler library (never the program's own code). */
static int system_module(const char *path)
{
	static const char *const dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/local/cuda"};
	static const char *const names[] = {"libprofwrap", "libcuda", "libcudart", "libcublas", "libcudnn",
					    "libnccl",     "libcupti", "libc.",	    "libpthread", "ld-linux",
					    "libstdc++",   "libgcc_s"};
	if (!path)
		return 0;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (starts_with(path, dirs[i]))
			return 1;
	const char *base = pw_stack_basename(path);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (starts_with(base, names[i]))
			return 1;
	return 0;
}

/* The rank's id of a frame whose strings are interned. Returns the id, or NONE when out of memory. */
static uint32_t frame_id(struct pw_stack_report *r, const struct pw_stack_frame *fr)
{
	struct index *ix = r->index;
	uint64_t h = (uint64_t)(uintptr_t)fr->function;
	h = pw_hash_combine(h, (uint64_t)(uintptr_t)fr->file);
	h = pw_hash_combine(h, (uint64_t)(uintptr_t)fr->module);
	h = pw_hash_combine(h, fr->line);
	h = pw_hash_combine(h, fr->offset);
	h = pw_hix_hash(pw_hash_combine(h, fr->python));
	struct frame_key k = {r, fr};
	int64_t at = pw_hix_find(&ix->frames_ix, h, frame_eq, &k);
	if (at >= 0)
		return (uint32_t)at;
	if (r->nframes >= NONE - 1 || pw_reserve(&r->frames, &r->frames_cap, r->nframes + 1, sizeof *r->frames) ||
	    pw_hix_add(&ix->frames_ix, h, (uint32_t)r->nframes))
		return NONE;
	r->frames[r->nframes] = *fr;
	r->frames[r->nframes].system = !fr->python && system_module(fr->module);
	return (uint32_t)r->nframes++;
}

struct stack_key {
	const struct pw_stack_report *r;
	struct frame_seq seq;
};

static int stack_eq(const void *ctx, uint32_t pos)
{
	const struct stack_key *k = ctx;
	const struct pw_stack_entry *s = &k->r->stacks[pos];
	return s->len == k->seq.len && !memcmp(k->r->frame_ids + s->first, k->seq.ids, s->len * sizeof *k->seq.ids);
}

/* The rank's id of the stack seq. Returns it, or NONE when out of memory. */
static uint32_t stack_id(struct pw_stack_report *r, struct frame_seq seq)
{
	struct index *ix = r->index;
	uint64_t h = 0x6a09e667f3bcc908ull;
	for (uint32_t i = 0; i < seq.len; i++)
		h = pw_hash_combine(h, seq.ids[i]);
	h = pw_hix_hash(pw_hash_combine(h, seq.len));
	struct stack_key k = {r, seq};
	int64_t at = pw_hix_find(&ix->stacks_ix, h, stack_eq, &k);
	if (at >= 0)
		return (uint32_t)at;
	if (r->nstacks >= NONE - 1 || r->nframe_ids + seq.len >= NONE ||
	    pw_reserve(&r->stacks, &r->stacks_cap, r->nstacks + 1, sizeof *r->stacks) ||
	    pw_reserve(&r->frame_ids, &r->frame_ids_cap, r->nframe_ids + seq.len + 1, sizeof *r->frame_ids) ||
	    pw_hix_add(&ix->stacks_ix, h, (uint32_t)r->nstacks))
		return NONE;
	if (seq.len)
		memcpy(r->frame_ids + r->nframe_ids, seq.ids, seq.len * sizeof *seq.ids);
	r->stacks[r->nstacks] = (struct pw_stack_entry){(uint32_t)r->nframe_ids, seq.len};
	r->nframe_ids += seq.len;
	return (uint32_t)r->nstacks++;
}

struct row_key {
	const struct pw_stack_report *r;
	uint32_t ev, stack;
};

static int row_eq(const void *ctx, uint32_t pos)
{
	const struct row_key *k = ctx;
	return k->r->rows[pos].ev == k->ev && k->r->rows[pos].stack == k->stack;
}

/* Adds count events of ev on stack to the rank. Returns 0 or -1 when out of memory. */
static int add_row(struct pw_stack_report *r, uint32_t ev, uint32_t stack, uint64_t count, uint64_t total_ns)
{
	struct index *ix = r->index;
	uint64_t h = pw_hix_hash(pw_hash_combine(pw_hash_combine(0, ev), stack));
	struct row_key k = {r, ev, stack};
	int64_t at = pw_hix_find(&ix->rows_ix, h, row_eq, &k);
	if (at < 0) {
		if (r->nrows >= NONE - 1 || pw_reserve(&r->rows, &r->rows_cap, r->nrows + 1, sizeof *r->rows) ||
		    pw_hix_add(&ix->rows_ix, h, (uint32_t)r->nrows))
			return -1;
		r->rows[r->nrows] = (struct pw_stack_row){ev, stack, 0, 0};
		at = (int64_t)r->nrows++;
	}
	struct pw_stack_row *row = &r->rows[at];
	row->count += count;
	row->total_ns = row->total_ns > UINT64_MAX - total_ns ? UINT64_MAX : row->total_ns + total_ns;
	return 0;
}

/* *rp, made on first use. Returns it, or NULL when out of memory. */
static struct pw_stack_report *report_get(struct pw_stack_report **rp)
{
	if (*rp)
		return *rp;
	struct pw_stack_report *r = calloc(1, sizeof *r);
	struct index *ix = calloc(1, sizeof *ix);
	if (!r || !ix) {
		free(r);
		free(ix);
		return NULL;
	}
	r->index = ix;
	return *rp = r;
}

/* ---- per file ---- */

/* A distinct stack of the file, copied out of the reader's buffer. */
struct local {
	uint64_t ref;
	uint32_t flags;
	uint32_t nnative, npython;
	uint64_t *native;
	uint8_t *python; /* the Python frames as recorded */
	size_t python_len;
	/* filled at the file's end */
	int done;
	uint32_t *native_ids, nnative_ids; /* symbolised, the profiler's frames dropped */
	uint32_t interp;                   /* the first interpreter frame among native_ids (nnative_ids: none) */
	uint32_t *python_ids, npython_ids;
};

/* Events of one kind on one (native stack, Python stack) pair. */
struct combo {
	uint32_t ev, native, python; /* local stacks; python NONE: the native stack's own Python frames */
	uint64_t count, total_ns;
};

struct pending {
	uint32_t ev, native;
	uint64_t t0_ns, dur;
};

struct thread_pending {
	uint32_t tid;
	struct pending *v;
	size_t n, cap;
};

struct deferred {
	uint32_t tid, combo;
	uint64_t t0_ns;
};

struct module_copy {
	char *path, *build_id;
	void *image;
};

struct pw_stacks_file {
	char *exe;
	struct pw_sym_module *mods;
	struct module_copy *mod_strs;
	size_t nmods, mods_cap, mod_strs_cap;
	struct local *locals;
	size_t nlocals, locals_cap;
	struct pw_hix locals_ix;
	struct combo *combos;
	size_t ncombos, combos_cap;
	struct pw_hix combos_ix;
	struct thread_pending *threads;
	size_t nthreads, threads_cap;
	struct pw_hix threads_ix;
	struct deferred *deferred;
	size_t ndeferred, deferred_cap;
	uint64_t captured, samples, period, sample_ns, unreadable;
};

struct pw_stacks_file *pw_stacks_file_init(const char *exe)
{
	struct pw_stacks_file *f = calloc(1, sizeof *f);
	if (f && !(f->exe = strdup(exe ? exe : ""))) {
		free(f);
		return NULL;
	}
	return f;
}

static void file_free(struct pw_stacks_file *f)
{
	for (size_t i = 0; i < f->nmods; i++) {
		free(f->mod_strs[i].path);
		free(f->mod_strs[i].build_id);
		free(f->mod_strs[i].image);
	}
	for (size_t i = 0; i < f->nlocals; i++) {
		free(f->locals[i].native);
		free(f->locals[i].python);
		free(f->locals[i].native_ids);
		free(f->locals[i].python_ids);
	}
	for (size_t i = 0; i < f->nthreads; i++)
		free(f->threads[i].v);
	free(f->mods);
	free(f->mod_strs);
	free(f->locals);
	free(f->combos);
	free(f->threads);
	free(f->deferred);
	free(f->exe);
	pw_hix_free(&f->locals_ix);
	pw_hix_free(&f->combos_ix);
	pw_hix_free(&f->threads_ix);
	free(f);
}

/* A PW_K_MODULE record into the file's module list (path "" is the main program). Returns 0 or -1 when out of
 * memory. */
static int add_module(struct pw_stacks_file *f, const struct pw_raw_event *e)
{
	if (!e->str) /* its path was not stored: its frames stay unresolved */
		return 0;
	const struct pw_rec_module *m = (const struct pw_rec_module *)e->rec;
	if (pw_reserve(&f->mods, &f->mods_cap, f->nmods + 1, sizeof *f->mods) ||
	    pw_reserve(&f->mod_strs, &f->mod_strs_cap, f->nmods + 1, sizeof *f->mod_strs))
		return -1;
	struct module_copy *c = &f->mod_strs[f->nmods];
	c->path = e->str_len ? strndup(e->str, e->str_len) : strdup(f->exe);
	c->build_id = e->build_id ? strndup(e->build_id, e->build_id_len) : NULL;
	int has_image = e->image && e->image_len && e->image_len <= PW_MODULE_IMAGE_MAX;
	c->image = has_image ? malloc(e->image_len) : NULL;
	if (!c->path || (e->build_id && !c->build_id) || (has_image && !c->image)) {
		free(c->path);
		free(c->build_id);
		free(c->image);
		*c = (struct module_copy){0};
		return -1;
	}
	if (c->image)
		memcpy(c->image, e->image, e->image_len);
	f->mods[f->nmods++] = (struct pw_sym_module){.path = c->path, .build_id = c->build_id, .bias = m->c.arg0,
						     .lo = m->lo, .hi = m->hi, .image = c->image,
						     .image_len = c->image ? e->image_len : 0};
	return 0;
}

struct local_key {
	const struct pw_stacks_file *f;
	uint64_t ref;
};

static int local_eq(const void *ctx, uint32_t pos)
{
	const struct local_key *k = ctx;
	return k->f->locals[pos].ref == k->ref;
}

/* The file's copy of the event's stack. Returns its index; NONE when the bytes are missing or corrupt
 * (*unreadable set) or when out of memory (*oom set). */
static uint32_t local_of(struct pw_stacks_file *f, const struct pw_raw_event *e, int *oom)
{
	uint64_t ref = e->stack_ref & ~PW_STACK_PY_PENDING;
	uint64_t h = pw_hix_hash(pw_hash_combine(0, ref));
	struct local_key k = {f, ref};
	int64_t at = pw_hix_find(&f->locals_ix, h, local_eq, &k);
	if (at >= 0)
		return (uint32_t)at;
	struct pw_stack_view v;
	if (!ref || pw_stack_parse(e->stack, e->stack_len, &v)) {
		f->unreadable++;
		return NONE;
	}
	if (f->nlocals >= NONE - 1 || pw_reserve(&f->locals, &f->locals_cap, f->nlocals + 1, sizeof *f->locals)) {
		*oom = 1;
		return NONE;
	}
	struct local *l = &f->locals[f->nlocals];
	*l = (struct local){.ref = ref, .flags = v.flags, .nnative = v.native_count, .npython = v.python_count};
	size_t py_len = 0;
	const uint8_t *pos = v.python;
	uint32_t line, flen, fnlen;
	const char *file, *func;
	for (uint32_t i = 0; i < v.python_count && pw_stack_py_next(&v, &pos, &line, &file, &flen, &func, &fnlen); i++)
		py_len = (size_t)(pos - v.python);
	l->native = malloc(v.native_count ? v.native_count * sizeof *l->native : 1);
	l->python = malloc(py_len ? py_len : 1);
	if (!l->native || !l->python || pw_hix_add(&f->locals_ix, h, (uint32_t)f->nlocals)) {
		free(l->native);
		free(l->python);
		*oom = 1;
		return NONE;
	}
	for (uint32_t i = 0; i < v.native_count; i++)
		l->native[i] = pw_stack_native(&v, i);
	memcpy(l->python, v.python, py_len);
	l->python_len = py_len;
	return (uint32_t)f->nlocals++;
}

struct combo_key {
	const struct pw_stacks_file *f;
	uint32_t ev, native, python;
};

static int combo_eq(const void *ctx, uint32_t pos)
{
	const struct combo_key *k = ctx;
	const struct combo *c = &k->f->combos[pos];
	return c->ev == k->ev && c->native == k->native && c->python == k->python;
}

/* Adds an event to its combination. Returns the combination's index, or NONE when out of memory. */
static uint32_t add_combo(struct pw_stacks_file *f, uint32_t ev, uint32_t native, uint32_t python, uint64_t dur)
{
	uint64_t h = pw_hix_hash(pw_hash_combine(pw_hash_combine(pw_hash_combine(0, ev), native), python));
	struct combo_key k = {f, ev, native, python};
	int64_t at = pw_hix_find(&f->combos_ix, h, combo_eq, &k);
	if (at < 0) {
		if (f->ncombos >= NONE - 1 || pw_reserve(&f->combos, &f->combos_cap, f->ncombos + 1, sizeof *f->combos) ||
		    pw_hix_add(&f->combos_ix, h, (uint32_t)f->ncombos))
			return NONE;
		f->combos[f->ncombos] = (struct combo){ev, native, python, 0, 0};
		at = (int64_t)f->ncombos++;
	}
	f->combos[at].count++;
	f->combos[at].total_ns = f->combos[at].total_ns > UINT64_MAX - dur ? UINT64_MAX : f->combos[at].total_ns + dur;
	return (uint32_t)at;
}

struct thread_key {
	const struct pw_stacks_file *f;
	uint32_t tid;
};

static int thread_eq(const void *ctx, uint32_t pos)
{
	const struct thread_key *k = ctx;
	return k->f->threads[pos].tid == k->tid;
}

/* The pending list of thread tid, made when create is set. Returns NULL when there is none (or out of
 * memory: *oom set). */
static struct thread_pending *thread_of(struct pw_stacks_file *f, uint32_t tid, int create, int *oom)
{
	uint64_t h = pw_hix_hash(pw_hash_combine(0, tid));
	struct thread_key k = {f, tid};
	int64_t at = pw_hix_find(&f->threads_ix, h, thread_eq, &k);
	if (at >= 0)
		return &f->threads[at];
	if (!create)
		return NULL;
	if (pw_reserve(&f->threads, &f->threads_cap, f->nthreads + 1, sizeof *f->threads) ||
	    pw_hix_add(&f->threads_ix, h, (uint32_t)f->nthreads)) {
		*oom = 1;
		return NULL;
	}
	f->threads[f->nthreads] = (struct thread_pending){.tid = tid};
	return &f->threads[f->nthreads++];
}

/* A PY_STACK: the thread's pending events get its Python frames (none when it is unreadable). */
static int resolve_pending(struct pw_stacks_file *f, const struct pw_raw_event *e, int *oom)
{
	uint32_t tid = e->rec->h.tid;
	struct thread_pending *t = thread_of(f, tid, 0, oom);
	if (!t || !t->n)
		return 0;
	uint32_t py = e->stack_ref ? local_of(f, e, oom) : NONE;
	if (*oom)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		const struct pending *p = &t->v[i];
		uint32_t c = add_combo(f, p->ev, p->native, py, p->dur);
		if (c == NONE)
			return -1;
		if (py == NONE) /* the trace finds it by its reference, native frames only */
			continue;
		if (pw_reserve(&f->deferred, &f->deferred_cap, f->ndeferred + 1, sizeof *f->deferred))
			return -1;
		f->deferred[f->ndeferred++] = (struct deferred){tid, c, p->t0_ns};
	}
	t->n = 0;
	return 0;
}

int pw_stacks_event(struct pw_stacks_file *f, const struct pw_raw_event *e)
{
	uint32_t ev = e->rec->h.type;
	if (ev >= PW_EV_COUNT)
		return 0;
	enum pw_event_kind kind = pw_events[ev].kind;
	int oom = 0;
	if (kind == PW_K_MODULE)
		return add_module(f, e);
	if (kind == PW_K_PYSTACK)
		return resolve_pending(f, e, &oom);
	if (!e->stack_ref || e->outside)
		return 0;
	uint64_t dur = e->t1_ns > e->t0_ns ? e->t1_ns - e->t0_ns : 0;
	struct pw_sample sample = pw_get_sample(e->rec->arg0, e->rec->arg1);
	if (kind == PW_K_SAMPLE)
		dur = sample.cpu_ns; /* a sample stands for the CPU time since its thread's previous one */
	uint32_t native = local_of(f, e, &oom);
	if (native == NONE)
		return oom ? -1 : 0;
	f->captured++;
	if (kind == PW_K_SAMPLE) {
		f->samples++;
		f->sample_ns = f->sample_ns > UINT64_MAX - dur ? UINT64_MAX : f->sample_ns + dur;
		if (sample.period_ns > f->period)
			f->period = sample.period_ns;
	}
	if (!(e->stack_ref & PW_STACK_PY_PENDING))
		return add_combo(f, ev, native, NONE, dur) == NONE ? -1 : 0;
	struct thread_pending *t = thread_of(f, e->rec->h.tid, 1, &oom);
	if (!t || pw_reserve(&t->v, &t->cap, t->n + 1, sizeof *t->v))
		return -1;
	t->v[t->n++] = (struct pending){ev, native, e->t0_ns, dur};
	return 0;
}

/* ---- the file's end: symbolisation and merging ---- */

/* Whether module is the Python interpreter (libpython*, or a python* executable). */
static int is_interpreter(const char *module)
{
	const char *base = pw_stack_basename(module);
	return starts_with(base, "libpython") || starts_with(base, "python");
}

/* Symbolises l's native addresses (once) and interns its Python frames. Returns 0 or -1 when out of memory. */
static int prepare_local(struct pw_stack_report *r, const struct pw_stacks_file *f, struct pw_symbolizer *sym,
			 struct local *l)
{
	struct index *ix = r->index;
	if (l->done)
		return 0;
	int oom = 0;
	size_t cap = 0, n = 0;
	uint32_t *ids = NULL;
	for (uint32_t i = 0; i < l->nnative; i++) {
		struct pw_sym_frame out[CHAIN_MAX];
		int is_return = !(i == 0 && (l->flags & PW_STACK_INTERRUPTED));
		size_t got = 0;
		if (sym)
			got = pw_sym_resolve(sym, f->mods, f->nmods, l->native[i], is_return, out, CHAIN_MAX);
		if (!got) { /* no symbolizer: the bare address */
			out[0] = (struct pw_sym_frame){.module = "?", .offset = l->native[i]};
			got = 1;
		}
		for (size_t k = 0; k < got; k++) {
			struct pw_stack_frame fr = {0};
			fr.function = intern(ix, out[k].function, out[k].function ? strlen(out[k].function) : 0, &oom);
			fr.file = intern(ix, out[k].file, out[k].file ? strlen(out[k].file) : 0, &oom);
			const char *mod = out[k].module ? out[k].module : "?";
			fr.module = intern(ix, mod, strlen(mod), &oom);
			fr.line = out[k].line > 0 ? (uint32_t)out[k].line : 0;
			fr.offset = fr.function ? 0 : out[k].offset;
			if (oom)
				goto fail;
			/* the profiler's own frames: its wrapper (innermost) and its call of main (pw_main) */
			if (starts_with(pw_stack_basename(fr.module), "libprofwrap"))
				continue;
			uint32_t id = frame_id(r, &fr);
			if (id == NONE || pw_reserve(&ids, &cap, n + 1, sizeof *ids))
				goto fail;
			ids[n++] = id;
		}
	}
	l->native_ids = ids;
	l->nnative_ids = (uint32_t)n;
	l->interp = (uint32_t)n;
	for (uint32_t i = 0; i < n; i++)
		if (is_interpreter(r->frames[ids[i]].module)) {
			l->interp = i;
			break;
		}
	l->python_ids = malloc((l->npython ? l->npython : 1) * sizeof *l->python_ids);
	if (!l->python_ids)
		return -1;
	struct pw_stack_view v = {.python = l->python, .end = l->python + l->python_len};
	const uint8_t *pos = v.python;
	uint32_t line, flen, fnlen;
	const char *file, *func;
	while (l->npython_ids < l->npython && pw_stack_py_next(&v, &pos, &line, &file, &flen, &func, &fnlen)) {
		struct pw_stack_frame fr = {.line = line, .python = 1};
		fr.function = intern(ix, func, fnlen, &oom);
		fr.file = intern(ix, file, flen, &oom);
		fr.module = intern(ix, "python", 6, &oom);
		uint32_t id = oom ? NONE : frame_id(r, &fr);
		if (id == NONE)
			return -1;
		l->python_ids[l->npython_ids++] = id;
	}
	l->done = 1;
	return 0;
fail:
	free(ids);
	return -1;
}

/* The rank's stack for the native frames of local native and the Python frames of local python (NONE: its
 * own). Returns the stack id, or NONE when out of memory. */
static uint32_t merge(struct pw_stack_report *r, struct pw_stacks_file *f, struct pw_symbolizer *sym, uint32_t native,
		      uint32_t python)
{
	struct local *n = &f->locals[native];
	struct local *p = python == NONE ? n : &f->locals[python];
	if (prepare_local(r, f, sym, n) || prepare_local(r, f, sym, p))
		return NONE;
	uint32_t keep = p->npython_ids ? n->interp : n->nnative_ids;
	size_t len = (size_t)keep + p->npython_ids;
	uint32_t *ids = malloc((len ? len : 1) * sizeof *ids);
	if (!ids)
		return NONE;
	if (keep)
		memcpy(ids, n->native_ids, keep * sizeof *ids);
	if (p->npython_ids)
		memcpy(ids + keep, p->python_ids, p->npython_ids * sizeof *ids);
	uint32_t id = stack_id(r, (struct frame_seq){ids, (uint32_t)len});
	free(ids);
	return id;
}

static int by_ref(const void *a, const void *b)
{
	const struct ref_stack *x = a, *y = b;
	return (x->ref > y->ref) - (x->ref < y->ref);
}

static int by_tid_t0(const void *a, const void *b)
{
	const struct deferred_stack *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->t0_ns > y->t0_ns) - (x->t0_ns < y->t0_ns);
}

/* The image's lookups: every stack of an event by its reference, and the events resolved later. Returns 0
 * or -1 when out of memory. */
static int add_image(struct pw_stack_report *r, struct pw_stacks_file *f, struct pw_symbolizer *sym,
		     const struct pw_proc *p, const uint32_t *combo_stacks)
{
	struct index *ix = r->index;
	if (pw_reserve(&ix->images, &ix->images_cap, ix->nimages + 1, sizeof *ix->images))
		return -1;
	struct pw_stack_image *img = &ix->images[ix->nimages++];
	*img = (struct pw_stack_image){.pid = p->pid, .image = p->image, .start_ns = p->start_ns};
	img->refs = malloc((f->ncombos ? f->ncombos : 1) * sizeof *img->refs);
	img->deferred = malloc((f->ndeferred ? f->ndeferred : 1) * sizeof *img->deferred);
	if (!img->refs || !img->deferred)
		return -1;
	for (size_t i = 0; i < f->ncombos; i++) { /* an event's own stack, whether or not it waited for Python's */
		uint32_t native = f->combos[i].native;
		uint32_t s = f->combos[i].python == NONE ? combo_stacks[i] : merge(r, f, sym, native, NONE);
		if (s == NONE)
			return -1;
		img->refs[img->nrefs++] = (struct ref_stack){f->locals[native].ref, s};
	}
	qsort(img->refs, img->nrefs, sizeof *img->refs, by_ref);
	size_t w = 0;
	for (size_t i = 0; i < img->nrefs; i++)
		if (!w || img->refs[w - 1].ref != img->refs[i].ref)
			img->refs[w++] = img->refs[i];
	img->nrefs = w;
	for (size_t i = 0; i < f->ndeferred; i++)
		img->deferred[img->ndeferred++] =
			(struct deferred_stack){f->deferred[i].tid, combo_stacks[f->deferred[i].combo], f->deferred[i].t0_ns};
	qsort(img->deferred, img->ndeferred, sizeof *img->deferred, by_tid_t0);
	return 0;
}

int pw_stacks_file_end(struct pw_stack_report **rp, struct pw_stacks_file *f, struct pw_symbolizer *sym,
		       const struct pw_proc *p)
{
	if (!f)
		return 0;
	int rc = 0;
	uint32_t *combo_stacks = NULL;
	struct pw_stack_report *r = rp ? report_get(rp) : NULL;
	if (!rp) /* nothing to add to */
		goto out;
	rc = -1;
	if (!r)
		goto out;
	/* events still waiting for their Python frames keep their native ones */
	for (size_t t = 0; t < f->nthreads; t++)
		for (size_t i = 0; i < f->threads[t].n; i++) {
			const struct pending *pe = &f->threads[t].v[i];
			if (add_combo(f, pe->ev, pe->native, NONE, pe->dur) == NONE)
				goto out;
		}
	combo_stacks = malloc((f->ncombos ? f->ncombos : 1) * sizeof *combo_stacks);
	if (!combo_stacks)
		goto out;
	for (size_t i = 0; i < f->ncombos; i++) {
		const struct combo *c = &f->combos[i];
		combo_stacks[i] = merge(r, f, sym, c->native, c->python);
		if (combo_stacks[i] == NONE || add_row(r, c->ev, combo_stacks[i], c->count, c->total_ns))
			goto out;
	}
	if (f->ncombos && add_image(r, f, sym, p, combo_stacks))
		goto out;
	r->captured += f->captured;
	r->samples += f->samples;
	r->sample_cpu_ns = r->sample_cpu_ns > UINT64_MAX - f->sample_ns ? UINT64_MAX : r->sample_cpu_ns + f->sample_ns;
	r->unreadable += f->unreadable;
	if (f->period > r->sample_period_ns)
		r->sample_period_ns = f->period;
	rc = 0;
out:
	free(combo_stacks);
	file_free(f);
	return rc;
}

int pw_stacks_note_end(struct pw_stack_report **rp, uint64_t stacks_dropped, uint64_t samples_skipped)
{
	if (!stacks_dropped && !samples_skipped)
		return 0;
	struct pw_stack_report *r = report_get(rp);
	if (!r)
		return -1;
	r->dropped = r->dropped > UINT64_MAX - stacks_dropped ? UINT64_MAX : r->dropped + stacks_dropped;
	r->samples_skipped =
		r->samples_skipped > UINT64_MAX - samples_skipped ? UINT64_MAX : r->samples_skipped + samples_skipped;
	return 0;
}

static int by_total(const void *a, const void *b)
{
	const struct pw_stack_row *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->ev != y->ev)
		return x->ev < y->ev ? -1 : 1;
	return (x->stack > y->stack) - (x->stack < y->stack);
}

void pw_stacks_finish(struct pw_stack_report *r)
{
	if (!r || !r->nrows)
		return;
	qsort(r->rows, r->nrows, sizeof *r->rows, by_total);
	/* the row index no longer matches the positions: it is not used after this */
	struct index *ix = r->index;
	pw_hix_free(&ix->rows_ix);
}

void pw_stacks_free(struct pw_stack_report *r)
{
	if (!r)
		return;
	struct index *ix = r->index;
	for (size_t i = 0; i < ix->nstrs; i++)
		free(ix->strs[i]);
	for (size_t i = 0; i < ix->nimages; i++) {
		free(ix->images[i].refs);
		free(ix->images[i].deferred);
	}
	free(ix->strs);
	free(ix->images);
	pw_hix_free(&ix->strs_ix);
	pw_hix_free(&ix->frames_ix);
	pw_hix_free(&ix->stacks_ix);
	pw_hix_free(&ix->rows_ix);
	free(ix);
	free(r->frames);
	free(r->frame_ids);
	free(r->stacks);
	free(r->rows);
	free(r);
}

int pw_stacks_any(const struct pw_stack_report *r)
{
	return r && r->nrows > 0;
}

const struct pw_stack_image *pw_stacks_image(const struct pw_stack_report *r, const struct pw_proc *p)
{
	if (!r)
		return NULL;
	const struct index *ix = r->index;
	for (size_t i = 0; i < ix->nimages; i++)
		if (ix->images[i].pid == p->pid && ix->images[i].image == p->image &&
		    ix->images[i].start_ns == p->start_ns)
			return &ix->images[i];
	return NULL;
}

uint32_t pw_stacks_lookup(const struct pw_stack_image *img, uint32_t tid, uint64_t t0_ns, uint64_t stack_ref)
{
	if (!img || !stack_ref)
		return NONE;
	if (stack_ref & PW_STACK_PY_PENDING) {
		struct deferred_stack key = {tid, 0, t0_ns};
		const struct deferred_stack *d =
			bsearch(&key, img->deferred, img->ndeferred, sizeof *img->deferred, by_tid_t0);
		if (d)
			return d->stack;
	}
	struct ref_stack key = {stack_ref & ~PW_STACK_PY_PENDING, 0};
	const struct ref_stack *s = bsearch(&key, img->refs, img->nrefs, sizeof *img->refs, by_ref);
	return s ? s->stack : NONE;
}
