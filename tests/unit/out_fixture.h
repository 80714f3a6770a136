/* The cmocka fixture of the analysis tests: a fresh output directory with an empty raw/ for each test, and
 * the model the test made, freed (and the directory removed) by teardown even when the test fails.
 * PW_TEST_KEEP=1 keeps the directory, to read the reports a test wrote. */
#ifndef PW_TEST_OUT_FIXTURE_H
#define PW_TEST_OUT_FIXTURE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../../collector/model/analysis.h"

struct fx {
	char dir[64];
	char raw[96];
	struct pw_analysis an;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof *fx);
	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof fx->dir, "/tmp/pw-test-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->raw, sizeof fx->raw, "%s/raw", fx->dir);
	if (mkdir(fx->raw, 0755) != 0)
		return -1;
	*state = fx;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	pw_analysis_free(&fx->an);
	if (getenv("PW_TEST_KEEP"))
		fprintf(stderr, "kept %s\n", fx->dir);
	else
		nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

#endif
