/* profwrap merge: OUT/summary.txt and OUT/summary.json from the "summary" objects of OUT/rank<R>.json and
 * OUT/launcher-*.json (merge.h says what is kept in memory). */
#define _GNU_SOURCE
#include "merge.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/json.h"
#include "../lib/json_read.h"
#include "../report/rank_summary.h"
#include "../report/report_format.h"
#include "merge_state.h"

#define JSON_DEPTH 64     /* the reports nest at most PW_JSON_MAX_DEPTH (32) */
#define KEY_MAX 64
#define LINE_WIDTH 119    /* summary.txt stays under 120 columns */
#define FRESH_MARGIN_S 1  /* see merge_locked() */
#define NBSP NBSP_MARK     /* a space that does not break a line (print_paragraph) */



enum { WANT_COLLECTIVES = 1, WANT_PHASES = 2 };

__attribute__((format(printf, 1, 2))) static void warn(const char *fmt, ...)
{
	va_list ap;
	fputs("profwrap: merge: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorts v (n > 0) and returns its median, the mean of the middle two for even n (as summary.c). */
static uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, compare_u64);
	if (n % 2)
		return v[n / 2];
	uint64_t a = v[n / 2 - 1], b = v[n / 2];
	return a / 2 + b / 2 + (a % 2 + b % 2) / 2; /* without overflow */
}

/* ---- reading one file ------------------------------------------------------------------------------- */

static int key_is(const char *key, size_t len, const char *name)
{
	return len == strlen(name) && memcmp(key, name, len) == 0;
}

/* Missing keys read as 0 or empty; so does null. */
static int read_u64(struct pw_jr *r, uint64_t *v)
{
	if (pw_jr_peek(r) == PW_JR_NULL) {
		*v = 0;
		return pw_jr_null(r);
	}
	return pw_jr_u64(r, v);
}

static int read_i64(struct pw_jr *r, int64_t *v)
{
	if (pw_jr_peek(r) == PW_JR_NULL) {
		*v = 0;
		return pw_jr_null(r);
	}
	return pw_jr_i64(r, v);
}

static int read_str(struct pw_jr *r, char *buf, size_t cap)
{
	if (pw_jr_peek(r) == PW_JR_NULL) {
		buf[0] = 0;
		return pw_jr_null(r);
	}
	return pw_jr_string(r, buf, cap, NULL);
}

static int read_bool(struct pw_jr *r, int *v)
{
	if (pw_jr_peek(r) == PW_JR_NULL) {
		*v = 0;
		return pw_jr_null(r);
	}
	return pw_jr_bool(r, v);
}

/* "phases": [{"name": ..., "ns": ...}, ...]: the first PW_MERGE_MAX_PHASES named ones, a name seen twice
 * summed. */
static int parse_phases(struct pw_jr *r, struct summary *s)
{
	if (pw_jr_peek(r) == PW_JR_NULL)
		return pw_jr_null(r);
	if (pw_jr_enter_array(r))
		return -1;
	int rc;
	while ((rc = pw_jr_next_item(r)) > 0) {
		if (s->nphases >= PW_MERGE_MAX_PHASES) {
			if (pw_jr_skip(r))
				return -1;
			continue;
		}
		struct phase p = {{0}, 0};
		char key[KEY_MAX];
		size_t klen;
		if (pw_jr_enter_object(r))
			return -1;
		while ((rc = pw_jr_next_key(r, key, sizeof key, &klen)) > 0) {
			if (key_is(key, klen, "name"))
				rc = read_str(r, p.name, sizeof p.name);
			else if (key_is(key, klen, "ns"))
				rc = read_u64(r, &p.ns);
			if (rc < 0)
				return -1;
		}
		if (rc < 0)
			return -1;
		if (!p.name[0])
			continue;
		size_t i = 0;
		while (i < s->nphases && strcmp(s->phases[i].name, p.name) != 0)
			i++;
		if (i < s->nphases)
			s->phases[i].ns = sat_add(s->phases[i].ns, p.ns);
		else
			s->phases[s->nphases++] = p;
	}
	return rc;
}

/* One {"domain": ..., "entries_ns": [...], "truncated": ...} into the next free slot; kept when it has a
 * domain not seen before in this file. */
static int parse_collective(struct pw_jr *r, struct summary *s)
{
	if (s->ncolls >= PW_MERGE_MAX_DOMAINS) {
		s->colls_dropped = 1;
		return pw_jr_skip(r);
	}
	struct file_coll *c = &s->colls[s->ncolls];
	c->domain[0] = 0;
	c->n = 0;
	c->truncated = 0;
	char key[KEY_MAX];
	size_t klen;
	int rc;
	if (pw_jr_enter_object(r))
		return -1;
	while ((rc = pw_jr_next_key(r, key, sizeof key, &klen)) > 0) {
		if (key_is(key, klen, "domain")) {
			rc = read_str(r, c->domain, sizeof c->domain);
		} else if (key_is(key, klen, "truncated")) {
			int t;
			rc = read_bool(r, &t);
			c->truncated |= t;
		} else if (key_is(key, klen, "entries_ns")) {
			if (pw_jr_peek(r) == PW_JR_NULL) {
				rc = pw_jr_null(r);
				continue;
			}
			if (pw_jr_enter_array(r))
				return -1;
			c->n = 0;
			while ((rc = pw_jr_next_item(r)) > 0) {
				if (c->n >= PW_MERGE_MAX_COLLECTIVES) {
					c->truncated = 1;
					if (pw_jr_skip(r))
						return -1;
					continue;
				}
				if (c->n == c->cap) {
					size_t ncap = c->cap ? c->cap * 2 : 1024;
					if (ncap > PW_MERGE_MAX_COLLECTIVES)
						ncap = PW_MERGE_MAX_COLLECTIVES;
					uint64_t *off = realloc(c->off, ncap * sizeof *off);
					if (!off)
						return pw_jr_fail(r, pw_jr_offset(r), "out of memory");
					c->off = off;
					c->cap = ncap;
				}
				if (pw_jr_u64(r, &c->off[c->n]))
					return -1;
				c->n++;
			}
		}
		if (rc < 0)
			return -1;
	}
	if (rc < 0)
		return -1;
	if (!c->domain[0])
		return 0;
	for (size_t i = 0; i < s->ncolls; i++)
		if (strcmp(s->colls[i].domain, c->domain) == 0)
			return 0; /* the first list of a domain counts */
	s->ncolls++;
	return 0;
}

static int parse_collectives(struct pw_jr *r, struct summary *s)
{
	if (pw_jr_peek(r) == PW_JR_NULL)
		return pw_jr_null(r);
	if (pw_jr_enter_array(r))
		return -1;
	int rc;
	while ((rc = pw_jr_next_item(r)) > 0)
		if (parse_collective(r, s))
			return -1;
	return rc;
}

static int member_of(const char *key, size_t len)
{
	for (int m = 0; m < PW_SUM_COUNT; m++)
		if (key_is(key, len, pw_summary_members[m].key))
			return m;
	return -1;
}

/* The value of member m into s, as its type says; an array only when this pass wants it. */
static int read_member(struct pw_jr *r, struct summary *s, int m, int flags)
{
	const struct pw_summary_member_info *info = &pw_summary_members[m];
	if (pw_jr_peek(r) != PW_JR_NULL)
		s->present |= 1u << m;
	switch (info->type) {
	case PW_SUMMARY_INT:
		return read_i64(r, &s->v[m].i);
	case PW_SUMMARY_UINT:
	case PW_SUMMARY_NS:
		return read_u64(r, &s->v[m].u);
	case PW_SUMMARY_TEXT:
		return read_str(r, s->text[m], info->cap);
	case PW_SUMMARY_ARRAY:
		if (info->merge == PW_MERGE_PHASES)
			return flags & WANT_PHASES ? parse_phases(r, s) : 0;
		return flags & WANT_COLLECTIVES ? parse_collectives(r, s) : 0;
	}
	return 0;
}

