/* Call stacks in the reports (report_call_stacks.h): the text sections "Top call sites" and "CPU samples", the JSON keys
 * callsites, samples and stacks, OUT/rank<R>.folded, and the stacks of the trace's events. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/hash_index.h"
#include "../lib/json.h"
#include "../model/analysis.h"
#include "../model/call_stacks.h"
#include "../symbols/demangle.h"
#include "report_call_stacks.h"
#include "report_format.h"

#define NONE PW_STACKS_NONE
#define TOP_CALLS 5        /* calls shown with their call sites */
#define TOP_SITES 3        /* call sites per call */
#define TOP_FUNCTIONS 10   /* rows of each CPU sample table */
#define NAME_WIDTH 48      /* a function's name in the text report */
#define SITE_WIDTH 78      /* a call site with its caller: the table fits 120 columns */
#define JSON_CALLSITES 500 /* (call, stack) entries in the JSON report */
#define JSON_SAMPLE_STACKS 100

/* The part of path after its last '/'; "?" for NULL. */
const char *pw_stack_frame_text(char *buf, size_t len, const struct pw_stack_frame *fr, size_t width)
{
	char demangled[1024], shortened[256];
	if (!fr->function) {
		snprintf(buf, len, "%s+0x%" PRIx64, pw_stack_basename(fr->module), fr->offset);
	} else {
		const char *fn = fr->function;
		if (!fr->python && pw_demangle(fn, demangled, sizeof demangled))
			fn = demangled;
		if (width)
			fn = pw_shorten_name(shortened, sizeof shortened, fn, width);
		if (fr->file && fr->line)
			snprintf(buf, len, "%s (%s:%" PRIu32 ")", fn, pw_stack_basename(fr->file), fr->line);
		else if (fr->file)
			snprintf(buf, len, "%s (%s)", fn, pw_stack_basename(fr->file));
		else
			snprintf(buf, len, "%s", fn);
	}
	/* a folded line separates frames with ';' and ends with a newline */
	for (char *p = buf; *p; p++)
		if (*p == ';')
			*p = ':';
		else if ((unsigned char)*p < 0x20)
			*p = ' ';
	return buf;
}

static const struct pw_stack_frame *frame_at(const struct pw_stack_report *s, const struct pw_stack_entry *st, size_t i)
{
	return &s->frames[s->frame_ids[st->first + i]];
}

/* The call site of a stack: the innermost Python frame, else the innermost frame outside the system and
 * profiler libraries, else the innermost frame. Returns its position, or NONE for an empty stack. */
static uint32_t call_site(const struct pw_stack_report *s, const struct pw_stack_entry *st)
{
	if (!st->len)
		return NONE;
	for (uint32_t i = 0; i < st->len; i++)
		if (frame_at(s, st, i)->python)
			return i;
	for (uint32_t i = 0; i < st->len; i++)
		if (!frame_at(s, st, i)->system)
			return i;
	return 0;
}

/* ---- text ---- */

struct call_total {
	uint32_t ev;
	uint64_t count, total_ns;
};

struct site_total {
	uint32_t frame, caller; /* frame ids; NONE: none */
	uint64_t count, total_ns;
};

static int by_call_total(const void *a, const void *b)
{
	const struct call_total *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return (x->ev > y->ev) - (x->ev < y->ev);
}

struct site_key {
	const struct site_total *v;
	uint32_t frame, caller;
};

static int site_eq(const void *ctx, uint32_t pos)
{
	const struct site_key *k = ctx;
	return k->v[pos].frame == k->frame && k->v[pos].caller == k->caller;
}

static int by_site_total(const void *a, const void *b)
{
	const struct site_total *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	return (x->caller > y->caller) - (x->caller < y->caller);
}

static void format_share(char *buf, size_t len, uint64_t part, uint64_t whole)
{
	if (whole)
		snprintf(buf, len, "%.1f %%", (double)part * 100.0 / (double)whole);
	else
		snprintf(buf, len, "-");
}

