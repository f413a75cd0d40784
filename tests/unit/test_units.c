/* test_units.c - the Kubernetes quantity parser (util/units.h) against
 * the examples of the Kubernetes documentation and of quantity.go, its
 * rounding (Quantity.MilliValue/Value round up), its refusals (one answer
 * each: not the grammar, out of range, negative), and a property: every
 * value formatted in each of the grammar's forms parses back to itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/units.h"

#define MAX GP_UNITS_QTY_MAX

static int64_t value(const char *s) /* Quantity.Value() */
{
    int64_t v = -1;
    assert_int_equal(gp_units_quantity(s, 0, 0, MAX, &v), GP_UNITS_QTY_OK);
    return v;
}

static int64_t milli(const char *s) /* Quantity.MilliValue() */
{
    int64_t v = -1;
    assert_true(gp_units_cpu_milli(s, &v));
    return v;
}

/* "Resource Management for Pods and Containers" (kubernetes.io/docs/
 * concepts/configuration/manage-resources-containers/): "128974848,
 * 129e6, 129M, 128974848000m, 123Mi" are the same memory, roughly; "0.1"
 * is "100m"; quantity.go's comment: 1.5 is 1500m, 1.5Gi is 1536Mi. */
static void test_docs_table(void **state)
{
    (void)state;
    assert_int_equal(value("128974848"), 128974848);
    assert_int_equal(value("129e6"), 129000000);
    assert_int_equal(value("129M"), 129000000);
    assert_int_equal(value("128974848000m"), 128974848);
    assert_int_equal(value("123Mi"), 128974848);
    assert_int_equal(milli("0.1"), 100);
    assert_int_equal(milli("100m"), 100);
    assert_int_equal(milli("1.5"), 1500);
    int64_t mib;
    assert_true(gp_units_mem_mib("1.5Gi", &mib));
    assert_int_equal(mib, 1536);
    assert_true(gp_units_mem_mib("129e6", &mib));
    assert_int_equal(mib, 124); /* 123.02... MiB, rounded up */
    assert_true(gp_units_mem_mib("128974848000m", &mib));
    assert_int_equal(mib, 123);
    /* every suffix of suffix.go */
    const struct {
        const char *s;
        int64_t milli;
    } t[] = {
        {"2000000n", 2},
        {"3000u", 3},
        {"7m", 7},
        {"2", 2000},
        {"2k", 2000000},
        {"1M", 1000000000},
        {"1G", 1000000000000},
        {"1T", INT64_C(1000000000000000)},
        {"1Ki", 1024000},
        {"1Mi", 1048576000},
        {"1e0", 1000},
        {"1E-3", 1},
        {"1e+3", 1000000},
        {"+1", 1000},
        {".5", 500},
        {"1.", 1000},
        {"1.G", 1000000000000},
        {"0", 0},
        {"-0", 0},
        {"000.000", 0},
        {"0.5e1", 5000},
        {"5e-1", 500},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        int64_t v = -1;
        enum gp_units_qty r = gp_units_quantity(t[i].s, 3, 0, MAX, &v);
        if (r != GP_UNITS_QTY_OK || v != t[i].milli)
            fail_msg("%s: %d %lld, want %lld", t[i].s, r, (long long)v, (long long)t[i].milli);
    }
}

/* Values finer than the unit asked are rounded up (away from zero), as
 * ParseQuantity rounds to 10^-9 and ScaledValue to the scale: "if you want
 * some resources, you should get some resources". */
static void test_rounding(void **state)
{
    (void)state;
    assert_int_equal(milli("1n"), 1);
    assert_int_equal(milli("0.0005"), 1);
    assert_int_equal(milli("1.0001m"), 2);
    assert_int_equal(milli("1e-30"), 1);
    assert_int_equal(milli("0.000000000000000000000000000001"), 1);
    assert_int_equal(value("1.000000001"), 2);
    assert_int_equal(value("1.0000000001"), 2); /* 10^-9 first, then up */
    assert_int_equal(value("1Ki"), 1024);
    assert_int_equal(value("0.5Ki"), 512);
    assert_int_equal(value("0.001Ki"), 2); /* 1.024 */
    int64_t mib;
    assert_true(gp_units_mem_mib("1", &mib));
    assert_int_equal(mib, 1);
    assert_true(gp_units_mem_mib("1048576", &mib));
    assert_int_equal(mib, 1);
    assert_true(gp_units_mem_mib("1048577", &mib));
    assert_int_equal(mib, 2);
    assert_true(gp_units_mem_mib("8Ei", &mib));
    assert_int_equal(mib, INT64_C(8796093022208));
    assert_true(gp_units_mem_mib("1E", &mib));
    assert_int_equal(mib, INT64_C(953674316407)); /* 10^18 / 2^20, up */
    int64_t n;
    assert_true(gp_units_count("2", &n) && n == 2);
    assert_true(gp_units_count("2e0", &n) && n == 2);
    assert_true(gp_units_count("2000m", &n) && n == 2);
    assert_false(gp_units_count("1500m", &n)); /* extended resources: whole */
    assert_false(gp_units_count("-1", &n));
}

