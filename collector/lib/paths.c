#include "paths.h"

#include <string.h>

/* A path being built in out: n bytes so far (at least "/"), the first physical of them free of symlinks. */
struct built {
	char *out;
	size_t size, n, physical;
	int overflow;
};

/* Steps back over the last component: ".." of one the kernel named, or of the root. */
static int pop_physical(struct built *b)
{
	if (b->n == 1)
		return 1;
	if (b->n > b->physical)
		return 0;
	size_t slash = b->n - 1;
	while (b->out[slash] != '/')
		slash--;
	b->n = slash ? slash : 1;
	b->physical = b->n;
	return 1;
}

static void append(struct built *b, const char *c, size_t len, int physical)
{
	size_t sep = b->n > 1;
	if (b->n + sep + len >= b->size) {
		b->overflow = 1;
		return;
	}
	if (sep)
		b->out[b->n++] = '/';
	memcpy(b->out + b->n, c, len);
	b->n += len;
	if (physical)
		b->physical = b->n;
}

static void add_components(struct built *b, const char *s, size_t len, int physical)
{
	for (size_t i = 0; i < len && !b->overflow;) {
		size_t j = i;
		while (j < len && s[j] != '/')
			j++;
		size_t clen = j - i;
		int dot = clen == 1 && s[i] == '.', dotdot = clen == 2 && s[i] == '.' && s[i + 1] == '.';
		if (clen && !dot && !(dotdot && pop_physical(b)))
			append(b, s + i, clen, physical);
		i = j + 1;
	}
}

size_t pw_path_resolve(const char *dir, size_t dir_len, int dir_physical, const char *path, size_t len, char *out,
		       size_t size)
{
	const char *nul = memchr(path, 0, len);
	if (nul)
		len = (size_t)(nul - path);
	int relative = len == 0 || path[0] != '/';
	if (size < 2 || (relative && (!dir || !dir_len || dir[0] != '/')))
		return 0;
	struct built b = {out, size, 1, 1, 0};
	out[0] = '/';
	if (relative)
		add_components(&b, dir, dir_len, dir_physical);
	add_components(&b, path, len, 0);
	if (b.overflow)
		return 0;
	out[b.n] = 0;
	return b.n;
}
