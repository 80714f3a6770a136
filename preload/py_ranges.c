/* Python functions as ranges (--python-functions, common/pw_pyfuncs.h): each call of a matched function is a
 * push/pop range in the NVTX domain "py", so the Phases table, the trace, capture control and the straggler's
 * phase treat it as an NVTX range. python.c passes every call and return of Python code here, on the thread
 * holding the GIL: from the frame evaluation function (3.9 to 3.11), sys.monitoring (3.12+) or, where neither
 * serves, the profile hook.
 *
 * A call costs the hook a lookup of its code object in a table: a code object is matched against the patterns
 * once (its module from the frame's globals, its qualified name) and the answer kept, with a reference to the
 * code so that its address is never another code's. A return costs one compare: the frame of the innermost
 * range open on the thread. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/pw_pyfuncs.h"
#include "../common/pw_session.h"
#include "pw_preload.h"

int pw_pyfn_on;
int pw_pyfn_waiting;
static struct pw_pyfn_set patterns;
static int pytorch_mode;   /* enum pw_pytorch_mode */
static int pytorch_on;     /* PyTorch's NVTX emission was turned on (or tried): TORCH_READY matches no more */

/* Code objects met, with the pattern they match (NO_MATCH for most) and the range name of a match. Past half
 * full, new code objects are matched each time they are called rather than kept. */
#define CODE_SLOTS 65536u
#define NO_MATCH (-1)
static struct {
	void *code;
	int pattern;
	char *name;
} codes[CODE_SLOTS];
static uint32_t ncodes;

void pw_pyfn_config(void)
{
	const char *spec = getenv(PW_ENV_PYTHON_FUNCTIONS), *torch = getenv(PW_ENV_PYTORCH);
	char why[300];
	if (spec && *spec && pw_pyfn_parse(spec, &patterns, why, sizeof why) < 0) {
		if (!pw_cfg.quiet)
			dprintf(2, "profwrap: %s=%s; no Python function is recorded\n", PW_ENV_PYTHON_FUNCTIONS, why);
		patterns.n = 0;
	}
	if (torch && *torch) {
		pytorch_mode = pw_pytorch_parse(torch, why, sizeof why);
		if (pytorch_mode < 0 || pw_pytorch_patterns(&patterns, why, sizeof why) < 0) {
			if (!pw_cfg.quiet)
				dprintf(2, "profwrap: %s=%s; PyTorch's NVTX ranges are not turned on\n", PW_ENV_PYTORCH, why);
			pytorch_mode = PW_PYTORCH_OFF;
		}
	}
	pw_pyfn_on = pw_pyfn_waiting = patterns.n > 0;
}

/* An interpreter loaded with dlopen (embedded Python) exports its C API from libpython. */
void pw_pyfn_after_dlopen(void *handle, const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	if (base && strncmp(base, "libpython", 9) == 0)
		pw_py_detect(handle);
	pw_pyfn_try_install();
	pw_guard_leave(guard);
}

static uint32_t code_slot(const void *code)
{
	uint64_t h = (uint64_t)(uintptr_t)code * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 48) & (CODE_SLOTS - 1);
}

/* Before 3.11 a code object has its name, not its qualified name: the patterns' last components are compared. */
static int match_name(const char *module, const char *qualname)
{
	static struct pw_pyfn_set last;
	const struct pw_pyfn_set *set = &patterns;
	if (!pw_py_has_qualname()) {
		if (!last.n) {
			last = patterns;
			for (size_t i = 0; i < last.n; i++) {
				const char *dot = strrchr(patterns.p[i].qualname, '.');
				if (dot)
					memmove(last.p[i].qualname, dot + 1, strlen(dot + 1) + 1);
			}
		}
		set = &last;
	}
	/* the TORCH_READY patterns come first (pw_pytorch_patterns); once they served, the rest are matched */
	size_t from = 0;
	while (pytorch_on && from < set->n && set->p[from].how == PW_PYFN_TORCH_READY)
		from++;
	return pw_pyfn_match(set, from, module, qualname);
}

/* The pattern the function running in frame (whose code is code) matches, or NO_MATCH; name gets the range's
 * name when it matches: the qualified name, with the module for a module-level function. */
