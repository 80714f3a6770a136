/* The GPU sections of rank<R>.txt and the GPU keys of rank<R>.json (report_gpu.c). */
#ifndef PW_REPORT_GPU_H
#define PW_REPORT_GPU_H

#include <stdio.h>

#include "../model/analysis.h"

struct pw_json;

/* The GPU sections (report_gpu.c), written only when r->gpu is set. Text: returns 0, or -1 when out of
 * memory. JSON: the GPU keys of rank<R>.json, written whether or not there is GPU data (empty then). */
int pw_gpu_write_text(FILE *f, const struct pw_rank_report *r);
void pw_gpu_write_json(struct pw_json *j, const struct pw_rank_report *r);

/* The GPU activity sections (report_gpu.c, from gpu_activity.h): GPU utilisation, the largest idle gaps,
 * GPU kernels, GPU copies, GPU time by call, activity recording. Text: written only when the rank has
 * activity records or made GPU calls; returns 0, or -1 when out of memory. JSON: the keys kernels, gpus,
 * gpu_activity, gpu_memcpy, gpu_memset, gpu_gaps, gpu_idle_causes, gpu_time_by_call, written always (empty
 * when there is nothing). */
int pw_act_write_text(FILE *f, const struct pw_rank_report *r);
void pw_act_write_json(struct pw_json *j, const struct pw_rank_report *r);

#endif