/* The rows of one call's sites. Returns 0, or -1 when out of memory. */
static int add_sites(struct pw_table *t, const struct pw_stack_report *s, uint32_t ev, uint64_t call_ns)
{
	struct site_total *sites = NULL;
	size_t n = 0, cap = 0;
	struct pw_hix ix = {0};
	for (size_t i = 0; i < s->nrows; i++) {
		const struct pw_stack_row *row = &s->rows[i];
		if (row->ev != ev)
			continue;
		const struct pw_stack_entry *st = &s->stacks[row->stack];
		uint32_t at = call_site(s, st);
		uint32_t frame = at == NONE ? NONE : s->frame_ids[st->first + at];
		uint32_t caller = at != NONE && at + 1 < st->len ? s->frame_ids[st->first + at + 1] : NONE;
		uint64_t h = pw_hix_hash(pw_hash_mix((uint64_t)frame << 32 | caller));
		struct site_key key = {sites, frame, caller};
		int64_t k = pw_hix_find(&ix, h, site_eq, &key);
		if (k < 0) {
			if (pw_reserve(&sites, &cap, n + 1, sizeof *sites) || pw_hix_add(&ix, h, (uint32_t)n)) {
				free(sites);
				pw_hix_free(&ix);
				return -1;
			}
			sites[n] = (struct site_total){frame, caller, 0, 0};
			k = (int64_t)n++;
		}
		sites[k].count += row->count;
		sites[k].total_ns += row->total_ns;
	}
	pw_hix_free(&ix);
	qsort(sites, n, sizeof *sites, by_site_total);
	for (size_t k = 0; k < n && k < TOP_SITES; k++) {
		char a[PW_CELL_MAX], b[PW_CELL_MAX], d[32], p[32];
		if (pw_table_add_row(t)) {
			free(sites);
			return -1;
		}
		if (sites[k].frame == NONE)
			snprintf(a, sizeof a, "(no frames)");
		else
			pw_stack_frame_text(a, sizeof a, &s->frames[sites[k].frame], NAME_WIDTH);
		pw_format_duration(d, sizeof d, sites[k].total_ns);
		format_share(p, sizeof p, sites[k].total_ns, call_ns);
		char cell[PW_CELL_MAX];
		if (sites[k].caller == NONE)
			snprintf(cell, sizeof cell, "  %s", a);
		else
			snprintf(cell, sizeof cell, "  %s <- %s", a,
				 pw_stack_frame_text(b, sizeof b, &s->frames[sites[k].caller], NAME_WIDTH));
		if (strlen(cell) > SITE_WIDTH) /* the caller is context: cut it rather than widen the table */
			memcpy(cell + SITE_WIDTH - 3, "...", 4);
		pw_table_set(t, 0, "%s", cell);
		pw_table_set(t, 1, "%" PRIu64, sites[k].count);
		pw_table_set(t, 2, "%s", d);
		pw_table_set(t, 3, "%s", p);
	}
	free(sites);
	return 0;
}

static int write_callsites_text(FILE *f, const struct pw_stack_report *s)
{
	struct call_total calls[PW_EV_COUNT];
	size_t n = 0;
	for (uint32_t ev = 0; ev < PW_EV_COUNT; ev++)
		calls[ev] = (struct call_total){ev, 0, 0};
	for (size_t i = 0; i < s->nrows; i++) {
		const struct pw_stack_row *row = &s->rows[i];
		if (row->ev >= PW_EV_COUNT || !pw_event_is_call((int)row->ev))
			continue;
		calls[row->ev].count += row->count;
		calls[row->ev].total_ns += row->total_ns;
	}
	for (uint32_t ev = 0; ev < PW_EV_COUNT; ev++)
		if (calls[ev].count)
			calls[n++] = calls[ev];
	if (!n)
		return 0;
	qsort(calls, n, sizeof *calls, by_call_total);
	static const char *const headers[] = {"Call / call site", "Num calls", "Total time", "Percentage"};
	struct pw_table t = {.ncols = 4, .headers = headers, .align = "lrrr"};
	for (size_t i = 0; i < n && i < TOP_CALLS; i++) {
		const struct pw_event_info *info = &pw_events[calls[i].ev];
		char d[32];
		if (pw_table_add_row(&t))
			goto oom;
		pw_format_duration(d, sizeof d, calls[i].total_ns);
		pw_table_set(&t, 0, "%s.%s", pw_domain_names[info->domain], info->name);
		pw_table_set(&t, 1, "%" PRIu64, calls[i].count);
		pw_table_set(&t, 2, "%s", d);
		pw_table_set(&t, 3, "%s", calls[i].total_ns ? "100 %" : "-");
		if (add_sites(&t, s, calls[i].ev, calls[i].total_ns))
			goto oom;
	}
	fputs("Top call sites (calls with a stack; the program's innermost frame <- its caller; % of the call's time)\n",
	      f);
	pw_table_print(f, &t);
	if (n > TOP_CALLS)
		fprintf(f, "... %zu more calls with stacks (all are in the JSON report and rank<R>.folded)\n",
			n - TOP_CALLS);
	fputc('\n', f);
	pw_table_free(&t);
	return 0;
oom:
	pw_table_free(&t);
	return -1;
}

