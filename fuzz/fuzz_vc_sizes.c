/* fuzz_vc_sizes.c - libFuzzer target for the --vc-sizes CSV ("vc,node
 * num", io/philly_vc.h): on a workload whose items name three VCs, any
 * input gives queues (each VC once, a capped VC's cap its nodes x 8 GPUs)
 * or an error with a one-line diag and the workload unchanged; never a
 * crash, a hang or a leak. */
#include <stdint.h>
#include <string.h>

#include "io/philly_vc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const vcs[] = {"6214e9", "7f04ca", "default", "6214e9", "b436b2"};
    struct gp_arena a;
    struct gp_workload w;
    struct gp_diag d = {""};
    memset(&w, 0, sizeof w);
    gp_arena_init(&a);
    for (size_t i = 0; i < sizeof vcs / sizeof vcs[0]; i++) {
        struct gp_item it;
        memset(&it, 0, sizeof it);
        it.name = "job";
        it.source = "jobs.csv:2";
        it.kind = GP_ITEM_POD;
        it.repeat = 1;
        it.queue = vcs[i];
        if (gp_workload_append(&w, &a, &it) != GP_OK)
            __builtin_trap();
    }
    enum gp_err err = gp_philly_vc_queues(&w, (const char *)data, size, "vcs.csv", &a, &d);
    if (err != GP_OK) {
        if (d.msg[0] == '\0' || strchr(d.msg, '\n') || w.nqueues != 0)
            __builtin_trap();
    } else {
        if (w.nqueues != 3) /* 6214e9, 7f04ca, b436b2: each once, default not one */
            __builtin_trap();
        for (size_t i = 0; i < w.nqueues; i++)
            for (size_t j = 0; j < i; j++)
                if (strcmp(w.queues[i].spec.name, w.queues[j].spec.name) == 0)
                    __builtin_trap();
    }
    gp_arena_free(&a);
    return 0;
}
