/* What the merge keeps, at most (merge.h says how it uses them). */
#ifndef PW_MERGE_LIMITS_H
#define PW_MERGE_LIMITS_H

#define PW_MERGE_MAX_COLLECTIVES 100000 /* entry times kept per rank and domain (the writer's limit too) */
#define PW_MERGE_MAX_PHASES 64           /* phases read per rank (the writer's limit) */
#define PW_MERGE_MAX_DOMAINS 8           /* collective domains compared ("mpi", "nccl", ...) */
#define PW_MERGE_MAX_WORLD (1 << 20)     /* a larger world_size is taken for damage and ignored */

#endif
