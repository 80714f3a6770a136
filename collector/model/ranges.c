/* NVTX ranges and capture windows of a rank (ranges.h). */
#define _GNU_SOURCE
#include "ranges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/hash_index.h"

#define NONE PW_RANGE_TOP

struct group {
	char *domain, *folded;
	uint32_t parent;
	uint8_t kind;
	uint32_t distinct;
	uint32_t folded_row; /* NONE until the group folds */
	uint32_t rows[PW_RANGE_FOLD_AT];
	uint64_t *seen; /* once folded: hashes of the distinct names met, for folded_names (at most SEEN_MAX) */
	uint32_t nseen;
};

#define SEEN_MAX 8192u /* a power of two; past half of it the distinct names are no longer counted */


/* Counts a distinct name of a folded group. */
static void note_folded_name(struct pw_range_report *r, struct group *g, const char *name)
{
	if (!g->seen && !(g->seen = calloc(SEEN_MAX, sizeof *g->seen)))
		return;
	if (g->nseen >= SEEN_MAX / 2)
		return;
	uint64_t h = pw_hix_hash(pw_hash_bytes(PW_HASH_SEED, name, strlen(name)));
	for (uint32_t i = 0; i < SEEN_MAX; i++) {
		uint64_t *slot = &g->seen[(h + i) & (SEEN_MAX - 1)];
		if (*slot == h)
			return;
		if (!*slot) {
			*slot = h;
			g->nseen++;
			r->folded_names++;
			return;
		}
	}
}

/* A row's children in the order they were made, for adopt_children. */
struct links {
	uint32_t first, last, next; /* its first and last child, its next sibling (NONE: none) */
};

struct index {
	struct pw_hix rows_ix, groups_ix, marks_ix;
	struct group *groups;
	size_t ngroups, groups_cap;
	struct links *links; /* one per row */
	size_t links_cap;
};

struct open_range {
	uint32_t tid, domain;
	int32_t level;
	uint32_t row;
	uint64_t t0;
	uint64_t id; /* start/end ranges; 0 for push/pop */
};

struct instance {
	uint32_t tid, row;
	uint64_t t0, t1;
};

struct gpu_op {
	uint32_t tid;
	uint64_t launch, dur;
};

struct capture_event {
	uint64_t t;
	int open, reason;
	int64_t occurrence;
	char *name;
};

struct domain_name {
	uint32_t id;
	char *name;
};

struct pw_ranges_file {
	int pid;
	uint64_t start_ns;
	struct open_range *open;
	size_t nopen, open_cap;
	struct instance *inst;
	size_t ninst, inst_cap;
	struct gpu_op *ops;
	size_t nops, ops_cap;
	struct capture_event *caps;
	size_t ncaps, caps_cap;
	struct domain_name *domains;
	size_t ndomains, domains_cap;
};

const char *pw_capture_reason_name(int reason)
{
	switch (reason) {
	case PW_CAPTURE_PROFILER_API:
		return "cudaProfilerApi";
	case PW_CAPTURE_NVTX:
		return "nvtx";
	case PW_CAPTURE_SCHEDULE:
		return "schedule";
	case PW_CAPTURE_TIMER:
		return "timer";
	case PW_CAPTURE_ON_DEMAND:
		return "on-demand";
	case PW_CAPTURE_INITIAL:
		return "initial";
	case PW_CAPTURE_STEPS:
		return "steps";
	default:
		return "unknown";
	}
}


static uint64_t key_hash(const char *domain, const char *name, uint32_t parent, uint8_t kind)
{
	uint64_t h = PW_HASH_SEED;
	h = pw_hash_bytes(h, domain, strlen(domain) + 1);
	h = pw_hash_bytes(h, name, strlen(name) + 1);
	h = pw_hash_bytes(h, &parent, sizeof parent);
	h = pw_hash_bytes(h, &kind, sizeof kind);
	return pw_hix_hash(h);
}

struct key {
	const struct pw_range_report *r;
	const struct index *ix;
	const char *domain, *name;
	uint32_t parent;
	uint8_t kind;
};

static int row_eq(const void *ctx, uint32_t pos)
{
	const struct key *k = ctx;
	const struct pw_range_row *row = &k->r->rows[pos];
	return row->parent == k->parent && row->kind == k->kind && !row->merged && strcmp(row->domain, k->domain) == 0 &&
	       strcmp(row->name, k->name) == 0;
}

