/* plugin.c - the device plugin's servers: started on their sockets,
 * registered with the kubelet (Registration.Register on kubelet.sock),
 * restarted and registered again when the kubelet restarts, fed new
 * health and new device sets (updated in place); the calls themselves
 * are plugin_rpc.c's. */
#include <sys/stat.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <grpc/byte_buffer.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "deviceplugin.pb-c.h"
#include "node/plugin_internal.h"

double gp_plugin_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void gp_plugin_log(struct gp_plugin *p, const char *fmt, ...)
{
    if (p->o.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gpuplane node agent: %s\n", line);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* --- one server -------------------------------------------------------- */

static enum gp_err srv_start(struct srv *s, struct gp_diag *diag)
{
    unlink(s->path); /* a socket left by an earlier run */
    s->server = grpc_server_create(NULL, NULL);
    s->cq = grpc_completion_queue_create_for_next(NULL);
    if (!s->server || !s->cq)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    grpc_server_register_completion_queue(s->server, s->cq, NULL);
    char addr[PATH_MAX + 8];
    snprintf(addr, sizeof addr, "unix:%s", s->path);
    grpc_server_credentials *cr = grpc_insecure_server_credentials_create();
    int bound = grpc_server_add_http2_port(s->server, addr, cr);
    grpc_server_credentials_release(cr);
    if (!bound) {
        grpc_server_destroy(s->server);
        grpc_completion_queue_shutdown(s->cq);
        grpc_completion_queue_destroy(s->cq);
        s->server = NULL;
        s->cq = NULL;
        return gp_diag_set(diag, GP_EIO, "device plugin: cannot listen on %s", s->path);
    }
    grpc_server_start(s->server);
    atomic_store(&s->stopping, false);
    if (pthread_create(&s->thread, NULL, gp_plugin_serve, s) != 0)
        return gp_diag_set(diag, GP_ENOMEM, "device plugin: no thread for %s", s->path);
    s->running = true;
    s->registered = false;
    s->next_register_s = 0;
    return GP_OK;
}

static void srv_stop(struct srv *s)
{
    if (!s->running)
        return;
    atomic_store(&s->stopping, true);
    pthread_join(s->thread, NULL);
    grpc_server_destroy(s->server);
    grpc_completion_queue_destroy(s->cq);
    s->server = NULL;
    s->cq = NULL;
    s->running = false;
    unlink(s->path);
}

/* Registration.Register for s's resource; GP_OK once the kubelet said yes. */
static enum gp_err srv_register(struct gp_plugin *p, struct srv *s, struct gp_diag *diag)
{
    const struct gp_node_resource *r = &p->set.res[s->ri];
    char target[PATH_MAX + 8];
    snprintf(target, sizeof target, "unix:%s", p->kubelet);
    grpc_channel_credentials *cr = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create(target, cr, NULL);
    grpc_channel_credentials_release(cr);
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    gpr_timespec dl =
        gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_millis(5000, GPR_TIMESPAN));
    grpc_call *call = grpc_channel_create_call(
        ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
        grpc_slice_from_static_string("/v1beta1.Registration/Register"), NULL, dl, NULL);
    /* the endpoint is the socket's name in the directory (the API:
     * "PATH = path.Join(DevicePluginPath, endpoint)") */
    char version[] = "v1beta1", endpoint[96], resource[64];
    snprintf(endpoint, sizeof endpoint, "%s", r->socket);
    snprintf(resource, sizeof resource, "%s", r->name);
    V1beta1__DevicePluginOptions opts;
    v1beta1__device_plugin_options__init(&opts);
    opts.get_preferred_allocation_available = 1;
    V1beta1__RegisterRequest req;
    v1beta1__register_request__init(&req);
    req.version = version;
    req.endpoint = endpoint;
    req.resource_name = resource;
    req.options = &opts;
    size_t len = v1beta1__register_request__get_packed_size(&req);
    uint8_t buf[512];
    enum gp_err e = GP_OK;
    if (len > sizeof buf) {
        e = gp_diag_set(diag, GP_ELIMIT, "RegisterRequest too large");
        goto out;
    }
    v1beta1__register_request__pack(&req, buf);
    grpc_slice sl = grpc_slice_from_copied_buffer((const char *)buf, len);
    grpc_byte_buffer *send = grpc_raw_byte_buffer_create(&sl, 1);
    grpc_slice_unref(sl);
    grpc_byte_buffer *recv = NULL;
    grpc_metadata_array im, tm;
    grpc_metadata_array_init(&im);
    grpc_metadata_array_init(&tm);
    grpc_status_code status = GRPC_STATUS_UNKNOWN;
    grpc_slice details = grpc_empty_slice();
    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &im;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &tm;
    ops[5].data.recv_status_on_client.status = &status;
    ops[5].data.recv_status_on_client.status_details = &details;
    int tag = 0;
    if (grpc_call_start_batch(call, ops, 6, &tag, NULL) == GRPC_CALL_OK) {
        gpr_timespec wait =
            gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_millis(6000, GPR_TIMESPAN));
        grpc_event ev = grpc_completion_queue_next(cq, wait, NULL);
        if (ev.type != GRPC_OP_COMPLETE) {
            grpc_call_cancel(call, NULL);
            grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        }
    }
    if (status != GRPC_STATUS_OK) {
        char *msg = grpc_slice_to_c_string(details);
        e = gp_diag_set(diag, GP_EIO, "Register %s on %s: status %d%s%s", r->name, p->kubelet,
                        (int)status, msg && *msg ? ": " : "", msg ? msg : "");
        gpr_free(msg);
    }
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&im);
    grpc_metadata_array_destroy(&tm);
    grpc_byte_buffer_destroy(send);
    if (recv)
        grpc_byte_buffer_destroy(recv);
