/* agent.c - the node agent's loop (agent.h): discovery, the device plugin,
 * health into ListAndWatch, the per-node protocol for Allocate, /metrics
 * and /healthz. */
#include "node/agent.h"

#include <sys/stat.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/client.h"
#include "kube/httpd.h"
#include "kube/metrics.h"
#include "node/cdi.h"
#include "node/devices.h"
#include "node/events.h"
#include "node/health.h"
#include "node/inventory_file.h"
#include "node/labels.h"
#include "node/metrics.h"
#include "node/nvml.h"
#include "node/nvwatch.h"
#include "node/plugin.h"
#include "node/podcount.h"
#include "node/podseq.h"
#include "node/protocol.h"

struct agent {
    const struct gp_node_agent_opts *o;
    struct gp_node_inventory inv; /* guarded by mu once the XID thread runs */
    pthread_mutex_t mu;
    struct gp_plugin *plugin;
    struct gp_kube_client *client, *event_client;
    char node_uid[GP_NODE_UID_LEN]; /* the Node's metadata.uid, "" until read */
    struct gp_node_protocol proto;
    struct gp_node_podseq podseq; /* a pod's containers one Allocate at a time, over proto */
    struct gp_node_podcount pods; /* the pods holding each GPU, for /metrics */
    bool have_proto;
    struct gp_metrics *reg; /* nm's registry, once made */
    struct gp_node_metrics nm;
    bool have_nm;
    struct gp_httpd *httpd;
    struct gp_metric_series *m_alloc, *m_refused, *m_reg, *m_restarts, *m_streams, *m_health;
    struct gp_metric *m_devices, *m_healthy;
    struct gp_plugin_opts po; /* as started: the plugin restarted with them */
    /* NVML (node/nvwatch.h) */
    struct gp_node_nvwatch *watch;
    struct gp_node_nvwatch_report rep;
    struct gp_node_health health;     /* a copy, for /metrics */
    struct gp_node_inventory scratch; /* the GPUs NVML lists now: the CDI spec's */
    struct gp_metric_series *m_nvml_up, *m_nvml_failures, *m_nvml_retries, *m_discoveries,
        *m_nvml_lost;
    unsigned long health_changes, cdi_writes, cdi_failures;
    /* the CDI spec as last written (NULL: none yet, or it failed) */
    char *cdi_spec;
    bool cdi_failed; /* the last attempt failed: said once, retried */
    struct gp_metric_series *m_cdi_writes, *m_cdi_failures;
    /* the inventory file as last read */
    struct timespec file_mtime;
    off_t file_size;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void logf_(const struct agent *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void logf_(const struct agent *a, const char *fmt, ...)
{
    if (a->o->quiet)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gpuplane node agent: %s\n", line);
}

/* --- metrics ----------------------------------------------------------- */

/* The per-GPU metrics (node/metrics.h) and the plugin's, one registry. */
static enum gp_err metrics_init(struct agent *a, struct gp_diag *d)
{
    enum gp_err e = gp_node_metrics_init(&a->nm, d);
    if (e != GP_OK)
        return e;
    a->have_nm = true;
    a->reg = a->nm.reg;
    struct {
        const char *name, *help;
        enum gp_metric_type type;
        struct gp_metric_series **s;
    } plain[] = {
        {"gpuplane_node_allocations_total", "Allocate calls answered", GP_METRIC_COUNTER,
         &a->m_alloc},
        {"gpuplane_node_allocate_refusals_total", "Allocate calls refused", GP_METRIC_COUNTER,
         &a->m_refused},
        {"gpuplane_node_registrations_total", "Register calls the kubelet accepted",
         GP_METRIC_COUNTER, &a->m_reg},
        {"gpuplane_node_plugin_restarts_total",
         "device plugin servers restarted for a kubelet "
         "restart",
         GP_METRIC_COUNTER, &a->m_restarts},
        {"gpuplane_node_listandwatch_streams", "ListAndWatch streams open", GP_METRIC_GAUGE,
         &a->m_streams},
        {"gpuplane_node_health_changes_total", "GPU health changes streamed", GP_METRIC_COUNTER,
         &a->m_health},
        {"gpuplane_node_cdi_writes_total", "CDI specs written", GP_METRIC_COUNTER,
         &a->m_cdi_writes},
        {"gpuplane_node_cdi_failures_total", "CDI specs that could not be built or written",
         GP_METRIC_COUNTER, &a->m_cdi_failures},
        {"gpuplane_node_nvml_up",
         "1 while NVML answers, 0 while it fails (the last inventory served)", GP_METRIC_GAUGE,
         &a->m_nvml_up},
        {"gpuplane_node_nvml_failures_total", "times NVML failed while the agent ran",
         GP_METRIC_COUNTER, &a->m_nvml_failures},
        {"gpuplane_node_nvml_retries_total", "attempts to open NVML again after it failed",
         GP_METRIC_COUNTER, &a->m_nvml_retries},
        {"gpuplane_node_discoveries_total", "NVML discoveries that succeeded", GP_METRIC_COUNTER,
         &a->m_discoveries},
        {"gpuplane_node_gpus_lost", "GPUs served that NVML reports lost or no longer lists",
         GP_METRIC_GAUGE, &a->m_nvml_lost},
    };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        struct gp_metric_def def = {
            .name = plain[i].name, .help = plain[i].help, .type = plain[i].type};
        struct gp_metric *m;
        if ((e = gp_metrics_define(a->reg, &def, &m, d)) != GP_OK)
            return e;
        *plain[i].s = gp_metrics_series(m, NULL);
    }
    struct gp_metric_def dev = {.name = "gpuplane_node_plugin_devices",
                                .help = "devices advertised, by resource",
                                .type = GP_METRIC_GAUGE,
                                .label = "resource",
                                .max_series = GP_NODE_MAX_RESOURCES};
    if ((e = gp_metrics_define(a->reg, &dev, &a->m_devices, d)) != GP_OK)
        return e;
    dev.name = "gpuplane_node_plugin_devices_healthy";
    dev.help = "devices advertised healthy, by resource";
    return gp_metrics_define(a->reg, &dev, &a->m_healthy, d);
}

/* Counters are set from the plugin's totals (inc by the difference). */
static void metrics_update(struct agent *a)
{
    if (!a->reg)
        return;
    struct gp_plugin_stats st;
    gp_plugin_get_stats(a->plugin, &st);
    struct {
        struct gp_metric_series *s;
        double v;
    } c[] = {{a->m_alloc, (double)st.allocations},        {a->m_refused, (double)st.refusals},
             {a->m_reg, (double)st.registrations},        {a->m_restarts, (double)st.restarts},
             {a->m_health, (double)a->health_changes},    {a->m_cdi_writes, (double)a->cdi_writes},
             {a->m_cdi_failures, (double)a->cdi_failures}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        double have = gp_metrics_value(c[i].s);
        if (c[i].v > have)
            gp_metrics_inc(c[i].s, c[i].v - have);
    }
    gp_metrics_set(a->m_streams, (double)st.streams);
    if (a->watch) {
        struct gp_node_nvwatch_stats ws;
        gp_node_nvwatch_stats(a->watch, &ws);
        struct {
            struct gp_metric_series *s;
            double v;
        } w[] = {{a->m_nvml_failures, (double)ws.failures},
                 {a->m_nvml_retries, (double)ws.retries},
                 {a->m_discoveries, (double)ws.discoveries}};
        for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
            double have = gp_metrics_value(w[i].s);
            if (w[i].v > have)
                gp_metrics_inc(w[i].s, w[i].v - have);
        }
        gp_metrics_set(a->m_nvml_up, ws.up ? 1 : 0);
        gp_metrics_set(a->m_nvml_lost, (double)ws.lost);
    }
    pthread_mutex_lock(&a->mu);
    unsigned pods[GP_NODE_MAX_GPUS] = {0};
    if (a->have_proto)
        gp_node_podcount_get(&a->pods, pods, GP_NODE_MAX_GPUS);
    gp_node_metrics_update(&a->nm, &a->inv, a->watch ? &a->health : NULL, pods, GP_NODE_MAX_GPUS);
    pthread_mutex_unlock(&a->mu);
    struct gp_plugin_counts counts[GP_NODE_MAX_RESOURCES];
    size_t n = gp_plugin_counts(a->plugin, counts, GP_NODE_MAX_RESOURCES);
    for (size_t i = 0; i < n; i++) {
        gp_metrics_set(gp_metrics_series(a->m_devices, counts[i].name), (double)counts[i].devices);
        gp_metrics_set(gp_metrics_series(a->m_healthy, counts[i].name), (double)counts[i].healthy);
    }
}

