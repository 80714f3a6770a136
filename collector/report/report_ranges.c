/* The NVTX phases and the capture windows in the text and JSON reports (ranges.h). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/json.h"
#include "../model/gpu_activity.h"
#include "../model/ranges.h"
#include "report_format.h"
#include "report_ranges.h"

/* Largest total first; equal totals by name. */
static int by_total(const void *a, const void *b, void *ctx)
{
	const struct pw_range_row *rows = ctx;
	const struct pw_range_row *x = &rows[*(const uint32_t *)a], *y = &rows[*(const uint32_t *)b];
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

#define NO_ROW UINT32_MAX

/* The shown rows (not folded into another) as a tree: the top rows by total, each followed by its children,
 * by total. A walk along first-child and next-sibling links, with no recursion: a recursive function
 * nests its rows as deep as its calls. */
static uint32_t *shown_rows(const struct pw_range_report *r, size_t *n)
{
	size_t cap = r->nrows ? r->nrows : 1;
	uint32_t *sorted = malloc(cap * sizeof *sorted), *ids = malloc(cap * sizeof *ids);
	uint32_t *first = malloc(cap * sizeof *first), *last = malloc(cap * sizeof *last);
	uint32_t *next = malloc(cap * sizeof *next);
	size_t ns = 0;
	*n = 0;
	if (!sorted || !ids || !first || !last || !next) {
		free(ids);
		ids = NULL;
		goto out;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		first[i] = last[i] = next[i] = NO_ROW;
		if (!r->rows[i].merged)
			sorted[ns++] = (uint32_t)i;
	}
	qsort_r(sorted, ns, sizeof *sorted, by_total, r->rows);
	/* each row after its elder siblings, as sorted has them; a row under a row not shown is not shown */
	uint32_t top_first = NO_ROW, top_last = NO_ROW;
	for (size_t i = 0; i < ns; i++) {
		uint32_t id = sorted[i], parent = r->rows[id].parent;
		uint32_t *head = parent == PW_RANGE_TOP ? &top_first : &first[parent];
		uint32_t *tail = parent == PW_RANGE_TOP ? &top_last : &last[parent];
		if (parent != PW_RANGE_TOP && r->rows[parent].merged)
			continue;
		if (*tail == NO_ROW)
			*head = id;
		else
			next[*tail] = id;
		*tail = id;
	}
	for (uint32_t id = top_first; id != NO_ROW;) {
		ids[(*n)++] = id;
		if (first[id] != NO_ROW) {
			id = first[id];
			continue;
		}
		while (next[id] == NO_ROW && r->rows[id].parent != PW_RANGE_TOP)
			id = r->rows[id].parent;
		id = next[id];
	}
out:
	free(sorted);
	free(first);
	free(last);
	free(next);
	return ids;
}

/* Lightning's prefixes, shown once in the heading rather than on every row. */
static const char *const shared_prefixes[] = {"[pl][profile]", "[pl][module]"};
#define NPREFIXES (sizeof shared_prefixes / sizeof shared_prefixes[0])

static const char *without_prefix(const char *name, unsigned *seen)
{
	for (size_t i = 0; i < NPREFIXES; i++) {
		size_t len = strlen(shared_prefixes[i]);
		if (strncmp(name, shared_prefixes[i], len) == 0 && name[len]) {
			*seen |= 1u << i;
			return name + len;
		}
	}
	return name;
}

static void prefixes_note(FILE *f, unsigned seen)
{
	if (!seen)
		return;
	fputs("; without their prefix", f);
	for (size_t i = 0, k = 0; i < NPREFIXES; i++)
		if (seen & 1u << i)
			fprintf(f, "%s %s", k++ ? "," : "", shared_prefixes[i]);
}

/* The time the phases' percentages are of: the windows when the run was captured in windows. */
static uint64_t phase_base(const struct pw_rank_report *rr)
{
	const struct pw_range_report *r = rr->ranges;
	return r && r->windowed ? r->captured_ns : rr->wall_ns;
}

void pw_capture_header(FILE *f, const struct pw_rank_report *rr, void (*field)(FILE *, const char *, const char *))
{
	const struct pw_range_report *r = rr->ranges;
	if (!r || !r->windowed)
		return;
	char buf[512], d1[32], d2[32];
	pw_format_duration(d1, sizeof d1, r->captured_ns);
	pw_format_duration(d2, sizeof d2, rr->wall_ns);
	snprintf(buf, sizeof buf, "%zu window%s, %s of %s (%s)", r->nwindows, r->nwindows == 1 ? "" : "s", d1, d2,
		 r->settings ? r->settings : "capture control");
	field(f, "Capture:", buf);
}

/* An action's cell in the text tables, its indentation included, so that a table fits 120 columns (whole in
 * the JSON). */
#define ACTION_WIDTH 60
#define ACTION_WIDTH_GPU 50

/* name cut in its middle to width bytes (at character boundaries), into buf. */
static const char *cut_middle(const char *name, size_t width, char *buf, size_t size)
{
	size_t len = strlen(name);
	if (len <= width || width < 8 || size < width + 1)
		return name;
	size_t head = (width - 3) * 2 / 3, tail = width - 3 - head;
	while (head > 0 && ((unsigned char)name[head] & 0xc0) == 0x80)
		head--;
	size_t from = len - tail;
	while (from < len && ((unsigned char)name[from] & 0xc0) == 0x80)
		from++;
	snprintf(buf, size, "%.*s...%s", (int)head, name, name + from);
	return buf;
}

/* One row of a Phases table: name indented by indent. */
static int phase_row(struct pw_table *t, const struct pw_range_row *x, int indent, const char *name, uint64_t base,
		     int gpu)
{
	char d[3][32], cut[ACTION_WIDTH + 1];
	size_t domain_len = x->domain[0] ? strlen(x->domain) + 1 : 0, width = gpu ? ACTION_WIDTH_GPU : ACTION_WIDTH;
	size_t room = width > (size_t)indent + domain_len + 8 ? width - (size_t)indent - domain_len : 8;
	name = cut_middle(name, room, cut, sizeof cut);
	if (pw_table_add_row(t))
		return -1;
	pw_format_mean(d[0], sizeof d[0], x->total_ns, x->count);
	pw_format_duration(d[1], sizeof d[1], x->total_ns);
	pw_format_duration(d[2], sizeof d[2], x->gpu_ns);
	pw_table_set(t, 0, "%*s%s%s%s", indent, "", x->domain[0] ? x->domain : "", x->domain[0] ? ":" : "", name);
	pw_table_set(t, 1, "%s", d[0]);
	pw_table_set(t, 2, "%" PRIu64, x->count);
	pw_table_set(t, 3, "%s", d[1]);
	if (base)
		pw_table_set(t, 4, "%.1f %%", (double)x->total_ns * 100.0 / (double)base);
	else
		pw_table_set(t, 4, "-");
	if (gpu)
		pw_table_set(t, 5, "%s", d[2]);
	return 0;
}

static int same_action(const struct pw_range_row *a, const struct pw_range_row *b)
{
	return a->kind == b->kind && strcmp(a->domain, b->domain) == 0 && strcmp(a->name, b->name) == 0;
}

/* The flat table, as Lightning's SimpleProfiler prints its actions: one row per name, all its occurrences
 * wherever they nest, by total time (a name nested in itself counts its time twice, as there). */
static int write_flat(FILE *f, const struct pw_range_report *r, uint64_t base, int gpu)
{
	struct pw_range_row *flat = calloc(r->nrows ? r->nrows : 1, sizeof *flat);
	uint32_t *ids = malloc((r->nrows ? r->nrows : 1) * sizeof *ids);
	size_t n = 0;
	if (!flat || !ids) {
		free(flat);
		free(ids);
		return -1;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		const struct pw_range_row *x = &r->rows[i];
		if (x->merged)
			continue;
		size_t k = 0;
		while (k < n && !same_action(&flat[k], x))
			k++;
		if (k == n) {
			flat[n] = *x;
			flat[n].count = flat[n].total_ns = flat[n].gpu_ns = 0;
			ids[n] = (uint32_t)n;
			n++;
		}
		flat[k].count += x->count;
		flat[k].total_ns += x->total_ns;
		flat[k].gpu_ns += x->gpu_ns;
	}
	qsort_r(ids, n, sizeof *ids, by_total, flat);
	static const char *const headers[] = {"Action",	    "Mean duration", "Num calls", "Total time",
					      "Percentage", "GPU time"};
	struct pw_table t = {.ncols = gpu ? 6 : 5, .headers = headers, .align = "lrrrrr"};
	unsigned prefixes = 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = phase_row(&t, &flat[ids[i]], 0, without_prefix(flat[ids[i]].name, &prefixes), base, gpu);
	if (!rc) {
		fputs("\nPhases by action (all occurrences of each name, wherever they nest, as SimpleProfiler counts them", f);
		prefixes_note(f, prefixes);
		fputs(")\n", f);
		pw_table_print(f, &t);
	}
	pw_table_free(&t);
	free(flat);
	free(ids);
	return rc;
}

int pw_ranges_write_text(FILE *f, const struct pw_rank_report *rr)
{
	const struct pw_range_report *r = rr->ranges;
	if (!r)
		return 0;
	if (r->windowed && r->nwindows) {
		fputs("Capture windows (times from the rank's start)\n", f);
		static const char *const headers[] = {"Pid", "From", "To", "Length", "Opened by"};
		struct pw_table t = {.ncols = 5, .headers = headers, .align = "rrrrl"};
		for (size_t i = 0; i < r->nwindows && i < 20; i++) {
			const struct pw_capture_window *w = &r->windows[i];
			char a[32], b[32], c[32];
			uint64_t s = w->start_ns > rr->start_ns ? w->start_ns - rr->start_ns : 0;
			uint64_t e = w->end_ns > rr->start_ns ? w->end_ns - rr->start_ns : 0;
			pw_format_duration(a, sizeof a, s);
			pw_format_duration(b, sizeof b, e);
			pw_format_duration(c, sizeof c, e > s ? e - s : 0);
			if (pw_table_add_row(&t))
				goto oom_windows;
			pw_table_set(&t, 0, "%d", w->pid);
			pw_table_set(&t, 1, "%s", a);
			pw_table_set(&t, 2, "%s", b);
			pw_table_set(&t, 3, "%s", c);
			if (w->occurrence >= 0)
				pw_table_set(&t, 4, "%s %s#%" PRId64, pw_capture_reason_name(w->reason),
					     w->name ? w->name : "", w->occurrence);
			else
				pw_table_set(&t, 4, "%s", pw_capture_reason_name(w->reason));
		}
		pw_table_print(f, &t);
		if (r->nwindows > 20)
			fprintf(f, "... %zu more windows (all are in the JSON report)\n", r->nwindows - 20);
		fputc('\n', f);
		pw_table_free(&t);
		goto windows_done;
oom_windows:
		pw_table_free(&t);
		return -1;
	}
windows_done:
	if (!r->nrows && !r->nmarks)
		return 0;
	int gpu = pw_act_recorded(rr->act);
	static const char *const headers[] = {"Action",	    "Mean duration", "Num calls", "Total time",
					      "Percentage", "GPU time"};
	struct pw_table t = {.ncols = gpu ? 6 : 5, .headers = headers, .align = "lrrrrr"};
	size_t n;
	uint32_t *ids = shown_rows(r, &n);
	if (!ids)
		return -1;
	uint64_t base = phase_base(rr);
	char d[1][32];
	if (pw_table_add_row(&t))
		goto oom;
	pw_format_duration(d[0], sizeof d[0], base);
	pw_table_set(&t, 0, "Total");
	pw_table_set(&t, 1, "-");
	pw_table_set(&t, 2, "%" PRIu64, r->closed);
	pw_table_set(&t, 3, "%s", d[0]);
	pw_table_set(&t, 4, "%s", base ? "100 %" : "-");
	if (gpu)
		pw_table_set(&t, 5, "-");
	unsigned prefixes = 0;
	int nested = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pw_range_row *x = &r->rows[ids[i]];
		nested |= x->depth > 0;
		int indent = x->depth > 8 ? 16 : 2 * x->depth;
		if (phase_row(&t, x, indent, without_prefix(x->name, &prefixes), base, gpu))
			goto oom;
	}
	fputs("Phases (NVTX ranges; each nested range under its own parent, siblings by total time", f);
	prefixes_note(f, prefixes);
	fprintf(f, "; percentage of the %s)\n", r->windowed ? "captured time" : "rank's wall time");
	pw_table_print(f, &t);
	if (nested && write_flat(f, r, base, gpu))
		goto oom;
	if (r->folded_names)
		fprintf(f, "Names with digits folded (#): %" PRIu64 " distinct names grouped into rows of their pattern.\n",
			r->folded_names);
	if (r->unclosed || r->unmatched_pops || r->unmatched_ends)
		fprintf(f, "Unbalanced: %" PRIu64 " ranges still open at the end of their window or process (counted to "
			   "that end), %" PRIu64 " pops and %" PRIu64 " ends with nothing open.\n",
			r->unclosed, r->unmatched_pops, r->unmatched_ends);
	for (size_t i = 0; i < r->nmarks && i < 10; i++)
		fprintf(f, "%s%s%s%s: %" PRIu64 " marks\n", i ? "" : "Marks: ", r->marks[i].domain,
			r->marks[i].domain[0] ? ":" : "", r->marks[i].name, r->marks[i].count);
	fputc('\n', f);
	pw_table_free(&t);
	free(ids);
	return 0;
oom:
	pw_table_free(&t);
	free(ids);
	return -1;
}

