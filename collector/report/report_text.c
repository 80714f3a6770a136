/* OUT/rank<R>.txt: the human-first report of one rank. Plain ASCII, aligned tables, no trailing spaces:
 * it is read in terminals, diffed and pasted into issues. */
#define _GNU_SOURCE
#include "report_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/units.h"
#include "../model/analysis.h"
#include "../model/call_stacks.h"
#include "../model/findings.h"
#include "../model/gpu_activity.h"
#include "rank_summary.h"
#include "report_call_stacks.h"
#include "report_format.h"
#include "report_gpu.h"
#include "report_ranges.h"

#define TEXT_WIDTH 60 /* argv and paths are cut to this many characters */
#define MAX_FILE_ROWS 30
#define MAX_LIB_ROWS 20

/* s cut to TEXT_WIDTH characters, keeping its end (".../data/shard-0001.bin"). */
static const char *cut_left(char *buf, size_t len, const char *s)
{
	s = pw_report_str(s);
	size_t n = strlen(s);
	if (n <= TEXT_WIDTH)
		return s;
	snprintf(buf, len, "...%s", s + n - (TEXT_WIDTH - 3));
	return buf;
}

/* "Label:     value", without trailing spaces when the value is empty. */
static void print_field(FILE *f, const char *label, const char *value)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", pw_report_str(value));
	pw_make_printable(buf);
	if (*buf)
		fprintf(f, "%-13s %s\n", label, buf);
	else
		fprintf(f, "%s\n", label);
}

static void format_realtime(char *buf, size_t len, uint64_t realtime_ns)
{
	time_t secs = (time_t)(realtime_ns / 1000000000u);
	struct tm tm;
	if (!realtime_ns || !gmtime_r(&secs, &tm)) {
		snprintf(buf, len, "unknown");
		return;
	}
	char date[64];
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", date, (unsigned)(realtime_ns / 1000000u % 1000u));
}

/* The figures ranks are compared by (summary.txt's row): where the rank's time went, in one line. */
static void print_activity(FILE *f, const struct pw_rank_report *r)
{
	struct pw_activity_part parts[PW_ACTIVITY_PARTS];
	size_t nparts = pw_rank_activity(r, parts);
	char line[256] = "", dur[32];
	size_t n = 0;
	for (size_t i = 0; i < nparts && n < sizeof line; i++) {
		pw_format_duration(dur, sizeof dur, parts[i].ns);
		int w = snprintf(line + n, sizeof line - n, "%s%s %s", n ? ", " : "", parts[i].label, dur);
		if (w > 0)
			n += (size_t)w;
	}
	print_field(f, "Activity:", line);
}

/* "profwrap's own cost: 1.52 ms (0.31 % of wall): 41200 records x 31.2 ns, 12 stacks (236 us), CUPTI overhead 0
 * ns": how much of what the report shows is profwrap's own doing. */
static void print_own_cost(FILE *f, const struct pw_own_cost *o)
{
	char total[32], share[32], per[32], stacks[32], cupti[32], shm[32], held[80] = "", unmeasured[64] = "";
	pw_format_duration(total, sizeof total, o->total_ns);
	pw_format_3sig(share, sizeof share, o->wall_share * 100.0, 3);
	pw_format_3sig(per, sizeof per, o->records_measured ? (double)o->records_ns / (double)o->records_measured : 0,
		       1);
	pw_format_duration(stacks, sizeof stacks, o->stacks_ns);
	pw_format_duration(cupti, sizeof cupti, o->cupti_ns);
	if (o->records_measured < o->records)
		snprintf(unmeasured, sizeof unmeasured, " (%" PRIu64 " unmeasured, counted as 0)",
			 o->records - o->records_measured);
	pw_format_bytes(shm, sizeof shm, o->shm_peak);
	if (o->shm_peak) /* 0: raw traces older than the figure */
		snprintf(held, sizeof held, "; /dev/shm held at most %s (one process)", shm);
	fprintf(f, "profwrap's own cost: %s (%s %% of wall): %" PRIu64 " records x %s ns%s, %" PRIu64
		   " stacks (%s), CUPTI overhead %s%s\n",
		total, share, o->records, per, unmeasured, o->stacks, stacks, cupti, held);
}

