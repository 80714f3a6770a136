/* Reading back what the report writers put in a test's output directory (out_fixture.h): a file's text,
 * and a JSON report parsed (json_reader.h). Include after cmocka.h. */
#ifndef PW_TEST_OUT_FILES_H
#define PW_TEST_OUT_FILES_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_reader.h"
#include "out_fixture.h"

/* The whole of OUT/name, NUL-terminated, its length in *len; the test fails when it was not written. */
static char *fx_slurp(const struct fx *fx, const char *name, size_t *len)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", fx->dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("%s was not written: %s", path, strerror(errno));
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (!got)
			break;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* OUT/name parsed, wrapped as [tree, text] because the tree points into the text: items[0] is the
 * document; fx_json_free() frees both. The test fails when it is not valid JSON. */
static struct jr *fx_json(const struct fx *fx, const char *name)
{
	size_t n;
	char *text = fx_slurp(fx, name, &n);
	struct jr *v = jr_parse(text, n);
	if (!v)
		fail_msg("%s is not valid JSON", name);
	struct jr *holder = calloc(1, sizeof *holder);
	assert_non_null(holder);
	holder->type = JR_ARR;
	holder->items = calloc(2, sizeof *holder->items);
	assert_non_null(holder->items);
	holder->items[0] = v;
	holder->items[1] = calloc(1, sizeof(struct jr));
	assert_non_null(holder->items[1]);
	holder->items[1]->type = JR_STR;
	holder->items[1]->text = text;
	holder->n = 2;
	return holder;
}

static void fx_json_free(struct jr *holder)
{
	free((char *)holder->items[1]->text);
	jr_free(holder);
}

#endif
