/* node_doctor.c - `gpuplane node doctor`: discovers the node's GPUs (NVML),
 * runs the node doctor's checks (src/node/doctor.h) and prints each
 * verdict with its fix, in text or JSON. Exit 0 every check passed (or
 * warned), 1 one failed, 2 bad usage, 3 no NVIDIA driver. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/node_cmds.h"
#include "cli/opts.h"
#include "node/doctor.h"
#include "node/nvml.h"

struct doctor_opts {
    const char *root, *nvml, *cuda, *image, *mig, *mps_root;
    bool mps, json, help;
};

static const struct gp_opt doctor_opt_table[] = {
    GP_OPT_STRING_AT("--root", struct doctor_opts, root),
    GP_OPT_STRING_AT("--nvml", struct doctor_opts, nvml),
    GP_OPT_STRING_AT("--cuda", struct doctor_opts, cuda),
    GP_OPT_STRING_AT("--image", struct doctor_opts, image),
    GP_OPT_STRING_AT("--mig", struct doctor_opts, mig),
    GP_OPT_FLAG_AT("--mps", struct doctor_opts, mps),
    GP_OPT_STRING_AT("--mps-root", struct doctor_opts, mps_root),
    GP_OPT_FLAG_AT("--json", struct doctor_opts, json),
    GP_OPT_FLAG_AT("--help", struct doctor_opts, help),
    GP_OPT_FLAG_AT("-h", struct doctor_opts, help),
};

static void doctor_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane node doctor [--cuda VERSION | --image REF] [--mig LAYOUT] "
               "[--mps [--mps-root DIR]] [--json]\n"
               "\n"
               "Checks this GPU node as the GPU Operator would set it up, each check with its\n"
               "fix (docs/node.md): the NVIDIA driver and its version, the CUDA the images need\n"
               "against it (gpuplane compat's rules), the NVIDIA Container Toolkit, containerd\n"
               "or CRI-O with the nvidia runtime or CDI, the kubelet's device-plugin directory,\n"
               "the MIG layout, persistence mode and, under MPS, the MPS control daemon.\n"
               "\n"
               "options:\n"
               "  --cuda VERSION  the CUDA toolkit the node's images are built with: 12.4\n"
               "  --image REF     or an image whose CUDA version is known\n"
               "                  (nvcr.io/nvidia/pytorch:24.05-py3)\n"
               "  --mig LAYOUT    the pool's MIG layout for every GPU: none, or\n"
               "                  PROFILE=N[,PROFILE=N...] (3g.40gb=2)\n"
               "  --mps           the pool shares its GPUs by MPS: check the control daemon\n"
               "  --mps-root DIR  the agent's flags.mpsRoot (default /run/nvidia/mps)\n"
               "  --root DIR      read the node's files under DIR (tests: a fake root)\n"
               "  --nvml PATH     the NVML library to load (default: $GPUPLANE_NVML, then\n"
               "                  libnvidia-ml.so.1)\n"
               "  --json          the checks as JSON\n"
               "  -h, --help      this help\n");
    gp_opts_usage_common(f);
    fprintf(f, "\n"
               "exit codes: 0 every check passed (warnings pass), 1 a check failed, 2 bad "
               "usage,\n"
               "3 no NVIDIA driver\n");
}

static void print_text(const struct gp_node_doctor *r, struct gp_sbuf *o)
{
    size_t count[4] = {0};
    for (size_t i = 0; i < r->n; i++)
        count[r->checks[i].verdict]++;
    gp_sbuf_printf(o, "gpuplane node doctor: %zu passed, %zu warning%s, %zu failed, %zu skipped\n",
                   count[GP_NODE_PASS], count[GP_NODE_WARN], count[GP_NODE_WARN] == 1 ? "" : "s",
                   count[GP_NODE_FAIL], count[GP_NODE_SKIP]);
    for (size_t i = 0; i < r->n; i++) {
        const struct gp_node_check *c = &r->checks[i];
        gp_sbuf_printf(o, "  %-5s %-15s %s\n", gp_node_verdict_name(c->verdict), c->name,
                       c->detail);
        if (c->fix[0])
            gp_sbuf_printf(o, "  %-5s %-15s fix: %s\n", "", "", c->fix);
    }
}

static char *print_json(const struct gp_node_doctor *r)
{
    json_t *checks = json_array();
    for (size_t i = 0; i < r->n; i++) {
        const struct gp_node_check *c = &r->checks[i];
        json_array_append_new(checks, json_pack("{s:s,s:s,s:s,s:s}", "name", c->name, "verdict",
                                                gp_node_verdict_name(c->verdict), "detail",
                                                c->detail, "fix", c->fix));
    }
    json_t *doc = json_pack("{s:o,s:b,s:i}", "checks", checks, "no_driver", r->no_driver, "exit",
                            gp_node_doctor_exit(r));
    char *s = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
    json_decref(doc);
    return s;
}

int gp_node_cmd_doctor(int argc, char **argv)
{
    static char cmd_name[] = "node doctor"; /* named so in messages */
    argv[0] = cmd_name;
    struct doctor_opts o;
    memset(&o, 0, sizeof o);
    struct gp_diag diag = {""};
    enum gp_err err =
        gp_opts_parse(argc, argv, doctor_opt_table,
                      sizeof doctor_opt_table / sizeof doctor_opt_table[0], &o, &diag);
    if (err != GP_OK)
        return gp_cli_fail(err, diag.msg);
    if (o.help) {
        doctor_usage(stdout);
        return 0;
    }
    if (o.cuda && o.image)
        return gp_cli_fail(GP_EUSAGE, "node doctor: give --cuda or --image, not both");
    static struct gp_node_inventory inv; /* large */
    struct gp_diag nd = {""};
    bool have = gp_node_discover_path(o.nvml, &inv, &nd) == GP_OK;
    struct gp_node_doctor_opts dopt = {
        o.root, NULL,  have ? &inv : NULL, have ? NULL : nd.msg, o.cuda, o.image,
        o.mig,  o.mps, o.mps_root};
    struct gp_node_doctor r;
    if ((err = gp_node_doctor_run(&dopt, &r, &diag)) != GP_OK)
        return gp_cli_fail(err, diag.msg);
    struct gp_sbuf out;
    gp_sbuf_init(&out);
    if (o.json) {
        char *s = print_json(&r);
        if (s)
            gp_sbuf_printf(&out, "%s\n", s);
        free(s);
    } else {
        print_text(&r, &out);
    }
    int rc = gp_node_doctor_exit(&r);
    if (out.oom || fwrite(gp_sbuf_str(&out), 1, out.len, stdout) != out.len ||
        fflush(stdout) != 0) {
        fprintf(stderr, "gpuplane: node doctor: cannot write to stdout: %s\n", strerror(errno));
        rc = 1;
    }
    gp_sbuf_free(&out);
    return rc;
}
