/* test_apidouble_json.c - the API double's JSON text (tests/apidouble/jsonout.c)
 * is byte for byte what json_dumps(v, JSON_COMPACT) writes, which the
 * double's answers and watch lines were made with before: escapes of every
 * control character, '"' and '\\', '/' and UTF-8 left alone, integers at
 * their extremes, reals, empty and nested containers, members in insertion
 * order (also after a member is set again or deleted), seeded random trees,
 * and every JSON sample of the shared reference data (../shared/k8s/samples). */
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
    };
    const struct CMUnitTest shared[] = {cmocka_unit_test(test_shared_samples)};
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
