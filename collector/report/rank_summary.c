/* The figures of one rank that ranks are compared by, written first in rank<R>.json as "summary": the
 * cross-rank summary (merge.c) reads them back from there, one rank file at a time, so it can be redone from
 * the reports of several collectors (nodes) without their raw traces. */
#define _GNU_SOURCE
#include "rank_summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/json.h"
#include "../model/analysis.h"
#include "../model/gpu_activity.h"
#include "../model/gpu_analysis.h"
#include "../model/ranges.h"
#include "report_format.h"

#define TOP_CALLS 3
#define MAX_PHASES 64

const struct pw_summary_member_info pw_summary_members[PW_SUM_COUNT] = {
#define PW_X(name, key, type, merge, cap, label, row, stat) \
	[PW_SUM_##name] = {key, PW_SUMMARY_##type, PW_MERGE_##merge, cap, label, row, stat},
	PW_SUMMARY_MEMBERS(PW_X)
#undef PW_X
};

void pw_rank_figures(const struct pw_rank_report *r, struct pw_rank_figures *f)
{
	memset(f, 0, sizeof *f);
	f->wall_ns = r->wall_ns;
	uint64_t nccl_call_ns = 0;
	for (int e = 0; e < PW_EV_COUNT; e++) {
		const struct pw_call_stat *c = &r->calls[e];
		enum pw_event_kind k = pw_events[e].kind;
		enum pw_domain d = pw_events[e].domain;
		if (k == PW_K_MPI_COLL)
			f->collective_ns += c->total_ns;
		else if (k == PW_K_COLL && e != PW_EV_NCCL_SEND && e != PW_EV_NCCL_RECV)
			nccl_call_ns += c->total_ns;
		else if (d == PW_DOM_IO || d == PW_DOM_STDIO || d == PW_DOM_META)
			f->io_ns += c->total_ns;
	}
	/* pipes and sockets are another process's pace (a shell reading a command's output), not the files' */
	f->stream_ns = r->stream_ns < f->io_ns ? r->stream_ns : f->io_ns;
	f->io_ns -= f->stream_ns;
	const struct pw_act_report *act = r->act;
	uint64_t all_kernels_ns = 0;
	for (size_t i = 0; act && i < act->ndevices; i++) {
		f->gpu_busy_ns += act->devices[i].busy_ns;
		all_kernels_ns += act->devices[i].kernel_ns;
	}
	/* NCCL's time is its kernels' on the GPU, where a rank waits for the others; the calls only enqueue them */
	if (act && act->coll_kernels) {
		f->collective_ns += act->coll_kernel_ns;
		f->kernel_ns = all_kernels_ns > act->coll_kernel_ns ? all_kernels_ns - act->coll_kernel_ns : 0;
	} else {
		f->collective_ns += nccl_call_ns;
		f->kernel_ns = all_kernels_ns;
	}
	struct pw_process main;
	if (pw_rank_main_process(r, &main) == 0) {
		uint64_t life = main.end_ns > main.start_ns ? main.end_ns - main.start_ns : 0;
		uint64_t blocked = main.main_wait_ns + main.main_child_wait_ns + main.main_mpi_ns + main.main_stream_ns;
		f->busy_ns = life > blocked ? life - blocked : 0;
		f->wait_ns = main.main_wait_ns;
	}
}

/* "io.read 1.20 s, io.write 300 ms, wait.poll 12.0 ms" */
void pw_rank_top_calls(char *buf, size_t len, const struct pw_rank_report *r)
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

struct phase {
	const char *name;
	uint64_t ns;
};

static int by_ns_desc(const void *a, const void *b)
{
	const struct phase *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* NVTX range time per name (a name's rows at every depth and domain add up), the MAX_PHASES longest. */
static void write_phases(struct pw_json *j, const struct pw_range_report *rr)
{
	pw_json_begin_array(j);
	struct phase *ph = rr && rr->nrows ? calloc(rr->nrows, sizeof *ph) : NULL;
	size_t n = 0;
	for (size_t i = 0; ph && i < rr->nrows; i++) {
		const struct pw_range_row *row = &rr->rows[i];
		if (row->merged || !row->name)
			continue;
		size_t k = 0;
		while (k < n && strcmp(ph[k].name, row->name) != 0)
			k++;
		if (k == n)
			ph[n++] = (struct phase){row->name, 0};
		ph[k].ns += row->total_ns;
	}
	if (n)
		qsort(ph, n, sizeof *ph, by_ns_desc);
	for (size_t i = 0; i < n && i < MAX_PHASES; i++) {
		pw_json_begin_object(j);
		pw_json_kv_string(j, "name", ph[i].name);
		pw_json_kv_uint(j, "ns", ph[i].ns);
		pw_json_end_object(j);
	}
	free(ph);
	pw_json_end_array(j);
}

/* The entry times of the world collectives, per family, as offsets from the rank's start. */
static void write_collectives(struct pw_json *j, const struct pw_rank_report *r)
{
	static const char *const family[PW_COLL_FAMILIES] = {"mpi", "nccl"};
	pw_json_begin_array(j);
	for (int c = 0; c < PW_COLL_FAMILIES; c++) {
		const struct pw_coll_entries *ce = &r->coll[c];
		if (!ce->n)
			continue;
		pw_json_begin_object(j);
		pw_json_kv_string(j, "domain", family[c]);
		pw_json_key(j, "entries_ns");
		pw_json_begin_array(j);
		for (size_t i = 0; i < ce->n; i++)
			pw_json_uint(j, ce->ns[i] > r->start_ns ? ce->ns[i] - r->start_ns : 0);
		pw_json_end_array(j);
		pw_json_key(j, "truncated");
		pw_json_bool(j, ce->truncated);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

/* The value of each member but the arrays; top holds the top calls' text. */
static void summary_values(const struct pw_analysis *a, const struct pw_rank_report *r, char *top, size_t toplen,
			   union pw_summary_value *v)
{
	struct pw_rank_figures f;
	pw_rank_figures(r, &f);
	pw_rank_top_calls(top, toplen, r);
	v[PW_SUM_RANK].i = r->rank;
	v[PW_SUM_HOST].s = r->host;
	v[PW_SUM_WORLD_SIZE].u = (uint64_t)r->world_size; /* at least 1 (analysis.c) */
	v[PW_SUM_COMMAND].s = r->command ? r->command : a->command;
	v[PW_SUM_START_REALTIME].u = r->start_realtime_ns;
	v[PW_SUM_WALL].u = f.wall_ns;
	v[PW_SUM_PROCESSES].u = r->nprocs;
	v[PW_SUM_EVENTS].u = r->events;
	v[PW_SUM_DROPPED].u = r->dropped;
	v[PW_SUM_GPU_BUSY].u = f.gpu_busy_ns;
	v[PW_SUM_KERNEL].u = f.kernel_ns;
	v[PW_SUM_COLLECTIVE].u = f.collective_ns;
	v[PW_SUM_IO].u = f.io_ns;
	v[PW_SUM_WAIT].u = f.wait_ns;
	v[PW_SUM_BUSY].u = f.busy_ns;
	v[PW_SUM_OWN_COST].u = r->own_cost.total_ns;
	v[PW_SUM_TOP_CALLS].s = top;
}

void pw_write_rank_summary_json(struct pw_json *j, const struct pw_analysis *a, const struct pw_rank_report *r)
{
	union pw_summary_value v[PW_SUM_COUNT] = {{0}};
	char top[PW_CELL_MAX];
	summary_values(a, r, top, sizeof top, v);
	pw_json_begin_object(j);
	for (int m = 0; m < PW_SUM_COUNT; m++) {
		const struct pw_summary_member_info *info = &pw_summary_members[m];
		pw_json_key(j, info->key);
		switch (info->type) {
		case PW_SUMMARY_INT:
			pw_json_int(j, v[m].i);
			break;
		case PW_SUMMARY_UINT:
		case PW_SUMMARY_NS:
			pw_json_uint(j, v[m].u);
			break;
		case PW_SUMMARY_TEXT:
			pw_json_string(j, v[m].s);
			break;
		case PW_SUMMARY_ARRAY:
			if (m == PW_SUM_PHASES)
				write_phases(j, r->ranges);
			else
				write_collectives(j, r);
			break;
		}
	}
	pw_json_end_object(j);
}

size_t pw_rank_activity(const struct pw_rank_report *r, struct pw_activity_part parts[PW_ACTIVITY_PARTS])
{
	struct pw_rank_figures fig;
	pw_rank_figures(r, &fig);
	const struct pw_activity_part all[PW_ACTIVITY_PARTS] = {
		{"main thread busy", fig.busy_ns}, {"GPU busy", fig.gpu_busy_ns},   {"collectives", fig.collective_ns},
		{"file I/O", fig.io_ns},           {"pipes and sockets", fig.stream_ns}, {"waits", fig.wait_ns}};
	size_t n = 0;
	for (size_t i = 0; i < PW_ACTIVITY_PARTS; i++)
		if (all[i].ns || !i)
			parts[n++] = all[i];
	return n;
}
