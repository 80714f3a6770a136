/* NVTX: the program's own annotations. NVTX3 is header-only: at its first call, the NVTX code compiled into
 * each library (PyTorch, Megatron, the program) loads the library named by NVTX_INJECTION64_PATH and calls
 * its InitializeInjectionNvtx2, which fills NVTX's function tables with the tool's callbacks. init.c points
 * that variable at this library, so every NVTX instance in the process calls the callbacks below.
 *
 * Ranges and marks become struct pw_rec_range records; names given to threads, categories, domains and CUDA
 * objects become PW_K_NVTX_NAME records. Messages are interned once per distinct text (a 64-bit hash), and
 * past PW_NVTX_DISTINCT distinct texts with their digits folded ("step 12345" -> "step #"), so that a
 * message per step cannot fill the string arena. The values NVTX documents are returned: push gives the
 * level pushed, pop the level popped (negative with nothing open), start a range id that is never 0. */
#define _GNU_SOURCE
/* the types and ids only: this library is the tool NVTX calls, not a client of it */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "../common/pw_session.h"
#include "pw_gpu.h"
#include "pw_preload.h"

#define PW_NVTX_SLOTS 8192
#define PW_NVTX_DISTINCT 4096 /* distinct texts interned as they are; the rest with digits folded */
#define PW_NVTX_DOMAINS 64    /* domains whose names capture control can match */
#define PW_NVTX_LEVELS 8      /* domains with a push level of their own; the rest share the last */
#define PW_NVTX_TEXT_MAX 1024

static struct pw_once_slot texts[PW_NVTX_SLOTS];
static _Atomic uint32_t distinct;
static _Atomic uint64_t next_range_id = 1;
static _Atomic uint32_t next_domain = 1;
static char domain_names[PW_NVTX_DOMAINS][64];
static __thread int32_t levels[PW_NVTX_LEVELS] __attribute__((tls_model("initial-exec")));

static uint64_t text_hash(const char *s, size_t len)
{
	uint64_t h = pw_hash64(s, len);
	return h ? h : 1;
}

struct text {
	const char *s;
	size_t len;
	int fold;
};

/* A text's entry: as it is while fewer than PW_NVTX_DISTINCT texts were made (or when not folding), else
 * the entry of its digit-folded form, which then stands for it. */
static pw_strref make_text(uint64_t hash, const void *arg)
{
	(void)hash;
	const struct text *t = arg;
	if (!t->fold || atomic_fetch_add_explicit(&distinct, 1, memory_order_relaxed) < PW_NVTX_DISTINCT)
		return pw_intern_bytes(t->s, t->len);
	char folded[PW_NVTX_TEXT_MAX];
	struct text f = {folded, pw_range_fold(t->s, t->len, folded, sizeof folded), 0};
	return pw_once(texts, PW_NVTX_SLOTS, text_hash(f.s, f.len), make_text, &f);
}

/* The arena reference of a text, interned once per distinct text (fold: past PW_NVTX_DISTINCT distinct texts,
 * with its digits folded); where the table is full around its hash, interned again each time, since a range
 * must keep its name. 0 when the arena is full. */
static pw_strref intern_text(const char *s, size_t len, int fold)
{
	if (!s)
		return 0;
	char plain[PW_NVTX_TEXT_MAX];
	if (fold && len < sizeof plain && memchr(s, ',', len)) { /* PyTorch's numbers: "aten::add, seq = 7, op_id = 9" */
		memcpy(plain, s, len);
		plain[len] = 0;
		len = pw_range_undecorate(plain);
		s = plain;
	}
	struct text t = {s, len, fold};
	pw_strref ref = pw_once(texts, PW_NVTX_SLOTS, text_hash(s, len), make_text, &t);
	return ref ? ref : pw_intern_bytes(s, len);
}

void pw_nvtx_after_fork(void)
{
	memset((void *)texts, 0, sizeof texts);
	atomic_store_explicit(&distinct, 0, memory_order_relaxed);
}

