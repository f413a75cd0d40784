/* test_apidouble_json.c - the API double's JSON text (tests/apidouble/jsonout.c)
 * is byte for byte what json_dumps(v, JSON_COMPACT) writes, which the
 * double's answers and watch lines were made with before: escapes of every
 * control character, '"' and '\\', '/' and UTF-8 left alone, integers at
 * their extremes, reals, empty and nested containers, members in insertion
 * order (also after a member is set again or deleted), seeded random trees,
 * and every JSON sample of the shared reference data (../shared/k8s/samples).
 * And the texts made from the version before (text_make): a chain of
 * versions copied on write as the double's writes make them, each text
 * json_dumps' bytes, what a version shares copied from the text before (a
 * mark written into the text before shows up in the next); a list item's
 * members without kind and apiVersion (jt_members); hand-written strings
 * (jt_string) as jansson's, a byte that begins no valid UTF-8 sequence as
 * U+FFFD. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shared_data.h"
#include "jsonout.h"

static void same_as_jansson(json_t *v)
{
    char *want = json_dumps(v, JSON_COMPACT);
    size_t len = 0;
    char *got = json_text(v, &len);
    assert_non_null(want);
    assert_non_null(got);
    assert_string_equal(got, want);
    assert_int_equal(len, strlen(want));
    free(want);
    free(got);
}

static void test_strings(void **state)
{
    (void)state;
    json_t *o = json_object();
    char all[128];
    for (int c = 1; c < 128; c++)
        all[c - 1] = (char)c;
    all[127] = '\0';
    json_object_set_new(o, "ascii", json_string(all));
    json_object_set_new(o, "utf8", json_string("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80"));
    json_object_set_new(o, "nul", json_stringn("a\0b", 3));
    json_object_set_new(o, "quote\"key\\\n", json_string("/path/with/slashes"));
    json_object_set_new(o, "", json_string(""));
    same_as_jansson(o);
    json_decref(o);
    /* each byte that is escaped at every place of strings up to 40 long
     * (the text looks at eight bytes at a time) */
    static const char esc[] = {'"', '\\', '\n', 0x01, 0x1f, 0x7f, (char)0xc3};
    for (size_t e = 0; e < sizeof esc; e++)
        for (size_t len = 1; len <= 40; len++)
            for (size_t at = 0; at < len; at++) {
                char b[41];
                memset(b, 'a', len);
                b[at] = esc[e];
                if (esc[e] == (char)0xc3) { /* a two-byte UTF-8 character */
                    if (at + 1 == len)
                        continue;
                    b[at + 1] = (char)0xa9;
                }
                json_t *v = json_pack("[s%]", b, len);
                assert_non_null(v);
                same_as_jansson(v);
                json_decref(v);
            }
}

static void test_numbers_and_containers(void **state)
{
    (void)state;
    json_t *v =
        json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:b,s:b,s:n,s:{},s:[],s:[{},[[]],{s:[]}]}",
                  "min", (json_int_t)INT64_MIN, "max", (json_int_t)INT64_MAX, "zero", (json_int_t)0,
                  "neg", (json_int_t)-42, "r1", 0.1, "r2", 1e300, "r3", -2.5, "r4", 3.0, "t", 1,
                  "f", 0, "n", "eo", "ea", "nest", "x");
    same_as_jansson(v);
    /* insertion order: a member set again stays where it was, a deleted one
     * goes, a new one comes last */
    json_object_set_new(v, "zero", json_string("again"));
    json_object_del(v, "neg");
    json_object_set_new(v, "neg", json_integer(7));
    same_as_jansson(v);
    json_decref(v);
    json_t *a = json_array();
    same_as_jansson(a);
    json_decref(a);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;

static unsigned next(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static json_t *random_value(int depth)
{
    switch (depth > 4 ? next(5) : next(7)) {
    case 0: {
        char s[24];
        size_t n = next(sizeof s);
        for (size_t i = 0; i < n; i++)
            s[i] = (char)(1 + next(127));
        return json_stringn(s, n);
    }
    case 1:
        return json_integer((json_int_t)next(1u << 31) - (json_int_t)(1u << 30));
    case 2:
        return json_real((double)next(100000) / 7.0);
    case 3:
        return next(2) ? json_true() : json_false();
    case 4:
        return json_null();
    case 5: {
        json_t *o = json_object();
        for (unsigned i = next(6); i > 0; i--) {
            char k[16];
            snprintf(k, sizeof k, "k%u\t%u", next(100), i);
            json_object_set_new(o, k, random_value(depth + 1));
        }
        return o;
    }
    default: {
        json_t *arr = json_array();
        for (unsigned i = next(6); i > 0; i--)
            json_array_append_new(arr, random_value(depth + 1));
        return arr;
    }
    }
}

static void test_random_trees(void **state)
{
    (void)state;
    for (int i = 0; i < 500; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "v", random_value(0));
        same_as_jansson(o);
        json_decref(o);
    }
}