static int parse_summary(struct pw_jr *r, struct summary *s, int flags)
{
	size_t at = pw_jr_offset(r);
	enum pw_jr_type t = pw_jr_peek(r);
	if (t == PW_JR_ERROR)
		return -1;
	if (t != PW_JR_OBJECT)
		return pw_jr_fail(r, at, "\"summary\" is not an object");
	if (pw_jr_enter_object(r))
		return -1;
	char key[KEY_MAX];
	size_t klen;
	int rc;
	while ((rc = pw_jr_next_key(r, key, sizeof key, &klen)) > 0) {
		int m = member_of(key, klen);
		/* an unknown key (the schema grows) is skipped by the next pw_jr_next_key() */
		if (m >= 0 && read_member(r, s, m, flags) < 0)
			return -1;
	}
	return rc;
}

/* The document's top-level object up to its "summary" member, which is read; nothing after it is. */
static int parse_file(struct pw_jr *r, struct summary *s, int flags)
{
	if (pw_jr_enter_object(r))
		return -1;
	char key[KEY_MAX];
	size_t klen;
	int rc;
	while ((rc = pw_jr_next_key(r, key, sizeof key, &klen)) > 0)
		if (key_is(key, klen, "summary"))
			return parse_summary(r, s, flags);
	if (rc == 0)
		return pw_jr_fail(r, pw_jr_offset(r) - 1, "no \"summary\" object");
	return -1;
}

/* The reader's summary, its TEXT members' buffers laid out in texts. NULL when out of memory. */
static struct summary *new_summary(void)
{
	struct summary *s = calloc(1, sizeof *s);
	size_t at = 0;
	for (int m = 0; s && m < PW_SUM_COUNT; m++)
		if (pw_summary_members[m].type == PW_SUMMARY_TEXT) {
			s->text[m] = s->texts + at;
			at += pw_summary_members[m].cap;
		}
	return s;
}

static void reset_summary(struct summary *s)
{
	memset(s->v, 0, sizeof s->v);
	s->present = 0;
	for (int m = 0; m < PW_SUM_COUNT; m++)
		if (pw_summary_members[m].type == PW_SUMMARY_TEXT) {
			s->text[m][0] = 0;
			s->v[m].s = s->text[m];
		}
	s->nphases = 0;
	s->ncolls = 0;
	s->colls_dropped = 0;
}

static int add_unreadable(struct merge *m, const char *name, const char *why)
{
	struct unreadable *b = realloc(m->bad, (m->nbad + 1) * sizeof *b);
	if (!b)
		return -1;
	m->bad = b;
	b[m->nbad].file = strdup(name);
	b[m->nbad].why = strdup(why);
	if (!b[m->nbad].file || !b[m->nbad].why) {
		free(b[m->nbad].file);
		free(b[m->nbad].why);
		return -1;
	}
	m->nbad++;
	return 0;
}

/* Reads the summary of DIR/name into m->s (mapped; read up to the end of the summary object). Returns 0, or
 * -1 after a warning on stderr with the reason in why. */
static int read_file(struct merge *m, const char *name, int flags, char *why, size_t whylen)
{
	char path[PATH_MAX];
	reset_summary(m->s);
	snprintf(path, sizeof path, "%s/%s", m->dir, name);
	/* O_NONBLOCK: a FIFO named like a report must not hang the merge; it is refused below */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(why, whylen, "cannot read: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		warn("%s: %s; skipped", path, why);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(why, whylen, "not a regular file");
		warn("%s: %s; skipped", path, why);
		return -1;
	}
	size_t size = (size_t)st.st_size;
	void *map = NULL;
	if (size) {
		map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			snprintf(why, whylen, "cannot map: %s", strerror(errno));
			close(fd);
			warn("%s: %s; skipped", path, why);
			return -1;
		}
	}
	close(fd);
	struct pw_jr r;
	pw_jr_init(&r, map, size, JSON_DEPTH);
	int rc = parse_file(&r, m->s, flags);
	if (rc)
		pw_jr_error(&r, why, whylen);
	if (map)
		munmap(map, size);
	if (rc)
		warn("%s: %s; skipped", path, why);
	return rc;
}

/* ---- pass 1: the rows and the collective accumulators ----------------------------------------------- */

static struct domain *find_domain(struct merge *m, const char *name)
{
	for (size_t i = 0; i < m->ndomains; i++)
		if (strcmp(m->domains[i].name, name) == 0)
			return &m->domains[i];
	if (m->ndomains == PW_MERGE_MAX_DOMAINS) {
		if (!m->domains_dropped)
			warn("more than %d collective domains: \"%s\" and later ones are not compared",
			     PW_MERGE_MAX_DOMAINS, name);
		m->domains_dropped = 1;
		return NULL;
	}
	struct domain *d = &m->domains[m->ndomains++];
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "%s", name);
	return d;
}

static int grow_domain(struct domain *d, size_t n)
{
	if (n <= d->cap)
		return 0;
	size_t ncap = d->cap ? d->cap : 1024;
	while (ncap < n)
		ncap *= 2;
	if (ncap > PW_MERGE_MAX_COLLECTIVES)
		ncap = PW_MERGE_MAX_COLLECTIVES;
	uint64_t *mn = realloc(d->min, ncap * sizeof *mn);
	if (!mn)
		return -1;
	d->min = mn;
	uint64_t *mx = realloc(d->max, ncap * sizeof *mx);
	if (!mx)
		return -1;
	d->max = mx;
	int32_t *last = realloc(d->last, ncap * sizeof *last);
	if (!last)
		return -1;
	d->last = last;
	uint32_t *seen = realloc(d->seen, ncap * sizeof *seen);
	if (!seen)
		return -1;
	d->seen = seen;
	d->cap = ncap;
	return 0;
}

/* Folds one rank's entries of one domain into the domain's accumulators. */
static int add_entries(struct merge *m, const struct file_coll *c, int rank, uint64_t start)
{
	struct domain *d = find_domain(m, c->domain);
	if (!d)
		return 0;
	d->truncated |= c->truncated;
	if (grow_domain(d, c->n))
		return -1;
	for (size_t k = 0; k < c->n; k++) {
		uint64_t t = sat_add(start, c->off[k]);
		if (k >= d->n) {
			d->min[k] = d->max[k] = t;
			d->last[k] = rank;
			d->seen[k] = 1;
			continue;
		}
		d->seen[k]++;
		if (t < d->min[k])
			d->min[k] = t;
		if (t > d->max[k] || (t == d->max[k] && rank < d->last[k])) {
			d->max[k] = t;
			d->last[k] = rank;
		}
	}
	if (c->n > d->n)
		d->n = c->n;
	return 0;
}

static void note_world(struct merge *m, const char *name, uint64_t w)
{
	if (w > PW_MERGE_MAX_WORLD)
		warn("%s/%s: world_size %" PRIu64 " is not believable; ignored", m->dir, name, w);
	else if (w > m->world)
		m->world = w;
}

