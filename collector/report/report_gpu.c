/* The GPU sections of rank<R>.txt and the GPU keys of rank<R>.json (figures from gpu_analysis.c). Every
 * time here is CPU time in the library calls, as the calling thread saw it: what the GPU did with the work,
 * and when, needs CUPTI. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/json.h"
#include "../model/analysis.h"
#include "../model/gpu_activity.h"
#include "../model/gpu_analysis.h"
#include "../symbols/demangle.h"
#include "report_format.h"
#include "report_gpu.h"

#define TOP_ROWS 20
#define NAME_WIDTH 60 /* kernel names are cut to this many characters, keeping their start */



/* ---- text ---- */

static void print_headline(FILE *f, const struct pw_rank_report *r)
{
	const struct pw_gpu_report *g = r->gpu;
	char dur[32], share[32];
	pw_format_duration(dur, sizeof dur, g->sync_ns);
	if (r->wall_ns)
		snprintf(share, sizeof share, "%.1f%% of wall", (double)g->sync_ns * 100.0 / (double)r->wall_ns);
	else
		snprintf(share, sizeof share, "wall time unknown");
	fprintf(f, "GPU\n  Blocked on the GPU: %s (%s) in %" PRIu64 " synchronising call%s\n", dur, share,
		g->sync_count, g->sync_count == 1 ? "" : "s");
	uint64_t sync_copies = 0;
	for (int d = 0; d < PW_DIR_COUNT; d++)
		sync_copies += g->copies[d].count - g->copies[d].async_count;
	if (sync_copies)
		fprintf(f, "  (explicit synchronisation only: the %" PRIu64 " synchronous copies wait for the GPU too, "
			   "see Memory operations)\n",
			sync_copies);
	if (g->ndevices) {
		fputs("  Devices:", f);
		for (size_t i = 0; i < g->ndevices; i++)
			fprintf(f, "%s %d (%" PRIu64 " stream%s)", i ? "," : "", g->devices[i].id, g->devices[i].streams,
				g->devices[i].streams == 1 ? "" : "s");
		if (g->devices_other)
			fprintf(f, ", and %" PRIu64 " calls on more devices", g->devices_other);
		fputc('\n', f);
	}
	fputc('\n', f);
}

/* Like nsys's cuda_api_sum: every GPU library call, by total time. */
static int print_api_summary(FILE *f, const struct pw_rank_report *r)
{
	static const char *const headers[] = {"Time %", "Total", "Num calls", "Avg",   "Med",
					      "Min",    "Max",   "Errors",    "Domain", "Name"};
	struct pw_table t = {.ncols = 10, .headers = headers, .align = "rrrrrrrrll"};
	int ids[PW_EV_COUNT];
	size_t n = pw_sorted_calls(r, ids);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		if (pw_domain_is_gpu(pw_events[ids[i]].domain))
			sum = pw_sat_add(sum, r->calls[ids[i]].total_ns);
	for (size_t i = 0; i < n; i++) {
		const struct pw_event_info *ev = &pw_events[ids[i]];
		const struct pw_call_stat *c = &r->calls[ids[i]];
		char cell[6][32];
		if (!pw_domain_is_gpu(ev->domain))
			continue;
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		if (sum)
			snprintf(cell[0], sizeof cell[0], "%.1f", (double)c->total_ns * 100.0 / (double)sum);
		else
			snprintf(cell[0], sizeof cell[0], "-");
		pw_format_duration(cell[1], sizeof cell[1], c->total_ns);
		pw_format_mean(cell[2], sizeof cell[2], c->total_ns, c->count);
		pw_format_duration(cell[3], sizeof cell[3], c->median_ns);
		pw_format_duration(cell[4], sizeof cell[4], c->min_ns);
		pw_format_duration(cell[5], sizeof cell[5], c->max_ns);
		pw_table_set(&t, 0, "%s", cell[0]);
		pw_table_set(&t, 1, "%s", cell[1]);
		pw_table_set(&t, 2, "%" PRIu64, c->count);
		pw_table_set(&t, 3, "%s", cell[2]);
		pw_table_set(&t, 4, "%s", cell[3]);
		pw_table_set(&t, 5, "%s", cell[4]);
		pw_table_set(&t, 6, "%s", cell[5]);
		pw_table_set(&t, 7, "%" PRIu64, c->errors);
		pw_table_set(&t, 8, "%s", pw_domain_names[ev->domain]);
		pw_table_set(&t, 9, "%s", ev->name);
	}
	if (t.nrows) {
		fputs("CUDA API summary (CPU time in the calls; Time % of the rows' total; Med approximate, within ~4 %)\n",
		      f);
		pw_table_print(f, &t);
		fputc('\n', f);
	}
	pw_table_free(&t);
	return 0;
}

/* Calls made inside other GPU library calls: what the outer call did, kept out of every total. */
static int print_nested_calls(FILE *f, const struct pw_rank_report *r)
{
	static const char *const headers[] = {"Name", "Num calls", "Total", "Errors", "Domain"};
	struct pw_table t = {.ncols = 5, .headers = headers, .align = "lrrrl"};
	for (int ev = 0; ev < PW_EV_COUNT; ev++) {
		const struct pw_call_stat *c = &r->nested[ev];
		char dur[32];
		if (!c->count)
			continue;
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		pw_format_duration(dur, sizeof dur, c->total_ns);
		pw_table_set(&t, 0, "%s", pw_events[ev].name);
		pw_table_set(&t, 1, "%" PRIu64, c->count);
		pw_table_set(&t, 2, "%s", dur);
		pw_table_set(&t, 3, "%" PRIu64, c->errors);
		pw_table_set(&t, 4, "%s", pw_domain_names[pw_events[ev].domain]);
	}
	if (t.nrows) {
		fputs("GPU library calls made inside other GPU library calls (cuDNN calling cuBLASLt: their time and GPU\n"
		      "work are the outer call's, so they are in none of the figures above)\n",
		      f);
		pw_table_print(f, &t);
		fputc('\n', f);
	}
	pw_table_free(&t);
	return 0;
}

static int print_errors(FILE *f, const struct pw_gpu_report *g)
{
	if (!g->nerrors && !g->errors_other)
		return 0;
	static const char *const headers[] = {"Call", "Code", "Count"};
	struct pw_table t = {.ncols = 3, .headers = headers, .align = "llr"};
	for (size_t i = 0; i < g->nerrors; i++) {
		const struct pw_gpu_error_stat *e = &g->errors[i];
		char code[160];
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		pw_gpu_format_status(code, sizeof code, pw_events[e->ev].domain, e->code);
		pw_table_set(&t, 0, "%s", pw_events[e->ev].name);
		pw_table_set(&t, 1, "%s", code);
		pw_table_set(&t, 2, "%" PRIu64, e->count);
	}
	fputs("GPU API errors (status codes of failed calls)\n", f);
	pw_table_print(f, &t);
	if (g->errors_other)
		fprintf(f, "... %" PRIu64 " more failed calls with other codes\n", g->errors_other);
	fputc('\n', f);
	pw_table_free(&t);
	return 0;
}

static void format_dims(char *buf, size_t len, const uint32_t d[3], int known)
{
	if (known)
		snprintf(buf, len, "%" PRIu32 "x%" PRIu32 "x%" PRIu32, d[0], d[1], d[2]);
	else
		snprintf(buf, len, "-");
}

