/* Finding the real functions of GPU libraries, and what the wrappers of every GPU library share.
 *
 * libc is found with RTLD_NEXT in the constructor. GPU libraries are often loaded later, and privately:
 * Python extension modules are dlopen'd RTLD_LOCAL with their dependencies, and ctypes.CDLL uses
 * RTLD_LOCAL by default. RTLD_NEXT cannot see those. So each library is looked for among the loaded
 * objects (dl_iterate_phdr, by the name its file starts with) at start and after every dlopen that loaded
 * something, and its functions are taken from that object's own handle.
 *
 * A program that looks a function up itself (ctypes: dlsym(handle, "cudaMalloc")) would get the library's
 * definition and bypass the wrapper, so dlsym is interposed too: for a wrapped GPU function on an ordinary
 * handle it returns the wrapper (and takes the real function from that lookup), but only when the wrapper
 * calls exactly the function that lookup found. A library may be a shim that finds its own implementation by
 * name in another library (cuDNN 9's libcudnn.so.9 looks cudnnBackendExecute up in libcudnn_graph.so.9): given
 * the wrapper, whose real function is the shim, it would call itself until the stack ran out. Everything else
 * goes to the real dlsym by a tail jump, so that RTLD_NEXT still means "after the caller", not "after profwrap".
 *
 * Only the dynamic loader is asked here: no GPU library is called unless the program calls it first. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pw_gpu.h"

extern struct pw_gpu_slot __start_pw_real_gpu[] __attribute__((weak, visibility("hidden")));
extern struct pw_gpu_slot __stop_pw_real_gpu[] __attribute__((weak, visibility("hidden")));

/* Whether any GPU wrapper is built in (the section exists only then). */
static int have_slots(void)
{
	const struct pw_gpu_slot *begin = __start_pw_real_gpu, *end = __stop_pw_real_gpu;
	return begin != end;
}

static const char *const lib_file_prefix[PW_LIB_COUNT] = {
#define PW_X(id, file) [PW_LIB_##id] = file,
	PW_GPU_LIB_LIST(PW_X)
#undef PW_X
};

/* Load address of the object each library's functions were taken from, 0 while none. */
static _Atomic uintptr_t lib_base[PW_LIB_COUNT];

/* The loader's functions, called directly: through this library's exports they would be recorded (dlopen,
 * dlclose) or answered by pw_dlsym_override (dlsym). */
PW_REAL(void *, dlopen, (const char *, int));
PW_REAL(int, dlclose, (void *));
__attribute__((visibility("hidden"))) void *(*pw_real_dlsym)(void *, const char *);
static void resolve_real_dlsym(void);

static void slot_set(struct pw_gpu_slot *s, void *fn)
{
	__atomic_store_n((void **)s->fn, fn, __ATOMIC_RELEASE);
}

static void *slot_get(const struct pw_gpu_slot *s)
{
	return __atomic_load_n((void **)s->fn, __ATOMIC_ACQUIRE);
}

static const struct {
	int lib;
	const char *file;
} lib_aliases[] = {
#define PW_X(id, file) {PW_LIB_##id, file},
	PW_GPU_LIB_ALIASES(PW_X)
#undef PW_X
};

/* Whether base is the file name prefix exactly or followed by a version ("libmpi.so.40", not "libmpi_cxx.so"). */
static int is_lib_file(const char *base, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(base, prefix, n) == 0 && (base[n] == 0 || base[n] == '.');
}

/* Which library an object is, from the file name: "libcudart.so" exactly or followed by a version, or one
 * of the library's other names. */
static int lib_of_path(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (int l = 0; l < PW_LIB_COUNT; l++)
		if (is_lib_file(base, lib_file_prefix[l]))
			return l;
	for (size_t a = 0; a < sizeof lib_aliases / sizeof lib_aliases[0]; a++)
		if (is_lib_file(base, lib_aliases[a].file))
			return lib_aliases[a].lib;
	return -1;
}

struct found_libs {
	char path[PW_LIB_COUNT][512];
	uintptr_t base[PW_LIB_COUNT];
	char driver[512]; /* libcuda, which CUPTI also follows (programs of the driver API) */
};

