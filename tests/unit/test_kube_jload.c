/* test_kube_jload.c - the lean JSON scanner (kube/jload.c): what it reads
 * is jansson's tree, members in the same order; what it cannot say (a
 * \u escape, a byte over 0x7f, a real, an integer of 19
 * digits, a duplicate key, deep nesting, text jansson refuses) it leaves
 * to jansson, so gp_kube_jload answers as json_loadb does, duplicates
 * refused under JSON_REJECT_DUPLICATES included; and a watch event read
 * through it is the same event. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/jload.h"
#include "kube/watch.h"

/* The scanner's tree is jansson's, key for key in the same order. */
static void same_order(json_t *a, json_t *b)
{
    assert_int_equal(json_typeof(a), json_typeof(b));
    if (json_is_object(a)) {
        assert_int_equal(json_object_size(a), json_object_size(b));
        void *ia = json_object_iter(a), *ib = json_object_iter(b);
        for (; ia && ib; ia = json_object_iter_next(a, ia), ib = json_object_iter_next(b, ib)) {
            assert_string_equal(json_object_iter_key(ia), json_object_iter_key(ib));
            same_order(json_object_iter_value(ia), json_object_iter_value(ib));
        }
        assert_null(ia);
        assert_null(ib);
    } else if (json_is_array(a)) {
        assert_int_equal(json_array_size(a), json_array_size(b));
        for (size_t i = 0; i < json_array_size(a); i++)
            same_order(json_array_get(a, i), json_array_get(b, i));
    } else {
        assert_true(json_equal(a, b));
    }
}

static void read_as_jansson(const char *text)
{
    json_t *lean = gp_kube_jload_lean(text, strlen(text));
    json_t *ref = json_loadb(text, strlen(text), JSON_REJECT_DUPLICATES, NULL);
    if (!lean)
        fail_msg("the scanner could not say: %s", text);
    assert_non_null(ref);
    same_order(lean, ref);
    json_decref(lean);
    json_decref(ref);
}

static void test_subset_read(void **state)
{
    (void)state;
    read_as_jansson("{}");
    read_as_jansson("[]");
    read_as_jansson(
        " \t\r\n{ \"a\" : [ 1 , -2 , 0 , -0 , 123456789012345678 , -123456789012345678 ] ,"
        "\"b\":{\"c\":null,\"d\":true,\"e\":false,\"\":\"\"}, \"z\":[[],{}] } \n");
    read_as_jansson("{\"esc\":\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\",\"plain\":\"x y~!\"}");
    /* escaped keys (metadata.managedFields' shape: "k:{\"name\":...}"),
     * kept while their values are read, strings with escapes of their own */
    read_as_jansson("{\"a\\\"\":1,\"k:{\\\"name\\\":\\\"c\\\"}\":{\"x\\ny\":\"v\\tw\","
                    "\"f:\\/p\":[\"\\\"q\\\"\"]},\"a\\/b\":{}}");
    read_as_jansson("{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":"
                    "\"p\",\"namespace\":\"default\",\"resourceVersion\":\"12\",\"annotations\":{"
                    "\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"0,3\"}},\"spec\":{"
                    "\"nodeName\":\"n1\",\"priority\":7,\"containers\":[{\"name\":\"c\"}]}}}");
    /* the order of the text, not a sorted one */
    json_t *v = gp_kube_jload_lean("{\"z\":1,\"a\":2,\"m\":3}", 19);
    assert_non_null(v);
    assert_string_equal(json_object_iter_key(json_object_iter(v)), "z");
    assert_int_equal(json_integer_value(json_object_get(v, "m")), 3);
    json_decref(v);
}

/* Outside the subset: the scanner gives nothing, gp_kube_jload jansson's
 * answer (a tree, or NULL with jansson's message). */
static void left_to_jansson(const char *text, bool jansson_reads)
{
    size_t n = strlen(text);
    json_t *lean = gp_kube_jload_lean(text, n);
    if (lean)
        fail_msg("the scanner read what is jansson's: %s", text);
    json_error_t err;
    json_t *v = gp_kube_jload(text, n, JSON_REJECT_DUPLICATES, &err);
    json_t *ref = json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL);
    assert_int_equal(v != NULL, jansson_reads);
    assert_int_equal(ref != NULL, jansson_reads);
    if (v)
        assert_true(json_equal(v, ref));
    else
        assert_true(err.text[0] != '\0');
    json_decref(v);
    json_decref(ref);
}