out:
    grpc_call_unref(call);
    grpc_channel_destroy(ch);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
    return e;
}

/* --- watching the directory --------------------------------------------------- */

static void restart_all(struct gp_plugin *p)
{
    for (size_t i = 0; i < p->set.n_resources; i++) {
        struct srv *s = &p->srv[i];
        struct gp_diag d;
        pthread_mutex_lock(&p->mu);
        bool skip = !s->running || s->retiring; /* a free slot, or one going */
        pthread_mutex_unlock(&p->mu);
        if (skip)
            continue;
        srv_stop(s);
        if (srv_start(s, &d) != GP_OK)
            gp_plugin_log(p, "%s", d.msg);
        pthread_mutex_lock(&p->mu);
        p->st.restarts++;
        pthread_mutex_unlock(&p->mu);
    }
}

/* The socket path of slot i; false when too long for sun_path. */
static bool srv_path(struct gp_plugin *p, size_t i, struct gp_diag *diag)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", p->dir, p->set.res[i].socket);
    if (n < 0 || (size_t)n >= sizeof path || (size_t)n >= 108) { /* sun_path */
        gp_diag_set(diag, GP_EINVALID, "device plugin socket path too long: %s/%s", p->dir,
                    p->set.res[i].socket);
        return false;
    }
    memcpy(p->srv[i].path, path, (size_t)n + 1);
    return true;
}

/* A device-set change's server work (gp_plugin_set_devices), in the
 * monitor thread: the servers of resources left with no devices stopped
 * once their empty list had time to go out, then the new resources given
 * a free slot and a server (registered by the loop below). */
