/* See symbolize.h. Each (path, build-id) is one Dwfl holding that one file reported at base 0, so a lookup is
 * addr - bias, the address in the file's own terms, whatever process the address came from. */
#define _GNU_SOURCE
#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/pw_session.h"
#include "../lib/hash_index.h"

/* Past this many cached addresses the address cache is dropped wholesale: memory stays bounded (a few MiB) and
 * the hot return addresses come back on their next lookup. */
#define ADDR_CACHE_MAX 100000
/* Frames of one address kept at most (an inline chain deeper than this loses its outermost frames). */
#define CHAIN_MAX 64

struct module {
	const char *path;     /* interned */
	const char *build_id; /* interned, lower-case; "" when none was recorded */
	Dwfl *dwfl;           /* NULL: the file could not be used, and is not tried again */
	Dwfl_Module *mod;
};

struct addr_entry {
	uint64_t offset;
	uint32_t module; /* index in mods */
	uint32_t is_return;
	uint32_t first, count; /* frames[first .. first + count) */
};

struct pw_symbolizer {
	char **strs;
	size_t nstrs, cap_strs;
	struct pw_hix str_ix;
	struct module *mods;
	size_t nmods, cap_mods;
	struct pw_hix mod_ix;
	struct addr_entry *addrs;
	size_t naddrs, cap_addrs;
	struct pw_hix addr_ix;
	struct pw_sym_frame *frames;
	size_t nframes, cap_frames;
};

/* The main ELF is reported by hand; these find its separate debug file (.gnu_debuglink, /usr/lib/debug and
 * its .build-id tree: the default debuginfo_path) and place the sections of a relocatable file. */
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct pw_symbolizer *pw_sym_new(void)
{
	/* dwfl_standard_find_debuginfo falls back to the debuginfod servers this names: the collector must not
	 * make network requests (nor wait on them) for every module without local debug info. */
	unsetenv("DEBUGINFOD_URLS");
	/* each module kept open holds a descriptor or two, and a PyTorch process loads hundreds of objects */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	return calloc(1, sizeof(struct pw_symbolizer));
}

static void drop_addr_cache(struct pw_symbolizer *s)
{
	free(s->addrs);
	free(s->frames);
	pw_hix_free(&s->addr_ix);
	s->addrs = NULL;
	s->frames = NULL;
	s->naddrs = s->cap_addrs = s->nframes = s->cap_frames = 0;
}

void pw_sym_free(struct pw_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmods; i++)
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
	for (size_t i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	free(s->strs);
	free(s->mods);
	pw_hix_free(&s->str_ix);
	pw_hix_free(&s->mod_ix);
	drop_addr_cache(s);
	free(s);
}

/* ---- interned strings ---- */

struct str_key {
	const struct pw_symbolizer *s;
	const char *str;
};

static int str_eq(const void *ctx, uint32_t pos)
{
	const struct str_key *k = ctx;
	return strcmp(k->s->strs[pos], k->str) == 0;
}

/* Returns the symbolizer's copy of str, valid until pw_sym_free(); NULL for NULL or when out of memory. */
static const char *intern(struct pw_symbolizer *s, const char *str)
{
	if (!str)
		return NULL;
	uint64_t h = pw_hix_hash(pw_hash_bytes(PW_HASH_SEED, str, strlen(str)));
	struct str_key k = {s, str};
	int64_t pos = pw_hix_find(&s->str_ix, h, str_eq, &k);
	if (pos >= 0)
		return s->strs[pos];
	if (s->nstrs >= UINT32_MAX || pw_reserve(&s->strs, &s->cap_strs, s->nstrs + 1, sizeof *s->strs) < 0)
		return NULL;
	char *copy = strdup(str);
	if (!copy || pw_hix_add(&s->str_ix, h, (uint32_t)s->nstrs) < 0) {
		free(copy);
		return NULL;
	}
	s->strs[s->nstrs++] = copy;
	return copy;
}

/* ---- modules ---- */

