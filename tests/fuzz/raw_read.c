/* Fuzz target: the raw trace reader (collector/lib/rawfile.c, pw_raw_read_mem), which `profwrap report` runs on
 * files anyone could have written or damaged.
 *
 * Input: the bytes of one raw trace file.
 *
 * Checked: the reader returns 0 or -1 with one line naming the file ("fuzz.pwt: ...", no newline); on -1
 * nothing was delivered; on 0 the process came first and once. Every pointer handed out (argv, exe, host,
 * records, strings, stacks, build-ids) lies inside the buffer with its whole length and is read through, so
 * ASan sees any overrun; records come with a known type and room for it; stacks are parsed and walked as the
 * analysis does. Every chunk announced (for the dump) lies whole inside the buffer, after the one before it, and
 * a record's offset inside the chunk last announced. */
#define _GNU_SOURCE
#include "fuzz.h"

#include "../../collector/lib/rawfile.h"
#include "../../common/pw_record.h"

#define NAME "fuzz.pwt"

struct seen {
	const uint8_t *buf;
	size_t size;
	int procs, others;
	uint64_t sum;
	size_t chunk_at, chunk_end; /* the chunk last announced: its header's offset, the end of its payload */
	int chunks;
};

static void check_inside(const struct seen *s, const void *p, size_t len)
{
	FUZZ_CHECK(fuzz_inside(s->buf, s->size, p, len));
}

static void on_proc(void *ctx, const struct pw_raw_proc_view *p)
{
	struct seen *s = ctx;
	FUZZ_CHECK(s->procs == 0 && s->others == 0);
	s->procs++;
	struct pw_raw_proc pr;
	memcpy(&pr, p->proc, sizeof pr);
	check_inside(s, p->argv, pr.argv_len);
	check_inside(s, p->exe, pr.exe_len);
	check_inside(s, p->host, pr.host_len);
	s->sum += fuzz_touch(p->argv, pr.argv_len) + fuzz_touch(p->exe, pr.exe_len) + fuzz_touch(p->host, pr.host_len);
	s->sum += p->start_ns;
}

static void walk_stack(struct seen *s, const void *stack, uint32_t len)
{
	struct pw_stack_view v;
	if (pw_stack_parse(stack, len, &v) < 0)
		return;
	for (uint32_t i = 0; i < v.native_count; i++)
		s->sum += pw_stack_native(&v, i);
	const uint8_t *pos = v.python;
	uint32_t line, file_len, func_len;
	const char *file, *func;
	uint32_t n = 0;
	/* as the analysis walks them (collector/model/call_stacks.c): the frames parsed, which must all be there */
	while (n < v.python_count && pw_stack_py_next(&v, &pos, &line, &file, &file_len, &func, &func_len)) {
		check_inside(s, file, file_len);
		check_inside(s, func, func_len);
		s->sum += line + fuzz_touch(file, file_len) + fuzz_touch(func, func_len);
		n++;
	}
	FUZZ_CHECK(n == v.python_count);
}

static void on_event(void *ctx, const struct pw_raw_event *e)
{
	struct seen *s = ctx;
	FUZZ_CHECK(s->procs == 1);
	s->others++;
	struct pw_rec_hdr h;
	memcpy(&h, e->rec, sizeof h);
	FUZZ_CHECK(h.type != PW_EV_PAD && h.type < PW_EV_COUNT);
	size_t rsize = (size_t)h.size8 * 8;
	FUZZ_CHECK(rsize >= pw_event_min_size(h.type));
	FUZZ_CHECK(((uintptr_t)e->rec & 7) == 0);
	/* in place, or (flagged records) a copy on the reader's stack: either way rsize bytes are readable */
	s->sum += fuzz_touch(e->rec, rsize) + e->t0_ns + e->t1_ns;
	FUZZ_CHECK(s->chunks && e->offset >= s->chunk_at + 8 && e->offset + rsize <= s->chunk_end);
	if (e->str) {
		FUZZ_CHECK(pw_kind_has_string(pw_events[h.type].kind));
		check_inside(s, e->str, e->str_len);
		s->sum += fuzz_touch(e->str, e->str_len);
	}
	if (e->stack) {
		check_inside(s, e->stack, e->stack_len);
		walk_stack(s, e->stack, e->stack_len);
	}
	if (e->build_id) {
		FUZZ_CHECK(h.type == PW_EV_MODULE);
		check_inside(s, e->build_id, e->build_id_len);
		s->sum += fuzz_touch(e->build_id, e->build_id_len);
	}
	if (e->cwd) {
		FUZZ_CHECK(pw_events[h.type].kind == PW_K_OPEN);
		check_inside(s, e->cwd, e->cwd_len);
		s->sum += fuzz_touch(e->cwd, e->cwd_len) + (uint64_t)e->dirfd;
	}
	int64_t fd, from;
	s->sum += (uint64_t)pw_fd_effect_of(e, &fd, &from);
}

