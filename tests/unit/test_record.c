#define _GNU_SOURCE
/* Unit tests for common/pw_record: the event table, domain names and the on-disk record layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../common/pw_record.h"

/* Every event has a non-empty name and a domain in range. Kinds have no count enumerator and grow at the end,
 * so a kind is only checked to be a small non-negative number. */
static void test_event_table_complete(void **state)
{
	for (int e = 0; e < PW_EV_COUNT; e++) {
		assert_non_null(pw_events[e].name);
		assert_true(strlen(pw_events[e].name) > 0);
		assert_in_range(pw_events[e].domain, 0, PW_DOM_COUNT - 1);
		assert_in_range(pw_events[e].kind, PW_K_PLAIN, PW_K_PLAIN + 63);
	}
}

/* Names are unique within a domain: the report keys on (domain, name). */
static void test_event_names_unique_per_domain(void **state)
{
	for (int a = 0; a < PW_EV_COUNT; a++)
		for (int b = a + 1; b < PW_EV_COUNT; b++)
			if (pw_events[a].domain == pw_events[b].domain && strcmp(pw_events[a].name, pw_events[b].name) == 0)
				fail_msg("events %d and %d share the name \"%s\" in domain %s", a, b, pw_events[a].name,
					 pw_domain_names[pw_events[a].domain]);
}

/* PAD is id 0 (a zeroed lane reads as padding) and is a plain event. */
static void test_pad_is_zero(void **state)
{
	assert_int_equal(PW_EV_PAD, 0);
	assert_string_equal(pw_events[PW_EV_PAD].name, "pad");
	assert_int_equal(pw_events[PW_EV_PAD].kind, PW_K_PLAIN);
}

/* Ids are stored in raw traces and the table is append-only: the ids of existing events never move. */
static void test_event_ids_stable(void **state)
{
	assert_int_equal(PW_EV_OPEN, 1);
	assert_int_equal(PW_EV_CLOSE, 4);
	assert_int_equal(PW_EV_READ, 5);
	assert_int_equal(PW_EV_WRITE, 9);
	assert_int_equal(PW_EV_MMAP, 16);
	assert_int_equal(PW_EV_FOPEN, 18);
	assert_int_equal(PW_EV_FORK, 29);
	assert_int_equal(PW_EV_DLOPEN, 38);
	assert_int_equal(PW_EV_NANOSLEEP, 40);
	assert_int_equal(PW_EV_PUTS, 51);
	assert_int_equal(PW_EV_FD_INFO, 57);
	assert_true(PW_EV_COUNT >= 58);
	/* size8 and type must be able to hold every id */
	assert_true(PW_EV_COUNT <= UINT16_MAX);
}

/* Spot checks that the X-macro put each field in the right column. */
static void test_event_table_entries(void **state)
{
	assert_string_equal(pw_events[PW_EV_OPEN].name, "open");
	assert_int_equal(pw_events[PW_EV_OPEN].domain, PW_DOM_IO);
	assert_int_equal(pw_events[PW_EV_OPEN].kind, PW_K_OPEN);
	assert_string_equal(pw_events[PW_EV_FWRITE].name, "fwrite");
	assert_int_equal(pw_events[PW_EV_FWRITE].domain, PW_DOM_STDIO);
	assert_int_equal(pw_events[PW_EV_FWRITE].kind, PW_K_WRITE);
	assert_string_equal(pw_events[PW_EV_WAITPID].name, "waitpid");
	assert_int_equal(pw_events[PW_EV_WAITPID].domain, PW_DOM_PROCESS);
	assert_int_equal(pw_events[PW_EV_WAITPID].kind, PW_K_WAIT);
	assert_string_equal(pw_events[PW_EV_DLOPEN].name, "dlopen");
	assert_int_equal(pw_events[PW_EV_DLOPEN].domain, PW_DOM_DL);
	assert_int_equal(pw_events[PW_EV_DLOPEN].kind, PW_K_DLOPEN);
	assert_string_equal(pw_events[PW_EV_COND_WAIT].name, "pthread_cond_wait");
	assert_int_equal(pw_events[PW_EV_COND_WAIT].domain, PW_DOM_WAIT);
	assert_int_equal(pw_events[PW_EV_COND_WAIT].kind, PW_K_SLEEP);
	assert_string_equal(pw_events[PW_EV_FD_INFO].name, "fd-info");
	assert_int_equal(pw_events[PW_EV_FD_INFO].domain, PW_DOM_IO);
	assert_int_equal(pw_events[PW_EV_FD_INFO].kind, PW_K_FDINFO);
}

