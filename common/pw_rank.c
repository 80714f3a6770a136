#define _GNU_SOURCE
#include "pw_rank.h"

#include <stdint.h>

int pw_parse_nonneg_int(const char *s)
{
	if (!s || !*s)
		return -1;
	int64_t v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > INT32_MAX)
			return -1;
	}
	return (int)v;
}

static int first_int(pw_env_fn env, const char *const *names, int min)
{
	for (; *names; names++) {
		int v = pw_parse_nonneg_int(env(*names));
		if (v >= min)
			return v;
	}
	return -1;
}

int pw_rank_detect(pw_env_fn env)
{
	static const char *const names[] = {"PROFWRAP_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
					    "PMI_RANK", "SLURM_PROCID", 0};
	int r = first_int(env, names, 0);
	return r < 0 ? PW_RANK_NONE : r;
}

int pw_world_size_detect(pw_env_fn env)
{
	static const char *const names[] = {"PROFWRAP_WORLD_SIZE", "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE",
					    "PMI_SIZE", "SLURM_NTASKS", 0};
	int w = first_int(env, names, 1);
	return w < 0 ? 1 : w;
}