/* --- discovery and health ------------------------------------------------ */

static bool file_changed(struct agent *a)
{
    struct stat st;
    if (stat(a->o->inventory_file, &st) != 0)
        return false;
    bool ch = st.st_mtim.tv_sec != a->file_mtime.tv_sec ||
              st.st_mtim.tv_nsec != a->file_mtime.tv_nsec || st.st_size != a->file_size;
    a->file_mtime = st.st_mtim;
    a->file_size = st.st_size;
    return ch;
}

static void cdi_update(struct agent *a, const struct gp_node_inventory *inv);
static void labels_apply(struct agent *a);
static void devices_update(struct agent *a);

/* The file read again: the same GPUs (by UUID, in order) get their new
 * health; other GPUs or MIG devices are a new device set, updated in
 * place as NVML's are ("NVML at run time"), the CDI spec and the labels
 * following. */
static void file_reread(struct agent *a)
{
    struct gp_node_inventory inv;
    struct gp_diag d;
    if (gp_node_inventory_read_file(a->o->inventory_file, &inv, &d) != GP_OK) {
        logf_(a, "%s (keeping the last inventory)", d.msg);
        return;
    }
    pthread_mutex_lock(&a->mu);
    bool same = inv.n_gpus == a->inv.n_gpus;
    for (size_t g = 0; same && g < inv.n_gpus; g++)
        same = strcmp(inv.gpus[g].uuid, a->inv.gpus[g].uuid) == 0 &&
               inv.gpus[g].mig_enabled == a->inv.gpus[g].mig_enabled &&
               inv.gpus[g].n_migs == a->inv.gpus[g].n_migs;
    for (size_t g = 0; same && g < inv.n_gpus; g++)
        for (size_t m = 0; same && m < inv.gpus[g].n_migs; m++)
            same = strcmp(inv.gpus[g].migs[m].uuid, a->inv.gpus[g].migs[m].uuid) == 0 &&
                   strcmp(inv.gpus[g].migs[m].profile, a->inv.gpus[g].migs[m].profile) == 0;
    if (!same) {
        a->inv = inv;
        devices_update(a);
    } else {
        for (size_t g = 0; g < inv.n_gpus; g++) {
            if (inv.gpus[g].healthy != a->inv.gpus[g].healthy)
                a->health_changes++;
            a->inv.gpus[g].healthy = inv.gpus[g].healthy;
            a->inv.gpus[g].last_xid = inv.gpus[g].last_xid;
        }
        gp_plugin_update(a->plugin, &a->inv);
    }
    pthread_mutex_unlock(&a->mu);
    if (!same) {
        cdi_update(a, &inv);
        labels_apply(a);
    }
}

