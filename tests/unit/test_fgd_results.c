/* test_fgd_results.c - the reader of the FGD authors' published result
 * tables (io/fgd_results.c): the format on small inline tables and the
 * fixture of tests/data/packing, the name mapping, the statistics over
 * runs, every error class, and the real published table under
 * GP_SHARED_DIR when it is there. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared_data.h"

#include "io/fgd_results.h"
#include "util/arena.h"

#define SHARED_ALLO GP_SHARED_DIR "/data/fgd-expected-results/analysis_allo_discrete.csv"

/* Parses text; returns the error and leaves the message in d. */
static enum gp_err parse(struct gp_arena *a, const char *text, struct gp_fgd_results *r,
                         struct gp_diag *d)
{
    d->msg[0] = '\0';
    return gp_fgd_results_parse(text, strlen(text), "t.csv", a, r, d);
}

static void test_small_table(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_fgd_results r;
    struct gp_diag d;
    const char *text = "workload,sc_policy,tune,seed,total_gpus,0,1,2\n"
                       "openb_pod_list_default,06-FGD,1.3,42,6212,0.25,1.5,2\n"
                       "openb_pod_list_cpu050,05-BestFit,1.3,43,6212,0,,3e0\n"
                       "mine,Tetris,0.9,7,8,1,2,3\n";
    assert_int_equal(parse(&a, text, &r, &d), GP_OK);
    assert_int_equal(r.nrows, 3);
    assert_int_equal(r.npoints, 3);
    assert_true(r.has_total_gpus);
    assert_string_equal(r.source, "t.csv");

    const struct gp_fgd_row *row = &r.rows[0];
    assert_string_equal(row->workload, "openb_pod_list_default");
    assert_string_equal(row->workload_short, "default");
    assert_string_equal(row->policy, "06-FGD");
    assert_string_equal(row->policy_gp, "fgd");
    assert_true(fabs(row->tune - 1.3) < 1e-12);
    assert_int_equal(row->seed, 42);
    assert_int_equal(row->total_gpus, 6212);
    assert_true(row->values[0] == 0.25 && row->values[1] == 1.5 && row->values[2] == 2);
    assert_int_equal(row->line, 2);

    row = &r.rows[1];
    assert_string_equal(row->workload_short, "cpu050");
    assert_string_equal(row->policy_gp, "best-fit");
    assert_true(isnan(row->values[1])); /* an empty cell is no sample */
    assert_true(row->values[2] == 3);

    row = &r.rows[2]; /* names outside the paper's are kept as they are */
    assert_string_equal(row->workload_short, "mine");
    assert_null(row->policy_gp);
    assert_int_equal(row->line, 4);
    gp_arena_free(&a);
}

/* The fragmentation tables have no total_gpus column; value columns may
 * come in any order; CRLF line ends and quoted fields are fine. */
static void test_variants(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_fgd_results r;
    struct gp_diag d;
    assert_int_equal(parse(&a,
                           "workload,sc_policy,tune,seed,1,0\r\n"
                           "\"openb_pod_list_gpushare40\",01-Random,1.3,51,7.5,6\r\n",
                           &r, &d),
                     GP_OK);
    assert_false(r.has_total_gpus);
    assert_int_equal(r.nrows, 1);
    assert_int_equal(r.rows[0].total_gpus, -1);
    assert_string_equal(r.rows[0].workload_short, "gpushare40");
    assert_string_equal(r.rows[0].policy_gp, "random");
    assert_true(r.rows[0].values[0] == 6 && r.rows[0].values[1] == 7.5);

    /* a header and no rows */
    assert_int_equal(parse(&a, "workload,sc_policy,tune,seed,0\n", &r, &d), GP_OK);
    assert_int_equal(r.nrows, 0);
    assert_int_equal(r.npoints, 1);
    /* the bare prefix is not shortened to "" */
    assert_int_equal(
        parse(&a, "workload,sc_policy,tune,seed,0\nopenb_pod_list_,06-FGD,1,1,0\n", &r, &d), GP_OK);
    assert_string_equal(r.rows[0].workload_short, "openb_pod_list_");
    gp_arena_free(&a);
}