static void test_domain_names(void **state)
{
	assert_int_equal(PW_DOM_COUNT, 14);
	assert_string_equal(pw_domain_names[PW_DOM_MPI], "mpi");
	assert_string_equal(pw_domain_names[PW_DOM_META], "meta");
	assert_string_equal(pw_domain_names[PW_DOM_NVTX], "nvtx");
	assert_string_equal(pw_domain_names[PW_DOM_IO], "io");
	assert_string_equal(pw_domain_names[PW_DOM_STDIO], "stdio");
	assert_string_equal(pw_domain_names[PW_DOM_PROCESS], "process");
	assert_string_equal(pw_domain_names[PW_DOM_DL], "dl");
	assert_string_equal(pw_domain_names[PW_DOM_WAIT], "wait");
	assert_string_equal(pw_domain_names[PW_DOM_CUDART], "cudart");
	assert_string_equal(pw_domain_names[PW_DOM_CUBLAS], "cublas");
	assert_string_equal(pw_domain_names[PW_DOM_CUBLASLT], "cublaslt");
	assert_string_equal(pw_domain_names[PW_DOM_CUDNN], "cudnn");
	assert_string_equal(pw_domain_names[PW_DOM_NCCL], "nccl");
}

static int from_str(const char *s)
{
	return pw_domain_from_name(s, strlen(s));
}

static void test_domain_from_name_each(void **state)
{
	assert_int_equal(from_str("io"), PW_DOM_IO);
	assert_int_equal(from_str("stdio"), PW_DOM_STDIO);
	assert_int_equal(from_str("process"), PW_DOM_PROCESS);
	assert_int_equal(from_str("dl"), PW_DOM_DL);
	assert_int_equal(from_str("wait"), PW_DOM_WAIT);
	for (int d = 0; d < PW_DOM_COUNT; d++)
		assert_int_equal(from_str(pw_domain_names[d]), d);
}

static void test_domain_from_name_unknown(void **state)
{
	assert_int_equal(from_str(""), -1);
	assert_int_equal(from_str("IO"), -1);
	assert_int_equal(from_str("Wait"), -1);
	assert_int_equal(from_str("i"), -1);
	assert_int_equal(from_str("ios"), -1);
	assert_int_equal(from_str("stdi"), -1);
	assert_int_equal(from_str("processes"), -1);
	assert_int_equal(from_str("net"), -1);
	assert_int_equal(from_str("io "), -1);
	assert_int_equal(from_str(" io"), -1);
	assert_int_equal(from_str("all"), -1);
	assert_int_equal(from_str("pad"), -1);
}

/* --trace=LIST is parsed in place: the name is the first len bytes, what follows does not count. */
static void test_domain_from_name_length_limited(void **state)
{
	const char *list = "io,wait,stdio";
	assert_int_equal(pw_domain_from_name(list, 2), PW_DOM_IO);
	assert_int_equal(pw_domain_from_name(list + 3, 4), PW_DOM_WAIT);
	assert_int_equal(pw_domain_from_name(list + 8, 5), PW_DOM_STDIO);
	/* a prefix of a name is not the name */
	assert_int_equal(pw_domain_from_name("stdio", 2), -1);
	assert_int_equal(pw_domain_from_name("process", 3), -1);
	assert_int_equal(pw_domain_from_name("io,wait", 3), -1);
	assert_int_equal(pw_domain_from_name("io", 0), -1);
	/* not NUL-terminated: must read no further than len (ASan would see it) */
	char *dl = malloc(2);
	assert_non_null(dl);
	dl[0] = 'd';
	dl[1] = 'l';
	assert_int_equal(pw_domain_from_name(dl, 2), PW_DOM_DL);
	free(dl);
}