/* Whether the module's build-id, as lower-case hex, is want ("" accepts any, even none). */
static int build_id_matches(Dwfl_Module *mod, const char *want)
{
	if (!*want)
		return 1;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len <= 0 || strlen(want) != 2 * (size_t)len)
		return 0;
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < len; i++)
		if (want[2 * i] != hex[bits[i] >> 4] || want[2 * i + 1] != hex[bits[i] & 15])
			return 0;
	return 1;
}

/* A memory file holding len bytes of image (libdwfl reads an ELF from a descriptor). Returns it, or -1. */
static int image_fd(const void *image, size_t len)
{
	int fd = memfd_create("profwrap-image", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, (const char *)image + done, len - done);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	return fd;
}

/* The module's file, opened for reading: its path, or its recorded image when it has one. Returns -1 when
 * neither can be read. */
static int module_fd(const struct module *m, const void *image, size_t image_len)
{
	if (image)
		return image_fd(image, image_len);
	/* The path comes from the traced process: a FIFO or a device there must neither block nor be read. */
	int fd = open(m->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Opens m (its path, or image when not NULL) as a Dwfl of its own and checks its build-id. Returns 0 with
 * m->dwfl and m->mod set, or -1 with nothing left open. */
static int open_module(struct module *m, const void *image, size_t image_len)
{
	int fd = module_fd(m, image, image_len);
	if (fd < 0)
		return -1;
	Dwfl *dwfl = dwfl_begin(&callbacks);
	if (!dwfl) {
		close(fd);
		return -1;
	}
	dwfl_report_begin(dwfl);
	/* Base 0 with add_p_vaddr: the module's addresses are the file's own vaddrs (addr - dlpi_addr), also for
	 * a file linked at a non-zero address. On success the Dwfl owns fd; on failure it is still ours. */
	Dwfl_Module *mod = dwfl_report_elf(dwfl, m->path, m->path, fd, 0, true);
	if (!mod)
		close(fd);
	if (dwfl_report_end(dwfl, NULL, NULL) != 0 || !mod || !build_id_matches(mod, m->build_id)) {
		dwfl_end(dwfl);
		return -1;
	}
	m->dwfl = dwfl;
	m->mod = mod;
	return 0;
}

struct mod_key {
	const struct pw_symbolizer *s;
	const char *path, *build_id;
};

static int mod_eq(const void *ctx, uint32_t pos)
{
	const struct mod_key *k = ctx;
	const struct module *m = &k->s->mods[pos];
	return strcmp(m->path, k->path) == 0 && strcmp(m->build_id, k->build_id) == 0;
}

/* Returns the cached module for (path, build_id), opened (or failed) on first use from its file, or from its
 * image when it has one; NULL when out of memory. */
static const struct module *get_module(struct pw_symbolizer *s, const char *path, const char *build_id,
				       const void *image, size_t image_len)
{
	char want[256];
	size_t n = build_id ? strlen(build_id) : 0;
	if (n >= sizeof want)
		n = sizeof want - 1; /* longer than any build-id: it matches nothing either way */
	for (size_t i = 0; i < n; i++)
		want[i] = (char)(build_id[i] >= 'A' && build_id[i] <= 'F' ? build_id[i] - 'A' + 'a' : build_id[i]);
	want[n] = 0;
	uint64_t h = pw_hix_hash(pw_hash_bytes(PW_HASH_SEED, path, strlen(path)) * 31 + pw_hash_bytes(PW_HASH_SEED, want, n));
	struct mod_key k = {s, path, want};
	int64_t pos = pw_hix_find(&s->mod_ix, h, mod_eq, &k);
	if (pos >= 0)
		return &s->mods[pos];
	struct module m = {intern(s, path), intern(s, want), NULL, NULL};
	if (!m.path || !m.build_id || s->nmods >= UINT32_MAX ||
	    pw_reserve(&s->mods, &s->cap_mods, s->nmods + 1, sizeof *s->mods) < 0 ||
	    pw_hix_add(&s->mod_ix, h, (uint32_t)s->nmods) < 0)
		return NULL;
	(void)open_module(&m, image, image_len); /* a failure stays cached: m.dwfl NULL */
	s->mods[s->nmods] = m;
	return &s->mods[s->nmods++];
}

/* ---- lookups in one module ---- */

/* The name a subprogram or inlined instance has in the object: its linkage name (C++ mangled), else its name,
 * through DW_AT_abstract_origin and DW_AT_specification. Returns NULL when it has none. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name;
}

static int clamp_line(Dwarf_Word w)
{
	return w > INT_MAX ? INT_MAX : (int)w;
}

/* The compile unit whose code covers a (a module address), with the bias of its addresses. Returns NULL when
 * none does. */
static Dwarf_Die *find_cu(Dwfl_Module *mod, Dwarf_Addr a, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, a, bias);
	if (cu)
		return cu;
	/* Without .debug_aranges (clang does not write it) libdw before 0.191 finds no unit by address: each unit
	 * is asked in turn. The address cache keeps this off the common path. */
	for (cu = dwfl_module_nextcu(mod, NULL, bias); cu; cu = dwfl_module_nextcu(mod, cu, bias))
		if (dwarf_haspc(cu, a - *bias) > 0)
			return cu;
	return NULL;
}

/* The inline chain at pc (a unit address) into out[0..max), innermost first; the innermost frame gets file
 * and line (the line table's), each outer one its call site. Returns the number of frames, 0 when no
 * function's DWARF covers pc. */
static size_t dwarf_frames(struct pw_symbolizer *s, Dwarf_Die *cu, Dwarf_Addr pc, const char *file, int line,
			   struct pw_sym_frame *out, size_t max)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes);
	if (n <= 0) {
		free(scopes);
		return 0;
	}
	/* Past an inlined instance dwarf_getscopes goes on into the inlined function's own definition; the
	 * physical nesting (instance, the function it was inlined into, ...) is what dwarf_getscopes_die gives. */
	Dwarf_Die inner = scopes[0];
	free(scopes);
	scopes = NULL;
	n = dwarf_getscopes_die(&inner, &scopes);
	if (n <= 0) {
		free(scopes);
		return 0;
	}
	Dwarf_Files *files = NULL;
	Dwarf_Die cudie;
	if (!dwarf_diecu(&inner, &cudie, NULL, NULL) || dwarf_getsrcfiles(&cudie, &files, NULL) != 0)
		files = NULL;
	size_t k = 0;
	for (int i = 0; i < n && k < max; i++) {
		Dwarf_Die *die = &scopes[i];
		int tag = dwarf_tag(die);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine && tag != DW_TAG_entry_point)
			continue;
		int inlined = tag == DW_TAG_inlined_subroutine;
		out[k++] = (struct pw_sym_frame){intern(s, die_name(die)), intern(s, file), line, NULL, 0, inlined};
		if (!inlined)
			break;
		/* The next frame out is at this instance's call site. */
		Dwarf_Attribute attr;
		Dwarf_Word w;
		file = NULL;
		line = 0;
		if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &w) == 0)
			file = dwarf_filesrc(files, w, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &w) == 0)
			line = clamp_line(w);
	}
	free(scopes);
	return k;
}