static void test_fixture(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_fgd_results r;
    struct gp_diag d = {""};
    assert_int_equal(gp_fgd_results_load(
                         GP_TEST_DATA "/packing/expected/analysis_allo_discrete.csv", &a, &r, &d),
                     GP_OK);
    assert_int_equal(r.nrows, 6);
    assert_int_equal(r.npoints, 131);
    double mean, sd;
    /* best-fit at 100: allocation 90 and 92 */
    assert_int_equal(gp_fgd_results_stat(&r, "default", "best-fit", 1.3, 100, &mean, &sd), 2);
    assert_true(fabs(mean - 91) < 1e-9);
    assert_true(fabs(sd - sqrt(2.0)) < 1e-9);
    /* fgd: the cpu050 row and the row at tune 1.2 are not counted */
    assert_int_equal(gp_fgd_results_stat(&r, "default", "fgd", 1.3, 100, &mean, &sd), 2);
    assert_true(fabs(mean - 95.25) < 1e-9);
    assert_int_equal(gp_fgd_results_stat(&r, "default", "fgd", 1.2, 100, &mean, &sd), 1);
    assert_true(mean == 50 && sd == 0);
    /* below the caps the value is x itself */
    assert_int_equal(gp_fgd_results_stat(&r, "default", "fgd", 1.3, 80, &mean, &sd), 2);
    assert_true(mean == 80 && sd == 0);
    /* nothing to match: 0 runs, NaN */
    assert_int_equal(gp_fgd_results_stat(&r, "default", "random", 1.3, 100, &mean, &sd), 0);
    assert_true(isnan(mean) && isnan(sd));
    assert_int_equal(gp_fgd_results_stat(&r, "default", "fgd", 1.3, 131, &mean, &sd), 0);
    assert_int_equal(gp_fgd_results_stat(&r, "default", NULL, 1.3, 100, &mean, &sd), 0);
    gp_arena_free(&a);
}

static void test_names(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"random", "01-Random"},
        {"dot-product", "02-DotProd"},
        {"gpu-clustering", "03-GpuClustering"},
        {"gpu-packing", "04-GpuPacking"},
        {"best-fit", "05-BestFit"},
        {"fgd", "06-FGD"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        assert_string_equal(gp_fgd_paper_policy(pairs[i][0]), pairs[i][1]);
        assert_string_equal(gp_fgd_gp_policy(pairs[i][1]), pairs[i][0]);
    }
    assert_null(gp_fgd_paper_policy("spread"));
    assert_null(gp_fgd_paper_policy(NULL));
    assert_null(gp_fgd_gp_policy("06-fgd")); /* exact names only */
    assert_null(gp_fgd_gp_policy(NULL));
}

/* Each bad input gives its error class and a message naming the place. */
static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        enum gp_err err;
        const char *msg; /* a substring of the message */
    } cases[] = {
        {"", GP_EPARSE, "t.csv: empty file"},
        {"workload,sc_policy,tune,seed\n", GP_EPARSE, "t.csv:1: expected value columns"},
        {"workload,sc_policy,tune,0\n", GP_EPARSE, "missing required column 'seed'"},
        {"workload,sc_policy,tune,seed,0,1,3\n", GP_EPARSE, "unknown column \"3\""},
        {"workload,sc_policy,tune,seed,0,0\n", GP_EPARSE, "column '0' appears twice"},
        {"workload,sc_policy,tune,seed,0,extra\n", GP_EPARSE, "unknown column \"extra\""},
        {"workload,sc_policy,tune,seed,0\na,b,1.3,42\n", GP_EPARSE, "t.csv:2: expected 5 fields"},
        {"workload,sc_policy,tune,seed,0\na,b,1.3,x,1\n", GP_EINVALID, "t.csv:2: column 'seed'"},
        {"workload,sc_policy,tune,seed,0\na,b,1.3,-1,1\n", GP_EINVALID, "column 'seed'"},
        {"workload,sc_policy,tune,seed,0\na,b,fast,1,1\n", GP_EINVALID, "column 'tune'"},
        {"workload,sc_policy,tune,seed,0\na,b,101,1,1\n", GP_EINVALID, "column 'tune'"},
        {"workload,sc_policy,tune,seed,0,1\na,b,1,1,1,nan\n", GP_EINVALID, "column '1'"},
        {"workload,sc_policy,tune,seed,0\na,b,1,1,1e999\n", GP_EINVALID, "column '0'"},
        {"workload,sc_policy,tune,seed,0\n,b,1,1,1\n", GP_EINVALID, "column 'workload'"},
        {"workload,sc_policy,tune,seed,0\na,,1,1,1\n", GP_EINVALID, "column 'sc_policy'"},
        {"workload,sc_policy,tune,seed,total_gpus,0\na,b,1,1,-5,1\n", GP_EINVALID,
         "column 'total_gpus'"},
        {"workload,sc_policy,tune,seed,0\n\"a,b,1,1,1\n", GP_EPARSE, "t.csv:2"},
        {"workload,sc_policy,tune,seed,0\na,b,1,1,1\na,b\0,1,1,1\n", GP_EPARSE, "NUL"},
    };
    struct gp_arena a;
    gp_arena_init(&a);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gp_fgd_results r;
        struct gp_diag d = {""};
        /* the NUL case has its length up to the final newline */
        size_t len = strlen(cases[i].text);
        if (strstr(cases[i].msg, "NUL"))
            len = sizeof "workload,sc_policy,tune,seed,0\na,b,1,1,1\na,b\0,1,1,1\n" - 1;
        enum gp_err err = gp_fgd_results_parse(cases[i].text, len, "t.csv", &a, &r, &d);
        if (err != cases[i].err || !strstr(d.msg, cases[i].msg))
            fail_msg("case %zu: got %d \"%s\", expected %d with \"%s\"", i, (int)err, d.msg,
                     (int)cases[i].err, cases[i].msg);
        assert_int_equal(r.nrows, 0); /* a failed read leaves nothing */
        assert_null(r.rows);
    }
    /* a missing file */
    struct gp_fgd_results r;
    struct gp_diag d = {""};
    assert_int_equal(gp_fgd_results_load(GP_TEST_DATA "/packing/nope.csv", &a, &r, &d),
                     GP_ENOTFOUND);
    assert_non_null(strstr(d.msg, "nope.csv"));
    gp_arena_free(&a);
}