/* A wide message as UTF-8, cut at PW_NVTX_TEXT_MAX bytes. */
static size_t to_utf8(const wchar_t *w, char *out, size_t size)
{
	size_t n = 0;
	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		char b[4];
		size_t k;
		if (c < 0x80) {
			b[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			b[0] = (char)(0xc0 | c >> 6);
			b[1] = (char)(0x80 | (c & 0x3f));
			k = 2;
		} else if (c < 0x10000) {
			b[0] = (char)(0xe0 | c >> 12);
			b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[2] = (char)(0x80 | (c & 0x3f));
			k = 3;
		} else if (c < 0x110000) {
			b[0] = (char)(0xf0 | c >> 18);
			b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[3] = (char)(0x80 | (c & 0x3f));
			k = 4;
		} else {
			continue;
		}
		if (n + k > size)
			break;
		memcpy(out + n, b, k);
		n += k;
	}
	return n;
}

static pw_strref intern_wide(const wchar_t *w)
{
	char buf[PW_NVTX_TEXT_MAX];
	return w ? intern_text(buf, to_utf8(w, buf, sizeof buf), 0) : 0;
}

/* A message as text (for capture control) and as a reference. Registered strings are references already. */
struct message {
	const char *text; /* NULL for registered strings and wide ones */
	size_t len;
	char buf[PW_NVTX_TEXT_MAX];
	pw_strref ref;
};

static void message_of(const nvtxEventAttributes_t *a, struct message *m, int record)
{
	if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof a->message)
		return;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		if (a->message.ascii) {
			m->text = a->message.ascii;
			m->len = strlen(m->text);
		}
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		if (a->message.unicode) {
			m->len = to_utf8(a->message.unicode, m->buf, sizeof m->buf);
			m->text = m->buf;
		}
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED: /* capture control matches it through registered_text */
		m->ref = (pw_strref)(uintptr_t)a->message.registered;
		return;
	default:
		return;
	}
	if (record)
		m->ref = intern_text(m->text, m->len, 1);
}

/* Registered strings keep their text too, so capture control can match a range named by one. */
#define PW_NVTX_REGISTERED 256
static struct {
	_Atomic pw_strref ref;
	char text[PW_CAPTURE_NAME_MAX];
} registered[PW_NVTX_REGISTERED];
static _Atomic uint32_t nregistered;

static const char *registered_text(pw_strref ref)
{
	uint32_t n = atomic_load_explicit(&nregistered, memory_order_acquire);
	for (uint32_t i = 0; i < n && i < PW_NVTX_REGISTERED; i++)
		if (atomic_load_explicit(&registered[i].ref, memory_order_acquire) == ref)
			return registered[i].text;
	return NULL;
}

static uint32_t domain_id(nvtxDomainHandle_t d)
{
	return (uint32_t)(uintptr_t)d;
}

static const char *domain_name(uint32_t id)
{
	return id && id < PW_NVTX_DOMAINS && domain_names[id][0] ? domain_names[id] : NULL;
}

static int32_t *level_of(uint32_t domain)
{
	return &levels[domain < PW_NVTX_LEVELS ? domain : PW_NVTX_LEVELS - 1];
}

static void emit_range(uint16_t ev, uint32_t domain, const nvtxEventAttributes_t *a, pw_strref msg, int64_t ret)
{
	struct pw_rec_range r;
	memset(&r, 0, sizeof r);
	r.c.h.type = ev;
	r.c.h.size8 = sizeof r / 8;
	r.c.t0 = r.c.t1 = pw_clock_ticks();
	r.c.ret = ret;
	r.c.arg0 = domain;
	r.c.arg1 = msg;
	if (a && a->size >= offsetof(nvtxEventAttributes_t, messageType)) {
		r.c.arg0 = pw_put_nvtx_scope((struct pw_nvtx_scope){.domain = (uint32_t)domain, .category = a->category});
		r.color = a->colorType == NVTX_COLOR_ARGB ? a->color : 0;
		r.payload_type = a->payloadType > 0 ? (uint32_t)a->payloadType : 0;
		if (r.payload_type)
			memcpy(&r.payload, &a->payload, sizeof r.payload);
	}
	pw_emit_record(&r, sizeof r);
}

/* Runs body with the internal guard held (nothing the profiler calls is recorded), when this thread may
 * record; NVTX calls made by the profiler itself or from a signal handler mid-record only keep their levels. */
