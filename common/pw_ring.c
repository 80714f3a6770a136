#define _GNU_SOURCE
#include "pw_ring.h"

#include <errno.h>

#define PW_PAGE 4096u
#define PW_LANES_MAX 1024u
#define PW_LANE_MAX_SIZE (1ull << 32)
#define PW_ARENA_MAX_SIZE (1ull << 32)

/* Arena entries: [uint32 length][uint32 zero][bytes][NUL], padded to 8 bytes. */
#define PW_ARENA_ENTRY_HDR 8u

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

uint64_t pw_seg_layout(uint32_t lane_count, uint64_t lane_size, uint64_t arena_size, uint32_t *header_size)
{
	if (lane_count < 2 || lane_count > PW_LANES_MAX)
		return 0;
	if (lane_size < PW_PAGE || lane_size > PW_LANE_MAX_SIZE || (lane_size & (lane_size - 1)))
		return 0;
	if (arena_size < PW_PAGE || arena_size > PW_ARENA_MAX_SIZE)
		return 0;
	uint64_t ctl = align_up(sizeof(struct pw_seg_header), PW_CACHELINE) + (uint64_t)lane_count * sizeof(struct pw_lane);
	uint64_t hdr = align_up(ctl, PW_PAGE);
	*header_size = (uint32_t)hdr;
	return hdr + (uint64_t)lane_count * lane_size + align_up(arena_size, PW_PAGE);
}

int pw_seg_init(struct pw_seg_header *h, uint32_t lane_count, uint64_t lane_size, uint64_t arena_size)
{
	uint32_t header_size;
	uint64_t total = pw_seg_layout(lane_count, lane_size, arena_size, &header_size);
	if (!total)
		return -EINVAL;
	h->magic = PW_SEG_MAGIC;
	h->version = PW_FORMAT_VERSION;
	h->header_size = header_size;
	h->lane_count = lane_count;
	h->lane_size = lane_size;
	h->arena_offset = header_size + (uint64_t)lane_count * lane_size;
	h->arena_size = align_up(arena_size, PW_PAGE);
	h->segment_size = total;
	atomic_store_explicit(&h->arena_used, 8, memory_order_relaxed);
	atomic_store_explicit(&h->state, PW_STATE_RUNNING, memory_order_relaxed);
	return 0;
}

int pw_seg_geometry_read(const struct pw_seg_header *h, uint64_t mapped_size, struct pw_seg_geometry *g)
{
	if (mapped_size < sizeof *h)
		return -EINVAL;
	struct pw_seg_header copy;
	memcpy(&copy, h, sizeof copy);
	uint32_t header_size;
	if (copy.magic != PW_SEG_MAGIC || copy.version != PW_FORMAT_VERSION)
		return -EINVAL;
	uint64_t total = pw_seg_layout(copy.lane_count, copy.lane_size, copy.arena_size, &header_size);
	if (!total || total != copy.segment_size || total > mapped_size || header_size != copy.header_size)
		return -EINVAL;
	if (copy.arena_offset != header_size + (uint64_t)copy.lane_count * copy.lane_size)
		return -EINVAL;
	*g = (struct pw_seg_geometry){header_size, copy.lane_count, copy.lane_size, copy.arena_offset,
				      copy.arena_size, mapped_size};
	return 0;
}

static size_t clamp_len(size_t len)
{
	return len > UINT32_MAX - 64 ? UINT32_MAX - 64 : len;
}

uint64_t pw_arena_entry_size(size_t len)
{
	return align_up(PW_ARENA_ENTRY_HDR + clamp_len(len) + 1, 8);
}

pw_strref pw_arena_alloc(struct pw_seg_header *h, size_t len)
{
	uint64_t need = pw_arena_entry_size(len);
	uint64_t off = atomic_fetch_add_explicit(&h->arena_used, need, memory_order_relaxed);
	if (off + need > h->arena_size) {
		atomic_fetch_add_explicit(&h->arena_dropped, 1, memory_order_relaxed);
		return 0;
	}
	return off;
}

void pw_arena_fill(struct pw_seg_header *h, pw_strref ref, const char *s, size_t len)
{
	len = clamp_len(len);
	char *p = (char *)h + h->arena_offset + ref;
	uint32_t l32 = (uint32_t)len;
	memcpy(p, &l32, sizeof l32);
	memcpy(p + PW_ARENA_ENTRY_HDR, s, len);
	p[PW_ARENA_ENTRY_HDR + len] = 0;
}

const char *pw_arena_get_in(struct pw_seg_header *h, const struct pw_seg_geometry *g, pw_strref ref, uint32_t *len)
{
	uint64_t used = atomic_load_explicit(&h->arena_used, memory_order_acquire);
	if (used > g->arena_size)
		used = g->arena_size;
	if (g->arena_offset > g->mapped_size || g->arena_size > g->mapped_size - g->arena_offset)
		return NULL;
	if (ref < 8 || (ref & 7) || ref > used || used - ref < PW_ARENA_ENTRY_HDR)
		return NULL;
	const char *p = (const char *)h + g->arena_offset + ref;
	uint32_t l32;
	memcpy(&l32, p, sizeof l32);
	if ((uint64_t)l32 + 1 > used - ref - PW_ARENA_ENTRY_HDR)
		return NULL;
	*len = l32;
	return p + PW_ARENA_ENTRY_HDR;
}
