/* test_spot_times.c - a spot pool's interruptionFile (io/spot_times.h):
 * times, comments and blank lines; a line longer than any buffer stays one
 * line (a 256-byte fgets split it, so the rest of a long comment was read
 * as a time); line numbers in errors; the file read through the Cluster
 * reader, relative to the cluster file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/cluster.h"
#include "io/spot_times.h"

static enum gp_err parse(const char *text, size_t len, const double **t, size_t *n,
                         struct gp_arena *a, struct gp_diag *d)
{
    return gp_spot_times_parse(text, len, "times.txt", 1e9, 1000, a, t, n, d);
}

static void test_times(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_diag d = {""};
    const double *t;
    size_t n;
    const char text[] = "# recorded\n\n  2h  \r\n90m # the first\n\t3600\n1d";
    assert_int_equal(parse(text, sizeof text - 1, &t, &n, &a, &d), GP_OK);
    assert_int_equal(n, 4);
    assert_float_equal(t[0], 3600, 0);
    assert_float_equal(t[1], 5400, 0);
    assert_float_equal(t[2], 7200, 0);
    assert_float_equal(t[3], 86400, 0);
    assert_int_equal(parse("", 0, &t, &n, &a, &d), GP_OK);
    assert_int_equal(n, 0);
    assert_null(t);
    gp_arena_free(&a);
}

static void test_long_lines(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_diag d = {""};
    const double *t;
    size_t n;
    char text[4096];
    int k = snprintf(text, sizeof text, "#");
    for (int i = 0; i < 1000; i++)
        text[k++] = 'x';
    k += snprintf(text + k, sizeof text - (size_t)k, "\n%*s1h%*s# note\n2h\n", 500, "", 500, "");
    assert_int_equal(parse(text, (size_t)k, &t, &n, &a, &d), GP_OK);
    assert_int_equal(n, 2);
    assert_float_equal(t[0], 3600, 0);
    assert_float_equal(t[1], 7200, 0);
    /* an error after a long line names the right line */
    k += snprintf(text + k, sizeof text - (size_t)k, "later\n");
    assert_int_equal(parse(text, (size_t)k, &t, &n, &a, &d), GP_EINVALID);
    assert_string_equal(d.msg, "times.txt:4: expected a time from the start like 3600, 90m or "
                               "2h30m, got \"later\"");
    gp_arena_free(&a);
}

static void test_errors(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_diag d = {""};
    const double *t;
    size_t n;
    assert_int_equal(parse("1h\n\0x\n", 6, &t, &n, &a, &d), GP_EINVALID);
    assert_string_equal(d.msg, "times.txt:2: a NUL byte; expected text");
    assert_int_equal(parse("2e9\n", 4, &t, &n, &a, &d), GP_EINVALID);
    assert_int_equal(gp_spot_times_parse("1\n2\n3\n", 6, "f", 1e9, 2, &a, &t, &n, &d), GP_ELIMIT);
    assert_string_equal(d.msg, "f: more than 2 times");
    char big[200];
    memset(big, '9', sizeof big);
    assert_int_equal(parse(big, sizeof big, &t, &n, &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "times.txt:1: expected a time"));
    gp_arena_free(&a);
}

/* The Cluster reader reads the file next to the cluster file. */
static void test_through_the_cluster_reader(void **state)
{
    (void)state;
    char dir[] = "/tmp/gp-test-spot-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], times[128];
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    snprintf(times, sizeof times, "%s/times.txt", dir);
    FILE *f = fopen(times, "w");
    assert_non_null(f);
    fputc('#', f);
    for (int i = 0; i < 300; i++)
        fputc('-', f);
    fputs(" a comment longer than 256 bytes\n30m\n", f);
    fclose(f);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n  nodePools:\n"
          "  - name: rec\n    gpu: {model: L4, count: 1}\n    cpu: \"8\"\n    memory: 32Gi\n"
          "    count: 1\n    spot: true\n    pricePerHour: 0.3\n"
          "    interruptionFile: times.txt\n",
          f);
    fclose(f);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c;
    memset(&c, 0, sizeof c);
    struct gp_diag d = {""};
    enum gp_err err = gp_cluster_load(path, &a, &c, &d);
    if (err != GP_OK)
        fprintf(stderr, "%s\n", d.msg);
    assert_int_equal(err, GP_OK);
    assert_int_equal(c.pools[0].nspot_times, 1);
    assert_float_equal(c.pools[0].spot_times_s[0], 1800, 0);
    gp_arena_free(&a);
    unlink(times);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_through_the_cluster_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