static void apply_changes(struct gp_plugin *p)
{
    double now = gp_plugin_now_s();
    for (size_t i = 0; i < p->set.n_resources; i++) {
        struct srv *s = &p->srv[i];
        pthread_mutex_lock(&p->mu);
        bool due = s->retiring && !s->closing && now >= s->retire_at_s;
        s->closing |= due; /* a change from now on makes it a new resource */
        pthread_mutex_unlock(&p->mu);
        if (!due)
            continue;
        gp_plugin_log(p, "%s: no devices left, its server stopped (%s)", p->set.res[i].name,
                      s->path);
        srv_stop(s);
        pthread_mutex_lock(&p->mu);
        free(p->set.res[i].devs);
        memset(&p->set.res[i], 0, sizeof p->set.res[i]);
        s->retiring = s->closing = false;
        pthread_mutex_unlock(&p->mu);
    }
    pthread_mutex_lock(&p->mu);
    while (p->n_adds > 0) {
        size_t i = 0;
        while (i < p->set.n_resources && (p->set.res[i].name[0] || p->srv[i].running))
            i++;
        if (i == GP_NODE_MAX_RESOURCES)
            break; /* every slot taken: again once one is free */
        if (i == p->set.n_resources)
            p->set.n_resources++;
        p->set.res[i] = p->adds[0];
        gp_node_devset_health(&p->set.res[i], &p->inv);
        p->n_adds--;
        memmove(&p->adds[0], &p->adds[1], p->n_adds * sizeof p->adds[0]);
        struct srv *s = &p->srv[i];
        s->p = p;
        s->ri = i;
        s->retiring = s->closing = false;
        pthread_mutex_unlock(&p->mu);
        struct gp_diag d;
        if (!srv_path(p, i, &d) || srv_start(s, &d) != GP_OK)
            gp_plugin_log(p, "%s", d.msg);
        else
            gp_plugin_log(p, "%s: a new resource (%zu devices), serving it on %s",
                          p->set.res[i].name, p->set.res[i].n, s->path);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
}

static void *monitor(void *arg)
{
    struct gp_plugin *p = arg;
    while (!atomic_load(&p->quit)) {
        apply_changes(p);
        struct stat st;
        bool there = stat(p->kubelet, &st) == 0;
        if (there && p->kubelet_seen &&
            ((unsigned long)st.st_ino != p->kubelet_ino ||
             (unsigned long)st.st_dev != p->kubelet_dev)) {
            /* a new kubelet: it forgot every plugin (and removed our sockets) */
            gp_plugin_log(p, "kubelet restarted (%s created again): restarting the plugin",
                          p->kubelet);
            restart_all(p);
        }
        if (there) {
            p->kubelet_seen = true;
            p->kubelet_ino = (unsigned long)st.st_ino;
            p->kubelet_dev = (unsigned long)st.st_dev;
        }
        for (size_t i = 0; i < p->set.n_resources; i++) {
            struct srv *s = &p->srv[i];
            struct stat ss;
            if (s->running && stat(s->path, &ss) != 0) {
                gp_plugin_log(p, "%s removed: restarting its server", s->path);
                struct gp_diag d;
                srv_stop(s);
                if (srv_start(s, &d) != GP_OK)
                    gp_plugin_log(p, "%s", d.msg);
                pthread_mutex_lock(&p->mu);
                p->st.restarts++;
                pthread_mutex_unlock(&p->mu);
            }
            double now = gp_plugin_now_s();
            if (there && s->running && !s->registered && now >= s->next_register_s) {
                struct gp_diag d;
                if (srv_register(p, s, &d) == GP_OK) {
                    s->registered = true;
                    pthread_mutex_lock(&p->mu);
                    p->st.registrations++;
                    size_t n = p->set.res[i].n;
                    pthread_mutex_unlock(&p->mu);
                    gp_plugin_log(p, "registered %s (%zu devices) on %s", p->set.res[i].name, n,
                                  s->path);
                } else {
                    gp_plugin_log(p, "%s", d.msg);
                    s->next_register_s = now + 1.0;
                }
            }
        }
        sleep_s(p->o.poll_s);
    }
    return NULL;
}

/* --- the plugin ----------------------------------------------------------------- */

enum gp_err gp_plugin_start(const struct gp_plugin_opts *o, const struct gp_node_inventory *inv,
                            const struct gp_node_sharing *sh, struct gp_plugin **out,
                            struct gp_diag *diag)
{
    *out = NULL;
    struct gp_plugin *p = calloc(1, sizeof *p);
    if (!p)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    p->o = *o;
    if (p->o.poll_s <= 0)
        p->o.poll_s = 0.2;
    const char *dir = o->dir ? o->dir : GP_PLUGIN_DIR;
    const char *ks = o->kubelet_socket ? o->kubelet_socket : "kubelet.sock";
    if (strlen(dir) + strlen(ks) + 2 > 108) { /* sun_path */
        free(p);
        return gp_diag_set(diag, GP_EINVALID, "device plugin directory too long: %s", dir);
    }
    memcpy(p->dir, dir, strlen(dir) + 1);
    size_t dl = strlen(dir);
    memcpy(p->kubelet, dir, dl);
    p->kubelet[dl] = '/';
    memcpy(p->kubelet + dl + 1, ks, strlen(ks) + 1);
    p->inv = *inv;
    enum gp_err e = gp_node_devset_build(inv, sh, &p->set, diag);
    if (e != GP_OK) {
        free(p);
        return e;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    pthread_mutex_init(&p->alloc_mu, NULL);
    struct stat st;
    if (stat(p->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        e = gp_diag_set(diag, GP_EIO, "device plugin directory %s: %s", p->dir,
                        errno ? strerror(errno) : "not a directory");
        goto fail;
    }
    grpc_init();
    for (size_t i = 0; i < p->set.n_resources; i++) {
        struct srv *s = &p->srv[i];
        s->p = p;
        s->ri = i;
        if (!srv_path(p, i, diag)) {
            e = GP_EINVALID;
            goto fail_servers;
        }
        if ((e = srv_start(s, diag)) != GP_OK)
            goto fail_servers;
    }
    if (pthread_create(&p->monitor, NULL, monitor, p) != 0) {
        e = gp_diag_set(diag, GP_ENOMEM, "device plugin: no thread");
        goto fail_servers;
    }
    *out = p;
    return GP_OK;
fail_servers:
    for (size_t i = 0; i < p->set.n_resources; i++)
        srv_stop(&p->srv[i]);
    grpc_shutdown();
fail:
    gp_node_devset_free(&p->set);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->alloc_mu);
    free(p);
    return e;
}

void gp_plugin_stop(struct gp_plugin *p)
{
    if (!p)
        return;
    atomic_store(&p->quit, true);
    pthread_join(p->monitor, NULL);
    for (size_t i = 0; i < p->set.n_resources; i++)
        srv_stop(&p->srv[i]);
    grpc_shutdown();
    gp_node_devset_free(&p->set);
    for (size_t i = 0; i < p->n_adds; i++)
        free(p->adds[i].devs);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->alloc_mu);
    free(p);
}

/* Whether two device lists say the same to the kubelet (IDs, health). */
static bool same_list(const struct gp_node_resource *a, const struct gp_node_resource *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->devs[i].id, b->devs[i].id) != 0 || a->devs[i].healthy != b->devs[i].healthy)
            return false;
    return true;
}

