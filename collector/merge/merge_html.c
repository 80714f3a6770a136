/* summary.html: the cross-rank summary as a self-contained page, from the merge's state (merge_state.h): per
 * rank its figures as bars (wall, GPU busy, compute kernels, collectives, file I/O, waits, main thread busy),
 * each column scaled to its largest rank so that the odd rank stands out, the straggler's row marked and its
 * sentence (and phase) on top; per collective domain the skew (latest minus earliest entry across ranks) of
 * each collective, in order, so that when ranks drifted apart shows. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/units.h"
#include "../report/report_format.h"
#include "merge_state.h"

#define SKEW_WIDTH 1100.0 /* px */
#define SKEW_HEIGHT 120.0
#define SKEW_COLUMNS 550 /* the collectives of a domain, binned to at most this many columns (the largest shown) */

/* The straggler's sentence: its durations' spaces (NBSP_MARK) do not break. */
static void esc_nbsp(FILE *f, char *text)
{
	for (char *part = text, *mark; part; part = mark ? mark + 1 : NULL) {
		if ((mark = strchr(part, NBSP_MARK)))
			*mark = '\0';
		pw_html_text(f, part);
		if (mark)
			fputs("&nbsp;", f);
	}
}

static const char style[] =
	"body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232a;max-width:1260px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d5dae0}"
	".meta{color:#505a66;margin:2px 0}.note{color:#6b7581;font-size:12px}.straggler-text{background:#fff4e0;"
	"padding:8px 12px;border-left:4px solid #e08a00}table{border-collapse:collapse;font-size:12px}"
	"td,th{padding:2px 6px;text-align:left;white-space:nowrap}th{font-weight:600;color:#404a55}"
	"tr.straggler{background:#fff0d6}tr.straggler td:first-child{font-weight:700;color:#b36200}"
	".cell{display:grid;grid-template-columns:64px 58px;align-items:center;gap:4px}"
	".track{background:#eef1f4;height:10px}.bar{display:block;height:10px}";

static const char head_script[] =
	"window.addEventListener('error',function(e){var d=document.documentElement;"
	"d.setAttribute('data-errors',(d.getAttribute('data-errors')||'')+String(e.message)+'\\n');});";

/* The columns of the ranks' table: the figures summary.txt compares, with a colour each. */
static const struct {
	int member;
	const char *label, *color;
} columns[] = {
	{PW_SUM_WALL, "wall", "#6b7581"},          {PW_SUM_GPU_BUSY, "GPU busy", "#5a9e4b"},
	{PW_SUM_KERNEL, "compute kernels", "#3f8f6b"}, {PW_SUM_COLLECTIVE, "collectives", "#8a6cc4"},
	{PW_SUM_IO, "file I/O", "#4a7fb5"},        {PW_SUM_WAIT, "waits", "#a9afb6"},
	{PW_SUM_BUSY, "main thread busy", "#d98b3a"},
};

