/* fuzz_render.c - libFuzzer target for the Cluster spec reader with GPU
 * sharing and `gpuplane render`'s writers: any input either fails with a
 * one-line diag or renders files that all parse back as YAML, never a
 * crash, a hang or a leak. */
#include <stdint.h>
#include <string.h>

#include <libfyaml.h>

#include "io/cluster.h"
#include "io/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    enum gp_err err = gp_cluster_parse_yaml((const char *)data, size, "fuzz.yaml", &a, &c, &d);
    struct gp_render r;
    memset(&r, 0, sizeof r);
    if (err == GP_OK)
        err = gp_render_cluster(&c, &r, &d);
    if (err != GP_OK) {
        if (d.msg[0] == '\0' || strchr(d.msg, '\n'))
            __builtin_trap(); /* every error carries one line */
    } else {
        struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET};
        for (size_t i = 0; i < r.nfiles; i++) {
            struct fy_document *doc = fy_document_build_from_string(
                &cfg, gp_sbuf_str(&r.files[i].text), r.files[i].text.len);
            if (!doc)
                __builtin_trap(); /* rendered YAML that does not parse */
            fy_document_destroy(doc);
        }
    }
    gp_render_free(&r);
    gp_arena_free(&a);
    return 0;
}
