/* Python frames for call stacks: file, function and line of each frame, read through the interpreter's
 * public C API, only on the calling thread and only while it holds the GIL.
 *
 * Most calls worth a stack are made with the GIL released (time.sleep, file reads, PyTorch's bindings
 * release it around every operator), and the thread's Python frames cannot change until it takes the GIL
 * back. So a call made without the GIL marks its stack PW_STACK_PY_PENDING, and a profile hook
 * (PyEval_SetProfile) on the thread writes the frames when it sees, holding the GIL, the C_RETURN of the
 * builtin that made the call, in the frame that called it (see profile_hook). The hook is installed on the
 * interpreter's threads from the main thread (Py_AddPendingCall), only on threads that have no profile
 * function of their own (cProfile, coverage), and only once a stack has needed it.
 *
 * The interpreter is found by name at run time (the python executable exports its C API; a libpython may
 * come later through dlopen): nothing is linked, and a process without Python pays nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pw_preload.h"

/* What the profile hook is told (Include/cpython/pystate.h: PyTrace_*). */
#define PY_TRACE_CALL 0
#define PY_TRACE_RETURN 3
#define PY_TRACE_C_CALL 4
#define PY_TRACE_C_EXCEPTION 5
#define PY_TRACE_C_RETURN 6

typedef int (*py_tracefunc)(void *obj, void *frame, int what, void *arg);

static struct {
	int (*IsInitialized)(void);
	int (*IsFinalizing)(void); /* Py_IsFinalizing (3.13) or _Py_IsFinalizing; may be missing */
	void *(*GILState_GetThisThreadState)(void);
	void *(*ThreadState_GetUnchecked)(void); /* the thread state holding the GIL on this thread, or NULL */
	void *(*Eval_GetFrame)(void);            /* borrowed */
	void *(*Frame_GetBack)(void *);          /* new reference */
	void *(*Frame_GetCode)(void *);          /* new reference */
	int (*Frame_GetLineNumber)(void *);
	void *(*Object_GetAttrString)(void *, const char *);
	const char *(*Unicode_AsUTF8AndSize)(void *, ssize_t *);
	void *(*Unicode_AsEncodedString)(void *, const char *, const char *);
	int (*Bytes_AsStringAndSize)(void *, char **, ssize_t *);
	void (*IncRef)(void *);
	void (*DecRef)(void *);
	void (*Err_Fetch)(void **, void **, void **);
	void (*Err_Restore)(void *, void *, void *);
	void (*Err_Clear)(void);
	int (*AddPendingCall)(int (*)(void *), void *);
	void *(*ThreadState_Get)(void);
	void *(*ThreadState_GetInterpreter)(void *);
	void *(*InterpreterState_ThreadHead)(void *);
	void *(*ThreadState_Next)(void *);
	void (*Eval_SetProfile)(py_tracefunc, void *);
	int (*Eval_SetProfileOf)(void *, py_tracefunc, void *); /* _PyEval_SetProfile(tstate, ...), may be missing */
	void (*Eval_SetProfileAllThreads)(py_tracefunc, void *); /* 3.12+, may be missing */
	int (*GC_Disable)(void);                                  /* 3.10+, may be missing */
	int (*GC_Enable)(void);
	void *(*Sys_GetObject)(const char *); /* borrowed */
	void *(*Object_CallNoArgs)(void *);
	void *(*CFunction_NewEx)(void *, void *, void *);
	void *(*Import_GetModule)(void *);
	void *(*Unicode_FromString)(const char *);
	int (*Object_SetAttrString)(void *, const char *, void *);
	void *(*Mapping_GetItemString)(void *, const char *); /* new reference */
	void *(*Object_CallMethod)(void *, const char *, const char *, ...);
	void *(*Object_CallFunction)(void *, const char *, ...);
	long (*Long_AsLong)(void *);
	void *None;
	const char *(*GetVersion)(void);
	int (*Code_Addr2Line)(void *, int); /* may be missing */
	void *CodeType;                     /* &PyCode_Type */
	void *UnicodeType;                  /* &PyUnicode_Type */
	void *(*InterpreterState_Get)(void);
	ssize_t (*Tuple_Size)(void *);
	void *(*Tuple_GetItem)(void *, ssize_t); /* borrowed */
	void *(*GetEvalFrameFunc)(void *);     /* _PyInterpreterState_GetEvalFrameFunc (3.9+), may be missing */
	void (*SetEvalFrameFunc)(void *, void *);
	void *EvalFrameDefault;                /* _PyEval_EvalFrameDefault */
} py;
static _Atomic int py_ready;
static int py_no_qualname; /* before 3.11 code objects have no co_qualname */
static _Atomic int install_requested;

/* --python-functions in an interpreter it cannot serve: said once, in one line. cpython: the interpreter has
 * Py_IsInitialized but not the rest (before 3.9); otherwise PyPy, whose C API names start with PyPy. */
static void unsupported(void *handle, int cpython)
{
	static int said;
	if (!pw_pyfn_on || said || pw_cfg.quiet)
		return;
	const char *(*version)(void) = NULL;
	void *f = cpython ? dlsym(handle, "Py_GetVersion") : dlsym(handle, "PyPy_IsInitialized");
	if (!f) {
		dlerror();
		if (!cpython)
			return;
	}
	memcpy(&version, &f, sizeof f);
	char name[32] = "PyPy";
	if (cpython)
		snprintf(name, sizeof name, "CPython %.*s", version ? (int)strcspn(version(), " ") : 0, version ? version() : "");
	said = 1;
	dprintf(2, "profwrap: --python-functions: %s is not supported (CPython 3.9 to 3.13 are); no Python function "
		"is recorded in pid %d\n", name, getpid());
}

void pw_py_detect(void *handle)
{
	if (atomic_load(&py_ready) || (pw_cfg.stacks != PW_STACKS_ALL && !pw_pyfn_on))
		return;
	/* required: without one, not the interpreter (Py_IsInitialized, looked up first, settles that for most
	 * objects) or older than 3.9 (no PyFrame_GetBack...); the others may be missing in some version */
	static const struct {
		void *slot;
		const char *name, *alt;
		int required;
	} want[] = {
		{&py.IsInitialized, "Py_IsInitialized", NULL, 1},
		{&py.GILState_GetThisThreadState, "PyGILState_GetThisThreadState", NULL, 1},
		{&py.ThreadState_GetUnchecked, "PyThreadState_GetUnchecked", "_PyThreadState_UncheckedGet", 1},
		{&py.Eval_GetFrame, "PyEval_GetFrame", NULL, 1},
		{&py.Frame_GetBack, "PyFrame_GetBack", NULL, 1},
		{&py.Frame_GetCode, "PyFrame_GetCode", NULL, 1},
		{&py.Frame_GetLineNumber, "PyFrame_GetLineNumber", NULL, 1},
		{&py.Object_GetAttrString, "PyObject_GetAttrString", NULL, 1},
		{&py.Unicode_AsUTF8AndSize, "PyUnicode_AsUTF8AndSize", NULL, 1},
		{&py.Unicode_AsEncodedString, "PyUnicode_AsEncodedString", NULL, 1},
		{&py.Bytes_AsStringAndSize, "PyBytes_AsStringAndSize", NULL, 1},
		{&py.IncRef, "Py_IncRef", NULL, 1},
		{&py.DecRef, "Py_DecRef", NULL, 1},
		{&py.Err_Fetch, "PyErr_Fetch", NULL, 1},
		{&py.Err_Restore, "PyErr_Restore", NULL, 1},
		{&py.Err_Clear, "PyErr_Clear", NULL, 1},
		{&py.AddPendingCall, "Py_AddPendingCall", NULL, 1},
		{&py.ThreadState_Get, "PyThreadState_Get", NULL, 1},
		{&py.ThreadState_GetInterpreter, "PyThreadState_GetInterpreter", NULL, 1},
		{&py.InterpreterState_ThreadHead, "PyInterpreterState_ThreadHead", NULL, 1},
		{&py.ThreadState_Next, "PyThreadState_Next", NULL, 1},
		{&py.Eval_SetProfile, "PyEval_SetProfile", NULL, 1},
		{&py.Sys_GetObject, "PySys_GetObject", NULL, 1},
		{&py.Object_CallNoArgs, "PyObject_CallNoArgs", NULL, 1},
		{&py.CFunction_NewEx, "PyCFunction_NewEx", NULL, 1},
		{&py.Import_GetModule, "PyImport_GetModule", NULL, 1},
		{&py.Unicode_FromString, "PyUnicode_FromString", NULL, 1},
		{&py.Object_SetAttrString, "PyObject_SetAttrString", NULL, 1},
		{&py.Mapping_GetItemString, "PyMapping_GetItemString", NULL, 1},
		{&py.Object_CallMethod, "PyObject_CallMethod", NULL, 1},
		{&py.Object_CallFunction, "PyObject_CallFunction", NULL, 1},
		{&py.Long_AsLong, "PyLong_AsLong", NULL, 1},
		{&py.None, "_Py_NoneStruct", NULL, 1},
		{&py.GetVersion, "Py_GetVersion", NULL, 1},
		{&py.CodeType, "PyCode_Type", NULL, 1},
		{&py.UnicodeType, "PyUnicode_Type", NULL, 1},
		{&py.Code_Addr2Line, "PyCode_Addr2Line", NULL, 0},
		{&py.IsFinalizing, "Py_IsFinalizing", "_Py_IsFinalizing", 0},
		{&py.Eval_SetProfileOf, "_PyEval_SetProfile", NULL, 0},
		{&py.Eval_SetProfileAllThreads, "PyEval_SetProfileAllThreads", NULL, 0},
		{&py.GC_Disable, "PyGC_Disable", NULL, 0},
		{&py.GC_Enable, "PyGC_Enable", NULL, 0},
		{&py.InterpreterState_Get, "PyInterpreterState_Get", NULL, 0},
		{&py.Tuple_Size, "PyTuple_Size", NULL, 0},
		{&py.Tuple_GetItem, "PyTuple_GetItem", NULL, 0},
		{&py.GetEvalFrameFunc, "_PyInterpreterState_GetEvalFrameFunc", NULL, 0},
		{&py.SetEvalFrameFunc, "_PyInterpreterState_SetEvalFrameFunc", NULL, 0},
		{&py.EvalFrameDefault, "_PyEval_EvalFrameDefault", NULL, 0},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		void *f = dlsym(handle, want[i].name);
		if (!f && want[i].alt)
			f = dlsym(handle, want[i].alt);
		if (!f)
			dlerror(); /* the failed lookup is ours: the program's next dlerror() must not see it */
		if (!f && want[i].required) {
			unsupported(handle, i > 0);
			return;
		}
		memcpy(want[i].slot, &f, sizeof f);
	}
	if (!py.GC_Enable)
		py.GC_Disable = NULL;
	atomic_store_explicit(&py_ready, 1, memory_order_release);
}