static void test_outside_subset(void **state)
{
    (void)state;
    left_to_jansson("{\"a\":\"\\u00e9\"}", true);
    left_to_jansson("{\"a\":\"caf\xc3\xa9\"}", true);
    left_to_jansson("{\"\\u0061\":1}", true);
    left_to_jansson("{\"a\":1.5}", true);
    left_to_jansson("{\"a\":1e3}", true);
    left_to_jansson("{\"a\":1234567890123456789}", true);
    left_to_jansson("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                    "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
                    true);
    /* what jansson refuses, refused */
    left_to_jansson("{\"a\":1,\"a\":2}", false); /* a duplicate under JSON_REJECT_DUPLICATES */
    left_to_jansson("{\"a/b\":1,\"a\\/b\":2}", false); /* the same key, escaped */
    left_to_jansson("{\"a\":\"caf\xc3\"}", false);
    left_to_jansson("{\"a\":\"\xed\xa0\x80\"}", false); /* a surrogate in UTF-8 */
    left_to_jansson("{\"a\":\"x\ty\"}", false);         /* a control character */
    left_to_jansson("{\"a\":\"\\x\"}", false);
    left_to_jansson("{\"a\":\"\\u12\"}", false);
    left_to_jansson("{\"a\":01}", false);
    left_to_jansson("{\"a\":-}", false);
    left_to_jansson("{\"a\":+1}", false);
    left_to_jansson("{\"a\":tru}", false);
    left_to_jansson("{\"a\":truex}", false);
    left_to_jansson("{\"a\":1,}", false);
    left_to_jansson("[1,]", false);
    left_to_jansson("{\"a\" 1}", false);
    left_to_jansson("{\"a\":1", false);
    left_to_jansson("{\"a\":\"x", false);
    left_to_jansson("{a:1}", false);
    left_to_jansson("{} {}", false);
    left_to_jansson("{}x", false);
    left_to_jansson("\"top\"", false); /* not an object or array (no JSON_DECODE_ANY) */
    left_to_jansson("7", false);
    left_to_jansson("", false);
    left_to_jansson("   ", false);
    static const char nul[] = "{\"a\":\"x\0y\"}";
    json_t *v = gp_kube_jload(nul, sizeof nul - 1, 0, NULL);
    assert_null(v);
    assert_null(gp_kube_jload_lean(nul, sizeof nul - 1));
}

/* Without JSON_REJECT_DUPLICATES the last of a key wins, jansson's rule. */
static void test_duplicate_without_flag(void **state)
{
    (void)state;
    const char *t = "{\"a\":1,\"b\":{\"c\":2,\"c\":3},\"a\":4}";
    assert_null(gp_kube_jload_lean(t, strlen(t)));
    json_t *v = gp_kube_jload(t, strlen(t), 0, NULL), *ref = json_loadb(t, strlen(t), 0, NULL);
    assert_non_null(v);
    assert_true(json_equal(v, ref));
    assert_int_equal(json_integer_value(json_object_get(v, "a")), 4);
    json_decref(v);
    json_decref(ref);
    /* integers as reals: jansson's alone */
    v = gp_kube_jload("[5]", 3, JSON_DECODE_INT_AS_REAL, NULL);
    assert_true(json_is_real(json_array_get(v, 0)));
    json_decref(v);
}

/* The text is read to its length only: a document cut short is not read
 * past its end (the NUL after it is no part of it). */
static void test_length_bound(void **state)
{
    (void)state;
    const char *t = "{\"a\":[1,2],\"b\":\"xy\"}";
    for (size_t n = 0; n < strlen(t); n++) {
        char *cut = malloc(n ? n : 1); /* no terminator: ASan sees a read past n */
        memcpy(cut, t, n);
        json_t *v = gp_kube_jload_lean(cut, n);
        assert_null(v);
        free(cut);
    }
}

/* A watch event read through the scanner: its fields as before, and an
 * event the scanner leaves to jansson read the same way. */
