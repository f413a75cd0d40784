/* node_show.c - `gpuplane node labels`, `gpuplane node resources` and
 * `gpuplane node cdi`: the GPU Feature Discovery labels the agent would
 * patch onto this Node, the device plugin resources it would advertise and
 * the CDI spec it would write (src/node/labels.h, devices.h, cdi.h), from
 * what NVML discovers, printed (cdi --write writes the spec into the CDI
 * directory).
 * Exit 0 success, 1 failure, 2 bad usage, 3 no NVIDIA driver. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/node_cmds.h"
#include "cli/opts.h"
#include "node/cdi.h"
#include "node/devices.h"
#include "node/labels.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "node/nvml.h"
#include "util/arena.h"
#include "util/fs.h"

struct show_opts {
    const char *nvml, *root, *sharing, *replicas, *mig_strategy, *cdi_dir;
    const char *node, *kubeconfig, *context;
    bool rename, no_timestamp, write, apply, help;
};

static const struct gp_opt labels_opt_table[] = {
    GP_OPT_STRING_AT("--nvml", struct show_opts, nvml),
    GP_OPT_STRING_AT("--root", struct show_opts, root),
    GP_OPT_STRING_AT("--sharing", struct show_opts, sharing),
    GP_OPT_STRING_AT("--replicas", struct show_opts, replicas),
    GP_OPT_STRING_AT("--mig-strategy", struct show_opts, mig_strategy),
    GP_OPT_FLAG_AT("--rename-by-default", struct show_opts, rename),
    GP_OPT_FLAG_AT("--no-timestamp", struct show_opts, no_timestamp),
    GP_OPT_FLAG_AT("--apply", struct show_opts, apply),
    GP_OPT_STRING_AT("--node", struct show_opts, node),
    GP_OPT_STRING_AT("--kubeconfig", struct show_opts, kubeconfig),
    GP_OPT_STRING_AT("--context", struct show_opts, context),
    GP_OPT_FLAG_AT("--help", struct show_opts, help),
    GP_OPT_FLAG_AT("-h", struct show_opts, help),
};

static const struct gp_opt resources_opt_table[] = {
    GP_OPT_STRING_AT("--nvml", struct show_opts, nvml),
    GP_OPT_STRING_AT("--sharing", struct show_opts, sharing),
    GP_OPT_STRING_AT("--replicas", struct show_opts, replicas),
    GP_OPT_STRING_AT("--mig-strategy", struct show_opts, mig_strategy),
    GP_OPT_FLAG_AT("--rename-by-default", struct show_opts, rename),
    GP_OPT_FLAG_AT("--help", struct show_opts, help),
    GP_OPT_FLAG_AT("-h", struct show_opts, help),
};

static const struct gp_opt cdi_opt_table[] = {
    GP_OPT_STRING_AT("--nvml", struct show_opts, nvml),
    GP_OPT_STRING_AT("--root", struct show_opts, root),
    GP_OPT_STRING_AT("--cdi-dir", struct show_opts, cdi_dir),
    GP_OPT_FLAG_AT("--write", struct show_opts, write),
    GP_OPT_FLAG_AT("--help", struct show_opts, help),
    GP_OPT_FLAG_AT("-h", struct show_opts, help),
};

static void labels_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane node labels [--sharing none|time-slicing|mps --replicas N]\n"
               "                            [--rename-by-default] [--mig-strategy "
               "none|single|mixed]\n"
               "                            [--apply --node NAME [--kubeconfig FILE]]\n"
               "\n"
               "The NVIDIA GPU Feature Discovery labels (nvidia.com/gpu.product, gpu.count,\n"
               "cuda.driver-version.*, mig-*, ...) the node agent would patch onto this Node,\n"
               "one key=value a line, from what NVML discovers (docs/node.md).\n"
               "\n"
               "options:\n"
               "  --sharing MODE        the device plugin's sharing: none (default),\n"
               "                        time-slicing or mps\n"
               "  --replicas N          replicas per GPU when shared\n"
               "  --rename-by-default   shared GPUs advertised as nvidia.com/gpu.shared\n"
               "  --mig-strategy S      none (default), single or mixed\n"
               "  --no-timestamp        no nvidia.com/gfd.timestamp label\n"
               "  --apply               patch them onto the Node (a merge patch: labels the\n"
               "                        agent owns that no longer apply are removed)\n"
               "  --node NAME           the Node to patch (default: $NODE_NAME)\n"
               "  --kubeconfig FILE     the API server (default: $KUBECONFIG, ~/.kube/config,\n"
               "                        in-cluster); --context NAME its context\n"
               "  --root DIR            read /sys/class/dmi/id/product_name under DIR\n"
               "  --nvml PATH           the NVML library to load\n"
               "  -h, --help            this help\n");
    gp_opts_usage_common(f);
    fprintf(f, "\nexit codes: 0 success, 1 failure, 2 bad usage, 3 no NVIDIA driver\n");
}

static void resources_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane node resources [--sharing none|time-slicing|mps --replicas N]\n"
               "                               [--rename-by-default] [--mig-strategy "
               "none|single|mixed]\n"
               "\n"
               "The device plugin resources the node agent would advertise to the kubelet\n"
               "(nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-<profile>), as its\n"
               "plugin builds them from what NVML discovers: per resource its device count,\n"
               "what they are, its socket and the device IDs (docs/node.md).\n"
               "\n"
               "options:\n"
               "  --sharing MODE        none (default), time-slicing or mps\n"
               "  --replicas N          replicas per GPU when shared\n"
               "  --rename-by-default   shared GPUs advertised as nvidia.com/gpu.shared\n"
               "  --mig-strategy S      none (default), single or mixed\n"
               "  --nvml PATH           the NVML library to load\n"
               "  -h, --help            this help\n");
    gp_opts_usage_common(f);
    fprintf(f, "\nexit codes: 0 success, 1 failure, 2 bad usage or a sharing NVIDIA's plugin\n"
               "refuses too (one line says why), 3 no NVIDIA driver\n");
}

static void cdi_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane node cdi [--write [--cdi-dir DIR]] [--root DIR]\n"
               "\n"
               "The CDI spec (kind nvidia.com/gpu) of this node's GPUs and MIG devices that the\n"
               "node agent writes for containerd and CRI-O (docs/node.md), printed; --write\n"
               "writes it atomically as DIR/" GP_NODE_CDI_FILE " instead.\n"
               "\n"
               "options:\n"
               "  --write          write the spec instead of printing it\n"
               "  --cdi-dir DIR    the CDI directory (default " GP_NODE_CDI_DIR ")\n"
               "  --root DIR       the driver's root: device nodes and libraries under DIR\n"
               "  --nvml PATH      the NVML library to load\n"
               "  -h, --help       this help\n");
    gp_opts_usage_common(f);
    fprintf(f, "\nexit codes: 0 success, 1 failure, 2 bad usage, 3 no NVIDIA driver\n");
}

static int write_stdout(const char *s, size_t n)
{
    if (fwrite(s, 1, n, stdout) != n || fflush(stdout) != 0) {
        fprintf(stderr, "gpuplane: node: cannot write to stdout: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

static enum gp_err parse_sharing(const struct show_opts *o, struct gp_node_sharing *sh,
                                 struct gp_diag *d)
{
    memset(sh, 0, sizeof *sh);
    sh->replicas = 1;
    sh->rename_by_default = o->rename;
    const char *m = o->sharing ? o->sharing : "none";
    if (strcmp(m, "none") == 0)
        sh->mode = GP_NODE_SHARE_NONE;
    else if (strcmp(m, "time-slicing") == 0)
        sh->mode = GP_NODE_SHARE_TIME_SLICING;
    else if (strcmp(m, "mps") == 0)
        sh->mode = GP_NODE_SHARE_MPS;
    else
        return gp_diag_set(d, GP_EUSAGE, "--sharing: expected none, time-slicing or mps, got '%s'",
                           m);
    if (o->replicas) {
        char *end;
        unsigned long r = strtoul(o->replicas, &end, 10);
        if (*end || r < 1 || r > 1024 || o->replicas[0] == '-')
            return gp_diag_set(d, GP_EUSAGE, "--replicas: expected 1 to 1024, got '%s'",
                               o->replicas);
        sh->replicas = (unsigned)r;
    }
    const char *s = o->mig_strategy ? o->mig_strategy : "none";
    if (strcmp(s, "none") == 0)
        sh->mig_strategy = GP_NODE_MIG_NONE;
    else if (strcmp(s, "single") == 0)
        sh->mig_strategy = GP_NODE_MIG_SINGLE;
    else if (strcmp(s, "mixed") == 0)
        sh->mig_strategy = GP_NODE_MIG_MIXED;
    else
        return gp_diag_set(d, GP_EUSAGE, "--mig-strategy: expected none, single or mixed, got '%s'",
                           s);
    return GP_OK;
}

/* The DMI product name under root, trimmed; NULL when unreadable. */
static char *machine_type(const char *root)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/sys/class/dmi/id/product_name",
             root && strcmp(root, "/") != 0 ? root : "");
    char *text;
    size_t len;
    struct gp_diag d = {""};
    if (gp_fs_read(path, &text, &len, &d) != GP_OK)
        return NULL;
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
        text[--len] = '\0';
    return text;
}

