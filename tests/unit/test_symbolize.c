#define _GNU_SOURCE
/* Unit tests for collector/symbolize: this test program resolves its own functions (found through
 * dl_iterate_phdr as the preload would record them), a return address to its call line, an inline chain, and
 * then copies of itself: stripped, under another build-id, truncated, and files that are no ELF at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../collector/symbols/symbolize.h"

/* ---- the code resolved: its lines are the figures the tests check ---- */

static volatile uint64_t captured; /* the return address capture_return() saw */
/* Stored to on the line after a call: the instruction a return address points at belongs to another line. */
static volatile int sink;

__attribute__((noinline)) void capture_return(void)
{
	captured = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

/* On one line: the function's first instruction has that line whichever statement it comes from. */
static const int target_line = __LINE__ + 1;
__attribute__((noinline)) int sym_target(int x) { __asm__ volatile("" ::: "memory"); return x * 3 + 1; }

static int return_line;
__attribute__((noinline)) void return_caller(void)
{
	return_line = __LINE__; capture_return();
	sink = 1; /* not a tail call: the return address stays in this function */
}

static int inner_line, outer_line;
static inline __attribute__((always_inline)) void inlined_fn(void)
{
	inner_line = __LINE__; capture_return();
	sink = 2;
}

__attribute__((noinline)) void inline_caller(void)
{
	outer_line = __LINE__; inlined_fn();
	sink = 3;
}

/* Called through these so the compiler neither inlines nor clones them into the tests. */
static int (*volatile target_fn)(int) = sym_target;
static void (*volatile return_fn)(void) = return_caller;
static void (*volatile inline_fn)(void) = inline_caller;

static uint64_t target_addr(void)
{
	return (uint64_t)(uintptr_t)target_fn;
}

/* ---- this program as the preload records it ---- */

static struct {
	char path[PATH_MAX];
	char build_id[128];
	struct pw_sym_module mod;
	char dir[64]; /* scratch files */
} self;

/* The lower-case hex of the NT_GNU_BUILD_ID note among the notes p[0..len) (align: the segment's), into
 * self.build_id. */
static void note_build_id(const char *p, size_t len, size_t align)
{
	size_t off = 0;
	while (off + sizeof(ElfW(Nhdr)) <= len) {
		ElfW(Nhdr) nh;
		memcpy(&nh, p + off, sizeof nh);
		size_t name = off + sizeof nh;
		size_t desc = name + ((nh.n_namesz + align - 1) & ~(align - 1));
		size_t next = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
		if (next > len)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(p + name, "GNU", 4) == 0 &&
		    nh.n_descsz * 2 < sizeof self.build_id) {
			for (size_t i = 0; i < nh.n_descsz; i++)
				sprintf(self.build_id + 2 * i, "%02x", (unsigned char)p[desc + i]);
			return;
		}
		off = next;
	}
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the main program is the one without a name */
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD) {
			if (start < lo)
				lo = start;
			if (start + ph->p_memsz > hi)
				hi = start + ph->p_memsz;
		} else if (ph->p_type == PT_NOTE && !self.build_id[0]) {
			note_build_id((const char *)(uintptr_t)start, ph->p_memsz, ph->p_align == 8 ? 8 : 4);
		}
	}
	self.mod = (struct pw_sym_module){.path = self.path, .build_id = self.build_id, .bias = info->dlpi_addr, .lo = lo, .hi = hi};
	return 1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int group_setup(void **state)
{
	ssize_t n = readlink("/proc/self/exe", self.path, sizeof self.path - 1);
	if (n <= 0)
		return -1;
	self.path[n] = 0;
	if (!dl_iterate_phdr(find_self, NULL) || !self.build_id[0])
		return -1;
	snprintf(self.dir, sizeof self.dir, "/tmp/pw-sym-XXXXXX");
	return mkdtemp(self.dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	return nftw(self.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- helpers ---- */

/* <scratch dir>/name into buf. */
static const char *scratch(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", self.dir, name);
	return buf;
}

/* Writes the first len bytes of this program (all of it when len is larger) to path. */
static void copy_self(const char *path, size_t len)
{
	FILE *in = fopen(self.path, "rb");
	FILE *out = fopen(path, "wb");
	assert_non_null(in);
	assert_non_null(out);
	char buf[65536];
	size_t n;
	while (len && (n = fread(buf, 1, len < sizeof buf ? len : sizeof buf, in)) > 0) {
		assert_int_equal(fwrite(buf, 1, n, out), n);
		len -= n;
	}
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* A resolved name (cmocka's string comparison does not take NULL). */
static void assert_function(const char *function, const char *want)
{
	assert_non_null(function);
	assert_string_equal(function, want);
}

static void assert_unresolved(const struct pw_sym_frame *f, const char *module, uint64_t offset)
{
	assert_null(f->function);
	assert_null(f->file);
	assert_int_equal(f->line, 0);
	assert_string_equal(f->module, module);
	assert_int_equal(f->offset, offset);
	assert_int_equal(f->inlined, 0);
}

/* Resolves addr in this program's module, or a copy of it at path under build-id bid, expecting one frame. */
static struct pw_sym_frame resolve_one(struct pw_symbolizer *s, const char *path, const char *bid, uint64_t addr,
				       int is_return)
{
	struct pw_sym_module m = self.mod;
	m.path = path;
	m.build_id = bid;
	struct pw_sym_frame f[8];
	assert_int_equal(pw_sym_resolve(s, &m, 1, addr, is_return, f, 8), 1);
	return f[0];
}

/* ---- tests ---- */

/* A function's own address: its name, file and the line it starts on, as an exact figure. */
static void test_function_address(void **state)
{
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	uint64_t addr = target_addr();
	assert_int_equal(target_fn(2), 7);
	struct pw_sym_frame f = resolve_one(s, self.path, self.build_id, addr, 0);
	assert_function(f.function, "sym_target");
	assert_true(ends_with(f.file, "/test_symbolize.c"));
	assert_int_equal(f.line, target_line);
	assert_string_equal(f.module, self.path);
	assert_int_equal(f.offset, addr - self.mod.bias);
	assert_int_equal(f.inlined, 0);
	/* Again, from the cache: the same interned strings. */
	struct pw_sym_frame g = resolve_one(s, self.path, self.build_id, addr, 0);
	assert_ptr_equal(g.function, f.function);
	assert_ptr_equal(g.file, f.file);
	assert_ptr_equal(g.module, f.module);
	assert_int_equal(g.line, f.line);
	/* One of several modules, the others elsewhere. */
	struct pw_sym_module mods[3] = {self.mod, self.mod, self.mod};
	mods[0].lo = mods[0].hi = 0;
	mods[2].lo = self.mod.hi;
	mods[2].hi = self.mod.hi + 4096;
	mods[0].path = mods[2].path = "/nonexistent/lib.so";
	struct pw_sym_frame h[4];
	assert_int_equal(pw_sym_resolve(s, mods, 3, addr, 0, h, 4), 1);
	assert_ptr_equal(h[0].function, f.function);
	pw_sym_free(s);
}

/* A return address: the caller's name and the line of the call, the offset that of the address itself. */
static void test_return_address(void **state)
{
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	return_fn();
	uint64_t ret = captured;
	struct pw_sym_frame f = resolve_one(s, self.path, self.build_id, ret, 1);
	assert_function(f.function, "return_caller");
	assert_true(ends_with(f.file, "/test_symbolize.c"));
	assert_int_equal(f.line, return_line);
	assert_int_equal(f.offset, ret - self.mod.bias);
	assert_int_equal(f.inlined, 0);
	pw_sym_free(s);
}

/* Inside inlined code: the inlined function at the line of its call, then the function it was inlined into at
 * the line that called it there. */
static void test_inline_chain(void **state)
{
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	inline_fn();
	uint64_t ret = captured;
	struct pw_sym_frame f[8];
	size_t n = pw_sym_resolve(s, &self.mod, 1, ret, 1, f, 8);
	assert_true(n >= 2);
	assert_function(f[0].function, "inlined_fn");
	assert_true(ends_with(f[0].file, "/test_symbolize.c"));
	assert_int_equal(f[0].line, inner_line);
	assert_int_equal(f[0].inlined, 1);
	assert_function(f[1].function, "inline_caller");
	assert_true(ends_with(f[1].file, "/test_symbolize.c"));
	assert_int_equal(f[1].line, outer_line);
	assert_int_equal(f[1].inlined, 0);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(f[i].module, self.path);
		assert_int_equal(f[i].offset, ret - self.mod.bias);
	}
	/* Room for one: the innermost. */
	struct pw_sym_frame g;
	assert_int_equal(pw_sym_resolve(s, &self.mod, 1, ret, 1, &g, 1), 1);
	assert_ptr_equal(g.function, f[0].function);
	assert_int_equal(g.line, inner_line);
	assert_int_equal(pw_sym_resolve(s, &self.mod, 1, ret, 1, &g, 0), 0);
	pw_sym_free(s);
}

/* A copy stripped of everything (same build-id, no symbols, no debug info): module + offset only. A copy
 * stripped of its debug info only: the function from the symbol table, no file or line. */
static void test_stripped(void **state)
{
	if (system("command -v objcopy >/dev/null 2>&1") != 0)
		skip();
	char path[128], nodebug[128], cmd[512];
	scratch(path, sizeof path, "stripped");
	scratch(nodebug, sizeof nodebug, "nodebug");
	snprintf(cmd, sizeof cmd, "objcopy --strip-all '%s' '%s' && objcopy --strip-debug '%s' '%s'", self.path, path,
		 self.path, nodebug);
	assert_int_equal(system(cmd), 0);
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	uint64_t addr = target_addr();
	struct pw_sym_frame f = resolve_one(s, path, self.build_id, addr, 0);
	assert_unresolved(&f, path, addr - self.mod.bias);
	return_fn();
	f = resolve_one(s, path, self.build_id, captured, 1);
	assert_unresolved(&f, path, captured - self.mod.bias);

	f = resolve_one(s, nodebug, self.build_id, addr, 0);
	assert_function(f.function, "sym_target");
	assert_null(f.file);
	assert_int_equal(f.line, 0);
	assert_string_equal(f.module, nodebug);
	assert_int_equal(f.offset, addr - self.mod.bias);
	f = resolve_one(s, nodebug, self.build_id, captured, 1);
	assert_function(f.function, "return_caller");
	assert_null(f.file);

	/* The same address through the unstripped file: resolved (the failures above are not the address's). */
	f = resolve_one(s, self.path, self.build_id, addr, 0);
	assert_function(f.function, "sym_target");
	pw_sym_free(s);
}

/* A file whose build-id is not the recorded one is not used, however many times it is asked; the recorded
 * build-id is compared without regard to case; none recorded accepts the file. */
static void test_build_id_mismatch(void **state)
{
	static const char bad[] = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef";
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	uint64_t addr = target_addr();
	for (int i = 0; i < 2; i++) {
		struct pw_sym_frame f = resolve_one(s, self.path, bad, addr, 0);
		assert_unresolved(&f, self.path, addr - self.mod.bias);
	}
	struct pw_sym_frame f = resolve_one(s, self.path, "deadbeef", addr, 0);
	assert_unresolved(&f, self.path, addr - self.mod.bias);
	char upper[sizeof self.build_id];
	for (size_t i = 0; i < sizeof upper; i++)
		upper[i] = (char)(self.build_id[i] >= 'a' && self.build_id[i] <= 'f' ? self.build_id[i] - 32 : self.build_id[i]);
	f = resolve_one(s, self.path, upper, addr, 0);
	assert_function(f.function, "sym_target");
	f = resolve_one(s, self.path, "", addr, 0);
	assert_function(f.function, "sym_target");
	f = resolve_one(s, self.path, NULL, addr, 0);
	assert_function(f.function, "sym_target");
	/* The mismatch is still remembered after the good lookups. */
	f = resolve_one(s, self.path, bad, addr, 0);
	assert_unresolved(&f, self.path, addr - self.mod.bias);
	pw_sym_free(s);
}

/* A module is opened once: a file that failed stays failed, a file that opened stays usable after it is
 * deleted, for the life of the symbolizer. */
static void test_modules_cached(void **state)
{
	char path[128];
	scratch(path, sizeof path, "later");
	uint64_t addr = target_addr();
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	struct pw_sym_frame f = resolve_one(s, path, self.build_id, addr, 0);
	assert_unresolved(&f, path, addr - self.mod.bias);
	copy_self(path, SIZE_MAX);
	f = resolve_one(s, path, self.build_id, addr, 0);
	assert_unresolved(&f, path, addr - self.mod.bias);

	struct pw_symbolizer *t = pw_sym_new();
	assert_non_null(t);
	f = resolve_one(t, path, self.build_id, addr, 0);
	assert_function(f.function, "sym_target");
	assert_string_equal(f.module, path);
	assert_int_equal(unlink(path), 0);
	return_fn();
	f = resolve_one(t, path, self.build_id, captured, 1);
	assert_function(f.function, "return_caller");
	assert_int_equal(f.line, return_line);
	pw_sym_free(t);
	pw_sym_free(s);
}

/* An address no module covers: "?" and the address itself. */
static void test_no_module(void **state)
{
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	struct pw_sym_frame f[4];
	uint64_t below = self.mod.lo - 1, past = self.mod.hi;
	assert_int_equal(pw_sym_resolve(s, &self.mod, 1, below, 1, f, 4), 1);
	assert_unresolved(&f[0], "?", below);
	assert_int_equal(pw_sym_resolve(s, &self.mod, 1, past, 0, f, 4), 1);
	assert_unresolved(&f[0], "?", past);
	assert_int_equal(pw_sym_resolve(s, NULL, 0, 0x1234, 0, f, 4), 1);
	assert_unresolved(&f[0], "?", 0x1234);
	pw_sym_free(s);
}

/* The main program recorded without a name: the module is "" and the offset still its own. */
static void test_unnamed_main(void **state)
{
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	uint64_t addr = target_addr();
	struct pw_sym_frame f = resolve_one(s, "", self.build_id, addr, 0);
	assert_unresolved(&f, "", addr - self.mod.bias);
	f = resolve_one(s, NULL, NULL, addr, 1);
	assert_unresolved(&f, "", addr - self.mod.bias);
	pw_sym_free(s);
}

/* ---- the vDSO: no file holds it, the preload records its image ---- */

/* This process's vDSO image (its section headers included), as the preload copies it; NULL when none. */
static const ElfW(Ehdr) *vdso_image(size_t *len)
{
	const ElfW(Ehdr) *e = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR);
	if (!e)
		return NULL;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)e + e->e_phoff);
	size_t end = e->e_shoff + (size_t)e->e_shnum * e->e_shentsize;
	for (int i = 0; i < e->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > end)
			end = ph[i].p_vaddr + ph[i].p_memsz;
	*len = end;
	return e;
}

/* The vDSO's own vaddr of the dynamic symbol name (0: none), read from its .dynsym. */
static uint64_t vdso_symbol(const ElfW(Ehdr) *e, const char *name)
{
	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)((const char *)e + e->e_shoff);
	for (int i = 0; i < e->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const ElfW(Sym) *sym = (const ElfW(Sym) *)((const char *)e + sh[i].sh_offset);
		const char *strs = (const char *)e + sh[sh[i].sh_link].sh_offset;
		for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++)
			if (strcmp(strs + sym[k].st_name, name) == 0)
				return sym[k].st_value;
	}
	return 0;
}