static int print_kernels(FILE *f, const struct pw_gpu_report *g)
{
	if (!g->nkernels && !g->kernel_other.count)
		return 0;
	static const char *const headers[] = {"Kernel", "Launches", "Launch CPU time", "Grid", "Block", "Failed"};
	uint64_t failed = 0;
	for (size_t i = 0; i < g->nkernels; i++)
		failed = pw_sat_add(failed, g->kernels[i].failed);
	/* the Failed column only when some launch failed */
	struct pw_table t = {.ncols = failed ? 6 : 5, .headers = headers, .align = "lrrllr"};
	size_t shown = g->nkernels < TOP_ROWS ? g->nkernels : TOP_ROWS;
	for (size_t i = 0; i < shown + (g->kernel_other.count ? 1 : 0); i++) {
		int other = i == shown;
		const struct pw_kernel_stat *k = other ? NULL : &g->kernels[i];
		char cut[PW_CELL_MAX], dur[32], grid[48], block[48];
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		pw_format_duration(dur, sizeof dur, other ? g->kernel_other.total_ns : k->total_ns);
		format_dims(grid, sizeof grid, other ? NULL : k->grid, !other && k->config_count);
		format_dims(block, sizeof block, other ? NULL : k->block, !other && k->config_count);
		pw_table_set(&t, 0, "%s",
			     other ? "(other kernels)" : pw_cut_right(cut, sizeof cut, k->name, NAME_WIDTH));
		pw_table_set(&t, 1, "%" PRIu64, other ? g->kernel_other.count : k->launches);
		pw_table_set(&t, 2, "%s", dur);
		pw_table_set(&t, 3, "%s", grid);
		pw_table_set(&t, 4, "%s", block);
		if (failed && other)
			pw_table_set(&t, 5, "-");
		else if (failed)
			pw_table_set(&t, 5, "%" PRIu64, k->failed);
	}
	fprintf(f, "Kernel launches (%zu kernel%s, by launches; Grid and Block: the most frequent configuration%s)\n",
		g->nkernels, g->nkernels == 1 ? "" : "s",
		failed ? "; Failed: launch calls that returned an error, not in Launches" : "");
	pw_table_print(f, &t);
	if (g->nkernels > shown)
		fprintf(f, "... %zu more kernels (all are in the JSON report)\n", g->nkernels - shown);
	if (g->kernel_other.count)
		fprintf(f, "(other kernels): launches of kernels past the first %d names\n", PW_GPU_MAX_KERNELS);
	fputc('\n', f);
	pw_table_free(&t);
	return 0;
}

/* GFLOP with 3 significant figures, down to one FLOP (0.000000001). */
static void format_gflop(char *buf, size_t len, uint64_t flops)
{
	pw_format_3sig(buf, len, (double)flops / 1e9, 9);
}

static int print_gemms(FILE *f, const struct pw_gpu_report *g)
{
	if (!g->gemm_calls)
		return 0;
	static const char *const headers[] = {"Call", "m", "n", "k", "batch", "dtype", "Count", "Total", "GFLOP"};
	struct pw_table t = {.ncols = 9, .headers = headers, .align = "lrrrrlrrr"};
	size_t shown = g->ngemms < TOP_ROWS ? g->ngemms : TOP_ROWS;
	for (size_t i = 0; i < shown + (g->gemm_other.count ? 1 : 0); i++) {
		char dur[32], gflop[32], dtype[32];
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		if (i == shown) {
			pw_format_duration(dur, sizeof dur, g->gemm_other.total_ns);
			format_gflop(gflop, sizeof gflop, g->gemm_other.flops);
			pw_table_set(&t, 0, "(other shapes)");
			for (size_t c = 1; c <= 5; c++)
				pw_table_set(&t, c, "-");
			pw_table_set(&t, 6, "%" PRIu64, g->gemm_other.count);
			pw_table_set(&t, 7, "%s", dur);
			pw_table_set(&t, 8, "%s", gflop);
			continue;
		}
		const struct pw_gemm_stat *s = &g->gemms[i];
		pw_format_duration(dur, sizeof dur, s->total_ns);
		format_gflop(gflop, sizeof gflop, s->flops);
		pw_cuda_format_dtype(dtype, sizeof dtype, s->dtype);
		pw_table_set(&t, 0, "%s %s%s", pw_events[s->ev].name, pw_cublas_op_name(s->transa),
			     pw_cublas_op_name(s->transb));
		pw_table_set(&t, 1, "%" PRIu64, s->m);
		pw_table_set(&t, 2, "%" PRIu64, s->n);
		pw_table_set(&t, 3, "%" PRIu64, s->k);
		pw_table_set(&t, 4, "%" PRIu64, s->batch);
		pw_table_set(&t, 5, "%s", dtype);
		pw_table_set(&t, 6, "%" PRIu64, s->count);
		pw_table_set(&t, 7, "%s", dur);
		pw_table_set(&t, 8, "%s", gflop);
	}
	fprintf(f, "GEMM shapes (%zu, by CPU time in the calls; Call with transa/transb)\n", g->ngemms);
	pw_table_print(f, &t);
	if (g->ngemms > shown)
		fprintf(f, "... %zu more shapes (all are in the JSON report)\n", g->ngemms - shown);
	if (g->gemm_other.count)
		fprintf(f, "(other shapes): calls of shapes past the first %d\n", PW_GPU_MAX_SHAPES);
	pw_table_free(&t);
	char total[32];
	pw_format_flops(total, sizeof total, g->gemm_flops);
	fprintf(f,
		"Total: %s in %" PRIu64 " GEMM call%s (2*m*n*k*batch each, x4 for complex types; achieved TFLOP/s "
		"needs GPU times (CUPTI))\n\n",
		total, g->gemm_calls, g->gemm_calls == 1 ? "" : "s");
	return 0;
}

static int print_dnn_graphs(FILE *f, const struct pw_gpu_report *g)
{
	if (!g->ndnn_graphs && !g->dnn_other.count)
		return 0;
	static const char *const headers[] = {"Operations", "Count", "Total"};
	struct pw_table t = {.ncols = 3, .headers = headers, .align = "lrr"};
	size_t shown = g->ndnn_graphs < TOP_ROWS ? g->ndnn_graphs : TOP_ROWS;
	for (size_t i = 0; i < shown + (g->dnn_other.count ? 1 : 0); i++) {
		int other = i == shown;
		char ops[PW_CELL_MAX], dur[32];
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		if (other)
			snprintf(ops, sizeof ops, "(other plans)");
		else
			pw_cudnn_format_ops(ops, sizeof ops, g->dnn_graphs[i].mask);
		pw_format_duration(dur, sizeof dur, other ? g->dnn_other.total_ns : g->dnn_graphs[i].total_ns);
		pw_table_set(&t, 0, "%s", ops);
		pw_table_set(&t, 1, "%" PRIu64, other ? g->dnn_other.count : g->dnn_graphs[i].count);
		pw_table_set(&t, 2, "%s", dur);
	}
	fputs("cuDNN graph executions (cudnnBackendExecute, by the operations of the plan)\n", f);
	pw_table_print(f, &t);
	if (g->ndnn_graphs > shown)
		fprintf(f, "... %zu more plans\n", g->ndnn_graphs - shown);
	fputc('\n', f);
	pw_table_free(&t);
	return 0;
}

static int print_collectives(FILE *f, const struct pw_gpu_report *g)
{
	static const char *const headers[] = {"Call", "Count", "Bytes", "CPU time", "algbw GB/s", "busbw GB/s"};
	struct pw_table t = {.ncols = 6, .headers = headers, .align = "lrrrrr"};
	for (int ev = 0; ev < PW_EV_COUNT; ev++) {
		const struct pw_coll_stat *c = &g->colls[ev];
		char bytes[32], dur[32], alg[32], bus[32];
		if (!c->count)
			continue;
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		pw_format_bytes(bytes, sizeof bytes, c->bytes);
		pw_format_duration(dur, sizeof dur, c->total_ns);
		pw_format_gbps(alg, sizeof alg, (double)c->bytes, c->total_ns);
		pw_format_gbps(bus, sizeof bus, c->bus_bytes, c->total_ns);
		pw_table_set(&t, 0, "%s", pw_events[ev].name);
		pw_table_set(&t, 1, "%" PRIu64, c->count);
		pw_table_set(&t, 2, "%s", bytes);
		pw_table_set(&t, 3, "%s", dur);
		pw_table_set(&t, 4, "%s", alg);
		pw_table_set(&t, 5, "%s", bus);
	}
	if (t.nrows) {
		fputs("Collectives (CPU-side; GPU times need CUPTI: the bandwidths are over the CPU time in the calls,\n"
		      "which for asynchronous NCCL calls is the enqueue, not the transfer; busbw as nccl-tests defines it)\n",
		      f);
		pw_table_print(f, &t);
		fputc('\n', f);
	}
	pw_table_free(&t);
	return 0;
}

/* One row of the memory operations table. Returns 0 or -1. */
static int copy_row(struct pw_table *t, const char *dir, const char *host, uint64_t count, uint64_t bytes,
		    uint64_t ns)
{
	char b[32], dur[32], rate[32];
	if (!count)
		return 0;
	if (pw_table_add_row(t))
		return -1;
	pw_format_bytes(b, sizeof b, bytes);
	pw_format_duration(dur, sizeof dur, ns);
	pw_format_gbps(rate, sizeof rate, (double)bytes, ns);
	pw_table_set(t, 0, "%s", dir);
	pw_table_set(t, 1, "%s", host);
	pw_table_set(t, 2, "%" PRIu64, count);
	pw_table_set(t, 3, "%s", b);
	pw_table_set(t, 4, "%s", dur);
	pw_table_set(t, 5, "%s", rate);
	return 0;
}