static void print_header(FILE *f, const struct pw_analysis *a, const struct pw_rank_report *r)
{
	char buf[256], dur[32];
	if (r->rank == PW_RANK_LAUNCHER)
		fprintf(f, "profwrap report, launcher processes on %s\n\n", r->host ? r->host : "unknown host");
	else
		fprintf(f, "profwrap report, rank %d\n\n", r->rank);
	print_field(f, "Command:", r->command ? r->command : a->command);
	print_field(f, "Host:", r->host);
	if (r->rank == PW_RANK_LAUNCHER)
		snprintf(buf, sizeof buf, "none (no launcher gave these processes a rank; the ranks are in rank<R>.txt)");
	else if (r->world_size > 0)
		snprintf(buf, sizeof buf, "%d of %d", r->rank, r->world_size);
	else
		snprintf(buf, sizeof buf, "%d (world size unknown)", r->rank);
	print_field(f, "Rank:", buf);
	format_realtime(buf, sizeof buf, r->start_realtime_ns);
	print_field(f, "Started:", buf);
	pw_format_duration(dur, sizeof dur, r->wall_ns);
	print_field(f, "Wall time:", dur);
	print_activity(f, r);
	pw_capture_header(f, r, print_field);
	snprintf(buf, sizeof buf, "%" PRIu64, r->events);
	print_field(f, "Events:", buf);
	int n = snprintf(buf, sizeof buf, "%" PRIu64, r->dropped);
	if (r->shm_refused && n > 0 && (size_t)n < sizeof buf)
		n += snprintf(buf + n, sizeof buf - (size_t)n, " (%" PRIu64 " for lack of room in /dev/shm)", r->shm_refused);
	if (n > 0 && (size_t)n < sizeof buf)
		snprintf(buf + n, sizeof buf - (size_t)n, " (strings dropped: %" PRIu64 ", records refused: %" PRIu64 ")",
			 r->strings_dropped, r->skipped);
	print_field(f, "Dropped:", buf);
	print_own_cost(f, &r->own_cost);
	fputc('\n', f);
}

#define WRAP_WIDTH 110 /* findings are wrapped to this many characters */

/* Under the header, so that nobody takes the figures for the whole run while records are missing. */
static void print_incomplete(FILE *f, const struct pw_analysis *a, const struct pw_rank_report *r)
{
	char why[1024];
	pw_incomplete_reason(why, sizeof why, r, a->out_dir);
	if (!why[0])
		return;
	pw_make_printable(why);
	pw_print_wrapped(f, "WARNING: incomplete: ", "  ", why, WRAP_WIDTH);
	fputc('\n', f);
}

/* "What to fix first": the findings, largest share first, each with its evidence and advice. */
static void print_findings(FILE *f, const struct pw_rank_report *r)
{
	char why[160], buf[2048];
	fputs("What to fix first\n", f);
	if (!r->nfindings) {
		if (r->act || r->gpu)
			fputs("  Nothing stands out: no rule fired (start-up, checkpoints, GPU idle causes, copies, "
			      "collectives).\n",
			      f);
		else
			fputs("  Nothing stands out: no rule fired (start-up, checkpoints, input; the GPU rules need GPU "
			      "calls).\n",
			      f);
	}
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct pw_finding *x = &r->findings[i];
		char head[96];
		snprintf(head, sizeof head, "  %zu. %s, %.1f%% of wall time: ", i + 1, x->id, x->share * 100.0);
		snprintf(buf, sizeof buf, "%s", x->evidence ? x->evidence : "");
		pw_make_printable(buf);
		pw_print_wrapped(f, head, "     ", buf, WRAP_WIDTH);
		pw_print_wrapped(f, "     Fix: ", "     ", x->advice, WRAP_WIDTH);
	}
	if ((r->act || r->gpu) && !pw_act_recorded(r->act)) {
		pw_act_why_missing(why, sizeof why, r->act);
		fprintf(f, "  GPU activity was not recorded (%s): only the rules on calls were evaluated.\n", why);
	}
	fputc('\n', f);
}

