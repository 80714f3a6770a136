/* Library loads: dlopen's duration is the load time the report lists per library.
 *
 * dlopen resolves a name relative to the object that called it: a bare name is searched in the caller's
 * RPATH and RUNPATH, "$ORIGIN" is the caller's directory. Wrapped, the caller would be this library, so
 * both are done here as the caller's own dlopen would: an object already loaded under the name wins; then
 * the directories of the caller's search list (dlinfo RTLD_DI_SERINFO: its RPATH, LD_LIBRARY_PATH, its
 * RUNPATH, then the system directories) are tried in order, leaving out the system directories at its end,
 * which it shares with this library's list; a file that is there but does not load does not stop the
 * search. What is not found goes to the real dlopen unchanged (LD_LIBRARY_PATH, cache, system directories).
 * glibc leaves dls_flags at 0, hence the comparison of the two lists. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pw_gpu.h"
#include "pw_preload.h"

PW_REAL(void *, dlopen, (const char *, int));

static struct link_map *object_of(const void *addr)
{
	Dl_info info;
	struct link_map *lm = NULL;
	return dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP) ? lm : NULL;
}

/* The search list of an object, malloc'd (free it), or NULL. */
static Dl_serinfo *search_list(struct link_map *lm)
{
	Dl_serinfo head;
	if (!lm || dlinfo(lm, RTLD_DI_SERINFOSIZE, &head))
		return NULL;
	Dl_serinfo *si = malloc(head.dls_size);
	if (!si)
		return NULL;
	si->dls_size = head.dls_size;
	si->dls_cnt = head.dls_cnt;
	if (dlinfo(lm, RTLD_DI_SERINFO, si)) {
		free(si);
		return NULL;
	}
	return si;
}

/* How many entries at the end of a and b are the same directories. */
static unsigned common_tail(const Dl_serinfo *a, const Dl_serinfo *b)
{
	unsigned n = 0;
	while (n < a->dls_cnt && n < b->dls_cnt &&
	       strcmp(a->dls_serpath[a->dls_cnt - 1 - n].dls_name, b->dls_serpath[b->dls_cnt - 1 - n].dls_name) == 0)
		n++;
	return n;
}

static void *search_as(const char *path, int flags, struct link_map *caller)
{
	void *found = NULL;
	Dl_serinfo *theirs = search_list(caller);
	Dl_serinfo *ours = theirs ? search_list(object_of((const void *)search_as)) : NULL;
	if (ours) {
		unsigned own = theirs->dls_cnt - common_tail(theirs, ours);
		for (unsigned i = 0; i < own && !found; i++) {
			char full[PATH_MAX];
			int n = snprintf(full, sizeof full, "%s/%s", theirs->dls_serpath[i].dls_name, path);
			if (n > 0 && n < (int)sizeof full && pw_access_unrecorded(full, F_OK) == 0)
				found = real_dlopen(full, flags);
		}
	}
	free(theirs);
	free(ours);
	return found;
}

/* path with a leading "$ORIGIN" or "${ORIGIN}" replaced by the caller's directory, into buf; NULL if it has
 * none (or the caller's directory is unknown). */
static const char *expand_origin(const char *path, struct link_map *caller, char *buf, size_t size)
{
	size_t skip = strncmp(path, "$ORIGIN", 7) == 0 ? 7 : strncmp(path, "${ORIGIN}", 9) == 0 ? 9 : 0;
	char origin[PATH_MAX];
	if (!skip || !caller || dlinfo(caller, RTLD_DI_ORIGIN, origin))
		return NULL;
	int n = snprintf(buf, size, "%s%s", origin, path + skip);
	return n > 0 && (size_t)n < size ? buf : NULL;
}

static void *dlopen_as(const char *path, int flags, const void *caller_addr)
{
	if (!path)
		return real_dlopen(path, flags);
	struct link_map *caller = object_of(caller_addr);
	char expanded[PATH_MAX];
	const char *as_caller = expand_origin(path, caller, expanded, sizeof expanded);
	if (as_caller)
		return real_dlopen(as_caller, flags);
	if (strchr(path, '/'))
		return real_dlopen(path, flags);
	void *loaded = real_dlopen(path, flags | RTLD_NOLOAD);
	if (loaded)
		return loaded;
	void *found = search_as(path, flags, caller);
	return found ? found : real_dlopen(path, flags);
}

/* ---- What the loader reads ----
 * glibc's loader reads the first 832 bytes of each object it maps (its FILEBUF_SIZE), and its program
 * headers twice more when they lie beyond them: bytes the kernel counts in rchar that no wrapper sees. The
 * objects loaded since the last count are the last ones of the list (dl_iterate_phdr's dlpi_adds counts
 * loads, dlpi_subs unloads); an unload in between makes the count an upper bound. */
struct load_count {
	unsigned long long adds, subs;
	size_t objects;
	size_t skip;    /* objects before the new ones */
	uint64_t bytes; /* the loader's reads of the new ones */
};
static struct load_count loads_counted;
static int loads_lock;

