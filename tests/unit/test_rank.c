#define _GNU_SOURCE
/* Unit tests for common/pw_rank: rank and world size from the launcher's environment, through a fake
 * environment lookup (a static table), and the integer parser they share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../common/pw_rank.h"

/* ---- the fake environment ---- */

#define FAKE_MAX 16
static struct {
	const char *name;
	const char *value;
} fake[FAKE_MAX];
static int fake_n;
static int fake_lookups;

static void fake_clear(void)
{
	fake_n = 0;
	fake_lookups = 0;
}

static void fake_set(const char *name, const char *value)
{
	assert_true(fake_n < FAKE_MAX);
	fake[fake_n].name = name;
	fake[fake_n].value = value;
	fake_n++;
}

static char *fake_env(const char *name)
{
	fake_lookups++;
	for (int i = 0; i < fake_n; i++)
		if (strcmp(fake[i].name, name) == 0)
			return (char *)fake[i].value;
	return NULL;
}

static int reset(void **state)
{
	fake_clear();
	return 0;
}

static const char *const rank_vars[] = {"PROFWRAP_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
					"SLURM_PROCID"};
#define N_RANK_VARS (sizeof rank_vars / sizeof rank_vars[0])
static const char *const size_vars[] = {"PROFWRAP_WORLD_SIZE", "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
					"SLURM_NTASKS"};
#define N_SIZE_VARS (sizeof size_vars / sizeof size_vars[0])

static const char *const numbers[] = {"10", "11", "12", "13", "14", "15"};

/* ---- rank ---- */

static void test_rank_default(void **state)
{
	assert_int_equal(pw_rank_detect(fake_env), PW_RANK_NONE);
	assert_true(fake_lookups >= (int)N_RANK_VARS);
	/* variables that are not rank variables do not count */
	fake_set("LOCAL_RANK", "3");
	fake_set("OMPI_COMM_WORLD_LOCAL_RANK", "3");
	fake_set("SLURM_LOCALID", "3");
	fake_set("PMI_SIZE", "8");
	assert_int_equal(pw_rank_detect(fake_env), PW_RANK_NONE);
}

/* Each variable alone is honoured. */
static void test_rank_each_variable(void **state)
{
	for (unsigned i = 0; i < N_RANK_VARS; i++) {
		fake_clear();
		fake_set(rank_vars[i], numbers[i]);
		assert_int_equal(pw_rank_detect(fake_env), 10 + (int)i);
	}
	fake_clear();
	fake_set("SLURM_PROCID", "0");
	assert_int_equal(pw_rank_detect(fake_env), 0);
	fake_clear();
	fake_set("RANK", "2147483647");
	assert_int_equal(pw_rank_detect(fake_env), 2147483647);
}

/* With variables i..end all set, variable i wins: the order is
 * PROFWRAP_RANK > RANK > OMPI_COMM_WORLD_RANK > PMIX_RANK > PMI_RANK > SLURM_PROCID. */
static void test_rank_precedence(void **state)
{
	for (unsigned first = 0; first < N_RANK_VARS; first++) {
		fake_clear();
		/* insert in reverse so that table order cannot stand in for precedence */
		for (unsigned j = N_RANK_VARS; j-- > first;)
			fake_set(rank_vars[j], numbers[j]);
		assert_int_equal(pw_rank_detect(fake_env), 10 + (int)first);
	}
	/* a pair far apart in the list */
	fake_clear();
	fake_set("SLURM_PROCID", "5");
	fake_set("PROFWRAP_RANK", "7");
	assert_int_equal(pw_rank_detect(fake_env), 7);
	/* rank 0 from a higher variable still wins over a non-zero lower one */
	fake_clear();
	fake_set("OMPI_COMM_WORLD_RANK", "0");
	fake_set("PMI_RANK", "4");
	assert_int_equal(pw_rank_detect(fake_env), 0);
}

/* A value that is not a non-negative decimal integer is skipped in favour of the next variable. */
static void test_rank_garbage_skipped(void **state)
{
	static const char *const garbage[] = {"", "-1", "12a", "99999999999", " 3", "3 ", "+3", "0x10", "1e3", "2147483648"};
	for (unsigned g = 0; g < sizeof garbage / sizeof garbage[0]; g++) {
		fake_clear();
		fake_set("PROFWRAP_RANK", garbage[g]);
		fake_set("RANK", "6");
		assert_int_equal(pw_rank_detect(fake_env), 6);
		/* garbage everywhere but the last */
		fake_clear();
		for (unsigned i = 0; i + 1 < N_RANK_VARS; i++)
			fake_set(rank_vars[i], garbage[g]);
		fake_set("SLURM_PROCID", "9");
		assert_int_equal(pw_rank_detect(fake_env), 9);
		/* garbage everywhere: the default */
		fake_clear();
		for (unsigned i = 0; i < N_RANK_VARS; i++)
			fake_set(rank_vars[i], garbage[g]);
		assert_int_equal(pw_rank_detect(fake_env), PW_RANK_NONE);
	}
}

/* ---- world size ---- */

