/* test_csv.c - the CSV tokenizer (io/csv.h): quoting, line ends, blank
 * lines, trimming, header mapping, typed fields and their diagnostics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "io/csv.h"

/* Tokenizes text and returns "f1|f2;f1|f2;..." (records joined by ';'),
 * or "ERR:<diag>" on an error. */
static const char *records(const char *text, size_t len)
{
    static char out[1024];
    struct gp_csv c;
    struct gp_diag d = {""};
    bool got;
    enum gp_err err;
    size_t o = 0;
    out[0] = '\0';
    gp_csv_init(&c, text, len, "t.csv");
    while ((err = gp_csv_next(&c, &got, &d)) == GP_OK && got) {
        for (size_t i = 0; i < c.nfields; i++)
            o += (size_t)snprintf(out + o, sizeof out - o, "%s%s", i ? "|" : (o ? ";" : ""),
                                  c.fields[i]);
    }
    if (err != GP_OK)
        snprintf(out, sizeof out, "ERR:%s", d.msg);
    gp_csv_free(&c);
    return out;
}

#define REC(s) records((s), sizeof(s) - 1)

static void test_plain(void **state)
{
    (void)state;
    assert_string_equal(REC("a,b,c\n1,2,3\n"), "a|b|c;1|2|3");
    assert_string_equal(REC("a,b,c"), "a|b|c");        /* no final line end */
    assert_string_equal(REC("a,b,\n,,\n"), "a|b|;||"); /* empty fields */
    assert_string_equal(REC(""), "");
    assert_string_equal(REC("x"), "x");
}

static void test_line_ends_and_blank_lines(void **state)
{
    (void)state;
    assert_string_equal(REC("a,b\r\n1,2\r\n"), "a|b;1|2");
    assert_string_equal(REC("a,b\r1,2\r"), "a|b;1|2");
    assert_string_equal(REC("\n\na,b\n\n  \t\n1,2\n\n"), "a|b;1|2");
    assert_string_equal(REC("\xEF\xBB\xBF"
                            "a,b\n"),
                        "a|b"); /* byte order mark */
}

static void test_trim(void **state)
{
    (void)state;
    assert_string_equal(REC("machineId, number of GPUs, single GPU mem\nm0,2, 12GB\n"),
                        "machineId|number of GPUs|single GPU mem;m0|2|12GB");
    assert_string_equal(REC(" a\t, \" b \" ,c \n"), "a| b |c"); /* quoted blanks stay */
}

static void test_quoted(void **state)
{
    (void)state;
    assert_string_equal(REC("\"a,b\",\"say \"\"hi\"\"\",\"\"\n"), "a,b|say \"hi\"|");
    /* a line end inside quotes is part of the field, CRLF kept as is */
    assert_string_equal(REC("\"x\ny\",\"p\r\nq\"\n2,3\n"), "x\ny|p\r\nq;2|3");
}

static void test_line_numbers(void **state)
{
    (void)state;
    const char text[] = "h1,h2\n\n\"multi\nline\",1\n\r\nz,9\n";
    struct gp_csv c;
    struct gp_diag d;
    bool got;
    gp_csv_init(&c, text, sizeof text - 1, "t.csv");
    assert_int_equal(gp_csv_next(&c, &got, &d), GP_OK);
    assert_true(got);
    assert_int_equal(c.line, 1);
    assert_int_equal(gp_csv_next(&c, &got, &d), GP_OK);
    assert_true(got);
    assert_int_equal(c.line, 3);
    assert_string_equal(c.fields[0], "multi\nline");
    assert_int_equal(gp_csv_next(&c, &got, &d), GP_OK);
    assert_true(got);
    assert_int_equal(c.line, 6);
    assert_string_equal(c.fields[1], "9");
    assert_int_equal(gp_csv_next(&c, &got, &d), GP_OK);
    assert_false(got);
    gp_csv_free(&c);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    assert_string_equal(
        REC("a,b\n1,\"open\n2,3\n"),
        "ERR:t.csv:2: unterminated quoted field (no closing quote before the end of the input)");
    assert_string_equal(REC("a\n\"x\"y,1\n"),
                        "ERR:t.csv:2: expected ',' or a line end after a closing quote");
    assert_string_equal(REC("a\nx\"y\n"),
                        "ERR:t.csv:2: quote inside an unquoted field (quote the whole field)");
    assert_string_equal(REC("a\nx\0y\n"), "ERR:t.csv:2: NUL byte in the input, expected text");
    assert_string_equal(REC("a\n\"x\0\"\n"), "ERR:t.csv:2: NUL byte in the input, expected text");
}

static const struct gp_csv_col cols[] = {
    {"name", true},
    {"cpu", true},
    {"note", false},
    {"extra", false},
};

