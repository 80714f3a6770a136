/* Library loads: dlopen's duration is the load time the report lists per library.
 *
 * dlopen searches a bare name in the RPATH/RUNPATH of the object that called it; wrapped, that caller would
 * be this library. So a bare name is first looked up the way the caller's own dlopen would: an object already
 * loaded under that name wins; then the caller's search list (dlinfo RTLD_DI_SERINFO: its RPATH,
 * LD_LIBRARY_PATH, its RUNPATH, then the system directories) is walked in order, up to the first system
 * directory; anything not found there goes to the real dlopen unchanged (cache, system directories).
 * glibc leaves dls_flags at 0, so the caller's own directories are told from LD_LIBRARY_PATH and the
 * system directories by comparing with this library's search list, which has no RPATH or RUNPATH. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pw_preload.h"

PW_REAL(void *, dlopen, (const char *, int));

#define PW_SERINFO_MAX 16384

/* A search list, as dlinfo RTLD_DI_SERINFO gives it for the object that holds addr. Returns NULL if none. */
static Dl_serinfo *search_list(const void *addr, char *buf, size_t size)
{
	Dl_info info;
	struct link_map *lm = NULL;
	Dl_serinfo head;
	if (!dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || dlinfo(lm, RTLD_DI_SERINFOSIZE, &head) ||
	    head.dls_size > size)
		return NULL;
	Dl_serinfo *si = (Dl_serinfo *)(void *)buf;
	si->dls_size = head.dls_size;
	si->dls_cnt = head.dls_cnt;
	return dlinfo(lm, RTLD_DI_SERINFO, si) ? NULL : si;
}

static int in_list(const Dl_serinfo *si, const char *dir)
{
	for (unsigned i = 0; si && i < si->dls_cnt; i++)
		if (strcmp(si->dls_serpath[i].dls_name, dir) == 0)
			return 1;
	return 0;
}

static int in_ld_library_path(const char *dir)
{
	const char *p = getenv("LD_LIBRARY_PATH");
	size_t len = strlen(dir);
	while (p && *p) {
		size_t n = strcspn(p, ":;");
		if (n == len && strncmp(p, dir, n) == 0)
			return 1;
		p += n + (p[n] != 0);
	}
	return 0;
}

static void *dlopen_as(const char *path, int flags, const void *caller)
{
	if (!path || strchr(path, '/'))
		return real_dlopen(path, flags);
	void *loaded = real_dlopen(path, flags | RTLD_NOLOAD);
	if (loaded)
		return loaded;
	(void)dlerror();
	_Alignas(Dl_serinfo) char cbuf[PW_SERINFO_MAX], obuf[PW_SERINFO_MAX];
	const Dl_serinfo *theirs = search_list(caller, cbuf, sizeof cbuf);
	const Dl_serinfo *ours = search_list((const void *)dlopen_as, obuf, sizeof obuf);
	for (unsigned i = 0; theirs && ours && i < theirs->dls_cnt; i++) {
		const char *dir = theirs->dls_serpath[i].dls_name;
		if (in_list(ours, dir) && !in_ld_library_path(dir))
			break; /* the system directories: the real dlopen searches them, with its cache */
		char full[4096];
		int n = snprintf(full, sizeof full, "%s/%s", dir, path);
		if (n > 0 && n < (int)sizeof full && access(full, F_OK) == 0)
			return real_dlopen(full, flags);
	}
	return real_dlopen(path, flags);
}

PW_EXPORT void *dlopen(const char *path, int flags)
{
	const void *caller = __builtin_return_address(0);
	PW_RESOLVE(dlopen);
	if (!pw_should_record(PW_DOM_DL))
		return dlopen_as(path, flags, caller);
	PW_BEGIN();
	void *ret = dlopen_as(path, flags, caller);
	PW_END(DLOPEN, ret, flags, pw_intern_path(path), !ret); /* dlopen itself reads path */
	return ret;
}

PW_WRAP(DL, DLCLOSE, int, dlclose, (void *handle), (handle), handle, 0, ret != 0)
