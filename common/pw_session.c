#define _GNU_SOURCE
#include "pw_session.h"

#include "pw_rank.h"
#include "pw_record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int fits(int n, size_t size)
{
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

uint64_t pw_hash64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int pw_session_base(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
	if (xdg && xdg[0] == '/')
		return fits(snprintf(buf, size, "%s/profwrap", xdg), size);
	int rc = fits(snprintf(buf, size, "/tmp/profwrap-%u", (unsigned)getuid()), size);
	struct stat st;
	/* anyone can take a name in /tmp first: one that is not this user's private directory is passed over */
	if (rc || lstat(buf, &st) < 0 || (S_ISDIR(st.st_mode) && st.st_uid == getuid() && !(st.st_mode & 077)))
		return rc;
	if (!home || home[0] != '/')
		return rc; /* nowhere else: the caller's pw_private_dir() refuses it */
	return fits(snprintf(buf, size, "%s/.profwrap", home), size);
}

int pw_session_dir_for_output(const char *output, char *buf, size_t size)
{
	char abs[4096], base[3072];
	int n;
	if (output[0] == '/') {
		n = snprintf(abs, sizeof abs, "%s", output);
	} else {
		char cwd[3072];
		if (!getcwd(cwd, sizeof cwd))
			return -errno;
		size_t cl = strlen(cwd);
		n = snprintf(abs, sizeof abs, "%s%s%s", cwd, cl && cwd[cl - 1] == '/' ? "" : "/", output);
	}
	if (fits(n, sizeof abs))
		return -ENAMETOOLONG;
	size_t len = strlen(abs);
	while (len > 1 && abs[len - 1] == '/')
		abs[--len] = 0;
	int rc = pw_session_base(base, sizeof base);
	if (rc)
		return rc;
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	abs[len] = '\n'; /* path, separator, host: one string to hash */
	size_t hl = strnlen(host, sizeof host);
	if (len + 1 + hl >= sizeof abs)
		return -ENAMETOOLONG;
	memcpy(abs + len + 1, host, hl);
	return fits(snprintf(buf, size, "%s/o-%016llx", base, (unsigned long long)pw_hash64(abs, len + 1 + hl)),
		    size);
}

int pw_expand_output(const char *pat, char *buf, size_t size, char *why, size_t whylen)
{
	size_t n = 0;
	for (const char *p = pat; *p; p++) {
		char piece[256];
		const char *add = piece;
		size_t add_len;
		if (*p != '%') {
			add = p;
			add_len = 1;
		} else if (p[1] == '%') {
			add = "%";
			add_len = 1;
			p++;
		} else if (p[1] == 'h') {
			if (gethostname(piece, sizeof piece - 1) < 0)
				snprintf(piece, sizeof piece, "unknown");
			piece[sizeof piece - 1] = 0;
			add_len = strlen(piece);
			p++;
		} else if (p[1] == 'p') {
			add_len = (size_t)snprintf(piece, sizeof piece, "%d", (int)getpid());
			p++;
		} else if (p[1] == 'r') {
			int r = pw_rank_detect(getenv);
			add_len = (size_t)snprintf(piece, sizeof piece, "%d", r < 0 ? 0 : r);
			p++;
		} else if (p[1] == 'q' && p[2] == '{') {
			const char *close = strchr(p + 3, '}');
			if (!close || close == p + 3) {
				snprintf(why, whylen, "'%s': %%q{ needs a variable name and a closing }", pat);
				return -1;
			}
			if ((size_t)(close - (p + 3)) >= sizeof piece) {
				snprintf(why, whylen, "'%s': the variable name in %%q{} is too long", pat);
				return -1;
			}
			memcpy(piece, p + 3, (size_t)(close - (p + 3)));
			piece[close - (p + 3)] = 0;
			add = getenv(piece);
			if (!add)
				add = "";
			add_len = strlen(add);
			p = close;
		} else {
			snprintf(why, whylen, "'%s': unknown %%%c (known: %%h host, %%p pid, %%r rank, %%q{VAR}, %%%%)",
				 pat, p[1] ? p[1] : ' ');
			return -1;
		}
		if (n + add_len >= size) {
			snprintf(why, whylen, "'%s': the expanded path is too long", pat);
			return -1;
		}
		memcpy(buf + n, add, add_len);
		n += add_len;
	}
	if (!size) {
		snprintf(why, whylen, "'%s': no room for the path", pat);
		return -1;
	}
	buf[n] = 0;
	return 0;
}

int pw_session_dir_for_cli(int pid, uint64_t nonce, char *buf, size_t size)
{
	char base[3072];
	int rc = pw_session_base(base, sizeof base);
	if (rc)
		return rc;
	return fits(snprintf(buf, size, "%s/s-%d-%016llx", base, pid, (unsigned long long)nonce), size);
}

int pw_session_path(const char *dir, const char *leaf, char *buf, size_t size)
{
	return fits(snprintf(buf, size, "%s/%s", dir, leaf), size);
}

int pw_shm_name(int uid, int pid, uint64_t nonce, char *buf, size_t size)
{
	return fits(snprintf(buf, size, "/profwrap.%d.%d.%016llx", uid, pid, (unsigned long long)nonce), size);
}

int pw_shm_name_is_of(const char *name, int uid, int pid)
{
	char prefix[64];
	int n = snprintf(prefix, sizeof prefix, "/profwrap.%d.%d.", uid, pid);
	if (strncmp(name, prefix, (size_t)n) != 0 || strlen(name + n) != 16)
		return 0;
	return strspn(name + n, "0123456789abcdef") == 16;
}

/* splitmix64's finaliser: every input bit reaches every output bit. */
static uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t pw_random_u64(void)
{
	uint64_t v;
	/* GRND_NONBLOCK: early in boot, before the pool is ready, /dev/urandom answers where getrandom would wait */
	if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v)
		return v;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, &v, sizeof v);
		close(fd);
		if (n == (ssize_t)sizeof v)
			return v;
	}
	/* Neither (a seccomp filter, no /dev): nanoseconds of two clocks, the pid, and the addresses of the stack
	 * and of this code, which ASLR places anew in every process. */
	static _Atomic uint64_t calls;
	struct timespec rt, mono;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	uint64_t x = mix64((uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
	x = mix64(x ^ ((uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec));
	x = mix64(x ^ (uint64_t)getpid() ^ ((uint64_t)(uintptr_t)&rt << 16));
	return mix64(x ^ (uint64_t)(uintptr_t)pw_random_u64 ^ calls++);
}

int pw_create_file(const char *path)
{
	/* O_EXCL fails on any name that exists, a symbolic link included, without following it; then the name is
	 * removed (unlink removes a link, not what it points to) and the creation tried again. Another process
	 * that keeps putting the name back makes this fail rather than loop. */
	for (int tries = 0; tries < 4; tries++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
		if (unlink(path) < 0 && errno != ENOENT)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

int pw_output_dirs(const char *out, char *why, size_t whylen)
{
	char raw[4352];
	struct stat st;
	if (mkdir(out, 0700) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create output directory %s: %s", out, strerror(errno));
		return -1;
	}
	if (stat(out, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "output %s is not a directory", out);
		return -1;
	}
	if (fits(snprintf(raw, sizeof raw, "%s/raw", out), sizeof raw)) {
		snprintf(why, whylen, "output directory name too long: %.100s...", out);
		return -1;
	}
	if (mkdir(raw, 0700) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create %s: %s", raw, strerror(errno));
		return -1;
	}
	/* lstat: a link named raw would send the traces (and -f's removals) to wherever it points */
	if (lstat(raw, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "%s is not a directory (%s); remove it", raw,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
		return -1;
	}
	return 0;
}

/* ---- settings ---- */

#define SET_SIZE 1 /* K, M, G suffixes */
#define SET_POW2 2

static const struct setting_def {
	const char *env;
	uint64_t min, max, dflt;
	unsigned flags;
} settings[PW_SET_COUNT] = {
	[PW_SET_RING_SIZE] = {PW_ENV_RING_SIZE, 4096, 1ull << 30, 2ull << 20, SET_SIZE | SET_POW2},
	[PW_SET_LANES] = {PW_ENV_LANES, 1, 1023, 128, 0},
	[PW_SET_ARENA_SIZE] = {PW_ENV_ARENA_SIZE, 4096, 4ull << 30, 16ull << 20, SET_SIZE},
	[PW_SET_CUPTI_BUFFER_SIZE] = {PW_ENV_CUPTI_BUFFER_SIZE, 4096, 1ull << 30, 2ull << 20, SET_SIZE},
	[PW_SET_CUPTI_BUFFERS] = {PW_ENV_CUPTI_BUFFERS, 1, 4096, 128, 0},
	[PW_SET_CUPTI_FLUSH_MS] = {PW_ENV_CUPTI_FLUSH_MS, 1, 3600000, 1000, 0},
	[PW_SET_TRACE] = {PW_ENV_TRACE, 0, 0, (1u << PW_DOM_COUNT) - 1, 0},
	[PW_SET_FOLLOW_FORK] = {PW_ENV_FOLLOW_FORK, 0, 1, 1, 0},
	[PW_SET_QUIET] = {PW_ENV_QUIET, 0, 1, 0, 0},
	[PW_SET_CLOCK] = {PW_ENV_CLOCK, 0, 0, PW_CLOCK_SETTING_AUTO, 0},
	[PW_SET_RANK] = {"PROFWRAP_RANK", 0, INT32_MAX, 0, 0},
	[PW_SET_WORLD_SIZE] = {"PROFWRAP_WORLD_SIZE", 1, INT32_MAX, 0, 0},
};

const char *pw_setting_env(enum pw_setting s)
{
	return settings[s].env;
}

/* value quoted for a one-line message: control bytes as '?', cut after 48 bytes */
static void quote(char *buf, size_t size, const char *value)
{
	size_t n = 0, len = strlen(value);
	for (size_t i = 0; i < len && i < 48 && n + 2 < size; i++)
		buf[n++] = (unsigned char)value[i] < 0x20 || value[i] == 0x7f ? '?' : value[i];
	buf[n] = 0;
	if (len > 48 && n + 4 < size)
		strcat(buf, "...");
}

/* How a value is described ("a whole number from 1 to 1023"), for the message that refuses another. */
static void describe_range(const struct setting_def *d, char *buf, size_t size)
{
	static const char *const units[] = {"", "K", "M", "G"};
	char lo[32], hi[32];
	uint64_t b[2] = {d->min, d->max};
	char *out[2] = {lo, hi};
	for (int i = 0; i < 2; i++) {
		int u = 0;
		while ((d->flags & SET_SIZE) && u < 3 && b[i] >= 1024 && b[i] % 1024 == 0) {
			b[i] /= 1024;
			u++;
		}
		snprintf(out[i], sizeof lo, "%llu%s", (unsigned long long)b[i], units[u]);
	}
	snprintf(buf, size, "%s from %s to %s%s", d->flags & SET_POW2 ? "a power of two" : "a whole number", lo, hi,
		 d->flags & SET_SIZE ? " (bytes; K, M, G suffixes)" : "");
}

static int parse_number(const struct setting_def *d, const char *s, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		return -1;
	int shift = 0;
	if (d->flags & SET_SIZE)
		shift = *p == 'K' || *p == 'k' ? 10 : *p == 'M' || *p == 'm' ? 20 : *p == 'G' || *p == 'g' ? 30 : 0;
	if (shift)
		p++;
	if (*p || v > (UINT64_MAX >> shift))
		return -1;
	v <<= shift;
	if (v < d->min || v > d->max || ((d->flags & SET_POW2) && (v & (v - 1))))
		return -1;
	*out = v;
	return 0;
}

static int parse_domains(const char *list, uint64_t *out, char *bad, size_t badlen)
{
	uint64_t mask = 0;
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");
		int d = pw_domain_from_name(p, len);
		if (len == 3 && memcmp(p, "all", 3) == 0) {
			mask |= (1u << PW_DOM_COUNT) - 1;
		} else if (d >= 0) {
			mask |= 1u << d;
		} else {
			char name[64];
			snprintf(name, sizeof name, "%.*s", (int)(len < 60 ? len : 60), p);
			quote(bad, badlen, name);
			return -1;
		}
		p += len;
		if (!*p)
			break;
	}
	*out = mask;
	return 0;
}

int pw_setting_parse(enum pw_setting s, const char *value, uint64_t *out, char *why, size_t whylen)
{
	const struct setting_def *d = &settings[s];
	char q[64], range[96];
	quote(q, sizeof q, value);
	if (s == PW_SET_TRACE) {
		char bad[64];
		if (parse_domains(value, out, bad, sizeof bad) == 0)
			return 0;
		int n = bad[0] ? snprintf(why, whylen, "'%s' holds the unknown domain '%s' (known: all", q, bad)
			       : snprintf(why, whylen, "'%s' holds an empty domain name (known: all", q);
		for (int i = 0; i < PW_DOM_COUNT && n > 0 && (size_t)n < whylen; i++)
			n += snprintf(why + n, whylen - (size_t)n, ", %s", pw_domain_names[i]);
		if (n > 0 && (size_t)n < whylen)
			snprintf(why + n, whylen - (size_t)n, ")");
		return -1;
	}
	if (s == PW_SET_CLOCK) {
		*out = strcmp(value, "tsc") == 0 ? PW_CLOCK_SETTING_TSC
		       : strcmp(value, "monotonic") == 0 ? PW_CLOCK_SETTING_MONOTONIC
							    : PW_CLOCK_SETTING_AUTO;
		if (*out != PW_CLOCK_SETTING_AUTO)
			return 0;
		snprintf(why, whylen, "'%s' is neither tsc nor monotonic", q);
		return -1;
	}
	if (parse_number(d, value, out) == 0)
		return 0;
	if (d->max == 1) {
		snprintf(why, whylen, "'%s' is neither 0 nor 1", q);
		return -1;
	}
	describe_range(d, range, sizeof range);
	snprintf(why, whylen, "'%s' is not %s", q, range);
	return -1;
}

int pw_settings_from_env(struct pw_settings *s, pw_env_fn env, unsigned skip, char *why, size_t whylen)
{
	int refused = 0;
	for (int i = 0; i < PW_SET_COUNT; i++) {
		const char *v = skip & (1u << i) ? NULL : env(settings[i].env);
		s->value[i] = settings[i].dflt;
		if (!v || !*v)
			continue;
		char reason[400];
		if (pw_setting_parse((enum pw_setting)i, v, &s->value[i], reason, sizeof reason) == 0)
			continue;
		s->value[i] = settings[i].dflt;
		if (!refused++)
			snprintf(why, whylen, "%s=%s", settings[i].env, reason);
	}
	return refused;
}

int pw_private_dir(const char *path)
{
	struct stat st;
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	if (lstat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
		errno = EPERM;
		return -1;
	}
	return 0;
}