/* Returns 0, or -1 when out of memory. */
static int read_ranks(struct merge *m)
{
	char name[64], why[256];
	for (size_t i = 0; i < m->nrank_files; i++) {
		int rank = m->rank_files[i];
		snprintf(name, sizeof name, "rank%d.json", rank);
		if (read_file(m, name, WANT_COLLECTIVES, why, sizeof why)) {
			if (add_unreadable(m, name, why))
				return -1;
			continue;
		}
		struct summary *s = m->s;
		if ((s->present & (1u << PW_SUM_RANK)) && s->v[PW_SUM_RANK].i != rank)
			warn("%s/%s: its summary says rank %" PRId64 "; read as rank %d, as its name says", m->dir,
			     name, s->v[PW_SUM_RANK].i, rank);
		if (s->colls_dropped)
			warn("%s/%s: more than %d collective lists; the others are not compared", m->dir, name,
			     PW_MERGE_MAX_DOMAINS);
		if (m->nrows == m->rows_cap) {
			size_t ncap = m->rows_cap ? m->rows_cap * 2 : 64;
			struct row *rows = realloc(m->rows, ncap * sizeof *rows);
			if (!rows)
				return -1;
			m->rows = rows;
			m->rows_cap = ncap;
		}
		struct row *row = &m->rows[m->nrows++];
		memset(row, 0, sizeof *row);
		row->rank = rank;
		for (int f = 0; f < PW_SUM_COUNT; f++)
			if (pw_summary_members[f].merge == PW_MERGE_FIGURE)
				row->v[f] = s->v[f].u;
		snprintf(row->host, sizeof row->host, "%s", s->v[PW_SUM_HOST].s);
		snprintf(row->top, sizeof row->top, "%s", s->v[PW_SUM_TOP_CALLS].s);
		note_world(m, name, s->v[PW_SUM_WORLD_SIZE].u);
		const char *command = s->v[PW_SUM_COMMAND].s;
		if (!m->command && command[0] && !(m->command = strdup(command)))
			return -1;
		size_t entries = 0;
		for (size_t c = 0; c < s->ncolls; c++)
			entries += s->colls[c].n;
		uint64_t origin = s->v[PW_SUM_START_REALTIME].u;
		if (entries && !origin) {
			warn("%s/%s: collective entries without start_realtime_ns; not compared", m->dir, name);
			continue;
		}
		for (size_t c = 0; c < s->ncolls; c++)
			if (add_entries(m, &s->colls[c], rank, origin))
				return -1;
	}
	return 0;
}

/* Returns 0, or -1 when out of memory. */
static int read_launchers(struct merge *m)
{
	char why[256];
	for (size_t i = 0; i < m->nlauncher_files; i++) {
		const char *name = m->launcher_files[i];
		if (read_file(m, name, 0, why, sizeof why)) {
			if (add_unreadable(m, name, why))
				return -1;
			continue;
		}
		struct launcher *l = realloc(m->launchers, (m->nlaunchers + 1) * sizeof *l);
		if (!l)
			return -1;
		m->launchers = l;
		l = &l[m->nlaunchers];
		l->file = strdup(name);
		const union pw_summary_value *v = m->s->v;
		l->host = strdup(v[PW_SUM_HOST].s);
		l->command = strdup(v[PW_SUM_COMMAND].s);
		l->processes = v[PW_SUM_PROCESSES].u;
		l->wall = v[PW_SUM_WALL].u;
		m->nlaunchers++;
		if (!l->file || !l->host || !l->command)
			return -1;
		note_world(m, name, v[PW_SUM_WORLD_SIZE].u);
	}
	return 0;
}

/* ---- the figures ----------------------------------------------------------------------------------- */

static int compare_row_rank(const void *key, const void *elem)
{
	int rank = *(const int *)key, other = ((const struct row *)elem)->rank;
	return rank < other ? -1 : rank > other;
}

static size_t row_of(const struct merge *m, int rank)
{
	const struct row *r = bsearch(&rank, m->rows, m->nrows, sizeof *m->rows, compare_row_rank);
	return r ? (size_t)(r - m->rows) : SIZE_MAX;
}

static int compare_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* Whether rank<rank>.json is in the directory (read or not: an unreadable report is not missing). */
static int has_file(const struct merge *m, uint64_t rank)
{
	int r = (int)rank;
	return m->nrank_files && bsearch(&r, m->rank_files, m->nrank_files, sizeof *m->rank_files, compare_int);
}

/* Returns 0, or -1 when out of memory. */
static int compute_stats(struct merge *m)
{
	uint64_t *v = malloc(m->nrows * sizeof *v);
	if (!v)
		return -1;
	for (int c = 0; c < PW_SUM_COUNT; c++) {
		if (pw_summary_members[c].merge != PW_MERGE_FIGURE)
			continue;
		struct stat_col *st = &m->stats[c];
		for (size_t i = 0; i < m->nrows; i++) {
			uint64_t x = m->rows[i].v[c];
			v[i] = x;
			if (!i || x < st->min) {
				st->min = x;
				st->min_rank = m->rows[i].rank;
			}
			if (!i || x > st->max) {
				st->max = x;
				st->max_rank = m->rows[i].rank;
			}
		}
		st->median = median(v, m->nrows);
	}
	free(v);
	return 0;
}

static int figure_position(int f, int by_row)
{
	return by_row ? pw_summary_members[f].row : pw_summary_members[f].stat;
}

/* The FIGURE members in the order of summary.json's ranks (by_row), or of its rank_stats and summary.txt's
 * spreads. Returns how many. */
static size_t figures_in_order(int order[PW_SUM_COUNT], int by_row)
{
	size_t n = 0;
	for (int f = 0; f < PW_SUM_COUNT; f++) {
		if (pw_summary_members[f].merge != PW_MERGE_FIGURE)
			continue;
		size_t at = n++;
		for (; at > 0 && figure_position(order[at - 1], by_row) > figure_position(f, by_row); at--)
			order[at] = order[at - 1];
		order[at] = f;
	}
	return n;
}

/* Per domain: the collectives every rank entered, their spreads, who entered last. Returns 0, or -1 when
 * out of memory. */
static int compute_skew(struct merge *m)
{
	uint64_t *count = calloc(m->nrows, sizeof *count);
	if (!count)
		return -1;
	for (size_t di = 0; di < m->ndomains; di++) {
		struct domain *d = &m->domains[di];
		uint64_t *spreads = d->n ? malloc(d->n * sizeof *spreads) : NULL;
		if (d->n && !spreads) {
			free(count);
			return -1;
		}
		memset(count, 0, m->nrows * sizeof *count);
		d->compared = 0;
		for (size_t k = 0; m->nrows >= 2 && k < d->n; k++) {
			if (d->seen[k] != m->nrows)
				continue;
			uint64_t spread = d->max[k] - d->min[k];
			if (!d->compared || spread > d->max_spread) {
				d->max_spread = spread;
				d->max_index = k;
			}
			spreads[d->compared++] = spread;
			size_t row = row_of(m, d->last[k]);
			if (row != SIZE_MAX) {
				count[row]++;
				m->rows[row].late_ns += spread;
			}
			m->spread_total += spread;
		}
		d->median_spread = d->compared ? median(spreads, d->compared) : 0;
		free(spreads);
		m->compared += d->compared;
		d->ntop = 0;
		for (size_t i = 0; i < m->nrows; i++) {
			m->rows[i].last_arrivals += count[i];
			if (!count[i])
				continue;
			/* insert into the top list: most entries first, then the lowest rank (rows are ascending) */
			size_t pos = d->ntop;
			while (pos > 0 && count[i] > d->top_count[pos - 1])
				pos--;
			if (pos >= LAST_TOP)
				continue;
			size_t end = d->ntop < LAST_TOP ? d->ntop : LAST_TOP - 1;
			for (size_t j = end; j > pos; j--) {
				d->top_count[j] = d->top_count[j - 1];
				d->top_rank[j] = d->top_rank[j - 1];
			}
			d->top_count[pos] = count[i];
			d->top_rank[pos] = m->rows[i].rank;
			if (d->ntop < LAST_TOP)
				d->ntop++;
		}
	}
	free(count);
	return 0;
}