static void test_watch_event(void **state)
{
    (void)state;
    const char *lines[] = {
        "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
        "\"resourceVersion\":\"41\"}}}",
        "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
        "\"resourceVersion\":\"41\",\"annotations\":{\"x\":\"caf\xc3\xa9\"}}}}",
    };
    for (size_t i = 0; i < 2; i++) {
        struct gp_kube_event ev;
        struct gp_diag d = {""};
        assert_int_equal(gp_kube_event_parse(lines[i], strlen(lines[i]), &ev, &d), GP_OK);
        assert_int_equal(ev.type, GP_KUBE_MODIFIED);
        assert_string_equal(ev.name, "p");
        assert_string_equal(ev.ns, "ns");
        assert_string_equal(ev.rv, "41");
        gp_kube_event_clear(&ev);
    }
    const char *dup = "{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{\"metadata\":{"
                      "\"name\":\"p\",\"resourceVersion\":\"1\"}}}";
    struct gp_kube_event ev;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_event_parse(dup, strlen(dup), &ev, &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "duplicate"));
}

/* Strings passed eight bytes at a time: every special byte (a quote
 * ending it early, an escape, a control character, a byte over 0x7f) at
 * every place of strings up to 40 long, and the answer is jansson's. */
static void test_string_places(void **state)
{
    (void)state;
    const char *special[] = {"\\n", "\\\"", "\\\\", "\x01", "\x1f", "\xc3\xa9", "\x7f", "\"", " "};
    char text[128];
    for (size_t len = 0; len <= 40; len++)
        for (size_t at = 0; at <= len; at++)
            for (size_t k = 0; k < sizeof special / sizeof *special; k++) {
                size_t n = (size_t)snprintf(text, sizeof text, "{\"k\":\"");
                for (size_t i = 0; i < len; i++)
                    text[n++] = (char)('a' + i % 26);
                size_t sl = strlen(special[k]);
                memmove(text + n - (len - at) + sl, text + n - (len - at), len - at);
                memcpy(text + n - (len - at), special[k], sl);
                n += sl;
                n += (size_t)snprintf(text + n, sizeof text - n, "\",\"z\":1}");
                json_t *v = gp_kube_jload(text, n, JSON_REJECT_DUPLICATES, NULL);
                json_t *ref = json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL);
                if ((v != NULL) != (ref != NULL))
                    fail_msg("not jansson's answer: %.*s", (int)n, text);
                if (v)
                    same_order(v, ref);
                json_decref(v);
                json_decref(ref);
            }
}

/* Members left out (gp_kube_jload_skip): jansson's tree with those
 * members deleted, whether the scanner reads the text (members left out
 * as they are met) or jansson does (pruned after); a member left out
 * twice, or with a value jansson refuses, is refused as jansson refuses
 * it. */
static const struct gp_kube_jskip t_each_kids[] = {{"drop", NULL, 0}};
static const struct gp_kube_jskip t_spec_kids[] = {
    {"list", (const struct gp_kube_jskip[]){{"[]", t_each_kids, 1}}, 1},
    {"gone", NULL, 0},
    {"obj", NULL, 0},
};
static const struct gp_kube_jskip t_root_kids[] = {{"spec", t_spec_kids, 3}};
static const struct gp_kube_jskip t_skip = {NULL, t_root_kids, 1};

static void skip_as_pruned(const char *text, bool lean_reads)
{
    size_t n = strlen(text);
    json_t *ref = json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(ref);
    json_t *spec = json_object_get(ref, "spec");
    json_object_del(spec, "gone");
    json_object_del(spec, "obj");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(spec, "list"), i, e) json_object_del(e, "drop");
    json_t *lean = gp_kube_jload_lean(text, n);
    assert_int_equal(lean != NULL, lean_reads);
    json_decref(lean);
    json_t *v = gp_kube_jload_skip(text, n, JSON_REJECT_DUPLICATES, NULL, &t_skip);
    assert_non_null(v);
    same_order(v, ref);
    json_decref(v);
    json_decref(ref);
}

