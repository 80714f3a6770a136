#define _GNU_SOURCE
/* Unit tests for the call stacks of a rank (collector/model/call_stacks.c, report_stacks.c). The first tests drive the
 * module directly as analysis.c does (pw_stacks_file_init, pw_stacks_event per record, pw_stacks_file_end,
 * pw_stacks_finish) with stacks built in memory; the last one writes raw traces, runs pw_analyze and
 * pw_write_reports and reads the text, JSON, folded and trace files back.
 *
 * Native frames are real: the addresses are return addresses taken inside functions of this test binary
 * (each defined on one line, so every address in it has that line), described by a module record built
 * from dl_iterate_phdr and /proc/self/exe, and symbolised by collector/symbols/symbolize.c. The profiler's, the
 * interpreter's and a system library's frames are modules at made-up addresses whose files do not exist:
 * they stay `module+0xOFFSET`. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../collector/lib/rawfile.h"
#include "../../collector/model/call_stacks.h"
#include "../../collector/render.h"
#include "../../collector/report/report_call_stacks.h"
#include "../../collector/symbols/symbolize.h"
#include "out_files.h"

/* ---- code to point at: each function on one line ---- */

__attribute__((noinline)) uint64_t test_capture_ra(void);
__attribute__((noinline)) uint64_t test_user_leaf(int *line);
__attribute__((noinline)) uint64_t test_user_mid(int *line);
__attribute__((noinline)) uint64_t test_capture_ra(void) { return (uint64_t)(uintptr_t)__builtin_return_address(0); }
__attribute__((noinline)) uint64_t test_user_leaf(int *line) { volatile uint64_t ra = test_capture_ra(); *line = __LINE__; return ra; }
__attribute__((noinline)) uint64_t test_user_mid(int *line) { volatile uint64_t ra = test_capture_ra(); *line = __LINE__; return ra; }

/* Fake modules: [base, base + 1 MiB), bias base, files that do not exist. */
#define PW_BASE 0x10000000ull
#define SYS_BASE 0x20000000ull
#define PY_BASE 0x30000000ull
#define MOD_SIZE 0x100000ull
#define PW_PATH "/opt/profwrap/lib/libprofwrap.so"
#define SYS_PATH "/lib/x86_64-linux-gnu/libfake-sys.so.1"
#define PY_PATH "/opt/py/lib/libpython3.12.so.1.0"

struct self_image {
	char exe[PATH_MAX];
	uint64_t bias, lo, hi;
	uint64_t ra_leaf, ra_mid; /* return addresses inside test_user_leaf and test_user_mid */
	int leaf_line, mid_line;
};

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct self_image *s = data;
	if (info->dlpi_name && info->dlpi_name[0]) /* the main program comes first, unnamed */
		return 0;
	s->bias = info->dlpi_addr;
	s->lo = UINT64_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uint64_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < s->lo)
			s->lo = a;
		if (a + ph->p_memsz > s->hi)
			s->hi = a + ph->p_memsz;
	}
	return 1;
}

static void self_image(struct self_image *s)
{
	memset(s, 0, sizeof *s);
	ssize_t n = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
	assert_true(n > 0);
	s->exe[n] = 0;
	assert_int_equal(dl_iterate_phdr(find_self, s), 1);
	s->ra_leaf = test_user_leaf(&s->leaf_line);
	s->ra_mid = test_user_mid(&s->mid_line);
	assert_true(s->ra_leaf >= s->lo && s->ra_leaf < s->hi);
}

/* ---- stacks as the preload stores them ---- */

struct pyf {
	const char *file, *func;
	uint32_t line;
};

/* struct pw_stack, the native addresses, the Python frames into buf. Returns the length. */
static size_t mkstack(uint8_t *buf, size_t cap, uint32_t flags, const uint64_t *nat, size_t nn, const struct pyf *py,
		      size_t np)
{
	struct pw_stack h = {PW_STACK_MAGIC, (uint16_t)nn, (uint16_t)np, flags, 0};
	size_t n = sizeof h;
	assert_true(n + nn * 8 <= cap);
	memcpy(buf, &h, sizeof h);
	if (nn)
		memcpy(buf + n, nat, nn * 8);
	n += nn * 8;
	for (size_t i = 0; i < np; i++) {
		struct pw_py_frame f = {py[i].line, (uint16_t)strlen(py[i].file), (uint16_t)strlen(py[i].func)};
		size_t size = pw_py_frame_size(f.file_len, f.func_len);
		assert_true(n + size <= cap);
		memset(buf + n, 0, size);
		memcpy(buf + n, &f, sizeof f);
		memcpy(buf + n + sizeof f, py[i].file, f.file_len);
		memcpy(buf + n + sizeof f + f.file_len, py[i].func, f.func_len);
		n += size;
	}
	return n;
}

/* ---- direct driving ---- */

#define NFILES 2

struct sfx {
	struct self_image self;
	struct pw_stack_report *r;
	struct pw_stacks_file *f[NFILES];
	struct pw_symbolizer *sym;
	struct pw_proc proc[NFILES];
};

static int sfx_setup(void **state)
{
	struct sfx *x = calloc(1, sizeof *x);
	if (!x || !(x->sym = pw_sym_new()))
		return -1;
	self_image(&x->self);
	*state = x;
	return 0;
}