static void test_world_size_default(void **state)
{
	assert_int_equal(pw_world_size_detect(fake_env), 1);
	fake_set("RANK", "5");
	fake_set("SLURM_NNODES", "4");
	fake_set("LOCAL_WORLD_SIZE", "4");
	assert_int_equal(pw_world_size_detect(fake_env), 1);
}

static void test_world_size_each_and_precedence(void **state)
{
	for (unsigned i = 0; i < N_SIZE_VARS; i++) {
		fake_clear();
		fake_set(size_vars[i], numbers[i]);
		assert_int_equal(pw_world_size_detect(fake_env), 10 + (int)i);
	}
	for (unsigned first = 0; first < N_SIZE_VARS; first++) {
		fake_clear();
		for (unsigned j = N_SIZE_VARS; j-- > first;)
			fake_set(size_vars[j], numbers[j]);
		assert_int_equal(pw_world_size_detect(fake_env), 10 + (int)first);
	}
}

/* 0 is not a world size: it is skipped like garbage. */
static void test_world_size_zero_and_garbage(void **state)
{
	fake_set("PROFWRAP_WORLD_SIZE", "0");
	assert_int_equal(pw_world_size_detect(fake_env), 1);
	fake_set("WORLD_SIZE", "0");
	fake_set("OMPI_COMM_WORLD_SIZE", "");
	fake_set("PMI_SIZE", "-4");
	fake_set("SLURM_NTASKS", "64");
	assert_int_equal(pw_world_size_detect(fake_env), 64);
	fake_clear();
	fake_set("WORLD_SIZE", "12a");
	fake_set("PMI_SIZE", "99999999999");
	assert_int_equal(pw_world_size_detect(fake_env), 1);
	fake_clear();
	fake_set("WORLD_SIZE", "1");
	assert_int_equal(pw_world_size_detect(fake_env), 1);
	fake_clear();
	fake_set("PROFWRAP_WORLD_SIZE", "00");
	fake_set("WORLD_SIZE", "3");
	assert_int_equal(pw_world_size_detect(fake_env), 3);
}

/* ---- the parser ---- */

static void test_parse_nonneg_int(void **state)
{
	assert_int_equal(pw_parse_nonneg_int("0"), 0);
	assert_int_equal(pw_parse_nonneg_int("1"), 1);
	assert_int_equal(pw_parse_nonneg_int("42"), 42);
	assert_int_equal(pw_parse_nonneg_int("007"), 7);
	assert_int_equal(pw_parse_nonneg_int("2147483646"), 2147483646);
	assert_int_equal(pw_parse_nonneg_int("2147483647"), 2147483647);
	assert_int_equal(pw_parse_nonneg_int("00000000000000000000002147483647"), 2147483647);

	assert_int_equal(pw_parse_nonneg_int(NULL), -1);
	assert_int_equal(pw_parse_nonneg_int(""), -1);
	assert_int_equal(pw_parse_nonneg_int("2147483648"), -1);
	assert_int_equal(pw_parse_nonneg_int("4294967296"), -1);
	assert_int_equal(pw_parse_nonneg_int("4294967297"), -1); /* wraps to 1 in 32 bits */
	assert_int_equal(pw_parse_nonneg_int("99999999999"), -1);
	assert_int_equal(pw_parse_nonneg_int("18446744073709551617"), -1); /* wraps to 1 in 64 bits */
	assert_int_equal(pw_parse_nonneg_int("99999999999999999999999999999999"), -1);
	assert_int_equal(pw_parse_nonneg_int("-1"), -1);
	assert_int_equal(pw_parse_nonneg_int("-0"), -1);
	assert_int_equal(pw_parse_nonneg_int("+1"), -1);
	assert_int_equal(pw_parse_nonneg_int(" 1"), -1);
	assert_int_equal(pw_parse_nonneg_int("1 "), -1);
	assert_int_equal(pw_parse_nonneg_int("1\n"), -1);
	assert_int_equal(pw_parse_nonneg_int("12a"), -1);
	assert_int_equal(pw_parse_nonneg_int("a12"), -1);
	assert_int_equal(pw_parse_nonneg_int("0x1f"), -1);
	assert_int_equal(pw_parse_nonneg_int("1.5"), -1);
	assert_int_equal(pw_parse_nonneg_int("1e3"), -1);
	assert_int_equal(pw_parse_nonneg_int("/"), -1); /* '0' - 1 */
	assert_int_equal(pw_parse_nonneg_int(":"), -1); /* '9' + 1 */
	assert_int_equal(pw_parse_nonneg_int("\xd9"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_rank_default, reset),
		cmocka_unit_test_setup(test_rank_each_variable, reset),
		cmocka_unit_test_setup(test_rank_precedence, reset),
		cmocka_unit_test_setup(test_rank_garbage_skipped, reset),
		cmocka_unit_test_setup(test_world_size_default, reset),
		cmocka_unit_test_setup(test_world_size_each_and_precedence, reset),
		cmocka_unit_test_setup(test_world_size_zero_and_garbage, reset),
		cmocka_unit_test(test_parse_nonneg_int),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
