/* test_kheap.c - the min-heap with positions and the ordered walk
 * (util/kheap.h), a property test against a plain list: after any mix of
 * pushes, removals and new keys, every position the heap told is where the
 * entry is, each entry is no smaller than its parent, and a walk (whole or
 * stopped early) gives the entries sorted by key, then id, as qsort does -
 * the order backfill's projection releases the bound pods in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/kheap.h"
#include "util/rng.h"

#define MAXID 400

struct world {
    size_t pos[MAXID]; /* SIZE_MAX: not in the heap */
    double key[MAXID];
};

static void moved(void *ctx, uint32_t id, size_t pos)
{
    ((struct world *)ctx)->pos[id] = pos;
}

static int item_cmp(const void *pa, const void *pb)
{
    const struct gp_kheap_item *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static void check(struct gp_kheap *h, const struct world *w, size_t stop)
{
    struct gp_kheap_item want[MAXID];
    size_t n = 0;
    for (uint32_t id = 0; id < MAXID; id++) {
        if (w->pos[id] == SIZE_MAX)
            continue;
        assert_true(w->pos[id] < h->len);
        assert_int_equal(h->items[w->pos[id]].id, id);
        assert_true(h->items[w->pos[id]].key == w->key[id]);
        want[n++] = (struct gp_kheap_item){w->key[id], id};
    }
    assert_int_equal(n, h->len);
    for (size_t i = 1; i < h->len; i++)
        assert_true(item_cmp(&h->items[(i - 1) / 2], &h->items[i]) < 0);
    qsort(want, n, sizeof want[0], item_cmp);
    gp_kheap_walk_begin(h);
    size_t k = 0;
    struct gp_kheap_item it;
    while (k < stop && gp_kheap_walk_next(h, &it)) {
        assert_true(k < n);
        assert_int_equal(it.id, want[k].id);
        assert_true(it.key == want[k].key);
        k++;
    }
    assert_int_equal(k, stop < n ? stop : n);
}

static void test_random_ops(void **state)
{
    (void)state;
    struct gp_rng rng;
    gp_rng_seed(&rng, 7);
    for (int round = 0; round < 40; round++) {
        struct world w;
        for (size_t i = 0; i < MAXID; i++)
            w.pos[i] = SIZE_MAX;
        struct gp_kheap h;
        gp_kheap_init(&h, moved, &w);
        for (int op = 0; op < 600; op++) {
            uint32_t id = (uint32_t)(gp_rng_next(&rng) % MAXID);
            /* few distinct keys, so that ties are decided by id */
            double key = (double)(gp_rng_next(&rng) % (round % 2 ? 8 : 1000)) / 4;
            if (w.pos[id] == SIZE_MAX) {
                w.key[id] = key;
                assert_int_equal(gp_kheap_push(&h, key, id), GP_OK);
            } else if (gp_rng_next(&rng) % 2) {
                size_t at = w.pos[id];
                w.pos[id] = SIZE_MAX;
                gp_kheap_remove(&h, at);
            } else {
                w.key[id] = key;
                gp_kheap_rekey(&h, w.pos[id], key);
            }
            if (op % 50 == 0)
                check(&h, &w, (size_t)(gp_rng_next(&rng) % 20));
        }
        check(&h, &w, SIZE_MAX);
        gp_kheap_free(&h);
    }
}

static void test_empty(void **state)
{
    (void)state;
    struct gp_kheap h;
    gp_kheap_init(&h, NULL, NULL);
    struct gp_kheap_item it;
    gp_kheap_walk_begin(&h);
    assert_false(gp_kheap_walk_next(&h, &it));
    assert_int_equal(gp_kheap_push(&h, 1, 3), GP_OK);
    gp_kheap_remove(&h, 0);
    assert_int_equal(h.len, 0);
    gp_kheap_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_ops),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