#define PW_NVTX_BEGIN()                                                                          \
	int record_ = pw_should_record(PW_DOM_NVTX);                                             \
	struct pw_guarded guard_ = pw_guard_enter(pw_self.guard ? pw_self.guard : PW_GUARD_INTERNAL)
#define PW_NVTX_END() pw_guard_leave(guard_)

/* The message of a push, start or mark from its three forms; the text is kept for capture control. */
static void message_from(const nvtxEventAttributes_t *a, const char *ascii, const wchar_t *wide, int record,
			 struct message *m)
{
	m->text = NULL;
	m->len = 0;
	m->ref = 0;
	if (a) {
		message_of(a, m, record);
		return;
	}
	if (ascii) {
		m->text = ascii;
		m->len = strlen(ascii);
	} else if (wide) {
		m->len = to_utf8(wide, m->buf, sizeof m->buf);
		m->text = m->buf;
	}
	if (record && m->text)
		m->ref = intern_text(m->text, m->len, 1);
}

/* Tells capture control that a range begins (it may open the window), then whether to record it. */
static int begin_watched(uint32_t domain, struct message *m, int32_t level, uint64_t id, int record)
{
	if (!pw_capture_watch_ranges)
		return record;
	const char *t = m->text ? m->text : registered_text(m->ref);
	if (t)
		pw_capture_range_begin(domain, domain_name(domain), t, m->text ? m->len : strlen(t), level, id);
	record = ((pw_recording_now() & pw_window_now()) >> PW_DOM_NVTX) & 1; /* the guard is ours here */
	if (record && !m->ref && m->text)
		m->ref = intern_text(m->text, m->len, 1);
	return record;
}

static int push(uint32_t domain, const nvtxEventAttributes_t *a, const char *ascii, const wchar_t *wide)
{
	int32_t *lv = level_of(domain);
	int32_t level = (*lv)++;
	PW_NVTX_BEGIN();
	if (guard_.guard == 0) {
		struct message m;
		message_from(a, ascii, wide, record_, &m);
		if (begin_watched(domain, &m, level, 0, record_)) {
			pw_guard_set(PW_GUARD_RECORDING);
			emit_range(PW_EV_NVTX_PUSH, domain, a, m.ref, level);
		}
	}
	PW_NVTX_END();
	return level;
}

static int pop(uint32_t domain)
{
	int32_t *lv = level_of(domain);
	int32_t level = *lv > 0 ? --*lv : -1;
	PW_NVTX_BEGIN();
	if (guard_.guard == 0) {
		if (record_) {
			pw_guard_set(PW_GUARD_RECORDING);
			emit_range(PW_EV_NVTX_POP, domain, NULL, 0, level);
			pw_guard_set(PW_GUARD_INTERNAL);
		}
		if (pw_capture_watch_ranges && level >= 0)
			pw_capture_range_end(domain, level, 0);
	}
	PW_NVTX_END();
	return level;
}

static nvtxRangeId_t start(uint32_t domain, const nvtxEventAttributes_t *a, const char *ascii, const wchar_t *wide)
{
	uint64_t id = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed);
	PW_NVTX_BEGIN();
	if (guard_.guard == 0) {
		struct message m;
		message_from(a, ascii, wide, record_, &m);
		if (begin_watched(domain, &m, 0, id, record_)) {
			pw_guard_set(PW_GUARD_RECORDING);
			emit_range(PW_EV_NVTX_START, domain, a, m.ref, (int64_t)id);
		}
	}
	PW_NVTX_END();
	return id;
}

static void end(uint32_t domain, nvtxRangeId_t id)
{
	PW_NVTX_BEGIN();
	if (guard_.guard == 0) {
		if (record_) {
			pw_guard_set(PW_GUARD_RECORDING);
			emit_range(PW_EV_NVTX_END, domain, NULL, 0, (int64_t)id);
			pw_guard_set(PW_GUARD_INTERNAL);
		}
		if (pw_capture_watch_ranges)
			pw_capture_range_end(domain, 0, id);
	}
	PW_NVTX_END();
}

