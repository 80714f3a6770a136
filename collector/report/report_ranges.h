/* The NVTX phases and capture windows in rank<R>.txt and rank<R>.json (report_ranges.c). */
#ifndef PW_REPORT_RANGES_H
#define PW_REPORT_RANGES_H

#include <stdio.h>

#include "../model/analysis.h"

struct pw_json;
/* NVTX phases and capture windows (report_ranges.c): the "Captured:" header line through field(), the
 * text sections, the JSON keys ranges, marks, nvtx and capture. */
void pw_capture_header(FILE *f, const struct pw_rank_report *r, void (*field)(FILE *, const char *, const char *));
int pw_ranges_write_text(FILE *f, const struct pw_rank_report *r);
void pw_ranges_write_json(struct pw_json *j, const struct pw_rank_report *r);

#endif