/* --apply: the labels patched onto the Node through kube/'s client. */
static int apply_labels(const struct show_opts *o, const struct gp_node_labels *l)
{
    const char *node = o->node ? o->node : getenv("NODE_NAME");
    if (!node || !*node)
        return gp_cli_fail(GP_EUSAGE, "node labels: --apply needs --node NAME (or $NODE_NAME)");
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_config cfg;
    struct gp_diag d = {""};
    struct gp_kube_client *c = NULL;
    struct gp_kube_client_opts co;
    gp_kube_client_opts_default(&co);
    enum gp_err err = gp_kube_config_find(o->kubeconfig, o->context, &a, &cfg, &d);
    if (err == GP_OK)
        err = gp_kube_client_new(&cfg, &co, &c, &d);
    size_t n = 0;
    if (err == GP_OK)
        err = gp_node_labels_apply(c, node, l, &n, &d);
    gp_kube_client_free(c);
    gp_arena_free(&a);
    if (err != GP_OK)
        return gp_cli_fail(err, d.msg);
    printf("gpuplane node labels: Node %s: %zu label%s set or removed\n", node, n,
           n == 1 ? "" : "s");
    return 0;
}

static struct gp_node_inventory show_inv; /* large */

int gp_node_cmd_labels(int argc, char **argv)
{
    static char cmd_name[] = "node labels"; /* named so in messages */
    argv[0] = cmd_name;
    struct show_opts o;
    memset(&o, 0, sizeof o);
    struct gp_diag d = {""};
    enum gp_err err = gp_opts_parse(argc, argv, labels_opt_table,
                                    sizeof labels_opt_table / sizeof labels_opt_table[0], &o, &d);
    if (err != GP_OK)
        return gp_cli_fail(err, d.msg);
    if (o.help) {
        labels_usage(stdout);
        return 0;
    }
    struct gp_node_sharing sh;
    if ((err = parse_sharing(&o, &sh, &d)) != GP_OK)
        return gp_cli_fail(err, d.msg);
    if (!o.apply && (o.node || o.kubeconfig || o.context))
        return gp_cli_fail(GP_EUSAGE, "node labels: --node, --kubeconfig and --context go with "
                                      "--apply");
    if ((err = gp_node_discover_path(o.nvml, &show_inv, &d)) != GP_OK) {
        fprintf(stderr, "gpuplane: %s\n", d.msg);
        return gp_nvml_exit_code(err);
    }
    char *machine = machine_type(o.root);
    struct gp_node_label_opts lo = {machine, NULL, o.no_timestamp ? -1 : (long long)time(NULL),
                                    false};
    static struct gp_node_labels l;
    err = gp_node_labels_build(&show_inv, &sh, &lo, &l, &d);
    free(machine);
    if (err != GP_OK)
        return gp_cli_fail(err, d.msg);
    if (o.apply)
        return apply_labels(&o, &l);
    struct gp_sbuf out;
    gp_sbuf_init(&out);
    for (size_t i = 0; i < l.n; i++)
        gp_sbuf_printf(&out, "%s=%s\n", l.items[i].key, l.items[i].value);
    int rc = out.oom ? gp_cli_fail(GP_ENOMEM, NULL) : write_stdout(gp_sbuf_str(&out), out.len);
    gp_sbuf_free(&out);
    return rc;
}