static int print_memory_ops(FILE *f, const struct pw_gpu_report *g)
{
	static const char *const headers[] = {"Direction", "Host memory", "Count", "Bytes", "Time", "GB/s"};
	struct pw_table t = {.ncols = 6, .headers = headers, .align = "llrrrr"};
	uint64_t async = 0, failed = 0;
	for (int d = 0; d < PW_DIR_COUNT; d++) {
		const struct pw_gpu_copy_stat *s = &g->copies[d];
		const char *name = pw_gpu_dir_name((enum pw_gpu_dir)d);
		int rc;
		async += s->async_count;
		failed += s->failed;
		if (d == PW_DIR_HTOD || d == PW_DIR_DTOH)
			rc = copy_row(&t, name, "pinned", s->pinned_count, s->pinned_bytes, s->pinned_ns) ||
			     copy_row(&t, name, "pageable", s->pageable_count, s->pageable_bytes, s->pageable_ns);
		else
			rc = copy_row(&t, name, "-", s->count, s->bytes, s->total_ns);
		if (rc) {
			pw_table_free(&t);
			return -1;
		}
	}
	if (copy_row(&t, "Memset", "-", g->memset.count, g->memset.bytes, g->memset.total_ns)) {
		pw_table_free(&t);
		return -1;
	}
	if (t.nrows) {
		fputs("Memory operations (CPU time in the calls; GB/s over it)\n", f);
		pw_table_print(f, &t);
		if (async)
			fprintf(f, "%" PRIu64 " of the copies were asynchronous: their time is the enqueue, not the transfer.\n",
				async);
		if (failed)
			fprintf(f, "%" PRIu64 " copies failed (counted, no bytes; see GPU API errors).\n", failed);
		fputc('\n', f);
	}
	pw_table_free(&t);
	return 0;
}

static int print_allocations(FILE *f, const struct pw_gpu_report *g)
{
	const struct pw_gpu_alloc_stat *a = &g->alloc;
	if (!a->device_allocs && !a->failed_allocs && !a->host_pinned_allocs && !a->managed_allocs &&
	    !a->device_frees && !a->unknown_frees)
		return 0;
	static const char *const headers[] = {"Peak live", "Allocs", "Frees", "Failed",
					      "Largest failed", "Host pinned peak", "Managed peak"};
	struct pw_table t = {.ncols = 7, .headers = headers, .align = "rrrrrrr"};
	char cell[4][32];
	if (pw_table_add_row(&t))
		return -1;
	pw_format_bytes(cell[0], sizeof cell[0], a->device_peak_bytes);
	if (a->failed_allocs)
		pw_format_bytes(cell[1], sizeof cell[1], a->largest_failed_bytes);
	else
		snprintf(cell[1], sizeof cell[1], "-");
	pw_format_bytes(cell[2], sizeof cell[2], a->host_pinned_peak_bytes);
	pw_format_bytes(cell[3], sizeof cell[3], a->managed_peak_bytes);
	pw_table_set(&t, 0, "%s", cell[0]);
	pw_table_set(&t, 1, "%" PRIu64, a->device_allocs);
	pw_table_set(&t, 2, "%" PRIu64, a->device_frees);
	pw_table_set(&t, 3, "%" PRIu64, a->failed_allocs);
	pw_table_set(&t, 4, "%s", cell[1]);
	pw_table_set(&t, 5, "%s", cell[2]);
	pw_table_set(&t, 6, "%s", cell[3]);
	fputs("Device allocations (cudaMalloc and cudaMallocAsync; peaks are the largest process's)\n", f);
	pw_table_print(f, &t);
	if (a->unknown_frees)
		fprintf(f, "%" PRIu64 " frees of addresses with no allocation recorded (ignored).\n", a->unknown_frees);
	if (a->untracked)
		fprintf(f, "WARNING: %" PRIu64 " allocations past %u live ones were not tracked: peaks are low.\n",
			a->untracked, PW_GPU_MAX_LIVE_ALLOCS);
	fputc('\n', f);
	pw_table_free(&t);
	return 0;
}

int pw_gpu_write_text(FILE *f, const struct pw_rank_report *r)
{
	const struct pw_gpu_report *g = r->gpu;
	if (!g)
		return 0;
	print_headline(f, r);
	if (print_api_summary(f, r) || print_nested_calls(f, r) || print_errors(f, g) || print_kernels(f, g) || print_gemms(f, g) ||
	    print_dnn_graphs(f, g) || print_collectives(f, g) || print_memory_ops(f, g) || print_allocations(f, g))
		return -1;
	return 0;
}

/* ---- JSON ---- */

static void json_dims(struct pw_json *j, const char *key, const uint32_t d[3])
{
	pw_json_key(j, key);
	pw_json_begin_array(j);
	for (int i = 0; i < 3; i++)
		pw_json_uint(j, d[i]);
	pw_json_end_array(j);
}

static void json_other(struct pw_json *j, const char *key, const struct pw_gpu_other *o, int with_flops)
{
	pw_json_key(j, key);
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "count", o->count);
	pw_json_kv_uint(j, "total_ns", o->total_ns);
	if (with_flops)
		pw_json_kv_uint(j, "flops", o->flops);
	pw_json_end_object(j);
}

/* bytes per ns = GB/s; null when no time was measured. */
static double gbps(double bytes, uint64_t ns)
{
	return ns ? bytes / (double)ns : NAN;
}

