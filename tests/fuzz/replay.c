/* The replay driver: runs every file of a fuzz target's corpus through the target once, so that the corpus is
 * a regression test built by the normal compiler (and by `make SAN=1` with ASan+UBSan) without libFuzzer.
 * Linked with one target as fuzz_<target>; its corpus is PW_FUZZ_CORPUS/<target> (tests/fuzz/corpus/<target>).
 *
 * Usage: fuzz_<target> [FILE|DIR...]  (none: the corpus). Exit 0 when every input ran (a broken promise
 * aborts), 1 when there was nothing to run or a file could not be read. */
#define _GNU_SOURCE
#include "fuzz.h"

#include <errno.h>

/* Runs the file at path; returns 0, or -1 after saying why it could not be read. */
static int run_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* exactly its size, so that ASan sees a read one byte past the input */
	size_t size = (size_t)st.st_size;
	uint8_t *buf = malloc(size ? size : 1);
	FUZZ_CHECK(buf != NULL);
	size_t got = 0;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n <= 0) {
			fprintf(stderr, "replay: %s: %s\n", path, n < 0 ? strerror(errno) : "shorter than it was");
			close(fd);
			free(buf);
			return -1;
		}
		got += (size_t)n;
	}
	close(fd);
	LLVMFuzzerTestOneInput(buf, size);
	free(buf);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every plain file of dir, in name order. Returns how many ran, or -1. */
static int run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char **nn = realloc(names, (n + 1) * sizeof *names);
		FUZZ_CHECK(nn != NULL);
		names = nn;
		FUZZ_CHECK((names[n++] = strdup(de->d_name)) != NULL);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_name);
	int ran = 0, failed = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (run_file(path) < 0)
			failed = 1;
		else
			ran++;
		free(names[i]);
	}
	free(names);
	return failed ? -1 : ran;
}

static int run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return run_dir(path);
	return run_file(path) < 0 ? -1 : 1;
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	int ran = 0;
	if (argc < 2) {
		char corpus[4096];
		snprintf(corpus, sizeof corpus, "%s/%s", PW_FUZZ_CORPUS, strncmp(name, "fuzz_", 5) == 0 ? name + 5 : name);
		ran = run_path(corpus);
	} else {
		for (int i = 1; i < argc && ran >= 0; i++) {
			int n = run_path(argv[i]);
			ran = n < 0 ? -1 : ran + n;
		}
	}
	if (ran <= 0) {
		fprintf(stderr, "%s: %s\n", name, ran < 0 ? "an input could not be read" : "no input to replay");
		return 1;
	}
	printf("%s: %d inputs replayed\n", name, ran);
	return 0;
}
