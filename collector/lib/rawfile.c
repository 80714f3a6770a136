#define _GNU_SOURCE
#include "rawfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hash_index.h"

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
	return k == PW_K_OPEN || k == PW_K_FDINFO || k == PW_K_DLOPEN || k == PW_K_EXEC || k == PW_K_FORK ||
	       k == PW_K_STAT || k == PW_K_GPU_LAUNCH ||
	       k == PW_K_ACT_KERNEL || k == PW_K_ACT_DEVICE || k == PW_K_ACT_STATUS || k == PW_K_RANGE_PUSH ||
	       k == PW_K_RANGE_START || k == PW_K_MARK || k == PW_K_NVTX_NAME || k == PW_K_CAPTURE ||
	       k == PW_K_MODULE || k == PW_K_CHDIR;
}

int pw_rec_has_dir(uint16_t type, uint64_t size)
{
	return type < PW_EV_COUNT && (pw_events[type].kind == PW_K_OPEN || pw_events[type].kind == PW_K_STAT) &&
	       size >= sizeof(struct pw_rec_open);
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

/* ref -> string: the refs indexed, each string at its ref's position. */
struct strtab {
	struct pw_keys refs;
	struct strtab_entry {
		const char *s;
		uint32_t len;
	} *strs;
	size_t cap;
};

/* Sets ref's string (a later chunk for a ref replaces an earlier one). Returns 0, or -1 when out of memory. */
static int strtab_put(struct strtab *t, uint64_t ref, const char *s, uint32_t len)
{
	int added;
	if (pw_reserve(&t->strs, &t->cap, t->refs.n + 1, sizeof *t->strs))
		return -1;
	int64_t pos = pw_keys_add(&t->refs, ref, &added);
	if (pos < 0)
		return -1;
	t->strs[pos] = (struct strtab_entry){s, len};
	return 0;
}

static const char *strtab_get(const struct strtab *t, uint64_t ref, uint32_t *len)
{
	int64_t pos = ref ? pw_keys_find(&t->refs, ref) : -1;
	if (pos < 0)
		return NULL;
	*len = t->strs[pos].len;
	return t->strs[pos].s;
}

static void strtab_free(struct strtab *t)
{
	pw_keys_free(&t->refs);
	free(t->strs);
}

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -1)

/* A chunk's payload with its padding (in size_t: a length near 2^32 must not wrap). */
static size_t padded(uint32_t len)
{
	return ((size_t)len + 7) & ~(size_t)7;
}

/* Drops the pages before off from the resident set once a window's worth has been read (a 10-million-event
 * trace is ~0.5 GB). Pointers into them stay valid: an unwritten private file mapping reads them back from
 * the file when they are touched again. Only for a file mapping: on other memory it would discard the bytes. */
static void release_behind(const uint8_t *base, int mapped, size_t *released, size_t off)
{
	if (!mapped || off - *released < PW_RAW_WINDOW)
		return;
	size_t upto = off & ~(size_t)(PW_RAW_WINDOW - 1);
	madvise((void *)(base + *released), upto - *released, MADV_DONTNEED);
	*released = upto;
}

/* A chunk header of zeros: the writer never writes type 0, and a file padded with zeros (a crash can leave one
 * so, up to gigabytes) would otherwise be stepped through 8 bytes at a time. The file ends there. */
static int zero_chunk(const struct pw_raw_chunk *c)
{
	return c->type == 0 && c->len == 0;
}

/* The line through the earliest and the latest calibration pair of the file. */
static struct pw_clock_line fit_clock(const uint8_t *base, int mapped, size_t size, size_t off, uint32_t kind,
				      struct pw_clock_pair first)
{
	struct pw_clock_pair lo = first, hi = first;
	size_t released = 0;
	while (off + sizeof(struct pw_raw_chunk) <= size) {
		release_behind(base, mapped, &released, off);
		struct pw_raw_chunk c;
		memcpy(&c, base + off, sizeof c);
		size_t body = off + sizeof c;
		if (c.len > size - body || zero_chunk(&c))
			break;
		if (c.type == PW_CHUNK_CLOCK && c.len >= sizeof(struct pw_clock_pair)) {
			struct pw_clock_pair p;
			memcpy(&p, base + body, sizeof p);
			if (p.ticks < lo.ticks)
				lo = p;
			if (p.ticks > hi.ticks)
				hi = p;
		}
		off = body + padded(c.len);
	}
	return pw_clock_line_fit((enum pw_clock_kind)kind, lo, hi);
}

/* What was wrong with a file that is delivered anyway: the first damage found, how much more followed, and
 * where the file was cut short. It becomes the one line the reader hands back with a 0. */
