/* node_agent.c - `gpuplane node agent`: the node agent's flags read into
 * node/agent.h's options, the kubeconfig found, signals handled, the
 * agent run (docs/node.md, "The agent"). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/node_cmds.h"
#include "cli/opts.h"
#include "kube/kubeconfig.h"
#include "node/agent.h"
#include "node/config.h"
#include "node/nvml.h"
#include "util/arena.h"
#include "util/units.h"

struct agent_opts {
    const char *node, *kubeconfig, *context, *inventory, *nvml, *plugin_dir, *metrics_addr;
    const char *cdi_dir, *driver_root;
    const char *time_slicing, *mps, *mig_strategy, *alloc_wait_s, *max_s, *config_file;
    const char *rediscover_s, *sample_s;
    bool no_api, no_cdi, rename_by_default, fail_gt_one, quiet, help;
};

static void agent_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane node agent [options]\n"
               "\n"
               "Runs on a GPU node: discovers its GPUs, serves them to the kubelet as a\n"
               "device plugin (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*, as\n"
               "NVIDIA's plugin names them), streams health changes, and answers Allocate\n"
               "for the pod gpuplane's scheduler placed (gpuplane.io/phase=allocating on\n"
               "this node). docs/node.md says how.\n"
               "\n"
               "options:\n"
               "  --node NAME            this node (default $NODE_NAME, else the host name)\n"
               "  --kubeconfig FILE      the cluster (default: in-cluster, then $KUBECONFIG,\n"
               "                         then ~/.kube/config)\n"
               "  --context NAME         a context of the kubeconfig other than its current one\n"
               "  --no-api               no API server: Allocate serves the kubelet's devices\n"
               "  --inventory FILE       the GPUs from a JSON file (read again when it\n"
               "                         changes) instead of NVML\n"
               "  --nvml PATH            libnvidia-ml.so.1 to load (default $GPUPLANE_NVML,\n"
               "                         else the loader's search)\n"
               "  --plugin-dir DIR       the kubelet's device plugin directory\n"
               "                         (default /var/lib/kubelet/device-plugins)\n"
               "  --time-slicing N       N time-sliced replicas per GPU\n"
               "  --mps N                N MPS replicas per GPU (1/N of memory and threads)\n"
               "  --rename-by-default    shared GPUs advertised as nvidia.com/gpu.shared\n"
               "  --fail-requests-greater-than-one\n"
               "                         refuse a container asking more than one shared GPU\n"
               "  --mig-strategy S       none, single or mixed (default none)\n"
               "  --config-file FILE     NVIDIA k8s-device-plugin's configuration file\n"
               "                         (version v1: flags, sharing); flags given here\n"
               "                         override it, as in NVIDIA's plugin\n"
               "  --alloc-wait-s S       how long Allocate waits for its pod (default 2)\n"
               "  --metrics-addr ADDR    serve /metrics and /healthz on ADDR\n"
               "  --cdi-dir DIR          write the node's CDI spec (gpuplane-nvidia.json) here,\n"
               "                         at start and when the devices change (default\n"
               "                         /var/run/cdi)\n"
               "  --driver-root DIR      the driver's root for the CDI spec's host paths\n"
               "                         (default /)\n"
               "  --no-cdi               write no CDI spec\n"
               "  --rediscover-s S       discover the GPUs through NVML again every S seconds\n"
               "                         (default 60); NVML failing is retried with back-off\n"
               "  --sample-s S           sample utilisation and memory used for /metrics every\n"
               "                         S seconds between discoveries (default 10)\n"
               "  --max-s S              stop after S seconds\n"
               "  --quiet                no log lines\n"
               "  -h, --help             this help\n");
    gp_opts_usage_common(f);
}

static const struct gp_opt agent_opt_table[] = {
    GP_OPT_STRING_AT("--node", struct agent_opts, node),
    GP_OPT_STRING_AT("--kubeconfig", struct agent_opts, kubeconfig),
    GP_OPT_STRING_AT("--context", struct agent_opts, context),
    GP_OPT_FLAG_AT("--no-api", struct agent_opts, no_api),
    GP_OPT_STRING_AT("--inventory", struct agent_opts, inventory),
    GP_OPT_STRING_AT("--nvml", struct agent_opts, nvml),
    GP_OPT_STRING_AT("--plugin-dir", struct agent_opts, plugin_dir),
    GP_OPT_STRING_AT("--time-slicing", struct agent_opts, time_slicing),
    GP_OPT_STRING_AT("--mps", struct agent_opts, mps),
    GP_OPT_FLAG_AT("--rename-by-default", struct agent_opts, rename_by_default),
    GP_OPT_FLAG_AT("--fail-requests-greater-than-one", struct agent_opts, fail_gt_one),
    GP_OPT_STRING_AT("--mig-strategy", struct agent_opts, mig_strategy),
    GP_OPT_STRING_AT("--config-file", struct agent_opts, config_file),
    GP_OPT_STRING_AT("--alloc-wait-s", struct agent_opts, alloc_wait_s),
    GP_OPT_STRING_AT("--metrics-addr", struct agent_opts, metrics_addr),
    GP_OPT_STRING_AT("--cdi-dir", struct agent_opts, cdi_dir),
    GP_OPT_STRING_AT("--driver-root", struct agent_opts, driver_root),
    GP_OPT_FLAG_AT("--no-cdi", struct agent_opts, no_cdi),
    GP_OPT_STRING_AT("--max-s", struct agent_opts, max_s),
    GP_OPT_STRING_AT("--rediscover-s", struct agent_opts, rediscover_s),
    GP_OPT_STRING_AT("--sample-s", struct agent_opts, sample_s),
    GP_OPT_FLAG_AT("--quiet", struct agent_opts, quiet),
    GP_OPT_FLAG_AT("--help", struct agent_opts, help),
    GP_OPT_FLAG_AT("-h", struct agent_opts, help),
};

static volatile sig_atomic_t agent_stop;

static void on_signal(int sig)
{
    (void)sig;
    agent_stop = 1;
}

static enum gp_err number(const char *flag, const char *v, double lo, double *out,
                          struct gp_diag *d)
{
    if (v && (!gp_units_number(v, out) || *out < lo))
        return gp_diag_set(d, GP_EUSAGE, "node agent: %s: expected a number >= %g, got \"%s\"",
                           flag, lo, v);
    return GP_OK;
}

static enum gp_err check(const struct agent_opts *s, const struct gp_node_config *cf,
                         struct gp_node_agent_opts *o, struct gp_diag *d)
{
    enum gp_err e;
    double ts = 0, mps = 0;
    if ((e = number("--time-slicing", s->time_slicing, 1, &ts, d)) != GP_OK ||
        (e = number("--mps", s->mps, 1, &mps, d)) != GP_OK ||
        (e = number("--alloc-wait-s", s->alloc_wait_s, 0, &o->alloc_wait_s, d)) != GP_OK ||
        (e = number("--max-s", s->max_s, 0, &o->max_s, d)) != GP_OK ||
        (e = number("--rediscover-s", s->rediscover_s, 0.05, &o->rediscover_s, d)) != GP_OK ||
        (e = number("--sample-s", s->sample_s, 0.05, &o->sample_s, d)) != GP_OK)
        return e;
    if (s->time_slicing && s->mps)
        return gp_diag_set(d, GP_EUSAGE,
                           "node agent: --time-slicing and --mps: one or the other (NVIDIA's "
                           "plugin allows one sharing strategy per node)");
    double r = s->time_slicing ? ts : s->mps ? mps : 1;
    if (r != (double)(unsigned)r || r > 1024)
        return gp_diag_set(d, GP_EUSAGE, "node agent: replicas: expected a whole number 1..1024");
    o->sharing.replicas = (unsigned)r;
    o->sharing.mode = s->time_slicing ? GP_NODE_SHARE_TIME_SLICING
                      : s->mps        ? GP_NODE_SHARE_MPS
                                      : GP_NODE_SHARE_NONE;
    o->sharing.rename_by_default = s->rename_by_default;
    /* failRequestsGreaterThanOne: always true for MPS (node/config.c) */
    o->sharing.fail_requests_greater_than_one = s->fail_gt_one || s->mps;
    if (s->config_file && !s->time_slicing && !s->mps && cf->has_sharing) {
        /* the file's sharing, the flags above it (config.go: command line
         * first, then the file) */
        o->sharing.mode = cf->mode;
        o->sharing.replicas = cf->replicas;
        o->sharing.rename_by_default = s->rename_by_default || cf->rename_by_default;
        o->sharing.fail_requests_greater_than_one =
            s->fail_gt_one || cf->fail_requests_greater_than_one;
        /* the resources it names, only those replicated (the flags:
         * nvidia.com/gpu) */
        o->sharing.n_named = cf->n_named;
        memcpy(o->sharing.named, cf->named, sizeof o->sharing.named);
    }
    const char *ms = s->mig_strategy ? s->mig_strategy : "none";
    if (!s->mig_strategy && cf->has_mig_strategy)
        o->sharing.mig_strategy = cf->mig_strategy; /* the file's, no flag over it */
    else if (strcmp(ms, "none") == 0)
        o->sharing.mig_strategy = GP_NODE_MIG_NONE;
    else if (strcmp(ms, "single") == 0)
        o->sharing.mig_strategy = GP_NODE_MIG_SINGLE;
    else if (strcmp(ms, "mixed") == 0)
        o->sharing.mig_strategy = GP_NODE_MIG_MIXED;
    else
        return gp_diag_set(d, GP_EUSAGE,
                           "node agent: --mig-strategy: expected none, single or mixed, got "
                           "\"%s\"",
                           ms);
    o->inventory_file = s->inventory;
    o->nvml_path = s->nvml;
    o->plugin_dir = s->plugin_dir;
    o->metrics_addr = s->metrics_addr;
    if (s->no_cdi && s->cdi_dir)
        return gp_diag_set(d, GP_EUSAGE, "node agent: --cdi-dir and --no-cdi: one or the other");
    o->cdi_dir = s->cdi_dir;
    o->driver_root = s->driver_root ? s->driver_root : cf->driver_root; /* nvidiaDriverRoot */
    if (cf->mps_root) /* checked absolute and short by the reader */
        snprintf(o->sharing.mps_root, sizeof o->sharing.mps_root, "%s", cf->mps_root);
    o->no_cdi = s->no_cdi;
    o->quiet = s->quiet;
    return GP_OK;
}

