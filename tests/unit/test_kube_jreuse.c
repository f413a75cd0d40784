/* test_kube_jreuse.c - members taken from an object's previous version
 * (kube/jload.c's gp_kube_jload_reuse): an object or array member (depth
 * 1 but metadata, and depth 2) whose text is byte for byte the previous
 * version's is that version's value, shared; any other is read; the tree
 * is always the one gp_kube_jload_skip gives (same members, same order,
 * the skip list applied); nothing is taken when the marks are another
 * version's, when metadata comes after the member, or when jansson reads
 * the text. And SipHash-2-4 gives the paper's test vectors. */
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

static void same_tree(json_t *a, json_t *b)
{
    assert_int_equal(json_typeof(a), json_typeof(b));
    if (json_is_object(a)) {
        assert_int_equal(json_object_size(a), json_object_size(b));
        void *ia = json_object_iter(a), *ib = json_object_iter(b);
        for (; ia && ib; ia = json_object_iter_next(a, ia), ib = json_object_iter_next(b, ib)) {
            assert_string_equal(json_object_iter_key(ia), json_object_iter_key(ib));
            same_tree(json_object_iter_value(ia), json_object_iter_value(ib));
        }
    } else if (json_is_array(a)) {
        assert_int_equal(json_array_size(a), json_array_size(b));
        for (size_t i = 0; i < json_array_size(a); i++)
            same_tree(json_array_get(a, i), json_array_get(b, i));
    } else {
        assert_true(json_equal(a, b));
    }
}

static void test_siphash_vectors(void **state)
{
    (void)state;
    uint8_t key[16], msg[15];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 15; i++)
        msg[i] = (uint8_t)i;
    /* the paper's Appendix A (15 bytes) and the reference vectors' first (none) */
    assert_true(gp_kube_siphash(key, msg, 15) == UINT64_C(0xa129ca6149be45e5));
    assert_true(gp_kube_siphash(key, msg, 0) == UINT64_C(0x726fdb47dd0e0e31));
    /* any byte, any length: another hash */
    assert_true(gp_kube_siphash(key, msg, 14) != gp_kube_siphash(key, msg, 15));
    key[15] ^= 1;
    assert_true(gp_kube_siphash(key, msg, 15) != UINT64_C(0xa129ca6149be45e5));
}

/* The test's store of one object: the previous version and its marks. */
static struct {
    json_t *obj;
    struct gp_kube_jmarks mk;
    int asked;
} prev;

static const json_t *prev_of(const json_t *meta, void *ctx, const struct gp_kube_jmark **marks,
                             size_t *nmarks)
{
    (void)ctx;
    prev.asked++;
    assert_string_equal(json_string_value(json_object_get(meta, "name")), "p");
    if (!prev.obj)
        return NULL;
    *marks = prev.mk.m;
    *nmarks = prev.mk.n;
    return prev.obj;
}

static const struct gp_kube_jskip t_spec_kids[] = {{"skipped", NULL, 0}};
static const struct gp_kube_jskip t_obj_kids[] = {{"spec", t_spec_kids, 1}};
static const struct gp_kube_jskip t_obj = {"object", t_obj_kids, 1};
static const struct gp_kube_jskip t_doc = {NULL, &t_obj, 1};

/* The event read with the store's previous version; checked against the
 * plain read; the store then holds it (with its marks). Returns the
 * object (borrowed from the store) and the count of members taken. */
static json_t *read_event(const char *text, size_t *reused)
{
    struct gp_kube_jreuse ru = {.at = "object", .prev = prev_of};
    json_t *doc =
        gp_kube_jload_reuse(text, strlen(text), JSON_REJECT_DUPLICATES, NULL, &t_doc, &ru);
    json_t *plain = gp_kube_jload_skip(text, strlen(text), JSON_REJECT_DUPLICATES, NULL, &t_doc);
    assert_non_null(doc);
    assert_non_null(plain);
    same_tree(doc, plain);
    json_decref(plain);
    json_t *obj = json_incref(json_object_get(doc, "object"));
    json_decref(doc);
    json_decref(prev.obj);
    prev.obj = obj;
    prev.mk = ru.out;
    *reused = ru.reused;
    return obj;
}

