/* fuzz_jload.c - libFuzzer target for the lean JSON scanner
 * (kube/jload.c), against jansson: a tree the scanner reads must be the
 * tree json_loadb reads from the same bytes (members in the same order),
 * with or without JSON_REJECT_DUPLICATES; gp_kube_jload must answer
 * exactly as json_loadb does (a tree or not); gp_kube_jload_skip as
 * json_loadb does with the members named deleted after; gp_kube_jload_reuse
 * (the text after the first newline, the text before it its previous
 * version) as gp_kube_jload_skip does; never a crash, a read past the
 * input or a leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/jload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(json_t *a, json_t *b)
{
    if (json_typeof(a) != json_typeof(b))
        __builtin_trap();
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            __builtin_trap();
        void *ia = json_object_iter(a), *ib = json_object_iter(b);
        for (; ia && ib; ia = json_object_iter_next(a, ia), ib = json_object_iter_next(b, ib)) {
            if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib)) != 0)
                __builtin_trap();
            same(json_object_iter_value(ia), json_object_iter_value(ib));
        }
        if (ia || ib)
            __builtin_trap();
    } else if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            __builtin_trap();
        for (size_t i = 0; i < json_array_size(a); i++)
            same(json_array_get(a, i), json_array_get(b, i));
    } else if (!json_equal(a, b)) {
        __builtin_trap();
    }
}

/* Left out: "a" and "s" at the root, "b" in each element of "s" when an
 * array, "d" in "s" when an object (and its "e" elements' "f"). */
static const struct gp_kube_jskip skip_e[] = {{"f", NULL, 0}};
static const struct gp_kube_jskip skip_s[] = {
    {"[]", (const struct gp_kube_jskip[]){{"b", NULL, 0}}, 1},
    {"d", NULL, 0},
    {"e", (const struct gp_kube_jskip[]){{"[]", skip_e, 1}}, 1},
};
static const struct gp_kube_jskip skip_root_kids[] = {{"a", NULL, 0}, {"s", skip_s, 3}};
static const struct gp_kube_jskip skip_root = {NULL, skip_root_kids, 2};

/* The same members deleted from a tree jansson read. */
static void pruned(json_t *v)
{
    json_object_del(v, "a");
    json_t *s = json_object_get(v, "s"), *e;
    size_t i, j;
    json_t *f;
    if (json_is_array(s))
        json_array_foreach(s, i, e) json_object_del(e, "b");
    json_object_del(s, "d");
    json_array_foreach(json_object_get(s, "e"), j, f) json_object_del(f, "f");
}

/* gp_kube_jload_reuse's previous version: the text before the input's
 * first newline, read at the root with its marks. */
static json_t *fz_prev;
static struct gp_kube_jmarks fz_marks;

static const json_t *fz_prev_of(const json_t *meta, void *ctx, const struct gp_kube_jmark **m,
                                size_t *n)
{
    (void)meta;
    (void)ctx;
    if (!fz_prev)
        return NULL;
    *m = fz_marks.m;
    *n = fz_marks.n;
    return fz_prev;
}

/* The text after the first newline read with the text before it as the
 * previous version: gp_kube_jload_skip's answer, whatever was taken. */
static void reuse_check(const char *text, size_t size)
{
    const char *nl = memchr(text, '\n', size);
    if (!nl)
        return;
    size_t a = (size_t)(nl - text), b = size - a - 1;
    struct gp_kube_jreuse ru = {.prev = fz_prev_of};
    fz_prev = NULL;
    json_t *prev = gp_kube_jload_reuse(text, a, JSON_REJECT_DUPLICATES, NULL, &skip_root, &ru);
    fz_prev = prev;
    fz_marks = ru.out;
    json_t *got = gp_kube_jload_reuse(nl + 1, b, JSON_REJECT_DUPLICATES, NULL, &skip_root, &ru);
    json_t *want = gp_kube_jload_skip(nl + 1, b, JSON_REJECT_DUPLICATES, NULL, &skip_root);
    if ((got != NULL) != (want != NULL))
        __builtin_trap();
    if (got)
        same(got, want);
    json_decref(got);
    json_decref(want);
    json_decref(prev);
    fz_prev = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of its exact size: ASan sees any read past the end */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    json_t *lean = gp_kube_jload_lean(text, size);
    json_t *strict = json_loadb(text, size, JSON_REJECT_DUPLICATES, NULL);
    json_t *loose = json_loadb(text, size, 0, NULL);
    if (lean) {
        if (!strict || !loose)
            __builtin_trap();
        same(lean, strict);
        same(lean, loose);
    }
    json_t *both = gp_kube_jload(text, size, JSON_REJECT_DUPLICATES, NULL);
    if ((both != NULL) != (strict != NULL))
        __builtin_trap();
    if (both)
        same(both, strict);
    json_decref(both);
    json_t *skip = gp_kube_jload_skip(text, size, JSON_REJECT_DUPLICATES, NULL, &skip_root);
    if ((skip != NULL) != (strict != NULL))
        __builtin_trap();
    if (skip) {
        pruned(strict);
        same(skip, strict);
    }
    json_decref(skip);
    reuse_check(text, size);
    json_decref(lean);
    json_decref(strict);
    json_decref(loose);
    free(text);
    return 0;
}