#define PROCESS_ROWS 40   /* a launcher or shell script can start hundreds: the JSON lists them all */
#define BUSIEST_ROWS 30

static int ended_badly(const struct pw_proc *p)
{
	return p->signal || p->how == PW_END_VANISHED || p->how == PW_END_DIED_IN_EXIT || p->how == PW_END_UNRECORDED ||
	       (p->how == PW_END_EXITED && p->exit_code != 0);
}

static int by_events_desc(const void *a, const void *b)
{
	const struct pw_proc *x = *(const struct pw_proc *const *)a, *y = *(const struct pw_proc *const *)b;
	return (y->events > x->events) - (y->events < x->events);
}

/* Which processes get a row: all when they are few; else the busiest and those that ended badly. */
static unsigned char *choose_process_rows(const struct pw_rank_report *r, size_t *shown)
{
	unsigned char *show = calloc(r->nprocs ? r->nprocs : 1, 1);
	const struct pw_proc **order = calloc(r->nprocs ? r->nprocs : 1, sizeof *order);
	if (!show || !order) {
		free(show);
		free(order);
		return NULL;
	}
	*shown = 0;
	for (size_t i = 0; i < r->nprocs; i++)
		order[i] = &r->procs[i];
	qsort(order, r->nprocs, sizeof *order, by_events_desc);
	for (size_t i = 0; i < r->nprocs; i++) {
		size_t k = (size_t)(order[i] - r->procs);
		if (r->nprocs <= PROCESS_ROWS || i < BUSIEST_ROWS ||
		    (ended_badly(order[i]) && *shown < PROCESS_ROWS)) {
			show[k] = 1;
			(*shown)++;
		}
	}
	free(order);
	return show;
}

static int print_processes(FILE *f, const struct pw_rank_report *r)
{
	static const char *const headers[] = {"PID", "PPID", "Command", "Ended", "Events", "Dropped"};
	struct pw_table t = {.ncols = 6, .headers = headers, .align = "rrllrr"};
	size_t shown;
	unsigned char *show = choose_process_rows(r, &shown);
	if (!show)
		return -1;
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct pw_proc *p = &r->procs[i];
		char cut[PW_CELL_MAX], end[PW_CELL_MAX];
		if (!show[i])
			continue;
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			free(show);
			return -1;
		}
		pw_format_end(end, sizeof end, p);
		pw_table_set(&t, 0, "%d", p->pid);
		pw_table_set(&t, 1, "%d", p->ppid);
		pw_table_set(&t, 2, "%s", pw_cut_right(cut, sizeof cut, p->argv, TEXT_WIDTH));
		pw_table_set(&t, 3, "%s", end);
		pw_table_set(&t, 4, "%" PRIu64, p->events);
		pw_table_set(&t, 5, "%" PRIu64, p->dropped);
	}
	fprintf(f, "Processes (%zu)\n", r->nprocs);
	pw_table_print(f, &t);
	if (shown < r->nprocs) {
		size_t bad_hidden = 0;
		for (size_t i = 0; i < r->nprocs; i++)
			bad_hidden += !show[i] && ended_badly(&r->procs[i]);
		fprintf(f, "... %zu more processes with fewer events, %zu of which ended badly (all are in the JSON report)\n",
			r->nprocs - shown, bad_hidden);
	}
	fputc('\n', f);
	pw_table_free(&t);
	free(show);
	return 0;
}

static void format_percentage(char *buf, size_t len, uint64_t part, uint64_t whole)
{
	if (whole)
		snprintf(buf, len, "%.1f %%", (double)part * 100.0 / (double)whole);
	else
		snprintf(buf, len, "-");
}

/* Mean of count calls that took total_ns, or "-" for none. */