enum gp_err gp_plugin_set_devices(struct gp_plugin *p, const struct gp_node_inventory *inv,
                                  struct gp_diag *diag)
{
    struct gp_node_devset *next = malloc(sizeof *next);
    if (!next)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    pthread_mutex_lock(&p->mu);
    struct gp_node_sharing sh = p->set.sharing;
    pthread_mutex_unlock(&p->mu);
    enum gp_err e = gp_node_devset_build(inv, &sh, next, diag);
    if (e != GP_OK) {
        free(next);
        return e;
    }
    double now = gp_plugin_now_s();
    pthread_mutex_lock(&p->mu);
    p->inv = *inv;
    for (size_t i = 0; i < p->n_adds; i++) /* an earlier change not served yet: this one wins */
        free(p->adds[i].devs);
    p->n_adds = 0;
    bool kept[GP_NODE_MAX_RESOURCES] = {false};
    for (size_t k = 0; k < next->n_resources; k++) {
        struct gp_node_resource *nr = &next->res[k];
        gp_node_devset_health(nr, inv);
        long slot = -1;
        for (size_t i = 0; i < p->set.n_resources && slot < 0; i++)
            if (p->set.res[i].name[0] && !p->srv[i].closing &&
                strcmp(p->set.res[i].name, nr->name) == 0)
                slot = (long)i;
        if (slot < 0) { /* a new resource: a server of its own (apply_changes) */
            p->adds[p->n_adds++] = *nr;
            nr->devs = NULL;
            continue;
        }
        /* the same resource: its new list on the streams open, in place */
        struct gp_node_resource *r = &p->set.res[slot];
        kept[slot] = true;
        p->srv[slot].retiring = false;
        if (!same_list(r, nr))
            p->srv[slot].gen++;
        free(r->devs);
        r->devs = nr->devs;
        r->n = nr->n;
        nr->devs = NULL;
    }
    for (size_t i = 0; i < p->set.n_resources; i++) {
        struct srv *s = &p->srv[i];
        if (kept[i] || !p->set.res[i].name[0] || s->retiring)
            continue;
        /* gone: an empty list (the kubelet sets its capacity to 0), then
         * its server stops (the kubelet drops a stopped resource after
         * its endpointStopGracePeriod) */
        free(p->set.res[i].devs);
        p->set.res[i].devs = NULL;
        p->set.res[i].n = 0;
        s->gen++;
        s->retiring = true;
        s->retire_at_s = now + 1.0;
    }
    pthread_mutex_unlock(&p->mu);
    gp_node_devset_free(next);
    free(next);
    return GP_OK;
}

void gp_plugin_update(struct gp_plugin *p, const struct gp_node_inventory *inv)
{
    pthread_mutex_lock(&p->mu);
    for (size_t g = 0; g < p->inv.n_gpus && g < inv->n_gpus; g++) {
        p->inv.gpus[g].healthy = inv->gpus[g].healthy;
        p->inv.gpus[g].last_xid = inv->gpus[g].last_xid;
    }
    for (size_t i = 0; i < p->set.n_resources; i++)
        if (gp_node_devset_health(&p->set.res[i], &p->inv))
            p->srv[i].gen++;
    pthread_mutex_unlock(&p->mu);
}

void gp_plugin_get_stats(struct gp_plugin *p, struct gp_plugin_stats *st)
{
    pthread_mutex_lock(&p->mu);
    *st = p->st;
    pthread_mutex_unlock(&p->mu);
}

size_t gp_plugin_resources(struct gp_plugin *p, const char **names, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->set.n_resources && n < max; i++)
        if (p->set.res[i].name[0] && !p->srv[i].retiring)
            names[n++] = p->set.res[i].name;
    pthread_mutex_unlock(&p->mu);
    return n;
}

size_t gp_plugin_counts(struct gp_plugin *p, struct gp_plugin_counts *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->set.n_resources && n < max; i++) {
        if (!p->set.res[i].name[0])
            continue;
        out[n].name = p->set.res[i].name;
        out[n].devices = p->set.res[i].n;
        out[n].healthy = 0;
        for (size_t k = 0; k < p->set.res[i].n; k++)
            out[n].healthy += p->set.res[i].devs[k].healthy;
        n++;
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}