static void mark(uint32_t domain, const nvtxEventAttributes_t *a, const char *ascii, const wchar_t *wide)
{
	PW_NVTX_BEGIN();
	if (record_) {
		struct message m;
		message_from(a, ascii, wide, 1, &m);
		pw_guard_set(PW_GUARD_RECORDING);
		emit_range(PW_EV_NVTX_MARK, domain, a, m.ref, 0);
	}
	PW_NVTX_END();
}

static void name(uint16_t ev, uint64_t what, const char *ascii, const wchar_t *wide)
{
	PW_NVTX_BEGIN();
	if (record_) {
		pw_strref ref = ascii ? intern_text(ascii, strlen(ascii), 0) : intern_wide(wide);
		pw_guard_set(PW_GUARD_RECORDING);
		uint64_t now = pw_clock_ticks();
		pw_emit_call(ev, now, now, 0, what, ref, 0);
	}
	PW_NVTX_END();
}

/* ---- the callbacks, as NVTX's tables type them ---- */

static void NVTX_API cb_mark_ex(const nvtxEventAttributes_t *a) { mark(0, a, NULL, NULL); }
static void NVTX_API cb_mark_a(const char *s) { mark(0, NULL, s, NULL); }
static void NVTX_API cb_mark_w(const wchar_t *s) { mark(0, NULL, NULL, s); }
static nvtxRangeId_t NVTX_API cb_start_ex(const nvtxEventAttributes_t *a) { return start(0, a, NULL, NULL); }
static nvtxRangeId_t NVTX_API cb_start_a(const char *s) { return start(0, NULL, s, NULL); }
static nvtxRangeId_t NVTX_API cb_start_w(const wchar_t *s) { return start(0, NULL, NULL, s); }
static void NVTX_API cb_end(nvtxRangeId_t id) { end(0, id); }
static int NVTX_API cb_push_ex(const nvtxEventAttributes_t *a) { return push(0, a, NULL, NULL); }
static int NVTX_API cb_push_a(const char *s) { return push(0, NULL, s, NULL); }
static int NVTX_API cb_push_w(const wchar_t *s) { return push(0, NULL, NULL, s); }
static int NVTX_API cb_pop(void) { return pop(0); }
static void NVTX_API cb_name_category_a(uint32_t c, const char *s)
{
	name(PW_EV_NVTX_NAME_CATEGORY, pw_put_nvtx_scope((struct pw_nvtx_scope){.category = c}), s, NULL);
}
static void NVTX_API cb_name_category_w(uint32_t c, const wchar_t *s)
{
	name(PW_EV_NVTX_NAME_CATEGORY, pw_put_nvtx_scope((struct pw_nvtx_scope){.category = c}), NULL, s);
}
static void NVTX_API cb_name_thread_a(uint32_t tid, const char *s) { name(PW_EV_NVTX_NAME_THREAD, tid, s, NULL); }
static void NVTX_API cb_name_thread_w(uint32_t tid, const wchar_t *s) { name(PW_EV_NVTX_NAME_THREAD, tid, NULL, s); }

static void NVTX_API cb_domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	mark(domain_id(d), a, NULL, NULL);
}
static nvtxRangeId_t NVTX_API cb_domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return start(domain_id(d), a, NULL, NULL);
}
static void NVTX_API cb_domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id) { end(domain_id(d), id); }
static int NVTX_API cb_domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return push(domain_id(d), a, NULL, NULL);
}
static int NVTX_API cb_domain_pop(nvtxDomainHandle_t d) { return pop(domain_id(d)); }
static void NVTX_API cb_domain_name_category_a(nvtxDomainHandle_t d, uint32_t c, const char *s)
{
	name(PW_EV_NVTX_NAME_CATEGORY, pw_put_nvtx_scope((struct pw_nvtx_scope){(uint32_t)domain_id(d), c}), s, NULL);
}
static void NVTX_API cb_domain_name_category_w(nvtxDomainHandle_t d, uint32_t c, const wchar_t *s)
{
	name(PW_EV_NVTX_NAME_CATEGORY, pw_put_nvtx_scope((struct pw_nvtx_scope){(uint32_t)domain_id(d), c}), NULL, s);
}

