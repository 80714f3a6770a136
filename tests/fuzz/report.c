/* Fuzz target: what `profwrap report DIR` does with one hostile raw trace: the whole analysis (pw_analyze:
 * calls, files, libraries, GPU calls and activity, NVTX ranges, stacks) and every report writer (text, JSON,
 * Chrome trace, folded stacks, the cross-rank summary).
 *
 * Input: the bytes of one raw trace, written as DIR/raw/0-fuzz-1.pwt in a private directory (on /dev/shm
 * where there is one: each input writes a handful of files).
 *
 * Checked: no crash, leak or undefined behaviour anywhere on the way, and every JSON file written
 * (rank<R>.json, launcher-<host>.json, .trace.json, summary.json) is one strict JSON document whatever the
 * strings of the input held. */
#define _GNU_SOURCE
#include "fuzz.h"

#include "../../collector/render.h"

static char dir[128], raw[160];

static void remove_dirs(void)
{
	fuzz_clear_dir(raw);
	rmdir(raw);
	fuzz_clear_dir(dir);
	rmdir(dir);
}

/* Checks the JSON files the reports wrote, then removes them all. */
static void check_and_clear(void)
{
	DIR *d = opendir(dir);
	FUZZ_CHECK(d != NULL);
	struct dirent *de;
	char path[512];
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0)
			fuzz_check_json(path);
	}
	closedir(d);
	fuzz_clear_dir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		fuzz_make_dir(dir, sizeof dir, "report");
		snprintf(raw, sizeof raw, "%s/raw", dir);
		FUZZ_CHECK(mkdir(raw, 0700) == 0);
		atexit(remove_dirs);
	}
	char path[256];
	snprintf(path, sizeof path, "%s/0-fuzz-1.pwt", raw);
	fuzz_write_file(path, data, size);
	struct pw_analysis a;
	char err[1024];
	if (pw_analyze(dir, &a, err, sizeof err) == 0) {
		FUZZ_CHECK(a.nranks > 0);
		int rc = pw_write_reports(&a, err, sizeof err);
		if (rc < 0)
			fprintf(stderr, "reports: %s\n", err);
		FUZZ_CHECK(rc >= 0);
		pw_analysis_free(&a);
	}
	check_and_clear();
	unlink(path);
	return 0;
}