static int group_eq(const void *ctx, uint32_t pos)
{
	const struct key *k = ctx;
	const struct group *g = &k->ix->groups[pos];
	return g->parent == k->parent && g->kind == k->kind && strcmp(g->domain, k->domain) == 0 &&
	       strcmp(g->folded, k->name) == 0;
}

static int mark_eq(const void *ctx, uint32_t pos)
{
	const struct key *k = ctx;
	const struct pw_mark_row *m = &k->r->marks[pos];
	return strcmp(m->domain, k->domain) == 0 && strcmp(m->name, k->name) == 0;
}

static uint32_t new_row(struct pw_range_report *r, const char *domain, const char *name, uint32_t parent, uint8_t kind)
{
	struct index *ix = r->index;
	if (r->nrows >= NONE - 1 || pw_reserve(&r->rows, &r->rows_cap, r->nrows + 1, sizeof *r->rows) ||
	    pw_reserve(&ix->links, &ix->links_cap, r->nrows + 1, sizeof *ix->links))
		return NONE;
	struct pw_range_row *row = &r->rows[r->nrows];
	row->domain = strdup(domain);
	row->name = strdup(name);
	if (!row->domain || !row->name ||
	    pw_hix_add(&ix->rows_ix, key_hash(domain, name, parent, kind), (uint32_t)r->nrows)) {
		free(row->domain);
		free(row->name);
		memset(row, 0, sizeof *row);
		return NONE;
	}
	row->parent = parent;
	row->depth = parent == NONE ? 0 : r->rows[parent].depth + 1;
	row->kind = kind;
	row->min_ns = UINT64_MAX;
	row->merged_into = NONE;
	uint32_t id = (uint32_t)r->nrows++;
	ix->links[id] = (struct links){NONE, NONE, NONE};
	if (parent != NONE) {
		if (ix->links[parent].last == NONE)
			ix->links[parent].first = id;
		else
			ix->links[ix->links[parent].last].next = id;
		ix->links[parent].last = id;
	}
	return id;
}