/* A module whose path is no file (linux-vdso.so.1) is read from its recorded image: its dynamic symbols name
 * the vDSO's functions; without the image the frame stays module + offset. */
static void test_vdso_image(void **state)
{
	size_t len = 0;
	const ElfW(Ehdr) *e = vdso_image(&len);
	if (!e)
		skip();
	uint64_t value = vdso_symbol(e, "__vdso_clock_gettime");
	if (!value)
		value = vdso_symbol(e, "__kernel_clock_gettime"); /* aarch64's name */
	assert_true(value != 0);
	uint64_t bias = (uint64_t)(uintptr_t)e; /* the vDSO is linked at 0 */
	struct pw_sym_module m = {.path = "linux-vdso.so.1", .bias = bias, .lo = bias, .hi = bias + len};
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	struct pw_sym_frame f[4];
	assert_int_equal(pw_sym_resolve(s, &m, 1, bias + value + 1, 0, f, 4), 1);
	assert_unresolved(&f[0], "linux-vdso.so.1", value + 1);
	pw_sym_free(s);
	s = pw_sym_new();
	assert_non_null(s);
	m.image = e;
	m.image_len = len;
	assert_int_equal(pw_sym_resolve(s, &m, 1, bias + value + 1, 0, f, 4), 1);
	assert_non_null(f[0].function);
	assert_true(strstr(f[0].function, "clock_gettime") != NULL);
	assert_string_equal(f[0].module, "linux-vdso.so.1");
	assert_int_equal(f[0].offset, value + 1);
	pw_sym_free(s);
}