/* Resolves offset (is_return: a return address) in module m into out[0..max), max >= 1, module and offset
 * left for the caller. Returns the number of frames, at least 1. */
static size_t module_frames(struct pw_symbolizer *s, const struct module *m, uint64_t offset, int is_return,
			    struct pw_sym_frame *out, size_t max)
{
	/* A return address is just past the call: addr - 1 is in the call instruction, with the call's line. */
	Dwarf_Addr a = is_return && offset ? offset - 1 : offset;
	Dwarf_Addr bias;
	Dwarf_Die *cu = find_cu(m->mod, a, &bias);
	const char *file = NULL;
	int line = 0;
	size_t k = 0;
	if (cu) {
		Dwarf_Line *dl = dwarf_getsrc_die(cu, a - bias);
		if (dl && (file = dwarf_linesrc(dl, NULL, NULL)) && dwarf_lineno(dl, &line) != 0)
			line = 0;
		k = dwarf_frames(s, cu, a - bias, file, line, out, max);
	}
	if (!k) {
		/* No function of the unit covers the address (crt1.o's _start next to main): the line table's nearest
		 * row belongs to other code, so no file or line rather than a wrong one. */
		out[0] = (struct pw_sym_frame){NULL, NULL, 0, NULL, 0, 0};
		k = 1;
	}
	/* Functions the DWARF leaves unnamed (or DWARF that is absent) are named by the symbol table. */
	if (!out[k - 1].function && !out[k - 1].inlined) {
		GElf_Off off;
		GElf_Sym sym;
		out[k - 1].function = intern(s, dwfl_module_addrinfo(m->mod, a, &off, &sym, NULL, NULL, NULL));
	}
	return k;
}