/* The record layout is shared by writer and reader and stored in raw traces. */
static void test_struct_sizes(void **state)
{
	assert_int_equal(sizeof(struct pw_rec_hdr), 8);
	assert_int_equal(sizeof(struct pw_rec_call), 48);
	assert_int_equal(sizeof(struct pw_rec_hdr) % 8, 0);
	assert_int_equal(sizeof(struct pw_rec_call) % 8, 0);
	assert_int_equal(offsetof(struct pw_rec_hdr, type), 0);
	assert_int_equal(offsetof(struct pw_rec_hdr, size8), 2);
	assert_int_equal(offsetof(struct pw_rec_hdr, err), 3);
	assert_int_equal(offsetof(struct pw_rec_hdr, tid), 4);
	assert_int_equal(offsetof(struct pw_rec_call, h), 0);
	assert_int_equal(offsetof(struct pw_rec_call, t0), 8);
	assert_int_equal(offsetof(struct pw_rec_call, t1), 16);
	assert_int_equal(offsetof(struct pw_rec_call, ret), 24);
	assert_int_equal(offsetof(struct pw_rec_call, arg0), 32);
	assert_int_equal(offsetof(struct pw_rec_call, arg1), 40);
	assert_true(_Alignof(struct pw_rec_call) <= 8);
	assert_int_equal(sizeof(pw_strref), 8);
	/* a call record's size fits size8 */
	assert_true(sizeof(struct pw_rec_call) / 8 <= UINT8_MAX);
}


/* A stack with n native addresses (1000 + i) and the given Python frames, built as the preload builds it. */
static size_t build_stack(uint8_t *buf, uint16_t native, const char *const *py, uint16_t npy, uint32_t flags)
{
	struct pw_stack s = {PW_STACK_MAGIC, native, npy, flags, 0};
	memcpy(buf, &s, sizeof s);
	size_t at = sizeof s;
	for (uint16_t i = 0; i < native; i++) {
		uint64_t a = 1000u + i;
		memcpy(buf + at, &a, 8);
		at += 8;
	}
	for (uint16_t i = 0; i < npy; i++) {
		const char *file = py[2 * i], *func = py[2 * i + 1];
		struct pw_py_frame f = {10u + i, (uint16_t)strlen(file), (uint16_t)strlen(func)};
		size_t size = pw_py_frame_size(f.file_len, f.func_len);
		memset(buf + at, 0, size);
		memcpy(buf + at, &f, sizeof f);
		memcpy(buf + at + sizeof f, file, f.file_len);
		memcpy(buf + at + sizeof f + f.file_len, func, f.func_len);
		at += size;
	}
	return at;
}

/* A channel's descriptors and inodes come back as put: -1 for a descriptor not made, the full 32 bits of an
 * inode. */
static void test_channel_round_trip(void **state)
{
	(void)state;
	struct pw_channel c = pw_get_channel(pw_put_channel_fds(7, 1023), pw_put_channel_inos(0xfffffffeu, 12));
	assert_int_equal(c.fd[0], 7);
	assert_int_equal(c.fd[1], 1023);
	assert_int_equal(c.ino[0], 0xfffffffeu);
	assert_int_equal(c.ino[1], 12);
	c = pw_get_channel(pw_put_channel_fds(5, -1), pw_put_channel_inos(99, 0));
	assert_int_equal(c.fd[0], 5);
	assert_int_equal(c.fd[1], -1);
	assert_int_equal(c.ino[0], 99);
	assert_int_equal(c.ino[1], 0);
	c = pw_get_channel(pw_put_channel_fds(-1, -1), 0);
	assert_int_equal(c.fd[0], -1);
	assert_int_equal(c.fd[1], -1);
}