static int collect_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct found_libs *f = data;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	int l = lib_of_path(info->dlpi_name);
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (!f->driver[0] && strncmp(base, "libcuda.so", 10) == 0 && strlen(info->dlpi_name) < sizeof f->driver)
		strcpy(f->driver, info->dlpi_name);
	if (l >= 0 && !f->base[l] && strlen(info->dlpi_name) < sizeof f->path[l]) {
		strcpy(f->path[l], info->dlpi_name);
		f->base[l] = info->dlpi_addr ? info->dlpi_addr : 1;
	}
	return 0;
}

/* Takes every function of library l from the loaded object at path. Returns how many lookups failed (the
 * object's version lacks them), which left an error for dlerror() to clear. */
static int resolve_lib(int l, const char *path)
{
	PW_RESOLVE(dlopen);
	PW_RESOLVE(dlclose);
	if (!pw_real_dlsym)
		resolve_real_dlsym();
	void *h = real_dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (!h || !pw_real_dlsym)
		return 1;
	int failed = 0;
	for (struct pw_gpu_slot *s = __start_pw_real_gpu; s < __stop_pw_real_gpu; s++) {
		if (s->lib != (uint32_t)l || slot_get(s))
			continue;
		void *fn = pw_real_dlsym(h, s->name);
		if (fn && fn != s->wrapper)
			slot_set(s, fn);
		else
			failed++;
	}
	real_dlclose(h);
	return failed;
}

static void scan_libs(void)
{
	struct found_libs f;
	memset(f.base, 0, sizeof f.base);
	f.driver[0] = 0;
	pw_loader_iterate(collect_lib, &f);
	int errors = 0;
	for (int l = 0; l < PW_LIB_COUNT; l++) {
		if (!f.base[l] || atomic_load(&lib_base[l]) == f.base[l])
			continue;
		errors += resolve_lib(l, f.path[l]);
		atomic_store(&lib_base[l], f.base[l]);
	}
	if (errors)
		dlerror(); /* our failed lookups are not the program's error */
	if (pw_cupti_check && (f.base[PW_LIB_CUDART] || f.driver[0]))
		pw_cupti_check(f.base[PW_LIB_CUDART] ? f.path[PW_LIB_CUDART] : f.driver);
}

void pw_gpu_scan(void)
{
	if (!have_slots())
		return;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	scan_libs();
	pw_guard_leave(guard);
}

void pw_gpu_after_dlclose(void)
{
	if (!have_slots())
		return;
	struct found_libs f;
	memset(f.base, 0, sizeof f.base);
	f.driver[0] = 0;
	pw_loader_iterate(collect_lib, &f);
	for (int l = 0; l < PW_LIB_COUNT; l++) {
		uintptr_t had = atomic_load(&lib_base[l]);
		if (!had || f.base[l] == had)
			continue;
		/* Unloaded: its functions would be dangling. A later load is found afresh. */
		for (struct pw_gpu_slot *s = __start_pw_real_gpu; s < __stop_pw_real_gpu; s++)
			if (s->lib == (uint32_t)l)
				slot_set(s, NULL);
		atomic_store(&lib_base[l], 0);
	}
}

int pw_gpu_resolve(struct pw_gpu_slot *slot)
{
	if (slot_get(slot))
		return 0;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	scan_libs();
	if (!slot_get(slot) && pw_real_dlsym) {
		/* The program bound the name to this library while a library defining it is loaded
		 * where the scan does not look (e.g. under another file name): ask the loader. */
		void *fn = pw_real_dlsym(RTLD_NEXT, slot->name);
		if (fn && fn != slot->wrapper)
			slot_set(slot, fn);
		else
			dlerror();
	}
	int rc = slot_get(slot) ? 0 : -1;
	if (rc < 0) {
		static atomic_int said;
		if (!atomic_exchange(&said, 1) && !pw_cfg.quiet)
			dprintf(2, "profwrap: %s was called but no loaded library defines it; returning an error\n",
				slot->name);
	}
	pw_guard_leave(guard);
	return rc;
}

/* ---- dlsym ---- */

static void resolve_real_dlsym(void)
{
	/* dlsym itself cannot be asked (it would be this library's); its versions: glibc 2.34 moved it into
	 * libc, the older ones are the architectures' base versions. */
	static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"};
	for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !pw_real_dlsym; i++)
		pw_real_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", versions[i]);
}

