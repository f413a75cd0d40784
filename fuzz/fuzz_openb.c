/* fuzz_openb.c - libFuzzer target for the openb readers (io/openb.c). The
 * first byte picks the reader: even for the node list, odd for the pod
 * list (the seeds start with '0' and '1'); the rest is the CSV text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/cluster.h"
#include "io/workload.h"
#include "util/arena.h"

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
        if (gp_workload_parse_openb(text, len, "fuzz.csv", &a, &w, &d) == GP_OK) {
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
