/* rank<R>.html: the report as a self-contained page (see report_html.h). */
#define _GNU_SOURCE
#include "report_html.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/hash_index.h"
#include "../lib/units.h"
#include "../model/call_stacks.h"
#include "../model/findings.h"
#include "../model/gpu_activity.h"
#include "../model/ranges.h"
#include "../model/timeline.h"
#include "../symbols/demangle.h"
#include "rank_summary.h"
#include "report_call_stacks.h"
#include "report_format.h"

#define CHART_ROWS 15          /* rows of each bar chart */
#define FLAME_WIDTH 1200.0     /* px */
#define FLAME_ROW 17           /* px a frame's row */
#define FLAME_MAX_FRAMES 3000  /* frames drawn per flame graph: the widest (a frame is never wider than its caller) */
#define FLAME_MIN_SHARE 0.0005 /* narrower frames are not drawn */
#define TL_LABEL 170.0         /* px of the timeline's labels */
#define TL_WIDTH 1030.0        /* px of the timeline's plot */
#define TL_BINS 343            /* 3 px each */
#define TL_ROW 36              /* px */
#define TL_MAX_DEVICES 8
#define TL_MAX_PROCS 8
#define TL_MAX_PHASES 2000

/* ---- text ---- */


static const char *dur(char buf[32], uint64_t ns)
{
	pw_format_duration(buf, 32, ns);
	return buf;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- the page ---- */

static const char style[] =
	"body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232a;max-width:1260px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d5dae0}"
	".meta{color:#505a66;margin:2px 0}.note{color:#6b7581;font-size:12px;margin:4px 0}"
	"ol.findings li{margin:6px 0}.fix{color:#2c5d2c}"
	".bars .row{display:grid;grid-template-columns:380px 1fr 300px;align-items:center;gap:8px;margin:2px 0}"
	".bars .label{overflow:hidden;white-space:nowrap;text-overflow:ellipsis;font-family:monospace;font-size:12px}"
	".bars .track{background:#eef1f4;height:14px}.bars .bar{background:#4a7fb5;height:14px}"
	".bars .fig{font-size:12px;color:#404a55;white-space:nowrap}"
	"svg{display:block;margin:6px 0}svg text{font:11px monospace;pointer-events:none}"
	"g.fr{cursor:pointer}g.fr:hover rect{stroke:#000;stroke-width:.5}"
	".legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}";

/* Errors of the page's own script land in <html data-errors>, where a test (or a reader) finds them. */
static const char head_script[] =
	"window.pwErrors=[];window.addEventListener('error',function(e){pwErrors.push(String(e.message));"
	"document.documentElement.setAttribute('data-errors',pwErrors.join('\\n'));});";

/* Click-to-zoom: a frame fills the width; its callers span it below, the rest is hidden; a click on the root
 * shows all again. */
static const char zoom_script[] =
	"function pwCut(s,px){var n=Math.floor((px-6)/7);return n<3?'':s.length<=n?s:s.slice(0,n-2)+'..';}"
	"function pwZoom(svg,g){var zx=+g.dataset.x,zw=+g.dataset.w,zd=+g.dataset.d,W=+svg.dataset.width;"
	"svg.querySelectorAll('g.fr').forEach(function(f){var x=+f.dataset.x,w=+f.dataset.w,d=+f.dataset.d,e=1e-9;"
	"var inside=x>=zx-e&&x+w<=zx+zw+e,up=d<zd&&x<=zx+e&&x+w>=zx+zw-e;"
	"if(!inside&&!up){f.style.display='none';return;}f.style.display='';"
	"var nx=up?0:(x-zx)/zw,nw=up?1:w/zw,r=f.querySelector('rect'),t=f.querySelector('text');"
	"r.setAttribute('x',(nx*W).toFixed(1));r.setAttribute('width',Math.max(nw*W-1,0.5).toFixed(1));"
	"if(t){t.setAttribute('x',(nx*W+3).toFixed(1));t.textContent=pwCut(f.dataset.n,nw*W);}});}"
	"document.querySelectorAll('svg.flame').forEach(function(svg){svg.addEventListener('click',function(ev){"
	"var g=ev.target.closest('g.fr');if(g)pwZoom(svg,g);});});"
	/* #zoom=SVG-ID:FRAME opens the page zoomed on that frame (a link to share) */
	"(function(){var m=/^#zoom=([^:]+):(.+)$/.exec(decodeURIComponent(location.hash));if(!m)return;"
	"var svg=document.getElementById(m[1]);if(!svg)return;var gs=svg.querySelectorAll('g.fr');"
	"for(var i=0;i<gs.length;i++)if(gs[i].dataset.n===m[2]){pwZoom(svg,gs[i]);return;}})();";

static void bar_row(FILE *f, const char *label, uint64_t value, uint64_t max, const char *figures)
{
	fputs("<div class=\"row\" data-name=\"", f);
	pw_html_text(f, label);
	fprintf(f, "\" data-value=\"%" PRIu64 "\"><span class=\"label\" title=\"", value);
	pw_html_text(f, label);
	fputs("\">", f);
	pw_html_text(f, label);
	fprintf(f, "</span><span class=\"track\"><span class=\"bar\" style=\"display:block;width:%.2f%%\"></span></span>"
		   "<span class=\"fig\">",
		max ? 100.0 * (double)value / (double)max : 0.0);
	pw_html_text(f, figures);
	fputs("</span></div>\n", f);
}

static void write_header(FILE *f, const struct pw_rank_report *r)
{
	char title[64], wall[32];
	if (r->rank == PW_RANK_LAUNCHER)
		snprintf(title, sizeof title, "launcher processes of %s", r->host ? r->host : "this host");
	else
		snprintf(title, sizeof title, "rank %d", r->rank);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>profwrap: ", f);
	pw_html_text(f, title);
	fprintf(f, "</title><style>%s</style><script>%s</script></head><body>\n", style, head_script);
	fputs("<header><h1>profwrap report, ", f);
	pw_html_text(f, title);
	fputs("</h1><p class=\"meta\">Command: <code>", f);
	pw_html_text(f, r->command ? r->command : "?");
	fprintf(f, "</code></p><p class=\"meta\">Host: ");
	pw_html_text(f, r->host ? r->host : "?");
	fprintf(f, " &middot; wall time %s", dur(wall, r->wall_ns));
	struct pw_activity_part parts[PW_ACTIVITY_PARTS];
	size_t nparts = pw_rank_activity(r, parts);
	for (size_t i = 0; i < nparts; i++)
		fprintf(f, " &middot; %s %s", parts[i].label, dur(wall, parts[i].ns));
	fputs("</p></header>\n", f);
}

/* Where a finding's evidence is on the page. */
static const char *finding_anchor(const char *id)
{
	static const struct {
		const char *id, *anchor;
	} where[] = {{"collective_bound", "kernels"}, {"checkpoint_bound", "files"}, {"pageable_memcpy", "calls"},
		     {"small_memcpy", "calls"}};
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
		if (strcmp(where[i].id, id) == 0)
			return where[i].anchor;
	return "timeline"; /* the idle and start-up findings: the gaps and the phases over time */
}

static void write_findings(FILE *f, const struct pw_rank_report *r)
{
	fputs("<section id=\"findings\"><h2>What to fix first</h2>\n", f);
	if (!r->nfindings)
		fputs("<p>No finding: no rule of profwrap's fired on this rank (see the charts below).</p>\n", f);
	else
		fputs("<ol class=\"findings\">\n", f);
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct pw_finding *x = &r->findings[i];
		fprintf(f, "<li data-finding=\"%s\"><a href=\"#%s\"><b>%s</b></a>, %.1f%% of wall time: ", x->id,
			finding_anchor(x->id), x->id, 100.0 * x->share);
		pw_html_text(f, x->evidence);
		fputs("<br><span class=\"fix\">Fix: ", f);
		pw_html_text(f, x->advice);
		fputs("</span></li>\n", f);
	}
	if (r->nfindings)
		fputs("</ol>\n", f);
	fputs("</section>\n", f);
}