/* A function of the CPU samples: a frame without its line; its samples and the CPU time they stand for. */
struct function_total {
	struct pw_stack_frame key;
	uint64_t self, total, self_ns, total_ns;
	size_t last_row; /* the last row counted in total: a function counts once per stack */
};

struct function_key {
	const struct function_total *v;
	const struct pw_stack_frame *fr;
};

static int function_eq(const void *ctx, uint32_t pos)
{
	const struct function_key *k = ctx;
	const struct pw_stack_frame *a = &k->v[pos].key, *b = k->fr;
	return a->function == b->function && a->file == b->file && a->module == b->module && a->offset == b->offset &&
	       a->python == b->python;
}

static int by_self(const void *a, const void *b)
{
	const struct function_total *x = a, *y = b;
	if (x->self_ns != y->self_ns)
		return x->self_ns > y->self_ns ? -1 : 1;
	return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
}

static int by_inclusive(const void *a, const void *b)
{
	const struct function_total *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return (x->self_ns < y->self_ns) - (x->self_ns > y->self_ns);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* One table of functions, by the CPU time their samples stand for (of cpu_ns in all). */
static int print_functions(FILE *f, struct function_total *v, size_t n, uint64_t cpu_ns, int self)
{
	static const char *const headers[] = {"Function", "Samples", "CPU time", "Percentage"};
	struct pw_table t = {.ncols = 4, .headers = headers, .align = "lrrr"};
	qsort(v, n, sizeof *v, self ? by_self : by_inclusive);
	for (size_t i = 0; i < n && i < TOP_FUNCTIONS; i++) {
		char name[PW_CELL_MAX], p[32], cpu[32];
		uint64_t c = self ? v[i].self : v[i].total, ns = self ? v[i].self_ns : v[i].total_ns;
		if (!c)
			break;
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		format_share(p, sizeof p, ns, cpu_ns);
		pw_format_duration(cpu, sizeof cpu, ns);
		pw_table_set(&t, 0, "%s", pw_stack_frame_text(name, sizeof name, &v[i].key, NAME_WIDTH));
		pw_table_set(&t, 1, "%" PRIu64, c);
		pw_table_set(&t, 2, "%s", cpu);
		pw_table_set(&t, 3, "%s", p);
	}
	fputs(self ? "Top functions by self samples (the innermost frame)\n"
		   : "Top functions by total samples (anywhere on the stack)\n",
	      f);
	pw_table_print(f, &t);
	pw_table_free(&t);
	return 0;
}

static int write_samples_text(FILE *f, const struct pw_stack_report *s)
{
	if (!s->samples)
		return 0;
	struct function_total *v = NULL;
	size_t n = 0, cap = 0;
	struct pw_hix ix = {0};
	uint64_t counted = 0, cpu_ns = 0;
	for (size_t i = 0; i < s->nrows; i++) {
		const struct pw_stack_row *row = &s->rows[i];
		if (row->ev != PW_EV_CPU_SAMPLE)
			continue;
		counted += row->count;
		cpu_ns = add_sat(cpu_ns, row->total_ns);
		const struct pw_stack_entry *st = &s->stacks[row->stack];
		for (uint32_t k = 0; k < st->len; k++) {
			struct pw_stack_frame key = *frame_at(s, st, k);
			key.line = 0;
			uint64_t h = (uint64_t)(uintptr_t)key.function * 31 + (uint64_t)(uintptr_t)key.file;
			h = pw_hix_hash((h * 31 + (uint64_t)(uintptr_t)key.module) * 31 + key.offset);
			struct function_key fk = {v, &key};
			int64_t at = pw_hix_find(&ix, h, function_eq, &fk);
			if (at < 0) {
				if (pw_reserve(&v, &cap, n + 1, sizeof *v) || pw_hix_add(&ix, h, (uint32_t)n))
					goto oom;
				v[n] = (struct function_total){.key = key, .last_row = (size_t)-1};
				at = (int64_t)n++;
			}
			if (k == 0) {
				v[at].self += row->count;
				v[at].self_ns = add_sat(v[at].self_ns, row->total_ns);
			}
			if (v[at].last_row != i) {
				v[at].last_row = i;
				v[at].total += row->count;
				v[at].total_ns = add_sat(v[at].total_ns, row->total_ns);
			}
		}
	}
	/* the kernel checks CPU-time timers at its tick: above its rate a sample stands for several periods */
	char period[32], cpu[32], every[32];
	pw_format_duration(period, sizeof period, s->sample_period_ns);
	pw_format_duration(cpu, sizeof cpu, cpu_ns);
	pw_format_duration(every, sizeof every, counted ? cpu_ns / counted : 0);
	fprintf(f, "CPU samples: %" PRIu64 " for %s of CPU time (one every %s of a thread's CPU time; %s asked)\n",
		counted, cpu, every, period);
	if (print_functions(f, v, n, cpu_ns, 1) || print_functions(f, v, n, cpu_ns, 0))
		goto oom;
	fputc('\n', f);
	free(v);
	pw_hix_free(&ix);
	return 0;
oom:
	free(v);
	pw_hix_free(&ix);
	return -1;
}

int pw_stacks_write_text(FILE *f, const struct pw_rank_report *r)
{
	const struct pw_stack_report *s = r->stacks;
	if (!s)
		return 0;
	return write_callsites_text(f, s) || write_samples_text(f, s) ? -1 : 0;
}

void pw_stacks_write_warnings(FILE *f, const struct pw_rank_report *r)
{
	const struct pw_stack_report *s = r->stacks;
	if (!s)
		return;
	if (s->dropped)
		fprintf(f,
			"WARNING: %" PRIu64 " call stacks dropped: the preload's stack table or string arena was full; "
			"those calls are counted without a stack.\n",
			s->dropped);
	if (s->samples_skipped)
		fprintf(f, "WARNING: %" PRIu64 " CPU samples skipped: the thread was inside the profiler when they fell due.\n",
			s->samples_skipped);
	if (s->unreadable)
		fprintf(f, "WARNING: %" PRIu64 " stacks unreadable (missing or damaged in the raw trace): ignored.\n",
			s->unreadable);
}

/* ---- JSON ---- */

/* "frames":[{function, file, line, module}...] of stack id, innermost first. */
static void write_frames(struct pw_json *j, const struct pw_stack_report *s, uint32_t id)
{
	const struct pw_stack_entry *st = &s->stacks[id];
	pw_json_key(j, "frames");
	pw_json_begin_array(j);
	for (uint32_t i = 0; i < st->len; i++) {
		const struct pw_stack_frame *fr = frame_at(s, st, i);
		pw_json_begin_object(j);
		pw_json_kv_string(j, "function", fr->function);
		pw_json_kv_string(j, "file", fr->file);
		pw_json_kv_uint(j, "line", fr->line);
		pw_json_kv_string(j, "module", fr->module && strcmp(fr->module, "?") ? fr->module : NULL);
		if (!fr->function)
			pw_json_kv_uint(j, "offset", fr->offset);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

static int by_cpu(const void *a, const void *b)
{
	const struct pw_stack_row *x = *(const struct pw_stack_row *const *)a, *y = *(const struct pw_stack_row *const *)b;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (x->stack > y->stack) - (x->stack < y->stack);
}

void pw_stacks_write_json(struct pw_json *j, const struct pw_rank_report *r)
{
	const struct pw_stack_report *s = r->stacks;
	size_t nrows = s ? s->nrows : 0, shown = 0, nsamples = 0;
	for (size_t i = 0; i < nrows; i++)
		nsamples += s->rows[i].ev == PW_EV_CPU_SAMPLE;
	pw_json_key(j, "callsites");
	pw_json_begin_array(j);
	for (size_t i = 0; i < nrows && shown < JSON_CALLSITES; i++) { /* rows are sorted by total_ns */
		const struct pw_stack_row *row = &s->rows[i];
		if (row->ev == PW_EV_CPU_SAMPLE)
			continue;
		shown++;
		pw_json_begin_object(j);
		pw_json_kv_string(j, "call", row->ev < PW_EV_COUNT ? pw_events[row->ev].name : NULL);
		write_frames(j, s, row->stack);
		pw_json_kv_uint(j, "count", row->count);
		pw_json_kv_uint(j, "total_ns", row->total_ns);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);

	const struct pw_stack_row **samples = NULL;
	if (nsamples && (samples = malloc(nsamples * sizeof *samples))) {
		size_t k = 0;
		for (size_t i = 0; i < nrows; i++)
			if (s->rows[i].ev == PW_EV_CPU_SAMPLE)
				samples[k++] = &s->rows[i];
		qsort(samples, nsamples, sizeof *samples, by_cpu);
	}
	pw_json_key(j, "samples");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "count", s ? s->samples : 0);
	pw_json_kv_uint(j, "period_ns", s ? s->sample_period_ns : 0);
	pw_json_kv_uint(j, "cpu_ns", s ? s->sample_cpu_ns : 0);
	pw_json_key(j, "stacks");
	pw_json_begin_array(j);
	for (size_t i = 0; samples && i < nsamples && i < JSON_SAMPLE_STACKS; i++) {
		pw_json_begin_object(j);
		write_frames(j, s, samples[i]->stack);
		pw_json_kv_uint(j, "count", samples[i]->count);
		pw_json_kv_uint(j, "cpu_ns", samples[i]->total_ns);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	pw_json_end_object(j);
	free(samples);

	pw_json_key(j, "stacks");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "captured", s ? s->captured : 0);
	pw_json_kv_uint(j, "dropped", s ? s->dropped : 0);
	pw_json_kv_uint(j, "samples_skipped", s ? s->samples_skipped : 0);
	pw_json_kv_uint(j, "unreadable", s ? s->unreadable : 0);
	pw_json_end_object(j);
}

/* ---- folded stacks ---- */

struct folded_line {
	char *text;
	uint64_t ns;
};

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

/* A row's line without its count: "cpu;OUTER;...;INNER" or "wait;OUTER;...;INNER;[call]". Returns it
 * (malloc'd), or NULL when out of memory. */
static char *folded_text(const struct pw_stack_report *s, const struct pw_stack_row *row)
{
	char *text = NULL, buf[2048];
	size_t size = 0;
	FILE *m = open_memstream(&text, &size);
	if (!m)
		return NULL;
	int sample = row->ev == PW_EV_CPU_SAMPLE;
	fputs(sample ? "cpu" : "wait", m);
	const struct pw_stack_entry *st = &s->stacks[row->stack];
	for (uint32_t i = st->len; i-- > 0;)
		fprintf(m, ";%s", pw_stack_frame_text(buf, sizeof buf, frame_at(s, st, i), 0));
	if (!sample)
		fprintf(m, ";[%s]", row->ev < PW_EV_COUNT ? pw_events[row->ev].name : "?");
	if (fclose(m)) {
		free(text);
		return NULL;
	}
	return text;
}

int pw_stacks_write_folded(const struct pw_rank_report *r, const char *path, char *err, size_t errlen)
{
	const struct pw_stack_report *s = r->stacks;
	if (!pw_stacks_any(s))
		return 0;
	struct folded_line *lines = calloc(s->nrows, sizeof *lines);
	size_t n = 0;
	int oom = !lines;
	for (size_t i = 0; !oom && i < s->nrows; i++) {
		lines[n].text = folded_text(s, &s->rows[i]);
		lines[n].ns = s->rows[i].total_ns;
		oom = !lines[n++].text;
	}
	FILE *f = oom ? NULL : pw_report_open(path, err, errlen);
	if (f) {
		qsort(lines, n, sizeof *lines, by_text);
		for (size_t i = 0; i < n;) {
			/* stacks whose frames read the same (the same function in two modules) make one line */
			uint64_t ns = 0;
			size_t k = i;
			for (; k < n && strcmp(lines[k].text, lines[i].text) == 0; k++)
				ns = ns > UINT64_MAX - lines[k].ns ? UINT64_MAX : ns + lines[k].ns;
			uint64_t us = ns / 1000 + (ns % 1000 >= 500);
			fprintf(f, "%s %" PRIu64 "\n", lines[i].text, us ? us : 1);
			i = k;
		}
	}
	for (size_t i = 0; lines && i < n; i++)
		free(lines[i].text);
	free(lines);
	if (oom)
		return snprintf(err, errlen, "cannot write %s: out of memory", path), -1;
	if (!f)
		return -1;
	return pw_report_close(f, path, err, errlen);
}

/* ---- trace ---- */

void pw_stacks_write_trace_stack(struct pw_json *j, const struct pw_stack_report *r, uint32_t id)
{
	if (!r || id >= r->nstacks)
		return;
	const struct pw_stack_entry *st = &r->stacks[id];
	char buf[2048];
	pw_json_key(j, "stack");
	pw_json_begin_array(j);
	for (uint32_t i = 0; i < st->len; i++)
		pw_json_string(j, pw_stack_frame_text(buf, sizeof buf, frame_at(r, st, i), 0));
	pw_json_end_array(j);
}