static void write_ranks(FILE *f, const struct merge *m)
{
	size_t ncol = sizeof columns / sizeof columns[0];
	uint64_t max[sizeof columns / sizeof columns[0]] = {0};
	for (size_t i = 0; i < m->nrows; i++)
		for (size_t c = 0; c < ncol; c++)
			if (m->rows[i].v[columns[c].member] > max[c])
				max[c] = m->rows[i].v[columns[c].member];
	fputs("<section id=\"ranks\"><h2>Where each rank's time went</h2><p class=\"note\">Each column is scaled to "
	      "its largest rank. GPU time (kernels, collectives) and the main thread's time overlap: the columns are "
	      "not parts of the wall time.</p>\n<table><tr><th>rank</th><th>host</th>",
	      f);
	for (size_t c = 0; c < ncol; c++)
		fprintf(f, "<th>%s</th>", columns[c].label);
	fputs("</tr>\n", f);
	char d[32];
	for (size_t i = 0; i < m->nrows; i++) {
		const struct row *r = &m->rows[i];
		int straggler = r->rank == m->straggler;
		fprintf(f, "<tr class=\"rank%s\" data-rank=\"%d\" id=\"rank-%d\"><td>%d%s</td><td>",
			straggler ? " straggler" : "", r->rank, r->rank, r->rank, straggler ? " (straggler)" : "");
		pw_html_text(f, r->host);
		fputs("</td>", f);
		for (size_t c = 0; c < ncol; c++) {
			uint64_t v = r->v[columns[c].member];
			pw_format_duration(d, sizeof d, v);
			fprintf(f, "<td><span class=\"cell\" data-figure=\"%s\" data-value=\"%" PRIu64 "\"><span class=\"track\">"
				   "<span class=\"bar\" style=\"width:%.1f%%;background:%s\"></span></span>%s</span></td>",
				columns[c].label, v, max[c] ? 100.0 * (double)v / (double)max[c] : 0.0, columns[c].color, d);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table></section>\n", f);
}

static void write_skew(FILE *f, const struct merge *m)
{
	fputs("<section id=\"skew\"><h2>Collective skew over the run</h2>\n", f);
	if (!m->ndomains)
		fputs("<p class=\"note\">No collective entry times in the reports.</p>\n", f);
	char a[32], b[32];
	for (size_t i = 0; i < m->ndomains; i++) {
		const struct domain *dm = &m->domains[i];
		fputs("<h3>", f);
		pw_html_text(f, dm->name);
		fputs("</h3>\n", f);
		if (!dm->compared) {
			fputs("<p class=\"note\">No collective was entered by every rank.</p>\n", f);
			continue;
		}
		pw_format_duration(a, sizeof a, dm->median_spread);
		pw_format_duration(b, sizeof b, dm->max_spread);
		fprintf(f, "<p class=\"note\">%zu collectives entered by every rank, in order; the height is the spread "
			   "of their entry times (latest minus earliest, on the hosts' clocks): median %s, max %s "
			   "(collective #%zu).</p>\n",
			dm->compared, a, b, dm->max_index);
		size_t per = (dm->n + SKEW_COLUMNS - 1) / SKEW_COLUMNS, ncol = (dm->n + per - 1) / per;
		double w = SKEW_WIDTH / (double)ncol;
		fprintf(f, "<svg class=\"skew\" data-domain=\"");
		pw_html_text(f, dm->name);
		fprintf(f, "\" data-compared=\"%zu\" width=\"%.0f\" height=\"%.0f\" xmlns=\"http://www.w3.org/2000/svg\">"
			   "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#eef1f4\"/>",
			dm->compared, SKEW_WIDTH, SKEW_HEIGHT + 16, SKEW_WIDTH, SKEW_HEIGHT);
		for (size_t col = 0; col < ncol; col++) {
			uint64_t top = 0;
			size_t first = col * per, at = first, seen = 0;
			for (size_t k = first; k < first + per && k < dm->n; k++)
				if (dm->seen[k] == m->nrows) {
					seen++;
					if (dm->max[k] - dm->min[k] >= top) {
						top = dm->max[k] - dm->min[k];
						at = k;
					}
				}
			if (!seen)
				continue;
			double h = dm->max_spread ? SKEW_HEIGHT * (double)top / (double)dm->max_spread : 0;
			pw_format_duration(a, sizeof a, top);
			fprintf(f, "<rect class=\"spread\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#8a6cc4\">"
				   "<title>collective #%zu: spread %s, entered last by rank %d</title></rect>",
				(double)col * w, SKEW_HEIGHT - h, w > 1.5 ? w - 0.5 : w, h > 0.5 ? h : 0.5, at, a, dm->last[at]);
		}
		fprintf(f, "<text x=\"0\" y=\"%.0f\" font-size=\"11\">#0</text><text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" "
			   "text-anchor=\"end\">#%zu</text></svg>\n",
			SKEW_HEIGHT + 13, SKEW_WIDTH, SKEW_HEIGHT + 13, dm->n ? dm->n - 1 : 0);
	}
	fputs("</section>\n", f);
}

int pw_merge_write_html(FILE *f, const struct merge *m)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>profwrap summary</title>"
		   "<style>%s</style><script>%s</script></head><body>\n",
		style, head_script);
	fprintf(f, "<header><h1>profwrap summary: %zu rank%s of world size %" PRIu64 "</h1><p class=\"meta\">Command: "
		   "<code>",
		m->nrows, m->nrows == 1 ? "" : "s", m->world);
	pw_html_text(f, m->command ? m->command : "?");
	fputs("</code></p>", f);
	if (m->nmissing)
		fprintf(f, "<p class=\"meta\">%zu rank%s of the world %s no report.</p>", m->nmissing,
			m->nmissing == 1 ? "" : "s", m->nmissing == 1 ? "has" : "have");
	char *text = malloc(2048);
	if (!text)
		return -1;
	text[0] = '\0';
	fprintf(f, "<p class=\"straggler-text\" id=\"straggler\" data-straggler=\"%d\">", m->straggler);
	pw_merge_straggler_text(m, text, 2048);
	esc_nbsp(f, text);
	if (m->straggler >= 0)
		fprintf(f, " <a href=\"#rank-%d\">Its row.</a>", m->straggler);
	fputs("</p></header>\n", f);
	free(text);
	write_ranks(f, m);
	write_skew(f, m);
	fputs("<footer class=\"note\">profwrap; the figures are those of summary.txt and summary.json, from each "
	      "rank's rank&lt;R&gt;.json (see rank&lt;R&gt;.html for a rank's own page).</footer></body></html>\n",
	      f);
	return 0;
}
