/* fuzz_node_config.c - libFuzzer target for the reader of NVIDIA
 * k8s-device-plugin's configuration file (node/config.c): any input gives
 * GP_OK with a coherent configuration (replicas of at least 2 when
 * sharing, warnings NUL-terminated), or an error with a one-line diag and
 * nothing set; never a crash, a hang or a leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_arena a;
    struct gp_node_config c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    enum gp_err err = gp_node_config_parse((const char *)data, size, "fuzz.yaml", &a, &c, &d);
    if (err == GP_OK) {
        if (c.has_sharing &&
            (c.replicas < 2 || c.replicas > 1024 ||
             (c.mode != GP_NODE_SHARE_TIME_SLICING && c.mode != GP_NODE_SHARE_MPS)))
            __builtin_trap();
        if (c.n_warnings > GP_NODE_CONFIG_MAX_WARNINGS)
            __builtin_trap();
        for (size_t i = 0; i < c.n_warnings; i++)
            if (!memchr(c.warnings[i], '\0', sizeof c.warnings[i]) || strchr(c.warnings[i], '\n'))
                __builtin_trap();
    } else if (d.msg[0] == '\0' || strchr(d.msg, '\n') || c.has_sharing || c.has_mig_strategy) {
        __builtin_trap();
    }
    gp_arena_free(&a);
    return 0;
}
