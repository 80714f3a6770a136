#define _GNU_SOURCE
#include "report_format.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/pw_session.h"

/* Reports are written to PATH.tmp and renamed into place when whole, so a reader polling for PATH (a job
 * script waiting for rank0.json) never sees half a file. PATH.tmp is made anew (pw_create_file), never
 * through a link planted there, and the rename replaces whatever has the name PATH, a link included, without
 * following it. Reports are 0600: a profile shows what a program did, to its user only. */
static void tmp_path(char *buf, size_t size, const char *path)
{
	snprintf(buf, size, "%s.tmp", path);
}

FILE *pw_report_open(const char *path, char *err, size_t errlen)
{
	char tmp[4400];
	tmp_path(tmp, sizeof tmp, path);
	int fd = pw_create_file(tmp);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
	}
	return f;
}

int pw_report_close(FILE *f, const char *path, char *err, size_t errlen)
{
	char tmp[4400];
	tmp_path(tmp, sizeof tmp, path);
	/* A failed write leaves its errno behind; fclose() sets its own when the final flush fails. */
	int failed = ferror(f);
	int saved = errno;
	if (fclose(f) != 0) {
		failed = 1;
		saved = errno;
	}
	if (!failed && rename(tmp, path) == 0)
		return 0;
	if (!failed)
		saved = errno;
	unlink(tmp);
	snprintf(err, errlen, "cannot write %s: %s", path, strerror(saved ? saved : EIO));
	return -1;
}

int pw_report_abandon(FILE *f, const char *path, const char *why, char *err, size_t errlen)
{
	char tmp[4400];
	tmp_path(tmp, sizeof tmp, path);
	fclose(f);
	unlink(tmp);
	snprintf(err, errlen, "cannot write %s: %s", path, why);
	return -1;
}

void pw_make_printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

int pw_table_add_row(struct pw_table *t)
{
	if (t->nrows == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 16;
		char(*cells)[PW_CELL_MAX] = realloc(t->cells, ncap * t->ncols * sizeof *cells);
		if (!cells)
			return -1;
		t->cells = cells;
		t->cap = ncap;
	}
	memset(t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof t->cells[0]);
	t->nrows++;
	return 0;
}

void pw_table_set(struct pw_table *t, size_t col, const char *fmt, ...)
{
	char *cell = t->cells[(t->nrows - 1) * t->ncols + col];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cell, PW_CELL_MAX, fmt, ap);
	va_end(ap);
	pw_make_printable(cell);
}

static void print_rule(FILE *f, size_t width)
{
	for (size_t i = 0; i < width; i++)
		fputc('-', f);
	fputc('\n', f);
}

static void print_row(FILE *f, const struct pw_table *t, const size_t *widths, const char *const *cells)
{
	for (size_t c = 0; c < t->ncols; c++)
		fprintf(f, t->align[c] == 'r' ? "| %*s " : "| %-*s ", (int)widths[c], cells[c]);
	fputs("|\n", f);
}