/* ---- bar charts ---- */

static void write_calls(FILE *f, const struct pw_rank_report *r)
{
	int ids[PW_EV_COUNT];
	size_t n = pw_sorted_calls(r, ids);
	fputs("<section id=\"calls\"><h2>Top calls (by total time)</h2><div class=\"bars\" data-chart=\"calls\">\n", f);
	uint64_t max = n ? r->calls[ids[0]].total_ns : 0;
	char label[96], figs[160], mean[32], total[32];
	for (size_t i = 0; i < n && i < CHART_ROWS; i++) {
		const struct pw_call_stat *c = &r->calls[ids[i]];
		snprintf(label, sizeof label, "%s.%s", pw_domain_names[pw_events[ids[i]].domain], pw_events[ids[i]].name);
		pw_format_mean(mean, sizeof mean, c->total_ns, c->count);
		snprintf(figs, sizeof figs, "%s in %" PRIu64 " calls (mean %s), %.1f %%", dur(total, c->total_ns),
			 c->count, mean, share(c->total_ns, r->wall_ns));
		bar_row(f, label, c->total_ns, max, figs);
	}
	fputs("</div>", f);
	if (n > CHART_ROWS)
		fprintf(f, "<p class=\"note\">%zu more calls in the text report.</p>", n - CHART_ROWS);
	fputs("</section>\n", f);
}

static int by_kernel_total(const void *a, const void *b)
{
	const struct pw_act_kernel_row *x = *(const struct pw_act_kernel_row *const *)a;
	const struct pw_act_kernel_row *y = *(const struct pw_act_kernel_row *const *)b;
	return x->total_ns != y->total_ns ? (x->total_ns > y->total_ns ? -1 : 1) : (x->count < y->count) - (x->count > y->count);
}

static void write_kernels(FILE *f, const struct pw_rank_report *r)
{
	const struct pw_act_report *act = r->act;
	size_t n = act ? act->nkernel_rows : 0;
	fputs("<section id=\"kernels\"><h2>Top kernels (by GPU time)</h2><div class=\"bars\" data-chart=\"kernels\">\n", f);
	const struct pw_act_kernel_row **rows = n ? malloc(n * sizeof *rows) : NULL;
	for (size_t i = 0; rows && i < n; i++)
		rows[i] = &act->kernel_rows[i];
	if (rows)
		qsort(rows, n, sizeof *rows, by_kernel_total);
	char demangled[4096], shortened[256], label[320], figs[160], mean[32], total[32];
	for (size_t i = 0; rows && i < n && i < CHART_ROWS; i++) {
		const struct pw_act_kernel_row *k = rows[i];
		const char *name = pw_demangle(k->name, demangled, sizeof demangled) ? demangled : k->name;
		snprintf(label, sizeof label, "%s (GPU %d, stream %" PRIu32 ")",
			 pw_shorten_name(shortened, sizeof shortened, name, 90), k->device, k->stream);
		pw_format_mean(mean, sizeof mean, k->total_ns, k->count);
		snprintf(figs, sizeof figs, "%s in %" PRIu64 " kernels (mean %s)", dur(total, k->total_ns), k->count, mean);
		bar_row(f, label, k->total_ns, rows[0]->total_ns, figs);
	}
	fputs("</div>", f);
	if (!n)
		fputs("<p class=\"note\">No kernel was recorded.</p>", f);
	else if (n > CHART_ROWS)
		fprintf(f, "<p class=\"note\">%zu more kernel rows in the text report.</p>", n - CHART_ROWS);
	fputs("</section>\n", f);
	free(rows);
}