/* ---- the address cache ---- */

struct addr_key {
	const struct pw_symbolizer *s;
	uint64_t offset;
	uint32_t module, is_return;
};

static int addr_eq(const void *ctx, uint32_t pos)
{
	const struct addr_key *k = ctx;
	const struct addr_entry *e = &k->s->addrs[pos];
	return e->offset == k->offset && e->module == k->module && e->is_return == k->is_return;
}

static uint64_t addr_hash(const struct addr_key *k)
{
	uint64_t v[2] = {k->offset, (uint64_t)k->module << 1 | k->is_return};
	return pw_hix_hash(pw_hash_bytes(PW_HASH_SEED, v, sizeof v));
}

/* Keeps frames[0..n) as the result for k; out of memory only means it is not cached. */
static void cache_add(struct pw_symbolizer *s, const struct addr_key *k, const struct pw_sym_frame *frames, size_t n)
{
	if (s->naddrs >= ADDR_CACHE_MAX)
		drop_addr_cache(s);
	if (pw_reserve(&s->addrs, &s->cap_addrs, s->naddrs + 1, sizeof *s->addrs) < 0 ||
	    pw_reserve(&s->frames, &s->cap_frames, s->nframes + n, sizeof *s->frames) < 0 ||
	    pw_hix_add(&s->addr_ix, addr_hash(k), (uint32_t)s->naddrs) < 0)
		return;
	memcpy(s->frames + s->nframes, frames, n * sizeof *frames);
	s->addrs[s->naddrs++] = (struct addr_entry){k->offset, k->module, k->is_return, (uint32_t)s->nframes,
						    (uint32_t)n};
	s->nframes += n;
}

/* ---- resolve ---- */

size_t pw_sym_resolve(struct pw_symbolizer *s, const struct pw_sym_module *mods, size_t n, uint64_t addr, int is_return,
		      struct pw_sym_frame *out, size_t max)
{
	if (!max)
		return 0;
	const struct pw_sym_module *pm = NULL;
	for (size_t i = 0; i < n && !pm; i++)
		if (addr >= mods[i].lo && addr < mods[i].hi)
			pm = &mods[i];
	if (!pm) {
		out[0] = (struct pw_sym_frame){NULL, NULL, 0, "?", addr, 0};
		return 1;
	}
	uint64_t offset = addr - pm->bias;
	/* The main program under an empty name: nothing says which file it was. */
	if (!pm->path || !*pm->path) {
		out[0] = (struct pw_sym_frame){NULL, NULL, 0, "", offset, 0};
		return 1;
	}
	const struct module *m = get_module(s, pm->path, pm->build_id, pm->image, pm->image_len);
	if (!m || !m->dwfl) {
		out[0] = (struct pw_sym_frame){NULL, NULL, 0, m ? m->path : "?", offset, 0};
		return 1;
	}
	struct addr_key k = {s, offset, (uint32_t)(m - s->mods), is_return != 0};
	int64_t pos = pw_hix_find(&s->addr_ix, addr_hash(&k), addr_eq, &k);
	struct pw_sym_frame chain[CHAIN_MAX];
	const struct pw_sym_frame *src = chain;
	size_t count;
	if (pos >= 0) {
		src = s->frames + s->addrs[pos].first;
		count = s->addrs[pos].count;
	} else {
		count = module_frames(s, m, offset, is_return, chain, CHAIN_MAX);
		for (size_t i = 0; i < count; i++) {
			chain[i].module = m->path;
			chain[i].offset = offset;
		}
		cache_add(s, &k, chain, count);
	}
	if (count > max)
		count = max;
	memcpy(out, src, count * sizeof *out);
	return count;
}
