/* OUT/summary.txt and OUT/summary.json: one row per rank, to spot the rank that differs (slower, dropping,
 * doing other I/O). Written for a single rank too, so tools can always read the same file. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "gpu_analysis.h"
#include "json.h"
#include "report_format.h"

#define TOP_CALLS 3

/* The session's command, else (LD_PRELOAD set by hand) the first rank's. */
static const char *job_command(const struct pw_analysis *a)
{
	return a->command ? a->command : a->nranks ? a->ranks[0].command : NULL;
}

/* "io.read 1.20 s, io.write 300 ms, wait.poll 12.0 ms" */
static void format_top_calls(char *buf, size_t len, const struct pw_rank_report *r)
{
	int ids[PW_EV_COUNT];
	size_t n = pw_sorted_calls(r, ids), used = 0;
	snprintf(buf, len, "-");
	for (size_t i = 0; i < n && i < TOP_CALLS && used < len; i++) {
		char dur[32];
		pw_format_duration(dur, sizeof dur, r->calls[ids[i]].total_ns);
		int w = snprintf(buf + used, len - used, "%s%s.%s %s", i ? ", " : "",
				 pw_domain_names[pw_events[ids[i]].domain], pw_events[ids[i]].name, dur);
		if (w > 0)
			used += (size_t)w;
	}
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorts v (n > 0) and returns its median, the mean of the middle two for even n. */
static uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, compare_u64);
	if (n % 2)
		return v[n / 2];
	uint64_t a = v[n / 2 - 1], b = v[n / 2];
	return a / 2 + b / 2 + (a % 2 + b % 2) / 2; /* without overflow */
}

/* Prints "label  min X, median Y, max Z" for the field of every rank that get() reads, as durations or
 * plain counts. Returns 0, or -1 when out of memory. */
static int print_spread(FILE *f, const struct pw_analysis *a, const char *label,
			uint64_t (*get)(const struct pw_rank_report *), int as_duration)
{
	uint64_t *v = malloc(a->nranks * sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < a->nranks; i++)
		v[i] = get(&a->ranks[i]);
	uint64_t mid = median(v, a->nranks);
	uint64_t figures[3] = {v[0], mid, v[a->nranks - 1]};
	char text[3][32];
	for (int i = 0; i < 3; i++) {
		if (as_duration)
			pw_format_duration(text[i], sizeof text[i], figures[i]);
		else
			snprintf(text[i], sizeof text[i], "%" PRIu64, figures[i]);
	}
	fprintf(f, "%-9s min %s, median %s, max %s\n", label, text[0], text[1], text[2]);
	free(v);
	return 0;
}

static uint64_t rank_wall(const struct pw_rank_report *r)
{
	return r->wall_ns;
}

static uint64_t rank_events(const struct pw_rank_report *r)
{
	return r->events;
}

static uint64_t rank_dropped(const struct pw_rank_report *r)
{
	return r->dropped;
}

static int any_gpu(const struct pw_analysis *a)
{
	for (size_t i = 0; i < a->nranks; i++)
		if (a->ranks[i].gpu)
			return 1;
	return 0;
}

/* The GPU columns: time blocked on the GPU (synchronising calls) with its share of the wall time, and the
 * FLOPs of the rank's GEMMs. */
static void set_gpu_cells(struct pw_table *t, const struct pw_rank_report *r)
{
	char sync[64], flops[32];
	const struct pw_gpu_report *g = r->gpu;
	if (!g) {
		pw_table_set(t, 7, "-");
		pw_table_set(t, 8, "-");
		return;
	}
	pw_format_duration(sync, sizeof sync, g->sync_ns);
	if (r->wall_ns)
		snprintf(sync + strlen(sync), sizeof sync - strlen(sync), " (%.1f %%)",
			 (double)g->sync_ns * 100.0 / (double)r->wall_ns);
	pw_format_flops(flops, sizeof flops, g->gemm_flops);
	pw_table_set(t, 7, "%s", sync);
	pw_table_set(t, 8, "%s", flops);
}