static int by_file_time(const void *a, const void *b)
{
	const struct pw_file_stat *x = *(const struct pw_file_stat *const *)a, *y = *(const struct pw_file_stat *const *)b;
	return x->time_ns != y->time_ns ? (x->time_ns > y->time_ns ? -1 : 1) : strcmp(pw_report_str(x->path), pw_report_str(y->path));
}

static void write_files(FILE *f, const struct pw_rank_report *r)
{
	fputs("<section id=\"files\"><h2>Files (by time in calls on them)</h2><div class=\"bars\" data-chart=\"files\">\n", f);
	const struct pw_file_stat **rows = r->nfiles ? malloc(r->nfiles * sizeof *rows) : NULL;
	size_t n = 0;
	for (size_t i = 0; rows && i < r->nfiles; i++)
		if (!r->files[i].stream && r->files[i].time_ns)
			rows[n++] = &r->files[i];
	if (n)
		qsort(rows, n, sizeof *rows, by_file_time);
	char figs[200], total[32], rb[32], wb[32];
	for (size_t i = 0; i < n && i < CHART_ROWS; i++) {
		const struct pw_file_stat *x = rows[i];
		pw_format_bytes(rb, sizeof rb, x->read_bytes);
		pw_format_bytes(wb, sizeof wb, x->write_bytes);
		snprintf(figs, sizeof figs, "%s: %" PRIu64 " reads (%s), %" PRIu64 " writes (%s)", dur(total, x->time_ns),
			 x->reads, rb, x->writes, wb);
		bar_row(f, pw_report_str(x->path), x->time_ns, rows[0]->time_ns, figs);
	}
	fputs("</div>", f);
	if (!n)
		fputs("<p class=\"note\">No file took time.</p>", f);
	else if (n > CHART_ROWS)
		fprintf(f, "<p class=\"note\">%zu more files in the text and JSON reports.</p>", n - CHART_ROWS);
	fputs("</section>\n", f);
	free(rows);
}

static int by_range_total(const void *a, const void *b)
{
	const struct pw_range_row *x = *(const struct pw_range_row *const *)a, *y = *(const struct pw_range_row *const *)b;
	return x->total_ns != y->total_ns ? (x->total_ns > y->total_ns ? -1 : 1) : strcmp(x->name, y->name);
}

static void write_phases(FILE *f, const struct pw_rank_report *r)
{
	const struct pw_range_report *rr = r->ranges;
	fputs("<section id=\"phases\"><h2>Phases (NVTX and Python ranges, by total time)</h2>"
	      "<div class=\"bars\" data-chart=\"phases\">\n", f);
	size_t n = 0, nrows = rr ? rr->nrows : 0;
	const struct pw_range_row **rows = nrows ? malloc(nrows * sizeof *rows) : NULL;
	for (size_t i = 0; rows && i < nrows; i++)
		if (!rr->rows[i].merged)
			rows[n++] = &rr->rows[i];
	if (n)
		qsort(rows, n, sizeof *rows, by_range_total);
	char label[200], figs[160], mean[32], total[32];
	for (size_t i = 0; i < n && i < CHART_ROWS; i++) {
		const struct pw_range_row *x = rows[i];
		snprintf(label, sizeof label, "%s%s%s", x->domain && *x->domain ? x->domain : "",
			 x->domain && *x->domain ? ":" : "", x->name ? x->name : "?");
		pw_format_mean(mean, sizeof mean, x->total_ns, x->count);
		snprintf(figs, sizeof figs, "%s in %" PRIu64 " (mean %s), %.1f %%", dur(total, x->total_ns), x->count, mean,
			 share(x->total_ns, r->wall_ns));
		bar_row(f, label, x->total_ns, rows[0]->total_ns, figs);
	}
	fputs("</div>", f);
	if (!n)
		fputs("<p class=\"note\">No range was recorded: mark phases with NVTX, or name Python functions with "
		      "<code>--python-functions</code>.</p>", f);
	else if (n > CHART_ROWS)
		fprintf(f, "<p class=\"note\">%zu more phases in the text report.</p>", n - CHART_ROWS);
	fputs("</section>\n", f);
	free(rows);
}

/* ---- flame graphs ---- */

struct fnode {
	char *label;
	uint32_t parent, depth;
	uint32_t first_child, next_sibling; /* UINT32_MAX: none */
	uint64_t value, count;
	double x; /* of the root's width, once laid out */
};

struct flame {
	struct fnode *nodes;
	size_t n, cap;
	struct pw_hix ix; /* (parent, label) */
	int oom;
};

struct fkey {
	const struct flame *fl;
	uint32_t parent;
	const char *label;
};