static void on_lost(void *ctx, uint32_t lane, uint64_t total)
{
	struct seen *s = ctx;
	FUZZ_CHECK(s->procs == 1);
	s->others++;
	s->sum += lane + total;
}

static void on_thread_lost(void *ctx, uint32_t tid, uint64_t total)
{
	struct seen *s = ctx;
	FUZZ_CHECK(s->procs == 1);
	s->others++;
	s->sum += tid + total;
}

static void on_salvage(void *ctx, const struct pw_raw_salvage *sv)
{
	struct seen *s = ctx;
	FUZZ_CHECK(s->procs == 1);
	s->others++;
	s->sum += sv->realtime_ns;
}

static void on_end(void *ctx, const struct pw_raw_end *end, uint64_t end_ns, const char *exec_path)
{
	struct seen *s = ctx;
	FUZZ_CHECK(s->procs == 1);
	s->others++;
	s->sum += end->how + end_ns;
	if (exec_path)
		FUZZ_CHECK(strlen(exec_path) < 4096);
}

static void on_chunk(void *ctx, size_t offset, uint32_t type, uint32_t len)
{
	struct seen *s = ctx;
	FUZZ_CHECK(!s->chunks || offset >= s->chunk_end);
	FUZZ_CHECK(offset + 8 + (size_t)len <= s->size);
	FUZZ_CHECK(s->chunks || type == PW_CHUNK_PROC);
	s->chunks++;
	s->chunk_at = offset;
	s->chunk_end = offset + 8 + len;
}

static void on_clock(void *ctx, const struct pw_clock_pair *p)
{
	struct seen *s = ctx;
	FUZZ_CHECK(s->procs == 1 && s->chunk_end - s->chunk_at >= 8 + sizeof *p);
	s->sum += p->ticks + p->ns;
}

static void on_string(void *ctx, uint64_t ref, const char *str, uint32_t len)
{
	struct seen *s = ctx;
	FUZZ_CHECK(s->procs == 1 && ref != 0);
	check_inside(s, str, len);
	FUZZ_CHECK((const uint8_t *)str + len <= s->buf + s->chunk_end);
	s->sum += fuzz_touch(str, len);
}

static const struct pw_raw_visitor visitor = {.proc = on_proc, .event = on_event, .lost = on_lost,
					      .thread_lost = on_thread_lost, .salvage = on_salvage, .end = on_end,
					      .chunk = on_chunk, .clock = on_clock, .string = on_string};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_copy(data, size);
	struct seen s = {buf, size, 0, 0, 0, 0, 0, 0};
	uint64_t skipped = 0;
	char err[512];
	int rc = pw_raw_read_mem(NAME, buf, size, &visitor, &s, &skipped, err, sizeof err);
	FUZZ_CHECK(rc == 0 || rc == -1);
	FUZZ_CHECK(strchr(err, '\n') == NULL);
	if (rc < 0) {
		FUZZ_CHECK(strncmp(err, NAME ": ", sizeof NAME + 1) == 0);
		FUZZ_CHECK(s.procs == 0 && s.others == 0 && s.chunks == 0 && skipped == 0);
	} else {
		FUZZ_CHECK(s.procs == 1);
		FUZZ_CHECK(!err[0] || strncmp(err, NAME ": ", sizeof NAME + 1) == 0);
		FUZZ_CHECK(!skipped || err[0]); /* a refused record is named */
	}
	free(buf);
	return 0;
}