static json_t *at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    return b ? json_object_get(v, b) : v;
}

#define EV(rv, spec, status)                                                                       \
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"" rv    \
    "\"},\"spec\":" spec ",\"status\":" status "}}"

static void test_members_taken(void **state)
{
    (void)state;
    size_t n;
    json_t *v1 = read_event(EV("1", "{\"a\":[1,2],\"b\":{\"x\":\"y\"},\"n\":\"z\",\"skipped\":[9]}",
                               "{\"phase\":\"P\"}"),
                            &n);
    assert_int_equal(n, 0);                 /* nothing before it */
    assert_int_equal(prev.mk.n, 4);         /* spec, spec.a, spec.b, status */
    assert_null(at(v1, "spec", "skipped")); /* left out as gp_kube_jload_skip leaves it */
    json_t *spec1 = json_incref(at(v1, "spec", NULL)), *a1 = json_incref(at(v1, "spec", "a"));
    json_t *b1 = json_incref(at(v1, "spec", "b")), *st1 = json_incref(at(v1, "status", NULL));

    /* the spec's text the same, the status's not: the spec shared */
    json_t *v2 = read_event(EV("2", "{\"a\":[1,2],\"b\":{\"x\":\"y\"},\"n\":\"z\",\"skipped\":[9]}",
                               "{\"phase\":\"Q\"}"),
                            &n);
    assert_int_equal(n, 1);
    assert_ptr_equal(at(v2, "spec", NULL), spec1);
    assert_ptr_not_equal(at(v2, "status", NULL), st1);
    assert_int_equal(prev.mk.n, 4); /* the spec's own members' marks carried */

    /* a scalar of the spec changed: the spec read, its a and b shared,
     * the status (as v2's) shared */
    json_t *v3 = read_event(EV("3", "{\"a\":[1,2],\"b\":{\"x\":\"y\"},\"n\":\"w\",\"skipped\":[9]}",
                               "{\"phase\":\"Q\"}"),
                            &n);
    assert_int_equal(n, 3);
    assert_ptr_not_equal(at(v3, "spec", NULL), spec1);
    assert_ptr_equal(at(v3, "spec", "a"), a1);
    assert_ptr_equal(at(v3, "spec", "b"), b1);

    /* one byte of a (same length) and of b's value changed: both read */
    json_t *v4 = read_event(EV("4", "{\"a\":[1,3],\"b\":{\"x\":\"Y\"},\"n\":\"w\",\"skipped\":[9]}",
                               "{\"phase\":\"Q\"}"),
                            &n);
    assert_int_equal(n, 1); /* the status */
    assert_ptr_not_equal(at(v4, "spec", "a"), a1);
    assert_ptr_not_equal(at(v4, "spec", "b"), b1);
    assert_int_equal(json_integer_value(json_array_get(at(v4, "spec", "a"), 1)), 3);

    /* a left-out member's text changed: the spec is read again (its text
     * differs), the tree as plain; white space differs: read again too */
    json_t *v5 = read_event(EV("5", "{\"a\":[1,3],\"b\":{\"x\":\"Y\"},\"n\":\"w\",\"skipped\":[8]}",
                               "{ \"phase\":\"Q\"}"),
                            &n);
    assert_int_equal(n, 2); /* a and b */
    (void)v5;
    json_decref(spec1);
    json_decref(a1);
    json_decref(b1);
    json_decref(st1);
    json_decref(prev.obj);
    prev.obj = NULL;
}

