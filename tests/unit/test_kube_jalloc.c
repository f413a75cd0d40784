/* test_kube_jalloc.c - jansson's blocks from the slabs (kube/jalloc.c):
 * trees built on one thread and freed on another are the same trees and
 * their blocks come back (the slabs stop growing), blocks malloc gave
 * before or on other threads are still freed by free, every size up to
 * the largest class and past it holds its bytes, and a thread that ends
 * gives its cached blocks to the depots. Under AddressSanitizer the
 * functions are not set and only that is checked. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/jalloc.h"

#include <jansson.h>

#define NTREES 2000

struct batch {
    json_t *t[NTREES];
    int round;
};

static json_t *tree(int i)
{
    char name[32], big[700];
    snprintf(name, sizeof name, "pod-%06d", i);
    memset(big, 'a' + i % 26, sizeof big - 1);
    big[sizeof big - 1] = '\0';
    return json_pack("{s:{s:s,s:s,s:{s:s}},s:[{s:s},{s:i}],s:s}", "metadata", "name", name,
                     "namespace", "default", "annotations", "gpuplane.io/gpus", "0,1", "spec",
                     "cpu", "100m", "priority", i, "big", big);
}

static void check(const json_t *t, int i)
{
    char name[32];
    snprintf(name, sizeof name, "pod-%06d", i);
    json_t *want = tree(i);
    assert_true(json_equal(t, want));
    assert_string_equal(json_string_value(json_object_get(json_object_get(t, "metadata"), "name")),
                        name);
    json_decref(want);
}

static void *build(void *arg)
{
    struct batch *b = arg;
    gp_kube_jalloc_thread(true);
    for (int i = 0; i < NTREES; i++)
        b->t[i] = tree(b->round * NTREES + i);
    return NULL;
}

/* A round: trees built on a thread of their own (the informer's), checked
 * and freed here (the scheduling thread's part). */
static void round_trip(int round)
{
    static struct batch b;
    b.round = round;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, build, &b), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    for (int i = 0; i < NTREES; i++) {
        assert_non_null(b.t[i]);
        check(b.t[i], round * NTREES + i);
        json_decref(b.t[i]);
    }
}

static void test_cross_thread_reused(void **state)
{
    (void)state;
    if (!gp_kube_jalloc_install())
        skip();
    round_trip(0);
    round_trip(1);
    struct gp_kube_jalloc_stats st;
    gp_kube_jalloc_stats(&st);
    assert_true(st.slab_bytes > 0);
    size_t after_two = st.slab_bytes;
    for (int r = 2; r < 20; r++)
        round_trip(r);
    gp_kube_jalloc_stats(&st);
    /* the freed blocks went back by the depots: no new slab for the same
     * trees (a class's partly carved slab at most) */
    assert_true(st.slab_bytes <= after_two + 32 * ((size_t)256 << 10));
    assert_true(st.depot_blocks > 0);
}

static void test_foreign_blocks(void **state)
{
    (void)state;
    json_t *before = tree(7); /* this thread: malloc's blocks */
    bool on = gp_kube_jalloc_install();
    gp_kube_jalloc_thread(true);
    json_t *mine = tree(8);
    gp_kube_jalloc_thread(false);
    char *text = json_dumps(mine, JSON_COMPACT); /* off: malloc's, free()d */
    assert_non_null(text);
    json_t *back = json_loads(text, 0, NULL);
    free(text);
    assert_true(json_equal(back, mine));
    check(before, 7);
    check(mine, 8);
    json_decref(before);
    json_decref(mine);
    json_decref(back);
    if (!on)
        skip();
}

struct sizes {
    json_t *s[700];
};

static void *build_sizes(void *arg)
{
    struct sizes *z = arg;
    char buf[700];
    gp_kube_jalloc_thread(true);
    for (size_t n = 0; n < 700; n++) {
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)('A' + (n + i) % 26);
        z->s[n] = json_stringn(buf, n);
    }
    return NULL; /* its cache goes to the depots as it ends */
}

static void test_sizes_and_thread_end(void **state)
{
    (void)state;
    bool on = gp_kube_jalloc_install();
    struct gp_kube_jalloc_stats st0, st1;
    gp_kube_jalloc_stats(&st0);
    static struct sizes z;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, build_sizes, &z), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    gp_kube_jalloc_stats(&st1);
    if (on) /* its unused cached blocks given back at its end */
        assert_true(st1.depot_blocks > st0.depot_blocks);
    for (size_t n = 0; n < 700; n++) {
        assert_non_null(z.s[n]);
        assert_int_equal(json_string_length(z.s[n]), n);
        const char *v = json_string_value(z.s[n]);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(v[i], (char)('A' + (n + i) % 26));
        assert_int_equal(v[n], '\0');
        json_decref(z.s[n]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cross_thread_reused),
        cmocka_unit_test(test_foreign_blocks),
        cmocka_unit_test(test_sizes_and_thread_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
