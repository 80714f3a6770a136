/* Rank detection from the launcher's environment. */
#ifndef PW_RANK_H
#define PW_RANK_H

/* An environment lookup: getenv, or a fake in tests. */
typedef char *(*pw_env_fn)(const char *name);

/* A process that no launcher gave a rank: a launcher itself (mpirun, torchrun's agent, srun), or a job's
 * helper. The analysis shows such processes apart from the ranks, or as rank 0 when nothing has a rank. */
#define PW_RANK_NONE (-1)

/* Rank from the first of PROFWRAP_RANK, RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID that
 * holds a non-negative decimal integer; PW_RANK_NONE when none does. (LOCAL_RANK and its kind number the
 * processes of one node only, so they are not ranks.) */
int pw_rank_detect(pw_env_fn env);

/* World size from PROFWRAP_WORLD_SIZE, WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS; 1 when none
 * holds a positive decimal integer. */
int pw_world_size_detect(pw_env_fn env);

/* Parses a whole decimal integer in [0, INT32_MAX]. Returns it, or -1 for anything else. */
int pw_parse_nonneg_int(const char *s);

#endif