static int fnode_eq(const void *ctx, uint32_t pos)
{
	const struct fkey *k = ctx;
	const struct fnode *n = &k->fl->nodes[pos];
	return n->parent == k->parent && strcmp(n->label, k->label) == 0;
}

static uint32_t fnode_child(struct flame *fl, uint32_t parent, const char *label)
{
	struct fkey k = {fl, parent, label};
	uint64_t h = pw_hix_hash(pw_hash_bytes(pw_hash_mix(parent), label, strlen(label)));
	int64_t at = pw_hix_find(&fl->ix, h, fnode_eq, &k);
	if (at >= 0)
		return (uint32_t)at;
	char *copy = strdup(label);
	if (!copy || pw_reserve(&fl->nodes, &fl->cap, fl->n + 1, sizeof *fl->nodes) ||
	    pw_hix_add(&fl->ix, h, (uint32_t)fl->n)) {
		free(copy);
		fl->oom = 1;
		return UINT32_MAX;
	}
	struct fnode *p = &fl->nodes[parent];
	fl->nodes[fl->n] = (struct fnode){.label = copy, .parent = parent, .depth = p->depth + 1,
					  .first_child = UINT32_MAX, .next_sibling = p->first_child};
	p->first_child = (uint32_t)fl->n;
	return (uint32_t)fl->n++;
}

/* A frame's name for the flame graph: the folded file's text without its "(file:line)", so that the lines of
 * one function make one frame. */
static const char *frame_label(char *buf, size_t len, const struct pw_stack_frame *fr)
{
	pw_stack_frame_text(buf, len, fr, 0);
	size_t n = strlen(buf);
	char *open = n && buf[n - 1] == ')' ? strrchr(buf, '(') : NULL;
	if (open && open > buf && open[-1] == ' ' && strchr(open, ':'))
		open[-1] = '\0';
	return buf;
}

/* The tree of the rank's stack rows of one kind, weighed by their time, as rank<R>.folded has them: the CPU
 * samples, or the calls with a stack (the calls slower than the stack threshold: waits, in the main). Returns
 * 0, or -1 when out of memory. */
static int flame_build(struct flame *fl, const struct pw_stack_report *s, int samples)
{
	memset(fl, 0, sizeof *fl);
	if (pw_reserve(&fl->nodes, &fl->cap, 1, sizeof *fl->nodes) || !(fl->nodes[0].label = strdup("all")))
		return -1;
	fl->nodes[0].first_child = fl->nodes[0].next_sibling = UINT32_MAX;
	fl->n = 1;
	char buf[2048];
	for (size_t i = 0; s && i < s->nrows && !fl->oom; i++) {
		const struct pw_stack_row *row = &s->rows[i];
		int is_sample = row->ev == PW_EV_CPU_SAMPLE;
		if (is_sample != samples || (!samples && row->ev >= PW_EV_COUNT))
			continue;
		const struct pw_stack_entry *st = &s->stacks[row->stack];
		uint32_t at = 0;
		fl->nodes[0].value += row->total_ns;
		fl->nodes[0].count += row->count;
		for (uint32_t k = st->len; k-- > 0 && at != UINT32_MAX;) {
			at = fnode_child(fl, at, frame_label(buf, sizeof buf, &s->frames[s->frame_ids[st->first + k]]));
			if (at != UINT32_MAX) {
				fl->nodes[at].value += row->total_ns;
				fl->nodes[at].count += row->count;
			}
		}
		if (!samples && at != UINT32_MAX) { /* the call that waited, as the folded file's "[call]" */
			snprintf(buf, sizeof buf, "[%s]", pw_events[row->ev].name);
			at = fnode_child(fl, at, buf);
			if (at != UINT32_MAX) {
				fl->nodes[at].value += row->total_ns;
				fl->nodes[at].count += row->count;
			}
		}
	}
	return fl->oom ? -1 : 0;
}

static void flame_free(struct flame *fl)
{
	for (size_t i = 0; i < fl->n; i++)
		free(fl->nodes[i].label);
	free(fl->nodes);
	pw_hix_free(&fl->ix);
}

static int by_value_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x < y) - (x > y);
}

/* The smallest value drawn: at most FLAME_MAX_FRAMES frames, none under FLAME_MIN_SHARE of the root. */
static uint64_t flame_threshold(const struct flame *fl)
{
	uint64_t min = (uint64_t)((double)fl->nodes[0].value * FLAME_MIN_SHARE);
	if (fl->n <= FLAME_MAX_FRAMES)
		return min ? min : 1;
	uint64_t *v = malloc(fl->n * sizeof *v);
	if (!v)
		return fl->nodes[0].value; /* the root alone */
	for (size_t i = 0; i < fl->n; i++)
		v[i] = fl->nodes[i].value;
	qsort(v, fl->n, sizeof *v, by_value_desc);
	uint64_t t = v[FLAME_MAX_FRAMES - 1];
	free(v);
	return t > min ? t : (min ? min : 1);
}

static int by_child_value(const void *a, const void *b, void *ctx)
{
	const struct fnode *nodes = ctx, *x = &nodes[*(const uint32_t *)a], *y = &nodes[*(const uint32_t *)b];
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->label, y->label);
}