/* One resource: "nvidia.com/gpu: 8 (2 GPUs x 4 replicas, socket nvidia-gpu.sock)"
 * and its device IDs on the next line. */
static void print_resource(struct gp_sbuf *out, const struct gp_node_resource *r)
{
    size_t whole = 0, mig = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct gp_node_dev *v = &r->devs[i];
        if (v->replica != 0)
            continue; /* one device counted per GPU or MIG device */
        if (v->mig < 0)
            whole++;
        else
            mig++;
    }
    gp_sbuf_printf(out, "%s: %zu (", r->name, r->n);
    if (whole)
        gp_sbuf_printf(out, "%zu GPU%s", whole, whole == 1 ? "" : "s");
    if (mig)
        gp_sbuf_printf(out, "%s%zu MIG device%s", whole ? " and " : "", mig, mig == 1 ? "" : "s");
    if (r->shared)
        gp_sbuf_printf(out, " x %u replicas", r->replicas);
    gp_sbuf_printf(out, ", socket %s)\n ", r->socket);
    for (size_t i = 0; i < r->n; i++)
        gp_sbuf_printf(out, " %s", r->devs[i].id);
    gp_sbuf_printf(out, "\n");
}

int gp_node_cmd_resources(int argc, char **argv)
{
    static char cmd_name[] = "node resources"; /* named so in messages */
    argv[0] = cmd_name;
    struct show_opts o;
    memset(&o, 0, sizeof o);
    struct gp_diag d = {""};
    enum gp_err err =
        gp_opts_parse(argc, argv, resources_opt_table,
                      sizeof resources_opt_table / sizeof resources_opt_table[0], &o, &d);
    if (err != GP_OK)
        return gp_cli_fail(err, d.msg);
    if (o.help) {
        resources_usage(stdout);
        return 0;
    }
    struct gp_node_sharing sh;
    if ((err = parse_sharing(&o, &sh, &d)) != GP_OK)
        return gp_cli_fail(err, d.msg);
    if ((err = gp_node_discover_path(o.nvml, &show_inv, &d)) != GP_OK) {
        fprintf(stderr, "gpuplane: %s\n", d.msg);
        return gp_nvml_exit_code(err);
    }
    static struct gp_node_devset set;
    if ((err = gp_node_devset_build(&show_inv, &sh, &set, &d)) != GP_OK)
        return gp_cli_fail(err, d.msg);
    struct gp_sbuf out;
    gp_sbuf_init(&out);
    for (size_t i = 0; i < set.n_resources; i++)
        print_resource(&out, &set.res[i]);
    if (set.n_resources == 0)
        gp_sbuf_printf(&out, "no resource: no GPU or MIG device to advertise\n");
    gp_node_devset_free(&set);
    int rc = out.oom ? gp_cli_fail(GP_ENOMEM, NULL) : write_stdout(gp_sbuf_str(&out), out.len);
    gp_sbuf_free(&out);
    return rc;
}