static double last_share_needed(size_t nranks)
{
	double need = PW_MERGE_LAST_SHARE_RANKS / (double)nranks;
	if (need > PW_MERGE_LAST_SHARE_MAX)
		need = PW_MERGE_LAST_SHARE_MAX;
	if (need < PW_MERGE_LAST_SHARE_MIN)
		need = PW_MERGE_LAST_SHARE_MIN;
	return need;
}

static void find_straggler(struct merge *m)
{
	m->straggler = -1;
	m->reason = NULL;
	m->has_candidate = 0;
	if (m->nrows < 2)
		return;
	size_t best = 0;
	if (m->compared) {
		/* the rank the others waited for longest: entering last once by a second outweighs entering last
		 * by microseconds in every collective that follows it in lockstep */
		for (size_t i = 1; i < m->nrows; i++)
			if (m->rows[i].late_ns > m->rows[best].late_ns)
				best = i;
		m->best_row = best;
		m->has_candidate = m->rows[best].last_arrivals > 0;
		/* and long enough to matter: start-up skew alone makes some rank the latest */
		if (m->compared >= PW_MERGE_MIN_COMPARED && m->spread_total &&
		    (double)m->rows[best].late_ns >= last_share_needed(m->nrows) * (double)m->spread_total &&
		    (double)m->rows[best].late_ns >= PW_MERGE_LATE_MIN_WALL * (double)m->stats[PW_SUM_WALL].median) {
			m->straggler = m->rows[best].rank;
			m->reason = "collectives";
		}
		return;
	}
	uint64_t med = m->stats[PW_SUM_BUSY].median;
	for (size_t i = 1; i < m->nrows; i++)
		if (m->rows[i].v[PW_SUM_BUSY] > m->rows[best].v[PW_SUM_BUSY])
			best = i;
	m->best_row = best;
	uint64_t busy = m->rows[best].v[PW_SUM_BUSY];
	m->has_candidate = busy > 0;
	if (busy > med && (double)(busy - med) >= PW_MERGE_BUSY_EXCESS * (double)med) {
		m->straggler = m->rows[best].rank;
		m->reason = "busy";
	}
}

/* Pass 2: the straggler's phases against the median of the other ranks' (0 for a rank without the phase).
 * Returns 0, or -1 when out of memory. */
static int find_phase(struct merge *m)
{
	char name[64], why[256];
	m->has_phase = 0;
	m->straggler_nphases = 0;
	if (m->straggler < 0)
		return 0;
	snprintf(name, sizeof name, "rank%d.json", m->straggler);
	if (read_file(m, name, WANT_PHASES, why, sizeof why))
		return 0;
	size_t np = m->s->nphases, nothers = m->nrows - 1;
	m->straggler_nphases = (int)np;
	if (!np)
		return 0;
	struct phase *mine = malloc(np * sizeof *mine);
	uint64_t *vals = calloc(np * nothers, sizeof *vals);
	if (!mine || !vals) {
		free(mine);
		free(vals);
		return -1;
	}
	memcpy(mine, m->s->phases, np * sizeof *mine);
	size_t j = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		if (m->rows[i].rank == m->straggler)
			continue;
		snprintf(name, sizeof name, "rank%d.json", m->rows[i].rank);
		if (read_file(m, name, WANT_PHASES, why, sizeof why) == 0) {
			for (size_t p = 0; p < m->s->nphases; p++)
				for (size_t q = 0; q < np; q++)
					if (strcmp(m->s->phases[p].name, mine[q].name) == 0) {
						vals[q * nothers + j] = m->s->phases[p].ns;
						break;
					}
		}
		j++;
	}
	for (size_t q = 0; q < np; q++) {
		uint64_t med = median(vals + q * nothers, nothers);
		if (mine[q].ns > med && (!m->has_phase || mine[q].ns - med > m->phase.ns)) {
			m->has_phase = 1;
			m->phase = mine[q];
			m->phase.ns = mine[q].ns - med;
		}
	}
	free(mine);
	free(vals);
	return 0;
}

/* ---- summary.txt -------------------------------------------------------------------------------------- */

static void dur(char *buf, size_t len, uint64_t ns)
{
	pw_format_duration(buf, len, ns);
}

/* "ranks 2, 5-7 of 8 have no report yet" (cut with ", ..." when it does not fit). Returns how many. */
static size_t format_missing(const struct merge *m, char *buf, size_t len, const char *tail)
{
	char list[512];
	size_t used = 0, count = 0, ranges = 0, r = 0;
	int cut = 0;
	list[0] = 0;
	while (r < m->world) {
		if (has_file(m, r)) {
			r++;
			continue;
		}
		size_t end = r;
		while (end + 1 < m->world && !has_file(m, end + 1))
			end++;
		count += end - r + 1;
		if (!cut) {
			char one[64];
			if (end == r)
				snprintf(one, sizeof one, "%s%zu", ranges ? ", " : "", r);
			else
				snprintf(one, sizeof one, "%s%zu-%zu", ranges ? ", " : "", r, end);
			if (used + strlen(one) + 8 < sizeof list) {
				memcpy(list + used, one, strlen(one) + 1);
				used += strlen(one);
			} else {
				memcpy(list + used, ", ...", 6);
				cut = 1;
			}
		}
		ranges++;
		r = end + 1;
	}
	snprintf(buf, len, "rank%s %s of %" PRIu64 " %s no report%s", count == 1 ? "" : "s", list, m->world,
		 count == 1 ? "has" : "have", tail);
	return count;
}

