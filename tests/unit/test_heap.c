/* test_heap.c - the simulator's event heap: (time, sequence) order, equal
 * times in push order, and agreement with a sorted reference under random
 * interleavings of pushes and pops. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/heap.h"
#include "util/rng.h"

static void test_empty(void **state)
{
    (void)state;
    struct gp_sim_heap h;
    gp_sim_heap_init(&h);
    struct gp_sim_event ev;
    assert_null(gp_sim_heap_peek(&h));
    assert_false(gp_sim_heap_pop(&h, &ev));
    gp_sim_heap_free(&h);
}

static void test_equal_times_keep_push_order(void **state)
{
    (void)state;
    struct gp_sim_heap h;
    gp_sim_heap_init(&h);
    /* times 5, 1, 5, 1, 5, ... with the operand a = push index */
    for (uint32_t i = 0; i < 40; i++)
        assert_int_equal(gp_sim_heap_push(&h, i % 2 ? 1.0 : 5.0, 7, i, 0), 0);
    struct gp_sim_event ev;
    uint32_t last_a = 0;
    for (int i = 0; i < 40; i++) {
        assert_true(gp_sim_heap_pop(&h, &ev));
        assert_int_equal(ev.kind, 7);
        if (i < 20) {
            assert_true(ev.t_s == 1.0);
            assert_int_equal(ev.a % 2, 1);
        } else {
            assert_true(ev.t_s == 5.0);
            assert_int_equal(ev.a % 2, 0);
        }
        if (i != 0 && i != 20)
            assert_true(ev.a > last_a); /* the tie-break: push order */
        last_a = ev.a;
    }
    assert_false(gp_sim_heap_pop(&h, &ev));
    gp_sim_heap_free(&h);
}

struct ref {
    double t;
    uint64_t seq;
};

static int ref_cmp(const void *pa, const void *pb)
{
    const struct ref *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Random pushes (times from a few values, so ties are frequent) and pops,
 * checked against a reference kept sorted by (t, seq). */
static void test_random_against_reference(void **state)
{
    (void)state;
    struct gp_rng rng;
    gp_rng_seed(&rng, 12345);
    struct gp_sim_heap h;
    gp_sim_heap_init(&h);
    struct ref *ref = malloc(20000 * sizeof *ref);
    assert_non_null(ref);
    size_t nref = 0;
    uint64_t seq = 0;
    for (int step = 0; step < 20000; step++) {
        if (nref == 0 || gp_rng_below(&rng, 3) != 0) {
            double t = (double)gp_rng_below(&rng, 50) / 4.0;
            assert_int_equal(gp_sim_heap_push(&h, t, 0, (uint32_t)seq, 0), 0);
            ref[nref].t = t;
            ref[nref].seq = seq++;
            nref++;
            qsort(ref, nref, sizeof *ref, ref_cmp);
        } else {
            struct gp_sim_event ev;
            const struct gp_sim_event *top = gp_sim_heap_peek(&h);
            assert_non_null(top);
            assert_true(top->t_s == ref[0].t);
            assert_true(gp_sim_heap_pop(&h, &ev));
            assert_true(ev.t_s == ref[0].t);
            assert_int_equal(ev.seq, ref[0].seq);
            assert_int_equal(ev.a, (uint32_t)ref[0].seq);
            memmove(ref, ref + 1, (nref - 1) * sizeof *ref);
            nref--;
        }
        assert_int_equal(h.len, nref);
    }
    /* drain: non-decreasing (t, seq) */
    struct gp_sim_event ev, prev = {0};
    bool first = true;
    while (gp_sim_heap_pop(&h, &ev)) {
        if (!first)
            assert_true(prev.t_s < ev.t_s || (prev.t_s == ev.t_s && prev.seq < ev.seq));
        prev = ev;
        first = false;
    }
    free(ref);
    gp_sim_heap_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_equal_times_keep_push_order),
        cmocka_unit_test(test_random_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