/* Returns 0, or -1 when out of memory. */
static int print_summary(FILE *f, const struct pw_analysis *a)
{
	static const char *const headers[] = {"Rank",    "Host",    "Wall",     "Processes", "Events",
					      "Dropped", "Coverage", "Top calls"};
	static const char *const gpu_headers[] = {"Rank",    "Host",     "Wall",     "Processes", "Events",
						  "Dropped", "Coverage", "GPU sync", "GEMM",      "Top calls"};
	int gpu = any_gpu(a);
	struct pw_table t = {.ncols = 8, .headers = headers, .align = "rlrrrrrl"};
	if (gpu)
		t = (struct pw_table){.ncols = 10, .headers = gpu_headers, .align = "rlrrrrrrrl"};
	char command[4096];
	snprintf(command, sizeof command, "%s", pw_report_str(job_command(a)));
	pw_make_printable(command);
	fprintf(f, "profwrap summary: %zu rank%s\n", a->nranks, a->nranks == 1 ? "" : "s");
	fprintf(f, "Command: %s\n\n", command);
	for (size_t i = 0; i < a->nranks; i++) {
		const struct pw_rank_report *r = &a->ranks[i];
		char wall[32], top[PW_CELL_MAX];
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		pw_format_duration(wall, sizeof wall, r->wall_ns);
		format_top_calls(top, sizeof top, r);
		pw_table_set(&t, 0, "%d", r->rank);
		pw_table_set(&t, 1, "%s", pw_report_str(r->host));
		pw_table_set(&t, 2, "%s", wall);
		pw_table_set(&t, 3, "%zu", r->nprocs);
		pw_table_set(&t, 4, "%" PRIu64, r->events);
		pw_table_set(&t, 5, "%" PRIu64, r->dropped);
		if (r->kernel_bytes)
			pw_table_set(&t, 6, "%.1f %%", r->coverage * 100.0);
		else
			pw_table_set(&t, 6, "-");
		if (gpu)
			set_gpu_cells(&t, r);
		pw_table_set(&t, gpu ? 9 : 7, "%s", top);
	}
	pw_table_print(f, &t);
	pw_table_free(&t);
	if (!a->nranks)
		return 0;
	fputc('\n', f);
	if (print_spread(f, a, "wall:", rank_wall, 1) || print_spread(f, a, "events:", rank_events, 0) ||
	    print_spread(f, a, "dropped:", rank_dropped, 0))
		return -1;
	return 0;
}

static void write_summary_json(FILE *f, const struct pw_analysis *a)
{
	struct pw_json j;
	pw_json_init(&j, f, 2);
	pw_json_begin_object(&j);
	pw_json_kv_string(&j, "format", "profwrap-summary");
	pw_json_kv_int(&j, "version", 1);
	pw_json_kv_string(&j, "command", job_command(a));
	pw_json_key(&j, "ranks");
	pw_json_begin_array(&j);
	for (size_t i = 0; i < a->nranks; i++) {
		const struct pw_rank_report *r = &a->ranks[i];
		int ids[PW_EV_COUNT];
		size_t n = pw_sorted_calls(r, ids);
		pw_json_begin_object(&j);
		pw_json_kv_int(&j, "rank", r->rank);
		pw_json_kv_string(&j, "host", r->host);
		pw_json_kv_uint(&j, "wall_ns", r->wall_ns);
		pw_json_kv_uint(&j, "processes", r->nprocs);
		pw_json_kv_uint(&j, "events", r->events);
		pw_json_kv_uint(&j, "dropped_events", r->dropped);
		pw_json_kv_double(&j, "coverage", r->coverage, 4);
		/* GPU: CPU time in synchronising calls, and the FLOPs of the GEMMs (0 without GPU calls) */
		pw_json_kv_uint(&j, "gpu_sync_ns", r->gpu ? r->gpu->sync_ns : 0);
		pw_json_kv_uint(&j, "gpu_sync_count", r->gpu ? r->gpu->sync_count : 0);
		pw_json_kv_uint(&j, "gemm_flops", r->gpu ? r->gpu->gemm_flops : 0);
		pw_json_key(&j, "top");
		pw_json_begin_array(&j);
		for (size_t c = 0; c < n && c < TOP_CALLS; c++) {
			pw_json_begin_object(&j);
			pw_json_kv_string(&j, "domain", pw_domain_names[pw_events[ids[c]].domain]);
			pw_json_kv_string(&j, "name", pw_events[ids[c]].name);
			pw_json_kv_uint(&j, "total_ns", r->calls[ids[c]].total_ns);
			pw_json_kv_uint(&j, "count", r->calls[ids[c]].count);
			pw_json_end_object(&j);
		}
		pw_json_end_array(&j);
		pw_json_end_object(&j);
	}
	pw_json_end_array(&j);
	pw_json_end_object(&j);
	fputc('\n', f);
}

int pw_write_summary(const struct pw_analysis *a, const char *txt_path, const char *json_path, char *err,
		     size_t errlen)
{
	FILE *f = pw_report_open(txt_path, err, errlen);
	if (!f)
		return -1;
	if (print_summary(f, a)) {
		return pw_report_abandon(f, txt_path, "out of memory", err, errlen);
	}
	if (pw_report_close(f, txt_path, err, errlen))
		return -1;
	f = pw_report_open(json_path, err, errlen);
	if (!f)
		return -1;
	write_summary_json(f, a);
	return pw_report_close(f, json_path, err, errlen);
}
