/* fuzz_kubeconfig.c - libFuzzer target for the kubeconfig reader
 * (kube/kubeconfig.c): any input gives GP_OK with a server, a namespace
 * and a context, or an error with a one-line diag and an empty config;
 * never a crash, a hang or a leak. The input is also tried with a context
 * asked for by name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const uint8_t *data, size_t size, const char *context)
{
    struct gp_arena a;
    struct gp_kube_config c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    enum gp_err err = gp_kube_config_parse((const char *)data, size, "fuzz.kubeconfig", "/d",
                                           context, &a, &c, &d);
    if (err == GP_OK) {
        if (!c.server || !c.ns || !c.context || strncmp(c.server, "http", 4) != 0)
            __builtin_trap();
        if ((c.ca.file && c.ca.data) || (c.ca.data && strlen(c.ca.data) != c.ca.len))
            __builtin_trap();
    } else if (d.msg[0] == '\0' || strchr(d.msg, '\n') || c.server) {
        __builtin_trap();
    }
    gp_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one(data, size, NULL);
    one(data, size, "x");
    return 0;
}
