/* Call stacks in the reports (report_call_stacks.c): the text sections, the JSON keys, OUT/rank<R>.folded and the
 * stacks of the trace's events. */
#ifndef PW_REPORT_CALL_STACKS_H
#define PW_REPORT_CALL_STACKS_H

#include <stdio.h>

#include "../model/analysis.h"
#include "../model/call_stacks.h"

struct pw_json;
/* A frame as `function (file:line)` (the file's basename; the function demangled, and shortened to width
 * characters unless width is 0), `function` without a file, `module+0xOFFSET` (the module's basename) when the
 * function is unknown; ';' and control characters replaced so that it fits a folded line. Returns buf. */
const char *pw_stack_frame_text(char *buf, size_t len, const struct pw_stack_frame *fr, size_t width);

/* The text sections "Top call sites" and "CPU samples". Returns 0, or -1 when out of memory. */
int pw_stacks_write_text(FILE *f, const struct pw_rank_report *r);
/* The warnings about stacks dropped and samples skipped, when non-zero. */
void pw_stacks_write_warnings(FILE *f, const struct pw_rank_report *r);
/* The JSON keys callsites, samples and stacks (written always, empty when there is nothing). */
void pw_stacks_write_json(struct pw_json *j, const struct pw_rank_report *r);
/* OUT/rank<R>.folded at path, when the rank has any stack (else nothing is written). Returns 0, or -1 with the
 * reason in err. */
int pw_stacks_write_folded(const struct pw_rank_report *r, const char *path, char *err, size_t errlen);
/* "stack":[...] (frames innermost first, as in the folded file) for the merged stack id. */
void pw_stacks_write_trace_stack(struct pw_json *j, const struct pw_stack_report *r, uint32_t id);

#endif