/* v with what is at path[0, n) (member names; arrays: their first
 * element) replaced, copied on write: every container on the way a fresh
 * shallow copy, the rest shared with v. */
static json_t *cow_edit(json_t *v, int depth)
{
    if (depth > 0 && (next(3) == 0 || !(json_is_object(v) || json_is_array(v))))
        return random_value(depth);
    if (json_is_array(v)) {
        json_t *c = json_copy(v);
        if (json_array_size(c)) {
            size_t i = next((unsigned)json_array_size(c));
            json_array_set_new(c, i, cow_edit(json_array_get(c, i), depth + 1));
        } else {
            json_array_append_new(c, random_value(depth + 1));
        }
        return c;
    }
    json_t *c = json_copy(v);
    size_t n = json_object_size(c);
    if (n == 0 || next(4) == 0) { /* a new member */
        char k[16];
        snprintf(k, sizeof k, "n%u", next(1000));
        json_object_set_new(c, k, random_value(depth + 1));
        return c;
    }
    unsigned at = next((unsigned)n), i = 0;
    const char *k;
    json_t *x;
    json_object_foreach(c, k, x)
    {
        if (i++ == at) {
            if (next(5) == 0)
                json_object_del(c, k);
            else
                json_object_set_new(c, k, cow_edit(x, depth + 1));
            break;
        }
    }
    return c;
}

static json_t *nested(int depth)
{
    json_t *o = json_object();
    for (unsigned i = 0; i < 4; i++) {
        char k[16];
        snprintf(k, sizeof k, "m%u", i);
        json_object_set_new(o, k, depth < 4 ? nested(depth + 1) : random_value(depth));
    }
    json_object_set_new(o, "arr", json_pack("[{s:i},[1,2],{}]", "x", depth));
    return o;
}

static void test_text_from_the_version_before(void **state)
{
    (void)state;
    for (int chain = 0; chain < 40; chain++) {
        json_t *v = nested(0);
        struct text *t = text_make(v, NULL);
        assert_non_null(t);
        for (int k = 0; k < 30; k++) {
            json_t *w = cow_edit(v, 0);
            struct text *u = text_make(w, t);
            assert_non_null(u);
            char *want = json_dumps(w, JSON_COMPACT);
            assert_string_equal(u->b, want);
            assert_int_equal(u->len, strlen(want));
            free(want);
            text_unref(t);
            json_decref(v);
            v = w;
            t = u;
        }
        text_unref(t);
        json_decref(v);
    }
}

static void test_text_copies_what_is_shared(void **state)
{
    (void)state;
    json_t *v =
        json_pack("{s:{s:s,s:{s:s}},s:{s:[{s:s}]},s:s}", "metadata", "name", "p", "annotations",
                  "a", "1", "spec", "containers", "image", "x", "kind", "Pod");
    struct text *t = text_make(v, NULL);
    assert_non_null(t);
    assert_true(t->nspans >= 4);
    /* the next version: a fresh metadata, spec shared */
    json_t *w = json_copy(v);
    json_t *m = json_copy(json_object_get(v, "metadata"));
    json_object_set_new(m, "resourceVersion", json_string("2"));
    json_object_set_new(w, "metadata", m);
    /* the text before marked where spec's image is: the next text copies it */
    char *img = strstr(t->b, "\"x\"");
    assert_non_null(img);
    img[1] = 'Z';
    struct text *u = text_make(w, t);
    assert_non_null(u);
    assert_non_null(strstr(u->b, "\"image\":\"Z\""));
    /* metadata is written anew: its annotations (shared) copied, its name not marked */
    assert_non_null(strstr(u->b, "\"name\":\"p\""));
    img[1] = 'x';
    text_unref(u);
    u = text_make(w, t);
    char *want = json_dumps(w, JSON_COMPACT);
    assert_string_equal(u->b, want);
    free(want);
    /* a list item: the members but kind and apiVersion, from the text */
    static const char *const skip[] = {"kind", "apiVersion", NULL};
    struct jtext jt = {0};
    assert_true(jt_members(&jt, w, u, skip));
    jt_raw(&jt, "}", 1);
    char *item = jt_end(&jt, NULL);
    json_t *c = json_copy(w);
    json_object_del(c, "kind");
    want = json_dumps(c, JSON_COMPACT);
    assert_string_equal(item, want);
    free(want);
    free(item);
    json_decref(c);
    text_unref(u);
    text_unref(t);
    json_decref(w);
    json_decref(v);
}