/* The Node's uid for the Events' regarding (as the node controllers put
 * it; docs/node.md, "Events on the Node"): read at start, and again before
 * an Event while it is unknown (the Node may be registered after us). */
static void node_uid_read(struct agent *a)
{
    if (!a->event_client || a->node_uid[0])
        return;
    struct gp_diag d;
    if (gp_node_event_uid(a->event_client, a->o->node_name, a->node_uid, sizeof a->node_uid, &d) !=
        GP_OK)
        logf_(a, "%s (Events name the Node without its uid until it is read)", d.msg);
}

/* A health change said and posted (after the plugin was told). */
static void health_changed(struct agent *a, const struct gp_node_inventory *inv,
                           const struct gp_node_health_change *ch)
{
    a->health_changes++;
    const struct gp_node_gpu *gpu = ch->gpu < inv->n_gpus ? &inv->gpus[ch->gpu] : NULL;
    char note[512];
    gp_node_health_note(ch, gpu, note, sizeof note);
    logf_(a, "%s", note);
    if (a->event_client) {
        struct gp_diag d;
        node_uid_read(a);
        if (gp_node_health_event(a->event_client, a->o->node_name, a->node_uid, a->o->node_name, ch,
                                 gpu, &d) != GP_OK)
            logf_(a, "%s", d.msg);
    }
}