static enum gp_err header(const char *text, int *idx, struct gp_diag *d, struct gp_csv *c)
{
    gp_csv_init(c, text, strlen(text), "h.csv");
    return gp_csv_header(c, cols, 4, 0, idx, d);
}

static void test_header_mapping(void **state)
{
    (void)state;
    struct gp_csv c;
    struct gp_diag d;
    int idx[4];
    bool got;
    assert_int_equal(header("note,cpu,name\nhello,500,x\n", idx, &d, &c), GP_OK);
    assert_int_equal(idx[0], 2);
    assert_int_equal(idx[1], 1);
    assert_int_equal(idx[2], 0);
    assert_int_equal(idx[3], -1);
    assert_int_equal(gp_csv_next(&c, &got, &d), GP_OK);
    assert_true(got);
    assert_string_equal(gp_csv_field(&c, idx[0]), "x");
    assert_string_equal(gp_csv_field(&c, idx[2]), "hello");
    assert_string_equal(gp_csv_field(&c, idx[3]), ""); /* absent column */
    gp_csv_free(&c);
}

static void test_header_errors(void **state)
{
    (void)state;
    struct gp_csv c;
    struct gp_diag d;
    int idx[4];
    assert_int_equal(header("", idx, &d, &c), GP_EPARSE);
    assert_string_equal(d.msg, "h.csv: empty file, expected a header line");
    gp_csv_free(&c);
    assert_int_equal(header("\n\n  \n", idx, &d, &c), GP_EPARSE);
    assert_string_equal(d.msg, "h.csv: empty file, expected a header line");
    gp_csv_free(&c);
    assert_int_equal(header("\nname,cpu,bogus\n", idx, &d, &c), GP_EPARSE);
    assert_string_equal(d.msg, "h.csv:2: unknown column \"bogus\" (known columns: name, cpu, "
                               "note, extra)");
    gp_csv_free(&c);
    assert_int_equal(header("name,cpu,name\n", idx, &d, &c), GP_EPARSE);
    assert_string_equal(d.msg, "h.csv:1: column 'name' appears twice in the header");
    gp_csv_free(&c);
    assert_int_equal(header("name,note\n", idx, &d, &c), GP_EPARSE);
    assert_string_equal(d.msg, "h.csv:1: missing required column 'cpu' in the header");
    gp_csv_free(&c);
    /* unknown columns may be allowed */
    gp_csv_init(&c, "name,x,cpu\n", 11, "h.csv");
    assert_int_equal(gp_csv_header(&c, cols, 4, GP_CSV_ALLOW_UNKNOWN, idx, &d), GP_OK);
    assert_int_equal(idx[1], 2);
    gp_csv_free(&c);
}

static void test_field_count(void **state)
{
    (void)state;
    struct gp_csv c;
    struct gp_diag d;
    int idx[4];
    bool got;
    assert_int_equal(header("name,cpu\na,1\n\nb\n", idx, &d, &c), GP_OK);
    assert_int_equal(gp_csv_next(&c, &got, &d), GP_OK);
    assert_int_equal(gp_csv_next(&c, &got, &d), GP_EPARSE);
    assert_string_equal(d.msg, "h.csv:4: expected 2 fields as in the header, got 1");
    gp_csv_free(&c);
    assert_int_equal(header("name,cpu\na,1,2\n", idx, &d, &c), GP_OK);
    assert_int_equal(gp_csv_next(&c, &got, &d), GP_EPARSE);
    assert_string_equal(d.msg, "h.csv:2: expected 2 fields as in the header, got 3");
    gp_csv_free(&c);
}

/* Reads the one-field record text and applies gp_csv_int to it. */
static enum gp_err int_of(const char *text, int64_t min, int64_t max, int64_t *v, struct gp_diag *d)
{
    struct gp_csv c;
    bool got;
    gp_csv_init(&c, text, strlen(text), "p.csv");
    enum gp_err err = gp_csv_next(&c, &got, d);
    if (err == GP_OK)
        err = gp_csv_int(&c, 0, "gpu_milli", min, max, v, d);
    gp_csv_free(&c);
    return err;
}