int gp_node_cmd_agent(int argc, char **argv)
{
    struct agent_opts s = {0};
    struct gp_diag d = {""};
    enum gp_err e = gp_opts_parse(argc, argv, agent_opt_table,
                                  sizeof agent_opt_table / sizeof agent_opt_table[0], &s, &d);
    if (e != GP_OK)
        return gp_cli_fail(e, d.msg);
    if (s.help) {
        agent_usage(stdout);
        return 0;
    }
    struct gp_node_agent_opts o;
    memset(&o, 0, sizeof o);
    struct gp_arena a;
    gp_arena_init(&a);
    /* NVIDIA's configuration file, the flags above over it */
    struct gp_node_config cf;
    memset(&cf, 0, sizeof cf);
    if (s.config_file && (e = gp_node_config_read(s.config_file, &a, &cf, &d)) != GP_OK) {
        gp_arena_free(&a);
        return gp_cli_fail(e, d.msg);
    }
    for (size_t i = 0; i < cf.n_warnings && !s.quiet; i++)
        fprintf(stderr, "gpuplane node agent: warning: %s\n", cf.warnings[i]);
    /* failOnInitError (default true): false keeps the agent waiting after
     * a failed start instead of exiting (NVIDIA README, FAIL_ON_INIT_ERROR) */
    bool fail_on_init = !cf.has_fail_on_init_error || cf.fail_on_init_error;
    if ((e = check(&s, &cf, &o, &d)) != GP_OK) {
        gp_arena_free(&a);
        return gp_cli_fail(e, d.msg);
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    o.node_name = s.node ? s.node : getenv("NODE_NAME") ? getenv("NODE_NAME") : host;
    struct gp_kube_config cfg;
    if (!s.no_api) {
        if ((e = gp_kube_config_find(s.kubeconfig, s.context, &a, &cfg, &d)) != GP_OK) {
            gp_arena_free(&a);
            return gp_cli_fail(e, d.msg);
        }
        o.cfg = &cfg;
    }
    o.stop = &agent_stop;
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    struct gp_node_agent_result res;
    e = gp_node_agent_run(&o, &res, &d);
    gp_arena_free(&a);
    if (e != GP_OK) {
        fprintf(stderr, "gpuplane: %s\n", d.msg);
        if (!fail_on_init && e != GP_EUSAGE) {
            fprintf(stderr, "gpuplane node agent: failOnInitError is false: waiting, not "
                            "serving (SIGTERM stops it)\n");
            while (!agent_stop) {
                struct timespec ts = {0, 100000000};
                nanosleep(&ts, NULL);
            }
            return 0;
        }
        return o.inventory_file ? gp_err_exit_code(e) : gp_nvml_exit_code(e);
    }
    if (!s.quiet)
        fprintf(stderr,
                "gpuplane node agent: %lu allocations, %lu refused, %lu registrations, %lu "
                "restarts, %lu health changes\n",
                res.allocations, res.refusals, res.registrations, res.restarts, res.health_changes);
    return 0;
}
