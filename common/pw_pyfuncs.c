/* --python-functions: parsing and matching (pw_pyfuncs.h). */
#define _GNU_SOURCE
#include "pw_pyfuncs.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Lightning's profilers: Trainer wraps each action in profiler.profile(name), which calls start(name) and
 * stop(name) of the profiler in use (PassThroughProfiler when none was asked for). */
static const struct pw_pyfn_pattern lightning[] = {
	{"lightning.pytorch.profilers.*", "*Profiler.start", PW_PYFN_ACTION_START},
	{"lightning.pytorch.profilers.*", "*Profiler.stop", PW_PYFN_ACTION_STOP},
	{"pytorch_lightning.profilers.*", "*Profiler.start", PW_PYFN_ACTION_START},
	{"pytorch_lightning.profilers.*", "*Profiler.stop", PW_PYFN_ACTION_STOP},
	{"pytorch_lightning.profiler.*", "*Profiler.start", PW_PYFN_ACTION_START},
	{"pytorch_lightning.profiler.*", "*Profiler.stop", PW_PYFN_ACTION_STOP},
};

static const struct pw_pyfn_pattern torch[] = {
	{"torch.nn.modules.module", "Module._call_impl", PW_PYFN_MODULE_CALL},
	{"torch._tensor", "Tensor.backward", PW_PYFN_CALL},
	{"torch.optim.*", "*.step", PW_PYFN_CALL},
	{"torch.utils.data.dataloader", "_BaseDataLoaderIter.__next__", PW_PYFN_CALL},
	{"torch.serialization", "save", PW_PYFN_CALL},
	{"torch.serialization", "load", PW_PYFN_CALL},
};

/* The first of these a program calls has torch imported and is about to train. */
static const struct pw_pyfn_pattern torch_ready[] = {
	{"torch.utils.data.dataloader", "DataLoader.__iter__", PW_PYFN_TORCH_READY},
	{"torch.nn.modules.module", "Module._call_impl", PW_PYFN_TORCH_READY},
	{"torch._tensor", "Tensor.backward", PW_PYFN_TORCH_READY},
	{"torch.optim.optimizer", "Optimizer.zero_grad", PW_PYFN_TORCH_READY},
};

static int add(struct pw_pyfn_set *s, const struct pw_pyfn_pattern *p, char *why, size_t whylen)
{
	if (s->n >= PW_PYFN_MAX) {
		snprintf(why, whylen, "more than %d Python function patterns", PW_PYFN_MAX);
		return -1;
	}
	s->p[s->n++] = *p;
	return 0;
}

static int add_preset(struct pw_pyfn_set *s, const struct pw_pyfn_pattern *p, size_t n, char *why, size_t whylen)
{
	for (size_t i = 0; i < n; i++)
		if (add(s, &p[i], why, whylen) < 0)
			return -1;
	return 0;
}

static int parse_one(const char *spec, size_t len, struct pw_pyfn_set *s, int in_file, char *why, size_t whylen);

/* The SPECs of a file, one a line. */
static int parse_file(const char *path, struct pw_pyfn_set *s, char *why, size_t whylen)
{
	char buf[16384];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "cannot read the Python functions file %s: %s", path, strerror(errno));
		return -1;
	}
	size_t len = 0;
	ssize_t got;
	while (len < sizeof buf && (got = read(fd, buf + len, sizeof buf - len)) > 0)
		len += (size_t)got;
	close(fd);
	if (len == sizeof buf) {
		snprintf(why, whylen, "the Python functions file %s is over %zu bytes", path, sizeof buf - 1);
		return -1;
	}
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - buf) : len, a = at, b = end;
		while (a < b && (buf[a] == ' ' || buf[a] == '\t'))
			a++;
		while (b > a && (buf[b - 1] == ' ' || buf[b - 1] == '\t' || buf[b - 1] == '\r'))
			b--;
		if (b > a && buf[a] != '#' && parse_one(buf + a, b - a, s, 1, why, whylen) < 0)
			return -1;
		at = end + 1;
	}
	return 0;
}