static void test_stack_parse(void **state)
{
	uint8_t buf[1024];
	const char *py[] = {"train.py", "step", "main.py", "<module>"};
	size_t len = build_stack(buf, 3, py, 2, PW_STACK_INTERRUPTED);
	struct pw_stack_view v;
	assert_int_equal(pw_stack_parse(buf, len, &v), 0);
	assert_int_equal(v.native_count, 3);
	assert_int_equal(v.python_count, 2);
	assert_int_equal(v.flags, PW_STACK_INTERRUPTED);
	assert_int_equal(pw_stack_native(&v, 0), 1000);
	assert_int_equal(pw_stack_native(&v, 2), 1002);
	assert_int_equal(pw_stack_native(&v, 3), 0); /* past the end: 0, not a read beyond */
	const uint8_t *pos = v.python;
	uint32_t line, file_len, func_len;
	const char *file, *func;
	assert_int_equal(pw_stack_py_next(&v, &pos, &line, &file, &file_len, &func, &func_len), 1);
	assert_int_equal(line, 10);
	assert_int_equal(file_len, 8);
	assert_memory_equal(file, "train.py", 8);
	assert_memory_equal(func, "step", 4);
	assert_int_equal(pw_stack_py_next(&v, &pos, &line, &file, &file_len, &func, &func_len), 1);
	assert_int_equal(line, 11);
	assert_memory_equal(func, "<module>", 8);
	assert_int_equal(pw_stack_py_next(&v, &pos, &line, &file, &file_len, &func, &func_len), 0);
}

/* Stacks come from shared memory and files: every length is checked against the entry. */
static void test_stack_parse_refuses_damage(void **state)
{
	uint8_t buf[1024];
	const char *py[] = {"train.py", "step"};
	size_t len = build_stack(buf, 2, py, 1, 0);
	struct pw_stack_view v;
	for (size_t cut = 0; cut < len; cut++)
		assert_int_equal(pw_stack_parse(buf, cut, &v), -1);
	assert_int_equal(pw_stack_parse(NULL, len, &v), -1);
	uint8_t bad[1024];
	memcpy(bad, buf, len);
	bad[0] ^= 1; /* magic */
	assert_int_equal(pw_stack_parse(bad, len, &v), -1);
	memcpy(bad, buf, len);
	struct pw_stack s;
	memcpy(&s, bad, sizeof s);
	s.native = PW_STACK_MAX_NATIVE + 1;
	memcpy(bad, &s, sizeof s);
	assert_int_equal(pw_stack_parse(bad, sizeof bad, &v), -1);
	memcpy(bad, buf, len);
	struct pw_py_frame f;
	size_t at = sizeof s + 2 * 8;
	memcpy(&f, bad + at, sizeof f);
	f.file_len = 60000; /* a Python frame running past the entry */
	memcpy(bad + at, &f, sizeof f);
	assert_int_equal(pw_stack_parse(bad, len, &v), -1);
	/* a native-only stack with no Python frames is whole at exactly its length */
	size_t native_only = build_stack(buf, 4, NULL, 0, 0);
	assert_int_equal(pw_stack_parse(buf, native_only, &v), 0);
	assert_int_equal(v.python_count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_table_complete),
		cmocka_unit_test(test_event_names_unique_per_domain),
		cmocka_unit_test(test_pad_is_zero),
		cmocka_unit_test(test_event_ids_stable),
		cmocka_unit_test(test_event_table_entries),
		cmocka_unit_test(test_domain_names),
		cmocka_unit_test(test_domain_from_name_each),
		cmocka_unit_test(test_domain_from_name_unknown),
		cmocka_unit_test(test_domain_from_name_length_limited),
		cmocka_unit_test(test_struct_sizes),
		cmocka_unit_test(test_channel_round_trip),
		cmocka_unit_test(test_stack_parse),
		cmocka_unit_test(test_stack_parse_refuses_damage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
