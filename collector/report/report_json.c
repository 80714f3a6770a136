/* OUT/rank<R>.json: the figures of the text report for tools and tests. The keys written here are a contract
 * (docs and tests rely on them): add keys freely, never rename or drop one. */
#define _GNU_SOURCE
#include "report_json.h"

#include <stdio.h>

#include "../lib/json.h"
#include "../model/analysis.h"
#include "../model/call_stacks.h"
#include "../model/findings.h"
#include "../model/gpu_analysis.h"
#include "rank_summary.h"
#include "report_call_stacks.h"
#include "report_format.h"
#include "report_gpu.h"
#include "report_ranges.h"

static void write_process(struct pw_json *j, const struct pw_proc *p)
{
	pw_json_begin_object(j);
	pw_json_kv_int(j, "pid", p->pid);
	pw_json_kv_int(j, "ppid", p->ppid);
	pw_json_kv_uint(j, "image", p->image);
	pw_json_kv_string(j, "argv", p->argv);
	pw_json_kv_string(j, "exe", p->exe);
	pw_json_kv_string(j, "how", pw_end_how_name(p->how));
	pw_json_key(j, "exit_code");
	if (p->exit_code == -1)
		pw_json_null(j);
	else
		pw_json_int(j, p->exit_code);
	pw_json_kv_int(j, "signal", p->signal > 0 ? p->signal : 0);
	pw_json_kv_string(j, "exec_path", p->exec_path);
	pw_json_kv_uint(j, "events", p->events);
	pw_json_kv_uint(j, "dropped", p->dropped);
	pw_json_key(j, "thread_drops");
	pw_json_begin_array(j);
	for (size_t i = 0; i < p->nthread_drops; i++) {
		pw_json_begin_object(j);
		pw_json_kv_uint(j, "tid", p->thread_drops[i].tid);
		pw_json_kv_uint(j, "dropped", p->thread_drops[i].dropped);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
	pw_json_key(j, "salvaged");
	if (p->salvaged_at) {
		pw_json_begin_object(j);
		pw_json_kv_uint(j, "realtime_ns", p->salvaged_at);
		pw_json_kv_uint(j, "events", p->salvaged_events);
		pw_json_end_object(j);
	} else {
		pw_json_null(j);
	}
	pw_json_kv_uint(j, "start_ns", p->start_ns);
	pw_json_kv_uint(j, "end_ns", p->end_ns);
	pw_json_end_object(j);
}

static void write_calls(struct pw_json *j, const struct pw_rank_report *r)
{
	int ids[PW_EV_COUNT];
	size_t n = pw_sorted_calls(r, ids);
	pw_json_key(j, "calls");
	pw_json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		const struct pw_call_stat *c = &r->calls[ids[i]];
		pw_json_begin_object(j);
		pw_json_kv_string(j, "domain", pw_domain_names[pw_events[ids[i]].domain]);
		pw_json_kv_string(j, "name", pw_events[ids[i]].name);
		pw_json_kv_uint(j, "count", c->count);
		pw_json_kv_uint(j, "total_ns", c->total_ns);
		pw_json_kv_uint(j, "min_ns", c->min_ns);
		pw_json_kv_uint(j, "max_ns", c->max_ns);
		pw_json_kv_uint(j, "bytes", c->bytes);
		pw_json_kv_uint(j, "errors", c->errors);
		if (pw_domain_is_gpu(pw_events[ids[i]].domain))
			pw_json_kv_uint(j, "median_ns", c->median_ns); /* approximate, within ~4 % */
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

static void write_files(struct pw_json *j, const struct pw_rank_report *r)
{
	pw_json_key(j, "files");
	pw_json_begin_array(j);
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct pw_file_stat *f = &r->files[i];
		pw_json_begin_object(j);
		pw_json_kv_string(j, "path", f->path);
		pw_json_kv_uint(j, "opens", f->opens);
		pw_json_kv_uint(j, "reads", f->reads);
		pw_json_kv_uint(j, "writes", f->writes);
		pw_json_kv_uint(j, "read_bytes", f->read_bytes);
		pw_json_kv_uint(j, "write_bytes", f->write_bytes);
		pw_json_kv_uint(j, "time_ns", f->time_ns);
		pw_json_kv_uint(j, "stats", f->stats);
		pw_json_kv_uint(j, "dir_reads", f->dir_reads);
		pw_json_kv_uint(j, "meta_ns", f->meta_ns);
		pw_json_key(j, "stream"); /* a pipe or a socket */
		pw_json_bool(j, f->stream);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

static void write_libraries(struct pw_json *j, const struct pw_rank_report *r)
{
	pw_json_key(j, "libraries");
	pw_json_begin_array(j);
	for (size_t i = 0; i < r->nlibs; i++) {
		const struct pw_lib_stat *l = &r->libs[i];
		pw_json_begin_object(j);
		pw_json_kv_string(j, "path", l->path);
		pw_json_kv_uint(j, "loads", l->loads);
		pw_json_kv_uint(j, "load_ns", l->load_ns);
		pw_json_kv_uint(j, "failures", l->failures);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

/* What profwrap itself cost (model.h): total_ns = records_ns + stacks_ns + cupti_overhead_ns. */
static void write_own_cost(struct pw_json *j, const struct pw_own_cost *o)
{
	pw_json_key(j, "profwrap_cost");
	pw_json_begin_object(j);
	pw_json_kv_uint(j, "total_ns", o->total_ns);
	pw_json_kv_double(j, "wall_share", o->wall_share, 6);
	pw_json_kv_uint(j, "records", o->records);
	pw_json_kv_uint(j, "records_measured", o->records_measured);
	pw_json_kv_double(j, "record_ns",
			  o->records_measured ? (double)o->records_ns / (double)o->records_measured : 0.0, 2);
	pw_json_kv_uint(j, "records_ns", o->records_ns);
	pw_json_kv_uint(j, "stacks", o->stacks);
	pw_json_kv_uint(j, "stacks_ns", o->stacks_ns);
	pw_json_kv_uint(j, "cupti_overhead_ns", o->cupti_ns);
	pw_json_kv_uint(j, "shm_peak_bytes", o->shm_peak);
	pw_json_kv_int(j, "shm_peak_pid", o->shm_peak_pid);
	pw_json_end_object(j);
}

int pw_write_rank_json(const struct pw_analysis *a, const struct pw_rank_report *r, const char *path, char *err,
		       size_t errlen)
{
	FILE *f = pw_report_open(path, err, errlen);
	if (!f)
		return -1;
	struct pw_json j;
	pw_json_init(&j, f, 2);
	pw_json_begin_object(&j);
	pw_json_kv_string(&j, "format", "profwrap-report");
	pw_json_kv_int(&j, "version", 1);
	/* first, so that the cross-rank summary reads only this from a rank file */
	pw_json_key(&j, "summary");
	pw_write_rank_summary_json(&j, a, r);
	pw_json_kv_int(&j, "rank", r->rank);
	pw_json_kv_int(&j, "world_size", r->world_size);
	pw_json_kv_string(&j, "host", r->host);
	pw_json_kv_string(&j, "command", r->command ? r->command : a->command);
	pw_json_kv_uint(&j, "wall_ns", r->wall_ns);
	pw_json_kv_uint(&j, "start_realtime_ns", r->start_realtime_ns);
	/* the CLOCK_MONOTONIC origin of the processes' start_ns and end_ns */
	pw_json_kv_uint(&j, "start_ns", r->start_ns);
	pw_json_kv_uint(&j, "end_ns", r->end_ns);

	pw_json_key(&j, "processes");
	pw_json_begin_array(&j);
	for (size_t i = 0; i < r->nprocs; i++)
		write_process(&j, &r->procs[i]);
	pw_json_end_array(&j);

	pw_json_kv_uint(&j, "events", r->events);
	pw_json_kv_uint(&j, "dropped_events", r->dropped);
	pw_json_kv_uint(&j, "strings_dropped", r->strings_dropped);
	pw_json_kv_uint(&j, "dropped_shm_short", r->shm_refused);
	pw_json_kv_uint(&j, "records_refused", r->skipped);
	char why[1024];
	pw_incomplete_reason(why, sizeof why, r, a->out_dir);
	pw_json_key(&j, "incomplete");
	pw_json_bool(&j, why[0] != 0);
	pw_json_kv_string(&j, "incomplete_reason", why[0] ? why : NULL);

	write_own_cost(&j, &r->own_cost);

	pw_json_kv_uint(&j, "stream_ns", r->stream_ns); /* io, stdio and meta calls on pipes and sockets */

	write_calls(&j, r);
	write_files(&j, r);
	write_libraries(&j, r);
	pw_gpu_write_json(&j, r); /* memcpy, memset, allocations, gemms, collectives, kernels_launched, ... */
	pw_act_write_json(&j, r); /* gpu_activity, gpus, kernels, gpu_memcpy, gpu_gaps, gpu_time_by_call, ... */
	pw_ranges_write_json(&j, r); /* ranges, marks, nvtx, capture */
	pw_stacks_write_json(&j, r); /* callsites, samples, stacks */

	pw_json_key(&j, "findings");
	pw_json_begin_array(&j);
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct pw_finding *x = &r->findings[i];
		pw_json_begin_object(&j);
		pw_json_kv_string(&j, "id", x->id);
		pw_json_kv_double(&j, "share", x->share, 4);
		pw_json_kv_string(&j, "evidence", x->evidence);
		pw_json_kv_string(&j, "advice", x->advice);
		pw_json_end_object(&j);
	}
	pw_json_end_array(&j);

	pw_json_key(&j, "coverage");
	pw_json_begin_object(&j);
	pw_json_kv_uint(&j, "kernel_bytes", r->kernel_bytes);
	pw_json_kv_uint(&j, "seen_bytes", r->seen_bytes);
	pw_json_kv_double(&j, "share", r->coverage, 4);
	pw_json_kv_uint(&j, "left_out_bytes", r->io_left_out);
	pw_json_kv_uint(&j, "unchecked_processes", r->io_unchecked);
	pw_json_kv_uint(&j, "io_uring_processes", r->io_uring_procs);
	pw_json_end_object(&j);

	pw_json_end_object(&j);
	fputc('\n', f);
	return pw_report_close(f, path, err, errlen);
}
