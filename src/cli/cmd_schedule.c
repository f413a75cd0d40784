/* cmd_schedule.c - `gpuplane schedule`: the engine as a Kubernetes
 * scheduler for pods whose spec.schedulerName names it (kube/run.h,
 * docs/kube.md). Runs until SIGTERM or SIGINT (or --max-s); exit 0 then,
 * 2 for bad flags or a bad kubeconfig, 1 when the API cannot be used. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "kube/deploy.h"
#include "kube/kubeconfig.h"
#include "kube/run.h"
#include "util/arena.h"
#include "util/units.h"

struct schedule_opts {
    const char *kubeconfig, *context, *scheduler_name, *policy, *qps, *burst;
    const char *lease_namespace, *lease_name, *identity, *metrics_addr, *max_s, *leader_elect;
    const char *binders, *watch_idle_s;
    const char *record, *record_max_mb;
    const char *allocating_timeout;
    const char *config_namespace, *config_name;
    bool help, no_bind_events, no_config;
};

static void schedule_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane schedule [--kubeconfig FILE] [options]\n"
               "\n"
               "Schedules the pods whose spec.schedulerName is --scheduler-name with the\n"
               "simulator's engine: the chosen node and GPUs written into the pod's\n"
               "annotations (gpuplane.io/node, gpuplane.io/gpus) with its resourceVersion\n"
               "as a precondition, then the Binding; pods that fit nowhere get\n"
               "PodScheduled=False and an Event. Every pod on a node counts, whoever bound\n"
               "it. docs/kube.md says how.\n"
               "\n"
               "options:\n"
               "  --kubeconfig FILE      the cluster (default: in-cluster, then $KUBECONFIG,\n"
               "                         then ~/.kube/config)\n"
               "  --context NAME         a context of the kubeconfig other than its current one\n"
               "  --config-namespace NS  the namespace of its ConfigMap (default\n"
               "                         gpuplane-system)\n"
               "  --config-name NAME     its ConfigMap, listed at the start and watched: its\n"
               "                         keys (schedulerName, policy, podInitialBackoffSeconds,\n"
               "                         podMaxBackoffSeconds) over the flags' values, a\n"
               "                         change applied between cycles (default\n"
               "                         gpuplane-scheduler-config)\n"
               "  --no-config            no ConfigMap: the flags alone\n"
               "  --scheduler-name NAME  the schedulerName it serves (default gpuplane)\n"
               "  --policy NAME          the placement policy (default best-fit; gpuplane sim\n"
               "                         --help lists them)\n"
               "  --qps N, --burst N     client-side rate limit, one for the whole process\n"
               "                         (the Lease's client apart; default 50 and 100)\n"
               "  --watch-idle-s S       a watch that receives nothing (no event, no bookmark)\n"
               "                         for S seconds is taken as a dropped connection and\n"
               "                         resumed (default 120, twice the API server's\n"
               "                         bookmark period; 0: never)\n"
               "  --leader-elect BOOL    take a Lease before binding (default true: run two\n"
               "                         replicas, only the leader binds)\n"
               "  --lease-namespace NS   the Lease's namespace (default kube-system)\n"
               "  --lease-name NAME      the Lease (default gpuplane-scheduler)\n"
               "  --identity ID          this replica in the Lease and Events (default the\n"
               "                         host name and the process id)\n"
               "  --metrics-addr ADDR    serve /metrics, /healthz, /readyz on ADDR, e.g.\n"
               "                         :8080 (default: none; a port 0 takes a free one,\n"
               "                         printed at the start)\n"
               "  --no-bind-events       no Normal \"Scheduled\" Event per bind\n"
               "  --binders N            threads binding in parallel, each on a connection\n"
               "                         of its own (default 8; 0: one at a time)\n"
               "  --allocating-timeout S a pod bound and left allocating this long (no node\n"
               "                         agent served it): Warning Event, metric, phase\n"
               "                         expired (default 120; 0: never)\n"
               "  --record FILE          append an event log of what reached the engine and\n"
               "                         what it decided (JSON Lines, docs/FORMATS.md);\n"
               "                         `gpuplane sim --replay FILE` replays it\n"
               "  --record-max-mb N      rotate it to FILE.1 past N MiB (default 256)\n"
               "  --max-s S              stop after S seconds\n"
               "  -h, --help             this help\n");
    gp_opts_usage_common(f);
}

static const struct gp_opt schedule_opt_table[] = {
    GP_OPT_STRING_AT("--kubeconfig", struct schedule_opts, kubeconfig),
    GP_OPT_STRING_AT("--context", struct schedule_opts, context),
    GP_OPT_STRING_AT("--config-namespace", struct schedule_opts, config_namespace),
    GP_OPT_STRING_AT("--config-name", struct schedule_opts, config_name),
    GP_OPT_FLAG_AT("--no-config", struct schedule_opts, no_config),
    GP_OPT_STRING_AT("--scheduler-name", struct schedule_opts, scheduler_name),
    GP_OPT_STRING_AT("--policy", struct schedule_opts, policy),
    GP_OPT_STRING_AT("--qps", struct schedule_opts, qps),
    GP_OPT_STRING_AT("--burst", struct schedule_opts, burst),
    GP_OPT_STRING_AT("--watch-idle-s", struct schedule_opts, watch_idle_s),
    GP_OPT_STRING_AT("--leader-elect", struct schedule_opts, leader_elect),
    GP_OPT_STRING_AT("--lease-namespace", struct schedule_opts, lease_namespace),
    GP_OPT_STRING_AT("--lease-name", struct schedule_opts, lease_name),
    GP_OPT_STRING_AT("--identity", struct schedule_opts, identity),
    GP_OPT_STRING_AT("--metrics-addr", struct schedule_opts, metrics_addr),
    GP_OPT_STRING_AT("--max-s", struct schedule_opts, max_s),
    GP_OPT_FLAG_AT("--no-bind-events", struct schedule_opts, no_bind_events),
    GP_OPT_STRING_AT("--binders", struct schedule_opts, binders),
    GP_OPT_STRING_AT("--record", struct schedule_opts, record),
    GP_OPT_STRING_AT("--allocating-timeout", struct schedule_opts, allocating_timeout),
    GP_OPT_STRING_AT("--record-max-mb", struct schedule_opts, record_max_mb),
    GP_OPT_FLAG_AT("--help", struct schedule_opts, help),
    GP_OPT_FLAG_AT("-h", struct schedule_opts, help),
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static enum gp_err number(const char *flag, const char *v, double *out, struct gp_diag *d)
{
    if (v && (!gp_units_number(v, out) || *out < 0))
        return gp_diag_set(d, GP_EUSAGE, "schedule: %s: expected a number >= 0, got \"%s\"", flag,
                           v);
    return GP_OK;
}

static enum gp_err check(const struct schedule_opts *s, struct gp_kube_run_opts *o,
                         struct gp_diag *d)
{
    enum gp_err err;
    if ((err = number("--qps", s->qps, &o->client.qps, d)) != GP_OK ||
        (err = number("--burst", s->burst, &o->client.burst, d)) != GP_OK ||
        (err = number("--watch-idle-s", s->watch_idle_s, &o->client.watch_idle_s, d)) != GP_OK ||
        (err = number("--max-s", s->max_s, &o->max_s, d)) != GP_OK)
        return err;
    double binders = o->sched.binders;
    if ((err = number("--binders", s->binders, &binders, d)) != GP_OK)
        return err;
    if (binders > 64 || (double)(unsigned)binders < binders)
        return gp_diag_set(d, GP_EUSAGE, "schedule: --binders: expected 0 to 64, got \"%s\"",
                           s->binders);
    o->sched.binders = (unsigned)binders;
    if ((err = number("--allocating-timeout", s->allocating_timeout, &o->sched.allocating_timeout_s,
                      d)) != GP_OK)
        return err;
    double max_mb = 256;
    if ((err = number("--record-max-mb", s->record_max_mb, &max_mb, d)) != GP_OK)
        return err;
    if (max_mb < 1 || max_mb > 1048576)
        return gp_diag_set(d, GP_EUSAGE,
                           "schedule: --record-max-mb: expected 1 to 1048576, got \"%s\"",
                           s->record_max_mb);
    if (s->record_max_mb && !s->record)
        return gp_diag_set(d, GP_EUSAGE, "schedule: --record-max-mb needs --record");
    if (s->record && !s->record[0])
        return gp_diag_set(d, GP_EUSAGE, "schedule: --record: expected a file name");
    o->sched.record_path = s->record;
    o->sched.record_max_bytes = (uint64_t)(max_mb * 1048576);
    if (s->leader_elect && strcmp(s->leader_elect, "true") != 0 &&
        strcmp(s->leader_elect, "false") != 0)
        return gp_diag_set(d, GP_EUSAGE,
                           "schedule: --leader-elect: expected true or false, got \"%s\"",
                           s->leader_elect);
    o->leader_elect = !s->leader_elect || strcmp(s->leader_elect, "true") == 0;
    if (s->scheduler_name)
        o->sched.scheduler_name = s->scheduler_name;
    o->sched.policy = s->policy;
    o->sched.bind_events = !s->no_bind_events;
    if (s->lease_namespace)
        o->lease.ns = s->lease_namespace;
    if (s->lease_name)
        o->lease.name = s->lease_name;
    o->metrics_addr = s->metrics_addr;
    if (s->no_config && (s->config_namespace || s->config_name))
        return gp_diag_set(d, GP_EUSAGE,
                           "schedule: --no-config and --config-namespace/--config-name: one or "
                           "the other");
    o->config_ns = s->config_namespace ? s->config_namespace : GP_DEPLOY_NAMESPACE;
    o->config_name = s->no_config ? NULL : s->config_name ? s->config_name : GP_DEPLOY_CONFIGMAP;
    return GP_OK;
}

int gp_cmd_schedule(int argc, char **argv)
{
    struct schedule_opts s = {0};
    struct gp_diag d = {""};
    enum gp_err err =
        gp_opts_parse(argc, argv, schedule_opt_table,
                      sizeof schedule_opt_table / sizeof schedule_opt_table[0], &s, &d);
    if (err != GP_OK)
        return gp_cli_fail(err, d.msg);
    if (s.help) {
        schedule_usage(stdout);
        return 0;
    }
    struct gp_kube_run_opts o;
    memset(&o, 0, sizeof o);
    gp_kube_client_opts_default(&o.client);
    gp_kube_sched_opts_default(&o.sched);
    gp_kube_lease_opts_default(&o.lease);
    if ((err = check(&s, &o, &d)) != GP_OK)
        return gp_cli_fail(err, d.msg);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_config cfg;
    if ((err = gp_kube_config_find(s.kubeconfig, s.context, &a, &cfg, &d)) != GP_OK) {
        gp_arena_free(&a);
        return gp_cli_fail(err, d.msg);
    }
    char host[128] = "gpuplane", id[200];
    gethostname(host, sizeof host - 1);
    snprintf(id, sizeof id, "%s_%ld", host, (long)getpid());
    o.sched.identity = o.lease.identity = s.identity ? s.identity : id;
    o.cfg = &cfg;
    o.stop = &stop_flag;
    o.log = stderr;
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    struct gp_kube_run_result res;
    err = gp_kube_run(&o, &res, &d);
    gp_arena_free(&a);
    if (err != GP_OK)
        return gp_cli_fail(err, d.msg);
    fprintf(stderr,
            "gpuplane schedule: %llu bound, %llu unschedulable, %llu rolled back, %llu audit "
            "violations\n",
            (unsigned long long)res.stats.binds, (unsigned long long)res.stats.unschedulable,
            (unsigned long long)res.stats.rollbacks,
            (unsigned long long)res.stats.audit_violations);
    return 0;
}
