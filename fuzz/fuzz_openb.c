/* fuzz_openb.c - libFuzzer target for the openb readers (io/openb.c). The
 * first byte picks the reader: even for the node list, odd for the pod
 * list (the seeds start with '0' and '1'); the rest is the CSV text. A pod
 * list is read twice, the second time for the static mode only
 * (gp_workload.static_only): the same answer, and each row's item asks for
 * the pod of that row. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/cluster.h"
#include "io/workload.h"
#include "util/arena.h"

static bool same_pod(const struct gp_pod_spec *p, const struct gp_pod_spec *q)
{
    if (p->cpu_milli != q->cpu_milli || p->mem_mib != q->mem_mib || p->gpu_count != q->gpu_count ||
        p->gpu_milli != q->gpu_milli || p->ngpu_models != q->ngpu_models)
        return false;
    for (size_t k = 0; k < p->ngpu_models; k++)
        if (strcmp(p->gpu_models[k], q->gpu_models[k]) != 0)
            return false;
    return true;
}

/* The static-only reading of text agrees with w, the plain one (err). */
static void check_static_only(const char *text, size_t len, enum gp_err err,
                              const struct gp_workload *w, const struct gp_diag *d)
{
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload s = {.static_only = true};
    struct gp_diag sd;
    enum gp_err serr = gp_workload_parse_openb(text, len, "fuzz.csv", &a, &s, &sd);
    if (serr != err || (err != GP_OK && (strcmp(sd.msg, d->msg) != 0 || s.nitems || s.ntraces)))
        abort();
    if (err == GP_OK) {
        const struct gp_trace *t = s.traces;
        if (s.ntraces != 1 || t->first != 0 || t->nitems != s.nitems || t->nrows != w->nitems)
            abort();
        for (size_t k = 0; k < t->nrows; k++)
            if (t->row_items[k] >= s.nitems ||
                !same_pod(&s.items[t->row_items[k]].pod, &w->items[k].pod))
                abort();
    }
    gp_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* an exact-size copy, so that ASan sees any read past the end */
    size_t len = size - 1;
    char *text = malloc(len ? len : 1);
    if (!text)
        return 0;
    memcpy(text, data + 1, len);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_diag d;
    if (data[0] & 1) {
        struct gp_workload w = {0};
        enum gp_err err = gp_workload_parse_openb(text, len, "fuzz.csv", &a, &w, &d);
        check_static_only(text, len, err, &w, &d);
        if (err == GP_OK) {
            for (size_t i = 0; i < w.nitems; i++) {
                const struct gp_item *it = &w.items[i];
                if (it->pod.gpu_count > GP_MAX_GPUS_PER_NODE || it->pod.gpu_milli > GP_GPU_MILLI ||
                    it->arrival_s < 0 ||
                    (it->pod.gpu_count > 1 && it->pod.gpu_milli != GP_GPU_MILLI))
                    abort();
            }
        } else if (w.nitems != 0) {
            abort(); /* a failed read leaves the workload as it was */
        }
    } else {
        struct gp_cluster c = {0};
        if (gp_cluster_parse_openb(text, len, "fuzz.csv", &a, &c, &d) == GP_OK) {
            size_t pooled = 0;
            for (size_t i = 0; i < c.npools; i++)
                pooled += c.pools[i].count;
            if (c.nnodes == 0 || pooled != c.nnodes)
                abort();
            for (size_t i = 0; i < c.nnodes; i++)
                if (!c.nodes[i].pool || c.nodes[i].gpu_count > GP_MAX_GPUS_PER_NODE ||
                    (c.nodes[i].gpu_count && !c.nodes[i].gpu_model))
                    abort();
        }
    }
    gp_arena_free(&a);
    free(text);
    return 0;
}