static int parse_one(const char *spec, size_t len, struct pw_pyfn_set *s, int in_file, char *why, size_t whylen)
{
	char text[PW_PYFN_MODULE_MAX + PW_PYFN_QUALNAME_MAX];
	if (len >= sizeof text) {
		snprintf(why, whylen, "Python function '%.40s...' is too long", spec);
		return -1;
	}
	memcpy(text, spec, len);
	text[len] = 0;
	if (strcmp(text, "lightning") == 0)
		return add_preset(s, lightning, sizeof lightning / sizeof lightning[0], why, whylen);
	if (strcmp(text, "torch") == 0)
		return add_preset(s, torch, sizeof torch / sizeof torch[0], why, whylen);
	if (text[0] == '@') {
		if (in_file) {
			snprintf(why, whylen, "'%s' in a Python functions file: files do not nest", text);
			return -1;
		}
		return parse_file(text + 1, s, why, whylen);
	}
	char *colon = strchr(text, ':');
	size_t mlen = colon ? (size_t)(colon - text) : 0;
	if (!colon || !mlen || !colon[1] || strchr(colon + 1, ':') || mlen >= PW_PYFN_MODULE_MAX ||
	    strlen(colon + 1) >= PW_PYFN_QUALNAME_MAX) {
		snprintf(why, whylen, "'%s' is not MODULE:QUALNAME, @FILE, lightning or torch", text);
		return -1;
	}
	struct pw_pyfn_pattern p = {.how = PW_PYFN_CALL};
	memcpy(p.module, text, mlen);
	snprintf(p.qualname, sizeof p.qualname, "%s", colon + 1);
	return add(s, &p, why, whylen);
}

int pw_pyfn_parse(const char *spec, struct pw_pyfn_set *s, char *why, size_t whylen)
{
	s->n = 0;
	if (!spec || !*spec) {
		snprintf(why, whylen, "no Python function named");
		return -1;
	}
	for (const char *at = spec;;) {
		const char *comma = strchr(at, ',');
		size_t len = comma ? (size_t)(comma - at) : strlen(at);
		if (!len) {
			snprintf(why, whylen, "an empty entry in the Python functions '%s'", spec);
			return -1;
		}
		if (parse_one(at, len, s, 0, why, whylen) < 0)
			return -1;
		if (!comma)
			break;
		at = comma + 1;
	}
	if (!s->n) {
		snprintf(why, whylen, "no Python function named");
		return -1;
	}
	return 0;
}

int pw_pyfn_match(const struct pw_pyfn_set *s, size_t from, const char *module, const char *qualname)
{
	for (size_t i = from; i < s->n; i++)
		if (fnmatch(s->p[i].module, module, 0) == 0 && fnmatch(s->p[i].qualname, qualname, 0) == 0)
			return (int)i;
	return -1;
}

int pw_pytorch_parse(const char *v, char *why, size_t whylen)
{
	if (v && strcmp(v, "autograd-nvtx") == 0)
		return PW_PYTORCH_AUTOGRAD_NVTX;
	if (v && strcmp(v, "autograd-shapes-nvtx") == 0)
		return PW_PYTORCH_AUTOGRAD_SHAPES_NVTX;
	snprintf(why, whylen, "'%s' is not autograd-nvtx or autograd-shapes-nvtx", v ? v : "");
	return -1;
}

int pw_pytorch_patterns(struct pw_pyfn_set *s, char *why, size_t whylen)
{
	/* first: a torch pattern of --python-functions for the same code must not hide them */
	struct pw_pyfn_set given = *s;
	s->n = 0;
	if (add_preset(s, torch_ready, sizeof torch_ready / sizeof torch_ready[0], why, whylen) < 0)
		return -1;
	for (size_t i = 0; i < given.n; i++)
		if (add(s, &given.p[i], why, whylen) < 0)
			return -1;
	return 0;
}