void pw_ranges_write_json(struct pw_json *j, const struct pw_rank_report *rr)
{
	const struct pw_range_report *r = rr->ranges;
	size_t n = 0;
	uint32_t *ids = r ? shown_rows(r, &n) : NULL;
	pw_json_key(j, "ranges");
	pw_json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		const struct pw_range_row *x = &r->rows[ids[i]];
		pw_json_begin_object(j);
		pw_json_kv_string(j, "domain", x->domain);
		pw_json_kv_string(j, "name", x->name);
		pw_json_kv_int(j, "depth", x->depth);
		/* the parent's index in this array: rows come in tree order, so it is an earlier one */
		size_t parent = i;
		while (x->parent != PW_RANGE_TOP && parent-- > 0 && ids[parent] != x->parent)
			;
		pw_json_key(j, "parent");
		if (x->parent == PW_RANGE_TOP || parent >= i)
			pw_json_null(j);
		else
			pw_json_uint(j, parent);
		pw_json_kv_string(j, "kind", x->kind == PW_RANGE_START ? "start" : "push");
		pw_json_kv_uint(j, "count", x->count);
		pw_json_kv_uint(j, "total_ns", x->total_ns);
		pw_json_kv_uint(j, "mean_ns", x->count ? x->total_ns / x->count : 0);
		pw_json_kv_uint(j, "min_ns", x->count ? x->min_ns : 0);
		pw_json_kv_uint(j, "max_ns", x->max_ns);
		pw_json_kv_uint(j, "gpu_ns", x->gpu_ns);
		pw_json_kv_uint(j, "folded", x->folded);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	free(ids);

	pw_json_key(j, "marks");
	pw_json_begin_array(j);
	for (size_t i = 0; r && i < r->nmarks; i++) {
		pw_json_begin_object(j);
		pw_json_kv_string(j, "domain", r->marks[i].domain);
		pw_json_kv_string(j, "name", r->marks[i].name);
		pw_json_kv_uint(j, "count", r->marks[i].count);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);

	pw_json_key(j, "nvtx");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "ranges", r ? r->closed : 0);
	pw_json_kv_uint(j, "unclosed", r ? r->unclosed : 0);
	pw_json_kv_uint(j, "unmatched_pops", r ? r->unmatched_pops : 0);
	pw_json_kv_uint(j, "unmatched_ends", r ? r->unmatched_ends : 0);
	pw_json_kv_uint(j, "folded_names", r ? r->folded_names : 0);
	pw_json_kv_uint(j, "occurrences_not_kept", r ? r->instances_dropped : 0);
	pw_json_end_object(j);

	int windowed = r && r->windowed;
	pw_json_key(j, "capture");
	pw_json_begin_object(j);
	pw_json_kv_string(j, "mode", windowed ? "windows" : "full");
	pw_json_kv_string(j, "settings", windowed && r->settings ? r->settings : "");
	pw_json_key(j, "windows");
	pw_json_begin_array(j);
	for (size_t i = 0; windowed && i < r->nwindows; i++) {
		const struct pw_capture_window *w = &r->windows[i];
		pw_json_begin_object(j);
		pw_json_kv_int(j, "pid", w->pid);
		pw_json_kv_uint(j, "start_ns", w->start_ns > rr->start_ns ? w->start_ns - rr->start_ns : 0);
		pw_json_kv_uint(j, "end_ns", w->end_ns > rr->start_ns ? w->end_ns - rr->start_ns : 0);
		pw_json_kv_string(j, "reason", pw_capture_reason_name(w->reason));
		pw_json_kv_string(j, "name", w->name);
		pw_json_kv_int(j, "occurrence", w->occurrence);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	pw_json_kv_uint(j, "captured_ns", windowed ? r->captured_ns : rr->wall_ns);
	pw_json_end_object(j);
}
