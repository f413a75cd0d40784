/* fuzz_manifest.c - libFuzzer target for the Kubernetes manifest reader
 * and the distribution parser: any input must give GP_OK or an error with
 * a one-line diag, never a crash, a hang or a leak; the duration
 * distributions of what parses are sampled, and the input is also tried
 * as a distribution string. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_arena a;
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    struct gp_rng r;
    gp_arena_init(&a);
    gp_rng_seed(&r, 1);
    enum gp_err err = gp_workload_parse_manifest((const char *)data, size, "fuzz.yaml", &a, &w, &d);
    if (err == GP_OK) {
        for (size_t i = 0; i < w.nitems; i++) {
            const struct gp_item *it = &w.items[i];
            if (!it->name || !it->source || it->repeat < 1)
                __builtin_trap();
            if (it->pod.gpu_milli > 1000 ||
                (it->pod.gpu_milli < 1000 && it->pod.gpu_count > 1 && !it->pod.mig_profile))
                __builtin_trap();
            double v = gp_dist_sample(&it->duration, &r) + gp_dist_sample(&it->interarrival, &r);
            if (!(v >= 0))
                __builtin_trap();
        }
    } else if (d.msg[0] == '\0' || strchr(d.msg, '\n') || w.nitems != 0) {
        __builtin_trap();
    }
    gp_arena_free(&a);

    if (size < 256) {
        char s[256];
        memcpy(s, data, size);
        s[size] = '\0';
        struct gp_dist dist;
        if (gp_dist_parse(s, &dist)) {
            double v = gp_dist_sample(&dist, &r);
            if (!(v >= 0 && v <= 1e9))
                __builtin_trap();
        }
    }
    return 0;
}
