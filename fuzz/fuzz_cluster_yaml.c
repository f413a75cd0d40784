/* fuzz_cluster_yaml.c - libFuzzer target for the Cluster spec reader: any
 * input must give GP_OK or an error with a one-line diag, never a crash,
 * a hang or a leak; a cluster that parses is also expanded into nodes. */
#include <stdint.h>
#include <string.h>

#include "io/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    enum gp_err err = gp_cluster_parse_yaml((const char *)data, size, "fuzz.yaml", &a, &c, &d);
    if (err == GP_OK) {
        err = gp_cluster_expand(&c, &a, &d);
        if (err == GP_OK && c.nnodes > 0 && (!c.nodes[0].name || !c.nodes[0].pool))
            __builtin_trap();
    } else if (d.msg[0] == '\0' || strchr(d.msg, '\n')) {
        __builtin_trap(); /* every error carries one line */
    }
    gp_arena_free(&a);
    return 0;
}
