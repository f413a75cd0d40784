/* fuzz_philly.c - libFuzzer target for the Philly readers (io/philly.c).
 * The first byte picks the reader: even for the machine list, odd for the
 * job table (the seeds start with '0' and '1'); the rest is the CSV text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/philly.h"
#include "io/workload.h"
#include "util/arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
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
        if (gp_workload_parse_philly(text, len, "fuzz.csv", &a, &w, &d) == GP_OK) {
            for (size_t i = 0; i < w.nitems; i++) {
                const struct gp_item *it = &w.items[i];
                if (it->pod.gpu_count < 1 || it->pod.gpu_count > 8 || it->arrival_s < 0 ||
                    !it->has_duration || it->duration.a < 0 ||
                    (it->kind == GP_ITEM_JOB && it->completions < 2))
                    abort();
            }
        } else if (w.nitems != 0) {
            abort();
        }
    } else {
        struct gp_cluster c = {0};
        if (gp_cluster_parse_philly(text, len, "fuzz.csv", &a, &c, &d) == GP_OK) {
            if (c.nnodes == 0 || c.npools == 0)
                abort();
            for (size_t i = 0; i < c.nnodes; i++)
                if (c.nodes[i].gpu_count == 0 || !c.nodes[i].gpu_model || !c.nodes[i].labels)
                    abort();
        }
    }
    gp_arena_free(&a);
    free(text);
    return 0;
}
