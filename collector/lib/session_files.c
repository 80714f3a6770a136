/* The session files of OUT/raw (session_files.h). */
#define _GNU_SOURCE
#include "session_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/pw_session.h"

int pw_is_session_file(const char *name)
{
	size_t n = strlen(name);
	if (strcmp(name, "session.txt") == 0)
		return 1;
	return n > 12 && strncmp(name, "session-", 8) == 0 && strcmp(name + n - 4, ".txt") == 0;
}

static int write_at(int fd, const char *text, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t w = pwrite(fd, text + done, len - done, (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return 0;
}

int pw_session_file_create(const char *path, const char *text)
{
	int fd = pw_create_file(path);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX) < 0 || write_at(fd, text, strlen(text)) < 0) {
		int err = errno;
		close(fd);
		unlink(path);
		errno = err;
		return -1;
	}
	return fd;
}

int pw_session_file_rewrite(int fd, const char *text)
{
	size_t len = strlen(text);
	return write_at(fd, text, len) < 0 || ftruncate(fd, (off_t)len) < 0 ? -1 : 0;
}

int pw_session_file_held(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

/* The session_dir= value of the session file name in dirfd, or NULL. */
static char *session_dir_of(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	char line[8192], *dir = NULL;
	size_t klen = strlen(PW_SESSION_DIR_KEY);
	while (!dir && fgets(line, sizeof line, f))
		if (strncmp(line, PW_SESSION_DIR_KEY, klen) == 0) {
			line[strcspn(line, "\n")] = 0;
			dir = strdup(line + klen);
		}
	fclose(f);
	return dir;
}

char **pw_session_dirs(const char *raw_dir)
{
	size_t n = 0, cap = 8;
	char **dirs = calloc(cap + 1, sizeof *dirs);
	DIR *d = dirs ? opendir(raw_dir) : NULL;
	for (struct dirent *e; d && (e = readdir(d));) {
		char *dir = pw_is_session_file(e->d_name) ? session_dir_of(dirfd(d), e->d_name) : NULL;
		if (!dir)
			continue;
		if (n == cap) {
			char **more = realloc(dirs, (2 * cap + 1) * sizeof *dirs);
			if (!more) {
				free(dir);
				break;
			}
			dirs = more;
			cap *= 2;
		}
		dirs[n++] = dir;
		dirs[n] = NULL;
	}
	if (d)
		closedir(d);
	return dirs;
}

void pw_session_dirs_free(char **dirs)
{
	for (size_t i = 0; dirs && dirs[i]; i++)
		free(dirs[i]);
	free(dirs);
}