/* Fills the table; the top calls cell is cut so that a line stays within LINE_WIDTH. */
static int print_table(FILE *f, const struct merge *m)
{
	static const char *const headers[] = {"Rank",  "Host",  "Wall",    "GPU busy", "Kernels",
					      "Collectives", "I/O", "Waits", "Dropped", "Top calls"};
	enum { NC = 10 };
	struct pw_table t = {.ncols = NC, .headers = headers, .align = "rlrrrrrrrl"};
	size_t widths[NC] = {0};
	for (size_t i = 0; i < m->nrows; i++) {
		const struct row *r = &m->rows[i];
		char a[64], b[64];
		if (pw_table_add_row(&t)) {
			pw_table_free(&t);
			return -1;
		}
		pw_table_set(&t, 0, "%d", r->rank);
		pw_table_set(&t, 1, "%s", pw_cut_right(a, sizeof a, r->host, 24));
		dur(a, sizeof a, r->v[PW_SUM_WALL]);
		pw_table_set(&t, 2, "%s", a);
		if (r->v[PW_SUM_GPU_BUSY]) {
			dur(a, sizeof a, r->v[PW_SUM_GPU_BUSY]);
			if (r->v[PW_SUM_WALL])
				pw_table_set(&t, 3, "%s (%.0f %%)", a,
					     (double)r->v[PW_SUM_GPU_BUSY] * 100.0 / (double)r->v[PW_SUM_WALL]);
			else
				pw_table_set(&t, 3, "%s", a);
		} else {
			pw_table_set(&t, 3, "-");
		}
		if (r->v[PW_SUM_KERNEL]) {
			dur(a, sizeof a, r->v[PW_SUM_KERNEL]);
			pw_table_set(&t, 4, "%s", a);
		} else {
			pw_table_set(&t, 4, "-");
		}
		dur(a, sizeof a, r->v[PW_SUM_COLLECTIVE]);
		pw_table_set(&t, 5, "%s", a);
		dur(a, sizeof a, r->v[PW_SUM_IO]);
		pw_table_set(&t, 6, "%s", a);
		dur(b, sizeof b, r->v[PW_SUM_WAIT]);
		pw_table_set(&t, 7, "%s", b);
		pw_table_set(&t, 8, "%" PRIu64, r->v[PW_SUM_DROPPED]);
	}
	for (size_t c = 0; c + 1 < NC; c++) {
		widths[c] = strlen(headers[c]);
		for (size_t i = 0; i < t.nrows; i++)
			if (strlen(t.cells[i * NC + c]) > widths[c])
				widths[c] = strlen(t.cells[i * NC + c]);
	}
	size_t used = 1 + 4; /* the last column's "| " and " |" */
	for (size_t c = 0; c + 1 < NC; c++)
		used += widths[c] + 3;
	size_t room = used + 12 < LINE_WIDTH ? LINE_WIDTH - used : 12;
	if (room > PW_CELL_MAX - 1)
		room = PW_CELL_MAX - 1;
	for (size_t i = 0; i < t.nrows; i++) {
		char cut[PW_CELL_MAX], text[PW_SUMMARY_TOP_MAX];
		snprintf(text, sizeof text, "%s", m->rows[i].top[0] ? m->rows[i].top : "-");
		pw_make_printable(text);
		snprintf(t.cells[i * NC + 9], PW_CELL_MAX, "%s", pw_cut_right(cut, sizeof cut, text, room));
	}
	pw_table_print(f, &t);
	pw_table_free(&t);
	return 0;
}

static void print_spreads(FILE *f, const struct merge *m)
{
	int order[PW_SUM_COUNT];
	size_t n = figures_in_order(order, 0);
	for (size_t i = 0; i < n; i++) {
		int c = order[i];
		const struct pw_summary_member_info *info = &pw_summary_members[c];
		if (!info->label)
			continue;
		const struct stat_col *st = &m->stats[c];
		char t[3][32];
		uint64_t v[3] = {st->min, st->median, st->max};
		for (int k = 0; k < 3; k++) {
			if (info->type == PW_SUMMARY_NS)
				dur(t[k], sizeof t[k], v[k]);
			else
				snprintf(t[k], sizeof t[k], "%" PRIu64, v[k]);
		}
		fprintf(f, "%-12s min %s (rank %d), median %s, max %s (rank %d)%s\n", info->label, t[0],
			st->min_rank, t[1], t[2], st->max_rank,
			c == PW_SUM_BUSY       ? "  (main thread: wall minus waits and collectives)"
			: c == PW_SUM_OWN_COST ? "  (profwrap's own: records, stacks, CUPTI overhead)"
					       : "");
	}
}

/* A duration whose space does not break a line in print_paragraph(). */
static void dur_nb(char *buf, size_t len, uint64_t ns)
{
	pw_format_duration(buf, len, ns);
	for (char *p = buf; *p; p++)
		if (*p == ' ')
			*p = NBSP;
}

/* text as lines of at most width columns broken at spaces (a longer word gets a line of its own), the lines
 * after the first indented two spaces; NBSP prints as a space that does not break. */
static void print_paragraph(FILE *f, const char *text, size_t width)
{
	const char *p = text;
	size_t room = width;
	while (*p) {
		size_t n = strlen(p), cut = n;
		if (n > room) {
			cut = room;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = strcspn(p, " ");
		}
		if (p != text)
			fputs("  ", f);
		for (size_t i = 0; i < cut; i++)
			fputc(p[i] == NBSP ? ' ' : p[i], f);
		fputc('\n', f);
		p += cut;
		while (*p == ' ')
			p++;
		room = width - 2;
	}
}

/* part/whole in percent: whole numbers as such ("45"), others with a decimal ("49.6"), so that a share just
 * below a threshold never reads as the threshold. */
static const char *pct(char *buf, size_t len, uint64_t part, uint64_t whole)
{
	double v = whole ? (double)part * 100.0 / (double)whole : 0.0;
	if (v == (double)(uint64_t)v)
		snprintf(buf, len, "%.0f", v);
	else if (v > 99.95 && v < 100)
		snprintf(buf, len, "99.9");
	else
		snprintf(buf, len, "%.1f", v);
	return buf;
}

const char *pw_merge_straggler_text(const struct merge *m, char *text, size_t size)
{
	char a[32], b[32], c[32], p[32];
	size_t n = 0;
#define ADD(...)                                                                                                 \
	do {                                                                                                     \
		if (n < size)                                                                                    \
			n += (size_t)snprintf(text + n, size - n, __VA_ARGS__);                                  \
	} while (0)
	const struct row *best = m->has_candidate ? &m->rows[m->best_row] : NULL;
	if (m->nrows < 2) {
		ADD("No straggler: one rank, nothing to compare it with.");
	} else if (m->straggler >= 0 && strcmp(m->reason, "collectives") == 0) {
		/* the others' collective time, against its own */
		uint64_t *v = malloc((m->nrows - 1) * sizeof *v);
		uint64_t others = 0, shortest = UINT64_MAX;
		int shortest_rank = -1;
		size_t k = 0;
		for (size_t i = 0; i < m->nrows; i++) {
			if (m->rows[i].rank == m->straggler)
				continue;
			if (v)
				v[k++] = m->rows[i].v[PW_SUM_COLLECTIVE];
			if (m->rows[i].v[PW_SUM_COLLECTIVE] < shortest) {
				shortest = m->rows[i].v[PW_SUM_COLLECTIVE];
				shortest_rank = m->rows[i].rank;
			}
		}
		if (v)
			others = median(v, k);
		free(v);
		dur_nb(a, sizeof a, others);
		dur_nb(b, sizeof b, best->v[PW_SUM_COLLECTIVE]);
		dur_nb(c, sizeof c, best->late_ns);
		ADD("Straggler: rank %d: the others waited %s for it to enter collectives, %s %% of all such waiting; it "
		    "entered last in ", m->straggler, c, pct(p, sizeof p, best->late_ns, m->spread_total));
		ADD("%s %% of %zu collectives", pct(p, sizeof p, best->last_arrivals, m->compared), m->compared);
		if (best->v[PW_SUM_COLLECTIVE] <= shortest) {
			ADD("; the others waited for it (their collective time median %s, its own %s).", a, b);
		} else {
			dur_nb(c, sizeof c, shortest);
			ADD("; yet its own collective time, %s, is not the shortest (the others' median %s, rank %d "
			    "%s): check that the hosts' clocks agree.",
			    b, a, shortest_rank, c);
		}
	} else if (m->straggler >= 0) {
		dur_nb(a, sizeof a, best->v[PW_SUM_BUSY]);
		dur_nb(b, sizeof b, m->stats[PW_SUM_BUSY].median);
		if (m->stats[PW_SUM_BUSY].median)
			ADD("Straggler: rank %d: its main thread was busy %s, %s %% more than the median rank's %s (no "
			    "collectives to compare entry times).",
			    m->straggler, a,
			    pct(p, sizeof p, best->v[PW_SUM_BUSY] - m->stats[PW_SUM_BUSY].median, m->stats[PW_SUM_BUSY].median), b);
		else
			ADD("Straggler: rank %d: its main thread was busy %s, the median rank's %s (no collectives to "
			    "compare entry times).",
			    m->straggler, a, b);
	} else if (m->compared && m->compared < PW_MERGE_MIN_COMPARED) {
		ADD("No straggler: only %zu collective%s entered by every rank (%d needed to name one).", m->compared,
		    m->compared == 1 ? " was" : "s were", PW_MERGE_MIN_COMPARED);
	} else if (m->compared && best && m->spread_total &&
		   (double)best->late_ns >= last_share_needed(m->nrows) * (double)m->spread_total) {
		dur_nb(a, sizeof a, best->late_ns);
		dur_nb(b, sizeof b, m->stats[PW_SUM_WALL].median);
		ADD("No straggler: the others waited for rank %d longest, but only %s in all, under %.0f %% of the median "
		    "wall time %s.",
		    best->rank, a, PW_MERGE_LATE_MIN_WALL * 100.0, b);
	} else if (m->compared) {
		if (best)
			ADD("No straggler: the rank the others waited for longest, rank %d, accounts for %s %% of the "
			    "time the ranks waited for the last one in %zu collectives (%.0f %% needed to name it).",
			    best->rank, pct(p, sizeof p, best->late_ns, m->spread_total), m->compared,
			    last_share_needed(m->nrows) * 100.0);
		else
			ADD("No straggler: no rank entered the %zu collectives compared last.", m->compared);
	} else if (best) {
		dur_nb(a, sizeof a, best->v[PW_SUM_BUSY]);
		dur_nb(b, sizeof b, m->stats[PW_SUM_BUSY].median);
		ADD("No straggler: no collectives to compare; the busiest main thread, rank %d's (%s), is %s %% above "
		    "the median %s (%.0f %% needed).",
		    best->rank, a, pct(p, sizeof p, best->v[PW_SUM_BUSY] - m->stats[PW_SUM_BUSY].median, m->stats[PW_SUM_BUSY].median),
		    b, PW_MERGE_BUSY_EXCESS * 100.0);
	} else {
		ADD("No straggler: no collectives to compare and no main-thread busy time in the reports.");
	}
	if (m->straggler >= 0) {
		if (m->has_phase) {
			char name[PHASE_NAME_MAX], cut[80];
			snprintf(name, sizeof name, "%s", m->phase.name);
			pw_make_printable(name);
			dur_nb(a, sizeof a, m->phase.ns);
			ADD(" It loses its time in phase \"%s\" (+%s over the median of the other ranks).",
			    pw_cut_right(cut, sizeof cut, name, 60), a);
		} else if (m->straggler_nphases) {
			ADD(" None of its phases takes longer than on the median rank.");
		}
		ADD(" See rank%d.txt for where its time goes.", m->straggler);
	}
#undef ADD
	return text;
}