static struct pw_gpu_slot *wrapped_slot(const char *name)
{
	if (strncmp(name, "cu", 2) != 0 && strncmp(name, "__cuda", 6) != 0 && strncmp(name, "nccl", 4) != 0 &&
	    strncmp(name, "MPI_", 4) != 0)
		return NULL;
	for (struct pw_gpu_slot *s = __start_pw_real_gpu; s < __stop_pw_real_gpu; s++)
		if (s->wrapper && strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

/* The wrapper of slot s when the function it calls is fn (taking fn when it calls none yet), else fn itself:
 * a lookup never gets a function other than the one it found. */
static void *wrapper_if_it_calls(struct pw_gpu_slot *s, void *fn)
{
	void *none = NULL;
	if (__atomic_compare_exchange_n((void **)s->fn, &none, fn, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
	    none == fn)
		return s->wrapper;
	return fn;
}

#define DLSYM_PASS ((void *)0)     /* let the real dlsym answer, as the caller asked */
#define DLSYM_NOT_FOUND ((void *)1) /* return NULL: the error is already set */

/* What dlsym(handle, name) should return when it is not the real dlsym's answer. */
__attribute__((visibility("hidden"), used)) void *pw_dlsym_override(void *handle, const char *name)
{
	if (PW_UNLIKELY(!pw_real_dlsym))
		resolve_real_dlsym();
	if (!name || handle == RTLD_NEXT || !pw_real_dlsym)
		return DLSYM_PASS;
	struct pw_gpu_slot *s = wrapped_slot(name);
	if (!s)
		return DLSYM_PASS;
	void *fn = handle == RTLD_DEFAULT ? NULL : pw_real_dlsym(handle, name);
	if (fn && fn != s->wrapper)
		return wrapper_if_it_calls(s, fn);
	if (handle != RTLD_DEFAULT && !fn)
		return DLSYM_NOT_FOUND; /* with that lookup's error */
	/* The scope searched found this library's definition (the global scope does): it is the answer only
	 * if the global scope also holds a library that defines the function, as it would without profwrap. */
	fn = pw_real_dlsym(RTLD_NEXT, name);
	if (!fn || fn == s->wrapper)
		return DLSYM_NOT_FOUND;
	return wrapper_if_it_calls(s, fn);
}

/* dlsym: ask pw_dlsym_override, and when it passes, jump (not call) to the real dlsym with the caller's
 * arguments and return address, which glibc uses to resolve RTLD_NEXT and RTLD_DEFAULT. */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"	push %rdi\n"
	"	push %rsi\n"
	"	sub $8, %rsp\n"
	"	call pw_dlsym_override\n"
	"	add $8, %rsp\n"
	"	pop %rsi\n"
	"	pop %rdi\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"
	"	cmp $1, %rax\n"
	"	jne 2f\n"
	"	xor %eax, %eax\n"
	"2:	ret\n"
	"1:	jmp *pw_real_dlsym(%rip)\n"
	".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, %function\n"
	"dlsym:\n"
	"	stp x29, x30, [sp, #-32]!\n"
	"	mov x29, sp\n"
	"	stp x0, x1, [sp, #16]\n"
	"	bl pw_dlsym_override\n"
	"	cbz x0, 1f\n"
	"	cmp x0, #1\n"
	"	csel x0, xzr, x0, eq\n"
	"	ldp x29, x30, [sp], #32\n"
	"	ret\n"
	"1:	ldp x0, x1, [sp, #16]\n"
	"	ldp x29, x30, [sp], #32\n"
	"	adrp x16, pw_real_dlsym\n"
	"	ldr x16, [x16, :lo12:pw_real_dlsym]\n"
	"	br x16\n"
	".size dlsym, .-dlsym\n");
#endif

/* ---- the current device ---- */

PW_GPU_HELPER(CUDART, int, cudaGetDevice, (int *));

void pw_gpu_learn_device(void)
{
	int dev;
	if (real_cudaGetDevice && real_cudaGetDevice(&dev) == 0 && dev >= 0)
		pw_self.gpu_device = (uint32_t)dev + 1;
}

void pw_gpu_after_fork(void)
{
	pw_kernel_names_after_fork();
	if (pw_cupti_after_fork)
		pw_cupti_after_fork();
	if (pw_nvtx_after_fork)
		pw_nvtx_after_fork();
}
