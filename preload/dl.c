/* Library loads: dlopen's duration is the load time the report lists per library.
 *
 * dlopen searches a bare name in the RPATH/RUNPATH of the object that called it; wrapped, that caller would
 * be this library. So a bare name is first looked up the way the caller's own dlopen would: an object already
 * loaded under that name wins, then the caller's RPATH, LD_LIBRARY_PATH and RUNPATH directories (from
 * dlinfo RTLD_DI_SERINFO); anything else goes to the real dlopen unchanged (cache, system directories). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pw_preload.h"

PW_REAL(void *, dlopen, (const char *, int));

static void *dlopen_as(const char *path, int flags, const void *caller)
{
	if (!path || strchr(path, '/'))
		return real_dlopen(path, flags);
	void *loaded = real_dlopen(path, flags | RTLD_NOLOAD);
	if (loaded)
		return loaded;
	(void)dlerror();
	Dl_info info;
	struct link_map *lm = NULL;
	Dl_serinfo size;
	if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || dlinfo(lm, RTLD_DI_SERINFOSIZE, &size))
		return real_dlopen(path, flags);
	union {
		Dl_serinfo si;
		char buf[8192];
	} u;
	if (size.dls_size > sizeof u.buf)
		return real_dlopen(path, flags);
	u.si.dls_size = size.dls_size;
	u.si.dls_cnt = size.dls_cnt;
	if (dlinfo(lm, RTLD_DI_SERINFO, &u.si))
		return real_dlopen(path, flags);
	for (unsigned i = 0; i < u.si.dls_cnt; i++) {
		if (!(u.si.dls_serpath[i].dls_flags & (LA_SER_RUNPATH | LA_SER_LIBPATH)))
			continue;
		char full[4096];
		int n = snprintf(full, sizeof full, "%s/%s", u.si.dls_serpath[i].dls_name, path);
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
	PW_END(DLOPEN, ret, flags, pw_intern_path(path), !ret);
	return ret;
}

PW_WRAP(DL, DLCLOSE, int, dlclose, (void *handle), (handle), handle, 0, ret != 0)