static int match(void *frame, void *code, char *name, size_t max)
{
	char module[PW_PYFN_MODULE_MAX], qualname[PW_PYFN_QUALNAME_MAX];
	pw_py_code_qualname(code, qualname, sizeof qualname);
	pw_py_frame_module(frame, module, sizeof module);
	int i = qualname[0] && module[0] ? match_name(module, qualname) : NO_MATCH;
	if (i == NO_MATCH)
		return i;
	char owner[PW_PYFN_QUALNAME_MAX] = "";
	if (!pw_py_has_qualname()) /* a method's class, as its self says */
		pw_py_frame_local(frame, "self", 1, owner, sizeof owner);
	const char *prefix = strchr(qualname, '.') ? "" : owner[0] ? owner : module;
	snprintf(name, max, "%s%s%s", prefix, *prefix ? "." : "", qualname);
	return i;
}

#define NOT_KEPT (-2)

/* The pattern code matches (NO_MATCH for most) and *name the range's name, from the table; NOT_KEPT when code
 * is not in it, *at then the slot to keep it in (UINT32_MAX: none free near). */
static int kept(const void *code, const char **name, uint32_t *at)
{
	uint32_t i = code_slot(code);
	for (uint32_t probe = 0; probe < 16; probe++, i = (i + 1) & (CODE_SLOTS - 1)) {
		if (codes[i].code == code) {
			*name = codes[i].name;
			return codes[i].pattern;
		}
		if (!codes[i].code) {
			*at = i;
			return NOT_KEPT;
		}
	}
	*at = UINT32_MAX;
	return NOT_KEPT;
}

/* Matches code and keeps the answer in slot at when it can. */
static int match_and_keep(void *frame, void *code, uint32_t at, const char **name, char *buf, size_t max)
{
	int pattern = match(frame, code, buf, max);
	*name = buf;
	if (at == UINT32_MAX || ncodes >= CODE_SLOTS / 2)
		return pattern;
	char *copy = pattern == NO_MATCH ? NULL : strdup(buf);
	if (pattern != NO_MATCH && !copy)
		return pattern;
	pw_py_keep(code);
	codes[at].code = code;
	codes[at].pattern = pattern;
	codes[at].name = copy;
	ncodes++;
	return pattern;
}

/* Matches code again (after PyTorch's NVTX emission was turned on) and keeps the new answer in its slot. */
static int rematch(void *frame, void *code, const char **name, char *buf, size_t max)
{
	int pattern = match(frame, code, buf, max);
	*name = buf;
	uint32_t i = code_slot(code);
	for (uint32_t probe = 0; probe < 16; probe++, i = (i + 1) & (CODE_SLOTS - 1))
		if (codes[i].code == code) {
			char *copy = pattern == NO_MATCH ? NULL : strdup(buf);
			free(codes[i].name);
			codes[i].pattern = pattern != NO_MATCH && !copy ? NO_MATCH : pattern;
			codes[i].name = copy;
			if (copy)
				*name = copy;
			break;
		}
	return pattern;
}

int pw_pyfn_code_matches(void *frame, void *code, int *first)
{
	const char *name;
	uint32_t at = UINT32_MAX;
	int pattern = kept(code, &name, &at);
	if (pattern == NOT_KEPT) {
		char buf[PW_PYFN_QUALNAME_MAX + PW_PYFN_MODULE_MAX];
		void *error[3];
		pw_py_error_save(error);
		pattern = match_and_keep(frame, code, at, &name, buf, sizeof buf);
		pw_py_error_restore(error);
		*first = pattern != NO_MATCH;
	}
	return pattern != NO_MATCH;
}

/* The frames of the ranges open on this thread, pw_self.pyfn_depth of them: grown as calls nest deeper, so
 * that a call is a range at any depth; kept across fork (the child's depth starts at 0) and freed at the
 * thread's end (pw_pyfn_thread_end). */
static __thread struct {
	void **frames;
	uint32_t cap;
} open_frames;

/* Room for one more open range. Returns 0, or -1 when there is no memory for it. */
static int room_for_one(uint32_t depth)
{
	if (PW_LIKELY(depth < open_frames.cap))
		return 0;
	uint32_t cap = open_frames.cap ? open_frames.cap * 2 : PW_PYFN_DEPTH;
	void **frames = cap > open_frames.cap ? realloc(open_frames.frames, cap * sizeof *frames) : NULL;
	if (!frames)
		return -1;
	if (!open_frames.frames)
		pw_thread_at_end();
	open_frames.frames = frames;
	open_frames.cap = cap;
	return 0;
}

/* A range that cannot be kept: its push and pop are counted as dropped records, as a full lane's are. */
static void refuse(struct pw_thread *t)
{
	if (pw_should_record(PW_DOM_NVTX)) {
		struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
		pw_count_dropped(t, 2);
		pw_guard_leave(guard);
	}
}

