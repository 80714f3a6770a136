/* A small JSON reader for the tests of the report writers: parses a whole document into a tree and looks
 * values up by key and index, so that tests check figures rather than substrings. Numbers keep their text,
 * so 64-bit integers are read back exactly. Strings are kept as written (escapes are not decoded: the
 * figures the tests look at are plain ASCII). Include after <cmocka.h>. */
#ifndef PW_TEST_JSON_READER_H
#define PW_TEST_JSON_READER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum jr_type { JR_NULL, JR_BOOL, JR_NUM, JR_STR, JR_ARR, JR_OBJ };

struct jr {
	enum jr_type type;
	const char *text; /* numbers and strings: their text (strings without quotes) */
	size_t len;
	struct jr **items; /* arrays and objects */
	char **keys;       /* objects */
	size_t n;
};

struct jr_parser {
	const char *s;
	size_t i, n;
	int depth;
};

static inline void jr_free(struct jr *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jr_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v);
}

static inline void jr_ws(struct jr_parser *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\n' || p->s[p->i] == '\t' || p->s[p->i] == '\r'))
		p->i++;
}

static inline struct jr *jr_value(struct jr_parser *p);

/* A string's text (between the quotes) into *text and *len; returns 0 or -1. */
static inline int jr_string(struct jr_parser *p, const char **text, size_t *len)
{
	if (p->i >= p->n || p->s[p->i] != '"')
		return -1;
	size_t start = ++p->i;
	while (p->i < p->n && p->s[p->i] != '"') {
		if ((unsigned char)p->s[p->i] < 0x20)
			return -1;
		if (p->s[p->i] == '\\')
			p->i++;
		p->i++;
	}
	if (p->i >= p->n)
		return -1;
	*text = p->s + start;
	*len = p->i - start;
	p->i++;
	return 0;
}

static inline int jr_push(struct jr *v, struct jr *item, char *key)
{
	struct jr **items = realloc(v->items, (v->n + 1) * sizeof *items);
	if (!items)
		return -1;
	v->items = items;
	if (v->type == JR_OBJ) {
		char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
		if (!keys)
			return -1;
		v->keys = keys;
		v->keys[v->n] = key;
	}
	v->items[v->n++] = item;
	return 0;
}

static inline struct jr *jr_container(struct jr_parser *p, struct jr *v, char close)
{
	if (++p->depth > 64)
		goto bad;
	p->i++;
	jr_ws(p);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		p->depth--;
		return v;
	}
	for (;;) {
		char *key = NULL;
		jr_ws(p);
		if (close == '}') {
			const char *kt;
			size_t kl;
			if (jr_string(p, &kt, &kl))
				goto bad;
			key = strndup(kt, kl);
			jr_ws(p);
			if (p->i >= p->n || p->s[p->i] != ':') {
				free(key);
				goto bad;
			}
			p->i++;
		}
		struct jr *item = jr_value(p);
		if (!item || jr_push(v, item, key)) {
			jr_free(item);
			free(key);
			goto bad;
		}
		jr_ws(p);
		if (p->i >= p->n)
			goto bad;
		if (p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->s[p->i] != close)
			goto bad;
		p->i++;
		p->depth--;
		return v;
	}
bad:
	jr_free(v);
	return NULL;
}

static inline struct jr *jr_value(struct jr_parser *p)
{
	jr_ws(p);
	if (p->i >= p->n)
		return NULL;
	struct jr *v = calloc(1, sizeof *v);
	if (!v)
		return NULL;
	char c = p->s[p->i];
	if (c == '{') {
		v->type = JR_OBJ;
		return jr_container(p, v, '}');
	}
	if (c == '[') {
		v->type = JR_ARR;
		return jr_container(p, v, ']');
	}
	if (c == '"') {
		v->type = JR_STR;
		if (jr_string(p, &v->text, &v->len)) {
			free(v);
			return NULL;
		}
		return v;
	}
	static const struct {
		const char *word;
		enum jr_type type;
	} words[] = {{"null", JR_NULL}, {"true", JR_BOOL}, {"false", JR_BOOL}};
	for (size_t w = 0; w < 3; w++) {
		size_t wl = strlen(words[w].word);
		if (p->n - p->i >= wl && memcmp(p->s + p->i, words[w].word, wl) == 0) {
			v->type = words[w].type;
			v->text = p->s + p->i;
			v->len = wl;
			p->i += wl;
			return v;
		}
	}
	size_t start = p->i;
	if (p->s[p->i] == '-')
		p->i++;
	while (p->i < p->n && strchr("0123456789.eE+-", p->s[p->i]) && p->s[p->i])
		p->i++;
	if (p->i == start) {
		free(v);
		return NULL;
	}
	v->type = JR_NUM;
	v->text = p->s + start;
	v->len = p->i - start;
	return v;
}

/* The document in text[0..n), or NULL when it is not one JSON value. */
static inline struct jr *jr_parse(const char *text, size_t n)
{
	struct jr_parser p = {text, 0, n, 0};
	struct jr *v = jr_value(&p);
	jr_ws(&p);
	if (v && p.i != n) {
		jr_free(v);
		return NULL;
	}
	return v;
}

/* The member key of object v (fails the test when missing). */
static inline const struct jr *jr_get(const struct jr *v, const char *key)
{
	if (!v || v->type != JR_OBJ)
		fail_msg("not an object where \"%s\" was looked for", key);
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return v->items[i];
	fail_msg("no key \"%s\"", key);
	return NULL;
}

static inline int jr_has(const struct jr *v, const char *key)
{
	if (!v || v->type != JR_OBJ)
		return 0;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return 1;
	return 0;
}

static inline const struct jr *jr_at(const struct jr *v, size_t i)
{
	if (!v || v->type != JR_ARR || i >= v->n)
		fail_msg("no element %zu", i);
	return v->items[i];
}

static inline uint64_t jr_u64(const struct jr *v)
{
	if (!v || v->type != JR_NUM)
		fail_msg("not a number");
	char buf[64];
	snprintf(buf, sizeof buf, "%.*s", (int)v->len, v->text);
	if (strchr(buf, '.') || strchr(buf, '-') || strchr(buf, 'e'))
		fail_msg("not an unsigned integer: %s", buf);
	return strtoull(buf, NULL, 10);
}

static inline int64_t jr_i64(const struct jr *v)
{
	if (!v || v->type != JR_NUM)
		fail_msg("not a number");
	char buf[64];
	snprintf(buf, sizeof buf, "%.*s", (int)v->len, v->text);
	return strtoll(buf, NULL, 10);
}

static inline double jr_num(const struct jr *v)
{
	if (!v || v->type != JR_NUM)
		fail_msg("not a number");
	char buf[64];
	snprintf(buf, sizeof buf, "%.*s", (int)v->len, v->text);
	return strtod(buf, NULL);
}

/* Whether v is the string s. */
static inline int jr_is(const struct jr *v, const char *s)
{
	return v && v->type == JR_STR && v->len == strlen(s) && memcmp(v->text, s, v->len) == 0;
}

/* The element of array arr whose member key is the string s (fails when none). */
static inline const struct jr *jr_find(const struct jr *arr, const char *key, const char *s)
{
	if (!arr || arr->type != JR_ARR)
		fail_msg("not an array where %s=%s was looked for", key, s);
	for (size_t i = 0; i < arr->n; i++)
		if (jr_has(arr->items[i], key) && jr_is(jr_get(arr->items[i], key), s))
			return arr->items[i];
	fail_msg("no element with %s=%s", key, s);
	return NULL;
}

#endif