static void test_skip(void **state)
{
    (void)state;
    const char *doc = "{\"a\":1,\"spec\":{\"keep\":\"k\",\"gone\":\"g\\\"q\",\"list\":[{\"drop\":"
                      "[1,{\"x\":2}],\"stay\":3},{\"stay\":4},5],\"obj\":{\"y\":[true]},\"gone2\":"
                      "null},\"gone\":\"top level: kept\",\"drop\":6}";
    skip_as_pruned(doc, true);
    /* a \u escape: jansson reads it, the members pruned after */
    skip_as_pruned("{\"spec\":{\"gone\":\"\\u00e9\",\"list\":[{\"drop\":1,\"s\":\"\\u00e9\"}],"
                   "\"k\":2}}",
                   false);
    skip_as_pruned("{\"spec\":{\"list\":{\"drop\":1},\"gone\":{}}}", true); /* not an array */
    skip_as_pruned("{\"spec\":[{\"gone\":1}]}", true);                      /* not an object */
    skip_as_pruned("{\"spec\":{\"list\":{\"[]\":{\"drop\":1}}}}", true); /* "[]": elements only */
    const char *bad[] = {
        "{\"spec\":{\"gone\":1,\"gone\":2}}",              /* left out twice */
        "{\"spec\":{\"obj\":{\"y\":1,\"y\":2}}}",          /* a duplicate inside one left out */
        "{\"spec\":{\"gone\":\"a\x01\"}}",                 /* a control character */
        "{\"spec\":{\"gone\":[1,}}",                       /* jansson refuses it */
        "{\"spec\":{\"list\":[{\"drop\":1,\"drop\":2}]}}", /* twice in an element */
        "{\"spec\":{\"gone\":01}}",
        "{\"spec\":{\"obj\":{\"a\\/b\":1,\"a/b\":2}}}", /* escaped, twice, inside one left out */
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        json_error_t err;
        json_t *v =
            gp_kube_jload_skip(bad[k], strlen(bad[k]), JSON_REJECT_DUPLICATES, &err, &t_skip);
        if (v)
            fail_msg("read what jansson refuses: %s", bad[k]);
        assert_true(err.text[0] != '\0');
    }
    /* a watch event: the object's members left out, the event the same */
    const struct gp_kube_jskip ev_kids[] = {{"object", t_root_kids, 1}};
    const struct gp_kube_jskip ev_skip = {NULL, ev_kids, 1};
    const char *line = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\","
                       "\"resourceVersion\":\"3\"},\"spec\":{\"gone\":1,\"k\":2}}}";
    struct gp_kube_event ev;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_event_parse_skip(line, strlen(line), &ev_skip, &ev, &d), GP_OK);
    assert_string_equal(ev.rv, "3");
    json_t *spec = json_object_get(ev.object, "spec");
    assert_null(json_object_get(spec, "gone"));
    assert_int_equal(json_integer_value(json_object_get(spec, "k")), 2);
    gp_kube_event_clear(&ev);
}

/* gp_kube_key_make, gp_kube_str_copy and gp_kube_str_join cut and answer as snprintf does,
 * for every length of namespace, name and buffer (NULL namespace: ""). */
static void test_key_make(void **state)
{
    (void)state;
    char src[24];
    for (int i = 0; i < 23; i++)
        src[i] = (char)('a' + i);
    for (size_t nl = 0; nl < 12; nl++)
        for (size_t ml = 0; ml < 12; ml++)
            for (size_t n = 0; n < 28; n++) {
                char ns[16], name[16], want[32], got[32];
                memcpy(ns, src, nl);
                ns[nl] = '\0';
                memcpy(name, src + 11, ml);
                name[ml] = '\0';
                memset(want, 'X', sizeof want);
                memset(got, 'X', sizeof got);
                int w = snprintf(want, n, "%s/%s", nl ? ns : "", name);
                size_t g = gp_kube_key_make(nl ? ns : NULL, name, got, n);
                assert_int_equal(g, (size_t)w);
                assert_memory_equal(got, want, sizeof got); /* bytes past the cut untouched */
                memset(want, 'X', sizeof want);
                memset(got, 'X', sizeof got);
                snprintf(want, n, "%s", name);
                gp_kube_str_copy(got, n, name);
                assert_memory_equal(got, want, sizeof got);
                memset(want, 'X', sizeof want);
                memset(got, 'X', sizeof got);
                const char *parts[] = {ns, "/x/", name, ""};
                w = snprintf(want, n, "%s%s%s%s", ns, "/x/", name, "");
                assert_int_equal(gp_kube_str_join(got, n, parts, 4), (size_t)w);
                assert_memory_equal(got, want, sizeof got);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_make),       cmocka_unit_test(test_subset_read),
        cmocka_unit_test(test_outside_subset), cmocka_unit_test(test_duplicate_without_flag),
        cmocka_unit_test(test_length_bound),   cmocka_unit_test(test_watch_event),
        cmocka_unit_test(test_skip),           cmocka_unit_test(test_string_places),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