/* Adds from's occurrences to into's; folding: they count as folded there (else from's own folded do). */
static void merge_row(struct pw_range_row *into, const struct pw_range_row *from, int folding)
{
	into->count += from->count;
	into->total_ns += from->total_ns;
	into->gpu_ns += from->gpu_ns;
	into->folded += folding ? from->count : from->folded;
	if (from->min_ns < into->min_ns)
		into->min_ns = from->min_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

static void adopt_children(struct pw_range_report *r, uint32_t from, uint32_t to);

/* The row an occurrence of (domain, name, kind) under the row parent (NONE: at the top) adds to, NONE on out of
 * memory. */
static uint32_t row_for(struct pw_range_report *r, const char *domain, const char *name, uint32_t parent, uint8_t kind)
{
	struct index *ix = r->index;
	char folded[PW_RANGE_MAX_NAME];
	pw_range_fold(name, strlen(name), folded, sizeof folded);
	struct key k = {r, ix, domain, folded, parent, kind};
	uint64_t gh = key_hash(domain, folded, parent, kind);
	int64_t gi = pw_hix_find(&ix->groups_ix, gh, group_eq, &k);
	if (gi < 0) {
		if (pw_reserve(&ix->groups, &ix->groups_cap, ix->ngroups + 1, sizeof *ix->groups))
			return NONE;
		struct group *g = &ix->groups[ix->ngroups];
		g->domain = strdup(domain);
		g->folded = strdup(folded);
		if (!g->domain || !g->folded || pw_hix_add(&ix->groups_ix, gh, (uint32_t)ix->ngroups)) {
			free(g->domain);
			free(g->folded);
			memset(g, 0, sizeof *g);
			return NONE;
		}
		g->parent = parent;
		g->kind = kind;
		g->folded_row = NONE;
		gi = (int64_t)ix->ngroups++;
	}
	struct group *g = &ix->groups[gi];
	if (g->folded_row != NONE) {
		note_folded_name(r, g, name);
		return g->folded_row;
	}
	k.name = name;
	int64_t ri = pw_hix_find(&ix->rows_ix, key_hash(domain, name, parent, kind), row_eq, &k);
	if (ri >= 0)
		return (uint32_t)ri;
	if (g->distinct < PW_RANGE_FOLD_AT) {
		uint32_t row = new_row(r, domain, name, parent, kind);
		if (row != NONE) {
			g = &ix->groups[gi];
			g->rows[g->distinct++] = row;
		}
		return row;
	}
	/* One name too many: the group becomes one row named by its folded form. The folded form may itself be
	 * one of the group's exact names ("step #" from the preload's own folding): a fresh row either way. */
	uint32_t row = new_row(r, domain, folded, parent, kind);
	if (row == NONE)
		return NONE;
	g = &ix->groups[gi];
	g->folded_row = row;
	r->rows[row].folds = 1;
	for (uint32_t i = 0; i < g->distinct; i++) {
		struct pw_range_row *from = &r->rows[g->rows[i]];
		merge_row(&r->rows[row], from, 1);
		from->merged = 1;
		from->merged_into = row;
		note_folded_name(r, g, from->name);
	}
	note_folded_name(r, g, name);
	uint32_t distinct = g->distinct, rows[PW_RANGE_FOLD_AT];
	memcpy(rows, g->rows, sizeof rows);
	for (uint32_t i = 0; i < distinct; i++)
		adopt_children(r, rows[i], row);
	return row;
}

static int is_folded_row(const struct pw_range_report *r, uint32_t row)
{
	return r->rows[row].folds;
}

static uint32_t live_row(const struct pw_range_report *r, uint32_t row)
{
	while (row != NONE && r->rows[row].merged)
		row = r->rows[row].merged_into;
	return row;
}

/* A row folded into another: its children become the same children of that one, each merged into the row of
 * its name there (made when missing), their own children after them. With a stack of (from, to) pairs, not
 * recursion: a recursive function nests its rows as deep as its calls. */
static void adopt_children(struct pw_range_report *r, uint32_t from, uint32_t to)
{
	struct index *ix = r->index;
	struct adoption {
		uint32_t from, to;
	} *todo = malloc(sizeof *todo);
	size_t n = 0, cap = 1;
	if (!todo)
		return;
	todo[n++] = (struct adoption){from, to};
	while (n) {
		struct adoption a = todo[--n];
		/* row_for makes rows under a.to's side of the tree only: a.from's children stay as they are */
		for (uint32_t i = ix->links[a.from].first; i != NONE; i = ix->links[i].next) {
			if (r->rows[i].merged)
				continue;
			char *domain = strdup(r->rows[i].domain), *name = strdup(r->rows[i].name);
			uint32_t into = domain && name ? row_for(r, domain, name, a.to, r->rows[i].kind) : NONE;
			free(domain);
			free(name);
			if (into == NONE || into == i || pw_reserve(&todo, &cap, n + 1, sizeof *todo))
				continue;
			merge_row(&r->rows[into], &r->rows[i], strcmp(r->rows[into].name, r->rows[i].name) != 0);
			r->rows[into].folds |= r->rows[i].folds;
			r->rows[i].merged = 1;
			r->rows[i].merged_into = into;
			todo[n++] = (struct adoption){i, into};
		}
	}
	free(todo);
}

const struct pw_range_row *pw_ranges_first(const struct pw_range_report *r)
{
	uint32_t row = r && r->first_ns ? live_row(r, r->first_row) : NONE;
	return row == NONE ? NULL : &r->rows[row];
}

struct pw_ranges_file *pw_ranges_file_init(int pid, uint64_t start_ns)
{
	struct pw_ranges_file *f = calloc(1, sizeof *f);
	if (f) {
		f->pid = pid;
		f->start_ns = start_ns;
	}
	return f;
}

static struct pw_range_report *report_get(struct pw_range_report **rp)
{
	if (!*rp) {
		struct pw_range_report *r = calloc(1, sizeof *r);
		if (!r || !(r->index = calloc(1, sizeof(struct index)))) {
			free(r);
			return NULL;
		}
		*rp = r;
	}
	return *rp;
}

static const char *domain_of(const struct pw_ranges_file *f, uint32_t id, char *buf, size_t size)
{
	if (!id)
		return "";
	for (size_t i = f->ndomains; i-- > 0;)
		if (f->domains[i].id == id)
			return f->domains[i].name;
	snprintf(buf, size, "domain %u", id);
	return buf;
}

static void close_range(struct pw_range_report *r, struct pw_ranges_file *f, size_t i, uint64_t t1)
{
	struct open_range o = f->open[i];
	memmove(&f->open[i], &f->open[i + 1], (f->nopen - i - 1) * sizeof *f->open);
	f->nopen--;
	uint32_t row = live_row(r, o.row);
	if (row == NONE)
		return;
	uint64_t dur = t1 > o.t0 ? t1 - o.t0 : 0;
	if (!r->first_ns || o.t0 < r->first_ns) {
		r->first_ns = o.t0;
		r->first_row = row;
	}
	struct pw_range_row *x = &r->rows[row];
	x->count++;
	x->total_ns += dur;
	if (dur < x->min_ns)
		x->min_ns = dur;
	if (dur > x->max_ns)
		x->max_ns = dur;
	if (is_folded_row(r, row))
		x->folded++;
	r->closed++;
	if (f->ninst >= PW_RANGE_MAX_INSTANCES ||
	    pw_reserve(&f->inst, &f->inst_cap, f->ninst + 1, sizeof *f->inst)) {
		r->instances_dropped++;
		return;
	}
	f->inst[f->ninst++] = (struct instance){o.tid, o.row, o.t0, t1};
}

static char *copy_str(const struct pw_raw_event *e, char *buf, size_t size)
{
	size_t n = e->str ? e->str_len : 0;
	if (n >= size)
		n = size - 1;
	if (n)
		memcpy(buf, e->str, n);
	buf[n] = 0;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	return buf;
}

int pw_ranges_event(struct pw_range_report **rp, struct pw_ranges_file *f, const struct pw_raw_event *e)
{
	struct pw_range_report *r = report_get(rp);
	if (!r || !f)
		return -1;
	const struct pw_rec_call *rec = e->rec;
	enum pw_event_kind kind = pw_events[rec->h.type].kind;
	uint32_t domain = pw_get_nvtx_scope(rec->arg0).domain;
	uint32_t tid = rec->h.tid;
	char name[PW_RANGE_MAX_NAME], dbuf[32];
	switch (kind) {
	case PW_K_RANGE_PUSH:
	case PW_K_RANGE_START: {
		int start = kind == PW_K_RANGE_START;
		copy_str(e, name, sizeof name);
		pw_range_undecorate(name);
		int32_t depth = start ? 0 : (int32_t)rec->ret;
		if (depth < 0)
			depth = 0;
		/* a push's parent: the innermost push still open on its thread in its domain */
		uint32_t parent = NONE;
		for (size_t i = f->nopen; !start && i-- > 0;)
			if (f->open[i].tid == tid && f->open[i].domain == domain && !f->open[i].id) {
				parent = live_row(r, f->open[i].row);
				break;
			}
		uint32_t row = row_for(r, domain_of(f, domain, dbuf, sizeof dbuf), e->str ? name : "(unnamed)", parent,
				       start ? PW_RANGE_START : PW_RANGE_PUSH);
		if (row == NONE || pw_reserve(&f->open, &f->open_cap, f->nopen + 1, sizeof *f->open))
			return -1;
		f->open[f->nopen++] = (struct open_range){tid, domain, depth, row, e->t0_ns,
							   start ? (uint64_t)rec->ret : 0};
		return 0;
	}
	case PW_K_RANGE_POP:
		for (size_t i = f->nopen; i-- > 0;)
			if (f->open[i].tid == tid && f->open[i].domain == domain && !f->open[i].id) {
				close_range(r, f, i, e->t0_ns);
				return 0;
			}
		r->unmatched_pops++;
		return 0;
	case PW_K_RANGE_END:
		for (size_t i = f->nopen; i-- > 0;)
			if (f->open[i].id == (uint64_t)rec->ret && f->open[i].id) {
				close_range(r, f, i, e->t0_ns);
				return 0;
			}
		r->unmatched_ends++;
		return 0;
	case PW_K_MARK: {
		struct index *ix = r->index;
		const char *d = domain_of(f, domain, dbuf, sizeof dbuf);
		copy_str(e, name, sizeof name);
		struct key k = {r, ix, d, name, 0, 0};
		uint64_t h = key_hash(d, name, 0, 2);
		int64_t i = pw_hix_find(&ix->marks_ix, h, mark_eq, &k);
		if (i < 0) {
			if (pw_reserve(&r->marks, &r->marks_cap, r->nmarks + 1, sizeof *r->marks))
				return -1;
			struct pw_mark_row *m = &r->marks[r->nmarks];
			m->domain = strdup(d);
			m->name = strdup(name);
			if (!m->domain || !m->name || pw_hix_add(&ix->marks_ix, h, (uint32_t)r->nmarks)) {
				free(m->domain);
				free(m->name);
				memset(m, 0, sizeof *m);
				return -1;
			}
			i = (int64_t)r->nmarks++;
		}
		r->marks[i].count++;
		return 0;
	}
	case PW_K_NVTX_NAME:
		if (rec->h.type == PW_EV_NVTX_NAME_DOMAIN && e->str) {
			if (pw_reserve(&f->domains, &f->domains_cap, f->ndomains + 1, sizeof *f->domains))
				return -1;
			char *n = strndup(e->str, e->str_len);
			if (!n)
				return -1;
			f->domains[f->ndomains++] = (struct domain_name){pw_get_nvtx_scope(rec->arg0).domain, n};
		}
		return 0;
	case PW_K_CAPTURE: {
		if ((int)rec->arg0 == PW_CAPTURE_STEPS) { /* names the steps; no window */
			if (e->str && !r->step_name && !(r->step_name = strndup(e->str, e->str_len)))
				return -1;
			return 0;
		}
		r->windowed = 1;
		if ((int)rec->arg0 == PW_CAPTURE_INITIAL && e->str && !r->settings)
			r->settings = strndup(e->str, e->str_len);
		if (pw_reserve(&f->caps, &f->caps_cap, f->ncaps + 1, sizeof *f->caps))
			return -1;
		char *n = (int)rec->arg0 != PW_CAPTURE_INITIAL && e->str ? strndup(e->str, e->str_len) : NULL;
		f->caps[f->ncaps++] = (struct capture_event){e->t0_ns, rec->h.type == PW_EV_CAPTURE_START,
							     (int)rec->arg0, rec->ret, n};
		return 0;
	}
	default:
		return 0;
	}
}

void pw_ranges_gpu_op(struct pw_ranges_file *f, uint32_t tid, uint64_t launch_ns, uint64_t dur_ns)
{
	if (!f || !tid || !launch_ns || f->nops >= PW_RANGE_MAX_INSTANCES ||
	    pw_reserve(&f->ops, &f->ops_cap, f->nops + 1, sizeof *f->ops))
		return;
	f->ops[f->nops++] = (struct gpu_op){tid, launch_ns, dur_ns};
}

static int by_time(const void *a, const void *b)
{
	const struct capture_event *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* One point of the GPU sweep: a range occurrence beginning (0), a launch (1), an occurrence ending (2). */
struct point {
	uint32_t tid;
	uint8_t what;
	uint64_t t;
	uint64_t value; /* row (0, 2) or duration (1) */
};

static int by_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (int)x->what - (int)y->what;
}

/* Adds each launch's GPU time to the rows of the occurrences open on its thread at the launch. */
static int attribute_gpu(struct pw_range_report *r, struct pw_ranges_file *f)
{
	if (!f->nops || !f->ninst)
		return 0;
	size_t n = 2 * f->ninst + f->nops;
	struct point *p = malloc(n * sizeof *p);
	if (!p)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < f->ninst; i++) {
		p[k++] = (struct point){f->inst[i].tid, 0, f->inst[i].t0, f->inst[i].row};
		p[k++] = (struct point){f->inst[i].tid, 2, f->inst[i].t1, f->inst[i].row};
	}
	for (size_t i = 0; i < f->nops; i++)
		p[k++] = (struct point){f->ops[i].tid, 1, f->ops[i].launch, f->ops[i].dur};
	qsort(p, n, sizeof *p, by_point); /* n > 0: there are operations and occurrences */
	uint32_t active[64];
	size_t nactive = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && p[i].tid != p[i - 1].tid)
			nactive = 0;
		uint32_t row = (uint32_t)p[i].value;
		if (p[i].what == 0) {
			if (nactive < sizeof active / sizeof active[0])
				active[nactive++] = row;
		} else if (p[i].what == 2) {
			for (size_t j = nactive; j-- > 0;)
				if (active[j] == row) {
					memmove(&active[j], &active[j + 1], (nactive - j - 1) * sizeof *active);
					nactive--;
					break;
				}
		} else {
			for (size_t j = 0; j < nactive; j++) {
				uint32_t live = live_row(r, active[j]);
				int seen = 0;
				for (size_t m = 0; m < j; m++)
					seen |= live_row(r, active[m]) == live;
				if (!seen && live != NONE)
					r->rows[live].gpu_ns += p[i].value;
			}
		}
	}
	free(p);
	return 0;
}

