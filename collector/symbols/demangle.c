/* See demangle.h. */
#define _GNU_SOURCE
#include "demangle.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* The Itanium C++ ABI's demangler: defined when the C++ runtime is linked in, else NULL (weak). */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status) __attribute__((weak));

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn find_demangler(void)
{
	static int looked;
	static demangle_fn fn;
	if (looked)
		return fn;
	looked = 1;
	if (__cxa_demangle) {
		fn = __cxa_demangle;
		return fn;
	}
	/* Never closed: the function stays valid for the life of the collector. */
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h) {
		void *sym = dlsym(h, "__cxa_demangle");
		memcpy(&fn, &sym, sizeof fn);
	}
	return fn;
}

int pw_demangle(const char *name, char *buf, size_t len)
{
	if (!name || strncmp(name, "_Z", 2) != 0 || !len)
		return 0;
	demangle_fn fn = find_demangler();
	if (!fn)
		return 0;
	int status = -1;
	char *out = fn(name, NULL, NULL, &status);
	if (status != 0 || !out) {
		free(out);
		return 0;
	}
	size_t n = strlen(out);
	if (n >= len)
		n = len - 1;
	memcpy(buf, out, n);
	buf[n] = 0;
	free(out);
	return 1;
}

/* Replaces, in s (of size `size`), the contents of every <...> opened at nesting depth `depth` (1 =
 * outermost) with "...". Returns 0, or -1 when the brackets do not balance (s is then unchanged). */
static int elide_templates(char *s, size_t size, int depth)
{
	int level = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '<')
			level++;
		else if (*p == '>' && --level < 0)
			return -1;
	}
	if (level)
		return -1;
	char out[4096];
	size_t w = 0;
	level = 0;
	for (const char *p = s; *p && w + 5 < sizeof out; p++) {
		if (*p == '<') {
			level++;
			if (level == depth) {
				memcpy(out + w, "<...", 4);
				w += 4;
				continue;
			}
		} else if (*p == '>') {
			level--;
			if (level == depth - 1) {
				out[w++] = '>';
				continue;
			}
		}
		if (level < depth)
			out[w++] = *p;
	}
	out[w] = 0;
	if (w < size)
		memcpy(s, out, w + 1);
	return 0;
}

static int max_template_depth(const char *s)
{
	int level = 0, max = 0;
	for (; *s; s++) {
		if (*s == '<' && ++level > max)
			max = level;
		else if (*s == '>')
			level--;
	}
	return max;
}

/* The parameter list: the last top-level "(...)" that ends the name. */
static void elide_params(char *s)
{
	size_t n = strlen(s);
	if (!n || s[n - 1] != ')')
		return;
	int level = 0;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == ')')
			level++;
		else if (s[i] == '(' && --level == 0) {
			if (n - i > 5)
				memcpy(s + i, "(...)", 6);
			return;
		}
	}
}

const char *pw_shorten_name(char *buf, size_t len, const char *name, size_t width)
{
	if (!name || !*name)
		name = "?";
	if (strlen(name) <= width || width < 8 || len < width + 1)
		return name;
	char work[4096];
	const char *src = strncmp(name, "void ", 5) == 0 ? name + 5 : name;
	size_t n = strlen(src);
	if (n >= sizeof work)
		n = sizeof work - 1;
	memcpy(work, src, n);
	work[n] = 0;
	elide_params(work);
	for (int d = max_template_depth(work); strlen(work) > width && d >= 1; d--)
		if (elide_templates(work, sizeof work, d) < 0)
			break;
	if (strlen(work) > width) { /* drop the namespaces and classes: at::native::f<...> -> f<...> */
		size_t end = strcspn(work, "<("); /* the qualified name ends at its template or parameters */
		char *last = NULL;
		for (char *p = strstr(work, "::"); p && p < work + end; p = strstr(p + 2, "::"))
			last = p;
		if (last)
			memmove(work, last + 2, strlen(last + 2) + 1);
	}
	n = strlen(work);
	if (n > width) { /* keep two thirds at the start, the rest at the end */
		size_t head = (width - 3) * 2 / 3, tail = width - 3 - head;
		memmove(work + head + 3, work + n - tail, tail + 1);
		memcpy(work + head, "...", 3);
	}
	memcpy(buf, work, strlen(work) + 1);
	return buf;
}
