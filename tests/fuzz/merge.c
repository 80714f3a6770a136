/* Fuzz target: the cross-rank merge (collector/merge/merge.c, pw_merge), which reads the rank<R>.json and
 * launcher-<host>.json files that other collectors (other nodes, other runs) wrote into the output directory.
 *
 * Input: up to 8 files separated by the line "=====" ("\n=====\n"); the i-th is written as rank<i>.json, or as
 * launcher-h<i>.json when it starts with "launcher:" (taken off), into a private directory (on /dev/shm where
 * there is one).
 *
 * Checked: no crash, leak or undefined behaviour; pw_merge returns 0 or -1 with a message; when it wrote a
 * summary, summary.json is one strict JSON document. */
#define _GNU_SOURCE
#include "fuzz.h"

#include "../../collector/merge/merge.h"

#define SEPARATOR "\n=====\n"
#define MAX_FILES 8
#define LAUNCHER "launcher:"

static char dir[128];

static void remove_dir(void)
{
	fuzz_clear_dir(dir);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		fuzz_make_dir(dir, sizeof dir, "merge");
		atexit(remove_dir);
	}
	const uint8_t *p = data, *end = data + size;
	for (int i = 0; i < MAX_FILES && p <= end; i++) {
		const uint8_t *sep = memmem(p, (size_t)(end - p), SEPARATOR, sizeof SEPARATOR - 1);
		const uint8_t *stop = sep && i < MAX_FILES - 1 ? sep : end;
		char name[32];
		if ((size_t)(stop - p) >= sizeof LAUNCHER - 1 && memcmp(p, LAUNCHER, sizeof LAUNCHER - 1) == 0) {
			p += sizeof LAUNCHER - 1;
			snprintf(name, sizeof name, "launcher-h%d.json", i);
		} else {
			snprintf(name, sizeof name, "rank%d.json", i);
		}
		char path[256];
		snprintf(path, sizeof path, "%s/%s", dir, name);
		fuzz_write_file(path, p, (size_t)(stop - p));
		if (stop == end)
			break;
		p = stop + sizeof SEPARATOR - 1;
	}
	char msg[1024];
	int rc = pw_merge(dir, 0, msg, sizeof msg);
	FUZZ_CHECK(rc == 0 || rc == -1);
	FUZZ_CHECK(msg[0] && !strchr(msg, '\n'));
	if (rc == 0) {
		char path[256];
		snprintf(path, sizeof path, "%s/summary.json", dir);
		fuzz_check_json(path);
	}
	fuzz_clear_dir(dir);
	return 0;
}
