/* rank<R>.txt: the text report of one rank, from the model (report_text.c). */
#ifndef PW_REPORT_TEXT_H
#define PW_REPORT_TEXT_H

#include <stddef.h>

#include "../model/analysis.h"

/* Writes rank r's report to path. Returns 0, or -1 with the reason in err. */
int pw_write_rank_text(const struct pw_analysis *a, const struct pw_rank_report *r, const char *path, char *err,
		     size_t errlen);

#endif