static void test_refused(void **state)
{
    (void)state;
    const char *syntax[] = {"",    "e3",   "1e",  "1K",  "1Mi5", "1.2.3", "--1",   "1 ",
                            " 1",  "0x10", "inf", "nan", "1ki",  "1mi",   "1e3e4", "1e.5",
                            "1e+", ".",    "+",   "-",   "1Ei1", "1k3",   "1e3m",  "١"};
    for (size_t i = 0; i < sizeof syntax / sizeof syntax[0]; i++) {
        int64_t v = 7;
        if (gp_units_quantity(syntax[i], 3, 0, MAX, &v) != GP_UNITS_QTY_SYNTAX || v != 7)
            fail_msg("\"%s\" taken", syntax[i]);
    }
    int64_t v;
    assert_int_equal(gp_units_quantity("1e40", 3, 0, MAX, &v), GP_UNITS_QTY_RANGE);
    assert_int_equal(gp_units_quantity("1e999999999999999999", 3, 0, MAX, &v), GP_UNITS_QTY_RANGE);
    assert_int_equal(gp_units_quantity("1e-999999999999999999", 3, 0, MAX, &v), GP_UNITS_QTY_OK);
    assert_int_equal(v, 1);
    assert_int_equal(gp_units_quantity("1000000000001", 3, 0, MAX, &v), GP_UNITS_QTY_RANGE);
    assert_int_equal(gp_units_quantity("1000000000000", 3, 0, MAX, &v), GP_UNITS_QTY_OK);
    assert_int_equal(v, MAX);
    char many[160];
    memset(many, '1', 101);
    many[101] = '\0';
    assert_int_equal(gp_units_quantity(many, 0, 0, MAX, &v), GP_UNITS_QTY_RANGE);
    assert_int_equal(gp_units_quantity("-1", 3, 0, MAX, &v), GP_UNITS_QTY_NEGATIVE);
    assert_int_equal(v, -1000);
    assert_int_equal(gp_units_quantity("-1n", 3, 0, MAX, &v), GP_UNITS_QTY_NEGATIVE);
    assert_int_equal(v, -1); /* away from zero */
    assert_false(gp_units_cpu_milli("-1", &v));
    assert_false(gp_units_mem_mib("1e40", &v));
    assert_string_equal(gp_units_quantity_why(GP_UNITS_QTY_RANGE), "out of range");
}

/* A value written in each of the grammar's forms parses back to itself. */
static void test_round_trip(void **state)
{
    (void)state;
    srand(1);
    for (int i = 0; i < 20000; i++) {
        int64_t m = ((int64_t)rand() << 31 | rand()) % (MAX + 1); /* millicores */
        if (i < 4)
            m = (int64_t[]){0, 1, 999, MAX}[i];
        char b[8][64];
        snprintf(b[0], sizeof b[0], "%lldm", (long long)m);
        snprintf(b[1], sizeof b[1], "%lld.%03lld", (long long)(m / 1000), (long long)(m % 1000));
        snprintf(b[2], sizeof b[2], "%llde-3", (long long)m);
        snprintf(b[3], sizeof b[3], "%lldu", (long long)(m % 1000000) * 1000);
        snprintf(b[4], sizeof b[4], "+%lld.%03lldE0", (long long)(m / 1000), (long long)(m % 1000));
        int64_t m15 = m % MAX;                                     /* 15 digits at most */
        snprintf(b[5], sizeof b[5], "0.%015lldP", (long long)m15); /* m15 * 10^-15 * 10^15 */
        for (int k = 0; k < 6; k++) {
            int64_t v = -1, want = k == 3 ? m % 1000000 : k == 5 ? m15 : m;
            int out = k == 5 ? 0 : 3;
            if (gp_units_quantity(b[k], out, 0, MAX, &v) != GP_UNITS_QTY_OK || v != want)
                fail_msg("%s: %lld, want %lld", b[k], (long long)v, (long long)want);
        }
        /* memory: m MiB as Mi, Ki, bytes and a decimal exponent of bytes */
        int64_t mib = m % (INT64_C(1) << 40), v = -1;
        snprintf(b[6], sizeof b[6], "%lldKi", (long long)(mib * 1024));
        snprintf(b[7], sizeof b[7], "%llde0", (long long)(mib << 20));
        if (!gp_units_mem_mib(b[6], &v) || v != mib)
            fail_msg("%s: %lld", b[6], (long long)v);
        if (!gp_units_mem_mib(b[7], &v) || v != mib)
            fail_msg("%s: %lld", b[7], (long long)v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_docs_table),
        cmocka_unit_test(test_rounding),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