static int count_objects(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct load_count *c = data;
	c->adds = info->dlpi_adds;
	c->subs = info->dlpi_subs;
	c->objects++;
	return 0;
}

static uint64_t loader_reads(const struct dl_phdr_info *info)
{
	uint64_t phoff = sizeof(ElfW(Ehdr)), phdrs = (uint64_t)info->dlpi_phnum * sizeof(ElfW(Phdr));
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_PHDR)
			phoff = info->dlpi_phdr[i].p_offset;
	return 832 + (phoff + phdrs > 832 ? 2 * phdrs : 0);
}

static int sum_new_objects(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct load_count *c = data;
	if (c->skip)
		c->skip--;
	else
		c->bytes += loader_reads(info);
	return 0;
}

/* Threads inside the loader's write-locked calls, counted before they start and after they end: its value in
 * a fork child is what it was at the instant of the fork. */
static _Atomic int loader_calls;
int pw_loader_unsafe;

PW_REAL(int, dl_iterate_phdr, (int (*)(struct dl_phdr_info *, size_t, void *), void *));

/* libunwind's and libgcc's unwinders list objects through this too. */
PW_EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	PW_RESOLVE(dl_iterate_phdr);
	atomic_fetch_add(&loader_calls, 1);
	int ret = real_dl_iterate_phdr(cb, data);
	atomic_fetch_sub(&loader_calls, 1);
	return ret;
}

int pw_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	return pw_loader_unsafe ? -1 : dl_iterate_phdr(cb, data);
}

void pw_loader_after_fork(void)
{
	pw_loader_unsafe = atomic_load(&loader_calls) != 0;
	atomic_store(&loader_calls, 0);
}

void pw_loads_baseline(void)
{
	struct load_count now = {0};
	if (pw_loader_iterate(count_objects, &now) == 0)
		loads_counted = now; /* else the parent's last count stands: the child has what it had */
	if (pw_seg)
		atomic_store_explicit(&pw_seg->io_loader, 0, memory_order_relaxed); /* loads before: not in the window */
}

void pw_count_loads(void)
{
	struct pw_seg_header *h = pw_seg;
	if (!h || pw_loader_unsafe || __atomic_exchange_n(&loads_lock, 1, __ATOMIC_ACQUIRE))
		return; /* another thread counts: it will see these loads too */
	struct load_count now = {0};
	dl_iterate_phdr(count_objects, &now);
	size_t gone = (size_t)(now.subs - loads_counted.subs);
	size_t kept = loads_counted.objects > gone ? loads_counted.objects - gone : 0; /* at least */
	size_t added = now.objects > kept ? now.objects - kept : 0;
	if (now.adds - loads_counted.adds < added)
		added = (size_t)(now.adds - loads_counted.adds);
	if (added) {
		now.skip = now.objects - added;
		dl_iterate_phdr(sum_new_objects, &now);
		atomic_fetch_add_explicit(&h->io_loader, now.bytes, memory_order_relaxed);
	}
	loads_counted = now;
	__atomic_store_n(&loads_lock, 0, __ATOMIC_RELEASE);
}

/* A load may bring a GPU library whose functions the wrappers need (pw_gpu_scan), and code whose addresses
 * stacks will hold (pw_stacks_after_dlopen). */
PW_EXPORT void *dlopen(const char *path, int flags)
{
	const void *caller = __builtin_return_address(0);
	PW_RESOLVE(dlopen);
	if (!pw_should_record(PW_DOM_DL)) {
		atomic_fetch_add(&loader_calls, 1);
		void *h = dlopen_as(path, flags, caller);
		atomic_fetch_sub(&loader_calls, 1);
		if (h) {
			pw_gpu_scan();
			pw_stacks_after_dlopen(h, path);
			pw_count_loads();
			if (PW_UNLIKELY(pw_pyfn_waiting))
				pw_pyfn_after_dlopen(h, path);
		}
		return h;
	}
	PW_BEGIN();
	atomic_fetch_add(&loader_calls, 1);
	void *ret = dlopen_as(path, flags, caller);
	atomic_fetch_sub(&loader_calls, 1);
	PW_END(DLOPEN, ret, flags, pw_intern_path(path), !ret); /* dlopen itself reads path */
	if (ret) {
		pw_gpu_scan();
		pw_stacks_after_dlopen(ret, path);
		pw_count_loads();
		if (PW_UNLIKELY(pw_pyfn_waiting))
			pw_pyfn_after_dlopen(ret, path);
	}
	return ret;
}

PW_REAL(int, dlclose, (void *));
PW_EXPORT int dlclose(void *handle)
{
	PW_RESOLVE(dlclose);
	int ret;
	atomic_fetch_add(&loader_calls, 1);
	if (!pw_should_record(PW_DOM_DL)) {
		ret = real_dlclose(handle);
	} else {
		PW_BEGIN();
		ret = real_dlclose(handle);
		PW_END(DLCLOSE, ret, handle, 0, ret != 0);
	}
	atomic_fetch_sub(&loader_calls, 1);
	if (ret == 0) {
		pw_gpu_after_dlclose();
		pw_stacks_after_dlclose();
	}
	return ret;
}