static void push(struct pw_thread *t, void *frame, const char *name)
{
	if (PW_UNLIKELY(room_for_one(t->pyfn_depth) < 0)) {
		refuse(t);
		return;
	}
	open_frames.frames[t->pyfn_depth++] = frame;
	pw_nvtx_py_push(name);
}

void pw_pyfn_thread_end(void)
{
	free(open_frames.frames);
	open_frames.frames = NULL;
	open_frames.cap = 0;
}

/* A profiler's start(action_name): a range, unless the innermost action is the same one (a profiler handing
 * the call to the profilers it holds). Stops are matched in the same way. */
static void action_start(struct pw_thread *t, const char *name)
{
	uint32_t h = (uint32_t)pw_hash64(name, strlen(name));
	uint8_t n = t->pyfn_actions;
	if (t->pyfn_actions_over) {
		t->pyfn_actions_over++;
		refuse(t);
		return;
	}
	if (n && t->pyfn_action_hash[n - 1] == h) {
		if (t->pyfn_action_again[n - 1] < UINT8_MAX)
			t->pyfn_action_again[n - 1]++;
		return;
	}
	if (n >= PW_PYFN_ACTIONS) { /* its stop is matched by the count alone */
		t->pyfn_actions_over++;
		refuse(t);
		return;
	}
	t->pyfn_action_hash[n] = h;
	t->pyfn_action_again[n] = 0;
	t->pyfn_actions = n + 1;
	pw_nvtx_py_push(name);
}

static void action_stop(struct pw_thread *t)
{
	uint8_t n = t->pyfn_actions;
	if (t->pyfn_actions_over) {
		t->pyfn_actions_over--;
		return;
	}
	if (!n)
		return;
	if (t->pyfn_action_again[n - 1]) {
		t->pyfn_action_again[n - 1]--;
		return;
	}
	t->pyfn_actions = n - 1;
	pw_nvtx_py_pop();
}

int pw_pyfn_call(struct pw_thread *t, void *frame, void *code)
{
	const char *matched = NULL;
	uint32_t at = UINT32_MAX;
	int pattern = kept(code, &matched, &at);
	if (PW_LIKELY(pattern == NO_MATCH))
		return 0;
	char name[PW_PYFN_QUALNAME_MAX + PW_PYFN_MODULE_MAX];
	uint32_t depth = t->pyfn_depth;
	void *error[3]; /* the program's exception, if one is being raised, is not ours to clear */
	pw_py_error_save(error);
	if (pw_py_frame_makes_generator(frame, code)) {
		pw_py_error_restore(error);
		return 0;
	}
	if (pattern == NOT_KEPT)
		pattern = match_and_keep(frame, code, at, &matched, name, sizeof name);
	if (pattern != NO_MATCH && patterns.p[pattern].how == PW_PYFN_TORCH_READY) {
		if (!pytorch_on) {
			pytorch_on = 1;
			pw_py_pytorch_nvtx(pytorch_mode == PW_PYTORCH_AUTOGRAD_SHAPES_NVTX);
		}
		pattern = rematch(frame, code, &matched, name, sizeof name);
	}
	switch (pattern == NO_MATCH ? -1 : (int)patterns.p[pattern].how) {
	case PW_PYFN_CALL:
		push(t, frame, matched);
		break;
	case PW_PYFN_ACTION_START:
		if (pw_py_frame_local(frame, "action_name", 0, name, sizeof name))
			action_start(t, name);
		break;
	case PW_PYFN_ACTION_STOP:
		action_stop(t);
		break;
	case PW_PYFN_MODULE_CALL:
		if (t->pyfn_module_frame)
			break;
		size_t n = pw_py_frame_local(frame, "self", 1, name, sizeof name - 16);
		snprintf(name + n, sizeof name - n, "%s", n ? ".forward" : "Module.forward");
		push(t, frame, name);
		if (t->pyfn_depth > depth)
			t->pyfn_module_frame = frame;
		break;
	default:
		break;
	}
	pw_py_error_restore(error);
	return t->pyfn_depth > depth;
}

void pw_pyfn_return(struct pw_thread *t, void *frame)
{
	if (!t->pyfn_depth || open_frames.frames[t->pyfn_depth - 1] != frame)
		return;
	t->pyfn_depth--;
	if (frame == t->pyfn_module_frame)
		t->pyfn_module_frame = NULL;
	pw_nvtx_py_pop();
}