int gp_node_cmd_cdi(int argc, char **argv)
{
    static char cmd_name[] = "node cdi"; /* named so in messages */
    argv[0] = cmd_name;
    struct show_opts o;
    memset(&o, 0, sizeof o);
    struct gp_diag d = {""};
    enum gp_err err = gp_opts_parse(argc, argv, cdi_opt_table,
                                    sizeof cdi_opt_table / sizeof cdi_opt_table[0], &o, &d);
    if (err != GP_OK)
        return gp_cli_fail(err, d.msg);
    if (o.help) {
        cdi_usage(stdout);
        return 0;
    }
    if (o.cdi_dir && !o.write)
        return gp_cli_fail(GP_EUSAGE, "node cdi: --cdi-dir goes with --write");
    if ((err = gp_node_discover_path(o.nvml, &show_inv, &d)) != GP_OK) {
        fprintf(stderr, "gpuplane: %s\n", d.msg);
        return gp_nvml_exit_code(err);
    }
    struct gp_node_cdi_opts co = {o.root, NULL};
    char *spec;
    if ((err = gp_node_cdi_build(&show_inv, &co, &spec, &d)) != GP_OK)
        return gp_cli_fail(err, d.msg);
    int rc = 0;
    if (o.write) {
        const char *dir = o.cdi_dir ? o.cdi_dir : GP_NODE_CDI_DIR;
        if ((err = gp_node_cdi_write(dir, spec, &d)) != GP_OK)
            rc = gp_cli_fail(err, d.msg);
        else
            printf("gpuplane node cdi: wrote %s/%s\n", dir, GP_NODE_CDI_FILE);
    } else {
        rc = write_stdout(spec, strlen(spec));
    }
    free(spec);
    return rc;
}