/* Lays the children of every node out left to right, widest first; returns the deepest drawn depth. */
static uint32_t flame_layout(struct flame *fl, uint64_t threshold)
{
	uint32_t *kids = malloc(fl->n * sizeof *kids), deepest = 0;
	if (!kids)
		return 0;
	for (size_t i = 0; i < fl->n; i++) { /* parents come before their children */
		const struct fnode *p = &fl->nodes[i];
		if (p->value < threshold)
			continue;
		if (p->depth > deepest)
			deepest = p->depth;
		size_t k = 0;
		for (uint32_t c = p->first_child; c != UINT32_MAX; c = fl->nodes[c].next_sibling)
			kids[k++] = c;
		qsort_r(kids, k, sizeof *kids, by_child_value, fl->nodes);
		double x = p->x;
		for (size_t j = 0; j < k; j++) {
			fl->nodes[kids[j]].x = x;
			x += (double)fl->nodes[kids[j]].value / (double)fl->nodes[0].value;
		}
	}
	free(kids);
	return deepest;
}

/* One flame graph: what, its unit ("CPU" or "waited"), the hue range of its frames. */
static void write_flame(FILE *f, const struct pw_rank_report *r, const char *id, const char *title, int samples,
			int hue0, const char *empty)
{
	struct flame fl;
	fprintf(f, "<section id=\"%s\"><h2>%s</h2>\n", id, title);
	if (flame_build(&fl, r->stacks, samples) < 0 || !fl.nodes[0].value) {
		fprintf(f, "<p class=\"note\">%s</p></section>\n", fl.oom ? "Out of memory drawing it." : empty);
		flame_free(&fl);
		return;
	}
	uint64_t threshold = flame_threshold(&fl), total = fl.nodes[0].value;
	uint32_t deepest = flame_layout(&fl, threshold);
	unsigned height = (deepest + 1) * FLAME_ROW;
	fprintf(f, "<p class=\"note\">Each frame's width is its share of the %s; callers below, callees above. "
		   "Hover for figures, click to zoom (click the bottom frame to zoom out).</p>\n",
		samples ? "CPU time the samples stand for" : "time threads spent in calls slower than the stack "
							     "threshold (<code>--stack-threshold</code>)");
	fprintf(f, "<svg class=\"flame\" id=\"%s-svg\" data-width=\"%.0f\" width=\"%.0f\" height=\"%u\" "
		   "viewBox=\"0 0 %.0f %u\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		id, FLAME_WIDTH, FLAME_WIDTH, height, FLAME_WIDTH, height);
	size_t hidden = 0;
	char figure[32];
	for (size_t i = 0; i < fl.n; i++) {
		const struct fnode *n = &fl.nodes[i];
		if (n->value < threshold) {
			hidden++;
			continue;
		}
		double w = (double)n->value / (double)total, px = w * FLAME_WIDTH;
		unsigned y = (deepest - n->depth) * FLAME_ROW;
		uint64_t h = pw_hash_bytes(PW_HASH_SEED, n->label, strlen(n->label));
		fprintf(f, "<g class=\"fr\" data-n=\"");
		pw_html_text(f, n->label);
		fprintf(f, "\" data-x=\"%.6f\" data-w=\"%.6f\" data-d=\"%" PRIu32 "\" data-v=\"%" PRIu64 "\" data-c=\"%" PRIu64
			   "\"><title>",
			n->x, w, n->depth, n->value, n->count);
		pw_html_text(f, n->label);
		fprintf(f, ": %" PRIu64 " %s, %s, %.2f %%</title><rect x=\"%.1f\" y=\"%u\" width=\"%.1f\" height=\"%d\" "
			   "fill=\"hsl(%d,%d%%,%d%%)\"/>",
			n->count, samples ? (n->count == 1 ? "sample" : "samples") : (n->count == 1 ? "call" : "calls"),
			dur(figure, n->value), 100.0 * w, n->x * FLAME_WIDTH, y, px > 1.5 ? px - 1 : 0.5, FLAME_ROW - 1,
			hue0 + (int)(h % 50), 55 + (int)(h >> 8) % 25, 55 + (int)(h >> 16) % 15);
		int chars = (int)((px - 6) / 7);
		if (chars >= 3) {
			fprintf(f, "<text x=\"%.1f\" y=\"%u\">", n->x * FLAME_WIDTH + 3, y + FLAME_ROW - 5);
			size_t len = strlen(n->label);
			if ((int)len <= chars) {
				pw_html_text(f, n->label);
			} else {
				char *cut = strndup(n->label, (size_t)chars - 2);
				pw_html_text(f, cut);
				free(cut);
				fputs("..", f);
			}
			fputs("</text>", f);
		}
		fputs("</g>\n", f);
	}
	fputs("</svg>\n", f);
	if (hidden)
		fprintf(f, "<p class=\"note\" data-folded=\"%zu\">%zu frames narrower than %.2f %% are not drawn "
			   "(the folded file, rank&lt;R&gt;.folded, has them all).</p>\n",
			hidden, hidden, 100.0 * (double)threshold / (double)total);
	fputs("</section>\n", f);
	flame_free(&fl);
}

/* ---- the timeline ---- */

enum act_class { ACT_GPU, ACT_IO, ACT_WAIT, ACT_OTHER, ACT_CPU, ACT_CLASSES };
static const char *const act_names[ACT_CLASSES] = {"GPU and communication library calls", "file I/O", "waits",
						   "other calls", "on CPU (samples)"};
static const char *const act_colors[ACT_CLASSES] = {"#8a6cc4", "#4a7fb5", "#a9afb6", "#d98b3a", "#e3b844"};

/* What a call of the main thread was doing, as the summary's figures class it (waits include the GPU's). */
static enum act_class call_class(unsigned type)
{
	const struct pw_event_info *e = &pw_events[type];
	if (e->kind == PW_K_SLEEP || e->kind == PW_K_WAIT || e->kind == PW_K_GPU_SYNC)
		return ACT_WAIT;
	switch (e->domain) {
	case PW_DOM_IO:
	case PW_DOM_STDIO:
	case PW_DOM_META: return ACT_IO;
	case PW_DOM_CUDART:
	case PW_DOM_CUBLAS:
	case PW_DOM_CUBLASLT:
	case PW_DOM_CUDNN:
	case PW_DOM_NCCL:
	case PW_DOM_MPI: return ACT_GPU;
	default: return ACT_OTHER;
	}
}

struct timeline_view {
	uint64_t t0, span, bin_ns;
	double busy[TL_MAX_DEVICES][TL_BINS];
	double act[TL_MAX_PROCS][ACT_CLASSES][TL_BINS];
	int32_t devices[TL_MAX_DEVICES];
	size_t ndevices;
	const struct pw_proc *procs[TL_MAX_PROCS]; /* a row per process: its first image (model.h, pw_process) */
	size_t nprocs, procs_left;
};

/* Adds weight times the part of [a, b) in each bin. */
static void add_interval(const struct timeline_view *v, double *bins, uint64_t a, uint64_t b, double weight)
{
	if (b <= a || b <= v->t0 || a >= v->t0 + v->span)
		return;
	uint64_t lo = a > v->t0 ? a - v->t0 : 0, hi = b - v->t0 < v->span ? b - v->t0 : v->span;
	for (uint64_t k = lo / v->bin_ns; k < TL_BINS && k * v->bin_ns < hi; k++) {
		uint64_t s = k * v->bin_ns > lo ? k * v->bin_ns : lo, e = (k + 1) * v->bin_ns < hi ? (k + 1) * v->bin_ns : hi;
		bins[k] += weight * (double)(e - s);
	}
}

/* Whether the process whose first image is first has an image on the timeline. */
static int on_timeline(const struct pw_rank_report *r, const struct pw_proc *first)
{
	for (const struct pw_proc *q = first; q; q = pw_next_image(r, q))
		if (q->timeline_image != PW_TL_NONE)
			return 1;
	return 0;
}

/* Each timeline image's row, that of its process (the main thread of a pid is the same in every image it
 * exec'd), -1 when not drawn; NULL when out of memory. */
static int *image_rows(const struct pw_rank_report *r, const struct timeline_view *v)
{
	const struct pw_timeline *tl = r->timeline;
	int *row = malloc((tl->nimages ? tl->nimages : 1) * sizeof *row);
	for (size_t i = 0; row && i < tl->nimages; i++)
		row[i] = -1;
	for (size_t p = 0; row && p < v->nprocs; p++)
		for (const struct pw_proc *q = v->procs[p]; q; q = pw_next_image(r, q))
			if (q->timeline_image < tl->nimages)
				row[q->timeline_image] = (int)p;
	return row;
}

/* The bins of the GPUs' busy time and of the main threads' calls. The timeline keeps a sample of a long run's
 * short events: each stream's and thread's kept time is scaled up to what it counted in all. */
static void fill_view(struct timeline_view *v, const struct pw_rank_report *r)
{
	const struct pw_timeline *tl = r->timeline;
	for (size_t i = 0; r->act && i < r->act->ndevices && v->ndevices < TL_MAX_DEVICES; i++)
		v->devices[v->ndevices++] = r->act->devices[i].id;
	for (size_t i = 0; i < r->nprocs; i++) {
		if (r->procs[i].replaced_one)
			continue;
		if (v->nprocs < TL_MAX_PROCS && on_timeline(r, &r->procs[i]))
			v->procs[v->nprocs++] = &r->procs[i];
		else
			v->procs_left++;
	}
	for (size_t i = 0; i < tl->ngpus; i++) {
		const struct pw_tl_gpu *g = &tl->gpus[i];
		const struct pw_tl_stream *s = &tl->streams[g->stream];
		size_t d = 0;
		while (d < v->ndevices && v->devices[d] != g->device)
			d++;
		if (d < v->ndevices && s->kept_ns)
			add_interval(v, v->busy[d], g->t0, g->t1, (double)s->events_ns / (double)s->kept_ns);
	}
	int *row = image_rows(r, v);
	if (!row)
		return;
	for (size_t i = 0; i < tl->ncalls; i++) {
		const struct pw_tl_call *c = &tl->calls[i];
		const struct pw_tl_thread *th = &tl->threads[c->thread];
		int p = th->image < tl->nimages ? row[th->image] : -1;
		if (p >= 0 && th->tid == (uint32_t)v->procs[p]->pid && th->kept_ns)
			add_interval(v, v->act[p][call_class(c->type)], c->t0, c->t1,
				     (double)th->calls_ns / (double)th->kept_ns);
	}
	/* a sample stands for the CPU time since the thread's previous one (the first PW_TL_MAX_SAMPLES drawn) */
	for (size_t i = 0; i < tl->nsamples; i++) {
		const struct pw_tl_sample *x = &tl->samples[i];
		int p = x->image < tl->nimages ? row[x->image] : -1;
		if (p >= 0 && x->tid == (uint32_t)v->procs[p]->pid)
			add_interval(v, v->act[p][ACT_CPU], x->t0 > x->cpu_ns ? x->t0 - x->cpu_ns : 0, x->t0, 1.0);
	}
	free(row);
}

static void row_label(FILE *f, double y, const char *label, const char *sub)
{
	fprintf(f, "<text x=\"0\" y=\"%.0f\">", y + 14);
	pw_html_text(f, label);
	fprintf(f, "</text><text x=\"0\" y=\"%.0f\" fill=\"#6b7581\">", y + 28);
	pw_html_text(f, sub);
	fputs("</text>\n", f);
}

static double x_of(const struct timeline_view *v, uint64_t ns)
{
	double at = ns > v->t0 ? (double)(ns - v->t0) / (double)v->span : 0.0;
	return TL_LABEL + (at > 1 ? 1 : at) * TL_WIDTH;
}

static void write_gpu_rows(FILE *f, const struct pw_rank_report *r, const struct timeline_view *v, double *y)
{
	double bin_px = TL_WIDTH / TL_BINS;
	char a[32], b[32], sub[64];
	for (size_t d = 0; d < v->ndevices; d++) {
		snprintf(sub, sizeof sub, "busy share, idle gaps");
		char label[32];
		snprintf(label, sizeof label, "GPU %d", v->devices[d]);
		row_label(f, *y, label, sub);
		fprintf(f, "<g class=\"gpu\" data-device=\"%d\"><rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%d\" "
			   "fill=\"#eef1f4\"/>",
			v->devices[d], TL_LABEL, *y, TL_WIDTH, TL_ROW);
		for (int k = 0; k < TL_BINS; k++) {
			double s = v->busy[d][k] / (double)v->bin_ns;
			if (s > 1)
				s = 1;
			if (s >= 0.005)
				fprintf(f, "<rect class=\"busy\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#5a9e4b\"/>",
					TL_LABEL + k * bin_px, *y + TL_ROW * (1 - s), bin_px, TL_ROW * s);
		}
		for (size_t i = 0; r->act && i < r->act->ngaps; i++) {
			const struct pw_act_gap *g = &r->act->gaps[i];
			if (g->device != v->devices[d])
				continue;
			double x0 = x_of(v, g->start_ns), x1 = x_of(v, g->start_ns + g->duration_ns);
			fprintf(f, "<rect class=\"gap\" data-ns=\"%" PRIu64 "\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" "
				   "fill=\"#d9534f\" fill-opacity=\"0.45\"><title>idle %s at %s: %s",
				g->duration_ns, x0, *y, x1 - x0 > 1.5 ? x1 - x0 : 1.5, TL_ROW, dur(a, g->duration_ns),
				dur(b, g->start_ns > r->start_ns ? g->start_ns - r->start_ns : 0), pw_gap_class_name(g->cls));
			if (g->sync_ev && g->sync_ev < PW_EV_COUNT)
				fprintf(f, " (in %s)", pw_events[g->sync_ev].name);
			if (g->next) {
				fputs(", ended by ", f);
				pw_html_text(f, g->next);
			}
			fputs("</title></rect>", f);
		}
		fputs("</g>\n", f);
		*y += TL_ROW + 10;
	}
}

static void write_proc_rows(FILE *f, const struct pw_rank_report *r, const struct timeline_view *v, double *y)
{
	double bin_px = TL_WIDTH / TL_BINS;
	char label[64], sub[64];
	for (size_t p = 0; p < v->nprocs; p++) {
		const struct pw_proc *pr = v->procs[p];
		while (pw_next_image(r, pr)) /* named by the program its wrappers exec'd */
			pr = pw_next_image(r, pr);
		const char *exe = pr->exe && *pr->exe ? pr->exe : pw_report_str(pr->argv);
		const char *base = strrchr(exe, '/');
		snprintf(label, sizeof label, "%s %d", base ? base + 1 : exe, pr->pid);
		snprintf(sub, sizeof sub, "main thread");
		row_label(f, *y, label, sub);
		fprintf(f, "<g class=\"proc\" data-pid=\"%d\"><rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%d\" "
			   "fill=\"#eef1f4\"/>",
			pr->pid, TL_LABEL, *y, TL_WIDTH, TL_ROW);
		for (int k = 0; k < TL_BINS; k++) {
			double below = 0;
			for (int c = 0; c < ACT_CLASSES; c++) {
				double s = v->act[p][c][k] / (double)v->bin_ns;
				if (below + s > 1)
					s = 1 - below;
				if (s >= 0.005)
					fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>",
						TL_LABEL + k * bin_px, *y + TL_ROW * (1 - below - s), bin_px, TL_ROW * s,
						act_colors[c]);
				below += s > 0 ? s : 0;
			}
		}
		fputs("</g>\n", f);
		*y += TL_ROW + 10;
	}
}

