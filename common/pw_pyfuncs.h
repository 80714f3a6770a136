/* --python-functions (PROFWRAP_PYTHON_FUNCTIONS): the Python functions whose calls become ranges. The CLI
 * checks the setting, the preload (py_ranges.c) matches the interpreter's code objects against it.
 *
 * SPEC[,SPEC...], each SPEC one of:
 *   MODULE:QUALNAME   a function by the module it is defined in and its qualified name (`Optimizer.step`);
 *                     either may hold fnmatch(3) wildcards (`torch.optim.*:*.step`)
 *   @FILE             the SPECs of FILE, one a line (blank lines and lines starting with # left out)
 *   lightning         the actions of Lightning's profilers: each Profiler.start(action_name) and stop, for
 *                     the lightning and pytorch_lightning packages, as SimpleProfiler names them
 *   torch             top-level module calls (named TYPE.forward), Tensor.backward, optimizer and scheduler
 *                     steps, DataLoader iterators' __next__, torch.save and torch.load */
#ifndef PW_PYFUNCS_H
#define PW_PYFUNCS_H

#include <stddef.h>

#define PW_ENV_PYTHON_FUNCTIONS "PROFWRAP_PYTHON_FUNCTIONS"
#define PW_PYFN_MAX 64            /* patterns in all */
#define PW_PYFN_MODULE_MAX 128    /* bytes of a module pattern, its NUL included */
#define PW_PYFN_QUALNAME_MAX 192  /* bytes of a qualified-name pattern, its NUL included */

enum pw_pyfn_how {
	PW_PYFN_CALL = 0,         /* each call is a range named by the function */
	PW_PYFN_ACTION_START = 1, /* a call opens a range named by its action_name argument */
	PW_PYFN_ACTION_STOP = 2,  /* a call closes the innermost action range */
	PW_PYFN_MODULE_CALL = 3,  /* torch's Module._call_impl: a range named TYPE.forward, outermost only */
	PW_PYFN_TORCH_READY = 4,  /* --pytorch: the program's first use of torch's training API, when PyTorch's
				   * NVTX emission is turned on */
};

struct pw_pyfn_pattern {
	char module[PW_PYFN_MODULE_MAX];
	char qualname[PW_PYFN_QUALNAME_MAX];
	enum pw_pyfn_how how;
};

struct pw_pyfn_set {
	struct pw_pyfn_pattern p[PW_PYFN_MAX];
	size_t n;
};

/* --pytorch (PROFWRAP_PYTORCH): PyTorch's own NVTX ranges turned on in the program, as
 * torch.autograd.profiler.emit_nvtx(record_shapes) does, from its first DataLoader iterator, module call,
 * backward or optimizer step on. */
#define PW_ENV_PYTORCH "PROFWRAP_PYTORCH"
enum pw_pytorch_mode { PW_PYTORCH_OFF = 0, PW_PYTORCH_AUTOGRAD_NVTX = 1, PW_PYTORCH_AUTOGRAD_SHAPES_NVTX = 2 };

/* "autograd-nvtx" or "autograd-shapes-nvtx" as its mode; -1 with the reason in why for anything else. */
int pw_pytorch_parse(const char *v, char *why, size_t whylen);

/* Adds to s the functions whose first call turns PyTorch's NVTX emission on. Returns 0, or -1 with why. */
int pw_pytorch_patterns(struct pw_pyfn_set *s, char *why, size_t whylen);

/* Parses spec into *s. Returns 0, or -1 with a one-line reason in why ("'x' is not MODULE:QUALNAME ..."). */
int pw_pyfn_parse(const char *spec, struct pw_pyfn_set *s, char *why, size_t whylen);

/* The first pattern of s from index from on that a function defined in module with qualified name qualname
 * matches: its index, or -1. */
int pw_pyfn_match(const struct pw_pyfn_set *s, size_t from, const char *module, const char *qualname);

#endif