static int sfx_teardown(void **state)
{
	struct sfx *x = *state;
	for (size_t i = 0; i < NFILES; i++)
		if (x->f[i])
			pw_stacks_file_end(NULL, x->f[i], NULL, NULL);
	pw_stacks_free(x->r);
	pw_sym_free(x->sym);
	free(x);
	return 0;
}

static struct pw_stacks_file *file_open(struct sfx *x, size_t slot, int pid)
{
	x->f[slot] = pw_stacks_file_init(x->self.exe);
	assert_non_null(x->f[slot]);
	x->proc[slot] = (struct pw_proc){.pid = pid, .start_ns = 1000u * (uint64_t)pid};
	return x->f[slot];
}

static void file_end(struct sfx *x, size_t slot)
{
	struct pw_stacks_file *f = x->f[slot];
	x->f[slot] = NULL; /* freed whatever happens */
	assert_int_equal(pw_stacks_file_end(&x->r, f, x->sym, &x->proc[slot]), 0);
}

static void feed(struct sfx *x, size_t slot, const struct pw_rec_call *rec, uint64_t ref, const void *stack,
		 size_t len, const char *str)
{
	struct pw_raw_event e = {0};
	e.rec = rec;
	e.t0_ns = rec->t0;
	e.t1_ns = rec->t1;
	e.stack_ref = ref;
	e.stack = stack;
	e.stack_len = (uint32_t)len;
	e.str = str;
	e.str_len = str ? (uint32_t)strlen(str) : 0;
	assert_int_equal(pw_stacks_event(x->f[slot], &e), 0);
}

/* A module record: path "" stands for the main program. */
static void feed_module(struct sfx *x, size_t slot, const char *path, uint64_t bias, uint64_t lo, uint64_t hi)
{
	struct pw_rec_module m;
	memset(&m, 0, sizeof m);
	m.c = mkrec(PW_EV_MODULE, 1, 0, 0, 0, bias, 8, 0);
	m.c.h.size8 = sizeof m / 8;
	m.lo = lo;
	m.hi = hi;
	feed(x, slot, &m.c, 0, NULL, 0, path);
}

static void feed_modules(struct sfx *x, size_t slot)
{
	feed_module(x, slot, "", x->self.bias, x->self.lo, x->self.hi);
	feed_module(x, slot, PW_PATH, PW_BASE, PW_BASE, PW_BASE + MOD_SIZE);
	feed_module(x, slot, SYS_PATH, SYS_BASE, SYS_BASE, SYS_BASE + MOD_SIZE);
	feed_module(x, slot, PY_PATH, PY_BASE, PY_BASE, PY_BASE + MOD_SIZE);
}

static void feed_call(struct sfx *x, size_t slot, uint16_t ev, uint32_t tid, uint64_t t0, uint64_t dur, uint64_t ref,
		      const void *stack, size_t len)
{
	struct pw_rec_call c = mkrec(ev, tid, t0, t0 + dur, 0, 3, 0, 0);
	feed(x, slot, &c, ref, stack, len, NULL);
}

static const struct pw_stack_row *find_row(const struct pw_stack_report *r, uint32_t ev, uint32_t stack)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].ev == ev && r->rows[i].stack == stack)
			return &r->rows[i];
	return NULL;
}

/* The frames of stack id as `function (file:line)` joined by " | ", innermost first. */
static const char *stack_str(const struct pw_stack_report *r, uint32_t id)
{
	static char out[4096];
	char buf[512];
	size_t n = 0;
	out[0] = 0;
	assert_true(id < r->nstacks);
	const struct pw_stack_entry *st = &r->stacks[id];
	for (uint32_t i = 0; i < st->len; i++)
		n += (size_t)snprintf(out + n, sizeof out - n, "%s%s", i ? " | " : "",
				      pw_stack_frame_text(buf, sizeof buf, &r->frames[r->frame_ids[st->first + i]], 0));
	return out;
}

/* The id of the rank's stack that reads as text, or fails. */
static uint32_t stack_named(const struct pw_stack_report *r, const char *text)
{
	for (uint32_t i = 0; i < r->nstacks; i++)
		if (strcmp(stack_str(r, i), text) == 0)
			return i;
	fail_msg("no stack reads \"%s\"", text);
	return 0;
}

