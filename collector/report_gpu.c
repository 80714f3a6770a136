/* The GPU sections of rank<R>.txt and the GPU keys of rank<R>.json (figures from gpu_analysis.c). Every
 * time here is CPU time in the library calls, as the calling thread saw it: what the GPU did with the work,
 * and when, needs CUPTI. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "gpu_analysis.h"
#include "json.h"
#include "report_format.h"

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
	static const char *const headers[] = {"Kernel", "Launches", "Launch CPU time", "Grid", "Block"};
	struct pw_table t = {.ncols = 5, .headers = headers, .align = "lrrll"};
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
	}
	fprintf(f, "Kernel launches (%zu kernel%s, by launches; Grid and Block: the most frequent configuration)\n",
		g->nkernels, g->nkernels == 1 ? "" : "s");
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
	if (print_api_summary(f, r) || print_errors(f, g) || print_kernels(f, g) || print_gemms(f, g) ||
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
		pw_json_kv_uint(j, "total_ns", k->total_ns);
		json_dims(j, "grid", k->grid);
		json_dims(j, "block", k->block);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	json_other(j, "kernels_other", &g->kernel_other, 0);

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
