/* The render step: every report of an output directory from its raw traces, for serve (the collector at the
 * end of a run), salvage and the CLI (`profwrap report`) alike. It runs the analysis (model/analysis.h) over
 * the raw traces, then the writers (text, JSON, trace, folded stacks) over the model, then the cross-rank
 * merge; the model itself never calls a writer. */
#ifndef PW_RENDER_H
#define PW_RENDER_H

#include <stddef.h>

#include "model/analysis.h"

/* Writes OUT/rank<R>.txt, .json, .trace.json (and .folded when the rank has stacks) for every rank (and
 * launcher-<host>.* for launchers), then the cross-rank summary (merge.h) when every rank of the job has its
 * report in OUT. Returns 0; 1 when the summary waits for other ranks' reports (err says which); -1 with the
 * reason in err. */
int pw_write_reports(const struct pw_analysis *a, char *err, size_t errlen);

/* What a render found: ranks (launchers included) and, of them, ranks of the job. */
struct pw_render_counts {
	size_t reports;
	size_t ranks;
};

/* Renders OUT: the raw traces named (names in OUT/raw; NULL: every one there), their reports, the summary.
 * When ranks of the job have no report yet, the summary waits for them (returns 1, err says which), unless
 * summarise_present, which summarises those there are. Returns 0, 1, or -1 with the reason in err. counts
 * may be NULL. */
int pw_render(const char *out_dir, char *const *raw_names, size_t nraw, int summarise_present,
	      struct pw_render_counts *counts, char *err, size_t errlen);

/* `profwrap export sqlite`: the model of OUT's raw traces with every event kept (pw_analyze_whole), each
 * rank's database (report_sqlite.h) written as DEST/<rank's base name>.sqlite. *nranks: how many were
 * written. Returns 0, or -1 with the reason in err. */
int pw_export_sqlite(const char *out_dir, const char *dest_dir, size_t *nranks, char *err, size_t errlen);

#endif