static nvtxStringHandle_t register_string(const char *s, size_t len)
{
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	pw_strref ref = pw_recording_now() ? intern_text(s, len, 0) : 0;
	if (ref && !registered_text(ref)) {
		uint32_t i = atomic_fetch_add_explicit(&nregistered, 1, memory_order_acq_rel);
		if (i < PW_NVTX_REGISTERED) {
			size_t n = len < PW_CAPTURE_NAME_MAX - 1 ? len : PW_CAPTURE_NAME_MAX - 1;
			memcpy(registered[i].text, s, n);
			registered[i].text[n] = 0;
			atomic_store_explicit(&registered[i].ref, ref, memory_order_release);
		}
	}
	pw_guard_leave(guard);
	/* NVTX takes a NULL handle for a failure: a handle must exist even when nothing is recorded */
	return (nvtxStringHandle_t)(uintptr_t)(ref ? ref : (pw_strref)-1);
}

static nvtxStringHandle_t NVTX_API cb_register_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return s ? register_string(s, strlen(s)) : NULL;
}
static nvtxStringHandle_t NVTX_API cb_register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	(void)d;
	char buf[PW_NVTX_TEXT_MAX];
	return s ? register_string(buf, to_utf8(s, buf, sizeof buf)) : NULL;
}

/* Domains: the same name gives the same handle, in every NVTX instance of the process. */
static nvtxDomainHandle_t create_domain(const char *s, size_t len)
{
	static atomic_flag lock = ATOMIC_FLAG_INIT;
	uint32_t id = 0;
	size_t n = len < sizeof domain_names[0] - 1 ? len : sizeof domain_names[0] - 1;
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		;
	uint32_t count = atomic_load_explicit(&next_domain, memory_order_relaxed);
	for (uint32_t i = 1; i < count && i < PW_NVTX_DOMAINS; i++)
		if (strlen(domain_names[i]) == n && memcmp(domain_names[i], s, n) == 0)
			id = i;
	if (!id) {
		id = atomic_fetch_add_explicit(&next_domain, 1, memory_order_relaxed);
		if (id < PW_NVTX_DOMAINS) {
			memcpy(domain_names[id], s, n);
			domain_names[id][n] = 0;
		}
	}
	atomic_flag_clear_explicit(&lock, memory_order_release);
	PW_NVTX_BEGIN();
	if (record_) {
		pw_strref ref = intern_text(s, len, 0);
		pw_guard_set(PW_GUARD_RECORDING);
		uint64_t now = pw_clock_ticks();
		pw_emit_call(PW_EV_NVTX_NAME_DOMAIN, now, now, 0, id, ref, 0);
	}
	PW_NVTX_END();
	return (nvtxDomainHandle_t)(uintptr_t)id;
}

/* The domain of the Python function ranges (py_ranges.c), named again in each process that records in it (a
 * fork child writes a raw trace of its own, and its segment may lie where its parent's did). */
static uint32_t py_domain(void)
{
	static uint32_t id;
	static int32_t named_by;
	int32_t pid = pw_seg ? pw_seg->pid : 0;
	if (named_by != pid || !id) {
		id = (uint32_t)(uintptr_t)create_domain("py", 2);
		named_by = pid;
	}
	return id;
}

void pw_nvtx_py_push(const char *name)
{
	push(py_domain(), NULL, name, NULL);
}

void pw_nvtx_py_pop(void)
{
	pop(py_domain());
}

static nvtxDomainHandle_t NVTX_API cb_domain_create_a(const char *s)
{
	return create_domain(s ? s : "", s ? strlen(s) : 0);
}
static nvtxDomainHandle_t NVTX_API cb_domain_create_w(const wchar_t *s)
{
	char buf[PW_NVTX_TEXT_MAX];
	return create_domain(buf, to_utf8(s, buf, sizeof buf));
}
static void NVTX_API cb_domain_destroy(nvtxDomainHandle_t d) { (void)d; }
static void NVTX_API cb_initialize(const void *reserved) { (void)reserved; }