/* Whether this thread holds the GIL (the interpreter is running). */
static int holds_gil(void)
{
	void *mine = py.GILState_GetThisThreadState();
	return mine && py.ThreadState_GetUnchecked() == mine;
}

int pw_py_thread_state(void)
{
	if (!atomic_load_explicit(&py_ready, memory_order_acquire) || !py.IsInitialized())
		return -1;
	void *mine = py.GILState_GetThisThreadState();
	if (!mine || (py.IsFinalizing && py.IsFinalizing()))
		return -1;
	/* Reading frames allocates; without PyGC_Disable (3.9) a collection could run finalizers inside the
	 * program's C code: such a thread is treated as one without the GIL (frames from the hook). */
	return py.ThreadState_GetUnchecked() == mine && py.GC_Disable ? 1 : 0;
}

/* Copies the last max bytes of s (the end of a path says most) into dst; returns the length copied. */
static size_t copy_tail(char *dst, const char *s, size_t len, size_t max)
{
	if (len > max) {
		s += len - max;
		len = max;
	}
	memcpy(dst, s, len);
	return len;
}

#define PY_FILE_MAX 160
#define PY_FUNC_MAX 96

/* The UTF-8 of str object o (NULL when it is not one, the error cleared), its length in *len. A lone
 * surrogate has none (a name given by code.replace, a module's __name__ can hold one): such a str is written
 * as repr() shows it, f\udc80 (backslashreplace), into a bytes object *held, which the caller drops. */
static const char *str_utf8(void *o, ssize_t *len, void **held)
{
	*held = NULL;
	const char *s = py.Unicode_AsUTF8AndSize(o, len);
	if (s)
		return s;
	py.Err_Clear();
	char *b = NULL;
	*held = py.Unicode_AsEncodedString(o, "utf-8", "backslashreplace");
	if (!*held || py.Bytes_AsStringAndSize(*held, &b, len) < 0)
		py.Err_Clear();
	return b;
}

/* The UTF-8 of attribute name of code (a new reference is taken and dropped), into dst; *missing set when
 * code has no such attribute. */
static size_t code_string(void *code, const char *name, char *dst, size_t max, int *missing)
{
	void *o = py.Object_GetAttrString(code, name);
	*missing = !o;
	if (!o) {
		py.Err_Clear();
		return 0;
	}
	ssize_t len = 0;
	void *held;
	const char *s = str_utf8(o, &len, &held);
	size_t n = s && len > 0 ? copy_tail(dst, s, (size_t)len, max) : 0;
	if (held)
		py.DecRef(held);
	py.DecRef(o);
	return n;
}

/* Finishes the frame whose file and function text are in place after its header at at: its line (none when
 * not positive), the header, the padding. Returns its size. */
static size_t frame_put(uint8_t *at, struct pw_py_frame *f, int line)
{
	f->line = line > 0 ? (uint32_t)line : 0;
	memcpy(at, f, sizeof *f);
	size_t size = pw_py_frame_size(f->file_len, f->func_len);
	memset(at + sizeof *f + f->file_len + f->func_len, 0, size - sizeof *f - f->file_len - f->func_len);
	return size;
}

/* Appends frame and its callers (frame is a new reference, consumed). GIL held; the error indicator is
 * saved and restored around the walk, since the hook runs while exceptions propagate. */
static size_t walk(void *frame, uint8_t *buf, size_t cap, uint16_t *count, int *truncated)
{
	void *et, *ev, *tb;
	py.Err_Fetch(&et, &ev, &tb);
	size_t used = 0;
	*count = 0;
	*truncated = 0;
	while (frame) {
		if (*count == PW_STACK_MAX_PYTHON || cap - used < pw_py_frame_size(PY_FILE_MAX, PY_FUNC_MAX)) {
			*truncated = 1;
			break;
		}
		struct pw_py_frame f = {0, 0, 0};
		char *file = (char *)buf + used + sizeof f;
		void *code = py.Frame_GetCode(frame);
		if (code) {
			int missing = 0;
			f.file_len = (uint16_t)code_string(code, "co_filename", file, PY_FILE_MAX, &missing);
			size_t n = 0;
			if (!py_no_qualname) {
				n = code_string(code, "co_qualname", file + f.file_len, PY_FUNC_MAX, &missing);
				py_no_qualname = missing; /* before 3.11 */
			}
			if (py_no_qualname)
				n = code_string(code, "co_name", file + f.file_len, PY_FUNC_MAX, &missing);
			f.func_len = (uint16_t)n;
			py.DecRef(code);
		}
		used += frame_put(buf + used, &f, py.Frame_GetLineNumber(frame));
		(*count)++;
		void *back = py.Frame_GetBack(frame);
		py.DecRef(frame);
		frame = back;
	}
	if (frame)
		py.DecRef(frame);
	py.Err_Restore(et, ev, tb);
	return used;
}

/* Around the interpreter calls made from inside a wrapper, that is inside the program's C code: no garbage
 * collection (and so no finalizer) may run there. Returns what end_no_gc takes. */
static int begin_no_gc(void)
{
	return py.GC_Disable ? py.GC_Disable() : 0;
}

static void end_no_gc(int was_enabled)
{
	if (was_enabled == 1)
		py.GC_Enable();
}

size_t pw_py_frames(uint8_t *buf, size_t cap, uint16_t *count, int *truncated)
{
	int gc = begin_no_gc();
	void *frame = py.Eval_GetFrame();
	if (frame)
		py.IncRef(frame);
	size_t len = walk(frame, buf, cap, count, truncated);
	end_no_gc(gc);
	return len;
}

/* ---- frames read directly (CPython 3.9 to 3.13) ----
 *
 * A call made without the GIL cannot use the C API, but its thread's frames cannot change until it returns
 * to Python: they are read from the interpreter's own structures, so that no profile hook has to cost every
 * Python call (the hook, below, is what other versions keep). The layout is learnt once, on a thread that
 * holds the GIL inside a slow call, by finding in the structures the pointers the C API hands out (the frame
 * object's interpreter frame, the thread state's current frame, the code, the caller, the code's file and
 * name; before 3.11, where frames are the frame objects themselves, the int f_lasti that gives the lines of
 * several frames), every read of the search going through process_vm_readv so that a wrong guess cannot
 * fault, and it is used only once a walk of that thread's frames by it gives, byte for byte, what the C API
 * gives. Line numbers come from PyCode_Addr2Line, which only reads the code object's immutable table. */