static void test_nothing_taken(void **state)
{
    (void)state;
    size_t n;
    const char *spec = "{\"a\":[1,2],\"b\":{\"x\":\"y\"}}";
    char t[512];
    snprintf(t, sizeof t, EV("1", "%s", "{}"), spec);
    json_t *v1 = json_incref(read_event(t, &n));
    json_t *spec1 = json_incref(at(v1, "spec", NULL));
    struct gp_kube_jmarks mk1 = prev.mk;

    /* marks of another version (the same text read again): not v1's
     * values, so nothing of v1 is taken through them */
    snprintf(t, sizeof t, EV("2", "%s", "{}"), spec);
    json_t *other = gp_kube_jload_lean(t, strlen(t));
    json_t *keep = prev.obj;
    prev.obj = json_incref(json_object_get(other, "object"));
    prev.mk = mk1; /* v1's marks, another object */
    snprintf(t, sizeof t, EV("3", "%s", "{}"), spec);
    json_t *v3 = read_event(t, &n);
    assert_int_equal(n, 0);
    assert_ptr_not_equal(at(v3, "spec", NULL), spec1);
    json_decref(other);

    /* metadata after the spec: the spec is read before the previous
     * version is known */
    json_decref(prev.obj);
    prev.obj = keep;
    prev.mk = mk1;
    snprintf(t, sizeof t,
             "{\"type\":\"MODIFIED\",\"object\":{\"spec\":%s,\"metadata\":{\"name\":\"p\"}}}",
             spec);
    json_t *v4 = read_event(t, &n);
    assert_int_equal(n, 0);
    assert_ptr_not_equal(at(v4, "spec", NULL), spec1);

    /* jansson reads it (a \u escape): nothing taken, nothing marked */
    json_decref(prev.obj);
    prev.obj = json_incref(v1);
    prev.mk = mk1;
    const char *esc = "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\"},\"spec\":{"
                      "\"a\":[1,2],\"b\":{\"x\":\"y\"}},\"status\":{\"m\":\"\\u00e9\"}}}";
    struct gp_kube_jreuse ru = {.at = "object", .prev = prev_of};
    json_t *doc = gp_kube_jload_reuse(esc, strlen(esc), JSON_REJECT_DUPLICATES, NULL, NULL, &ru);
    assert_non_null(doc);
    assert_int_equal(ru.reused, 0);
    assert_int_equal(ru.out.n, 0);
    json_t *ref = json_loadb(esc, strlen(esc), JSON_REJECT_DUPLICATES, NULL);
    same_tree(doc, ref);
    json_decref(ref);
    json_decref(doc);

    /* a duplicate member beside one taken: refused as jansson refuses it */
    const char *dup = "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\"},\"spec\":{"
                      "\"a\":[1,2],\"b\":{\"x\":\"y\"}},\"spec\":{}}}";
    json_error_t err;
    assert_null(gp_kube_jload_reuse(dup, strlen(dup), JSON_REJECT_DUPLICATES, &err, NULL, &ru));
    assert_null(json_loadb(dup, strlen(dup), JSON_REJECT_DUPLICATES, &err));
    json_decref(spec1);
    json_decref(prev.obj);
    json_decref(v1);
    prev.obj = NULL;
}

/* A watch event read with reuse: the same event as without it. */
static void test_event(void **state)
{
    (void)state;
    prev.obj = NULL;
    const char *a = EV("7", "{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]}", "{}");
    struct gp_kube_jreuse ru = {.at = "object", .prev = prev_of};
    struct gp_kube_event ev, plain;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_event_parse_reuse(a, strlen(a), NULL, &ru, &ev, &d), GP_OK);
    assert_int_equal(gp_kube_event_parse(a, strlen(a), &plain, &d), GP_OK);
    assert_int_equal(ev.type, GP_KUBE_MODIFIED);
    assert_string_equal(ev.rv, "7");
    assert_string_equal(ev.name, "p");
    same_tree(ev.object, plain.object);
    prev.obj = json_incref(ev.object);
    prev.mk = ru.out;
    struct gp_kube_event ev2;
    assert_int_equal(gp_kube_event_parse_reuse(a, strlen(a), NULL, &ru, &ev2, &d), GP_OK);
    assert_int_equal(ru.reused, 2); /* spec and status */
    assert_ptr_equal(json_object_get(ev2.object, "spec"), json_object_get(ev.object, "spec"));
    same_tree(ev2.object, plain.object);
    gp_kube_event_clear(&ev);
    gp_kube_event_clear(&ev2);
    gp_kube_event_clear(&plain);
    json_decref(prev.obj);
    prev.obj = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_siphash_vectors),
        cmocka_unit_test(test_members_taken),
        cmocka_unit_test(test_nothing_taken),
        cmocka_unit_test(test_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
