/* The render step (render.h): the model, then every writer, then the merge. */
#define _GNU_SOURCE
#include "render.h"

#include <stdio.h>

#include "merge/merge.h"
#include "model/call_stacks.h"
#include "report/report_call_stacks.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "report/report_trace.h"

int pw_write_reports(const struct pw_analysis *a, char *err, size_t errlen)
{
	char path[4352], base[128];
	for (size_t i = 0; i < a->nranks; i++) {
		const struct pw_rank_report *r = &a->ranks[i];
		pw_rank_file_base(r, base, sizeof base);
		snprintf(path, sizeof path, "%s/%s.txt", a->out_dir, base);
		if (pw_write_rank_text(a, r, path, err, errlen) < 0)
			return -1;
		snprintf(path, sizeof path, "%s/%s.json", a->out_dir, base);
		if (pw_write_rank_json(a, r, path, err, errlen) < 0)
			return -1;
		snprintf(path, sizeof path, "%s/%s.trace.json", a->out_dir, base);
		if (pw_write_rank_trace(a, r, path, err, errlen) < 0)
			return -1;
		snprintf(path, sizeof path, "%s/%s.folded", a->out_dir, base);
		if (pw_stacks_write_folded(r, path, err, errlen) < 0)
			return -1;
	}
	/* the last collector of a job to finish (several may share OUT) finds every rank there; a node's
	 * collector that saw only launchers has no rank to add, nor one whose ranks the merge does not believe */
	for (size_t i = 0; i < a->nranks; i++)
		if (a->ranks[i].rank != PW_RANK_LAUNCHER && a->ranks[i].rank < PW_MERGE_MAX_WORLD)
			return pw_merge(a->out_dir, 1, err, errlen);
	return 0;
}

int pw_render(const char *out_dir, char *const *raw_names, size_t nraw, int summarise_present,
	      struct pw_render_counts *counts, char *err, size_t errlen)
{
	struct pw_analysis a;
	int rc = raw_names ? pw_analyze_files(out_dir, raw_names, nraw, &a, err, errlen)
			   : pw_analyze(out_dir, &a, err, errlen);
	if (rc < 0)
		return -1;
	if (counts) {
		counts->reports = a.nranks;
		counts->ranks = 0;
		for (size_t i = 0; i < a.nranks; i++)
			counts->ranks += a.ranks[i].rank != PW_RANK_LAUNCHER;
	}
	rc = pw_write_reports(&a, err, errlen);
	if (rc > 0 && summarise_present)
		rc = pw_merge(out_dir, 0, err, errlen) < 0 ? -1 : 0;
	pw_analysis_free(&a);
	return rc;
}
