#define _GNU_SOURCE
#include "rawfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static const char pad_zeros[8];

#define PW_RAW_WINDOW (16u << 20)

static int write_all(int fd, struct iovec *iov, int cnt)
{
	while (cnt > 0) {
		ssize_t n = writev(fd, iov, cnt);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (cnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

int pw_raw_write_chunk(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	size_t len = alen + blen;
	if (len > UINT32_MAX - 8)
		return -EINVAL;
	struct pw_raw_chunk c = {type, (uint32_t)len};
	struct iovec iov[4] = {{&c, sizeof c}, {(void *)a, alen}, {(void *)b, blen},
			       {(void *)pad_zeros, (8 - (len & 7)) & 7}};
	return write_all(fd, iov, 4);
}

int pw_raw_write_header(int fd)
{
	struct pw_raw_file_header h = {.version = PW_RAW_VERSION, .header_size = sizeof h};
	memcpy(h.magic, PW_RAW_MAGIC, sizeof h.magic);
	struct iovec iov = {&h, sizeof h};
	return write_all(fd, &iov, 1);
}

int pw_kind_has_string(enum pw_event_kind k)
{
	return k == PW_K_OPEN || k == PW_K_FDINFO || k == PW_K_DLOPEN || k == PW_K_EXEC || k == PW_K_GPU_LAUNCH ||
	       k == PW_K_ACT_KERNEL || k == PW_K_ACT_DEVICE || k == PW_K_ACT_STATUS || k == PW_K_RANGE_PUSH ||
	       k == PW_K_RANGE_START || k == PW_K_MARK || k == PW_K_NVTX_NAME || k == PW_K_CAPTURE ||
	       k == PW_K_MODULE;
}

enum pw_fd_effect pw_fd_effect_of(const struct pw_raw_event *e, int64_t *fd, int64_t *from)
{
	const struct pw_rec_call *rec = e->rec;
	*fd = (int64_t)rec->arg0;
	*from = (int64_t)rec->arg1;
	if (rec->h.type >= PW_EV_COUNT || rec->h.err || *fd < 0)
		return PW_FD_NONE;
	switch (pw_events[rec->h.type].kind) {
	case PW_K_OPEN:
	case PW_K_FDINFO:
		return e->str ? PW_FD_BIND : PW_FD_UNBIND;
	case PW_K_DUP:
		return *fd != *from ? PW_FD_COPY : PW_FD_NONE;
	case PW_K_CLOSE:
		return PW_FD_UNBIND;
	default:
		return PW_FD_NONE;
	}
}

/* ref -> string, open addressing. Refs are nonzero, so 0 marks an empty slot. */
struct strtab {
	uint64_t *refs;
	const char **strs;
	uint32_t *lens;
	size_t cap;
	size_t used;
};

static int strtab_put(struct strtab *t, uint64_t ref, const char *s, uint32_t len)
{
	if ((t->used + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 256;
		struct strtab n = {calloc(ncap, sizeof *n.refs), calloc(ncap, sizeof *n.strs),
				   calloc(ncap, sizeof *n.lens), ncap, 0};
		if (!n.refs || !n.strs || !n.lens) {
			free(n.refs);
			free(n.strs);
			free(n.lens);
			return -1;
		}
		for (size_t i = 0; i < t->cap; i++)
			if (t->refs[i])
				strtab_put(&n, t->refs[i], t->strs[i], t->lens[i]);
		free(t->refs);
		free(t->strs);
		free(t->lens);
		*t = n;
	}
	size_t i = (size_t)(ref * 0x9e3779b97f4a7c15ull >> 20) & (t->cap - 1);
	while (t->refs[i] && t->refs[i] != ref)
		i = (i + 1) & (t->cap - 1);
	if (!t->refs[i])
		t->used++;
	t->refs[i] = ref;
	t->strs[i] = s;
	t->lens[i] = len;
	return 0;
}

static const char *strtab_get(const struct strtab *t, uint64_t ref, uint32_t *len)
{
	if (!ref || !t->cap)
		return NULL;
	size_t i = (size_t)(ref * 0x9e3779b97f4a7c15ull >> 20) & (t->cap - 1);
	while (t->refs[i]) {
		if (t->refs[i] == ref) {
			*len = t->lens[i];
			return t->strs[i];
		}
		i = (i + 1) & (t->cap - 1);
	}
	return NULL;
}

static void strtab_free(struct strtab *t)
{
	free(t->refs);
	free(t->strs);
	free(t->lens);
}

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -1)

/* Drops the pages before off from the resident set once a window's worth has been read (a 10-million-event
 * trace is ~0.5 GB). Pointers into them stay valid: an unwritten private file mapping reads them back from
 * the file when they are touched again. */
static void release_behind(const uint8_t *base, size_t *released, size_t off)
{
	if (off - *released < PW_RAW_WINDOW)
		return;
	size_t upto = off & ~(size_t)(PW_RAW_WINDOW - 1);
	madvise((void *)(base + *released), upto - *released, MADV_DONTNEED);
	*released = upto;
}

/* The line through the earliest and the latest calibration pair of the file. */
static struct pw_clock_line fit_clock(const uint8_t *base, size_t size, size_t off, uint32_t kind,
				      struct pw_clock_pair first)
{
	struct pw_clock_pair lo = first, hi = first;
	size_t released = 0;
	while (off + sizeof(struct pw_raw_chunk) <= size) {
		release_behind(base, &released, off);
		struct pw_raw_chunk c;
		memcpy(&c, base + off, sizeof c);
		size_t body = off + sizeof c;
		if (c.len > size - body)
			break;
		if (c.type == PW_CHUNK_CLOCK && c.len >= sizeof(struct pw_clock_pair)) {
			struct pw_clock_pair p;
			memcpy(&p, base + body, sizeof p);
			if (p.ticks < lo.ticks)
				lo = p;
			if (p.ticks > hi.ticks)
				hi = p;
		}
		off = body + ((c.len + 7u) & ~7u);
	}
	return pw_clock_line_fit((enum pw_clock_kind)kind, lo, hi);
}

int pw_raw_read(const char *path, const struct pw_raw_visitor *v, void *ctx, uint64_t *skipped, char *err,
		size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ERR("cannot open %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return ERR("cannot stat %s: %s", path, strerror(errno));
	}
	size_t size = (size_t)st.st_size;
	if (size < sizeof(struct pw_raw_file_header)) {
		close(fd);
		return ERR("%s: not a profwrap raw trace (too short)", path);
	}
	const uint8_t *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return ERR("cannot map %s: %s", path, strerror(errno));
	madvise((void *)base, size, MADV_SEQUENTIAL);

	int rc = 0;
	struct strtab strings = {0};
	struct pw_raw_file_header fh;
	memcpy(&fh, base, sizeof fh);
	if (memcmp(fh.magic, PW_RAW_MAGIC, sizeof fh.magic) != 0) {
		rc = ERR("%s: not a profwrap raw trace (bad magic at offset 0)", path);
		goto out;
	}
	if (fh.version != PW_RAW_VERSION) {
		rc = ERR("%s: raw trace version %u, this profwrap reads version %u", path, fh.version, PW_RAW_VERSION);
		goto out;
	}
	if (fh.header_size < sizeof fh || fh.header_size > size) {
		rc = ERR("%s: bad header size at offset 8", path);
		goto out;
	}

	size_t off = fh.header_size;
	struct pw_raw_chunk c = {0, 0};
	if (off + sizeof c <= size)
		memcpy(&c, base + off, sizeof c);
	if (off + sizeof c > size || c.type != PW_CHUNK_PROC || c.len < sizeof(struct pw_raw_proc) ||
	    c.len > size - off - sizeof c) {
		rc = ERR("%s: no process description at offset %zu", path, off);
		goto out;
	}
	struct pw_raw_proc proc;
	memcpy(&proc, base + off + sizeof c, sizeof proc);
	if ((uint64_t)proc.argv_len + proc.exe_len + proc.host_len > c.len - sizeof proc) {
		rc = ERR("%s: process description overruns its chunk at offset %zu", path, off);
		goto out;
	}
	struct pw_clock_line line = fit_clock(base, size, off, proc.clock_kind, proc.clock0);
	madvise((void *)base, size, MADV_DONTNEED); /* the scan touched a page per chunk */
	const char *strs = (const char *)base + off + sizeof c + sizeof proc;
	struct pw_raw_proc_view pv = {&proc, strs,
				      strs + proc.argv_len, strs + proc.argv_len + proc.exe_len,
				      pw_clock_to_ns(&line, proc.clock0.ticks)};
	if (v->proc)
		v->proc(ctx, &pv);
	off += sizeof c + ((c.len + 7u) & ~7u);

	size_t released = 0;
	while (off + sizeof c <= size) {
		release_behind(base, &released, off);
		memcpy(&c, base + off, sizeof c);
		size_t body = off + sizeof c;
		if (c.len > size - body)
			break; /* cut short: deliver what was whole */
		const uint8_t *p = base + body;
		switch (c.type) {
		case PW_CHUNK_STRING: {
			struct pw_raw_string s;
			if (c.len < sizeof s)
				break;
			memcpy(&s, p, sizeof s);
			if (s.len <= c.len - sizeof s && strtab_put(&strings, s.ref, (const char *)p + sizeof s, s.len)) {
				rc = ERR("%s: out of memory", path);
				goto out;
			}
			break;
		}
		case PW_CHUNK_RECORDS: {
			uint64_t flagged[255]; /* the largest record: size8 is a byte */
			size_t r = 0;
			while (r + sizeof(struct pw_rec_hdr) <= c.len) {
				struct pw_rec_hdr h;
				memcpy(&h, p + r, sizeof h);
				size_t rsize = (size_t)h.size8 * 8;
				if (rsize < sizeof h || rsize > c.len - r) {
					(*skipped)++;
					break;
				}
				int outside = (h.type & PW_REC_OUTSIDE) != 0;
				int stacked = (h.type & PW_REC_STACK) != 0;
				h.type = PW_REC_TYPE(h.type);
				if (h.type == PW_EV_PAD || h.type >= PW_EV_COUNT ||
				    rsize < pw_event_min_size(h.type) + (stacked ? 8 : 0) || ((uintptr_t)(p + r) & 7)) {
					(*skipped)++;
					r += rsize;
					continue;
				}
				const struct pw_rec_call *rec = (const struct pw_rec_call *)(p + r);
				if (outside || stacked) { /* readers see the plain type, on a copy; the flags travel in e */
					memcpy(flagged, p + r, rsize);
					memcpy(flagged, &h, sizeof h);
					rec = (const struct pw_rec_call *)flagged;
				}
				struct pw_raw_event e = {rec, rec->t0, rec->t1, NULL, 0, outside, 0, NULL, 0, NULL, 0};
				if (stacked) {
					memcpy(&e.stack_ref, p + r + rsize - 8, 8);
					e.stack = strtab_get(&strings, e.stack_ref & ~PW_STACK_PY_PENDING, &e.stack_len);
				}
				if (h.type == PW_EV_MODULE) {
					const struct pw_rec_module *m = (const struct pw_rec_module *)rec;
					e.build_id = strtab_get(&strings, m->build_id, &e.build_id_len);
				}
				if (!pw_kind_is_activity(pw_events[h.type].kind)) { /* those are in ns already */
					e.t0_ns = pw_clock_to_ns(&line, rec->t0);
					e.t1_ns = pw_clock_to_ns(&line, rec->t1);
				}
				if (pw_kind_has_string(pw_events[h.type].kind))
					e.str = strtab_get(&strings, rec->arg1, &e.str_len);
				if (v->event)
					v->event(ctx, &e);
				r += rsize;
			}
			break;
		}
		case PW_CHUNK_LOST: {
			struct pw_raw_lost l;
			if (c.len >= sizeof l && v->lost) {
				memcpy(&l, p, sizeof l);
				v->lost(ctx, l.lane, l.dropped_total);
			}
			break;
		}
		case PW_CHUNK_THREAD_LOST: {
			struct pw_raw_thread_lost l;
			if (c.len >= sizeof l && v->thread_lost) {
				memcpy(&l, p, sizeof l);
				v->thread_lost(ctx, l.tid, l.dropped_total);
			}
			break;
		}
		case PW_CHUNK_SALVAGE: {
			struct pw_raw_salvage sv;
			if (c.len >= sizeof sv && v->salvage) {
				memcpy(&sv, p, sizeof sv);
				v->salvage(ctx, &sv);
			}
			break;
		}
		case PW_CHUNK_END: {
			struct pw_raw_end e;
			if (c.len >= sizeof e && v->end) {
				memcpy(&e, p, sizeof e);
				uint32_t len = 0;
				const char *exec_path = strtab_get(&strings, e.exec_ref, &len);
				char buf[4096];
				if (exec_path) {
					snprintf(buf, sizeof buf, "%.*s", (int)len, exec_path);
					exec_path = buf;
				}
				v->end(ctx, &e, e.end_ticks ? pw_clock_to_ns(&line, e.end_ticks) : 0, exec_path);
			}
			break;
		}
		default:
			break; /* CLOCK was used above; unknown chunk types are for newer readers */
		}
		off = body + ((c.len + 7u) & ~7u);
	}
out:
	strtab_free(&strings);
	munmap((void *)base, size);
	return rc;
}