#define PY_FRAME_IFRAME 24   /* PyFrameObject: PyObject_HEAD, f_back, then f_frame (3.11 to 3.13) */
#define PY_IFRAME_OWNER 70   /* _PyInterpreterFrame.owner: after eight pointers, stacktop and two bytes */
#define PY_OWNED_BY_CSTACK 3 /* 3.12+: the shim frame of a call from C into Python */
#define PY_STR_STATE 32      /* PyASCIIObject.state, after PyObject_HEAD, length and hash */
#define PY_STR_COMPACT_ASCII 0x60
#define PY_SCAN 64           /* words searched in each structure */
#define PY_LEARN_TRIES 8

static struct {
	_Atomic int state; /* 0: not learnt yet, 1: usable, -1: not for this interpreter */
	int tries;
	int minor;
	size_t ts_frame; /* PyThreadState: frame (3.9, 3.10), cframe (3.11, 3.12) or current_frame (3.13) */
	ssize_t cf_frame; /* _PyCFrame.current_frame, -1 without a cframe (3.13) */
	int frame_objects; /* 3.9, 3.10: the frames are PyFrameObjects; if_instr is the int f_lasti, in units */
	int lasti_unit;    /* bytes per f_lasti step: 2 (3.10), 1 (3.9) */
	size_t if_code, if_prev, if_instr;
	size_t co_file, co_name, co_start; /* co_name: co_qualname's place */
	size_t str_data; /* where a compact string's characters (ASCII) or utf8_length, utf8 (others) start */
} lay;

/* Copies n bytes at src, or fails (-1) where they are not readable. */
static int peek(void *dst, const void *src, size_t n)
{
	struct iovec local = {dst, n}, remote = {(void *)src, n};
	return PW_SYSCALL(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL) == (ssize_t)n ? 0 : -1;
}

static void *peek_ptr(const void *at)
{
	void *p = NULL;
	return peek(&p, at, sizeof p) == 0 ? p : NULL;
}

/* The offset in obj's first PY_SCAN words of the first word from offset from on equal to want, or -1. */
static ssize_t find_word_from(const void *obj, const void *want, size_t from)
{
	void *w[PY_SCAN];
	if (!obj || peek(w, obj, sizeof w) < 0)
		return -1;
	for (size_t i = from / sizeof w[0]; i < PY_SCAN; i++)
		if (w[i] == want)
			return (ssize_t)(i * sizeof w[0]);
	return -1;
}

static ssize_t find_word(const void *obj, const void *want)
{
	return find_word_from(obj, want, 0);
}

/* 3.11 and 3.12 keep the current frame in a _PyCFrame the thread state points to; 3.13 in the thread state. */
static ssize_t find_current_frame(const void *ts, const void *iframe)
{
	if (lay.cf_frame < 0)
		return find_word(ts, iframe);
	void *w[PY_SCAN];
	if (peek(w, ts, sizeof w) < 0)
		return -1;
	for (size_t i = 0; i < PY_SCAN; i++)
		if (w[i] && !((uintptr_t)w[i] & 7) && peek_ptr((char *)w[i] + lay.cf_frame) == iframe)
			return (ssize_t)(i * sizeof w[0]);
	return -1;
}

static void *iframe_current(void *ts)
{
	void *at = (char *)ts + lay.ts_frame;
	if (lay.cf_frame >= 0) {
		void *cf = *(void **)at;
		return cf ? *(void **)((char *)cf + lay.cf_frame) : NULL;
	}
	return *(void **)at;
}

/* The UTF-8 of a str object, or none when it is not one or has no UTF-8 form yet. */
static size_t direct_string(const void *o, char *dst, size_t max)
{
	if (!o || *(void *const *)((const char *)o + 8) != py.UnicodeType)
		return 0;
	uint32_t state = *(const uint32_t *)((const char *)o + PY_STR_STATE);
	ssize_t len = *(const ssize_t *)((const char *)o + 16);
	const char *s;
	if ((state & PY_STR_COMPACT_ASCII) == PY_STR_COMPACT_ASCII) {
		s = (const char *)o + lay.str_data;
	} else if (state & 0x20) { /* compact, not ASCII: its cached UTF-8, if made */
		len = *(const ssize_t *)((const char *)o + lay.str_data);
		s = *(const char *const *)((const char *)o + lay.str_data + 8);
	} else {
		return 0;
	}
	return s && len > 0 ? copy_tail(dst, s, (size_t)len, max) : 0;
}

/* The calling thread's frames, read from the interpreter's structures (lay usable). */
static size_t direct_walk(uint8_t *buf, size_t cap, uint16_t *count, int *truncated)
{
	void *ts = py.GILState_GetThisThreadState();
	void *f = ts ? iframe_current(ts) : NULL;
	size_t used = 0;
	*count = 0;
	*truncated = 0;
	for (int hops = 0; f && hops < 4 * PW_STACK_MAX_PYTHON; hops++) {
		char *ff = f;
		void *code = *(void **)(ff + lay.if_code);
		int shim = lay.minor >= 12 && ff[PY_IFRAME_OWNER] == PY_OWNED_BY_CSTACK;
		if (!shim && code && *(void **)((char *)code + 8) == py.CodeType) {
			if (*count == PW_STACK_MAX_PYTHON || cap - used < pw_py_frame_size(PY_FILE_MAX, PY_FUNC_MAX)) {
				*truncated = 1;
				break;
			}
			struct pw_py_frame fr = {0, 0, 0};
			char *file = (char *)buf + used + sizeof fr;
			fr.file_len = (uint16_t)direct_string(*(void **)((char *)code + lay.co_file), file, PY_FILE_MAX);
			fr.func_len = (uint16_t)direct_string(*(void **)((char *)code + lay.co_name), file + fr.file_len,
							      PY_FUNC_MAX);
			int line;
			if (lay.frame_objects) {
				line = py.Code_Addr2Line(code, *(int *)(ff + lay.if_instr) * lay.lasti_unit);
			} else {
				uintptr_t instr = *(uintptr_t *)(ff + lay.if_instr), start = (uintptr_t)code + lay.co_start;
				line = instr >= start ? py.Code_Addr2Line(code, (int)(instr - start)) : -1;
			}
			used += frame_put(buf + used, &fr, line);
			(*count)++;
		}
		f = *(void **)(ff + lay.if_prev);
	}
	return used;
}

/* Bytes of code's bytecode (its co_code bytes object's size), 0 when unknown. */
static ssize_t code_bytes(void *code)
{
	void *b = py.Object_GetAttrString(code, "co_code");
	ssize_t n = 0;
	if (!b)
		py.Err_Clear();
	else if (peek(&n, (char *)b + 16, sizeof n) < 0) /* ob_size */
		n = 0;
	if (b)
		py.DecRef(b);
	return n;
}

/* Before 3.11: the offset in frame objects of the int f_lasti: the one that, in each of frame and its callers
 * (up to PY_LASTI_FRAMES of them), lies inside the code and gives the frame's line through PyCode_Addr2Line
 * (lay.lasti_unit set); -1 when none does or fewer than two frames can tell. */
#define PY_LASTI_FRAMES 8
static ssize_t find_lasti(void *frame)
{
	struct {
		int words[PY_SCAN];
		void *code;
		ssize_t len;
		int line;
	} fr[PY_LASTI_FRAMES];
	size_t n = 0;
	void *f = frame;
	py.IncRef(f);
	while (f && n < PY_LASTI_FRAMES) {
		fr[n].code = py.Frame_GetCode(f);
		fr[n].line = py.Frame_GetLineNumber(f);
		fr[n].len = fr[n].code ? code_bytes(fr[n].code) : 0;
		if (fr[n].len > 0 && peek(fr[n].words, f, sizeof fr[n].words) == 0)
			n++;
		else if (fr[n].code)
			py.DecRef(fr[n].code);
		void *back = py.Frame_GetBack(f);
		py.DecRef(f);
		f = back;
	}
	if (f)
		py.DecRef(f);
	ssize_t found = -1;
	for (size_t i = 6; n >= 2 && i < PY_SCAN && found < 0; i++) { /* past the header, f_back and f_code */
		size_t k = 0;
		for (; k < n; k++) {
			ssize_t at = (ssize_t)fr[k].words[i] * lay.lasti_unit;
			if (at < 0 || at >= fr[k].len || py.Code_Addr2Line(fr[k].code, (int)at) != fr[k].line)
				break;
		}
		if (k == n)
			found = (ssize_t)(i * sizeof fr[0].words[0]);
	}
	for (size_t k = 0; k < n; k++)
		py.DecRef(fr[k].code);
	return found;
}