static void NVTX_API cb_name_cu_device_a(CUdevice d, const char *s) { name(PW_EV_NVTX_NAME_DEVICE, (uint64_t)d, s, NULL); }
static void NVTX_API cb_name_cu_device_w(CUdevice d, const wchar_t *s) { name(PW_EV_NVTX_NAME_DEVICE, (uint64_t)d, NULL, s); }
static void NVTX_API cb_name_cu_context_a(CUcontext c, const char *s)
{
	name(PW_EV_NVTX_NAME_CONTEXT, (uint64_t)(uintptr_t)c, s, NULL);
}
static void NVTX_API cb_name_cu_context_w(CUcontext c, const wchar_t *s)
{
	name(PW_EV_NVTX_NAME_CONTEXT, (uint64_t)(uintptr_t)c, NULL, s);
}
static void NVTX_API cb_name_cu_stream_a(CUstream st, const char *s)
{
	name(PW_EV_NVTX_NAME_STREAM, (uint64_t)(uintptr_t)st, s, NULL);
}
static void NVTX_API cb_name_cu_stream_w(CUstream st, const wchar_t *s)
{
	name(PW_EV_NVTX_NAME_STREAM, (uint64_t)(uintptr_t)st, NULL, s);
}
static void NVTX_API cb_name_cu_event_a(CUevent e, const char *s)
{
	name(PW_EV_NVTX_NAME_EVENT, (uint64_t)(uintptr_t)e, s, NULL);
}
static void NVTX_API cb_name_cu_event_w(CUevent e, const wchar_t *s)
{
	name(PW_EV_NVTX_NAME_EVENT, (uint64_t)(uintptr_t)e, NULL, s);
}
static void NVTX_API cb_name_cuda_device_a(int d, const char *s) { name(PW_EV_NVTX_NAME_DEVICE, (uint64_t)d, s, NULL); }
static void NVTX_API cb_name_cuda_device_w(int d, const wchar_t *s) { name(PW_EV_NVTX_NAME_DEVICE, (uint64_t)d, NULL, s); }
static void NVTX_API cb_name_cuda_stream_a(cudaStream_t st, const char *s)
{
	name(PW_EV_NVTX_NAME_STREAM, (uint64_t)(uintptr_t)st, s, NULL);
}
static void NVTX_API cb_name_cuda_stream_w(cudaStream_t st, const wchar_t *s)
{
	name(PW_EV_NVTX_NAME_STREAM, (uint64_t)(uintptr_t)st, NULL, s);
}
static void NVTX_API cb_name_cuda_event_a(cudaEvent_t e, const char *s)
{
	name(PW_EV_NVTX_NAME_EVENT, (uint64_t)(uintptr_t)e, s, NULL);
}
static void NVTX_API cb_name_cuda_event_w(cudaEvent_t e, const wchar_t *s)
{
	name(PW_EV_NVTX_NAME_EVENT, (uint64_t)(uintptr_t)e, NULL, s);
}

struct slot {
	unsigned id;
	NvtxFunctionPointer fn;
};
#define SLOT(id, fn) {id, (NvtxFunctionPointer)(fn)}