static void test_hand_written_strings(void **state)
{
    (void)state;
    static const char *const valid[] = {"", "plain", "q\"b\\s\n\t\x01\x1f/",
                                        "gr\xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80",
                                        "\xed\x9f\xbf \xf4\x8f\xbf\xbf"};
    for (size_t i = 0; i < sizeof valid / sizeof *valid; i++) {
        struct jtext t = {0};
        jt_string(&t, valid[i]);
        char *got = jt_end(&t, NULL);
        json_t *s = json_string(valid[i]);
        assert_non_null(s);
        char *want = json_dumps(s, JSON_COMPACT | JSON_ENCODE_ANY);
        assert_string_equal(got, want);
        free(got);
        free(want);
        json_decref(s);
    }
    /* invalid: a lone continuation byte, an overlong form, a surrogate,
     * above U+10FFFF, a sequence cut short: each bad byte one U+FFFD */
    static const char *const bad[][2] = {
        {"a\x80"
         "b",
         "\"a\xef\xbf\xbd"
         "b\""},
        {"\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"x\xe2\x82", "\"x\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xff\"", "\"\xef\xbf\xbd\\\"\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct jtext t = {0};
        jt_string(&t, bad[i][0]);
        char *got = jt_end(&t, NULL);
        assert_string_equal(got, bad[i][1]);
        json_t *back = json_loads(got, JSON_DECODE_ANY, NULL); /* valid JSON, valid UTF-8 */
        assert_non_null(back);
        json_decref(back);
        free(got);
    }
}

static void test_shared_samples(void **state)
{
    (void)state;
    static const char *const files[] = {
        "k8s/samples/recorded-apiserver-v1.28/pod-create.json",
        "k8s/samples/recorded-apiserver-v1.28/pod-get.json",
        "k8s/samples/recorded-apiserver-v1.28/pod-stale.json",
        "k8s/samples/recorded-apiserver-v1.28/node-status-patch.json",
        "k8s/samples/roundtrip-v1.35.0/core.v1.Pod.json",
        "k8s/samples/roundtrip-v1.35.0/core.v1.Node.json",
        "k8s/samples/roundtrip-v1.35.0/core.v1.Binding.json",
        "k8s/samples/roundtrip-v1.35.0/core.v1.Event.json",
        "k8s/samples/roundtrip-v1.35.0/events.k8s.io.v1.Event.json",
        "k8s/samples/roundtrip-v1.35.0/coordination.k8s.io.v1.Lease.json",
        "k8s/samples/insights-operator/pod-pending-unschedulable.json",
        "k8s/samples/insights-operator/node-worker-with-managedfields.json",
        "k8s/samples/kubectl-recorded/configmaplist.json",
        "k8s/samples/kubectl-recorded/status-422-invalid-causes.json",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", GP_SHARED_DIR, files[i]);
        GP_NEED_SHARED(path);
        json_error_t err;
        json_t *doc = json_load_file(path, JSON_DISABLE_EOF_CHECK,
                                     &err); /* a recorded answer may be followed by its headers */
        if (!doc)
            fail_msg("%s:%d: %s", path, err.line, err.text);
        same_as_jansson(doc);
        json_decref(doc);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/k8s/samples/recorded-apiserver-v1.28/watch-raw.jsonl",
             GP_SHARED_DIR);
    GP_NEED_SHARED(path);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[65536];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *ev = json_loads(line, 0, NULL);
        if (ev) {
            same_as_jansson(ev);
            json_decref(ev);
            n++;
        }
    }
    fclose(f);
    assert_true(n > 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_numbers_and_containers),
        cmocka_unit_test(test_random_trees),
        cmocka_unit_test(test_text_from_the_version_before),
        cmocka_unit_test(test_text_copies_what_is_shared),
        cmocka_unit_test(test_hand_written_strings),
    };
    const struct CMUnitTest shared[] = {cmocka_unit_test(test_shared_samples)};
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