/* Files that are no usable ELF: no crash, module + offset. */
static void test_garbage(void **state)
{
	char text[128], empty[128], fifo[128], missing[128];
	scratch(text, sizeof text, "text.so");
	scratch(empty, sizeof empty, "empty.so");
	scratch(fifo, sizeof fifo, "fifo.so");
	scratch(missing, sizeof missing, "missing.so");
	FILE *fp = fopen(text, "w");
	assert_non_null(fp);
	fputs("this is not an ELF file\n", fp);
	assert_int_equal(fclose(fp), 0);
	fp = fopen(empty, "w");
	assert_non_null(fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0); /* opening it for reading would block */
	const char *paths[] = {text, empty, fifo, missing, self.dir, "/dev/null", "/", "relative/missing.so"};
	uint64_t addr = target_addr();
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		for (int r = 0; r < 2; r++) {
			struct pw_sym_frame f = resolve_one(s, paths[i], r ? "" : self.build_id, addr, r);
			assert_unresolved(&f, paths[i], addr - self.mod.bias);
		}
	pw_sym_free(s);
}

/* This program cut short at sizes from inside the ELF header to one byte short: whatever libdwfl makes of
 * them, one frame of that module at the right offset, and nothing read past the end (ASan). */
static void test_truncated(void **state)
{
	struct stat st;
	assert_int_equal(stat(self.path, &st), 0);
	size_t whole = (size_t)st.st_size;
	const size_t sizes[] = {1, 16, 63, 64, 100, 4096, whole / 4, whole / 2, whole - 4096, whole - 1};
	return_fn();
	const uint64_t addrs[] = {target_addr(), captured};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		char path[128], name[32];
		snprintf(name, sizeof name, "cut-%zu", sizes[i]);
		scratch(path, sizeof path, name);
		copy_self(path, sizes[i]);
		struct pw_symbolizer *s = pw_sym_new();
		assert_non_null(s);
		for (size_t a = 0; a < 2; a++)
			for (int r = 0; r < 2; r++) {
				struct pw_sym_frame f[8];
				size_t n = pw_sym_resolve(s, &(struct pw_sym_module){.path = path, .build_id = self.build_id,
										    .bias = self.mod.bias, .lo = self.mod.lo,
										    .hi = self.mod.hi},
							  1, addrs[a], r, f, 8);
				assert_true(n >= 1);
				for (size_t k = 0; k < n; k++) {
					assert_string_equal(f[k].module, path);
					assert_int_equal(f[k].offset, addrs[a] - self.mod.bias);
				}
			}
		pw_sym_free(s);
	}
}

