/* fuzz_k8s_schema.c - libFuzzer target for the strict manifest walk
 * (io/k8s_schema.c): the first byte picks one of the kinds the reader
 * accepts, whose apiVersion and kind head the rest of the input, so every
 * field tree is walked. Each document must validate or fail with a
 * one-line diag, never crash, hang or leak; the warnings are one line
 * each, at most one per model row, and a second pass over the same input
 * finds every named object defined twice. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/k8s_schema.h"
#include "io/workload.h"
#include "io/yaml_walk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static enum gp_err each(struct gp_yaml *y, struct fy_node *root, void *ctx)
{
    return gp_k8s_validate(y, root, ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    const struct gp_k8s_root *r = &gp_k8s_roots[data[0] % gp_k8s_nroots];
    char head[128];
    int n = snprintf(head, sizeof head, "apiVersion: %s\nkind: %s\n", r->api_version, r->kind);
    char *text = malloc((size_t)n + size);
    if (!text)
        return 0;
    memcpy(text, head, (size_t)n);
    memcpy(text + n, data + 1, size - 1);
    size_t len = (size_t)n + size - 1;

    struct gp_arena a;
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    struct gp_yaml y;
    gp_arena_init(&a);
    gp_yaml_init(&y, "fuzz.yaml", &a, &d);
    enum gp_err err = gp_yaml_each_document(&y, text, len, each, &w);
    if (err != GP_OK && (d.msg[0] == '\0' || strchr(d.msg, '\n')))
        __builtin_trap();
    if (w.nwarnings > gp_k8s_nmodel + 64)
        __builtin_trap();
    for (size_t i = 0; i < w.nwarnings; i++)
        if (!w.warnings[i] || strchr(w.warnings[i], '\n'))
            __builtin_trap();
    if (err == GP_OK && w.nobjects > 0) {
        /* the same objects again: the first is defined twice */
        struct gp_diag d2 = {""};
        gp_yaml_init(&y, "again.yaml", &a, &d2);
        struct gp_k8s_mark m = gp_k8s_mark(&w);
        enum gp_err again = gp_yaml_each_document(&y, text, len, each, &w);
        if (again == GP_OK || !strstr(d2.msg, "defined twice"))
            __builtin_trap();
        gp_k8s_restore(&w, &m);
        if (w.nobjects != m.nobjects)
            __builtin_trap();
    }
    gp_arena_free(&a);
    free(text);
    return 0;
}