/* NVML failing or answering again, said and posted on the Node. */
static void nvml_event(struct agent *a, bool up, const char *msg)
{
    logf_(a, "%s", msg);
    if (!a->event_client)
        return;
    struct gp_node_event ev = {.type = up ? "Normal" : "Warning",
                               .reason = up ? "NVMLAvailable" : "NVMLUnavailable",
                               .action = "Discover",
                               .note = msg,
                               .tag = "nvml"};
    struct gp_diag d;
    node_uid_read(a);
    if (gp_node_event_post(a->event_client, a->o->node_name, a->node_uid, a->o->node_name, &ev,
                           &d) != GP_OK)
        logf_(a, "%s", d.msg);
}

/* A new set of devices, updated in place (plugin.h, gp_plugin_set_devices:
 * the resources that remain stream their new lists without registering
 * again); a set the plugin refuses leaves the old one served, its
 * inventory with it. */
static void devices_update(struct agent *a)
{
    struct gp_diag d;
    if (gp_plugin_set_devices(a->plugin, &a->inv, &d) == GP_OK) {
        logf_(a, "devices changed: the device plugin serves %zu GPUs (updated in place)",
              a->inv.n_gpus);
        return;
    }
    logf_(a, "%s (the devices as they were are served)", d.msg);
    gp_plugin_update(a->plugin, &a->inv); /* their health, at least */
}

/* What NVML says since the last poll (node/nvwatch.h): health changes
 * and new fields to the plugin, the devices re-advertised and the CDI
 * spec rewritten when they changed, NVML failing or back as an Event. */
static void nvml_poll(struct agent *a)
{
    if (!a->watch)
        return;
    struct gp_node_nvwatch_report *rep = &a->rep;
    gp_node_nvwatch_poll(a->watch, now_s(), rep);
    if (rep->went_down)
        nvml_event(a, false, rep->msg);
    if (rep->came_back)
        nvml_event(a, true, rep->msg);
    pthread_mutex_lock(&a->mu);
    gp_node_nvwatch_health(a->watch, &a->health); /* XID counts for /metrics */
    pthread_mutex_unlock(&a->mu);
    if (rep->changed || rep->devices_changed) {
        pthread_mutex_lock(&a->mu);
        gp_node_nvwatch_inventory(a->watch, &a->inv);
        if (rep->devices_changed && a->plugin)
            devices_update(a);
        else if (a->plugin)
            gp_plugin_update(a->plugin, &a->inv);
        pthread_mutex_unlock(&a->mu);
    }
    for (size_t i = 0; i < rep->n_changes; i++)
        health_changed(a, &a->inv, &rep->changes[i]);
    if (rep->dropped)
        logf_(a, "%zu health changes not posted (too many at once)", rep->dropped);
    if (rep->discovered) {
        gp_node_nvwatch_present(a->watch, &a->scratch);
        cdi_update(a, &a->scratch);
    }
    if (rep->devices_changed)
        labels_apply(a); /* gpu.count and the MIG labels follow the devices */
}

static enum gp_err discover(struct agent *a, struct gp_diag *d)
{
    if (a->o->inventory_file) {
        file_changed(a);
        return gp_node_inventory_read_file(a->o->inventory_file, &a->inv, d);
    }
    struct gp_node_nvwatch_opts wo = {
        .nvml_path = a->o->nvml_path, .period_s = a->o->rediscover_s, .sample_s = a->o->sample_s};
    enum gp_err e = gp_node_nvwatch_start(&wo, &a->watch, d);
    if (e != GP_OK)
        return e;
    gp_node_nvwatch_inventory(a->watch, &a->inv);
    gp_node_nvwatch_health(a->watch, &a->health);
    struct gp_node_nvwatch_stats st;
    gp_node_nvwatch_stats(a->watch, &st);
    if (st.lost_at_start)
        logf_(a, "NVML: %zu GPUs lost at start are not served", st.lost_at_start);
    return GP_OK;
}

/* --- CDI ------------------------------------------------------------------ */

/* The CDI spec for the GPUs served (node/cdi.h), written into the CDI
 * directory when it differs from the one last written or the file is gone:
 * built and validated (gp_node_cdi_write checks it again), written to a
 * temporary beside it and renamed, so a runtime never reads half a spec. A
 * failure is said once and counted, and tried again at the next change or
 * rediscovery; it does not stop the plugin (NVIDIA_VISIBLE_DEVICES still
 * works). The file is left when the agent stops (docs/node.md, "CDI"). */