/* Sums of counts read from damaged files must not wrap into small, believable figures. */
static uint64_t add_saturating(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int print_calls(FILE *f, const struct pw_rank_report *r)
{
	static const char *const headers[] = {"Action",     "Mean duration", "Num calls", "Total time",
					      "Percentage", "Bytes",         "Errors"};
	struct pw_table t = {.ncols = 7, .headers = headers, .align = "lrrrrrr"};
	int ids[PW_EV_COUNT];
	size_t n = pw_sorted_calls(r, ids);
	char cell[4][32];
	uint64_t calls = 0, bytes = 0, errors = 0;
	for (size_t i = 0; i < n; i++) {
		calls = add_saturating(calls, r->calls[ids[i]].count);
		bytes = add_saturating(bytes, r->calls[ids[i]].bytes);
		errors = add_saturating(errors, r->calls[ids[i]].errors);
	}
	/* The first row is the whole rank, as in Lightning's SimpleProfiler. */
	if (pw_table_add_row(&t))
		goto oom;
	pw_format_duration(cell[0], sizeof cell[0], r->wall_ns);
	pw_format_bytes(cell[1], sizeof cell[1], bytes);
	pw_table_set(&t, 0, "Total");
	pw_table_set(&t, 1, "-");
	pw_table_set(&t, 2, "%" PRIu64, calls);
	pw_table_set(&t, 3, "%s", cell[0]);
	pw_table_set(&t, 4, "%s", r->wall_ns ? "100 %" : "-");
	pw_table_set(&t, 5, "%s", cell[1]);
	pw_table_set(&t, 6, "%" PRIu64, errors);
	for (size_t i = 0; i < n; i++) {
		const struct pw_call_stat *c = &r->calls[ids[i]];
		enum pw_event_kind kind = pw_events[ids[i]].kind;
		if (pw_table_add_row(&t))
			goto oom;
		pw_format_mean(cell[0], sizeof cell[0], c->total_ns, c->count);
		pw_format_duration(cell[1], sizeof cell[1], c->total_ns);
		format_percentage(cell[2], sizeof cell[2], c->total_ns, r->wall_ns);
		if (c->bytes || kind == PW_K_READ || kind == PW_K_WRITE)
			pw_format_bytes(cell[3], sizeof cell[3], c->bytes);
		else
			snprintf(cell[3], sizeof cell[3], "-");
		pw_table_set(&t, 0, "%s.%s", pw_domain_names[pw_events[ids[i]].domain], pw_events[ids[i]].name);
		pw_table_set(&t, 1, "%s", cell[0]);
		pw_table_set(&t, 2, "%" PRIu64, c->count);
		pw_table_set(&t, 3, "%s", cell[1]);
		pw_table_set(&t, 4, "%s", cell[2]);
		pw_table_set(&t, 5, "%s", cell[3]);
		pw_table_set(&t, 6, "%" PRIu64, c->errors);
	}
	fputs("Calls (percentage of the rank's wall time; threads can add up past 100 %)\n", f);
	pw_table_print(f, &t);
	fputc('\n', f);
	pw_table_free(&t);
	return 0;
oom:
	pw_table_free(&t);
	return -1;
}

static int compare_files(const void *a, const void *b)
{
	const struct pw_file_stat *fa = *(const struct pw_file_stat *const *)a;
	const struct pw_file_stat *fb = *(const struct pw_file_stat *const *)b;
	if (fa->time_ns != fb->time_ns)
		return fa->time_ns > fb->time_ns ? -1 : 1;
	return strcmp(pw_report_str(fa->path), pw_report_str(fb->path));
}

static void format_throughput(char *buf, size_t len, uint64_t bytes, uint64_t time_ns)
{
	if (!time_ns) {
		snprintf(buf, len, "-");
		return;
	}
	double per_s = (double)bytes * 1e9 / (double)time_ns;
	pw_format_bytes(buf, len, per_s >= 1.8e19 ? UINT64_MAX : (uint64_t)per_s);
	strncat(buf, "/s", len - strlen(buf) - 1);
}

static int print_files(FILE *f, const struct pw_rank_report *r)
{
	if (!r->nfiles) {
		fputs("Files: none recorded\n\n", f);
		return 0;
	}
	static const char *const headers[] = {"File",  "Reads",     "Read", "Writes",    "Written",
					      "Stats", "Dir reads", "Time", "Throughput"};
	struct pw_table t = {.ncols = 9, .headers = headers, .align = "lrrrrrrrr"};
	const struct pw_file_stat **order = malloc(r->nfiles * sizeof *order);
	if (!order)
		return -1;
	for (size_t i = 0; i < r->nfiles; i++)
		order[i] = &r->files[i];
	qsort(order, r->nfiles, sizeof *order, compare_files);
	size_t shown = r->nfiles < MAX_FILE_ROWS ? r->nfiles : MAX_FILE_ROWS;
	for (size_t i = 0; i < shown; i++) {
		const struct pw_file_stat *s = order[i];
		char cut[PW_CELL_MAX], cell[4][32];
		if (pw_table_add_row(&t)) {
			free(order);
			pw_table_free(&t);
			return -1;
		}
		pw_format_bytes(cell[0], sizeof cell[0], s->read_bytes);
		pw_format_bytes(cell[1], sizeof cell[1], s->write_bytes);
		pw_format_duration(cell[2], sizeof cell[2], s->time_ns);
		format_throughput(cell[3], sizeof cell[3], add_saturating(s->read_bytes, s->write_bytes), s->time_ns);
		pw_table_set(&t, 0, "%s", cut_left(cut, sizeof cut, s->path));
		pw_table_set(&t, 1, "%" PRIu64, s->reads);
		pw_table_set(&t, 2, "%s", cell[0]);
		pw_table_set(&t, 3, "%" PRIu64, s->writes);
		pw_table_set(&t, 4, "%s", cell[1]);
		pw_table_set(&t, 5, "%" PRIu64, s->stats);
		pw_table_set(&t, 6, "%" PRIu64, s->dir_reads);
		pw_table_set(&t, 7, "%s", cell[2]);
		pw_table_set(&t, 8, "%s", cell[3]);
	}
	fprintf(f, "Files (%zu, by time in calls; Stats: stat-family and access calls, Dir reads: readdir and "
		   "getdents64)\n", r->nfiles);
	pw_table_print(f, &t);
	if (r->nfiles > shown)
		fprintf(f, "... %zu more files\n", r->nfiles - shown);
	fputc('\n', f);
	free(order);
	pw_table_free(&t);
	return 0;
}

static int print_waits(FILE *f, const struct pw_rank_report *r)
{
	static const char *const headers[] = {"Wait", "Count", "Total", "Mean", "Max"};
	struct pw_table t = {.ncols = 5, .headers = headers, .align = "lrrrr"};
	int ids[PW_EV_COUNT];
	size_t n = pw_sorted_calls(r, ids);
	for (size_t i = 0; i < n; i++) {
		const struct pw_event_info *ev = &pw_events[ids[i]];
		const struct pw_call_stat *c = &r->calls[ids[i]];
		char cell[3][32];
		if (ev->domain != PW_DOM_WAIT && ev->kind != PW_K_WAIT)
			continue;
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		pw_format_duration(cell[0], sizeof cell[0], c->total_ns);
		pw_format_mean(cell[1], sizeof cell[1], c->total_ns, c->count);
		pw_format_duration(cell[2], sizeof cell[2], c->max_ns);
		pw_table_set(&t, 0, "%s.%s", pw_domain_names[ev->domain], ev->name);
		pw_table_set(&t, 1, "%" PRIu64, c->count);
		pw_table_set(&t, 2, "%s", cell[0]);
		pw_table_set(&t, 3, "%s", cell[1]);
		pw_table_set(&t, 4, "%s", cell[2]);
	}
	if (t.nrows) {
		fputs("Waits (sleeps, readiness and thread waits, waiting for child processes)\n", f);
		pw_table_print(f, &t);
		fputc('\n', f);
	} else {
		fputs("Waits: none recorded\n\n", f);
	}
	pw_table_free(&t);
	return 0;
}

static int compare_libs(const void *a, const void *b)
{
	const struct pw_lib_stat *la = *(const struct pw_lib_stat *const *)a;
	const struct pw_lib_stat *lb = *(const struct pw_lib_stat *const *)b;
	if (la->load_ns != lb->load_ns)
		return la->load_ns > lb->load_ns ? -1 : 1;
	return strcmp(pw_report_str(la->path), pw_report_str(lb->path));
}

static int print_libraries(FILE *f, const struct pw_rank_report *r)
{
	if (!r->nlibs) {
		fputs("Libraries loaded: none recorded\n\n", f);
		return 0;
	}
	static const char *const headers[] = {"Library", "Loads", "Load time", "Failures"};
	struct pw_table t = {.ncols = 4, .headers = headers, .align = "lrrr"};
	const struct pw_lib_stat **order = malloc(r->nlibs * sizeof *order);
	if (!order)
		return -1;
	for (size_t i = 0; i < r->nlibs; i++)
		order[i] = &r->libs[i];
	qsort(order, r->nlibs, sizeof *order, compare_libs);
	size_t shown = r->nlibs < MAX_LIB_ROWS ? r->nlibs : MAX_LIB_ROWS;
	for (size_t i = 0; i < shown; i++) {
		char cut[PW_CELL_MAX], dur[32];
		if (pw_table_add_row(&t)) {
			free(order);
			pw_table_free(&t);
			return -1;
		}
		pw_format_duration(dur, sizeof dur, order[i]->load_ns);
		pw_table_set(&t, 0, "%s", cut_left(cut, sizeof cut, order[i]->path));
		pw_table_set(&t, 1, "%" PRIu64, order[i]->loads);
		pw_table_set(&t, 2, "%s", dur);
		pw_table_set(&t, 3, "%" PRIu64, order[i]->failures);
	}
	fprintf(f, "Libraries loaded (%zu, by load time)\n", r->nlibs);
	pw_table_print(f, &t);
	if (r->nlibs > shown)
		fprintf(f, "... %zu more libraries\n", r->nlibs - shown);
	fputc('\n', f);
	free(order);
	pw_table_free(&t);
	return 0;
}

/* Which threads dropped: the 5 that dropped most in each process that dropped. */
static void write_drops_by_thread(FILE *f, const struct pw_rank_report *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct pw_proc *p = &r->procs[i];
		if (!p->nthread_drops)
			continue;
		fprintf(f, "  pid %d dropped %" PRIu64 ":", p->pid, p->dropped);
		for (size_t k = 0; k < p->nthread_drops && k < 5; k++)
			fprintf(f, "%s tid %u: %" PRIu64, k ? "," : "", p->thread_drops[k].tid, p->thread_drops[k].dropped);
		if (p->nthread_drops > 5)
			fprintf(f, " (and %zu more threads)", p->nthread_drops - 5);
		fputc('\n', f);
	}
}