struct phase {
	uint64_t t0, t1;
	uint32_t name;
};

static int by_phase_start(const void *a, const void *b)
{
	const struct phase *x = a, *y = b;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return (x->t1 < y->t1) - (x->t1 > y->t1); /* the outer of two that start together first */
}

/* Whether timeline image im is one of the images of the process whose first image is first. */
static int image_of(const struct pw_rank_report *r, const struct pw_proc *first, uint32_t im)
{
	for (const struct pw_proc *q = first; q; q = pw_next_image(r, q))
		if (q->timeline_image == im && im != PW_TL_NONE)
			return 1;
	return 0;
}

/* The top-level ranges of the main process's main thread, in every image of its pid, as a band. */
static void write_phase_band(FILE *f, const struct pw_rank_report *r, const struct timeline_view *v, double *y)
{
	const struct pw_timeline *tl = r->timeline;
	struct pw_process m;
	if (!v->nprocs || pw_rank_main_process(r, &m))
		return;
	struct phase *ph = malloc((tl->nranges ? tl->nranges : 1) * sizeof *ph);
	size_t n = 0;
	for (size_t i = 0; ph && i < tl->nranges; i++) {
		const struct pw_tl_range *x = &tl->ranges[i];
		if (x->ph == 'X' && x->tid == (uint32_t)m.pid && image_of(r, m.first, x->image))
			ph[n++] = (struct phase){x->t0, x->t1, x->name};
	}
	if (!n) {
		free(ph);
		return;
	}
	qsort(ph, n, sizeof *ph, by_phase_start);
	row_label(f, *y - 8, "phases", "top-level ranges");
	fputs("<g class=\"phases\">", f);
	uint64_t end = 0;
	size_t drawn = 0, left = 0;
	char d[32];
	for (size_t i = 0; i < n; i++) {
		if (ph[i].t0 < end) /* nested in the one drawn */
			continue;
		end = ph[i].t1;
		if (drawn == TL_MAX_PHASES) {
			left++;
			continue;
		}
		drawn++;
		const char *name = pw_tl_string(tl, ph[i].name);
		uint64_t h = name ? pw_hash_bytes(PW_HASH_SEED, name, strlen(name)) : 0;
		double x0 = x_of(v, ph[i].t0), x1 = x_of(v, ph[i].t1);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"18\" fill=\"hsl(%d,45%%,62%%)\"><title>",
			x0, *y, x1 - x0 > 1 ? x1 - x0 : 1, 200 + (int)(h % 140));
		pw_html_text(f, name ? name : "(unnamed)");
		fprintf(f, ": %s</title></rect>", dur(d, ph[i].t1 - ph[i].t0));
	}
	fputs("</g>\n", f);
	*y += 28;
	if (left)
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" fill=\"#6b7581\">%zu more phases not drawn</text>\n", TL_LABEL, *y, left);
	free(ph);
}