static void cdi_update(struct agent *a, const struct gp_node_inventory *inv)
{
    if (a->o->no_cdi)
        return;
    const char *dir = a->o->cdi_dir && *a->o->cdi_dir ? a->o->cdi_dir : GP_NODE_CDI_DIR;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, GP_NODE_CDI_FILE);
    struct gp_node_cdi_opts co = {.root = a->o->driver_root};
    char *spec = NULL;
    struct gp_diag d;
    struct stat st;
    enum gp_err e = gp_node_cdi_build(inv, &co, &spec, &d);
    if (e == GP_OK && a->cdi_spec && strcmp(spec, a->cdi_spec) == 0 && stat(path, &st) == 0) {
        free(spec); /* the same spec, still there */
        return;
    }
    if (e == GP_OK && stat(dir, &st) != 0 && mkdir(dir, 0755) != 0 && stat(dir, &st) != 0)
        e = gp_diag_set(&d, GP_EIO, "CDI: %s: cannot create the directory (--cdi-dir)", dir);
    if (e == GP_OK)
        e = gp_node_cdi_write(dir, spec, &d);
    if (e != GP_OK) {
        free(spec);
        a->cdi_failures++;
        if (!a->cdi_failed)
            logf_(a, "%s (CDI spec not written; retried at the next change)", d.msg);
        a->cdi_failed = true;
        return;
    }
    free(a->cdi_spec);
    a->cdi_spec = spec;
    a->cdi_writes++;
    a->cdi_failed = false;
    logf_(a, "CDI: wrote %s (%zu GPUs)", path, inv->n_gpus);
}

/* GFD's labels (node/labels.h) patched onto the Node; a failure is said,
 * not fatal (the plugin serves all the same). */
static void labels_apply(struct agent *a)
{
    if (!a->client)
        return;
    char machine[128] = "";
    FILE *f = fopen("/sys/class/dmi/id/product_name", "r");
    if (f) {
        if (fgets(machine, sizeof machine, f))
            machine[strcspn(machine, "\n")] = '\0';
        fclose(f);
    }
    /* with the API at hand the agent serves the per-node protocol: labelled
     * so, the scheduler keeps one pod allocating at a time here */
    struct gp_node_label_opts lo = {.machine = machine[0] ? machine : NULL,
                                    .timestamp_s = (long long)time(NULL),
                                    .agent = a->have_proto};
    struct gp_node_labels *l = malloc(sizeof *l);
    struct gp_diag d;
    size_t changes = 0;
    if (!l)
        return;
    if (gp_node_labels_build(&a->inv, &a->o->sharing, &lo, l, &d) != GP_OK ||
        gp_node_labels_apply(a->client, a->o->node_name, l, &changes, &d) != GP_OK)
        logf_(a, "labels: %s", d.msg);
    else
        logf_(a, "labels: %zu set or removed on node %s", changes, a->o->node_name);
    free(l);
}

/* --- the loop -------------------------------------------------------------- */

static enum gp_err start_api(struct agent *a, struct gp_diag *d)
{
    if (!a->o->cfg)
        return GP_OK;
    if (!a->o->node_name || !*a->o->node_name)
        return gp_diag_set(d, GP_EUSAGE, "node agent: --node NAME is needed with the API");
    struct gp_kube_client_opts co;
    gp_kube_client_opts_default(&co);
    co.request_timeout_s = 10;
    enum gp_err e = gp_kube_client_new(a->o->cfg, &co, &a->client, d);
    if (e == GP_OK)
        e = gp_kube_client_new(a->o->cfg, &co, &a->event_client, d);
    if (e != GP_OK)
        return e;
    node_uid_read(a);
    gp_node_protocol_init(&a->proto, a->client, a->o->node_name);
    if (a->o->alloc_wait_s > 0)
        a->proto.wait_s = a->o->alloc_wait_s;
    gp_node_podseq_init(&a->podseq, &a->proto);
    gp_node_podcount_init(&a->pods, a->o->node_name);
    a->have_proto = true;
    return gp_node_podcount_start(&a->pods, a->o->cfg, d);
}

