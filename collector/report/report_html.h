/* rank<R>.html: the rank's report as a page to look at, from the model alone, self-contained (no network, no
 * external script or font) so that it opens offline in any browser:
 * - "What to fix first" at the top, each finding linking to its evidence below;
 * - a timeline of the run: per GPU its busy share over time with the largest idle gaps and their causes marked,
 *   per process its main thread's activity (GPU library calls, file I/O, waits, other calls), and the phases
 *   (top-level NVTX or Python ranges of the main thread) as a band;
 * - flame graphs (SVG) of the CPU samples and of the stacks of waits, with each frame's name, figure and share
 *   on hover and click-to-zoom;
 * - bar charts of the top calls, kernels, files (by time) and phases, with the figures of rank<R>.txt.
 * What does not fit the page's budget (frames too narrow to see, rows past the charts') is folded and the page
 * says so. docs/reports.md ("rank<R>.html") describes each part for users. */
#ifndef PW_REPORT_HTML_H
#define PW_REPORT_HTML_H

#include <stddef.h>

#include "../model/model.h"

/* Writes r's page at path. Returns 0, or -1 with "cannot write PATH: reason" in err. */
int pw_write_rank_html(const struct pw_analysis *a, const struct pw_rank_report *r, const char *path, char *err,
		       size_t errlen);

#endif
