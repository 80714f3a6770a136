/* Symbolisation of native call-stack addresses: module + address -> function, source file and line, with the
 * inlined frames, from the ELF and DWARF of the files the process had loaded (elfutils libdwfl). Works after
 * the process is gone: the preload records each loaded object's path, load bias, address range and build-id.
 * Lookups are local only (the file itself, .gnu_debuglink, /usr/lib/debug/.build-id): never debuginfod. */
#ifndef PW_SYMBOLIZE_H
#define PW_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

/* A loaded object as the preload recorded it. */
struct pw_sym_module {
	const char *path;     /* as the loader names it ("" or NULL for the main program: exe_path is used) */
	const char *build_id; /* lower-case hex of the NT_GNU_BUILD_ID note, NULL or "" when it has none */
	uint64_t bias;        /* load bias (dlpi_addr): file vaddr + bias = address in the process */
	uint64_t lo, hi;      /* addresses [lo, hi) its PT_LOAD segments cover in the process */
	const void *image;    /* its ELF image, for an object no file holds (the vDSO); NULL: read path */
	size_t image_len;
};

/* One resolved frame. Strings are owned by the symbolizer and live until pw_sym_free(). */
struct pw_sym_frame {
	const char *function; /* as the object names it (C++ names mangled); NULL when unknown */
	const char *file;     /* source file, NULL when unknown */
	int line;             /* 0 when unknown */
	const char *module;   /* the module's path (the basename is for display), "?" when no module covers it */
	uint64_t offset;      /* address - bias: the address in the file's own terms, as addr2line takes it */
	int inlined;          /* 1: this function was inlined into the next frame of the same address */
};

struct pw_symbolizer;

/* A symbolizer with an empty cache. Returns NULL when out of memory. */
struct pw_symbolizer *pw_sym_new(void);
void pw_sym_free(struct pw_symbolizer *s);

/* Resolves addr, an address in a process whose loaded objects were mods[0..n), into out[0..max): the inline
 * chain innermost first (the function the code was inlined into last). is_return is 1 when addr is a return
 * address (every frame but an interrupted one), so the call's own line is looked up (addr - 1). The module's
 * file is opened once per (path, build-id) and cached across calls and processes; a file whose build-id
 * differs from the recorded one is not used (the frame stays module + offset). Returns the number of frames
 * written, at least 1 when max >= 1: an address nothing resolves is one frame with function NULL. */
size_t pw_sym_resolve(struct pw_symbolizer *s, const struct pw_sym_module *mods, size_t n, uint64_t addr, int is_return,
		      struct pw_sym_frame *out, size_t max);

#endif