static void print_straggler(FILE *f, const struct merge *m)
{
	char text[2048] = "";
	print_paragraph(f, pw_merge_straggler_text(m, text, sizeof text), LINE_WIDTH);
}

static void print_skew(FILE *f, const struct merge *m)
{
	if (!m->ndomains) {
		fputs("Collective skew: no collective entry times in the reports.\n", f);
		return;
	}
	fputs("Collective skew (per collective: latest minus earliest entry across ranks, on the hosts' clocks):\n", f);
	for (size_t i = 0; i < m->ndomains; i++) {
		const struct domain *d = &m->domains[i];
		char name[DOMAIN_NAME_MAX], a[32], b[32];
		snprintf(name, sizeof name, "%s", d->name);
		pw_make_printable(name);
		if (!d->compared) {
			fprintf(f, "  %s: no collective was entered by every rank%s\n", name,
				m->nrows < 2 ? " (one rank)" : "");
			continue;
		}
		dur(a, sizeof a, d->median_spread);
		dur(b, sizeof b, d->max_spread);
		fprintf(f, "  %s: %zu compared, spread median %s, max %s (collective #%zu)%s\n", name, d->compared, a,
			b, d->max_index, d->truncated ? "; entries past the per-rank limit not recorded" : "");
		if (d->ntop) {
			fputs("    entered last most often:", f);
			for (size_t k = 0; k < d->ntop; k++)
				fprintf(f, "%s rank %d (%" PRIu64 ")", k ? "," : "", d->top_rank[k], d->top_count[k]);
			fputc('\n', f);
		}
	}
}

static void print_launchers(FILE *f, const struct merge *m)
{
	if (!m->nlaunchers)
		return;
	fputs("\nLaunchers (processes without a rank):\n", f);
	for (size_t i = 0; i < m->nlaunchers; i++) {
		const struct launcher *l = &m->launchers[i];
		char host[64], file[64], command[PW_SUMMARY_COMMAND_MAX], cut1[64], cut2[128], cut3[64], w[32];
		snprintf(host, sizeof host, "%s", pw_cut_right(cut1, sizeof cut1, l->host, 24));
		snprintf(file, sizeof file, "%s", pw_cut_right(cut3, sizeof cut3, l->file, 40));
		snprintf(command, sizeof command, "%s", l->command);
		pw_make_printable(host);
		pw_make_printable(file);
		pw_make_printable(command);
		dur(w, sizeof w, l->wall);
		char tail[160];
		snprintf(tail, sizeof tail, " (%" PRIu64 " process%s, %s; %s)", l->processes,
			 l->processes == 1 ? "" : "es", w, file);
		size_t fixed = 2 + strlen(host) + 2 + strlen(tail);
		size_t room = fixed + 16 < LINE_WIDTH ? LINE_WIDTH - fixed : 16;
		if (room > sizeof cut2 - 1)
			room = sizeof cut2 - 1;
		fprintf(f, "  %s: %s%s\n", host, pw_cut_right(cut2, sizeof cut2, command, room), tail);
	}
}

static int write_text(FILE *f, const struct merge *m)
{
	char command[PW_SUMMARY_COMMAND_MAX], cut[128], line[1024];
	snprintf(command, sizeof command, "%s", pw_report_str(m->command));
	pw_make_printable(command);
	fprintf(f, "profwrap summary: %zu rank%s of world size %" PRIu64, m->nrows, m->nrows == 1 ? "" : "s", m->world);
	if (m->nlaunchers)
		fprintf(f, ", %zu launcher%s", m->nlaunchers, m->nlaunchers == 1 ? "" : "s");
	fprintf(f, "\nCommand: %s\n\n", pw_cut_right(cut, sizeof cut, command, LINE_WIDTH - 9));
	if (print_table(f, m))
		return -1;
	fputc('\n', f);
	print_spreads(f, m);
	if (m->nmissing) {
		format_missing(m, line, sizeof line, ".");
		fputc('\n', f);
		pw_print_wrapped(f, "Missing: ", "  ", line, LINE_WIDTH);
	}
	for (size_t i = 0; i < m->nbad; i++) {
		char why[LINE_WIDTH + 1];
		snprintf(line, sizeof line, "Unreadable, skipped: %s: %s", m->bad[i].file, m->bad[i].why);
		pw_make_printable(line);
		fprintf(f, "%s%s\n", i || m->nmissing ? "" : "\n", pw_cut_right(why, sizeof why, line, LINE_WIDTH));
	}
	fputc('\n', f);
	print_straggler(f, m);
	fputc('\n', f);
	print_skew(f, m);
	print_launchers(f, m);
	return 0;
}

/* ---- summary.json ------------------------------------------------------------------------------------- */

