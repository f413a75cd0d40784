/* node_discover.c - `gpuplane node discover`: the node's GPUs as NVML
 * reports them (src/node/nvml.h), printed as text or JSON. Exit 0: found
 * (even none); 1: NVML failed; 2: usage; 3: no NVIDIA driver. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/node_cmds.h"
#include "cli/opts.h"
#include "node/inventory_json.h"
#include "node/nvml.h"

struct discover_opts {
    const char *nvml;
    bool json, help;
};

static void discover_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane node discover [--json] [--nvml PATH]\n"
               "\n"
               "The node's NVIDIA GPUs as NVML reports them (docs/node.md, \"Discovery\"):\n"
               "driver and CUDA driver versions; per GPU its UUID, model, PCI bus id, memory,\n"
               "compute capability, MIG mode and MIG devices, NVLink peers, utilisation and\n"
               "persistence mode.\n"
               "\n"
               "options:\n"
               "  --json       print JSON instead of text\n"
               "  --nvml PATH  the NVML library to load (default: $" GP_NVML_ENV ", else\n"
               "               " GP_NVML_LIB " from the loader's path)\n"
               "  -h, --help   this help\n");
    gp_opts_usage_common(f);
    fprintf(f, "\n"
               "exit codes: 0 success, 1 NVML failed, 2 bad input or usage, 3 no NVIDIA driver\n");
}

static const struct gp_opt discover_opt_table[] = {
    GP_OPT_STRING_AT("--nvml", struct discover_opts, nvml),
    GP_OPT_FLAG_AT("--json", struct discover_opts, json),
    GP_OPT_FLAG_AT("--help", struct discover_opts, help),
    GP_OPT_FLAG_AT("-h", struct discover_opts, help),
};

int gp_node_cmd_discover(int argc, char **argv)
{
    struct discover_opts o = {0};
    struct gp_diag d = {""};
    enum gp_err err =
        gp_opts_parse(argc, argv, discover_opt_table,
                      sizeof discover_opt_table / sizeof discover_opt_table[0], &o, &d);
    if (err != GP_OK) {
        fprintf(stderr, "gpuplane: node discover: %s\n", d.msg);
        return gp_err_exit_code(err);
    }
    if (o.help) {
        discover_usage(stdout);
        return 0;
    }
    struct gp_node_inventory *inv = calloc(1, sizeof *inv);
    if (!inv)
        return gp_cli_fail(GP_ENOMEM, NULL);
    err = gp_node_discover_path(o.nvml, inv, &d);
    if (err != GP_OK) {
        fprintf(stderr, "gpuplane: node discover: %s\n", d.msg);
        free(inv);
        return gp_nvml_exit_code(err);
    }
    struct gp_sbuf out;
    gp_sbuf_init(&out);
    if (o.json) {
        json_t *j = gp_node_inventory_json(inv);
        char *s = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
        json_decref(j);
        if (!s) {
            free(inv);
            gp_sbuf_free(&out);
            return gp_cli_fail(GP_ENOMEM, NULL);
        }
        gp_sbuf_add(&out, s);
        gp_sbuf_add(&out, "\n");
        free(s);
    } else {
        gp_node_inventory_text(inv, &out);
    }
    fputs(gp_sbuf_str(&out), stdout);
    gp_sbuf_free(&out);
    free(inv);
    return 0;
}