void pw_table_print(FILE *f, const struct pw_table *t)
{
	size_t widths[PW_TABLE_MAX_COLS], width = 1;
	for (size_t c = 0; c < t->ncols; c++) {
		widths[c] = strlen(t->headers[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t len = strlen(t->cells[r * t->ncols + c]);
			if (len > widths[c])
				widths[c] = len;
		}
		width += widths[c] + 3;
	}
	print_rule(f, width);
	print_row(f, t, widths, t->headers);
	print_rule(f, width);
	for (size_t r = 0; r < t->nrows; r++) {
		const char *cells[PW_TABLE_MAX_COLS];
		for (size_t c = 0; c < t->ncols; c++)
			cells[c] = t->cells[r * t->ncols + c];
		print_row(f, t, widths, cells);
	}
	print_rule(f, width);
}

void pw_table_free(struct pw_table *t)
{
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

const char *pw_end_how_name(int how)
{
	switch (how) {
	case PW_END_EXITED:
		return "exited";
	case PW_END_EXECED:
		return "exec";
	case PW_END_VANISHED:
		return "vanished";
	case PW_END_RUNNING:
		return "running";
	case PW_END_DIED_IN_EXIT:
		return "died-in-exit";
	case PW_END_UNRECORDED:
		return "unrecorded";
	default:
		return "unknown";
	}
}

static const char *const signal_names[] = {
	[SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",       [SIGQUIT] = "SIGQUIT", [SIGILL] = "SIGILL",
	[SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",     [SIGBUS] = "SIGBUS",   [SIGFPE] = "SIGFPE",
	[SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1",     [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
	[SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM",     [SIGTERM] = "SIGTERM", [SIGCHLD] = "SIGCHLD",
	[SIGCONT] = "SIGCONT", [SIGSTOP] = "SIGSTOP",     [SIGTSTP] = "SIGTSTP", [SIGTTIN] = "SIGTTIN",
	[SIGTTOU] = "SIGTTOU", [SIGURG] = "SIGURG",       [SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ",
	[SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH", [SIGIO] = "SIGIO",
	[SIGPWR] = "SIGPWR",   [SIGSYS] = "SIGSYS",
};

void pw_format_end(char *buf, size_t len, const struct pw_proc *p)
{
	if (p->signal > 0) {
		size_t n = sizeof signal_names / sizeof signal_names[0];
		if ((size_t)p->signal < n && signal_names[p->signal])
			snprintf(buf, len, "killed by %s", signal_names[p->signal]);
		else
			snprintf(buf, len, "killed by signal %d", p->signal);
	} else if (p->how == PW_END_UNRECORDED) {
		snprintf(buf, len, "not recorded (%s)",
			 p->unrecorded_why == PW_UNRECORDED_NO_SHM ? "no room in /dev/shm" : "could not connect");
	} else if (p->how == PW_END_EXECED) {
		snprintf(buf, len, "exec -> %s", pw_report_str(p->exec_path));
	} else if (p->exit_code >= 0) {
		/* also when only a parent's wait saw the status */
		snprintf(buf, len, "exit %d", p->exit_code);
	} else if (p->how == PW_END_EXITED) {
		snprintf(buf, len, "exited (status unknown)");
	} else if (p->how == PW_END_DIED_IN_EXIT) {
		snprintf(buf, len, "died while exiting (in an atexit handler or destructor)");
	} else if (p->how == PW_END_VANISHED) {
		snprintf(buf, len, "ended without exit (crashed or killed)");
	} else if (p->how == PW_END_RUNNING) {
		snprintf(buf, len, "still running at end");

	} else {
		snprintf(buf, len, "unknown (trace cut short)");
	}
}

int pw_event_is_call(int ev)
{
	if (ev <= PW_EV_PAD || ev >= PW_EV_COUNT)
		return 0;
	enum pw_event_kind k = pw_events[ev].kind;
	return k != PW_K_FDINFO && !pw_kind_is_activity(k) && !pw_kind_is_range(k) && k != PW_K_NVTX_NAME &&
	       k != PW_K_CAPTURE && k != PW_K_MODULE && k != PW_K_PYSTACK && k != PW_K_SAMPLE && k != PW_K_COST;
}

static int compare_calls(const void *a, const void *b, void *ctx)
{
	const struct pw_rank_report *r = ctx;
	int ia = *(const int *)a, ib = *(const int *)b;
	const struct pw_call_stat *ca = &r->calls[ia], *cb = &r->calls[ib];
	if (ca->total_ns != cb->total_ns)
		return ca->total_ns > cb->total_ns ? -1 : 1;
	if (ca->count != cb->count)
		return ca->count > cb->count ? -1 : 1;
	return ia - ib;
}

size_t pw_sorted_calls(const struct pw_rank_report *r, int ids[PW_EV_COUNT])
{
	size_t n = 0;
	for (int ev = 0; ev < PW_EV_COUNT; ev++)
		if (pw_event_is_call(ev) && r->calls[ev].count > 0)
			ids[n++] = ev;
	qsort_r(ids, n, sizeof ids[0], compare_calls, (void *)r);
	return n;
}

const char *pw_cut_right(char *buf, size_t len, const char *s, size_t width)
{
	s = s && *s ? s : "?";
	if (strlen(s) <= width || width < 4)
		return s;
	snprintf(buf, len, "%.*s...", (int)(width - 3), s);
	return buf;
}

void pw_print_wrapped(FILE *f, const char *first, const char *indent, const char *text, size_t width)
{
	const char *prefix = first;
	const char *p = text ? text : "";
	do {
		size_t room = width > strlen(prefix) + 20 ? width - strlen(prefix) : 20;
		size_t n = strlen(p), cut = n;
		if (n > room) {
			cut = room;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0) { /* one long word: up to the next space */
				cut = room;
				while (cut < n && p[cut] != ' ')
					cut++;
			}
		}
		fprintf(f, "%s%.*s\n", prefix, (int)cut, p);
		p += cut;
		while (*p == ' ')
			p++;
		prefix = indent;
	} while (*p);
}

/* "3 processes were not recorded (pid 412, tr, and others): ...", or "". */
static int unrecorded_reason(char *buf, size_t len, const struct pw_rank_report *r)
{
	const struct pw_proc *first = NULL;
	size_t n = 0, no_shm = 0;
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].how == PW_END_UNRECORDED) {
			if (!n++)
				first = &r->procs[i];
			no_shm += r->procs[i].unrecorded_why == PW_UNRECORDED_NO_SHM;
		}
	if (!n)
		return snprintf(buf, len, "%s", "");
	char name[64];
	const char *argv = first->argv ? first->argv : "";
	snprintf(name, sizeof name, "%.*s", (int)strcspn(argv, " "), argv);
	const char *why = no_shm == n ? "/dev/shm had no room for their shared memory beside the quarter of it "
					"(at least 16 MiB) that profwrap leaves to the program"
			  : no_shm	 ? "/dev/shm had no room for the shared memory of some, the collector's backlog "
					   "stayed full for the others"
					 : "they could not hand their shared memory to the collector, whose backlog stayed full";
	return snprintf(buf, len, "%zu process%s not recorded (pid %d, %s%s): %s; %s listed with how \"unrecorded\"",
			n, n == 1 ? " was" : "es were", first->pid, name, n == 1 ? "" : ", and others", why,
			n == 1 ? "it is" : "they are");
}

void pw_incomplete_reason(char *buf, size_t len, const struct pw_rank_report *r, const char *out_dir)
{
	char who[96];
	int at = unrecorded_reason(buf, len, r);
	if (!r->unfinished)
		return;
	if (at < 0 || (size_t)at >= len)
		return;
	buf += at;
	len -= (size_t)at;
	if (at > 0 && len > 2) {
		snprintf(buf, len, "; ");
		buf += 2;
		len -= 2;
	}
	if (r->unfinished == 1)
		snprintf(who, sizeof who, "the raw trace of pid %d stops before the process ended", r->unfinished_pid);
	else
		snprintf(who, sizeof who, "the raw traces of %zu processes (pid %d and others) stop before they ended",
			 r->unfinished, r->unfinished_pid);
	snprintf(buf, len,
		 "%s: the collector could not write the rest (out of disk space, or killed) or is still writing it; what "
		 "it could not write waits in shared memory: `profwrap salvage %s` adds it and writes this report again",
		 who, out_dir ? out_dir : "OUT");
}

void pw_html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 && *s != 0x7f)
				fputc(*s, f);
		}
	}
}