struct damage {
	char first[192];
	uint64_t more;
	size_t cut_at; /* offset of the chunk that runs past the end of the file; SIZE_MAX: none */
	size_t zeros_at; /* offset of the zero tail (zero_chunk); SIZE_MAX: none */
	size_t size;
};

static void damaged(struct damage *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void damaged(struct damage *d, const char *fmt, ...)
{
	if (d->first[0]) {
		d->more++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->first, sizeof d->first, fmt, ap);
	va_end(ap);
}

static void damage_line(const struct damage *d, const char *name, char *err, size_t errlen)
{
	if (!d->first[0] && d->cut_at == SIZE_MAX && d->zeros_at == SIZE_MAX)
		return;
	char more[80] = "", cut[160] = "";
	if (d->more)
		snprintf(more, sizeof more, " (and %llu more damaged record%s or chunk%s)", (unsigned long long)d->more,
			 d->more == 1 ? "" : "s", d->more == 1 ? "" : "s");
	if (d->cut_at != SIZE_MAX)
		snprintf(cut, sizeof cut, "%schunk at offset %zu overruns the file (cut short): read up to there",
			 d->first[0] ? "; " : "", d->cut_at);
	if (d->zeros_at != SIZE_MAX)
		snprintf(cut, sizeof cut, "%szeros from offset %zu to the end (%zu bytes, as a crash can leave a file): read "
			 "up to there", d->first[0] ? "; " : "", d->zeros_at, d->size - d->zeros_at);
	snprintf(err, errlen, "%s: %s%s%s", name, d->first, more, cut);
}

static const char *chunk_name(uint32_t type)
{
	switch (type) {
	case PW_CHUNK_STRING:
		return "STRING";
	case PW_CHUNK_CLOCK:
		return "CLOCK";
	case PW_CHUNK_LOST:
		return "LOST";
	case PW_CHUNK_THREAD_LOST:
		return "THREAD_LOST";
	case PW_CHUNK_SALVAGE:
		return "SALVAGE";
	case PW_CHUNK_END:
		return "END";
	default:
		return "?";
	}
}

/* The smallest payload of a chunk type this reader delivers, 0 for the others. */
static size_t chunk_min(uint32_t type)
{
	switch (type) {
	case PW_CHUNK_STRING:
		return sizeof(struct pw_raw_string);
	case PW_CHUNK_CLOCK:
		return sizeof(struct pw_clock_pair);
	case PW_CHUNK_LOST:
		return sizeof(struct pw_raw_lost);
	case PW_CHUNK_THREAD_LOST:
		return sizeof(struct pw_raw_thread_lost);
	case PW_CHUNK_SALVAGE:
		return sizeof(struct pw_raw_salvage);
	case PW_CHUNK_END: /* files of earlier versions end before shm_refused */
		return offsetof(struct pw_raw_end, shm_refused);
	default:
		return 0;
	}
}

/* The records of one RECORDS chunk (len bytes at p, the chunk's payload at offset at of the file). */
static void read_records(const uint8_t *p, uint32_t len, size_t at, const struct strtab *strings,
			 const struct pw_clock_line *line, const struct pw_raw_visitor *v, void *ctx, uint64_t *skipped,
			 struct damage *d)
{
	uint64_t flagged[255]; /* the largest record: size8 is a byte */
	size_t r = 0;
	while (r + sizeof(struct pw_rec_hdr) <= len) {
		struct pw_rec_hdr h;
		memcpy(&h, p + r, sizeof h);
		size_t rsize = (size_t)h.size8 * 8;
		if (rsize < sizeof h || rsize > len - r) {
			(*skipped)++;
			damaged(d, "record at offset %zu has a bad size (%zu bytes): the rest of its chunk skipped", at + r,
				rsize);
			break;
		}
		int outside = (h.type & PW_REC_OUTSIDE) != 0;
		int stacked = (h.type & PW_REC_STACK) != 0;
		int nested = (h.type & PW_REC_NESTED) != 0;
		h.type = PW_REC_TYPE(h.type);
		if (h.type == PW_EV_PAD || h.type >= PW_EV_COUNT ||
		    rsize < pw_event_min_size(h.type) + (stacked ? 8 : 0) || ((uintptr_t)(p + r) & 7)) {
			(*skipped)++;
			damaged(d, "record at offset %zu is not valid (type %u, %zu bytes%s): skipped", at + r, h.type,
				rsize, (uintptr_t)(p + r) & 7 ? ", not 8-byte aligned" : "");
			r += rsize;
			continue;
		}
		const struct pw_rec_call *rec = (const struct pw_rec_call *)(p + r);
		if (outside || stacked || nested) { /* readers see the plain type, on a copy; the flags travel in e */
			memcpy(flagged, p + r, rsize);
			memcpy(flagged, &h, sizeof h);
			rec = (const struct pw_rec_call *)flagged;
		}
		struct pw_raw_event e = {.rec = rec, .t0_ns = rec->t0, .t1_ns = rec->t1, .outside = outside,
					 .nested = nested, .offset = at + r, .dirfd = AT_FDCWD};
		if (stacked) {
			memcpy(&e.stack_ref, p + r + rsize - 8, 8);
			e.stack = strtab_get(strings, e.stack_ref & ~PW_STACK_PY_PENDING, &e.stack_len);
		}
		if (h.type == PW_EV_MODULE) {
			const struct pw_rec_module *m = (const struct pw_rec_module *)rec;
			e.build_id = strtab_get(strings, m->build_id, &e.build_id_len);
			e.image = strtab_get(strings, m->image, &e.image_len);
		}
		if (pw_rec_has_dir(h.type, rsize - (stacked ? 8 : 0))) {
			const struct pw_rec_open *o = (const struct pw_rec_open *)rec;
			e.dirfd = o->dirfd;
			e.cwd = strtab_get(strings, o->cwd, &e.cwd_len);
		}
		if (!pw_kind_is_activity(pw_events[h.type].kind)) { /* those are in ns already */
			e.t0_ns = pw_clock_to_ns(line, rec->t0);
			e.t1_ns = pw_clock_to_ns(line, rec->t1);
		}
		if (pw_kind_has_string(pw_events[h.type].kind))
			e.str = strtab_get(strings, rec->arg1, &e.str_len);
		if (v->event)
			v->event(ctx, &e);
		r += rsize;
	}
}

/* Reads the size bytes at base (a mapping of the file when mapped) as a raw trace named name. */
static int read_bytes(const char *name, const uint8_t *base, size_t size, int mapped, const struct pw_raw_visitor *v,
		      void *ctx, uint64_t *skipped, char *err, size_t errlen)
{
	struct pw_raw_file_header fh;
	if (size == 0)
		return ERR("%s: empty file: skipped", name);
	if (size < sizeof fh)
		return ERR("%s: cut short at offset %zu, inside the %zu-byte file header: skipped", name, size, sizeof fh);
	memcpy(&fh, base, sizeof fh);
	if (memcmp(fh.magic, PW_RAW_MAGIC, sizeof fh.magic) != 0)
		return ERR("%s: not a profwrap raw trace (bad magic at offset 0): skipped", name);
	if (fh.version > PW_RAW_VERSION)
		return ERR("%s: format version %u is newer than this profwrap (%u): skipped", name, fh.version,
			   PW_RAW_VERSION);
	if (fh.version < PW_RAW_VERSION)
		return ERR("%s: format version %u is older than this profwrap reads (%u): skipped", name, fh.version,
			   PW_RAW_VERSION);
	if (fh.header_size < sizeof fh || fh.header_size > size)
		return ERR("%s: bad header size %u at offset 12: skipped", name, fh.header_size);

	size_t off = fh.header_size;
	struct pw_raw_chunk c = {0, 0};
	if (off + sizeof c > size)
		return ERR("%s: cut short at offset %zu, before the process description: skipped", name, size);
	memcpy(&c, base + off, sizeof c);
	if (c.type != PW_CHUNK_PROC)
		return ERR("%s: no process description at offset %zu (a chunk of type %u): skipped", name, off, c.type);
	if (c.len > size - off - sizeof c)
		return ERR("%s: the process description at offset %zu overruns the file (cut short): skipped", name, off);
	struct pw_raw_proc proc;
	if (c.len < sizeof proc)
		return ERR("%s: the process description at offset %zu is too short (%u bytes): skipped", name, off, c.len);
	memcpy(&proc, base + off + sizeof c, sizeof proc);
	if ((uint64_t)proc.argv_len + proc.exe_len + proc.host_len > c.len - sizeof proc)
		return ERR("%s: the process description at offset %zu overruns its chunk: skipped", name, off);

	struct damage d = {.cut_at = SIZE_MAX, .zeros_at = SIZE_MAX, .size = size};
	struct strtab strings = {0};
	int rc = 0;
	struct pw_clock_line line = fit_clock(base, mapped, size, off, proc.clock_kind, proc.clock0);
	if (mapped)
		madvise((void *)base, size, MADV_DONTNEED); /* the scan touched a page per chunk */
	const char *strs = (const char *)base + off + sizeof c + sizeof proc;
	struct pw_raw_proc_view pv = {&proc, strs,
				      strs + proc.argv_len, strs + proc.argv_len + proc.exe_len,
				      pw_clock_to_ns(&line, proc.clock0.ticks), line.ns_per_tick};
	if (v->chunk)
		v->chunk(ctx, off, c.type, c.len);
	if (v->proc)
		v->proc(ctx, &pv);
	off += sizeof c + padded(c.len);

	size_t released = 0;
	while (off < size) {
		release_behind(base, mapped, &released, off);
		size_t body = off + sizeof c;
		if (body > size) {
			d.cut_at = off; /* inside a chunk header */
			break;
		}
		memcpy(&c, base + off, sizeof c);
		if (c.len > size - body) {
			d.cut_at = off; /* cut short: deliver what was whole */
			break;
		}
		if (zero_chunk(&c)) {
			d.zeros_at = off;
			break;
		}
		const uint8_t *p = base + body;
		size_t next = body + padded(c.len);
		if (v->chunk)
			v->chunk(ctx, off, c.type, c.len);
		if (c.len < chunk_min(c.type)) {
			damaged(&d, "%s chunk at offset %zu is too short (%u bytes): skipped", chunk_name(c.type), off, c.len);
			off = next;
			continue;
		}
		switch (c.type) {
		case PW_CHUNK_STRING: {
			struct pw_raw_string s;
			memcpy(&s, p, sizeof s);
			if (!s.ref || s.len > c.len - sizeof s)
				damaged(&d, "STRING chunk at offset %zu: %s: skipped", off,
					s.ref ? "its string overruns the chunk" : "reference 0");
			else if (strtab_put(&strings, s.ref, (const char *)p + sizeof s, s.len))
				rc = ERR("%s: out of memory at offset %zu", name, off);
			else if (v->string)
				v->string(ctx, s.ref, (const char *)p + sizeof s, s.len);
			break;
		}
		case PW_CHUNK_RECORDS:
			read_records(p, c.len, body, &strings, &line, v, ctx, skipped, &d);
			break;
		case PW_CHUNK_LOST: {
			struct pw_raw_lost l;
			memcpy(&l, p, sizeof l);
			if (v->lost)
				v->lost(ctx, l.lane, l.dropped_total);
			break;
		}
		case PW_CHUNK_THREAD_LOST: {
			struct pw_raw_thread_lost l;
			memcpy(&l, p, sizeof l);
			if (v->thread_lost)
				v->thread_lost(ctx, l.tid, l.dropped_total);
			break;
		}
		case PW_CHUNK_SALVAGE: {
			struct pw_raw_salvage sv;
			memcpy(&sv, p, sizeof sv);
			if (v->salvage)
				v->salvage(ctx, &sv);
			break;
		}
		case PW_CHUNK_END: {
			struct pw_raw_end e = {0};
			memcpy(&e, p, c.len < sizeof e ? c.len : sizeof e);
			uint32_t len = 0;
			const char *exec_path = strtab_get(&strings, e.exec_ref, &len);
			char buf[4096];
			if (exec_path) {
				snprintf(buf, sizeof buf, "%.*s", (int)len, exec_path);
				exec_path = buf;
			}
			if (v->end)
				v->end(ctx, &e, e.end_ticks ? pw_clock_to_ns(&line, e.end_ticks) : 0, exec_path);
			break;
		}
		case PW_CHUNK_CLOCK: { /* fit_clock used them all already */
			struct pw_clock_pair pair;
			memcpy(&pair, p, sizeof pair);
			if (v->clock)
				v->clock(ctx, &pair);
			break;
		}
		default:
			break; /* unknown chunk types are for newer readers */
		}
		if (rc)
			break;
		off = next;
	}
	strtab_free(&strings);
	if (!rc)
		damage_line(&d, name, err, errlen);
	return rc;
}

int pw_raw_read_mem(const char *name, const void *buf, size_t len, const struct pw_raw_visitor *v, void *ctx,
		    uint64_t *skipped, char *err, size_t errlen)
{
	if (errlen)
		err[0] = 0;
	return read_bytes(name, buf, len, 0, v, ctx, skipped, err, errlen);
}

int pw_raw_read(const char *path, const struct pw_raw_visitor *v, void *ctx, uint64_t *skipped, char *err,
		size_t errlen)
{
	if (errlen)
		err[0] = 0;
	/* O_NONBLOCK: a FIFO named like a trace must not hang the report; it is refused below */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return ERR("%s: %s: skipped", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return ERR("%s: %s: skipped", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return ERR("%s: %s: skipped", path, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
	}
	size_t size = (size_t)st.st_size;
	if (size < sizeof(struct pw_raw_file_header)) {
		close(fd);
		return read_bytes(path, NULL, size, 0, v, ctx, skipped, err, errlen);
	}
	const uint8_t *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (base == MAP_FAILED)
		return ERR("%s: cannot map: %s: skipped", path, strerror(e));
	madvise((void *)base, size, MADV_SEQUENTIAL);
	int rc = read_bytes(path, base, size, 1, v, ctx, skipped, err, errlen);
	munmap((void *)base, size);
	return rc;
}