static void test_int(void **state)
{
    (void)state;
    struct gp_diag d;
    int64_t v = -1;
    assert_int_equal(int_of("460\n", 0, 1000, &v, &d), GP_OK);
    assert_int_equal(v, 460);
    assert_int_equal(int_of("-5", -10, 10, &v, &d), GP_OK);
    assert_int_equal(v, -5);
    assert_int_equal(int_of("9223372036854775807", 0, INT64_MAX, &v, &d), GP_OK);
    assert_true(v == INT64_MAX);
    assert_int_equal(int_of("abc", 0, 1000, &v, &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "p.csv:1: column 'gpu_milli': expected an integer 0..1000, got \"abc\"");
    assert_int_equal(int_of("1001", 0, 1000, &v, &d), GP_EINVALID);
    assert_int_equal(int_of("-3", 0, INT64_MAX, &v, &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "p.csv:1: column 'gpu_milli': expected a non-negative integer, got \"-3\"");
    assert_int_equal(int_of("0", 1, INT64_MAX, &v, &d), GP_EINVALID);
    assert_string_equal(d.msg, "p.csv:1: column 'gpu_milli': expected an integer >= 1, got \"0\"");
    assert_int_equal(int_of("9223372036854775808", 0, INT64_MAX, &v, &d), GP_EINVALID);
    assert_int_equal(int_of("99999999999999999999999", 0, INT64_MAX, &v, &d), GP_EINVALID);
    assert_int_equal(int_of("-", -10, 10, &v, &d), GP_EINVALID);
    assert_int_equal(int_of("1.5", 0, 10, &v, &d), GP_EINVALID);
    assert_int_equal(int_of("+1", 0, 10, &v, &d), GP_EINVALID);
    assert_int_equal(int_of("\"\"", 0, 10, &v, &d), GP_EINVALID); /* empty */
    assert_string_equal(d.msg, "p.csv:1: column 'gpu_milli': expected an integer 0..10, got \"\"");
    assert_int_equal(v, INT64_MAX); /* untouched by failures */
}

static enum gp_err num_of(const char *text, double *v, struct gp_diag *d)
{
    struct gp_csv c;
    bool got;
    gp_csv_init(&c, text, strlen(text), "p.csv");
    enum gp_err err = gp_csv_next(&c, &got, d);
    if (err == GP_OK)
        err = gp_csv_number(&c, 0, "duration", 0, 1e10, v, d);
    gp_csv_free(&c);
    return err;
}

static void test_number(void **state)
{
    (void)state;
    struct gp_diag d;
    double v = -1;
    assert_int_equal(num_of("66.0", &v, &d), GP_OK);
    assert_true(v == 66.0);
    assert_int_equal(num_of("2.5e3", &v, &d), GP_OK);
    assert_true(v == 2500.0);
    assert_int_equal(num_of("7", &v, &d), GP_OK);
    assert_true(v == 7.0);
    static const char *const bad[] = {"abc",   "-1", "inf",   "nan", "0x10",
                                      "1e400", "",   "1.0.0", "2e10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(num_of(bad[i], &v, &d), GP_EINVALID);
        assert_non_null(strstr(d.msg, "column 'duration': expected a number 0..1e+10, got"));
    }
    assert_true(v == 7.0);
}

static void test_quote(void **state)
{
    (void)state;
    char q[64];
    gp_csv_quote("a\"b\\c\x01\xff", q, sizeof q);
    assert_string_equal(q, "a\\\"b\\\\c\\x01\\xff");
    gp_csv_quote("0123456789012345678901234567890123456789XYZ", q, sizeof q);
    assert_string_equal(q, "0123456789012345678901234567890123456789...");
    char small[8];
    gp_csv_quote("abcdefghij", small, sizeof small);
    assert_true(strlen(small) < sizeof small);
    assert_non_null(strstr(small, "..."));
}

static void test_map(void **state)
{
    (void)state;
    struct gp_csv_map m = {0};
    static char keys[2000][8];
    bool found;
    uint32_t v;
    for (uint32_t i = 0; i < 2000; i++) {
        snprintf(keys[i], sizeof keys[i], "k%u", i);
        assert_int_equal(gp_csv_map_put(&m, keys[i], i * 3, &found, &v), GP_OK);
        assert_false(found);
    }
    assert_int_equal(m.len, 2000);
    for (uint32_t i = 0; i < 2000; i++) {
        assert_true(gp_csv_map_get(&m, keys[i], &v));
        assert_int_equal(v, i * 3);
    }
    assert_int_equal(gp_csv_map_put(&m, "k7", 99, &found, &v), GP_OK);
    assert_true(found);
    assert_int_equal(v, 21); /* the first value stays */
    assert_false(gp_csv_map_get(&m, "k2000", &v));
    gp_csv_map_free(&m);
    assert_false(gp_csv_map_get(&m, "k1", &v)); /* empty map */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_line_ends_and_blank_lines),
        cmocka_unit_test(test_trim),
        cmocka_unit_test(test_quoted),
        cmocka_unit_test(test_line_numbers),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_header_mapping),
        cmocka_unit_test(test_header_errors),
        cmocka_unit_test(test_field_count),
        cmocka_unit_test(test_int),
        cmocka_unit_test(test_number),
        cmocka_unit_test(test_quote),
        cmocka_unit_test(test_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