/* ", and N more" after the first of n processes named. */
static void print_more(FILE *f, uint32_t n)
{
	if (n > 1)
		fprintf(f, " and %" PRIu32 " more", n - 1);
}

static void print_coverage(FILE *f, const struct pw_rank_report *r)
{
	char seen[32], kernel[32], left_out[32];
	fputs("Coverage\n", f);
	if (r->kernel_bytes) {
		pw_format_bytes(seen, sizeof seen, r->seen_bytes);
		pw_format_bytes(kernel, sizeof kernel, r->kernel_bytes);
		pw_format_bytes(left_out, sizeof left_out, r->io_left_out);
		fprintf(f,
			"  The wrappers accounted for %.1f%% of the bytes the kernel counted (rchar+wchar): %s of %s "
			"(left out: %s that the exec, the loader and profwrap itself read).\n",
			r->coverage * 100.0, seen, kernel, left_out);
	} else if (r->io_checked) {
		fputs("  The kernel counted no bytes read or written.\n", f);
	} else {
		fputs(r->io_unchecked ? "  The check could not be made: no process's counters can be compared (below).\n"
				      : "  No process reported the kernel's I/O counters (they are read at exit).\n",
		      f);
	}
	if (r->io_unchecked) {
		fprintf(f, "  Not checked: %" PRIu32 " process%s (pid %d", r->io_unchecked,
			r->io_unchecked == 1 ? "" : "es", r->io_unchecked_pid);
		print_more(f, r->io_unchecked);
		fputs("): killed before reporting the kernel's counters, or the parent of a child that was (the kernel "
		      "adds a reaped child's counters to its parent's).\n",
		      f);
	}
	if (r->io_uring_procs) {
		fprintf(f, "WARNING: %" PRIu32 " process%s (pid %d", r->io_uring_procs, r->io_uring_procs == 1 ? "" : "es",
			r->io_uring_pid);
		print_more(f, r->io_uring_procs);
		fputs(") set up io_uring: the I/O done through it is not measured (neither the wrappers nor the "
		      "kernel's rchar/wchar see it).\n",
		      f);
	}
	/* Small gaps are libc's own reads (locale files): only a real gap is worth a warning. */
	if (r->kernel_bytes && r->coverage < 0.95 && r->kernel_bytes > r->seen_bytes + (1u << 20))
		fprintf(f,
			"WARNING: %.1f%% of the bytes the kernel counted went through calls profwrap did not see%s "
			"(docs/limits.md: what profwrap does not see).\n",
			(1.0 - r->coverage) * 100.0, r->dropped ? ", or are among the dropped events below" : "");
	if (r->shm_refused)
		fprintf(f,
			"WARNING: %" PRIu64 " events dropped because /dev/shm had too little room: profwrap leaves a "
			"quarter of it (at least 16 MiB) to the program; give the job a larger /dev/shm (docker "
			"--shm-size).\n",
			r->shm_refused);
	if (r->dropped > r->shm_refused)
		fprintf(f,
			"WARNING: %" PRIu64 " events dropped: a thread's ring filled faster than the collector drained "
			"it (raise --ring-size), more threads recorded at once than the process has lanes (raise "
			"PROFWRAP_LANES, default 128), calls came from a signal handler that interrupted a record, or "
			"ranges could not be followed (Lightning actions nested deeper than 16, two events each).\n",
			r->dropped - r->shm_refused);
	if (r->dropped)
		write_drops_by_thread(f, r);
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].salvaged_at)
			fprintf(f,
				"WARNING: the collector died while pid %d ran: `profwrap salvage` recovered its last %" PRIu64
				" events from shared memory; what its ring could not hold until then is in the dropped "
				"count (%" PRIu64 ").\n",
				r->procs[i].pid, r->procs[i].salvaged_events, r->procs[i].dropped);
	if (r->strings_dropped)
		fprintf(f, "WARNING: %" PRIu64 " strings dropped: string arena full; those files are not named in the report.\n",
			r->strings_dropped);
	if (r->skipped)
		fprintf(f, "WARNING: %" PRIu64 " records refused by the reader: the raw trace is damaged.\n",
			r->skipped);
	pw_stacks_write_warnings(f, r);
}

int pw_write_rank_text(const struct pw_analysis *a, const struct pw_rank_report *r, const char *path, char *err,
		       size_t errlen)
{
	FILE *f = pw_report_open(path, err, errlen);
	if (!f)
		return -1;
	print_header(f, a, r);
	print_incomplete(f, a, r);
	print_findings(f, r);
	if (pw_ranges_write_text(f, r) || print_processes(f, r) || print_calls(f, r) || pw_stacks_write_text(f, r) ||
	    pw_act_write_text(f, r) || pw_gpu_write_text(f, r) || print_files(f, r) ||
	    print_waits(f, r) || print_libraries(f, r)) {
		return pw_report_abandon(f, path, "out of memory", err, errlen);
	}
	print_coverage(f, r);
	return pw_report_close(f, path, err, errlen);
}
