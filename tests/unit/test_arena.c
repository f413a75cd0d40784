/* test_arena.c - the bump allocator (util/arena.h): allocations are zeroed
 * and aligned; gp_arena_grow keeps the content, grows an allocation with a
 * block of its own in place of that block (no old copy left in the arena:
 * a workload's item array used to leave every old copy behind, doubling
 * the memory of a large trace), and copies one that shares its block. */
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "util/arena.h"

static void test_alloc(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    unsigned char *p = gp_arena_alloc(&a, 100);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % alignof(max_align_t), 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(p[i], 0);
    assert_string_equal(gp_arena_printf(&a, "%s-%d", "x", 7), "x-7");
    gp_arena_free(&a);
}

static void test_grow_large_in_place(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    size_t n = 1u << 20; /* bytes: more than a block */
    unsigned char *p = gp_arena_grow(&a, NULL, 0, n);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7);
    size_t before = gp_arena_nblocks(&a);
    for (int k = 0; k < 4; k++, n *= 2) {
        p = gp_arena_grow(&a, p, n, 2 * n);
        assert_non_null(p);
        assert_int_equal(gp_arena_nblocks(&a), before); /* the old copy is not kept */
    }
    for (size_t i = 0; i < (1u << 20); i++)
        assert_int_equal(p[i], (unsigned char)(i * 7));
    gp_arena_free(&a);
}

/* The pattern of a workload's item array: it doubles while strings are
 * allocated between the doublings; everything allocated stays readable
 * (ASan checks the realloc'd blocks) and the old arrays are not kept. */
static void test_grow_interleaved(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    uint32_t *v = NULL;
    size_t cap = 0;
    char *names[4096];
    for (uint32_t i = 0; i < 4096 * 1024; i++) {
        if (i == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            v = gp_arena_grow(&a, v, cap * sizeof *v, ncap * sizeof *v);
            assert_non_null(v);
            cap = ncap;
        }
        v[i] = i * 2654435761u;
        if (i % 1024 == 0)
            assert_non_null(names[i / 1024] = gp_arena_printf(&a, "row-%u", i));
    }
    for (uint32_t i = 0; i < 4096 * 1024; i++)
        assert_int_equal(v[i], (uint32_t)(i * 2654435761u));
    for (uint32_t k = 0; k < 4096; k++) {
        char want[32];
        snprintf(want, sizeof want, "row-%u", k * 1024);
        assert_string_equal(names[k], want);
    }
    /* the 16 MiB array, 64 KiB of strings and the array's copies under 16
     * KiB; kept copies of the array would add 16 MiB more */
    assert_true(gp_arena_bytes(&a) < cap * sizeof *v + (1u << 20));
    gp_arena_free(&a);
}

static void test_grow_small_copies(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    char *s = gp_arena_alloc(&a, 8);
    char *t = gp_arena_alloc(&a, 8); /* shares the block */
    memcpy(s, "abcdefg", 8);
    memcpy(t, "1234567", 8);
    char *g = gp_arena_grow(&a, s, 8, 64);
    assert_non_null(g);
    assert_ptr_not_equal(g, s);
    assert_string_equal(g, "abcdefg");
    assert_string_equal(t, "1234567");                 /* its neighbour untouched */
    assert_ptr_equal(gp_arena_grow(&a, g, 64, 32), g); /* shrinking keeps it */
    gp_arena_free(&a);
}

/* A block of its own goes behind the current block, whose free room
 * stays in use; a size that cannot be rounded is refused, p kept. */
static void test_grow_own_block(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    char *s = gp_arena_alloc(&a, 16);
    assert_non_null(gp_arena_grow(&a, NULL, 0, 64 * 1024));
    char *t = gp_arena_alloc(&a, 16);
    assert_int_equal(gp_arena_nblocks(&a), 2);
    assert_ptr_equal(t, s + 16); /* the same block as s */
    memcpy(s, "kept", 5);
    assert_null(gp_arena_grow(&a, s, 16, SIZE_MAX));
    assert_null(gp_arena_alloc(&a, SIZE_MAX - 8));
    assert_string_equal(s, "kept");
    gp_arena_free(&a);
}

/* adopt moves src's blocks into dst: what src held stays valid until dst
 * is freed, src is empty, and dst keeps allocating in its newest block */
static void test_adopt(void **state)
{
    (void)state;
    struct gp_arena dst, src;
    gp_arena_init(&dst);
    gp_arena_init(&src);
    src.block_size = 64;
    char *kept[3];
    for (int i = 0; i < 3; i++) { /* three blocks of src */
        kept[i] = gp_arena_alloc(&src, 60);
        assert_non_null(kept[i]);
        snprintf(kept[i], 60, "string %d", i);
    }
    char *first = gp_arena_strdup(&dst, "dst's own");
    assert_non_null(first);
    size_t before = gp_arena_nblocks(&dst), moved = gp_arena_nblocks(&src);
    gp_arena_adopt(&dst, &src);
    assert_null(src.head);
    assert_int_equal(gp_arena_nblocks(&dst), before + moved);
    char *next = gp_arena_strdup(&dst, "x"); /* in dst's newest block, beside first */
    assert_true(next > first && next - first < 64);
    gp_arena_free(&src); /* frees nothing now */
    for (int i = 0; i < 3; i++) {
        char want[16];
        snprintf(want, sizeof want, "string %d", i);
        assert_string_equal(kept[i], want);
    }
    gp_arena_adopt(&src, &dst); /* into an empty arena */
    assert_null(dst.head);
    assert_int_equal(gp_arena_nblocks(&src), before + moved);
    assert_string_equal(first, "dst's own");
    gp_arena_free(&src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc),
        cmocka_unit_test(test_grow_large_in_place),
        cmocka_unit_test(test_grow_interleaved),
        cmocka_unit_test(test_grow_small_copies),
        cmocka_unit_test(test_grow_own_block),
        cmocka_unit_test(test_adopt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