int pw_ranges_file_end(struct pw_range_report *r, struct pw_ranges_file *f, uint64_t end_ns)
{
	if (!f)
		return 0;
	int rc = 0;
	if (r) {
		/* windows, in time order: the lanes of different threads arrive in any order */
		if (f->ncaps)
			qsort(f->caps, f->ncaps, sizeof *f->caps, by_time);
		int open = 0;
		for (size_t i = 0; i < f->ncaps; i++) {
			struct capture_event *c = &f->caps[i];
			if (c->open && !open) {
				if (pw_reserve(&r->windows, &r->windows_cap, r->nwindows + 1, sizeof *r->windows)) {
					rc = -1;
					break;
				}
				r->windows[r->nwindows++] =
					(struct pw_capture_window){f->pid, c->t, 0, c->reason, c->name, c->occurrence};
				c->name = NULL;
				open = 1;
			} else if (!c->open && open) {
				r->windows[r->nwindows - 1].end_ns = c->t;
				open = 0;
			}
		}
		if (open)
			r->windows[r->nwindows - 1].end_ns = end_ns;
		/* what is still open ends where its window ended, or with the process */
		while (f->nopen) {
			uint64_t t1 = end_ns, t0 = f->open[f->nopen - 1].t0;
			for (size_t w = 0; w < r->nwindows; w++)
				if (r->windows[w].pid == f->pid && r->windows[w].start_ns <= t0 && t0 <= r->windows[w].end_ns)
					t1 = r->windows[w].end_ns;
			r->unclosed++;
			close_range(r, f, f->nopen - 1, t1);
		}
		if (attribute_gpu(r, f))
			rc = -1;
	}
	for (size_t i = 0; i < f->ncaps; i++)
		free(f->caps[i].name);
	for (size_t i = 0; i < f->ndomains; i++)
		free(f->domains[i].name);
	free(f->caps);
	free(f->domains);
	free(f->open);
	free(f->inst);
	free(f->ops);
	free(f);
	return rc;
}