/* Counts and time per (call, stack); a reference seen again is the same stack even without its bytes. */
static void test_counts_per_call_stack(void **state)
{
	struct sfx *x = *state;
	uint8_t a[256], b[256];
	uint64_t na[] = {x->self.ra_leaf, x->self.ra_mid}, nb[] = {x->self.ra_mid};
	size_t la = mkstack(a, sizeof a, 0, na, 2, NULL, 0), lb = mkstack(b, sizeof b, 0, nb, 1, NULL, 0);
	file_open(x, 0, 10);
	feed_modules(x, 0);
	feed_call(x, 0, PW_EV_READ, 10, 100, 100, 64, a, la);
	feed_call(x, 0, PW_EV_READ, 10, 300, 300, 64, NULL, 0); /* same reference: the file's first bytes */
	feed_call(x, 0, PW_EV_WRITE, 10, 700, 50, 64, a, la);
	feed_call(x, 0, PW_EV_READ, 11, 800, 1000, 128, b, lb);
	feed_call(x, 0, PW_EV_READ, 11, 900, 5, 0, NULL, 0); /* no stack: not counted here */
	file_end(x, 0);
	pw_stacks_finish(x->r);
	struct pw_stack_report *r = x->r;
	char sa[512], sb[512];
	snprintf(sa, sizeof sa, "test_user_leaf (test_stacks.c:%d) | test_user_mid (test_stacks.c:%d)",
		 x->self.leaf_line, x->self.mid_line);
	snprintf(sb, sizeof sb, "test_user_mid (test_stacks.c:%d)", x->self.mid_line);
	uint32_t ia = stack_named(r, sa), ib = stack_named(r, sb);
	assert_int_equal(r->nstacks, 2);
	assert_int_equal(r->nrows, 3);
	const struct pw_stack_row *row = find_row(r, PW_EV_READ, ia);
	assert_non_null(row);
	assert_int_equal(row->count, 2);
	assert_int_equal(row->total_ns, 400);
	row = find_row(r, PW_EV_WRITE, ia);
	assert_non_null(row);
	assert_int_equal(row->count, 1);
	assert_int_equal(row->total_ns, 50);
	row = find_row(r, PW_EV_READ, ib);
	assert_non_null(row);
	assert_int_equal(row->count, 1);
	assert_int_equal(row->total_ns, 1000);
	assert_int_equal(r->rows[0].total_ns, 1000); /* longest first */
	assert_int_equal(r->captured, 4);
	assert_int_equal(r->unreadable, 0);
	/* frames are shared: the mid frame once */
	assert_int_equal(r->nframes, 2);
}

/* Pending Python frames: resolved by the next PY_STACK of the same thread only; unresolved at the end, the
 * native frames alone. The trace finds each event's stack again. */
static void test_python_pending(void **state)
{
	struct sfx *x = *state;
	uint8_t n[256], p1[256], p2[256];
	uint64_t nat[] = {PW_BASE + 0x10, x->self.ra_leaf, PY_BASE + 0x100};
	struct pyf other[] = {{"other.py", "elsewhere", 5}}, mine[] = {{"/w/train.py", "step", 12}, {"/w/train.py", "main", 3}};
	size_t ln = mkstack(n, sizeof n, 0, nat, 3, NULL, 0);
	size_t l1 = mkstack(p1, sizeof p1, 0, NULL, 0, other, 1), l2 = mkstack(p2, sizeof p2, 0, NULL, 0, mine, 2);
	file_open(x, 0, 20);
	feed_modules(x, 0);
	uint64_t pend = 64 | PW_STACK_PY_PENDING;
	feed_call(x, 0, PW_EV_READ, 1, 1000, 10, pend, n, ln);
	struct pw_rec_call ps = mkrec(PW_EV_PY_STACK, 2, 1100, 1100, 0, 0, 0, 0); /* another thread's */
	feed(x, 0, &ps, 128, p1, l1, NULL);
	ps = mkrec(PW_EV_PY_STACK, 1, 1200, 1200, 0, 0, 0, 0);
	feed(x, 0, &ps, 192, p2, l2, NULL);
	feed_call(x, 0, PW_EV_READ, 1, 1300, 20, pend, n, ln); /* never resolved */
	ps = mkrec(PW_EV_PY_STACK, 2, 1400, 1400, 0, 0, 0, 0);
	feed(x, 0, &ps, 128, p1, l1, NULL); /* thread 2 has nothing pending */
	file_end(x, 0);
	pw_stacks_finish(x->r);
	struct pw_stack_report *r = x->r;
	char native[256];
	snprintf(native, sizeof native, "test_user_leaf (test_stacks.c:%d) | libpython3.12.so.1.0+0x100",
		 x->self.leaf_line);
	char merged[256];
	snprintf(merged, sizeof merged, "test_user_leaf (test_stacks.c:%d) | step (train.py:12) | main (train.py:3)",
		 x->self.leaf_line);
	uint32_t im = stack_named(r, merged), in = stack_named(r, native);
	assert_int_equal(r->nstacks, 2);
	assert_int_equal(find_row(r, PW_EV_READ, im)->total_ns, 10);
	assert_int_equal(find_row(r, PW_EV_READ, in)->total_ns, 20);
	assert_int_equal(r->captured, 2);
	const struct pw_stack_image *img = pw_stacks_image(r, &x->proc[0]);
	assert_non_null(img);
	assert_int_equal(pw_stacks_lookup(img, 1, 1000, pend), im);
	assert_int_equal(pw_stacks_lookup(img, 1, 1300, pend), in);
	assert_int_equal(pw_stacks_lookup(img, 1, 1000, 64), in); /* the reference alone: its own frames */
	assert_int_equal(pw_stacks_lookup(img, 1, 1000, 999), PW_STACKS_NONE);
	struct pw_proc other_proc = {.pid = 21};
	assert_null(pw_stacks_image(r, &other_proc));
}