void pw_gpu_write_json(struct pw_json *j, const struct pw_rank_report *r)
{
	static const struct pw_gpu_report empty;
	const struct pw_gpu_report *g = r->gpu ? r->gpu : &empty;

	pw_json_key(j, "memcpy");
	pw_json_begin_array(j);
	for (int d = 0; d < PW_DIR_COUNT; d++) {
		const struct pw_gpu_copy_stat *s = &g->copies[d];
		if (!s->count)
			continue;
		pw_json_begin_object(j);
		pw_json_kv_string(j, "kind", pw_gpu_dir_name((enum pw_gpu_dir)d));
		pw_json_kv_uint(j, "count", s->count);
		pw_json_kv_uint(j, "bytes", s->bytes);
		pw_json_kv_uint(j, "total_ns", s->total_ns);
		pw_json_kv_uint(j, "pinned_count", s->pinned_count);
		pw_json_kv_uint(j, "pinned_bytes", s->pinned_bytes);
		pw_json_kv_uint(j, "pageable_count", s->pageable_count);
		pw_json_kv_uint(j, "pageable_bytes", s->pageable_bytes);
		pw_json_kv_uint(j, "pinned_ns", s->pinned_ns);
		pw_json_kv_uint(j, "pageable_ns", s->pageable_ns);
		pw_json_kv_uint(j, "async_count", s->async_count);
		pw_json_kv_uint(j, "failed", s->failed);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);

	pw_json_key(j, "memset");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "count", g->memset.count);
	pw_json_kv_uint(j, "bytes", g->memset.bytes);
	pw_json_kv_uint(j, "total_ns", g->memset.total_ns);
	pw_json_end_object(j);

	const struct pw_gpu_alloc_stat *a = &g->alloc;
	pw_json_key(j, "allocations");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "device_peak_bytes", a->device_peak_bytes);
	pw_json_kv_uint(j, "device_allocs", a->device_allocs);
	pw_json_kv_uint(j, "device_frees", a->device_frees);
	pw_json_kv_uint(j, "failed_allocs", a->failed_allocs);
	pw_json_kv_uint(j, "largest_failed_bytes", a->largest_failed_bytes);
	pw_json_kv_uint(j, "host_pinned_peak_bytes", a->host_pinned_peak_bytes);
	pw_json_kv_uint(j, "managed_peak_bytes", a->managed_peak_bytes);
	pw_json_kv_uint(j, "host_pinned_allocs", a->host_pinned_allocs);
	pw_json_kv_uint(j, "managed_allocs", a->managed_allocs);
	pw_json_kv_uint(j, "unknown_frees", a->unknown_frees);
	pw_json_kv_uint(j, "untracked_allocs", a->untracked);
	pw_json_end_object(j);

	pw_json_key(j, "gemms");
	pw_json_begin_array(j);
	for (size_t i = 0; i < g->ngemms; i++) {
		const struct pw_gemm_stat *s = &g->gemms[i];
		char dtype[32];
		pw_cuda_format_dtype(dtype, sizeof dtype, s->dtype);
		pw_json_begin_object(j);
		pw_json_kv_string(j, "name", pw_events[s->ev].name);
		pw_json_kv_uint(j, "m", s->m);
		pw_json_kv_uint(j, "n", s->n);
		pw_json_kv_uint(j, "k", s->k);
		pw_json_kv_uint(j, "batch", s->batch);
		pw_json_kv_string(j, "dtype", dtype);
		pw_json_kv_string(j, "transa", pw_cublas_op_name(s->transa));
		pw_json_kv_string(j, "transb", pw_cublas_op_name(s->transb));
		pw_json_kv_uint(j, "count", s->count);
		pw_json_kv_uint(j, "total_ns", s->total_ns);
		pw_json_kv_uint(j, "flops", s->flops);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	json_other(j, "gemm_other", &g->gemm_other, 1);
	pw_json_kv_uint(j, "gemm_calls", g->gemm_calls);
	pw_json_kv_uint(j, "gemm_flops", g->gemm_flops);

	pw_json_key(j, "collectives");
	pw_json_begin_array(j);
	for (int ev = 0; ev < PW_EV_COUNT; ev++) {
		const struct pw_coll_stat *c = &g->colls[ev];
		if (!c->count)
			continue;
		pw_json_begin_object(j);
		pw_json_kv_string(j, "name", pw_events[ev].name);
		pw_json_kv_uint(j, "count", c->count);
		pw_json_kv_uint(j, "bytes", c->bytes);
		pw_json_kv_uint(j, "total_ns", c->total_ns);
		pw_json_kv_double(j, "algbw_gbps", gbps((double)c->bytes, c->total_ns), 3);
		pw_json_kv_double(j, "busbw_gbps", gbps(c->bus_bytes, c->total_ns), 3);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);

	pw_json_key(j, "kernels_launched");
	pw_json_begin_array(j);
	for (size_t i = 0; i < g->nkernels; i++) {
		const struct pw_kernel_stat *k = &g->kernels[i];
		pw_json_begin_object(j);
		pw_json_kv_string(j, "name", k->name);
		pw_json_kv_uint(j, "launches", k->launches);
		pw_json_kv_uint(j, "failed", k->failed);
		pw_json_kv_uint(j, "total_ns", k->total_ns);
		json_dims(j, "grid", k->grid);
		json_dims(j, "block", k->block);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	json_other(j, "kernels_other", &g->kernel_other, 0);

	pw_json_key(j, "nested_calls");
	pw_json_begin_array(j);
	for (int ev = 0; ev < PW_EV_COUNT; ev++) {
		const struct pw_call_stat *c = &r->nested[ev];
		if (!c->count)
			continue;
		pw_json_begin_object(j);
		pw_json_kv_string(j, "domain", pw_domain_names[pw_events[ev].domain]);
		pw_json_kv_string(j, "name", pw_events[ev].name);
		pw_json_kv_uint(j, "count", c->count);
		pw_json_kv_uint(j, "total_ns", c->total_ns);
		pw_json_kv_uint(j, "min_ns", c->min_ns);
		pw_json_kv_uint(j, "max_ns", c->max_ns);
		pw_json_kv_uint(j, "errors", c->errors);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);

	pw_json_key(j, "gpu_errors");
	pw_json_begin_array(j);
	for (size_t i = 0; i < g->nerrors; i++) {
		const struct pw_gpu_error_stat *e = &g->errors[i];
		enum pw_domain dom = pw_events[e->ev].domain;
		pw_json_begin_object(j);
		pw_json_kv_string(j, "call", pw_events[e->ev].name);
		pw_json_kv_string(j, "domain", pw_domain_names[dom]);
		pw_json_kv_int(j, "code", e->code);
		pw_json_kv_string(j, "name", pw_gpu_status_name(dom, e->code));
		pw_json_kv_uint(j, "count", e->count);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	pw_json_kv_uint(j, "gpu_errors_other", g->errors_other);

	pw_json_key(j, "cudnn_graphs");
	pw_json_begin_array(j);
	for (size_t i = 0; i < g->ndnn_graphs; i++) {
		char ops[1024];
		pw_cudnn_format_ops(ops, sizeof ops, g->dnn_graphs[i].mask);
		pw_json_begin_object(j);
		pw_json_kv_string(j, "ops", ops);
		pw_json_kv_uint(j, "mask", g->dnn_graphs[i].mask);
		pw_json_kv_uint(j, "count", g->dnn_graphs[i].count);
		pw_json_kv_uint(j, "total_ns", g->dnn_graphs[i].total_ns);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	json_other(j, "cudnn_graphs_other", &g->dnn_other, 0);

	pw_json_key(j, "gpu_sync");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "count", g->sync_count);
	pw_json_kv_uint(j, "total_ns", g->sync_ns);
	pw_json_kv_double(j, "wall_share", r->wall_ns ? (double)g->sync_ns / (double)r->wall_ns : NAN, 4);
	pw_json_end_object(j);

	pw_json_key(j, "devices");
	pw_json_begin_array(j);
	for (size_t i = 0; i < g->ndevices; i++) {
		pw_json_begin_object(j);
		pw_json_kv_int(j, "id", g->devices[i].id);
		pw_json_kv_uint(j, "streams", g->devices[i].streams);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

/* ---- GPU activity (CUPTI): what the GPUs did ---- */

#define KERNEL_ROWS 20   /* kernel rows per device in the text */
#define KERNEL_NAME_WIDTH 60
#define GAP_NEXT_WIDTH 40

/* A kernel name for a table cell: demangled when it is a C++ name, then shortened to width. */
static const char *kernel_cell(char *buf, size_t len, const char *name, size_t width)
{
	char demangled[4096];
	if (pw_demangle(name, demangled, sizeof demangled))
		name = demangled;
	const char *s = pw_shorten_name(buf, len, name, width);
	if (s != buf)
		snprintf(buf, len, "%s", s);
	return buf;
}

static void format_device(char *buf, size_t len, const struct pw_act_device *d)
{
	char mem[32];
	int n = snprintf(buf, len, "GPU %d", d->id);
	if (!d->has_info || n < 0 || (size_t)n >= len)
		return;
	pw_format_bytes(mem, sizeof mem, d->memory_bytes);
	snprintf(buf + n, len - (size_t)n, " (%s, %" PRIu32 " SMs, compute %" PRIu32 ".%" PRIu32 ", %s)",
		 d->name ? d->name : "?", d->sms, d->cc_major, d->cc_minor, mem);
}

static void print_utilisation(FILE *f, const struct pw_act_report *a)
{
	fputs("GPU utilisation (CUPTI activity records: what the GPUs did, in GPU time)\n", f);
	for (size_t i = 0; i < a->ndevices; i++) {
		const struct pw_act_device *d = &a->devices[i];
		char name[512], span[32], k[32], m[32], s[32], idle[32], longest[32];
		format_device(name, sizeof name, d);
		pw_make_printable(name);
		pw_format_duration(span, sizeof span, d->span_ns);
		fprintf(f, "  %s: busy %.1f%% of %s (first activity start to last end)\n", name,
			d->span_ns ? (double)d->busy_ns * 100.0 / (double)d->span_ns : 0.0, span);
		pw_format_duration(k, sizeof k, d->kernel_ns);
		pw_format_duration(m, sizeof m, d->memcpy_ns);
		pw_format_duration(s, sizeof s, d->memset_ns);
		fprintf(f,
			"    %" PRIu64 " kernels %s, %" PRIu64 " copies %s, %" PRIu64 " memsets %s (sums: busy time counts "
			"overlapping work once)\n",
			d->kernels, k, d->memcpys, m, d->memsets, s);
		pw_format_duration(idle, sizeof idle, d->idle_ns);
		pw_format_duration(longest, sizeof longest, d->longest_gap_ns);
		fprintf(f, "    idle %s in %" PRIu64 " gap%s, longest %s", idle, d->gaps, d->gaps == 1 ? "" : "s", longest);
		int first = 1;
		for (int c = 0; c < PW_GAP_CLASSES; c++) {
			if (!d->idle_by_class[c])
				continue;
			char dur[32];
			pw_format_duration(dur, sizeof dur, d->idle_by_class[c]);
			fprintf(f, "%s%s %s", first ? "; by cause: " : ", ", pw_gap_class_name((enum pw_gap_class)c), dur);
			first = 0;
		}
		fputc('\n', f);
		if (d->launches) {
			char mean[32], p50[32], p95[32], max[32];
			pw_format_duration(mean, sizeof mean, d->latency_mean_ns);
			pw_format_duration(p50, sizeof p50, d->latency_p50_ns);
			pw_format_duration(p95, sizeof p95, d->latency_p95_ns);
			pw_format_duration(max, sizeof max, d->latency_max_ns);
			fprintf(f,
				"    launch latency (launch call to kernel start, %" PRIu64 " kernels): mean %s, median %s, "
				"p95 %s, max %s\n",
				d->launches, mean, p50, p95, max);
			fprintf(f, "    queue depth at launch (the device's work launched and not finished): mean %.1f, max %" PRIu64 "\n",
				d->queue_mean, d->queue_max);
		} else {
			fputs("    launch latency: no kernel is linked to its launch\n", f);
		}
	}
	if (a->devices_other)
		fprintf(f, "  (%" PRIu64 " operations on devices past the first %d are left out)\n", a->devices_other,
			PW_ACT_MAX_DEVICES);
	if (a->gaps_total) {
		fputs("  Idle by cause (all GPUs):", f);
		int first = 1;
		for (int c = 0; c < PW_GAP_CLASSES; c++) {
			const struct pw_act_class *k = &a->classes[c];
			char dur[32];
			if (!k->gaps)
				continue;
			pw_format_duration(dur, sizeof dur, k->idle_ns);
			fprintf(f, "%s %s %s in %" PRIu64 " gap%s", first ? "" : ",", pw_gap_class_name((enum pw_gap_class)c),
				dur, k->gaps, k->gaps == 1 ? "" : "s");
			first = 0;
		}
		fputs("\n  (sync: the launching thread was waiting for the GPU when it ran dry, and its synchronising calls\n"
		      "  cover at least half the gap; input: it was reading or waiting on other threads or processes; sleep: sleeping;\n"
		      "  launch: gaps under 100 us between launches; cpu: computing without recorded calls; unknown: the work\n"
		      "  is not linked to a thread)\n",
		      f);
	}
	fputc('\n', f);
}

/* "read 19.0 ms (12), poll 300 us, running 1.10 ms" */
static void format_gap_calls(char *buf, size_t len, const struct pw_act_gap *g)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < g->ncalls && used < len; i++) {
		char dur[32];
		pw_format_duration(dur, sizeof dur, g->calls[i].ns);
		int w = g->calls[i].count > 1
				? snprintf(buf + used, len - used, "%s%s %s (%" PRIu64 ")", used ? ", " : "",
					   pw_events[g->calls[i].ev].name, dur, g->calls[i].count)
				: snprintf(buf + used, len - used, "%s%s %s", used ? ", " : "", pw_events[g->calls[i].ev].name,
					   dur);
		if (w > 0)
			used += (size_t)w;
	}
	if (g->other_calls_ns && used < len) {
		char dur[32];
		pw_format_duration(dur, sizeof dur, g->other_calls_ns);
		int w = snprintf(buf + used, len - used, "%sother calls %s", used ? ", " : "", dur);
		if (w > 0)
			used += (size_t)w;
	}
	if (used < len) {
		char dur[32];
		pw_format_duration(dur, sizeof dur, g->running_ns);
		snprintf(buf + used, len - used, "%srunning (no recorded call) %s", used ? ", " : "", dur);
	}
}

static int print_gaps(FILE *f, const struct pw_rank_report *r, const struct pw_act_report *a)
{
	if (!a->ngaps)
		return 0;
	static const char *const headers[] = {"GPU", "Start", "Idle", "Thread", "Cause", "The launching thread in the gap",
					      "Ended by"};
	struct pw_table t = {.ncols = 7, .headers = headers, .align = "rrrrlll"};
	for (size_t i = 0; i < a->ngaps; i++) {
		const struct pw_act_gap *g = &a->gaps[i];
		char start[40], idle[32], calls[512], next[PW_CELL_MAX];
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		if (g->start_ns >= r->start_ns) {
			pw_format_duration(start + 1, sizeof start - 1, g->start_ns - r->start_ns);
			start[0] = '+';
		} else {
			snprintf(start, sizeof start, "-");
		}
		pw_format_duration(idle, sizeof idle, g->duration_ns);
		if (g->tid)
			format_gap_calls(calls, sizeof calls, g);
		else
			snprintf(calls, sizeof calls, "(not linked to a thread)");
		pw_table_set(&t, 0, "%d", g->device);
		pw_table_set(&t, 1, "%s", start);
		pw_table_set(&t, 2, "%s", idle);
		if (g->tid)
			pw_table_set(&t, 3, "%" PRIu32, g->tid);
		else
			pw_table_set(&t, 3, "-");
		if (g->cls == PW_GAP_SYNC && g->sync_ev)
			pw_table_set(&t, 4, "sync (%s)", pw_events[g->sync_ev].name);
		else
			pw_table_set(&t, 4, "%s", pw_gap_class_name(g->cls));
		pw_table_set(&t, 5, "%s", calls);
		pw_table_set(&t, 6, "%s", kernel_cell(next, sizeof next, g->next, GAP_NEXT_WIDTH));
	}
	fprintf(f, "Largest idle gaps (the %d longest per GPU; Start from the rank's start; the launching thread enqueued\n"
		   "the work that ended the gap, and its recorded calls inside the gap are listed with their time)\n",
		PW_ACT_TOP_GAPS);
	pw_table_print(f, &t);
	fputc('\n', f);
	pw_table_free(&t);
	return 0;
}

static void set_time_cells(struct pw_table *t, size_t col, uint64_t count, uint64_t total, uint64_t min, uint64_t max,
			   uint64_t device_total)
{
	char c[4][32];
	pw_format_duration(c[0], sizeof c[0], total);
	pw_format_mean(c[1], sizeof c[1], total, count);
	pw_format_duration(c[2], sizeof c[2], min);
	pw_format_duration(c[3], sizeof c[3], max);
	pw_table_set(t, col, "%" PRIu64, count);
	pw_table_set(t, col + 1, "%s", c[0]);
	if (device_total)
		pw_table_set(t, col + 2, "%.1f", (double)total * 100.0 / (double)device_total);
	else
		pw_table_set(t, col + 2, "-");
	pw_table_set(t, col + 3, "%s", c[1]);
	pw_table_set(t, col + 4, "%s", c[2]);
	pw_table_set(t, col + 5, "%s", c[3]);
}

/* Like PyTorch's key_averages: per device, kernels by total GPU time. */
static int print_act_kernels(FILE *f, const struct pw_act_report *a)
{
	static const char *const headers[] = {"Name", "Stream", "Calls", "Total", "%GPU", "Avg", "Min", "Max"};
	for (size_t di = 0; di < a->ndevices; di++) {
		const struct pw_act_device *d = &a->devices[di];
		if (!d->kernels)
			continue;
		struct pw_table t = {.ncols = 8, .headers = headers, .align = "lrrrrrrr"};
		size_t rows = 0, more = 0;
		for (size_t i = 0; i < a->nkernel_rows; i++) {
			const struct pw_act_kernel_row *k = &a->kernel_rows[i];
			if (k->device != d->id)
				continue;
			if (rows == KERNEL_ROWS) {
				more++;
				continue;
			}
			char name[PW_CELL_MAX];
			if (pw_table_add_row(&t)) {
				pw_table_free(&t);
				return -1;
			}
			rows++;
			pw_table_set(&t, 0, "%s", kernel_cell(name, sizeof name, k->name, KERNEL_NAME_WIDTH));
			pw_table_set(&t, 1, "%" PRIu32, k->stream);
			set_time_cells(&t, 2, k->count, k->total_ns, k->min_ns, k->max_ns, d->kernel_ns);
		}
		const struct pw_act_time_stat *o = &d->kernel_other;
		if (o->count) {
			if (pw_table_add_row(&t)) {
				pw_table_free(&t);
				return -1;
			}
			pw_table_set(&t, 0, "(other kernels)");
			pw_table_set(&t, 1, "-");
			set_time_cells(&t, 2, o->count, o->total_ns, o->min_ns, o->max_ns, d->kernel_ns);
		}
		char total[32];
		pw_format_duration(total, sizeof total, d->kernel_ns);
		fprintf(f, "GPU kernels on GPU %d (%" PRIu64 " kernels, %s; %%GPU: share of the GPU's kernel time; names "
			   "demangled and shortened, whole in the JSON report)\n",
			d->id, d->kernels, total);
		pw_table_print(f, &t);
		if (more)
			fprintf(f, "... %zu more kernels (all are in the JSON report)\n", more);
		if (o->count)
			fprintf(f, "(other kernels): kernels past the first %d (name, GPU, stream) rows\n",
				PW_ACT_MAX_KERNEL_ROWS);
		fputc('\n', f);
		pw_table_free(&t);
	}
	return 0;
}

static int print_graphs(FILE *f, const struct pw_act_report *a)
{
	if (!a->ngraph_rows && !a->graphs_other.kernels)
		return 0;
	static const char *const headers[] = {"Graph", "GPU", "Launches", "Kernels", "Kernels/launch", "GPU time",
					      "Per launch"};
	struct pw_table t = {.ncols = 7, .headers = headers, .align = "rrrrrrr"};
	size_t shown = a->ngraph_rows < KERNEL_ROWS ? a->ngraph_rows : KERNEL_ROWS;
	for (size_t i = 0; i <= shown; i++) {
		const struct pw_act_graph_row *g = i < shown ? &a->graph_rows[i] : &a->graphs_other;
		if (i == shown && !g->kernels)
			break;
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		char total[32], each[32];
		pw_format_duration(total, sizeof total, g->total_ns);
		pw_format_duration(each, sizeof each, g->launches ? g->total_ns / g->launches : 0);
		if (i < shown) {
			pw_table_set(&t, 0, "%" PRIu32, g->graph_id);
			pw_table_set(&t, 1, "%" PRId32, g->device);
		} else {
			pw_table_set(&t, 0, "(other)");
			pw_table_set(&t, 1, "-");
		}
		pw_table_set(&t, 2, "%" PRIu64, g->launches);
		pw_table_set(&t, 3, "%" PRIu64, g->kernels);
		pw_table_set(&t, 4, "%.1f", g->launches ? (double)g->kernels / (double)g->launches : 0.0);
		pw_table_set(&t, 5, "%s", total);
		pw_table_set(&t, 6, "%s", each);
	}
	fprintf(f, "CUDA graphs (%" PRIu64 " kernels ran in graph launches; they are in the kernel tables above, and "
		   "not in launch latency or queue depth, since a graph launch launches them all)\n",
		a->graph_kernels);
	pw_table_print(f, &t);
	if (a->ngraph_rows > shown)
		fprintf(f, "... %zu more graphs (all are in the JSON report)\n", a->ngraph_rows - shown);
	fputc('\n', f);
	pw_table_free(&t);
	return 0;
}

static int print_act_copies(FILE *f, const struct pw_act_report *a)
{
	if (!a->ncopy_rows && !a->copy_other.count)
		return 0;
	static const char *const headers[] = {"GPU", "Kind", "Source", "Destination", "Count", "Bytes", "GPU time", "GB/s"};
	struct pw_table t = {.ncols = 8, .headers = headers, .align = "rlllrrrr"};
	for (size_t i = 0; i <= a->ncopy_rows; i++) {
		int other = i == a->ncopy_rows;
		if (other && !a->copy_other.count)
			break;
		const struct pw_act_copy_row *c = other ? NULL : &a->copy_rows[i];
		char bytes[32], dur[32], rate[32];
		uint64_t b = other ? a->copy_other_bytes : c->bytes, ns = other ? a->copy_other.total_ns : c->total_ns;
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		pw_format_bytes(bytes, sizeof bytes, b);
		pw_format_duration(dur, sizeof dur, ns);
		pw_format_gbps(rate, sizeof rate, (double)b, ns);
		if (other) {
			pw_table_set(&t, 0, "-");
			pw_table_set(&t, 1, "(other)");
			pw_table_set(&t, 2, "-");
			pw_table_set(&t, 3, "-");
		} else {
			pw_table_set(&t, 0, "%d", c->device);
			pw_table_set(&t, 1, "%s", c->memset ? "memset" : pw_copy_dir_name(c->dir));
			pw_table_set(&t, 2, "%s", c->memset ? "-" : pw_act_mem_name(c->src));
			pw_table_set(&t, 3, "%s", pw_act_mem_name(c->dst));
		}
		pw_table_set(&t, 4, "%" PRIu64, other ? a->copy_other.count : c->count);
		pw_table_set(&t, 5, "%s", bytes);
		pw_table_set(&t, 6, "%s", dur);
		pw_table_set(&t, 7, "%s", rate);
	}
	fputs("GPU copies and memsets (GPU time; GB/s over it; pageable host memory is staged and slow)\n", f);
	pw_table_print(f, &t);
	fputc('\n', f);
	pw_table_free(&t);
	return 0;
}

static int call_time_row(struct pw_table *t, const char *name, const struct pw_act_call_time *c)
{
	char k[32], cp[32];
	if (!c->kernels && !c->copies)
		return 0;
	if (pw_table_add_row(t))
		return -1;
	pw_format_duration(k, sizeof k, c->kernel_ns);
	pw_format_duration(cp, sizeof cp, c->copy_ns);
	pw_table_set(t, 0, "%s", name);
	pw_table_set(t, 1, "%" PRIu64, c->kernels);
	pw_table_set(t, 2, "%s", k);
	pw_table_set(t, 3, "%" PRIu64, c->copies);
	pw_table_set(t, 4, "%s", cp);
	return 0;
}

static int by_call_gpu_time(const void *x, const void *y, void *ctx)
{
	const struct pw_act_call_time *t = ctx;
	int a = *(const int *)x, b = *(const int *)y;
	uint64_t ta = pw_sat_add(t[a].kernel_ns, t[a].copy_ns), tb = pw_sat_add(t[b].kernel_ns, t[b].copy_ns);
	if (ta != tb)
		return ta > tb ? -1 : 1;
	return a - b;
}

static int print_time_by_call(FILE *f, const struct pw_act_report *a)
{
	static const char *const headers[] = {"Call", "Kernels", "Kernel time", "Copies", "Copy time"};
	struct pw_table t = {.ncols = 5, .headers = headers, .align = "lrrrr"};
	int ids[PW_EV_COUNT];
	size_t n = 0;
	for (int ev = 0; ev < PW_EV_COUNT; ev++)
		if (a->by_call[ev].kernels || a->by_call[ev].copies)
			ids[n++] = ev;
	qsort_r(ids, n, sizeof ids[0], by_call_gpu_time, (void *)a->by_call);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = call_time_row(&t, pw_events[ids[i]].name, &a->by_call[ids[i]]);
	if (!rc)
		rc = call_time_row(&t, "(CUDA calls not wrapped)", &a->by_api_only);
	if (!rc)
		rc = call_time_row(&t, "(not linked to a call)", &a->unlinked);
	if (!rc && t.nrows) {
		fputs("GPU time by call (the GPU work each call enqueued, linked through CUPTI's correlation ids; not\n"
		      "wrapped: runtime or driver calls only CUPTI saw, such as the launches inside libraries; the\n"
		      "kernels an NCCL group launched count for each kind of call in it, their time shared by bytes)\n",
		      f);
		pw_table_print(f, &t);
		fputc('\n', f);
	}
	pw_table_free(&t);
	return rc;
}

static void print_recording(FILE *f, const struct pw_act_report *a)
{
	char why[160];
	fputs("GPU activity recording\n", f);
	if (!pw_act_recorded(a)) {
		pw_act_why_missing(why, sizeof why, a);
		fprintf(f, "  Not recorded: %s. The GPU figures above are CPU times in the calls.\n", why);
	}
	if (a->state) {
		char path[512];
		snprintf(path, sizeof path, "%s", a->cupti_path ? a->cupti_path : "-");
		pw_make_printable(path);
		fprintf(f, "  Status: %s", pw_act_state_name(a->state));
		if (a->state == PW_ACT_FAILED)
			fprintf(f, " (CUptiResult %lld)", (long long)a->error_code);
		if (a->cupti_version)
			fprintf(f, ", CUPTI API version %" PRIu64, a->cupti_version);
		if (a->clock)
			fprintf(f, ", timestamps %s", a->clock == PW_ACT_CLOCK_CALLBACK ? "from profwrap's clock"
											: "shifted from CUPTI's clock");
		fprintf(f, "; libcupti: %s\n", path);
	}
	if (a->fork_children)
		fprintf(f, "  Fork children: %" PRIu64 " called CUDA after their parent had used it, where CUDA cannot be used: "
			   "no GPU activity of theirs\n", a->fork_children);
	if (a->state == PW_ACT_OTHER_CLIENT)
		fputs("  Stepped back: another CUPTI client (torch.profiler, for one) began recording; GPU work after that\n"
		      "  is not in this report (the GPU library calls are)\n", f);
	if (a->records) {
		fprintf(f,
			"  Records: %" PRIu64 "; %" PRIu64 " kernels (%" PRIu64 " linked to wrapped calls, %" PRIu64
			" to CUDA API records only, %" PRIu64 " unlinked), %" PRIu64 " copies, %" PRIu64 " memsets\n",
			a->records, a->kernels, a->kernels_linked, a->kernels_linked_api, a->kernels_unlinked, a->memcpys,
			a->memsets);
		char ov[32];
		pw_format_duration(ov, sizeof ov, a->overhead_ns);
		fprintf(f, "  Lost: %" PRIu64 " records dropped by CUPTI (%" PRIu64 " requests for a buffer refused: the pool "
			   "had none free, see PROFWRAP_CUPTI_BUFFERS); CUPTI overhead %s\n",
			a->dropped, a->buffers_refused, ov);
	}
	if (a->dropped)
		fprintf(f, "WARNING: CUPTI dropped %" PRIu64 " activity records: GPU busy time and kernel counts are low.\n",
			a->dropped);
	if (a->bad_records)
		fprintf(f, "WARNING: %" PRIu64 " GPU activity records without usable times or device were left out.\n",
			a->bad_records);
	fputc('\n', f);
}

int pw_act_write_text(FILE *f, const struct pw_rank_report *r)
{
	const struct pw_act_report *a = r->act;
	if (!a)
		return 0;
	if (pw_act_recorded(a)) {
		print_utilisation(f, a);
		if (print_gaps(f, r, a) || print_act_kernels(f, a) || print_graphs(f, a) || print_act_copies(f, a) ||
		    print_time_by_call(f, a))
			return -1;
	}
	print_recording(f, a);
	return 0;
}

/* ---- GPU activity: JSON ---- */

static void json_call_time(struct pw_json *j, const char *name, const struct pw_act_call_time *c)
{
	pw_json_begin_object(j);
	pw_json_kv_string(j, "call", name);
	pw_json_kv_uint(j, "kernels", c->kernels);
	pw_json_kv_uint(j, "kernel_ns", c->kernel_ns);
	pw_json_kv_uint(j, "copies", c->copies);
	pw_json_kv_uint(j, "copy_ns", c->copy_ns);
	pw_json_end_object(j);
}

/* key: v, or null when not known */
static void json_null_or_uint(struct pw_json *j, const char *key, int known, uint64_t v)
{
	pw_json_key(j, key);
	if (known)
		pw_json_uint(j, v);
	else
		pw_json_null(j);
}

/* "gpu_activity": how the activity was recorded (CUPTI, clock, losses) and its totals. */
static void json_activity(struct pw_json *j, const struct pw_act_report *a)
{
	pw_json_key(j, "gpu_activity");
	pw_json_begin_object(j);
	pw_json_kv_string(j, "status", pw_act_state_name(a->state));
	json_null_or_uint(j, "cupti_version", a->cupti_version != 0, a->cupti_version);
	pw_json_kv_string(j, "clock", a->clock == PW_ACT_CLOCK_CALLBACK ? "callback"
				      : a->clock == PW_ACT_CLOCK_OFFSET ? "offset"
									 : NULL);
	pw_json_kv_string(j, "cupti_path", a->cupti_path);
	pw_json_kv_int(j, "error_code", a->error_code);
	pw_json_kv_uint(j, "driver_version", a->driver_version);
	pw_json_kv_uint(j, "fork_children_without_cuda", a->fork_children);
	json_null_or_uint(j, "other_client_since_ns", a->other_client_ns != 0, a->other_client_ns);
	pw_json_key(j, "recorded");
	pw_json_bool(j, pw_act_recorded(a));
	char why[160] = "";
	if (!pw_act_recorded(a))
		pw_act_why_missing(why, sizeof why, a);
	pw_json_kv_string(j, "not_recorded_why", pw_act_recorded(a) ? NULL : why);
	pw_json_kv_uint(j, "records", a->records);
	pw_json_kv_uint(j, "dropped", a->dropped);
	pw_json_kv_uint(j, "buffers_refused", a->buffers_refused);
	pw_json_kv_uint(j, "bad_records", a->bad_records);
	pw_json_kv_uint(j, "overhead_ns", a->overhead_ns);
	pw_json_kv_uint(j, "kernels", a->kernels);
	pw_json_kv_uint(j, "kernels_linked", a->kernels_linked);
	pw_json_kv_uint(j, "kernels_linked_api", a->kernels_linked_api);
	pw_json_kv_uint(j, "kernels_unlinked", a->kernels_unlinked);
	pw_json_kv_uint(j, "graph_kernels", a->graph_kernels);
	pw_json_kv_uint(j, "memcpys", a->memcpys);
	pw_json_kv_uint(j, "memsets", a->memsets);
	pw_json_kv_uint(j, "kernel_median_ns", a->kernel_median_ns);
	pw_json_kv_uint(j, "devices_other", a->devices_other);
	pw_json_end_object(j);
}

/* One entry of "gpus". */
static void json_device(struct pw_json *j, const struct pw_act_device *d)
{
	pw_json_begin_object(j);
	pw_json_kv_int(j, "device", d->id);
	pw_json_kv_string(j, "name", d->name);
	pw_json_kv_uint(j, "sms", d->sms);
	pw_json_kv_uint(j, "memory_bytes", d->memory_bytes);
	pw_json_kv_uint(j, "bandwidth_kbps", d->bandwidth_kbps);
	pw_json_kv_uint(j, "span_ns", d->span_ns);
	pw_json_kv_uint(j, "busy_ns", d->busy_ns);
	pw_json_kv_uint(j, "idle_ns", d->idle_ns);
	pw_json_kv_uint(j, "kernel_ns", d->kernel_ns);
	pw_json_kv_uint(j, "memcpy_ns", d->memcpy_ns);
	pw_json_kv_uint(j, "memset_ns", d->memset_ns);
	pw_json_kv_uint(j, "kernels", d->kernels);
	pw_json_kv_uint(j, "memcpys", d->memcpys);
	pw_json_kv_uint(j, "memsets", d->memsets);
	pw_json_kv_uint(j, "idle_gaps", d->gaps);
	pw_json_kv_uint(j, "longest_idle_ns", d->longest_gap_ns);
	pw_json_kv_uint(j, "first_ns", d->first_ns);
	pw_json_kv_uint(j, "last_ns", d->last_ns);
	pw_json_kv_uint(j, "launches", d->launches);
	pw_json_kv_uint(j, "launch_latency_mean_ns", d->latency_mean_ns);
	pw_json_kv_uint(j, "launch_latency_p50_ns", d->latency_p50_ns);
	pw_json_kv_uint(j, "launch_latency_p95_ns", d->latency_p95_ns);
	pw_json_kv_uint(j, "launch_latency_max_ns", d->latency_max_ns);
	pw_json_kv_double(j, "queue_depth_mean", d->queue_mean, 3);
	pw_json_kv_uint(j, "queue_depth_max", d->queue_max);
	pw_json_key(j, "idle_by_cause");
	pw_json_begin_object(j);
	for (int c = 0; c < PW_GAP_CLASSES; c++)
		pw_json_kv_uint(j, pw_gap_class_name((enum pw_gap_class)c), d->idle_by_class[c]);
	pw_json_end_object(j);
	pw_json_end_object(j);
}

static void json_devices(struct pw_json *j, const struct pw_act_report *a)
{
	pw_json_key(j, "gpus");
	pw_json_begin_array(j);
	for (size_t i = 0; i < a->ndevices; i++)
		json_device(j, &a->devices[i]);
	pw_json_end_array(j);
}

static void json_kernel_rows(struct pw_json *j, const struct pw_act_report *a)
{
	pw_json_key(j, "kernels");
	pw_json_begin_array(j);
	for (size_t i = 0; i < a->nkernel_rows; i++) {
		const struct pw_act_kernel_row *k = &a->kernel_rows[i];
		pw_json_begin_object(j);
		pw_json_kv_string(j, "name", k->name);
		pw_json_kv_int(j, "device", k->device);
		pw_json_kv_uint(j, "stream", k->stream);
		pw_json_kv_uint(j, "count", k->count);
		pw_json_kv_uint(j, "total_ns", k->total_ns);
		pw_json_kv_uint(j, "min_ns", k->min_ns);
		pw_json_kv_uint(j, "max_ns", k->max_ns);
		pw_json_kv_uint(j, "mean_ns", k->count ? k->total_ns / k->count : 0);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

/* "cuda_graphs": a row per graph, then one for the graphs past the row bound (graph_id null) if any. */
static void json_graph_rows(struct pw_json *j, const struct pw_act_report *a)
{
	pw_json_key(j, "cuda_graphs");
	pw_json_begin_array(j);
	for (size_t i = 0; i <= a->ngraph_rows; i++) {
		int past = i == a->ngraph_rows;
		const struct pw_act_graph_row *g = past ? &a->graphs_other : &a->graph_rows[i];
		if (past && !g->kernels)
			break;
		pw_json_begin_object(j);
		json_null_or_uint(j, "graph_id", !past, g->graph_id);
		pw_json_kv_int(j, "device", past ? -1 : g->device);
		pw_json_kv_uint(j, "launches", g->launches);
		pw_json_kv_uint(j, "kernels", g->kernels);
		pw_json_kv_uint(j, "total_ns", g->total_ns);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

/* kernels past the row bound, per device (existing key kernels_other is the launches' bound) */
static void json_kernels_other(struct pw_json *j, const struct pw_act_report *a)
{
	pw_json_key(j, "gpu_kernels_other");
	pw_json_begin_array(j);
	for (size_t i = 0; i < a->ndevices; i++) {
		const struct pw_act_time_stat *o = &a->devices[i].kernel_other;
		if (!o->count)
			continue;
		pw_json_begin_object(j);
		pw_json_kv_int(j, "device", a->devices[i].id);
		pw_json_kv_uint(j, "count", o->count);
		pw_json_kv_uint(j, "total_ns", o->total_ns);
		pw_json_kv_uint(j, "min_ns", o->min_ns);
		pw_json_kv_uint(j, "max_ns", o->max_ns);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

/* "gpu_memcpy" or "gpu_memset": the copy rows of that kind. */
static void json_copy_rows(struct pw_json *j, const struct pw_act_report *a, int memset)
{
	pw_json_key(j, memset ? "gpu_memset" : "gpu_memcpy");
	pw_json_begin_array(j);
	for (size_t i = 0; i < a->ncopy_rows; i++) {
		const struct pw_act_copy_row *c = &a->copy_rows[i];
		if (c->memset != memset)
			continue;
		pw_json_begin_object(j);
		pw_json_kv_int(j, "device", c->device);
		if (!memset) {
			pw_json_kv_string(j, "dir", pw_copy_dir_name(c->dir));
			pw_json_kv_string(j, "src", pw_act_mem_name(c->src));
		}
		pw_json_kv_string(j, "dst", pw_act_mem_name(c->dst));
		pw_json_kv_uint(j, "count", c->count);
		pw_json_kv_uint(j, "bytes", c->bytes);
		pw_json_kv_uint(j, "total_ns", c->total_ns);
		pw_json_kv_double(j, "gbps", gbps((double)c->bytes, c->total_ns), 3);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

static void json_copies(struct pw_json *j, const struct pw_act_report *a)
{
	json_copy_rows(j, a, 0);
	json_copy_rows(j, a, 1);
	pw_json_key(j, "gpu_copies_other");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "count", a->copy_other.count);
	pw_json_kv_uint(j, "bytes", a->copy_other_bytes);
	pw_json_kv_uint(j, "total_ns", a->copy_other.total_ns);
	pw_json_end_object(j);
}

/* One kept idle gap, with its launching thread's calls inside it. */
static void json_gap(struct pw_json *j, const struct pw_act_gap *g)
{
	pw_json_begin_object(j);
	pw_json_kv_int(j, "device", g->device);
	pw_json_kv_uint(j, "start_ns", g->start_ns);
	pw_json_kv_uint(j, "duration_ns", g->duration_ns);
	pw_json_kv_int(j, "pid", g->pid);
	json_null_or_uint(j, "thread", g->tid != 0, g->tid);
	pw_json_kv_string(j, "class", pw_gap_class_name(g->cls));
	pw_json_kv_string(j, "sync_call", g->sync_ev ? pw_events[g->sync_ev].name : NULL);
	pw_json_kv_string(j, "ended_by", g->next);
	pw_json_key(j, "cpu");
	pw_json_begin_array(j);
	for (size_t k = 0; k < g->ncalls; k++) {
		pw_json_begin_object(j);
		pw_json_kv_string(j, "call", pw_events[g->calls[k].ev].name);
		pw_json_kv_uint(j, "ns", g->calls[k].ns);
		pw_json_kv_uint(j, "count", g->calls[k].count);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	pw_json_kv_uint(j, "other_calls_ns", g->other_calls_ns);
	pw_json_kv_uint(j, "running_ns", g->running_ns);
	pw_json_end_object(j);
}

static void json_gaps(struct pw_json *j, const struct pw_act_report *a)
{
	pw_json_key(j, "gpu_gaps");
	pw_json_begin_array(j);
	for (size_t i = 0; i < a->ngaps; i++)
		json_gap(j, &a->gaps[i]);
	pw_json_end_array(j);
}

/* key: [{"call": ..., k1: v1[ev], k2: v2[ev]}, ...] for the events with a v1. */
static void json_per_event(struct pw_json *j, const char *key, const char *k1, const uint64_t *v1, const char *k2,
			   const uint64_t *v2)
{
	pw_json_key(j, key);
	pw_json_begin_array(j);
	for (int ev = 0; ev < PW_EV_COUNT; ev++) {
		if (!v1[ev])
			continue;
		pw_json_begin_object(j);
		pw_json_kv_string(j, "call", pw_events[ev].name);
		pw_json_kv_uint(j, k1, v1[ev]);
		pw_json_kv_uint(j, k2, v2[ev]);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

/* "gpu_idle_causes": every class once any gap was classified, none otherwise. */
static void json_idle_causes(struct pw_json *j, const struct pw_act_report *a, uint64_t wall_ns)
{
	pw_json_key(j, "gpu_idle_causes");
	pw_json_begin_array(j);
	for (int c = 0; c < PW_GAP_CLASSES && a->gaps_total; c++) {
		const struct pw_act_class *k = &a->classes[c];
		pw_json_begin_object(j);
		pw_json_kv_string(j, "class", pw_gap_class_name((enum pw_gap_class)c));
		pw_json_kv_uint(j, "gaps", k->gaps);
		pw_json_kv_uint(j, "idle_ns", k->idle_ns);
		pw_json_kv_double(j, "share", wall_ns ? (double)k->idle_ns / (double)wall_ns : NAN, 4);
		json_per_event(j, "calls", "ns", k->call_ns, "count", k->call_count);
		if (c == PW_GAP_SYNC) /* the synchronising calls its gaps began in */
			json_per_event(j, "after", "gaps", k->sync_gaps, "idle_ns", k->sync_ns);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

static void json_time_by_call(struct pw_json *j, const struct pw_act_report *a)
{
	pw_json_key(j, "gpu_time_by_call");
	pw_json_begin_array(j);
	for (int ev = 0; ev < PW_EV_COUNT; ev++)
		if (a->by_call[ev].kernels || a->by_call[ev].copies)
			json_call_time(j, pw_events[ev].name, &a->by_call[ev]);
	if (a->by_api_only.kernels || a->by_api_only.copies)
		json_call_time(j, "(not wrapped)", &a->by_api_only);
	if (a->unlinked.kernels || a->unlinked.copies)
		json_call_time(j, "(unlinked)", &a->unlinked);
	pw_json_end_array(j);
}

void pw_act_write_json(struct pw_json *j, const struct pw_rank_report *r)
{
	static const struct pw_act_report none;
	const struct pw_act_report *a = r->act ? r->act : &none;

	json_activity(j, a);
	json_devices(j, a);
	json_kernel_rows(j, a);
	json_graph_rows(j, a);
	json_kernels_other(j, a);
	json_copies(j, a);
	json_gaps(j, a);
	json_idle_causes(j, a, r->wall_ns);
	json_time_by_call(j, a);
}
