/* CUPTI activity records -> struct pw_rec_gpu (common/pw_record.h).
 *
 * Kept apart from cupti.c so that unit tests can feed it hand-made records of the real structs. Only the
 * leading fields that every record version of CUDA 12 and 13 has at the same offset are read (asserted in
 * cupti_records.c), so one build reads what either libcupti.so.12 or libcupti.so.13 writes. */
#ifndef PW_CUPTI_RECORDS_H
#define PW_CUPTI_RECORDS_H

#include <stdint.h>

#include <cupti_activity.h>

#include "../common/pw_record.h"

/* The kind of profwrap's external correlation ids. Other clients push their own (PyTorch's Kineto: CUSTOM0 and
 * CUSTOM1) on the same thread; records of other kinds are not profwrap's and are not kept, so a kernel is never
 * tied to a stranger's id that happens to equal one of ours. */
#define PW_CUPTI_EXT_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

/* Interns a string CUPTI owns (a kernel or device name) and returns its reference, 0 when it could not. */
typedef pw_strref (*pw_cupti_intern_fn)(const char *s, void *ctx);

/* Fills *out from rec. Times get ns_offset added (0 when CUPTI took our clock); a record without times (an
 * incomplete one flushed by force) gets t0 = t1 = 0. Returns 1 when *out was filled, 0 for kinds not kept
 * (and for external correlations of a kind other than PW_CUPTI_EXT_KIND).
 * h.tid is left 0 (the writer sets it). */
int pw_cupti_convert(const CUpti_Activity *rec, struct pw_rec_gpu *out, int64_t ns_offset,
		     pw_cupti_intern_fn intern, void *ctx);

#endif