/* "ranks": a row per rank read. */
static void json_rank_rows(struct pw_json *j, const struct merge *m)
{
	int order[PW_SUM_COUNT];
	size_t nfig = figures_in_order(order, 1);
	pw_json_key(j, "ranks");
	pw_json_begin_array(j);
	for (size_t i = 0; i < m->nrows; i++) {
		const struct row *r = &m->rows[i];
		pw_json_begin_object(j);
		pw_json_kv_int(j, "rank", r->rank);
		pw_json_kv_string(j, "host", r->host);
		for (size_t k = 0; k < nfig; k++)
			pw_json_kv_uint(j, pw_summary_members[order[k]].key, r->v[order[k]]);
		pw_json_kv_uint(j, "last_arrivals", r->last_arrivals);
		pw_json_kv_uint(j, "late_ns", r->late_ns);
		pw_json_kv_string(j, "top_calls", r->top);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

/* "rank_stats": min, median, max of each figure over the ranks. */
static void json_rank_stats(struct pw_json *j, const struct merge *m)
{
	int order[PW_SUM_COUNT];
	size_t nfig = figures_in_order(order, 0);
	pw_json_key(j, "rank_stats");
	pw_json_begin_object(j);
	for (size_t k = 0; k < nfig; k++) {
		const struct stat_col *st = &m->stats[order[k]];
		pw_json_key(j, pw_summary_members[order[k]].key);
		pw_json_begin_object(j);
		pw_json_kv_uint(j, "min", st->min);
		pw_json_kv_uint(j, "median", st->median);
		pw_json_kv_uint(j, "max", st->max);
		pw_json_kv_int(j, "min_rank", st->min_rank);
		pw_json_kv_int(j, "max_rank", st->max_rank);
		pw_json_end_object(j);
	}
	pw_json_end_object(j);
}

/* "missing_ranks" and "unreadable". */
static void json_absent(struct pw_json *j, const struct merge *m)
{
	pw_json_key(j, "missing_ranks");
	pw_json_begin_array(j);
	for (uint64_t r = 0; m->nmissing && r < m->world; r++)
		if (!has_file(m, r))
			pw_json_uint(j, r);
	pw_json_end_array(j);
	pw_json_key(j, "unreadable");
	pw_json_begin_array(j);
	for (size_t i = 0; i < m->nbad; i++) {
		pw_json_begin_object(j);
		pw_json_kv_string(j, "file", m->bad[i].file);
		pw_json_kv_string(j, "error", m->bad[i].why);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

static void json_straggler(struct pw_json *j, const struct merge *m)
{
	pw_json_key(j, "straggler");
	if (m->straggler >= 0)
		pw_json_int(j, m->straggler);
	else
		pw_json_null(j);
	pw_json_kv_string(j, "straggler_reason", m->reason);
	pw_json_kv_string(j, "straggler_phase", m->has_phase ? m->phase.name : NULL);
	pw_json_key(j, "straggler_phase_excess_ns");
	if (m->has_phase)
		pw_json_uint(j, m->phase.ns);
	else
		pw_json_null(j);
}

/* "collective_skew": per domain. */
static void json_skew(struct pw_json *j, const struct merge *m)
{
	pw_json_key(j, "collective_skew");
	pw_json_begin_array(j);
	for (size_t i = 0; i < m->ndomains; i++) {
		const struct domain *d = &m->domains[i];
		pw_json_begin_object(j);
		pw_json_kv_string(j, "domain", d->name);
		pw_json_kv_uint(j, "compared", d->compared);
		pw_json_kv_uint(j, "median_spread_ns", d->median_spread);
		pw_json_kv_uint(j, "max_spread_ns", d->max_spread);
		pw_json_key(j, "max_spread_index");
		if (d->compared)
			pw_json_uint(j, d->max_index);
		else
			pw_json_null(j);
		pw_json_key(j, "last_arrivals");
		pw_json_begin_array(j);
		for (size_t k = 0; k < d->ntop; k++) {
			pw_json_begin_object(j);
			pw_json_kv_int(j, "rank", d->top_rank[k]);
			pw_json_kv_uint(j, "count", d->top_count[k]);
			pw_json_end_object(j);
		}
		pw_json_end_array(j);
		pw_json_key(j, "truncated");
		pw_json_bool(j, d->truncated);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

static void json_launchers(struct pw_json *j, const struct merge *m)
{
	pw_json_key(j, "launchers");
	pw_json_begin_array(j);
	for (size_t i = 0; i < m->nlaunchers; i++) {
		const struct launcher *l = &m->launchers[i];
		pw_json_begin_object(j);
		pw_json_kv_string(j, "host", l->host);
		pw_json_kv_string(j, "file", l->file);
		pw_json_kv_string(j, "command", l->command);
		pw_json_kv_uint(j, "processes", l->processes);
		pw_json_kv_uint(j, "wall_ns", l->wall);
		pw_json_end_object(j);
	}
	pw_json_end_array(j);
}

static void write_json(FILE *f, const struct merge *m)
{
	struct pw_json j;
	pw_json_init(&j, f, 2);
	pw_json_begin_object(&j);
	pw_json_kv_string(&j, "format", "profwrap-summary");
	pw_json_kv_int(&j, "version", 2);
	pw_json_kv_string(&j, "command", m->command);
	pw_json_kv_uint(&j, "world_size", m->world);
	json_rank_rows(&j, m);
	json_rank_stats(&j, m);
	json_absent(&j, m);
	json_straggler(&j, m);
	pw_json_kv_uint(&j, "collectives_compared", m->compared);
	json_skew(&j, m);
	json_launchers(&j, m);
	pw_json_end_object(&j);
	fputc('\n', f);
}

/* ---- the directory ------------------------------------------------------------------------------------ */

/* The rank of "rank<digits>.json" (canonical decimal, below 10^9), or -1. */
/* The rank of a rank<R>.json name: -1 for another name, -2 for a rank of PW_MERGE_MAX_WORLD or more (every
 * rank below it would be listed as missing: a damaged or hostile name must not cost a billion of them). */
static int rank_file(const char *name)
{
	if (strncmp(name, "rank", 4) != 0)
		return -1;
	const char *p = name + 4, *q = p;
	while (*q >= '0' && *q <= '9')
		q++;
	size_t digits = (size_t)(q - p);
	if (!digits || (digits > 1 && *p == '0') || strcmp(q, ".json") != 0)
		return -1;
	return digits > 9 || atoi(p) >= PW_MERGE_MAX_WORLD ? -2 : atoi(p);
}

static int is_launcher_file(const char *name)
{
	size_t n = strlen(name);
	/* launcher-<host>.json, not its launcher-<host>.trace.json */
	return n > strlen("launcher-.json") && strncmp(name, "launcher-", 9) == 0 && strcmp(name + n - 5, ".json") == 0 &&
	       !(n > strlen(".trace.json") && strcmp(name + n - 11, ".trace.json") == 0);
}

static int compare_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the rank and launcher files. Returns 0, -1 with the reason in msg. */
static int list_dir(struct merge *m, char *msg, size_t msglen)
{
	DIR *d = opendir(m->dir);
	if (!d) {
		snprintf(msg, msglen, "cannot open %s: %s", m->dir, strerror(errno));
		return -1;
	}
	size_t rcap = 0, lcap = 0;
	struct dirent *e;
	int oom = 0;
	while (!oom && (e = readdir(d))) {
		int rank = rank_file(e->d_name);
		if (rank == -2)
			warn("%s/%s: a rank of %d or more is not believable; skipped", m->dir, e->d_name,
			     PW_MERGE_MAX_WORLD);
		if (rank >= 0) {
			if (m->nrank_files == rcap) {
				rcap = rcap ? rcap * 2 : 256;
				int *v = realloc(m->rank_files, rcap * sizeof *v);
				if (!v) {
					oom = 1;
					break;
				}
				m->rank_files = v;
			}
			m->rank_files[m->nrank_files++] = rank;
		} else if (is_launcher_file(e->d_name)) {
			if (m->nlauncher_files == lcap) {
				lcap = lcap ? lcap * 2 : 8;
				char **v = realloc(m->launcher_files, lcap * sizeof *v);
				if (!v) {
					oom = 1;
					break;
				}
				m->launcher_files = v;
			}
			if (!(m->launcher_files[m->nlauncher_files] = strdup(e->d_name)))
				oom = 1;
			else
				m->nlauncher_files++;
		}
	}
	closedir(d);
	if (oom) {
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	if (m->nrank_files)
		qsort(m->rank_files, m->nrank_files, sizeof *m->rank_files, compare_int);
	if (m->nlauncher_files)
		qsort(m->launcher_files, m->nlauncher_files, sizeof *m->launcher_files, compare_str);
	return 0;
}

static int newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* Whether OUT/summary.json exists and is newer than every listed report. */
static int up_to_date(const struct merge *m)
{
	char path[PATH_MAX];
	struct stat sum, st;
	snprintf(path, sizeof path, "%s/summary.json", m->dir);
	if (stat(path, &sum) != 0)
		return 0;
	for (size_t i = 0; i < m->nrank_files; i++) {
		snprintf(path, sizeof path, "%s/rank%d.json", m->dir, m->rank_files[i]);
		if (stat(path, &st) == 0 && !newer(&sum.st_mtim, &st.st_mtim))
			return 0;
	}
	for (size_t i = 0; i < m->nlauncher_files; i++) {
		snprintf(path, sizeof path, "%s/%s", m->dir, m->launcher_files[i]);
		if (stat(path, &st) == 0 && !newer(&sum.st_mtim, &st.st_mtim))
			return 0;
	}
	return 1;
}

static void free_merge(struct merge *m)
{
	free(m->rank_files);
	for (size_t i = 0; i < m->nlauncher_files; i++)
		free(m->launcher_files[i]);
	free(m->launcher_files);
	if (m->s)
		for (size_t i = 0; i < PW_MERGE_MAX_DOMAINS; i++)
			free(m->s->colls[i].off);
	free(m->s);
	free(m->rows);
	for (size_t i = 0; i < m->nlaunchers; i++) {
		free(m->launchers[i].file);
		free(m->launchers[i].host);
		free(m->launchers[i].command);
	}
	free(m->launchers);
	for (size_t i = 0; i < m->nbad; i++) {
		free(m->bad[i].file);
		free(m->bad[i].why);
	}
	free(m->bad);
	for (size_t i = 0; i < m->ndomains; i++) {
		free(m->domains[i].min);
		free(m->domains[i].max);
		free(m->domains[i].last);
		free(m->domains[i].seen);
	}
	free(m->command);
}

/* Everything after the lock is taken. */
static int merge_locked(struct merge *m, int only_if_complete, char *msg, size_t msglen)
{
	char path[PATH_MAX], json_path[PATH_MAX];
	struct timespec listed;
	clock_gettime(CLOCK_REALTIME, &listed);
	if (list_dir(m, msg, msglen))
		return -1;
	if (!m->nrank_files) {
		snprintf(msg, msglen, "no rank<R>.json report in %s", m->dir);
		return -1;
	}
	snprintf(json_path, sizeof json_path, "%s/summary.json", m->dir);
	if (only_if_complete && up_to_date(m)) {
		snprintf(msg, msglen, "%s is up to date", json_path);
		return 0;
	}
	if (!(m->s = new_summary()) || read_ranks(m) || read_launchers(m)) {
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	if (!m->nrows) {
		snprintf(msg, msglen, "no readable rank report in %s (%zu unreadable)", m->dir, m->nbad);
		return -1;
	}
	if ((uint64_t)m->rows[m->nrows - 1].rank + 1 > m->world)
		m->world = (uint64_t)m->rows[m->nrows - 1].rank + 1;
	m->nmissing = 0;
	for (uint64_t r = 0; r < m->world; r++)
		if (!has_file(m, r))
			m->nmissing++;
	if (only_if_complete && m->nmissing) {
		format_missing(m, msg, msglen, " yet");
		return 1;
	}
	if (compute_stats(m) || compute_skew(m)) {
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	find_straggler(m);
	if (find_phase(m)) {
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	snprintf(path, sizeof path, "%s/summary.txt", m->dir);
	FILE *f = pw_report_open(path, msg, msglen);
	if (!f)
		return -1;
	if (write_text(f, m))
		return pw_report_abandon(f, path, "out of memory", msg, msglen);
	if (pw_report_close(f, path, msg, msglen))
		return -1;
	char html_path[PATH_MAX];
	snprintf(html_path, sizeof html_path, "%s/summary.html", m->dir);
	if (!(f = pw_report_open(html_path, msg, msglen)))
		return -1;
	if (pw_merge_write_html(f, m))
		return pw_report_abandon(f, html_path, "out of memory", msg, msglen);
	if (pw_report_close(f, html_path, msg, msglen))
		return -1;
	if (!(f = pw_report_open(json_path, msg, msglen)))
		return -1;
	write_json(f, m);
	if (pw_report_close(f, json_path, msg, msglen))
		return -1;
	/* summary.json is dated a little before the listing it was made from, so that a report written since
	 * is newer, even with coarse file times or a file server's clock a little off ours */
	listed.tv_sec -= FRESH_MARGIN_S;
	struct timespec times[2] = {{0, UTIME_OMIT}, listed};
	utimensat(AT_FDCWD, json_path, times, AT_SYMLINK_NOFOLLOW);
	snprintf(msg, msglen, "summary of %zu rank%s in %s", m->nrows, m->nrows == 1 ? "" : "s", path);
	return 0;
}

int pw_merge(const char *out_dir, int only_if_complete, char *msg, size_t msglen)
{
	char lock_path[PATH_MAX];
	if (strlen(out_dir) + 64 >= sizeof lock_path) {
		snprintf(msg, msglen, "directory name too long: %.100s...", out_dir);
		return -1;
	}
	struct stat st;
	if (stat(out_dir, &st) != 0) {
		snprintf(msg, msglen, "cannot open %s: %s", out_dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(msg, msglen, "%s is not a directory", out_dir);
		return -1;
	}
	snprintf(lock_path, sizeof lock_path, "%s/.profwrap-merge.lock", out_dir);
	/* Never through a link planted there: with O_NOFOLLOW it is refused. (It is not replaced: removing the
	 * name while another merge holds the lock on the file it names would let a third run beside that one.) */
	int lock = open(lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock < 0) {
		if (errno == ELOOP)
			snprintf(msg, msglen, "%s is a symbolic link; remove it", lock_path);
		else
			snprintf(msg, msglen, "cannot open %s: %s", lock_path, strerror(errno));
		return -1;
	}
	while (flock(lock, LOCK_EX) != 0) {
		if (errno != EINTR) {
			snprintf(msg, msglen, "cannot lock %s: %s", lock_path, strerror(errno));
			close(lock);
			return -1;
		}
	}
	struct merge m;
	memset(&m, 0, sizeof m);
	m.dir = out_dir;
	m.straggler = -1;
	int rc = merge_locked(&m, only_if_complete, msg, msglen);
	free_merge(&m);
	close(lock); /* releases the lock */
	return rc;
}