/* The minor version of the CPython 3 running, or -1 (another major version, a free-threaded build): what the
 * frames read directly and the frame evaluation function are laid out for. */
static int py_minor(void)
{
	const char *v = py.GetVersion();
	int major = 0, minor = 0;
	if (sscanf(v, "%d.%d", &major, &minor) != 2 || major != 3 || strstr(v, "free-threading"))
		return -1;
	return minor;
}

/* Learns the layout from this thread's frames (GIL held, GC off, the error indicator saved). */
static int learn_layout(void)
{
	int minor = py_minor();
	if (!py.Code_Addr2Line || minor < 9 || minor > 13)
		return -1;
	lay.minor = minor;
	lay.frame_objects = minor <= 10;
	lay.lasti_unit = minor == 10 ? 2 : 1;
	lay.cf_frame = minor == 11 ? 8 : minor == 12 ? 0 : -1;
	void *frame = py.Eval_GetFrame(), *ts = py.ThreadState_Get();
	void *iframe = !frame ? NULL : lay.frame_objects ? frame : peek_ptr((char *)frame + PY_FRAME_IFRAME);
	void *back = frame ? py.Frame_GetBack(frame) : NULL;
	void *code = frame ? py.Frame_GetCode(frame) : NULL;
	void *file = code ? py.Object_GetAttrString(code, "co_filename") : NULL;
	void *short_name = code ? py.Object_GetAttrString(code, "co_name") : NULL;
	void *name = !code || lay.frame_objects ? NULL : py.Object_GetAttrString(code, "co_qualname");
	if (!file || (!name && !lay.frame_objects) || !short_name)
		py.Err_Clear();
	if (lay.frame_objects && short_name) { /* before 3.11 the frames show co_name */
		name = short_name;
		py.IncRef(name);
	}
	int rc = 0; /* 0: try again later (no caller frame to learn from yet) */
	ssize_t at;
	if (iframe && back && file && name && short_name && (at = find_current_frame(ts, iframe)) >= 0) {
		lay.ts_frame = (size_t)at;
		void *back_iframe = lay.frame_objects ? back : peek_ptr((char *)back + PY_FRAME_IFRAME);
		ssize_t c = find_word(iframe, code), p = find_word(iframe, back_iframe), fi = find_word(code, file),
			sn = find_word(code, short_name), n = find_word(code, name);
		if (n >= 0 && n == sn && !lay.frame_objects) /* the same object: co_qualname is the later field */
			n = find_word_from(code, name, (size_t)sn + sizeof(void *));
		void *type = peek_ptr((char *)code + 8);
		ssize_t basic = 0, units = 0, str = -1;
		if (type)
			peek(&basic, (char *)type + 32, sizeof basic); /* tp_basicsize: where co_code_adaptive starts */
		peek(&units, (char *)code + 16, sizeof units);     /* ob_size: its code units */
		/* the instruction pointer: the word pointing into the code's instructions; before 3.11, the int
		 * f_lasti, found as the one that gives this frame's line and its caller's */
		void *w[PY_SCAN];
		ssize_t ins = -1;
		if (lay.frame_objects)
			ins = find_lasti(frame);
		else if (basic > 0 && units > 0 && peek(w, iframe, sizeof w) == 0)
			for (size_t i = 0; i < PY_SCAN && ins < 0; i++)
				if ((uintptr_t)w[i] >= (uintptr_t)code + (size_t)basic &&
				    (uintptr_t)w[i] < (uintptr_t)code + (size_t)basic + 2 * (size_t)units)
					ins = (ssize_t)(i * sizeof w[0]);
		/* a compact ASCII string's characters: after its header, the file's first bytes */
		ssize_t flen = 0;
		const char *ftext = py.Unicode_AsUTF8AndSize(file, &flen);
		char head[8] = {0};
		if (ftext && flen >= 8)
			for (size_t off = 24; off <= 64 && str < 0; off += 8)
				if (peek(head, (char *)file + off, 8) == 0 && memcmp(head, ftext, 8) == 0)
					str = (ssize_t)off;
		if (!ftext)
			py.Err_Clear();
		if (c >= 0 && p >= 0 && fi >= 0 && n >= 0 && ins >= 0 && str >= 0) {
			lay.if_code = (size_t)c, lay.if_prev = (size_t)p, lay.if_instr = (size_t)ins;
			lay.co_file = (size_t)fi, lay.co_name = (size_t)n, lay.co_start = (size_t)basic;
			lay.str_data = (size_t)str;
			rc = -1;
			/* the check: both walks of this thread, byte for byte */
			static uint8_t a[PW_STACK_MAX_PYTHON * 272], b[sizeof a];
			uint16_t na = 0, nb = 0;
			int ta = 0, tb = 0;
			py.IncRef(frame);
			size_t la = walk(frame, a, sizeof a, &na, &ta);
			size_t lb = direct_walk(b, sizeof b, &nb, &tb);
			if (la == lb && na == nb && ta == tb && na > 0 && memcmp(a, b, la) == 0)
				rc = 1;
		}
	}
	if (back)
		py.DecRef(back);
	if (code)
		py.DecRef(code);
	if (file)
		py.DecRef(file);
	if (name)
		py.DecRef(name);
	if (short_name)
		py.DecRef(short_name);
	return rc;
}

/* Learns the layout once, from a thread holding the GIL; a few tries for threads with no caller frame. */
static void learn_layout_once(void)
{
	if (atomic_load_explicit(&lay.state, memory_order_acquire) != 0 || lay.tries >= PY_LEARN_TRIES)
		return;
	lay.tries++;
	void *et, *ev, *tb;
	py.Err_Fetch(&et, &ev, &tb);
	int gc = begin_no_gc();
	int rc = learn_layout();
	end_no_gc(gc);
	py.Err_Restore(et, ev, tb);
	if (rc != 0 || lay.tries >= PY_LEARN_TRIES)
		atomic_store_explicit(&lay.state, rc > 0 ? 1 : -1, memory_order_release);
}

int pw_py_direct_ready(void)
{
	return atomic_load_explicit(&lay.state, memory_order_acquire) == 1;
}

size_t pw_py_frames_direct(uint8_t *buf, size_t cap, uint16_t *count, int *truncated)
{
	return direct_walk(buf, cap, count, truncated);
}

/* Writes the thread's Python frames from start (a new reference, consumed; NULL: none, which closes the
 * pending calls with no Python frames) as a PW_K_PYSTACK record. Guard held. */
static void write_frames(void *start)
{
	static uint8_t buf[sizeof(struct pw_stack) + PW_STACK_MAX_PYTHON * 272]; /* the GIL is held */
	uint64_t t0 = pw_clock_ticks();
	struct pw_stack s = {PW_STACK_MAGIC, 0, 0, 0, 0};
	int truncated = 0;
	size_t len = start ? walk(start, buf + sizeof s, sizeof buf - sizeof s, &s.python, &truncated) : 0;
	s.flags = truncated ? PW_STACK_TRUNCATED : 0;
	memcpy(buf, &s, sizeof s);
	struct {
		struct pw_rec_call c;
		uint64_t stack;
	} r = {0};
	r.stack = pw_stack_store(buf, sizeof s + len);
	pw_stack_cost(t0);
	if (r.stack && pw_seg) {
		r.c.h.type = PW_EV_PY_STACK | PW_REC_STACK;
		r.c.h.size8 = sizeof r / 8;
		r.c.t0 = r.c.t1 = pw_clock_ticks();
		pw_guard_set(PW_GUARD_RECORDING);
		pw_emit_record(&r, sizeof r);
		pw_guard_set(PW_GUARD_INTERNAL);
	}
}

/* Whether calls made without the GIL need the profile hook: the layout for reading frames directly is not
 * usable, or CPU samples want the frames (a sample interrupts the thread anywhere: its structures may be
 * half-written then). */
static int monitoring;   /* the function ranges come from sys.monitoring (3.12+), not from the profile hook */
static int evaluating;   /* the function ranges come from eval_frame (3.9 to 3.11), not from the profile hook */
static int stacks_asked; /* a stack has asked for the hook (pw_py_defer, pw_py_install_held) */