static const struct slot core_slots[] = {
	SLOT(NVTX_CBID_CORE_MarkEx, cb_mark_ex),
	SLOT(NVTX_CBID_CORE_MarkA, cb_mark_a),
	SLOT(NVTX_CBID_CORE_MarkW, cb_mark_w),
	SLOT(NVTX_CBID_CORE_RangeStartEx, cb_start_ex),
	SLOT(NVTX_CBID_CORE_RangeStartA, cb_start_a),
	SLOT(NVTX_CBID_CORE_RangeStartW, cb_start_w),
	SLOT(NVTX_CBID_CORE_RangeEnd, cb_end),
	SLOT(NVTX_CBID_CORE_RangePushEx, cb_push_ex),
	SLOT(NVTX_CBID_CORE_RangePushA, cb_push_a),
	SLOT(NVTX_CBID_CORE_RangePushW, cb_push_w),
	SLOT(NVTX_CBID_CORE_RangePop, cb_pop),
	SLOT(NVTX_CBID_CORE_NameCategoryA, cb_name_category_a),
	SLOT(NVTX_CBID_CORE_NameCategoryW, cb_name_category_w),
	SLOT(NVTX_CBID_CORE_NameOsThreadA, cb_name_thread_a),
	SLOT(NVTX_CBID_CORE_NameOsThreadW, cb_name_thread_w),
};
static const struct slot core2_slots[] = {
	SLOT(NVTX_CBID_CORE2_DomainMarkEx, cb_domain_mark_ex),
	SLOT(NVTX_CBID_CORE2_DomainRangeStartEx, cb_domain_start_ex),
	SLOT(NVTX_CBID_CORE2_DomainRangeEnd, cb_domain_end),
	SLOT(NVTX_CBID_CORE2_DomainRangePushEx, cb_domain_push_ex),
	SLOT(NVTX_CBID_CORE2_DomainRangePop, cb_domain_pop),
	SLOT(NVTX_CBID_CORE2_DomainNameCategoryA, cb_domain_name_category_a),
	SLOT(NVTX_CBID_CORE2_DomainNameCategoryW, cb_domain_name_category_w),
	SLOT(NVTX_CBID_CORE2_DomainRegisterStringA, cb_register_a),
	SLOT(NVTX_CBID_CORE2_DomainRegisterStringW, cb_register_w),
	SLOT(NVTX_CBID_CORE2_DomainCreateA, cb_domain_create_a),
	SLOT(NVTX_CBID_CORE2_DomainCreateW, cb_domain_create_w),
	SLOT(NVTX_CBID_CORE2_DomainDestroy, cb_domain_destroy),
	SLOT(NVTX_CBID_CORE2_Initialize, cb_initialize),
};
static const struct slot cuda_slots[] = {
	SLOT(NVTX_CBID_CUDA_NameCuDeviceA, cb_name_cu_device_a),
	SLOT(NVTX_CBID_CUDA_NameCuDeviceW, cb_name_cu_device_w),
	SLOT(NVTX_CBID_CUDA_NameCuContextA, cb_name_cu_context_a),
	SLOT(NVTX_CBID_CUDA_NameCuContextW, cb_name_cu_context_w),
	SLOT(NVTX_CBID_CUDA_NameCuStreamA, cb_name_cu_stream_a),
	SLOT(NVTX_CBID_CUDA_NameCuStreamW, cb_name_cu_stream_w),
	SLOT(NVTX_CBID_CUDA_NameCuEventA, cb_name_cu_event_a),
	SLOT(NVTX_CBID_CUDA_NameCuEventW, cb_name_cu_event_w),
};
static const struct slot cudart_slots[] = {
	SLOT(NVTX_CBID_CUDART_NameCudaDeviceA, cb_name_cuda_device_a),
	SLOT(NVTX_CBID_CUDART_NameCudaDeviceW, cb_name_cuda_device_w),
	SLOT(NVTX_CBID_CUDART_NameCudaStreamA, cb_name_cuda_stream_a),
	SLOT(NVTX_CBID_CUDART_NameCudaStreamW, cb_name_cuda_stream_w),
	SLOT(NVTX_CBID_CUDART_NameCudaEventA, cb_name_cuda_event_a),
	SLOT(NVTX_CBID_CUDART_NameCudaEventW, cb_name_cuda_event_w),
};

static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, const struct slot *slots, size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;
	if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (slots[i].id <= size && table[slots[i].id])
			*table[slots[i].id] = slots[i].fn;
	return 1;
}

/* NVTX's entry point for a tool (nvtxDetail/nvtxInit.h). Returns 1 when attached: NVTX then calls the
 * callbacks; 0 leaves every NVTX call a no-op. A process that does not record still attaches, so that
 * its NVTX calls return the documented values and capture control sees its ranges. */
PW_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	if (!get_export_table)
		return 0;
	const NvtxExportTableCallbacks *cb = get_export_table(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
		return 0;
	const NvtxExportTableVersionInfo *vi = get_export_table(NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
	if (!fill(cb, NVTX_CB_MODULE_CORE, core_slots, sizeof core_slots / sizeof core_slots[0]) ||
	    !fill(cb, NVTX_CB_MODULE_CORE2, core2_slots, sizeof core2_slots / sizeof core2_slots[0]))
		return 0;
	fill(cb, NVTX_CB_MODULE_CUDA, cuda_slots, sizeof cuda_slots / sizeof cuda_slots[0]);
	fill(cb, NVTX_CB_MODULE_CUDART, cudart_slots, sizeof cudart_slots / sizeof cudart_slots[0]);
	return 1;
}