static void write_timeline(FILE *f, const struct pw_rank_report *r)
{
	fputs("<section id=\"timeline\"><h2>Timeline</h2>\n", f);
	struct timeline_view *v = calloc(1, sizeof *v);
	if (!r->timeline || !v || r->end_ns <= r->start_ns) {
		fputs("<p class=\"note\">Nothing to draw.</p></section>\n", f);
		free(v);
		return;
	}
	v->t0 = r->start_ns;
	v->span = r->end_ns - r->start_ns;
	v->bin_ns = (v->span + TL_BINS - 1) / TL_BINS;
	fill_view(v, r);
	size_t rows = v->ndevices + v->nprocs;
	double height = (double)rows * (TL_ROW + 10) + 70;
	fprintf(f, "<p class=\"note\">The run from start to end, in %d steps of %s; bars are the share of each step "
		   "busy. Hover over a red mark for a GPU idle gap's cause.</p>\n<p class=\"legend\">",
		TL_BINS, dur((char[32]){0}, v->bin_ns));
	fputs("<span style=\"background:#5a9e4b\"></span>GPU busy", f);
	for (int c = 0; c < ACT_CLASSES; c++)
		fprintf(f, "<span style=\"background:%s\"></span>%s", act_colors[c], act_names[c]);
	fputs("<span style=\"background:#d9534f\"></span>GPU idle gap</p>\n", f);
	fprintf(f, "<svg class=\"timeline\" width=\"%.0f\" height=\"%.0f\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		TL_LABEL + TL_WIDTH, height);
	double y = 4;
	write_gpu_rows(f, r, v, &y);
	write_proc_rows(f, r, v, &y);
	y += 8;
	write_phase_band(f, r, v, &y);
	char t[32];
	for (int i = 0; i <= 10; i++) {
		double x = TL_LABEL + TL_WIDTH * i / 10.0;
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#8a939c\"/>"
			   "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"%s\">%s</text>\n",
			x, x, y, y + 5, x, y + 18, i == 0 ? "start" : i == 10 ? "end" : "middle", dur(t, v->span * (uint64_t)i / 10));
	}
	fputs("</svg>", f);
	if (v->procs_left)
		fprintf(f, "<p class=\"note\">%zu more processes not drawn.</p>", v->procs_left);
	fputs("</section>\n", f);
	free(v);
}

int pw_write_rank_html(const struct pw_analysis *a, const struct pw_rank_report *r, const char *path, char *err,
		       size_t errlen)
{
	(void)a;
	FILE *f = pw_report_open(path, err, errlen);
	if (!f)
		return -1;
	write_header(f, r);
	write_findings(f, r);
	write_timeline(f, r);
	write_flame(f, r, "cpu", "Where the CPU went (CPU samples)", 1, 0,
		    "No CPU samples: run with <code>--sample=HZ</code> (e.g. 997) to see where the CPU went.");
	write_flame(f, r, "waits", "Where threads waited (calls with their stacks)", 0, 190,
		    "No call stacks: profwrap records them for calls slower than <code>--stack-threshold</code>.");
	write_calls(f, r);
	write_kernels(f, r);
	write_files(f, r);
	write_phases(f, r);
	fprintf(f, "<footer class=\"note\">profwrap; the figures are those of the text and JSON reports (rank&lt;R&gt;.txt, .json).</footer>\n"
		   "<script>%s</script></body></html>\n",
		zoom_script);
	return pw_report_close(f, path, err, errlen);
}