static int ranges_from_hook(void)
{
	return pw_pyfn_on && !monitoring && !evaluating;
}

static int stacks_need_hook(void)
{
	return pw_stacks_on == PW_STACKS_ALL && (!pw_py_direct_ready() || pw_cfg.sample_hz);
}

static int hook_needed(void)
{
	return ranges_from_hook() || stacks_need_hook();
}

static void hook_new_threads(void);
static void hook_threading(void **hook_fn);
static int new_threads_hooked; /* threading._profile_hook is set (by us or by the program) */

/* The hook: nearly every Python call and return passes here, so all but a thread with frames owed leave at
 * once. Calls made without the GIL get their frames exactly: at the C_RETURN of the builtin that the hook saw
 * start before they were made (py_call_gen), in the frame that called it, at the line of that call. Any other
 * event first means the frames are no longer those of the call: the pending calls are closed with none. A
 * CPU sample takes the frames at the next event, whatever it is. */
static int profile_hook(void *obj, void *frame, int what, void *arg)
{
	(void)obj;
	(void)arg;
	struct pw_thread *t = &pw_self;
	t->py_hooked = 1;
	if (ranges_from_hook() && !t->guard && frame) {
		if (what == PY_TRACE_CALL) {
			void *code = py.Frame_GetCode(frame);
			if (code) {
				pw_pyfn_call(t, frame, code);
				py.DecRef(code);
			}
		} else if (what == PY_TRACE_RETURN) {
			pw_pyfn_return(t, frame);
		}
	}
	int returned = what == PY_TRACE_C_RETURN || what == PY_TRACE_C_EXCEPTION;
	if (PW_LIKELY(!t->py_pending && !t->py_sample_pending) || t->guard || !frame) {
		if (what == PY_TRACE_C_CALL)
			t->py_call_gen = ++t->py_gen_next ? t->py_gen_next : ++t->py_gen_next;
		else if (returned)
			t->py_call_gen = 0;
		return 0;
	}
	/* inside the program's C code, between its calls: its errno is kept */
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	int exact = t->py_pending && returned && t->py_pending_gen && t->py_pending_gen == t->py_call_gen;
	if (exact || !t->py_pending) {
		/* the frame that is running: at a CALL event, the new frame's caller */
		void *start = what == PY_TRACE_CALL ? py.Frame_GetBack(frame) : frame;
		if (start && what != PY_TRACE_CALL)
			py.IncRef(start);
		write_frames(start);
	} else {
		write_frames(NULL);
	}
	t->py_pending = t->py_sample_pending = 0;
	if (what == PY_TRACE_C_CALL)
		t->py_call_gen = ++t->py_gen_next ? t->py_gen_next : ++t->py_gen_next;
	else if (returned)
		t->py_call_gen = 0;
	pw_guard_leave(guard);
	return 0;
}

/* Whether the thread state now current has a profile function: sys.getprofile() is not None. */
static int has_profiler(void)
{
	void *getprofile = py.Sys_GetObject("getprofile");
	if (!getprofile)
		return 1;
	void *f = py.Object_CallNoArgs(getprofile);
	if (!f) {
		py.Err_Clear();
		return 1;
	}
	int has = f != py.None;
	py.DecRef(f);
	return has;
}

/* Threads that threading starts later: threading.Thread sets the profile function of a new thread to
 * threading._profile_hook before it runs anything. Ours is a builtin that, at the thread's first event, puts
 * the C hook in its place (sys.getprofile() on the thread then says None again). Set only where the
 * program has set none. */
static void *thread_start_hook(void *self, void *args)
{
	(void)self;
	(void)args;
	py.Eval_SetProfile(profile_hook, NULL);
	py.IncRef(py.None);
	return py.None;
}

static struct {
	const char *name;
	void *(*meth)(void *, void *);
	int flags;
	const char *doc;
} thread_start_def = {"profwrap_thread_start", thread_start_hook, 0x0001 /* METH_VARARGS */, NULL};

static void hook_new_threads(void)
{
	static void *hook_fn;
	void *et, *ev, *tb;
	py.Err_Fetch(&et, &ev, &tb); /* the caller's exception, if it has one, is not ours to clear */
	int gc = begin_no_gc();
	hook_threading(&hook_fn);
	end_no_gc(gc);
	py.Err_Restore(et, ev, tb);
}

static void hook_threading(void **hook_fn)
{
	void *name = py.Unicode_FromString("threading");
	void *threading = name ? py.Import_GetModule(name) : NULL; /* only if imported: no import from here */
	if (name)
		py.DecRef(name);
	if (!threading) {
		py.Err_Clear();
		return;
	}
	void *current = py.Object_GetAttrString(threading, "_profile_hook");
	if (!current)
		py.Err_Clear();
	else if (current != py.None)
		new_threads_hooked = 1;
	else if ((*hook_fn || (*hook_fn = py.CFunction_NewEx(&thread_start_def, NULL, NULL))) &&
		 py.Object_SetAttrString(threading, "_profile_hook", *hook_fn) == 0)
		new_threads_hooked = 1;
	else
		py.Err_Clear();
	if (current)
		py.DecRef(current);
	py.DecRef(threading);
}

/* ---- sys.monitoring (3.12+): the function ranges without a profile function ----
 * PY_START (and PY_UNWIND, which cannot be set per code) are on for every code object; the callback of a code
 * that matches no pattern answers DISABLE, so that code never calls it again. A matched code gets PY_RESUME,
 * PY_RETURN and PY_YIELD of its own (set_local_events): its calls and returns, and nothing else, reach
 * py_ranges.c, with the frame the profile hook would pass. */
static int monitor_tool = -1;
static long ev_start, ev_resume, ev_return, ev_yield, ev_unwind;
static void *monitor_disable, *monitor_set_local;

static void *monitor_none(void)
{
	py.IncRef(py.None);
	return py.None;
}

static void *monitor_start_cb(void *self, void *const *args, ssize_t nargs)
{
	(void)self;
	struct pw_thread *t = &pw_self;
	void *frame = nargs >= 1 && !t->guard ? py.Eval_GetFrame() : NULL;
	if (!frame)
		return monitor_none();
	int first = 0;
	if (!pw_pyfn_code_matches(frame, args[0], &first)) {
		py.IncRef(monitor_disable);
		return monitor_disable;
	}
	if (first) {
		void *r = py.Object_CallFunction(monitor_set_local, "iOl", monitor_tool, args[0],
						 ev_resume | ev_return | ev_yield);
		if (r)
			py.DecRef(r);
		else
			py.Err_Clear();
	}
	pw_pyfn_call(t, frame, args[0]);
	return monitor_none();
}

static void *monitor_end_cb(void *self, void *const *args, ssize_t nargs)
{
	(void)self;
	(void)args;
	(void)nargs;
	struct pw_thread *t = &pw_self;
	void *frame = t->pyfn_depth && !t->guard ? py.Eval_GetFrame() : NULL;
	if (frame)
		pw_pyfn_return(t, frame);
	return monitor_none();
}

static struct py_method_def {
	const char *name;
	void *(*meth)(void *, void *const *, ssize_t);
	int flags;
	const char *doc;
} monitor_start_def = {"profwrap_py_start", monitor_start_cb, 0x0080 /* METH_FASTCALL */, NULL},
  monitor_end_def = {"profwrap_py_end", monitor_end_cb, 0x0080, NULL};

/* A call whose result is only checked; its exception is cleared. */
static int call_ok(void *r)
{
	if (!r) {
		py.Err_Clear();
		return 0;
	}
	py.DecRef(r);
	return 1;
}

static long monitor_event(void *events, const char *name)
{
	void *v = py.Object_GetAttrString(events, name);
	long n = v ? py.Long_AsLong(v) : -1;
	if (v)
		py.DecRef(v);
	if (n <= 0)
		py.Err_Clear();
	return n > 0 ? n : 0;
}

