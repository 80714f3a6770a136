/* Kernel names for launch records: the device function each host stub stands for, as the program's modules
 * announce it to the runtime (__cudaRegisterFunction), and the stub behind each kernel handle that
 * __cudaGetKernel gave out (nvcc's launches since CUDA 12 pass the handle, not the stub). Names are known
 * without asking the runtime, so a launch that failed (no driver) is named too. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/pw_session.h"
#include "pw_gpu.h"

/* An open-addressing table of (address, name) in pages of its own, grown by doubling under a lock and read
 * without one: a grown table replaces the old one, which is never unmapped (a reader may still be in it),
 * so at most twice the last table's memory stays mapped. An entry's name is written before its key. The
 * names are the modules' own strings (not copied): a reader checks that one still lies in a loaded object
 * before reading it, as a module may have been unloaded since. */
struct kernel_entry {
	_Atomic uintptr_t key;
	const char *_Atomic name;
};
struct kernel_table {
	size_t mask; /* slots - 1 */
	size_t used;
	struct kernel_entry slot[];
};

#define KERNEL_TABLE_FIRST_SLOTS 4096

static struct kernel_table *_Atomic table;
static atomic_flag table_lock = ATOMIC_FLAG_INIT;

/* Pages from the kernel directly: the program's mmap is wrapped, and this runs before start-up too. */
static struct kernel_table *table_new(size_t slots)
{
	size_t bytes = sizeof(struct kernel_table) + slots * sizeof(struct kernel_entry);
	void *p = (void *)PW_SYSCALL(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	struct kernel_table *t = p;
	t->mask = slots - 1;
	return t;
}

static size_t slot_of(uintptr_t key, size_t mask)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & mask;
}

/* Called with the lock held. */
static void put(struct kernel_table *t, uintptr_t key, const char *name)
{
	for (size_t i = slot_of(key, t->mask);; i = (i + 1) & t->mask) {
		uintptr_t k = atomic_load_explicit(&t->slot[i].key, memory_order_relaxed);
		if (k == key || k == 0) {
			atomic_store_explicit(&t->slot[i].name, name, memory_order_relaxed);
			if (k == 0) {
				atomic_store_explicit(&t->slot[i].key, key, memory_order_release);
				t->used++;
			}
			return;
		}
	}
}

static void remember(const void *key, const char *name)
{
	if (!key || !name)
		return;
	while (atomic_flag_test_and_set_explicit(&table_lock, memory_order_acquire))
		;
	struct kernel_table *t = atomic_load_explicit(&table, memory_order_relaxed);
	if (!t || (t->used + 1) * 2 > t->mask + 1) {
		struct kernel_table *grown = table_new(t ? (t->mask + 1) * 2 : KERNEL_TABLE_FIRST_SLOTS);
		if (grown && t)
			for (size_t i = 0; i <= t->mask; i++) {
				uintptr_t k = atomic_load_explicit(&t->slot[i].key, memory_order_relaxed);
				if (k)
					put(grown, k, atomic_load_explicit(&t->slot[i].name, memory_order_relaxed));
			}
		if (grown) {
			atomic_store_explicit(&table, grown, memory_order_release);
			t = grown;
		}
	}
	if (t && (t->used + 1) * 2 <= t->mask + 1)
		put(t, (uintptr_t)key, name);
	atomic_flag_clear_explicit(&table_lock, memory_order_release);
}

/* The registered name of a stub or kernel handle, NULL when none (or its module is gone). */
static const char *registered_name(const void *key)
{
	struct kernel_table *t = atomic_load_explicit(&table, memory_order_acquire);
	if (!t || !key)
		return NULL;
	for (size_t i = slot_of((uintptr_t)key, t->mask), n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
		uintptr_t k = atomic_load_explicit(&t->slot[i].key, memory_order_acquire);
		if (k == 0)
			return NULL;
		if (k == (uintptr_t)key) {
			const char *name = atomic_load_explicit(&t->slot[i].name, memory_order_relaxed);
			Dl_info info;
			return name && dladdr(name, &info) ? name : NULL;
		}
	}
	return NULL;
}

void pw_kernel_registered(const void *host_stub, const char *device_name)
{
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	remember(host_stub, device_name);
	pw_guard_leave(guard);
}

void pw_kernel_handle_made(const void *handle, const void *host_stub)
{
	if (!handle || handle == host_stub)
		return;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	remember(handle, registered_name(host_stub));
	pw_guard_leave(guard);
}

/* ---- interning names ---- */

static pw_strref intern_text(uint64_t hash, const void *name)
{
	(void)hash;
	return pw_intern_path(name);
}

pw_strref pw_intern_name_by_text(struct pw_once_slot *slots, const char *name)
{
	uint64_t key = pw_hash64(name, strlen(name));
	pw_strref ref = pw_once(slots, PW_NAME_SLOTS, key ? key : 1, intern_text, name); /* 0 is no key */
	return ref ? ref : pw_intern_path(name);
}

/* ---- names of launched functions ---- */

PW_GPU_HELPER(CUDART, int, cudaFuncGetName, (const char **, const void *));

static struct pw_once_slot knames[PW_NAME_SLOTS];         /* interned kernel names by launched address */
static struct pw_once_slot knames_by_text[PW_NAME_SLOTS]; /* by text, for addresses knames had no room for */

static const char *name_of(const void *func, int ask_runtime)
{
	const char *name = registered_name(func);
	if (!name && ask_runtime && real_cudaFuncGetName && real_cudaFuncGetName(&name, func) != 0)
		name = NULL;
	Dl_info info;
	if (!name && dladdr(func, &info) && info.dli_saddr == func)
		name = info.dli_sname;
	return name;
}

static pw_strref lookup_name(const void *func, int ask_runtime)
{
	const char *name = name_of(func, ask_runtime);
	return name ? pw_intern_path(name) : 0;
}

static pw_strref lookup_launched(uint64_t key, const void *unused)
{
	(void)unused;
	return lookup_name((const void *)(uintptr_t)(key & ((UINT64_C(1) << 56) - 1)), 1);
}

/* Module unloads so far: an unloaded module's stub and handle addresses may become another module's, so the
 * cache's keys are addresses of the current generation (user-space addresses leave the top byte free). */
static atomic_uint generation;

void pw_kernel_module_unloading(void)
{
	atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
}

pw_strref pw_gpu_kernel_name(const void *func, int launched)
{
	if (!func)
		return 0;
	if (!launched && !registered_name(func))
		return lookup_name(func, 0); /* the runtime may not know it: not cached */
	unsigned gen = atomic_load_explicit(&generation, memory_order_relaxed);
	pw_strref ref = gen > 255 || (uintptr_t)func >> 56
				? 0
				: pw_once(knames, PW_NAME_SLOTS, (uintptr_t)func | (uint64_t)gen << 56, lookup_launched,
					  NULL);
	if (ref)
		return ref;
	const char *name = name_of(func, 1); /* no room for its address, or no name */
	return name ? pw_intern_name_by_text(knames_by_text, name) : 0;
}

void pw_kernel_names_after_fork(void)
{
	memset((void *)knames, 0, sizeof knames);
	memset((void *)knames_by_text, 0, sizeof knames_by_text);
	atomic_flag_clear(&table_lock); /* a thread of the parent may have held it */
}