/* The profiler's innermost frames dropped; from the first interpreter frame out, the Python frames. */
static void test_interpreter_cut(void **state)
{
	struct sfx *x = *state;
	uint8_t s[512];
	uint64_t nat[] = {PW_BASE + 0x10, PW_BASE + 0x20, SYS_BASE + 0x30, x->self.ra_leaf,
			  PY_BASE + 0x100, x->self.ra_mid, PY_BASE + 0x200};
	struct pyf py[] = {{"/w/model.py", "Net.forward", 88}, {"/w/train.py", "<module>", 1}};
	size_t len = mkstack(s, sizeof s, 0, nat, 7, py, 2);
	file_open(x, 0, 30);
	feed_modules(x, 0);
	feed_call(x, 0, PW_EV_FSYNC, 1, 10, 7, 64, s, len);
	file_end(x, 0);
	char want[512];
	snprintf(want, sizeof want,
		 "libfake-sys.so.1+0x30 | test_user_leaf (test_stacks.c:%d) | Net.forward (model.py:88) | "
		 "<module> (train.py:1)",
		 x->self.leaf_line);
	assert_int_equal(x->r->nstacks, 1);
	assert_string_equal(stack_str(x->r, 0), want);
	const struct pw_stack_frame *py0 = &x->r->frames[x->r->frame_ids[x->r->stacks[0].first + 2]];
	assert_true(py0->python);
	assert_string_equal(py0->module, "python");
	assert_string_equal(py0->file, "/w/model.py");
	/* without Python frames the native stack stays whole, the profiler's frames still dropped */
	len = mkstack(s, sizeof s, 0, nat, 7, NULL, 0);
	file_open(x, 1, 31);
	feed_modules(x, 1);
	feed_call(x, 1, PW_EV_FSYNC, 1, 10, 7, 64, s, len);
	file_end(x, 1);
	snprintf(want, sizeof want,
		 "libfake-sys.so.1+0x30 | test_user_leaf (test_stacks.c:%d) | libpython3.12.so.1.0+0x100 | "
		 "test_user_mid (test_stacks.c:%d) | libpython3.12.so.1.0+0x200",
		 x->self.leaf_line, x->self.mid_line);
	stack_named(x->r, want);
}

/* The same stack in two processes (other addresses, other references): one rank-level stack. */
static void test_dedupe_across_processes(void **state)
{
	struct sfx *x = *state;
	uint8_t s[256];
	uint64_t nat[] = {x->self.ra_leaf, x->self.ra_mid};
	size_t len = mkstack(s, sizeof s, 0, nat, 2, NULL, 0);
	file_open(x, 0, 40);
	feed_modules(x, 0);
	feed_call(x, 0, PW_EV_READ, 40, 10, 100, 64, s, len);
	file_end(x, 0);
	/* the second process has the binary loaded 1 MiB higher */
	uint64_t shift = 1u << 20;
	uint64_t nat2[] = {x->self.ra_leaf + shift, x->self.ra_mid + shift};
	len = mkstack(s, sizeof s, 0, nat2, 2, NULL, 0);
	file_open(x, 1, 41);
	feed_module(x, 1, "", x->self.bias + shift, x->self.lo + shift, x->self.hi + shift);
	feed_call(x, 1, PW_EV_READ, 41, 10, 250, 4096, s, len);
	file_end(x, 1);
	pw_stacks_finish(x->r);
	assert_int_equal(x->r->nstacks, 1);
	assert_int_equal(x->r->nrows, 1);
	assert_int_equal(x->r->rows[0].count, 2);
	assert_int_equal(x->r->rows[0].total_ns, 350);
	assert_int_equal(x->r->nframes, 2);
	assert_non_null(pw_stacks_image(x->r, &x->proc[0]));
	assert_int_equal(pw_stacks_lookup(pw_stacks_image(x->r, &x->proc[1]), 41, 10, 4096), 0);
}

/* Stacks whose bytes are not a whole stack are ignored (and counted), without a crash. */
static void test_corrupt_stacks(void **state)
{
	struct sfx *x = *state;
	uint8_t good[256], bad[256];
	uint64_t nat[] = {x->self.ra_leaf, x->self.ra_mid};
	struct pyf py[] = {{"/w/train.py", "step", 12}};
	size_t len = mkstack(good, sizeof good, 0, nat, 2, py, 1);
	file_open(x, 0, 50);
	feed_modules(x, 0);
	memcpy(bad, good, len);
	bad[0] ^= 0xff; /* bad magic */
	feed_call(x, 0, PW_EV_READ, 1, 10, 1, 64, bad, len);
	feed_call(x, 0, PW_EV_READ, 1, 20, 1, 128, good, sizeof(struct pw_stack) + 8); /* natives past the end */
	memcpy(bad, good, len);
	struct pw_py_frame f;
	memcpy(&f, bad + sizeof(struct pw_stack) + 16, sizeof f);
	f.file_len = 200; /* the Python frame overruns */
	memcpy(bad + sizeof(struct pw_stack) + 16, &f, sizeof f);
	feed_call(x, 0, PW_EV_READ, 1, 30, 1, 192, bad, len);
	feed_call(x, 0, PW_EV_READ, 1, 40, 1, 256, NULL, 0); /* bytes missing */
	feed_call(x, 0, PW_EV_READ, 1, 50, 1, 320, good, 3); /* shorter than the header */
	struct pw_rec_call ps = mkrec(PW_EV_PY_STACK, 1, 60, 60, 0, 0, 0, 0);
	feed_call(x, 0, PW_EV_READ, 1, 55, 1, 384 | PW_STACK_PY_PENDING, good, len);
	feed(x, 0, &ps, 448, bad, len, NULL); /* an unreadable PY_STACK: native frames only */
	file_end(x, 0);
	pw_stacks_finish(x->r);
	assert_int_equal(x->r->unreadable, 6);
	assert_int_equal(x->r->captured, 1);
	assert_int_equal(x->r->nrows, 1);
	char want[256];
	snprintf(want, sizeof want, "test_user_leaf (test_stacks.c:%d) | test_user_mid (test_stacks.c:%d) | step (train.py:12)",
		 x->self.leaf_line, x->self.mid_line);
	assert_string_equal(stack_str(x->r, x->r->rows[0].stack), want);
}