/* Sets up sys.monitoring for the function ranges, holding the GIL. Returns 1 when it serves them. */
static int monitor_begin(void)
{
	void *mon = py.Sys_GetObject("monitoring"); /* borrowed; none before 3.12 */
	if (!mon) {
		py.Err_Clear();
		return 0;
	}
	void *events = py.Object_GetAttrString(mon, "events");
	if (!events) {
		py.Err_Clear();
		return 0;
	}
	ev_start = monitor_event(events, "PY_START");
	ev_resume = monitor_event(events, "PY_RESUME");
	ev_return = monitor_event(events, "PY_RETURN");
	ev_yield = monitor_event(events, "PY_YIELD");
	ev_unwind = monitor_event(events, "PY_UNWIND");
	py.DecRef(events);
	monitor_disable = py.Object_GetAttrString(mon, "DISABLE");
	monitor_set_local = py.Object_GetAttrString(mon, "set_local_events");
	void *start = py.CFunction_NewEx(&monitor_start_def, NULL, NULL);
	void *end = py.CFunction_NewEx(&monitor_end_def, NULL, NULL);
	if (!ev_start || !ev_resume || !ev_return || !ev_yield || !ev_unwind || !monitor_disable || !monitor_set_local ||
	    !start || !end) {
		py.Err_Clear();
		return 0;
	}
	/* the tool ids no CPython tool takes (debugger 0, coverage 1, profiler 2, optimizer 5) */
	for (int tool = 4; tool >= 3 && monitor_tool < 0; tool--)
		if (call_ok(py.Object_CallMethod(mon, "use_tool_id", "is", tool, "profwrap")))
			monitor_tool = tool;
	if (monitor_tool < 0)
		return 0;
	int ok = call_ok(py.Object_CallMethod(mon, "register_callback", "ilO", monitor_tool, ev_start, start)) &&
		 call_ok(py.Object_CallMethod(mon, "register_callback", "ilO", monitor_tool, ev_resume, start)) &&
		 call_ok(py.Object_CallMethod(mon, "register_callback", "ilO", monitor_tool, ev_return, end)) &&
		 call_ok(py.Object_CallMethod(mon, "register_callback", "ilO", monitor_tool, ev_yield, end)) &&
		 call_ok(py.Object_CallMethod(mon, "register_callback", "ilO", monitor_tool, ev_unwind, end)) &&
		 call_ok(py.Object_CallMethod(mon, "set_events", "il", monitor_tool, ev_start | ev_unwind));
	if (!ok)
		call_ok(py.Object_CallMethod(mon, "free_tool_id", "i", monitor_tool));
	return ok;
}

/* ---- the frame evaluation function (PEP 523, 3.9 to 3.11): the function ranges without a profile hook ----
 * Before 3.12 a profile function costs every call and return, and on 3.11 it also stops the specialising
 * interpreter on the thread (while tracing it runs the generic instructions): a Lightning fit loop ran 15 %
 * slower. Instead every frame is evaluated through eval_frame, which reads the frame's code (a table look-up
 * for all but matched code) and hands the frame to the interpreter's own function, between a push and a pop
 * when it matched. Set only where the interpreter's own function is in place and the frames are laid out as
 * this version's headers say; elsewhere (a debugger's or torch.compile's function first) the profile hook. */
#define PY_EVAL_CODE 32      /* f_code: after PyObject_VAR_HEAD and f_back (3.9, 3.10 frame objects); after
				f_func, f_globals, f_builtins and f_locals (3.11 interpreter frames) */
#define PY_IFRAME_GLOBALS 8  /* 3.11: f_globals, after f_func */
#define PY_IFRAME_OBJECT 40  /* 3.11: frame_obj, after f_code */
#define PY_IFRAME_OWNER_311 69 /* 3.11: owner, after eight pointers, stacktop and is_entry */
#define PY_IFRAME_LOCALS 72  /* 3.11: localsplus, after owner */
#define PY_OWNED_BY_THREAD 0
#define PY_CO_GENERATORS 0x2a0 /* co_flags: CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR */
static int eval_iframes;     /* eval_frame is handed interpreter frames (3.11), not frame objects */
static void *(*eval_default)(void *, void *, int);

static __attribute__((noinline)) void *eval_returned(void *frame, void *result)
{
	pw_pyfn_return(&pw_self, frame);
	return result;
}

/* A matched call: the only frame of ours that stays on the C stack while the interpreter runs (16 bytes: its
 * return address and the saved frame); an unmatched call leaves none (tail calls). */
static __attribute__((noinline)) void *eval_matched(void *tstate, void *frame, int throwflag)
{
	return eval_returned(frame, eval_default(tstate, frame, throwflag));
}

static void *eval_here(void *tstate, void *frame, int throwflag)
{
	struct pw_thread *t = &pw_self;
	if (PW_UNLIKELY(t->guard) || !pw_pyfn_call(t, frame, *(void **)((char *)frame + PY_EVAL_CODE)))
		return eval_default(tstate, frame, throwflag);
	return eval_matched(tstate, frame, throwflag);
}

/* ---- deep recursion: with a frame evaluation function set, 3.11 no longer evaluates a Python-to-Python call
 * inside its caller's _PyEval_EvalFrameDefault, so each nested call takes about 400 bytes of C stack where the
 * interpreter alone takes none: 8 MiB overflowed at about 20,000 calls deep. When less than a quarter of the
 * thread's stack is left, eval_frame evaluates the frame on a stack of its own (pw_call_on_stack), as large as
 * the thread's, left in turn at its last quarter for the next one. Each is mapped the first time the thread
 * goes that deep and kept until the thread ends, so going back up and down again costs no syscall. ---- */
#if defined(__x86_64__) || defined(__aarch64__)
#define CSTACK_SWITCH 1
/* Calls fn(arg) with the stack pointer at top (16-byte aligned). The caller's frame pointer marks where the
 * call came from, so unwinders (libunwind, gdb, C++ exceptions) walk on to the stack it left. */
__attribute__((visibility("hidden"))) void pw_call_on_stack(void (*fn)(void *), void *arg, void *top);
#if defined(__x86_64__)
__asm__(".text\n"
	".globl pw_call_on_stack\n"
	".hidden pw_call_on_stack\n"
	".type pw_call_on_stack, @function\n"
	"pw_call_on_stack:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	mov %rdx, %rsp\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	call *%rax\n"
	"	mov %rbp, %rsp\n"
	"	.cfi_def_cfa_register %rsp\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	.cfi_restore %rbp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size pw_call_on_stack, .-pw_call_on_stack\n");
#else
__asm__(".text\n"
	".globl pw_call_on_stack\n"
	".hidden pw_call_on_stack\n"
	".type pw_call_on_stack, %function\n"
	"pw_call_on_stack:\n"
	"	.cfi_startproc\n"
	"	stp x29, x30, [sp, -16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset x29, -16\n"
	"	.cfi_offset x30, -8\n"
	"	mov x29, sp\n"
	"	.cfi_def_cfa_register x29\n"
	"	mov sp, x2\n"
	"	mov x3, x0\n"
	"	mov x0, x1\n"
	"	blr x3\n"
	"	mov sp, x29\n"
	"	.cfi_def_cfa_register sp\n"
	"	ldp x29, x30, [sp], 16\n"
	"	.cfi_def_cfa_offset 0\n"
	"	.cfi_restore x29\n"
	"	.cfi_restore x30\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size pw_call_on_stack, .-pw_call_on_stack\n");
#endif

/* A stack of ours; this header sits at its top, the stack below it, a guard page at its bottom. */
struct cstack {
	struct cstack *next; /* the next one down, NULL until the thread went that deep */
	size_t bytes;        /* the mapping's */
};

#define CSTACK_MIN (256u << 10)
#define CSTACK_MAX (256u << 20) /* an unlimited RLIMIT_STACK gives the main thread all the room below it */

/* Per thread; kept across fork: a child carries on from the stack it forked on. */
static __thread struct {
	uintptr_t low;          /* below this address eval_frame moves on to the next stack; UINTPTR_MAX until
				   the thread's stack is known, 0 when it cannot be */
	size_t size;            /* each of ours: the thread's stack size, within CSTACK_MIN and CSTACK_MAX */
	struct cstack *current; /* the stack of ours running, NULL on the thread's own */
	struct cstack *first;
	int refused;            /* no memory for the next one: on as without profwrap */
} cstacks = {UINTPTR_MAX, 0, NULL, NULL, 0};

static void learn_thread_stack(void)
{
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL); /* the main thread's is read from /proc */
	pthread_attr_t a;
	void *addr;
	size_t size;
	cstacks.low = 0;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		if (pthread_attr_getstack(&a, &addr, &size) == 0 && size >= 4 * (size_t)sysconf(_SC_PAGESIZE)) {
			cstacks.size = size < CSTACK_MIN ? CSTACK_MIN : size > CSTACK_MAX ? CSTACK_MAX : size;
			cstacks.low = (uintptr_t)addr + size / 4;
		}
		pthread_attr_destroy(&a);
	}
	pw_guard_leave(guard);
}

