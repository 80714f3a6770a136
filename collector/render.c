/* The render step (render.h): the model, then every writer, then the merge. */
#define _GNU_SOURCE
#include "render.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "lib/file_names.h"
#include "merge/merge.h"
#include "model/call_stacks.h"
#include "report/report_call_stacks.h"
#include "report/report_html.h"
#include "report/report_json.h"
#include "report/report_sqlite.h"
#include "report/report_text.h"
#include "report/report_trace.h"

int pw_write_reports(const struct pw_analysis *a, char *err, size_t errlen)
{
	char path[4352], base[128];
	for (size_t i = 0; i < a->nranks; i++) {
		const struct pw_rank_report *r = &a->ranks[i];
		pw_rank_file_base(r, base, sizeof base);
		snprintf(path, sizeof path, "%s/%s.txt", a->out_dir, base);
		if (pw_write_rank_text(a, r, path, err, errlen) < 0)
			return -1;
		snprintf(path, sizeof path, "%s/%s.json", a->out_dir, base);
		if (pw_write_rank_json(a, r, path, err, errlen) < 0)
			return -1;
		snprintf(path, sizeof path, "%s/%s.trace.json", a->out_dir, base);
		if (pw_write_rank_trace(a, r, path, err, errlen) < 0)
			return -1;
		snprintf(path, sizeof path, "%s/%s.html", a->out_dir, base);
		if (pw_write_rank_html(a, r, path, err, errlen) < 0)
			return -1;
		snprintf(path, sizeof path, "%s/%s.folded", a->out_dir, base);
		if (pw_stacks_write_folded(r, path, err, errlen) < 0)
			return -1;
	}
	/* the last collector of a job to finish (several may share OUT) finds every rank there; a node's
	 * collector that saw only launchers has no rank to add, nor one whose ranks the merge does not believe */
	for (size_t i = 0; i < a->nranks; i++)
		if (a->ranks[i].rank != PW_RANK_LAUNCHER && a->ranks[i].rank < PW_MERGE_MAX_WORLD)
			return pw_merge(a->out_dir, 1, err, errlen);
	return 0;
}

/* Whether name is of the report of one of own's traces (pw_raw_name_group). */
static int of_groups(const char *name, char *const *own, size_t nown)
{
	size_t g = pw_raw_name_group(name);
	for (size_t i = 0; g && i < nown; i++)
		if (pw_raw_name_group(own[i]) == g && strncmp(own[i], name, g) == 0)
			return 1;
	return 0;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The raw traces of the reports that own's traces go to: every trace in raw_dir of those ranks (or of those
 * hosts' launchers), whichever collector wrote it (a process that lost its session directory starts a
 * collector of its own, and so does one that starts after the run's collector has ended). *n of them in
 * *names. Returns 0, or -1 with the reason in err. */
static int group_files(const char *raw_dir, char *const *own, size_t nown, char ***names, size_t *n, char *err,
		       size_t errlen)
{
	size_t cap = nown + 16;
	*n = 0;
	*names = malloc(cap * sizeof **names);
	DIR *d = *names ? opendir(raw_dir) : NULL;
	int failed = !d;
	for (struct dirent *e; !failed && (e = readdir(d));) {
		if (!of_groups(e->d_name, own, nown))
			continue;
		if (*n == cap) {
			char **more = realloc(*names, 2 * cap * sizeof **names);
			if (!more) {
				failed = 1;
				break;
			}
			*names = more;
			cap *= 2;
		}
		if (!((*names)[*n] = strdup(e->d_name)))
			failed = 1;
		else
			++*n;
	}
	int saved = errno;
	if (d)
		closedir(d);
	if (!failed)
		return 0;
	snprintf(err, errlen, "cannot list %s: %s", raw_dir, strerror(saved));
	free_names(*names, *n);
	*names = NULL;
	return -1;
}

/* Renders hold OUT/raw locked, one at a time: collectors that share OUT render the same reports from each
 * other's traces, and the last to end, which sees them all whole, must be the last to write. Returns the
 * descriptor that holds the lock (closing it releases it), or -1 when it cannot be had (rendered anyway). */
static int lock_raw(const char *raw_dir)
{
	int fd = open(raw_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	while (fd >= 0 && flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	return fd;
}

static int analyze(const char *out_dir, char *const *raw_names, size_t nraw, struct pw_analysis *a, char *err,
		   size_t errlen)
{
	char raw[4352], **names;
	size_t n;
	if (!raw_names)
		return pw_analyze(out_dir, a, err, errlen);
	snprintf(raw, sizeof raw, "%s/raw", out_dir);
	if (group_files(raw, raw_names, nraw, &names, &n, err, errlen) < 0)
		return -1;
	int rc = pw_analyze_files(out_dir, names, n, a, err, errlen);
	free_names(names, n);
	return rc;
}

int pw_render(const char *out_dir, char *const *raw_names, size_t nraw, int summarise_present,
	      struct pw_render_counts *counts, char *err, size_t errlen)
{
	char raw[4352];
	snprintf(raw, sizeof raw, "%s/raw", out_dir);
	int lock = lock_raw(raw);
	struct pw_analysis a;
	int rc = analyze(out_dir, raw_names, nraw, &a, err, errlen);
	if (rc < 0) {
		if (lock >= 0)
			close(lock);
		return -1;
	}
	if (counts) {
		counts->reports = a.nranks;
		counts->ranks = 0;
		for (size_t i = 0; i < a.nranks; i++)
			counts->ranks += a.ranks[i].rank != PW_RANK_LAUNCHER;
	}
	rc = pw_write_reports(&a, err, errlen);
	if (rc > 0 && summarise_present)
		rc = pw_merge(out_dir, 0, err, errlen) < 0 ? -1 : 0;
	pw_analysis_free(&a);
	if (lock >= 0)
		close(lock);
	return rc;
}

int pw_export_sqlite(const char *out_dir, const char *dest_dir, size_t *nranks, char *err, size_t errlen)
{
	char raw[4352], path[4352], base[128];
	snprintf(raw, sizeof raw, "%s/raw", out_dir);
	int lock = lock_raw(raw);
	struct pw_analysis a;
	int rc = pw_analyze_whole(out_dir, &a, err, errlen);
	if (lock >= 0)
		close(lock);
	if (rc < 0)
		return -1;
	*nranks = 0;
	for (size_t i = 0; i < a.nranks && rc == 0; i++) {
		pw_rank_file_base(&a.ranks[i], base, sizeof base);
		snprintf(path, sizeof path, "%s/%s.sqlite", dest_dir, base);
		rc = pw_write_rank_sqlite(&a, &a.ranks[i], path, err, errlen);
		*nranks += rc == 0;
	}
	pw_analysis_free(&a);
	return rc;
}
