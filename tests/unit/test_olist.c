/* test_olist.c - the counted B+ tree of ids (util/olist.h), a property test
 * against a plain sorted array: seeded random mixes of inserts at the rank
 * an order gives, removals by id and by rank, reads by rank (in sequence,
 * through the finger, and at random) and searches, through phases that
 * grow the list to thousands of ids and empty it again (so leaves and
 * inner nodes split, merge, even out, and the root is made and collapsed).
 * The tree must stay well formed (checked after every step of a short
 * list, every 13th of a long one) and hold exactly the array's ids in the
 * array's order (every 97th step, and each end of a phase). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/olist.h"
#include "util/rng.h"

#define MAXID 6000

/* The order: by key, then by id (as the engine's: priority, then age). */
struct world {
    uint32_t key[MAXID];
    uint32_t model[MAXID]; /* the plain sorted array */
    size_t n;
    bool in[MAXID];
};

static bool goes_before(const struct world *w, uint32_t a, uint32_t b)
{
    return w->key[a] != w->key[b] ? w->key[a] < w->key[b] : a < b;
}

struct probe {
    const struct world *w;
    uint32_t id;
};

static bool before_probe(const void *ctx, uint32_t x)
{
    const struct probe *p = ctx;
    return goes_before(p->w, x, p->id);
}

/* The rank of id in the order: how many ids of the list go before it. */
static size_t rank_of(const struct gp_olist *l, const struct world *w, uint32_t id)
{
    struct probe p = {w, id};
    return gp_olist_count(l, before_probe, &p);
}

static size_t model_rank(const struct world *w, uint32_t id)
{
    size_t r = 0;
    while (r < w->n && goes_before(w, w->model[r], id))
        r++;
    return r;
}

static void model_insert(struct world *w, size_t r, uint32_t id)
{
    memmove(w->model + r + 1, w->model + r, (w->n - r) * sizeof *w->model);
    w->model[r] = id;
    w->n++;
    w->in[id] = true;
}

static void model_remove(struct world *w, size_t r)
{
    w->in[w->model[r]] = false;
    memmove(w->model + r, w->model + r + 1, (w->n - r - 1) * sizeof *w->model);
    w->n--;
}

static void check_same(const struct gp_olist *l, const struct world *w)
{
    assert_true(gp_olist_valid(l));
    assert_int_equal(gp_olist_len(l), w->n);
    for (size_t i = 0; i < w->n; i++)
        assert_int_equal(gp_olist_at(l, i), w->model[i]);
    assert_int_equal(gp_olist_at(l, w->n), UINT32_MAX);
    assert_int_equal(gp_olist_first(l), w->n ? w->model[0] : UINT32_MAX);
    assert_int_equal(gp_olist_last(l), w->n ? w->model[w->n - 1] : UINT32_MAX);
}

/* One seeded run: `phases` times up to `high` ids and back down to `low`. */
static void run(uint64_t seed, size_t high, size_t low, int phases, uint32_t nkeys)
{
    struct world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    struct gp_rng rng;
    gp_rng_seed(&rng, seed);
    for (uint32_t i = 0; i < MAXID; i++)
        w->key[i] = (uint32_t)gp_rng_below(&rng, nkeys);
    struct gp_olist l = {0};
    size_t steps = 0;
    for (int ph = 0; ph < 2 * phases; ph++) {
        bool grow = ph % 2 == 0;
        while (grow ? w->n < high : w->n > low) {
            uint64_t op = gp_rng_below(&rng, 10);
            if (op < (grow ? 6u : 3u) && w->n < MAXID) { /* insert in the order */
                uint32_t id;
                do
                    id = (uint32_t)gp_rng_below(&rng, MAXID);
                while (w->in[id]);
                size_t r = rank_of(&l, w, id);
                assert_int_equal(r, model_rank(w, id));
                assert_int_equal(gp_olist_insert_at(&l, r, id), 0);
                model_insert(w, r, id);
            } else if (op < 8 && w->n > 0) { /* remove by id, found by its rank */
                uint32_t id = w->model[gp_rng_below(&rng, w->n)];
                size_t r = rank_of(&l, w, id);
                assert_int_equal(gp_olist_at(&l, r), id);
                gp_olist_remove_at(&l, r);
                model_remove(w, r);
            } else if (op < 9 && w->n > 0) { /* remove at a rank: the front or anywhere */
                size_t r = gp_rng_below(&rng, 2) ? 0 : gp_rng_below(&rng, w->n);
                gp_olist_remove_at(&l, r);
                model_remove(w, r);
            } else if (w->n > 0) { /* reads at random ranks */
                for (int k = 0; k < 4; k++) {
                    size_t r = gp_rng_below(&rng, w->n);
                    assert_int_equal(gp_olist_at(&l, r), w->model[r]);
                }
            }
            if (++steps % 97 == 0 || w->n < 80)
                check_same(&l, w);
            else if (w->n < 400 || steps % 13 == 0)
                assert_true(gp_olist_valid(&l));
        }
        check_same(&l, w);
    }
    assert_true(gp_olist_bytes(&l) > 0 || w->n == 0);
    gp_olist_free(&l);
    assert_int_equal(gp_olist_len(&l), 0);
    assert_true(gp_olist_valid(&l));
    free(w);
}

static void test_small_lists(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++)
        run(seed, 70, 0, 3, 4); /* around one leaf: the root grows, splits, collapses */
}

static void test_large_lists(void **state)
{
    (void)state;
    run(42, 5000, 0, 2, 8); /* few keys: many ties broken by id */
    run(43, 4000, 1500, 3, 1u << 20);
    run(44, 2500, 0, 2, 1); /* one key: the order is by id alone */
}

/* Appends and removals at the front, the FIFO queue's churn: the tree
 * stays shallow and well formed, and the ids come out in order. */
static void test_fifo_churn(void **state)
{
    (void)state;
    struct gp_olist l = {0};
    uint32_t head = 0, tail = 0;
    for (int round = 0; round < 20000; round++) {
        if (round % 3 != 2 || head == tail)
            assert_int_equal(gp_olist_insert_at(&l, gp_olist_len(&l), tail++), 0);
        else {
            assert_int_equal(gp_olist_at(&l, 0), head++);
            gp_olist_remove_at(&l, 0);
        }
    }
    assert_true(gp_olist_valid(&l));
    assert_int_equal(gp_olist_len(&l), tail - head);
    assert_true(l.height <= 3);
    for (size_t i = 0; i < gp_olist_len(&l); i++)
        assert_int_equal(gp_olist_at(&l, i), head + i);
    gp_olist_insert_at(&l, gp_olist_len(&l) + 1, 0); /* past the end: refused */
    assert_int_equal(gp_olist_len(&l), tail - head);
    gp_olist_remove_at(&l, gp_olist_len(&l)); /* nothing there */
    assert_int_equal(gp_olist_len(&l), tail - head);
    gp_olist_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_lists),
        cmocka_unit_test(test_large_lists),
        cmocka_unit_test(test_fifo_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