static struct cstack *map_cstack(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = (cstacks.size + 2 * page - 1) / page * page;
	char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
		       -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m, page, PROT_NONE) < 0) {
		munmap(m, bytes);
		return NULL;
	}
	if (!cstacks.first)
		pw_thread_at_end();
	struct cstack *c = (struct cstack *)(m + bytes) - 1;
	c->next = NULL;
	c->bytes = bytes;
	return c;
}

struct eval_call {
	void *tstate, *frame, *result;
	int throwflag;
};

static void eval_on_cstack(void *p)
{
	struct eval_call *e = p;
	e->result = eval_here(e->tstate, e->frame, e->throwflag);
}

static __attribute__((noinline)) void *eval_deeper(void *tstate, void *frame, int throwflag)
{
	if (cstacks.low == UINTPTR_MAX) {
		learn_thread_stack();
		if ((uintptr_t)__builtin_frame_address(0) >= cstacks.low)
			return eval_here(tstate, frame, throwflag);
	}
	struct cstack **next = cstacks.current ? &cstacks.current->next : &cstacks.first;
	if (cstacks.refused || (!*next && !(*next = map_cstack()))) {
		cstacks.refused = 1;
		return eval_here(tstate, frame, throwflag);
	}
	struct cstack *was = cstacks.current;
	uintptr_t was_low = cstacks.low;
	cstacks.current = *next;
	cstacks.low = (uintptr_t)*next - cstacks.size * 3 / 4;
	struct eval_call e = {tstate, frame, NULL, throwflag};
	pw_call_on_stack(eval_on_cstack, &e, *next);
	cstacks.current = was;
	cstacks.low = was_low;
	return e.result;
}

void pw_py_thread_end(void)
{
	for (struct cstack *c = cstacks.first, *next; c; c = next) {
		next = c->next;
		munmap((char *)(c + 1) - c->bytes, c->bytes);
	}
	cstacks.first = NULL;
}
#else
#define CSTACK_SWITCH 0
void pw_py_thread_end(void)
{
}
#endif

static void *eval_frame(void *tstate, void *frame, int throwflag)
{
#if CSTACK_SWITCH
	if (PW_UNLIKELY((uintptr_t)__builtin_frame_address(0) < cstacks.low))
		return eval_deeper(tstate, frame, throwflag);
#endif
	return eval_here(tstate, frame, throwflag);
}

/* Whether the frame running now is laid out as this version's headers say: its code, and on 3.11 its globals
 * and frame object, where they say. */
static int eval_layout_checks(int minor)
{
	void *fo = py.Eval_GetFrame();
	void *code = fo ? py.Frame_GetCode(fo) : NULL;
	if (!code)
		return 0;
	void *frame = minor <= 10 ? fo : peek_ptr((char *)fo + PY_FRAME_IFRAME);
	int ok = frame && peek_ptr((char *)frame + PY_EVAL_CODE) == code;
	if (ok && minor == 11) {
		void *globals = py.Object_GetAttrString(fo, "f_globals");
		char owner = -1;
		ok = globals && peek_ptr((char *)frame + PY_IFRAME_GLOBALS) == globals &&
		     peek_ptr((char *)frame + PY_IFRAME_OBJECT) == fo &&
		     peek(&owner, (char *)frame + PY_IFRAME_OWNER_311, 1) == 0 && owner == PY_OWNED_BY_THREAD;
		if (globals)
			py.DecRef(globals);
		else
			py.Err_Clear();
	}
	py.DecRef(code);
	return ok;
}

/* Puts eval_frame in place, holding the GIL. Returns 1 when it serves the function ranges. */
static int eval_begin(void)
{
	int minor = py_minor();
	if (minor < 9 || minor > 11 || !py.InterpreterState_Get || !py.GetEvalFrameFunc || !py.SetEvalFrameFunc || !py.EvalFrameDefault ||
	    !py.Tuple_Size || !py.Tuple_GetItem)
		return 0;
	void *interp = py.InterpreterState_Get();
	if (py.GetEvalFrameFunc(interp) != py.EvalFrameDefault || !eval_layout_checks(minor))
		return 0;
	eval_default = (void *(*)(void *, void *, int))py.EvalFrameDefault;
	eval_iframes = minor == 11;
	py.SetEvalFrameFunc(interp, (void *)eval_frame);
	return 1;
}

/* The hook on the interpreter's threads, holding the GIL: from the main thread (Py_AddPendingCall), or from
 * a thread that took a stack holding it. Never by switching thread states (on 3.13 that releases the GIL):
 * each thread's own setter where the interpreter exports it (3.9-3.12), all threads at once (3.12+), else
 * this thread only. Nowhere when this thread already has a profile function (cProfile): the program is
 * profiling itself. */
static int install_hooks(void *unused)
{
	(void)unused;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	if (pw_stacks_on == PW_STACKS_ALL)
		learn_layout_once(); /* frames read directly need no hook */
	void *et, *ev, *tb;
	py.Err_Fetch(&et, &ev, &tb);
	int gc = begin_no_gc();
	static int monitor_tried;
	if (pw_pyfn_on && !monitor_tried) {
		monitor_tried = 1;
		monitoring = monitor_begin();
		evaluating = !monitoring && eval_begin();
	}
	/* asked for by the function ranges at start, the hook waits for a stack that needs it */
	int wanted = ranges_from_hook() || (stacks_asked && stacks_need_hook());
	if (wanted && !has_profiler()) {
		if (py.Eval_SetProfileOf) {
			void *interp = py.ThreadState_GetInterpreter(py.ThreadState_Get());
			for (void *ts = py.InterpreterState_ThreadHead(interp); ts; ts = py.ThreadState_Next(ts))
				if (py.Eval_SetProfileOf(ts, profile_hook, NULL) < 0)
					py.Err_Clear();
		} else if (py.Eval_SetProfileAllThreads) {
			py.Eval_SetProfileAllThreads(profile_hook, NULL);
		} else {
			py.Eval_SetProfile(profile_hook, NULL);
		}
	}
	end_no_gc(gc);
	if (wanted)
		hook_new_threads();
	py.Err_Restore(et, ev, tb);
	atomic_store(&install_requested, 0);
	pw_guard_leave(guard);
	return 0;
}

void pw_py_install_held(void)
{
	struct pw_thread *t = &pw_self;
	learn_layout_once();
	if (!hook_needed())
		return;
	stacks_asked = 1;
	if (!new_threads_hooked)
		hook_new_threads();
	if (t->py_hooked || t->py_installs >= 3)
		return;
	int expected = 0;
	if (!atomic_compare_exchange_strong(&install_requested, &expected, 1))
		return;
	t->py_installs++;
	install_hooks(NULL);
}

void pw_py_defer(void)
{
	struct pw_thread *t = &pw_self;
	if (!t->py_pending)
		t->py_pending_gen = t->py_call_gen;
	else if (t->py_pending_gen != t->py_call_gen)
		t->py_pending_gen = 0; /* calls from two builtins: no one frame is theirs */
	t->py_pending = 1;
	stacks_asked = 1;
	/* A few tries per thread: a thread whose profile function is someone else's never gets the hook. */
	if (t->py_hooked || t->py_installs >= 3)
		return;
	int expected = 0;
	if (!atomic_compare_exchange_strong(&install_requested, &expected, 1))
		return;
	t->py_installs++;
	if (py.AddPendingCall(install_hooks, NULL) < 0)
		atomic_store(&install_requested, 0);
}

/* Python starts a thread holding the GIL, and the thread runs no Python before it gets the GIL: the moment to
 * learn the layout for reading frames directly (learn_layout_once), or where that cannot serve, to make sure
 * threading gives the thread the hook (hook_new_threads), even when threading was imported after the hook
 * went on. With --sample, every new thread starts its sample timer first (pw_sample_new_thread). Otherwise a
 * plain call through. */
PW_REAL(int, pthread_create, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));
PW_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	PW_RESOLVE(pthread_create);
	/* Python's own thread start holds the GIL: there, the hook's set-up may allocate (and collect) even
	 * without PyGC_Disable (3.9), which only function ranges need */
	if (PW_UNLIKELY(!new_threads_hooked) && atomic_load_explicit(&py_ready, memory_order_acquire) &&
	    !pw_self.guard &&
	    ((pw_stacks_on == PW_STACKS_ALL && pw_py_thread_state() == 1) ||
	     (pw_pyfn_on && !pw_pyfn_waiting && pw_py_thread_state() >= 0 && holds_gil()))) {
		struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
		if (pw_stacks_on == PW_STACKS_ALL)
			learn_layout_once(); /* the new thread's calls will not need the hook then */
		if (hook_needed())
			hook_new_threads();
		pw_guard_leave(guard);
	}
	void *sampled = pw_sample_new_thread(&start, &arg);
	int rc = real_pthread_create(thread, attr, start, arg);
	if (rc != 0)
		free(sampled);
	return rc;
}