/* A sample's first address is the interrupted instruction, looked up as is (a return address is looked up
 * one byte back, which at a function's first byte is another function). */
static void test_sample_interrupted(void **state)
{
	struct sfx *x = *state;
	uint8_t s[256];
	uint64_t nat[] = {(uint64_t)(uintptr_t)test_user_leaf, x->self.ra_mid};
	size_t len = mkstack(s, sizeof s, PW_STACK_INTERRUPTED, nat, 2, NULL, 0);
	file_open(x, 0, 60);
	feed_modules(x, 0);
	struct pw_rec_call c = mkrec(PW_EV_CPU_SAMPLE, 60, 500, 500, 0, 10000000, 0, 0);
	feed(x, 0, &c, 64, s, len, NULL);
	feed(x, 0, &c, 64, s, len, NULL);
	c.arg0 = 20000000;
	feed(x, 0, &c, 64, s, len, NULL);
	file_end(x, 0);
	pw_stacks_finish(x->r);
	const struct pw_stack_report *r = x->r;
	assert_int_equal(r->nrows, 1);
	assert_int_equal(r->rows[0].ev, PW_EV_CPU_SAMPLE);
	assert_int_equal(r->rows[0].count, 3);
	assert_int_equal(r->rows[0].total_ns, 40000000);
	assert_int_equal(r->samples, 3);
	assert_int_equal(r->sample_period_ns, 20000000);
	const struct pw_stack_frame *top = &r->frames[r->frame_ids[r->stacks[0].first]];
	assert_non_null(top->function);
	assert_string_equal(top->function, "test_user_leaf");
	/* the same address as a return address is not test_user_leaf */
	len = mkstack(s, sizeof s, 0, nat, 2, NULL, 0);
	file_open(x, 1, 61);
	feed_modules(x, 1);
	feed(x, 1, &c, 64, s, len, NULL);
	file_end(x, 1);
	assert_int_equal(r->nstacks, 2);
	top = &r->frames[r->frame_ids[r->stacks[1].first]];
	assert_false(top->function && strcmp(top->function, "test_user_leaf") == 0);
}

/* ---- end to end: raw traces, pw_analyze, the reports ---- */

static void put_bytes(int fd, uint64_t ref, const void *p, size_t len)
{
	struct pw_raw_string h = {ref, (uint32_t)len, 0};
	put_chunk(fd, PW_CHUNK_STRING, &h, sizeof h, p, len);
}

struct stacked {
	struct pw_rec_call c;
	uint64_t ref;
};

static void put_stacked_with(int fd, uint16_t ev, uint32_t tid, uint64_t t0, uint64_t t1, uint64_t arg0,
			     uint64_t arg1, uint64_t ref)
{
	struct stacked s;
	s.c = mkrec(ev | PW_REC_STACK, tid, t0, t1, 0, arg0, arg1, 0);
	s.c.h.size8 = sizeof s / 8;
	s.ref = ref;
	put_chunk(fd, PW_CHUNK_RECORDS, &s, sizeof s, NULL, 0);
}

static void put_stacked(int fd, uint16_t ev, uint32_t tid, uint64_t t0, uint64_t t1, uint64_t arg0, uint64_t ref)
{
	put_stacked_with(fd, ev, tid, t0, t1, arg0, 0, ref);
}

static void put_module(int fd, uint64_t path_ref, uint64_t bias, uint64_t lo, uint64_t hi)
{
	struct pw_rec_module m;
	memset(&m, 0, sizeof m);
	m.c = mkrec(PW_EV_MODULE, 100, 1000, 1000, 0, bias, path_ref, 0);
	m.c.h.size8 = sizeof m / 8;
	m.lo = lo;
	m.hi = hi;
	put_chunk(fd, PW_CHUNK_RECORDS, &m, sizeof m, NULL, 0);
}

/* The line of text that contains needle, NUL-terminated in buf; fails when none. */
static const char *line_with(const char *text, const char *needle, char *buf, size_t len)
{
	const char *at = strstr(text, needle);
	if (!at)
		fail_msg("no line with \"%s\" in:\n%s", needle, text);
	const char *start = at;
	while (start > text && start[-1] != '\n')
		start--;
	size_t n = strcspn(start, "\n");
	snprintf(buf, len, "%.*s", (int)n, start);
	return buf;
}

