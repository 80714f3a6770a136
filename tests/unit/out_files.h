/* The files of a test's output directory (out_fixture.h): raw traces written by hand (raw_writer.h) and
 * analysed, and what the report writers put there read back: a file's text, a JSON report parsed
 * (json_reader.h). Include after cmocka.h. */
#ifndef PW_TEST_OUT_FILES_H
#define PW_TEST_OUT_FILES_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_reader.h"
#include "out_fixture.h"
#include "raw_writer.h"

/* OUT/raw/<rank>-<pid>.pwt with the header, PROC (argv of argv_len bytes, '\0'-separated; CLOCK_MONOTONIC;
 * every domain traced) and a CLOCK pair at start; returns the fd to add chunks to. */
static inline int fx_raw_open(const struct fx *fx, int pid, int rank, uint64_t start, const char *argv, uint32_t argv_len)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%d-%d.pwt", fx->raw, rank, pid);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pw_raw_write_header(fd), 0);
	struct pw_raw_proc p = {0};
	p.pid = pid;
	p.ppid = 1;
	p.rank = rank;
	p.world_size = 1;
	p.clock_kind = PW_CLOCK_MONOTONIC;
	p.domain_mask = (1u << PW_DOM_COUNT) - 1;
	p.clock0.ticks = start;
	p.clock0.ns = start;
	put_proc(fd, p, argv, argv_len, "/bin/train", "node0");
	put_clock(fd, start, start);
	return fd;
}

/* Ends the file as a process that exited at end_ns, and closes it. */
static inline void fx_raw_end(int fd, uint64_t end_ns)
{
	struct pw_raw_end e = {0};
	e.how = PW_END_EXITED;
	e.end_ticks = end_ns;
	put_end(fd, &e);
	close(fd);
}

/* Analyses the directory into fx->an; the test fails when that fails. */
static inline void fx_analyze(struct fx *fx)
{
	char err[512] = "";
	if (pw_analyze(fx->dir, &fx->an, err, sizeof err) != 0)
		fail_msg("pw_analyze failed: %s", err);
}

/* The whole of OUT/name, NUL-terminated, its length in *len; the test fails when it was not written. */
static inline char *fx_slurp(const struct fx *fx, const char *name, size_t *len)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", fx->dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("%s was not written: %s", path, strerror(errno));
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (!got)
			break;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* OUT/name parsed, wrapped as [tree, text] because the tree points into the text: items[0] is the
 * document; fx_json_free() frees both. The test fails when it is not valid JSON. */
static inline struct jr *fx_json(const struct fx *fx, const char *name)
{
	size_t n;
	char *text = fx_slurp(fx, name, &n);
	struct jr *v = jr_parse(text, n);
	if (!v)
		fail_msg("%s is not valid JSON", name);
	struct jr *holder = calloc(1, sizeof *holder);
	assert_non_null(holder);
	holder->type = JR_ARR;
	holder->items = calloc(2, sizeof *holder->items);
	assert_non_null(holder->items);
	holder->items[0] = v;
	holder->items[1] = calloc(1, sizeof(struct jr));
	assert_non_null(holder->items[1]);
	holder->items[1]->type = JR_STR;
	holder->items[1]->text = text;
	holder->n = 2;
	return holder;
}

static inline void fx_json_free(struct jr *holder)
{
	free((char *)holder->items[1]->text);
	jr_free(holder);
}

#endif
