/* The merge's state (merge.c builds it, its writers render it: summary.txt and summary.json in merge.c,
 * summary.html in merge_html.c). Private to collector/merge/. */
#ifndef PW_MERGE_STATE_H
#define PW_MERGE_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../report/rank_summary.h"
#include "merge_limits.h"

#define PHASE_NAME_MAX 128
#define DOMAIN_NAME_MAX 32
#define LAST_TOP 3        /* ranks named per domain as entering last most often */

/* The summary's TEXT members' buffers, end to end. */
#define PW_X(name, key, type, merge, cap, label, row, stat) +(cap)
enum { TEXT_BYTES = 0 PW_SUMMARY_MEMBERS(PW_X) };
#undef PW_X
_Static_assert(PW_SUM_COUNT <= 32, "struct summary's present has a bit per member");

struct phase {
	char name[PHASE_NAME_MAX];
	uint64_t ns;
};

/* One domain's collective entries of the file being read: offsets from start_realtime_ns. The buffers are
 * kept from file to file. */
struct file_coll {
	char domain[DOMAIN_NAME_MAX];
	uint64_t *off;
	size_t n, cap;
	int truncated;
};

/* The summary of the file being read. */
struct summary {
	union pw_summary_value v[PW_SUM_COUNT]; /* TEXT: text[member] */
	uint32_t present;                         /* a bit per member read with a value other than null */
	char *text[PW_SUM_COUNT];                 /* TEXT members' buffers of their cap, in texts */
	char texts[TEXT_BYTES];
	size_t nphases;
	struct phase phases[PW_MERGE_MAX_PHASES];
	size_t ncolls;
	struct file_coll colls[PW_MERGE_MAX_DOMAINS];
	int colls_dropped; /* collective objects past PW_MERGE_MAX_DOMAINS */
};

struct row {
	int rank;
	uint64_t v[PW_SUM_COUNT]; /* the FIGURE members' */
	uint64_t last_arrivals; /* collectives (all domains) this rank entered last */
	uint64_t late_ns;       /* the spreads of those: how long the first rank in waited for it */
	char host[PW_SUMMARY_HOST_MAX];
	char top[PW_SUMMARY_TOP_MAX];
};

/* Per collective index k of a domain, over the ranks read so far: the earliest and latest wall-clock entry,
 * the rank that entered last (the lowest on ties), and how many ranks had index k. */
struct domain {
	char name[DOMAIN_NAME_MAX];
	size_t n, cap;
	uint64_t *min, *max;
	int32_t *last;
	uint32_t *seen;
	int truncated;
	/* results */
	size_t compared, max_index;
	uint64_t median_spread, max_spread;
	size_t ntop;
	int top_rank[LAST_TOP];
	uint64_t top_count[LAST_TOP];
};

struct launcher {
	char *file, *host, *command;
	uint64_t processes, wall;
};

struct unreadable {
	char *file, *why;
};

struct stat_col {
	uint64_t min, median, max;
	int min_rank, max_rank;
};

struct merge {
	const char *dir;
	int *rank_files; /* the ranks of the rank<R>.json files, ascending */
	size_t nrank_files;
	char **launcher_files;
	size_t nlauncher_files;
	struct summary *s;
	struct row *rows; /* ascending rank */
	size_t nrows, rows_cap;
	struct launcher *launchers;
	size_t nlaunchers;
	struct unreadable *bad;
	size_t nbad;
	struct domain domains[PW_MERGE_MAX_DOMAINS];
	size_t ndomains;
	int domains_dropped;
	char *command;   /* the job's: the lowest rank's */
	uint64_t world;  /* W */
	size_t nmissing;
	struct stat_col stats[PW_SUM_COUNT]; /* the FIGURE members' */
	size_t compared; /* collectives compared, all domains */
	uint64_t spread_total; /* their spreads summed: the time the first rank in waited for the last */
	int straggler;   /* rank, or -1 */
	const char *reason; /* "collectives", "busy", NULL */
	size_t best_row;    /* the straggler's row, or the candidate that fell short */
	int has_candidate;
	int has_phase;
	struct phase phase; /* the straggler's phase, ns = its excess over the others' median */
	int straggler_nphases;
};

/* The sentence on the straggler (or why none is named) and its phase, as summary.txt prints it; durations'
 * spaces are NBSP_MARK, which a writer makes a space that does not break. Returns text. */
#define NBSP_MARK '\x01'
const char *pw_merge_straggler_text(const struct merge *m, char *text, size_t size);

/* Writes summary.html of m to f. Returns 0, or -1 when out of memory. */
int pw_merge_write_html(FILE *f, const struct merge *m);

#endif