static void test_reports(void **state)
{
	struct fx *fx = *state;
	struct self_image self;
	self_image(&self);
	int fd = fx_raw_open(fx, 100, 0, 1000, "train\0", 6);
	put_string(fd, 8, self.exe);
	put_string(fd, 16, PW_PATH);
	put_string(fd, 24, SYS_PATH);
	put_string(fd, 32, PY_PATH);
	put_module(fd, 8, self.bias, self.lo, self.hi);
	put_module(fd, 16, PW_BASE, PW_BASE, PW_BASE + MOD_SIZE);
	put_module(fd, 24, SYS_BASE, SYS_BASE, SYS_BASE + MOD_SIZE);
	put_module(fd, 32, PY_BASE, PY_BASE, PY_BASE + MOD_SIZE);
	uint8_t s[512];
	size_t len;
	/* S1: Python (call site load_batch), once with its frames, once deferred to a PY_STACK */
	uint64_t n1[] = {PW_BASE + 0x10, PY_BASE + 0x100, PY_BASE + 0x200};
	struct pyf p1[] = {{"/home/u/train.py", "load_batch", 42}, {"/home/u/train.py", "main", 7}};
	len = mkstack(s, sizeof s, 0, n1, 3, p1, 2);
	put_bytes(fd, 64, s, len);
	len = mkstack(s, sizeof s, 0, n1, 3, NULL, 0);
	put_bytes(fd, 128, s, len);
	len = mkstack(s, sizeof s, 0, NULL, 0, p1, 2);
	put_bytes(fd, 192, s, len);
	/* S2: a system frame inside user code (call site test_user_leaf) */
	uint64_t n2[] = {PW_BASE + 0x10, SYS_BASE + 0x300, self.ra_leaf, self.ra_mid};
	len = mkstack(s, sizeof s, 0, n2, 4, NULL, 0);
	put_bytes(fd, 256, s, len);
	/* S3: only system frames (call site the innermost) */
	uint64_t n3[] = {SYS_BASE + 0x400, SYS_BASE + 0x500};
	len = mkstack(s, sizeof s, 0, n3, 2, NULL, 0);
	put_bytes(fd, 320, s, len);
	/* S6: native code of the program called from Python (call site the Python frame, no caller) */
	uint64_t n6[] = {PW_BASE + 0x10, self.ra_leaf, PY_BASE + 0x100};
	struct pyf p6[] = {{"/home/u/io.py", "save", 5}};
	len = mkstack(s, sizeof s, 0, n6, 3, p6, 1);
	put_bytes(fd, 512, s, len);
	/* samples: one interrupted in test_user_leaf, one in Python */
	uint64_t n4[] = {(uint64_t)(uintptr_t)test_user_leaf, self.ra_mid};
	len = mkstack(s, sizeof s, PW_STACK_INTERRUPTED, n4, 2, NULL, 0);
	put_bytes(fd, 384, s, len);
	uint64_t n5[] = {PY_BASE + 0x100};
	struct pyf p5[] = {{"/home/u/train.py", "compute", 9}};
	len = mkstack(s, sizeof s, PW_STACK_INTERRUPTED, n5, 1, p5, 1);
	put_bytes(fd, 448, s, len);

	put_stacked(fd, PW_EV_READ, 100, 2000, 3000, 3, 64);
	put_stacked(fd, PW_EV_READ, 100, 4000, 6000, 3, 64);
	put_stacked(fd, PW_EV_READ, 100, 7000, 10000, 3, 128 | PW_STACK_PY_PENDING);
	put_stacked(fd, PW_EV_PY_STACK, 100, 10100, 10100, 0, 192);
	put_stacked(fd, PW_EV_READ, 100, 11000, 15000, 3, 256);
	put_stacked(fd, PW_EV_FSYNC, 100, 16000, 16500, 3, 320);
	put_stacked(fd, PW_EV_WRITE, 100, 16600, 18600, 3, 512);
	/* samples at 100 Hz weigh the CPU time they stand for (arg1; 0, an older trace's: one period) */
	put_stacked_with(fd, PW_EV_CPU_SAMPLE, 100, 17000, 17000, 10000000, 40000000, 384);
	put_stacked_with(fd, PW_EV_CPU_SAMPLE, 100, 18000, 18000, 10000000, 0, 384);
	put_stacked_with(fd, PW_EV_CPU_SAMPLE, 100, 19000, 19000, 10000000, 70000000, 448);
	struct pw_rec_call plain = mkrec(PW_EV_READ, 100, 20000, 20100, 0, 3, 0, 0);
	put_records(fd, &plain, 1);
	struct pw_raw_end end = {0};
	end.how = PW_END_EXITED;
	end.end_ticks = 30000;
	end.stacks_dropped = 7;
	end.samples_skipped = 2;
	put_end(fd, &end);
	close(fd);
	fx_analyze(fx);
	char err[512] = "";
	if (pw_write_reports(&fx->an, err, sizeof err))
		fail_msg("pw_write_reports: %s", err);
	const struct pw_rank_report *r = &fx->an.ranks[0];
	assert_int_equal(r->calls[PW_EV_READ].count, 5);
	assert_int_equal(r->calls[PW_EV_CPU_SAMPLE].count, 0); /* samples are not calls */
	assert_int_equal(r->events, 7);

	/* text */
	size_t n;
	char *text = fx_slurp(fx, "rank0.txt", &n), line[512], want[256];
	const char *sec = strstr(text, "Top call sites");
	assert_non_null(sec);
	assert_true(sec > strstr(text, "Calls ("));
	line_with(sec, "io.read ", line, sizeof line);
	assert_non_null(strstr(line, " 4 |"));
	assert_non_null(strstr(line, " 10.0 us |"));
	line_with(sec, "load_batch (train.py:42) <- main (train.py:7)", line, sizeof line);
	assert_non_null(strstr(line, " 3 |"));
	assert_non_null(strstr(line, " 60.0 % |"));
	snprintf(want, sizeof want, "test_user_leaf (test_stacks.c:%d) <- test_user_mid (test_stacks.c:%d)", self.leaf_line,
		 self.mid_line);
	line_with(sec, want, line, sizeof line);
	assert_non_null(strstr(line, " 40.0 % |"));
	assert_true(strstr(sec, "load_batch (train.py:42)") < strstr(sec, want)); /* larger share first */
	assert_true(strstr(sec, "io.fsync") > strstr(sec, want));                 /* longer call first */
	line_with(sec, "|   save (io.py:5) ", line, sizeof line);
	assert_non_null(strstr(line, " 100.0 % |"));
	line_with(sec, "libfake-sys.so.1+0x400 <- libfake-sys.so.1+0x500", line, sizeof line);
	assert_non_null(strstr(line, " 100.0 % |"));
	const char *cpu = strstr(text, "CPU samples: 3 for 120 ms of CPU time (one every 40.0 ms of a thread's CPU time; "
				       "10.0 ms asked)\n");
	assert_non_null(cpu);
	line_with(strstr(cpu, "by self samples"), "test_user_leaf (test_stacks.c)", line, sizeof line);
	assert_non_null(strstr(line, " 2 |  50.0 ms |"));
	assert_non_null(strstr(line, " 41.7 % |"));
	line_with(strstr(cpu, "by total samples"), "test_user_mid (test_stacks.c)", line, sizeof line);
	assert_non_null(strstr(line, " 2 |  50.0 ms |"));
	assert_non_null(strstr(line, " 41.7 % |"));
	line_with(strstr(cpu, "by self samples"), "compute (train.py)", line, sizeof line);
	assert_non_null(strstr(line, " 1 |  70.0 ms |"));
	assert_non_null(strstr(line, " 58.3 % |"));
	const char *self_table = strstr(cpu, "by self samples"), *total_table = strstr(cpu, "by total samples");
	assert_true(self_table && total_table > self_table);
	const char *mid = strstr(self_table, "test_user_mid");
	assert_true(mid > total_table); /* never innermost: not in the self table */
	/* by the CPU time the samples stand for, not by their count */
	assert_true(strstr(self_table, "compute (train.py)") < strstr(self_table, "test_user_leaf"));
	assert_non_null(strstr(text, "WARNING: 7 call stacks dropped"));
	assert_non_null(strstr(text, "WARNING: 2 CPU samples skipped"));
	free(text);

	/* folded */
	char *folded = fx_slurp(fx, "rank0.folded", &n), expect[2048];
	snprintf(expect, sizeof expect,
		 "cpu;compute (train.py:9) 70000\n"
		 "cpu;test_user_mid (test_stacks.c:%d);test_user_leaf (test_stacks.c:%d) 50000\n"
		 "wait;libfake-sys.so.1+0x500;libfake-sys.so.1+0x400;[fsync] 1\n"
		 "wait;main (train.py:7);load_batch (train.py:42);[read] 6\n"
		 "wait;save (io.py:5);test_user_leaf (test_stacks.c:%d);[write] 2\n"
		 "wait;test_user_mid (test_stacks.c:%d);test_user_leaf (test_stacks.c:%d);libfake-sys.so.1+0x300;[read] 4\n",
		 self.mid_line, self.leaf_line, self.leaf_line, self.mid_line, self.leaf_line);
	assert_string_equal(folded, expect);
	free(folded);

	/* JSON */
	struct jr *doc = fx_json(fx, "rank0.json");
	const struct jr *root = doc->items[0];
	const struct jr *cs = jr_get(root, "callsites");
	assert_int_equal(cs->n, 4);
	const struct jr *c0 = jr_at(cs, 0);
	assert_true(jr_is(jr_get(c0, "call"), "read"));
	assert_int_equal(jr_u64(jr_get(c0, "count")), 3);
	assert_int_equal(jr_u64(jr_get(c0, "total_ns")), 6000);
	const struct jr *frames = jr_get(c0, "frames");
	assert_int_equal(frames->n, 2);
	assert_true(jr_is(jr_get(jr_at(frames, 0), "function"), "load_batch"));
	assert_true(jr_is(jr_get(jr_at(frames, 0), "file"), "/home/u/train.py"));
	assert_int_equal(jr_u64(jr_get(jr_at(frames, 0), "line")), 42);
	assert_true(jr_is(jr_get(jr_at(frames, 0), "module"), "python"));
	assert_true(jr_is(jr_get(jr_at(cs, 2), "call"), "write"));
	const struct jr *c2 = jr_at(cs, 3);
	assert_true(jr_is(jr_get(c2, "call"), "fsync"));
	const struct jr *f0 = jr_at(jr_get(c2, "frames"), 0);
	assert_int_equal(jr_get(f0, "function")->type, JR_NULL);
	assert_int_equal(jr_get(f0, "file")->type, JR_NULL);
	assert_int_equal(jr_u64(jr_get(f0, "line")), 0);
	assert_true(jr_is(jr_get(f0, "module"), SYS_PATH));
	const struct jr *samples = jr_get(root, "samples");
	assert_int_equal(jr_u64(jr_get(samples, "count")), 3);
	assert_int_equal(jr_u64(jr_get(samples, "period_ns")), 10000000);
	assert_int_equal(jr_u64(jr_get(samples, "cpu_ns")), 120000000);
	const struct jr *s0 = jr_at(jr_get(samples, "stacks"), 0), *s1 = jr_at(jr_get(samples, "stacks"), 1);
	assert_int_equal(jr_u64(jr_get(s0, "count")), 1);
	assert_int_equal(jr_u64(jr_get(s0, "cpu_ns")), 70000000);
	assert_true(jr_is(jr_get(jr_at(jr_get(s0, "frames"), 0), "function"), "compute"));
	assert_int_equal(jr_u64(jr_get(s1, "count")), 2);
	assert_int_equal(jr_u64(jr_get(s1, "cpu_ns")), 50000000);
	assert_true(jr_is(jr_get(jr_at(jr_get(s1, "frames"), 0), "function"), "test_user_leaf"));
	const struct jr *st = jr_get(root, "stacks");
	assert_int_equal(jr_u64(jr_get(st, "captured")), 9);
	assert_int_equal(jr_u64(jr_get(st, "dropped")), 7);
	assert_int_equal(jr_u64(jr_get(st, "samples_skipped")), 2);
	fx_json_free(doc);

	/* trace: every read with a stack carries it, the deferred one included; samples are instants */
	doc = fx_json(fx, "rank0.trace.json");
	const struct jr *evs = jr_get(doc->items[0], "traceEvents");
	size_t reads = 0, stacked = 0, python = 0, instants = 0;
	uint64_t sampled_ns = 0;
	for (size_t i = 0; i < evs->n; i++) {
		const struct jr *e = jr_at(evs, i);
		if (!jr_has(e, "name"))
			continue;
		if (jr_is(jr_get(e, "name"), "cpu sample")) {
			assert_true(jr_is(jr_get(e, "ph"), "i"));
			assert_true(jr_is(jr_get(e, "s"), "t"));
			assert_true(jr_get(jr_get(e, "args"), "stack")->n >= 1);
			sampled_ns += jr_u64(jr_get(jr_get(e, "args"), "cpu_ns"));
			instants++;
		}
		if (!jr_is(jr_get(e, "name"), "read"))
			continue;
		reads++;
		const struct jr *args = jr_get(e, "args");
		if (!jr_has(args, "stack"))
			continue;
		stacked++;
		python += jr_is(jr_at(jr_get(args, "stack"), 0), "load_batch (train.py:42)");
	}
	assert_int_equal(reads, 5);
	assert_int_equal(stacked, 4);
	assert_int_equal(python, 3);
	assert_int_equal(instants, 3);
	assert_int_equal(sampled_ns, 120000000);
	fx_json_free(doc);
}

