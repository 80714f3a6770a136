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

/* A load may bring a GPU library whose functions the wrappers need (pw_gpu_scan), and code whose addresses
 * stacks will hold (pw_stacks_after_dlopen). */
PW_EXPORT void *dlopen(const char *path, int flags)
{
	const void *caller = __builtin_return_address(0);
	PW_RESOLVE(dlopen);
	if (!pw_should_record(PW_DOM_DL)) {
		void *h = dlopen_as(path, flags, caller);
		if (h) {
			pw_gpu_scan();
			pw_stacks_after_dlopen(h, path);
		}
		return h;
	}
	PW_BEGIN();
	void *ret = dlopen_as(path, flags, caller);
	PW_END(DLOPEN, ret, flags, pw_intern_path(path), !ret); /* dlopen itself reads path */
	if (ret) {
		pw_gpu_scan();
		pw_stacks_after_dlopen(ret, path);
	}
	return ret;
}

PW_REAL(int, dlclose, (void *));
PW_EXPORT int dlclose(void *handle)
{
	PW_RESOLVE(dlclose);
	int ret;
	if (!pw_should_record(PW_DOM_DL)) {
		ret = real_dlclose(handle);
	} else {
		PW_BEGIN();
		ret = real_dlclose(handle);
		PW_END(DLCLOSE, ret, handle, 0, ret != 0);
	}
	if (ret == 0) {
		pw_gpu_after_dlclose();
		pw_stacks_after_dlclose();
	}
	return ret;
}