static int by_start(const void *a, const void *b)
{
	const struct pw_capture_window *x = a, *y = b;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

void pw_ranges_finish(struct pw_range_report *r)
{
	if (!r)
		return;
	if (r->nwindows)
		qsort(r->windows, r->nwindows, sizeof *r->windows, by_start);
	uint64_t covered = 0, until = 0;
	for (size_t i = 0; i < r->nwindows; i++) {
		uint64_t s = r->windows[i].start_ns > until ? r->windows[i].start_ns : until;
		if (r->windows[i].end_ns > s)
			covered += r->windows[i].end_ns - s;
		if (r->windows[i].end_ns > until)
			until = r->windows[i].end_ns;
	}
	r->captured_ns = covered;
}

void pw_ranges_free(struct pw_range_report *r)
{
	if (!r)
		return;
	struct index *ix = r->index;
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].domain);
		free(r->rows[i].name);
	}
	for (size_t i = 0; i < r->nmarks; i++) {
		free(r->marks[i].domain);
		free(r->marks[i].name);
	}
	for (size_t i = 0; i < r->nwindows; i++)
		free(r->windows[i].name);
	if (ix) {
		for (size_t i = 0; i < ix->ngroups; i++) {
			free(ix->groups[i].domain);
			free(ix->groups[i].folded);
			free(ix->groups[i].seen);
		}
		free(ix->groups);
		free(ix->links);
		pw_hix_free(&ix->rows_ix);
		pw_hix_free(&ix->groups_ix);
		pw_hix_free(&ix->marks_ix);
		free(ix);
	}
	free(r->rows);
	free(r->marks);
	free(r->windows);
	free(r->settings);
	free(r->step_name);
	free(r);
}
