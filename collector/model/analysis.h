/* Analysis: turns the raw traces of an output directory into one model per rank (model.h), in one pass over
 * each raw trace. */
#ifndef PW_ANALYSIS_H
#define PW_ANALYSIS_H

#include <stddef.h>

#include "model.h"

/* Reads the named files of OUT/raw (names without a directory), as pw_analyze does: a collector analyses
 * only the raw traces it wrote, since other collectors (other nodes, other ranks) may share OUT. */
int pw_analyze_files(const char *out_dir, char *const *names, size_t n, struct pw_analysis *a, char *err,
		     size_t errlen);

/* The base name of a rank's report files: "rank<R>", or "launcher-<host>" for PW_RANK_LAUNCHER. */
void pw_rank_file_base(const struct pw_rank_report *r, char *buf, size_t size);

/* Reads every .pwt file in OUT/raw. Returns 0, or -1 with a one-line reason in err (no raw directory, no raw file,
 * a file that cannot be read at all). Damaged files are read as far as they are whole. */
int pw_analyze(const char *out_dir, struct pw_analysis *a, char *err, size_t errlen);
/* As pw_analyze, with every event of each rank in its timeline and its strings whole (timeline.h:
 * pw_tl_whole_limits), for an export; the memory it takes grows with the events. */
int pw_analyze_whole(const char *out_dir, struct pw_analysis *a, char *err, size_t errlen);
void pw_analysis_free(struct pw_analysis *a);

#endif
