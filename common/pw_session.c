#define _GNU_SOURCE
#include "pw_session.h"

#include "pw_rank.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (xdg && xdg[0] == '/')
		return fits(snprintf(buf, size, "%s/profwrap", xdg), size);
	return fits(snprintf(buf, size, "/tmp/profwrap-%u", (unsigned)getuid()), size);
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
	return fits(snprintf(buf, size, "%s/s-%d-%llx", base, pid, (unsigned long long)nonce), size);
}

int pw_session_path(const char *dir, const char *leaf, char *buf, size_t size)
{
	return fits(snprintf(buf, size, "%s/%s", dir, leaf), size);
}

int pw_shm_name(int uid, int pid, uint64_t nonce, char *buf, size_t size)
{
	return fits(snprintf(buf, size, "/profwrap.%d.%d.%llx", uid, pid, (unsigned long long)nonce), size);
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
