#define _GNU_SOURCE
#include "json.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

void pw_json_init(struct pw_json *j, FILE *f, int pretty_depth)
{
	memset(j, 0, sizeof *j);
	j->f = f;
	j->pretty_depth = pretty_depth;
}

static void newline_indent(struct pw_json *j, int level)
{
	fputc('\n', j->f);
	for (int i = 0; i < level; i++)
		fputs("  ", j->f);
}

/* Starts a member of the innermost open container: the comma after the previous one, then the line break
 * where the layout wants one. */
static void begin_member(struct pw_json *j)
{
	if (j->depth == 0)
		return;
	if (j->has_members[j->depth])
		fputc(',', j->f);
	j->has_members[j->depth] = 1;
	if (j->depth <= j->pretty_depth)
		newline_indent(j, j->depth);
}

static void begin_value(struct pw_json *j)
{
	if (j->after_key)
		j->after_key = 0;
	else
		begin_member(j);
}

static void open_container(struct pw_json *j, char c)
{
	begin_value(j);
	fputc(c, j->f);
	assert(j->depth < PW_JSON_MAX_DEPTH);
	j->depth++;
	j->has_members[j->depth] = 0;
}

static void close_container(struct pw_json *j, char c)
{
	assert(j->depth > 0);
	if (j->has_members[j->depth] && j->depth <= j->pretty_depth)
		newline_indent(j, j->depth - 1);
	j->depth--;
	fputc(c, j->f);
}

void pw_json_begin_object(struct pw_json *j)
{
	open_container(j, '{');
}

void pw_json_end_object(struct pw_json *j)
{
	close_container(j, '}');
}

void pw_json_begin_array(struct pw_json *j)
{
	open_container(j, '[');
}

void pw_json_end_array(struct pw_json *j)
{
	close_container(j, ']');
}

size_t pw_utf8_sequence(const unsigned char *s, size_t n, size_t *invalid_len)
{
	unsigned char b = s[0], lo = 0x80, hi = 0xbf;
	size_t need;
	if (b >= 0xc2 && b <= 0xdf) {
		need = 1;
	} else if (b >= 0xe0 && b <= 0xef) {
		need = 2;
		if (b == 0xe0)
			lo = 0xa0; /* overlong */
		else if (b == 0xed)
			hi = 0x9f; /* UTF-16 surrogates */
	} else if (b >= 0xf0 && b <= 0xf4) {
		need = 3;
		if (b == 0xf0)
			lo = 0x90; /* overlong */
		else if (b == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		*invalid_len = 1;
		return 0;
	}
	for (size_t i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*invalid_len = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

/* The code point of a valid UTF-8 sequence of len bytes (2 or 3 here). */
static unsigned code_point(const unsigned char *s, size_t len)
{
	return len == 2 ? (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu)
			: (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
}

/* C1 controls (U+0080-U+009F: NEL among them) and U+2028/U+2029 are valid in JSON strings, but line-oriented
 * readers (Python's splitlines, JavaScript before ES2019) break lines there, so they are escaped. */
static int is_line_break_like(const unsigned char *s, size_t len)
{
	if (len == 2)
		return s[0] == 0xc2 && s[1] <= 0x9f;
	return len == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9);
}

static void write_string_body(FILE *f, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0, i = 0; /* s[run..i) is written as it is */
	while (i < n) {
		unsigned char b = s[i];
		if (b >= 0x80) {
			size_t invalid_len = 0;
			size_t len = pw_utf8_sequence(s + i, n - i, &invalid_len);
			if (len && !is_line_break_like(s + i, len)) {
				i += len;
				continue;
			}
			if (len) {
				fwrite(s + run, 1, i - run, f);
				fprintf(f, "\\u%04x", code_point(s + i, len));
				i += len;
				run = i;
				continue;
			}
			fwrite(s + run, 1, i - run, f);
			fputs("\xef\xbf\xbd", f);
			i += invalid_len;
			run = i;
			continue;
		}
		if (b >= 0x20 && b != '"' && b != '\\') {
			i++;
			continue;
		}
		fwrite(s + run, 1, i - run, f);
		if (b == '"' || b == '\\') {
			fputc('\\', f);
			fputc(b, f);
		} else {
			char esc[7] = {'\\', 'u', '0', '0', hex[b >> 4], hex[b & 15], 0};
			fputs(esc, f);
		}
		i++;
		run = i;
	}
	fwrite(s + run, 1, i - run, f);
}

static void write_string(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	write_string_body(f, (const unsigned char *)s, n);
	fputc('"', f);
}

void pw_json_key(struct pw_json *j, const char *key)
{
	begin_member(j);
	write_string(j->f, key ? key : "", key ? strlen(key) : 0);
	fputc(':', j->f);
	j->after_key = 1;
}

void pw_json_key_spaced(struct pw_json *j, const char *key)
{
	pw_json_key(j, key);
	fputc(' ', j->f);
}

void pw_json_string_n(struct pw_json *j, const char *s, size_t len)
{
	if (!s) {
		pw_json_null(j);
		return;
	}
	begin_value(j);
	write_string(j->f, s, len);
}

void pw_json_string(struct pw_json *j, const char *s)
{
	pw_json_string_n(j, s, s ? strlen(s) : 0);
}

void pw_json_int(struct pw_json *j, int64_t v)
{
	begin_value(j);
	fprintf(j->f, "%" PRId64, v);
}

void pw_json_uint(struct pw_json *j, uint64_t v)
{
	begin_value(j);
	fprintf(j->f, "%" PRIu64, v);
}

void pw_json_double(struct pw_json *j, double v, int decimals)
{
	if (!isfinite(v)) {
		pw_json_null(j);
		return;
	}
	if (decimals < 0)
		decimals = 0;
	if (decimals > 17)
		decimals = 17;
	char buf[400]; /* DBL_MAX in %.17f needs 327 */
	snprintf(buf, sizeof buf, "%.*f", decimals, v);
	/* A locale set by the program may have made the decimal point a comma; JSON wants '.'. */
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = '.';
	begin_value(j);
	fputs(buf, j->f);
}

void pw_json_bool(struct pw_json *j, int v)
{
	begin_value(j);
	fputs(v ? "true" : "false", j->f);
}

void pw_json_null(struct pw_json *j)
{
	begin_value(j);
	fputs("null", j->f);
}

void pw_json_kv_string(struct pw_json *j, const char *key, const char *s)
{
	pw_json_key(j, key);
	pw_json_string(j, s);
}

void pw_json_kv_int(struct pw_json *j, const char *key, int64_t v)
{
	pw_json_key(j, key);
	pw_json_int(j, v);
}

void pw_json_kv_uint(struct pw_json *j, const char *key, uint64_t v)
{
	pw_json_key(j, key);
	pw_json_uint(j, v);
}

void pw_json_kv_double(struct pw_json *j, const char *key, double v, int decimals)
{
	pw_json_key(j, key);
	pw_json_double(j, v, decimals);
}