void pw_py_after_fork(void)
{
	atomic_store(&install_requested, 0);
}

/* ---- for the Python function ranges (py_ranges.c): the profile hook's thread, holding the GIL ---- */

/* Asks the main thread to put the hook on the interpreter's threads once the interpreter runs (the program's
 * next opens and stats ask again until it does). */
void pw_pyfn_try_install(void)
{
	if (!atomic_load_explicit(&py_ready, memory_order_acquire))
		return;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL); /* the interpreter's locks are not the program's */
	int expected = 0;
	if (py.IsInitialized() && !(py.IsFinalizing && py.IsFinalizing()) &&
	    atomic_compare_exchange_strong(&install_requested, &expected, 1)) {
		if (py.AddPendingCall(install_hooks, NULL) < 0)
			atomic_store(&install_requested, 0);
		else
			pw_pyfn_waiting = 0;
	}
	pw_guard_leave(guard);
}

void pw_py_keep(void *obj)
{
	py.IncRef(obj);
}

void pw_py_release(void *obj)
{
	py.DecRef(obj);
}

/* The UTF-8 of a str object into dst (cut at max - 1 bytes, NUL-terminated; a lone surrogate escaped,
 * str_utf8); 0 when it is not one. */
static size_t str_text(void *o, char *dst, size_t max)
{
	ssize_t len = 0;
	void *held = NULL;
	const char *s = o ? str_utf8(o, &len, &held) : NULL;
	size_t n = s && len > 0 ? ((size_t)len < max ? (size_t)len : max - 1) : 0;
	memcpy(dst, s ? s : "", n);
	dst[n] = 0;
	if (held)
		py.DecRef(held);
	return n;
}

int pw_py_has_qualname(void)
{
	return !py_no_qualname;
}

size_t pw_py_code_qualname(void *code, char *dst, size_t max)
{
	void *o = py.Object_GetAttrString(code, py_no_qualname ? "co_name" : "co_qualname");
	if (!o && !py_no_qualname) { /* before 3.11 */
		py.Err_Clear();
		py_no_qualname = 1;
		o = py.Object_GetAttrString(code, "co_name");
	}
	if (!o) {
		py.Err_Clear();
		dst[0] = 0;
		return 0;
	}
	size_t n = str_text(o, dst, max);
	py.DecRef(o);
	return n;
}

/* The item key of the frame's mapping attribute attr (f_globals, f_locals), a new reference or NULL. */
static void *frame_item(void *frame, const char *attr, const char *key)
{
	void *map = py.Object_GetAttrString(frame, attr);
	void *item = map ? py.Mapping_GetItemString(map, key) : NULL;
	if (map)
		py.DecRef(map);
	if (!item)
		py.Err_Clear();
	return item;
}

/* What the frames of a matched code are read for on 3.11, kept per code: its flags, its variables' names and
 * how many of them are its arguments. Few codes match: a small table, each entry holding its code. */
#define CODE_FACTS 64
static struct code_facts {
	void *code, *varnames;
	long flags, nargs;
} facts[CODE_FACTS];

static long code_long(void *code, const char *attr)
{
	void *v = py.Object_GetAttrString(code, attr);
	long n = v ? py.Long_AsLong(v) : -1;
	if (v)
		py.DecRef(v);
	py.Err_Clear();
	return n;
}

static struct code_facts *code_facts(void *code)
{
	struct code_facts *f = &facts[((uintptr_t)code >> 4) & (CODE_FACTS - 1)];
	if (f->code == code)
		return f;
	void *names = py.Object_GetAttrString(code, "co_varnames");
	if (!names) {
		py.Err_Clear();
		return NULL;
	}
	if (f->code) {
		py.DecRef(f->code);
		py.DecRef(f->varnames);
	}
	py.IncRef(code);
	f->code = code;
	f->varnames = names;
	f->flags = code_long(code, "co_flags");
	f->nargs = code_long(code, "co_argcount") + code_long(code, "co_kwonlyargcount");
	return f;
}

/* An argument of the function an interpreter frame (3.11) is about to run, a new reference or NULL: its
 * arguments are the first of its locals, as the code's co_varnames names them. */
static void *iframe_argument(void *frame, const char *local)
{
	struct code_facts *f = code_facts(*(void **)((char *)frame + PY_EVAL_CODE));
	if (!f)
		return NULL;
	ssize_t n = py.Tuple_Size(f->varnames);
	for (ssize_t i = 0; i < n && i < f->nargs; i++) {
		const char *name = py.Unicode_AsUTF8AndSize(py.Tuple_GetItem(f->varnames, i), NULL);
		if (name && strcmp(name, local) == 0) {
			void *o = ((void **)((char *)frame + PY_IFRAME_LOCALS))[i];
			if (o)
				py.IncRef(o);
			return o;
		}
	}
	py.Err_Clear();
	return NULL;
}

size_t pw_py_frame_module(void *frame, char *dst, size_t max)
{
	void *globals = eval_iframes ? *(void **)((char *)frame + PY_IFRAME_GLOBALS) : NULL;
	void *name = globals ? py.Mapping_GetItemString(globals, "__name__") : frame_item(frame, "f_globals", "__name__");
	if (!name)
		py.Err_Clear();
	size_t n = str_text(name, dst, max);
	if (name)
		py.DecRef(name);
	return n;
}

size_t pw_py_frame_local(void *frame, const char *local, int type_name, char *dst, size_t max)
{
	void *o = eval_iframes ? iframe_argument(frame, local) : frame_item(frame, "f_locals", local), *named = o;
	if (o && type_name) {
		void *type = py.Object_GetAttrString(o, "__class__");
		named = type ? py.Object_GetAttrString(type, "__name__") : NULL;
		if (type)
			py.DecRef(type);
		if (!named)
			py.Err_Clear();
	}
	size_t n = str_text(named, dst, max);
	if (named && named != o)
		py.DecRef(named);
	if (o)
		py.DecRef(o);
	return n;
}

int pw_py_frame_makes_generator(void *frame, void *code)
{
	if (!eval_iframes || ((char *)frame)[PY_IFRAME_OWNER_311] != PY_OWNED_BY_THREAD)
		return 0;
	struct code_facts *f = code_facts(code);
	return f && f->flags > 0 && (f->flags & PY_CO_GENERATORS);
}

void pw_py_error_save(void *saved[3])
{
	py.Err_Fetch(&saved[0], &saved[1], &saved[2]);
}

void pw_py_error_restore(void *saved[3])
{
	py.Err_Restore(saved[0], saved[1], saved[2]);
}

/* emit_nvtx's __enter__ and __exit__ synchronise the GPU first; without a device that raises, and the NVTX
 * emission needs none: then torch.cuda.synchronize is a no-op for the call. Left at exit (PyTorch warns of a
 * profiler left on). Run in a namespace of its own. */
static const char pytorch_nvtx_code[] =
	"import atexit, torch\n"
	"def _quiet(f):\n"
	"    if torch.cuda.is_available():\n"
	"        return f()\n"
	"    _s = torch.cuda.synchronize\n"
	"    torch.cuda.synchronize = lambda *a, **k: None\n"
	"    try:\n"
	"        return f()\n"
	"    finally:\n"
	"        torch.cuda.synchronize = _s\n"
	"_e = torch.autograd.profiler.emit_nvtx(record_shapes=%s)\n"
	"_quiet(_e.__enter__)\n"
	"atexit.register(_quiet, lambda: _e.__exit__(None, None, None))\n";

void pw_py_pytorch_nvtx(int shapes)
{
	char code[sizeof pytorch_nvtx_code + 8];
	snprintf(code, sizeof code, pytorch_nvtx_code, shapes ? "True" : "False");
	void *name = py.Unicode_FromString("builtins");
	void *builtins = name ? py.Import_GetModule(name) : NULL;
	void *r = builtins ? py.Object_CallMethod(builtins, "exec", "s{}", code) : NULL;
	if (r) {
		py.DecRef(r);
	} else {
		py.Err_Clear();
		if (!pw_cfg.quiet)
			dprintf(2, "profwrap: --pytorch: PyTorch's NVTX ranges could not be turned on in pid %d\n", getpid());
	}
	if (builtins)
		py.DecRef(builtins);
	if (name)
		py.DecRef(name);
}