static void teardown(struct agent *a)
{
    gp_node_nvwatch_stop(a->watch);
    gp_plugin_stop(a->plugin);
    if (a->httpd)
        gp_httpd_stop(a->httpd);
    if (a->have_nm)
        gp_node_metrics_free(&a->nm);
    if (a->have_proto) {
        gp_node_podcount_free(&a->pods);
        gp_node_podseq_destroy(&a->podseq);
        gp_node_protocol_destroy(&a->proto);
    }
    gp_kube_client_free(a->client);
    gp_kube_client_free(a->event_client);
    free(a->cdi_spec);
    pthread_mutex_destroy(&a->mu);
}

enum gp_err gp_node_agent_run(const struct gp_node_agent_opts *o, struct gp_node_agent_result *res,
                              struct gp_diag *diag)
{
    struct agent *a = calloc(1, sizeof *a);
    if (!a)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    memset(res, 0, sizeof *res);
    a->o = o;
    pthread_mutex_init(&a->mu, NULL);
    double poll_s = o->poll_s > 0 ? o->poll_s : 0.2;
    enum gp_err e = start_api(a, diag);
    if (e == GP_OK)
        e = discover(a, diag);
    struct gp_plugin_opts po = {.dir = o->plugin_dir, .quiet = o->quiet};
    if (e == GP_OK && a->have_proto) {
        po.choice = gp_node_podseq_choice;
        po.done = gp_node_podseq_done;
        po.ctx = &a->podseq;
    }
    a->po = po;
    /* The CDI spec and GFD's labels before the kubelet hears of a device:
     * an Allocate answered with a CDI name whose spec is not written yet
     * fails the container, and a scheduler that sees the capacity should
     * see gpu.replicas with it (docs/node.md, "Start-up order"). A
     * sharing configuration the plugin would refuse is said first, alone. */
    if (e == GP_OK) {
        struct gp_node_devset *ds = calloc(1, sizeof *ds);
        e = ds ? gp_node_devset_build(&a->inv, &o->sharing, ds, diag)
               : gp_diag_set(diag, GP_ENOMEM, "out of memory");
        if (e == GP_OK)
            gp_node_devset_free(ds);
        free(ds);
    }
    if (e == GP_OK) {
        pthread_mutex_lock(&a->mu);
        struct gp_node_inventory *inv = malloc(sizeof *inv);
        if (inv && a->watch)
            gp_node_nvwatch_present(a->watch, inv);
        else if (inv)
            *inv = a->inv;
        pthread_mutex_unlock(&a->mu);
        if (inv)
            cdi_update(a, inv);
        free(inv);
        labels_apply(a);
    }
    pthread_mutex_lock(&a->mu);
    if (e == GP_OK)
        e = gp_plugin_start(&po, &a->inv, &o->sharing, &a->plugin, diag);
    pthread_mutex_unlock(&a->mu);
    if (e == GP_OK && o->metrics_addr) {
        struct gp_httpd_opts ho = {.addr = o->metrics_addr};
        if ((e = metrics_init(a, diag)) == GP_OK) {
            ho.metrics = a->reg;
            e = gp_httpd_start(&ho, &a->httpd, diag);
        }
        if (e == GP_OK) {
            gp_httpd_set_synced(a->httpd, true);
            char port[16];
            snprintf(port, sizeof port, "%u", gp_httpd_port(a->httpd));
            if (o->metrics_port)
                atomic_store(o->metrics_port, gp_httpd_port(a->httpd));
            logf_(a, "/metrics and /healthz on port %s", port);
        }
    }
    if (e == GP_OK) {
        const char *names[GP_NODE_MAX_RESOURCES];
        size_t n = gp_plugin_resources(a->plugin, names, GP_NODE_MAX_RESOURCES);
        for (size_t i = 0; i < n; i++)
            logf_(a, "serving %s", names[i]);
    }
    double until = o->max_s > 0 ? now_s() + o->max_s : 0;
    while (e == GP_OK && !(o->stop && *o->stop) && !(until > 0 && now_s() >= until)) {
        if (o->inventory_file && file_changed(a))
            file_reread(a);
        nvml_poll(a);
        metrics_update(a);
        struct timespec ts = {(time_t)poll_s, (long)((poll_s - (double)(time_t)poll_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    if (a->plugin) {
        struct gp_plugin_stats st;
        gp_plugin_get_stats(a->plugin, &st);
        res->allocations = st.allocations;
        res->refusals = st.refusals;
        res->registrations = st.registrations;
        res->restarts = st.restarts;
    }
    res->health_changes = a->health_changes;
    teardown(a);
    free(a);
    return e;
}