/* Too many value columns is refused before the quadratic header check. */
static void test_limit(void **state)
{
    (void)state;
    size_t n = GP_FGD_MAX_POINTS + 1;
    char *text = malloc(64 + n * 7);
    assert_non_null(text);
    size_t o = (size_t)sprintf(text, "workload,sc_policy,tune,seed");
    for (size_t x = 0; x < n; x++)
        o += (size_t)sprintf(text + o, ",%zu", x);
    text[o++] = '\n';
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_fgd_results r;
    struct gp_diag d = {""};
    assert_int_equal(gp_fgd_results_parse(text, o, "big.csv", &a, &r, &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "value columns, expected at most"));
    gp_arena_free(&a);
    free(text);
}

/* The real published table: 17 workloads x 6 policies x 10 seeds, and the
 * headline number of the paper (FGD on default at 100 %: 4.77). */
static void test_shared(void **state)
{
    (void)state;
    GP_NEED_SHARED(SHARED_ALLO);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_fgd_results r;
    struct gp_diag d = {""};
    assert_int_equal(gp_fgd_results_load(SHARED_ALLO, &a, &r, &d), GP_OK);
    assert_int_equal(r.nrows, 1020);
    assert_int_equal(r.npoints, 131);
    assert_true(r.has_total_gpus);
    static const char *const policies[] = {"random",      "dot-product", "gpu-clustering",
                                           "gpu-packing", "best-fit",    "fgd"};
    for (size_t i = 0; i < r.nrows; i++) {
        assert_non_null(r.rows[i].policy_gp);
        assert_int_equal(r.rows[i].total_gpus, 6212);
        assert_true(r.rows[i].seed >= 42 && r.rows[i].seed <= 51);
    }
    double mean, sd;
    for (size_t p = 0; p < 6; p++)
        assert_int_equal(gp_fgd_results_stat(&r, "multigpu50", policies[p], 1.3, 100, &mean, &sd),
                         10);
    assert_int_equal(gp_fgd_results_stat(&r, "default", "fgd", 1.3, 100, &mean, &sd), 10);
    assert_true(fabs((100 - mean) - 4.773) < 0.001);
    assert_true(fabs(sd - 0.106) < 0.001);
    assert_int_equal(gp_fgd_results_stat(&r, "default", "random", 1.3, 100, &mean, &sd), 10);
    assert_true(fabs((100 - mean) - 13.697) < 0.001);
    gp_arena_free(&a);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_table), cmocka_unit_test(test_variants),
        cmocka_unit_test(test_fixture),     cmocka_unit_test(test_names),
        cmocka_unit_test(test_errors),      cmocka_unit_test(test_limit),
    };
    /* tests/CMakeLists.txt runs these apart (shared_data.h) */
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_shared),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