/* More distinct addresses than the address cache holds (through a stripped copy, where a lookup is cheap): it
 * is dropped and refilled, and what comes out is the same before and after. */
static void test_many_addresses(void **state)
{
	if (system("command -v objcopy >/dev/null 2>&1") != 0)
		skip();
	char path[128], cmd[512];
	scratch(path, sizeof path, "stripped-many");
	snprintf(cmd, sizeof cmd, "objcopy --strip-all '%s' '%s'", self.path, path);
	assert_int_equal(system(cmd), 0);
	struct pw_symbolizer *s = pw_sym_new();
	assert_non_null(s);
	uint64_t addr = target_addr();
	struct pw_sym_frame first = resolve_one(s, self.path, self.build_id, addr, 0);
	struct pw_sym_module stripped = self.mod;
	stripped.path = path;
	uint64_t span = self.mod.hi - self.mod.lo;
	for (uint64_t i = 0; i < 300000; i++) {
		struct pw_sym_frame f[8];
		uint64_t a = self.mod.lo + (i / 2) % span;
		assert_int_equal(pw_sym_resolve(s, &stripped, 1, a, (int)(i & 1), f, 8), 1);
		assert_int_equal(f[0].offset, a - self.mod.bias);
	}
	struct pw_sym_frame again = resolve_one(s, self.path, self.build_id, addr, 0);
	assert_ptr_equal(again.function, first.function);
	assert_ptr_equal(again.file, first.file);
	assert_int_equal(again.line, target_line);
	pw_sym_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_function_address),
		cmocka_unit_test(test_return_address),
		cmocka_unit_test(test_inline_chain),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_build_id_mismatch),
		cmocka_unit_test(test_modules_cached),
		cmocka_unit_test(test_no_module),
		cmocka_unit_test(test_unnamed_main),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_many_addresses),
		cmocka_unit_test(test_vdso_image),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown) ? 1 : 0;
}
