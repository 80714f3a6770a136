#define _GNU_SOURCE
#include "pw_record.h"

#include <string.h>

const struct pw_event_info pw_events[PW_EV_COUNT] = {
#define PW_X(id, dom, name, kind) [PW_EV_##id] = {name, PW_DOM_##dom, kind},
	PW_EVENT_LIST(PW_X)
#undef PW_X
};

const char *const pw_domain_names[PW_DOM_COUNT] = {
#define PW_X(id, str) [PW_DOM_##id] = str,
	PW_DOMAIN_LIST(PW_X)
#undef PW_X
};

int pw_domain_from_name(const char *name, size_t len)
{
	for (int d = 0; d < PW_DOM_COUNT; d++)
		if (strlen(pw_domain_names[d]) == len && memcmp(pw_domain_names[d], name, len) == 0)
			return d;
	return -1;
}

size_t pw_range_fold(const char *name, size_t len, char *buf, size_t size)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n + 1 < size; i++) {
		if (name[i] >= '0' && name[i] <= '9') {
			if (n == 0 || buf[n - 1] != '#')
				buf[n++] = '#';
		} else {
			buf[n++] = name[i];
		}
	}
	if (size)
		buf[n] = 0;
	return n;
}

int pw_stack_parse(const void *p, size_t len, struct pw_stack_view *v)
{
	struct pw_stack s;
	if (!p || len < sizeof s)
		return -1;
	memcpy(&s, p, sizeof s);
	if (s.magic != PW_STACK_MAGIC || s.native > PW_STACK_MAX_NATIVE || s.python > PW_STACK_MAX_PYTHON)
		return -1;
	const uint8_t *b = p;
	size_t native_bytes = (size_t)s.native * 8;
	if (len - sizeof s < native_bytes)
		return -1;
	v->flags = s.flags;
	v->native_count = s.native;
	v->native = b + sizeof s;
	v->python = v->native + native_bytes;
	v->end = b + len;
	/* every Python frame must lie wholly inside the entry */
	const uint8_t *pos = v->python;
	for (uint32_t i = 0; i < s.python; i++) {
		struct pw_py_frame f;
		if ((size_t)(v->end - pos) < sizeof f)
			return -1;
		memcpy(&f, pos, sizeof f);
		size_t size = pw_py_frame_size(f.file_len, f.func_len);
		if ((size_t)(v->end - pos) < size)
			return -1;
		pos += size;
	}
	v->python_count = s.python;
	return 0;
}

uint64_t pw_stack_native(const struct pw_stack_view *v, uint32_t i)
{
	uint64_t a = 0;
	if (i < v->native_count)
		memcpy(&a, v->native + (size_t)i * 8, sizeof a);
	return a;
}

int pw_stack_py_next(const struct pw_stack_view *v, const uint8_t **pos, uint32_t *line, const char **file,
		     uint32_t *file_len, const char **func, uint32_t *func_len)
{
	struct pw_py_frame f;
	if (!*pos || (size_t)(v->end - *pos) < sizeof f)
		return 0;
	memcpy(&f, *pos, sizeof f);
	size_t size = pw_py_frame_size(f.file_len, f.func_len);
	if ((size_t)(v->end - *pos) < size)
		return 0;
	*line = f.line;
	*file = (const char *)*pos + sizeof f;
	*file_len = f.file_len;
	*func = *file + f.file_len;
	*func_len = f.func_len;
	*pos += size;
	return 1;
}

/* The end of a decoration's value at s: digits (or the preload's folded '#'), or a bracketed list. */
static const char *decoration_end(const char *s)
{
	if (*s == '[') {
		const char *close = strchr(s, ']');
		return close ? close + 1 : NULL;
	}
	const char *p = s;
	while ((*p >= '0' && *p <= '9') || *p == '#')
		p++;
	return p > s ? p : NULL;
}

size_t pw_range_undecorate(char *name)
{
	static const char *const decorations[] = {", seq = ", ", op_id = ", ", input_op_ids = "};
	size_t len = strlen(name);
	for (size_t d = 0; d < sizeof decorations / sizeof decorations[0]; d++) {
		size_t dl = strlen(decorations[d]);
		char *at = name;
		while ((at = strstr(at, decorations[d]))) {
			const char *end = decoration_end(at + dl);
			if (!end || (*end && *end != ',')) {
				at += dl;
				continue;
			}
			memmove(at, end, strlen(end) + 1);
			len -= (size_t)(end - at);
		}
	}
	return len;
}
