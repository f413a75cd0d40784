/* fuzz_plan_limits.c - libFuzzer target for the planner's limits file
 * (plan/plan.h, docs/plan.md): any input gives limits whose numbers are in
 * their documented ranges, or an error with a one-line diag; never a
 * crash, a hang or a leak. */
#include <stdint.h>
#include <string.h>

#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_arena a;
    struct gp_diag d = {""};
    struct gp_plan_limits l;
    gp_arena_init(&a);
    enum gp_err err = gp_plan_limits_parse((const char *)data, size, "limits.yaml", &a, &l, &d);
    if (err != GP_OK) {
        if (d.msg[0] == '\0' || strchr(d.msg, '\n'))
            __builtin_trap();
    } else {
        if (l.queue_p95_s > 30 * 86400.0 || l.latency_p99_s > 30 * 86400.0 ||
            l.price_uncertainty_pct < 0 || l.price_uncertainty_pct > 100 ||
            l.spot_rate_per_node_hour > 10 || (l.checkpoint_s != -1 && !(l.checkpoint_s > 0)))
            __builtin_trap();
        for (size_t i = 0; i < l.navoid_providers; i++)
            if (!gp_provider_find(l.avoid_providers[i]))
                __builtin_trap();
        for (size_t i = 0; i < l.nonly_providers; i++)
            if (!gp_provider_find(l.only_providers[i]))
                __builtin_trap();
    }
    gp_arena_free(&a);
    return 0;
}