/* A rank without stacks: no folded file, empty JSON keys. */
static void test_no_stacks(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, 100, 0, 1000, "train\0", 6);
	struct pw_rec_call plain = mkrec(PW_EV_READ, 100, 2000, 2100, 0, 3, 0, 0);
	put_records(fd, &plain, 1);
	fx_raw_end(fd, 3000);
	fx_analyze(fx);
	char err[512] = "", path[256];
	assert_int_equal(pw_write_reports(&fx->an, err, sizeof err), 0);
	assert_null(fx->an.ranks[0].stacks);
	snprintf(path, sizeof path, "%s/rank0.folded", fx->dir);
	assert_int_equal(access(path, F_OK), -1);
	struct jr *doc = fx_json(fx, "rank0.json");
	assert_int_equal(jr_get(doc->items[0], "callsites")->n, 0);
	assert_int_equal(jr_u64(jr_get(jr_get(doc->items[0], "samples"), "count")), 0);
	fx_json_free(doc);
	size_t n;
	char *text = fx_slurp(fx, "rank0.txt", &n);
	assert_null(strstr(text, "Top call sites"));
	assert_null(strstr(text, "CPU samples"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counts_per_call_stack, sfx_setup, sfx_teardown),
		cmocka_unit_test_setup_teardown(test_python_pending, sfx_setup, sfx_teardown),
		cmocka_unit_test_setup_teardown(test_interpreter_cut, sfx_setup, sfx_teardown),
		cmocka_unit_test_setup_teardown(test_dedupe_across_processes, sfx_setup, sfx_teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_stacks, sfx_setup, sfx_teardown),
		cmocka_unit_test_setup_teardown(test_sample_interrupted, sfx_setup, sfx_teardown),
		cmocka_unit_test_setup_teardown(test_reports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_stacks, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
