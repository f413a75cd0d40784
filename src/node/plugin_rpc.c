/* plugin_rpc.c - the DevicePlugin service of one resource over gRPC C
 * core: a completion-queue loop per server, each call a small state
 * machine (request, receive, answer; ListAndWatch keeps sending while the
 * device list changes), Allocate answered on a thread of its own so that
 * a pod lookup never holds up the streams. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "deviceplugin.pb-c.h"
#include "node/plugin_internal.h"

enum method { M_UNKNOWN, M_OPTIONS, M_WATCH, M_PREFER, M_ALLOC, M_PRESTART };
enum step { T_NEW, T_RECV, T_SEND, T_CLOSE, T_FINISH };

struct tag {
    struct call *c;
    enum step step;
};

struct call {
    struct srv *s;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    grpc_byte_buffer *recv, *send;
    enum method m;
    int cancelled;
    int pending;   /* batches in flight */
    bool finished; /* its status is sent, or it is over */
    bool start_failed;
    grpc_slice status_details;
    bool has_details;
    /* ListAndWatch */
    bool in_list, closed, send_busy;
    unsigned long sent_gen;
    struct call *next;
    struct tag t_new, t_recv, t_send, t_close, t_finish;
};

static const struct {
    const char *path;
    enum method m;
} methods[] = {
    {"/v1beta1.DevicePlugin/GetDevicePluginOptions", M_OPTIONS},
    {"/v1beta1.DevicePlugin/ListAndWatch", M_WATCH},
    {"/v1beta1.DevicePlugin/GetPreferredAllocation", M_PREFER},
    {"/v1beta1.DevicePlugin/Allocate", M_ALLOC},
    {"/v1beta1.DevicePlugin/PreStartContainer", M_PRESTART},
};

static struct call *call_new(struct srv *s)
{
    struct call *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->s = s;
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    struct tag *tags[] = {&c->t_new, &c->t_recv, &c->t_send, &c->t_close, &c->t_finish};
    for (int i = 0; i < 5; i++) {
        tags[i]->c = c;
        tags[i]->step = (enum step)i;
    }
    return c;
}

static void call_free(struct call *c)
{
    if (c->call)
        grpc_call_unref(c->call);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    if (c->recv)
        grpc_byte_buffer_destroy(c->recv);
    if (c->send)
        grpc_byte_buffer_destroy(c->send);
    if (c->has_details)
        grpc_slice_unref(c->status_details);
    free(c);
}

/* Asks for the next call on s; false once the server is going. */
static bool request_next(struct srv *s)
{
    if (atomic_load(&s->stopping))
        return false;
    struct call *c = call_new(s);
    if (!c)
        return false;
    if (grpc_server_request_call(s->server, &c->call, &c->details, &c->md, s->cq, s->cq,
                                 &c->t_new) != GRPC_CALL_OK) {
        call_free(c);
        return false;
    }
    return true;
}

/* pending is counted before the batch starts: its completion may be taken
 * on the queue's thread before start_batch returns to an Allocate thread */
static bool start(struct call *c, const grpc_op *ops, size_t n, struct tag *t)
{
    c->pending++;
    if (grpc_call_start_batch(c->call, ops, n, t, NULL) != GRPC_CALL_OK) {
        c->pending--;
        c->start_failed = true;
        return false;
    }
    return true;
}

static grpc_byte_buffer *pack(const ProtobufCMessage *msg)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return NULL;
    protobuf_c_message_pack(msg, buf);
    grpc_slice sl = grpc_slice_from_copied_buffer((const char *)buf, n);
    free(buf);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&sl, 1);
    grpc_slice_unref(sl);
    return bb;
}

/* The received message, unpacked; NULL when it does not parse. */
static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *d, grpc_byte_buffer *bb)
{
    grpc_byte_buffer_reader r;
    if (!bb || !grpc_byte_buffer_reader_init(&r, bb))
        return NULL;
    grpc_slice sl = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    ProtobufCMessage *m =
        protobuf_c_message_unpack(d, NULL, GRPC_SLICE_LENGTH(sl), GRPC_SLICE_START_PTR(sl));
    grpc_slice_unref(sl);
    return m;
}

/* The answer of a unary call: its message (NULL for an error) and status.
 * false when the batch could not start (no completion will come). Once it
 * has started, the call may be freed by the queue's thread at any time. */
static bool finish(struct call *c, grpc_byte_buffer *msg, grpc_status_code code, const char *why)
{
    grpc_op ops[4];
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    if (msg) {
        c->send = msg;
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = msg;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = code;
    if (why) {
        c->status_details = grpc_slice_from_copied_string(why);
        c->has_details = true;
        ops[n].data.send_status_from_server.status_details = &c->status_details;
    }
    n++;
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
    if (!start(c, ops, n, &c->t_finish)) {
        c->finished = true;
        return false;
    }
    return true;
}

/* --- ListAndWatch --------------------------------------------------- */

static grpc_byte_buffer *device_list(struct srv *s, unsigned long *gen)
{
    struct gp_plugin *p = s->p;
    pthread_mutex_lock(&p->mu);
    const struct gp_node_resource *r = &p->set.res[s->ri];
    V1beta1__Device *devs = calloc(r->n ? r->n : 1, sizeof *devs);
    V1beta1__Device **ptrs = calloc(r->n ? r->n : 1, sizeof *ptrs);
    char(*ids)[GP_NODE_DEV_ID_LEN] = calloc(r->n ? r->n : 1, sizeof *ids);
    grpc_byte_buffer *bb = NULL;
    static char healthy[] = "Healthy", unhealthy[] = "Unhealthy"; /* kubelet constants.go */
    if (devs && ptrs && ids) {
        for (size_t i = 0; i < r->n; i++) {
            V1beta1__Device d;
            v1beta1__device__init(&d);
            memcpy(ids[i], r->devs[i].id, sizeof ids[i]);
            d.id = ids[i];
            d.health = r->devs[i].healthy ? healthy : unhealthy;
            devs[i] = d;
            ptrs[i] = &devs[i];
        }
        V1beta1__ListAndWatchResponse resp;
        v1beta1__list_and_watch_response__init(&resp);
        resp.n_devices = r->n;
        resp.devices = ptrs;
        bb = pack(&resp.base);
    }
    *gen = s->gen;
    pthread_mutex_unlock(&p->mu);
    free(devs);
    free(ptrs);
    free(ids);
    return bb;
}

static void watch_send(struct call *c, bool first)
{
    if (c->send)
        grpc_byte_buffer_destroy(c->send);
    c->send = device_list(c->s, &c->sent_gen);
    if (!c->send)
        return;
    grpc_op ops[2];
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    if (first)
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = c->send;
    c->send_busy = start(c, ops, n, &c->t_send);
}

static void watch_open(struct call *c)
{
    struct srv *s = c->s;
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &c->cancelled;
    if (!start(c, &op, 1, &c->t_close)) {
        c->finished = true;
        return;
    }
    pthread_mutex_lock(&s->p->mu);
    c->next = s->streams;
    s->streams = c;
    c->in_list = true;
    s->p->st.streams++;
    pthread_mutex_unlock(&s->p->mu);
    watch_send(c, true);
}

static void watch_unlist(struct call *c)
{
    struct srv *s = c->s;
    pthread_mutex_lock(&s->p->mu);
    for (struct call **pp = &s->streams; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    c->in_list = false;
    s->p->st.streams--;
    pthread_mutex_unlock(&s->p->mu);
}

/* Every open stream whose last list is older than the devices. */
static void watch_push(struct srv *s)
{
    pthread_mutex_lock(&s->p->mu);
    unsigned long gen = s->gen;
    struct call *todo[64];
    size_t n = 0;
    for (struct call *c = s->streams; c && n < 64; c = c->next)
        if (!c->closed && !c->send_busy && c->sent_gen != gen)
            todo[n++] = c;
    pthread_mutex_unlock(&s->p->mu);
    for (size_t i = 0; i < n; i++)
        watch_send(todo[i], false);
}

/* --- the unary calls ----------------------------------------------------- */

static void answer_options(struct call *c)
{
    V1beta1__DevicePluginOptions o;
    v1beta1__device_plugin_options__init(&o);
    o.get_preferred_allocation_available = 1;
    o.pre_start_required = 0;
    finish(c, pack(&o.base), GRPC_STATUS_OK, NULL);
}

static void answer_prestart(struct call *c)
{
    ProtobufCMessage *req = unpack(&v1beta1__pre_start_container_request__descriptor, c->recv);
    if (!req) {
        finish(c, NULL, GRPC_STATUS_INVALID_ARGUMENT, "PreStartContainerRequest does not parse");
        return;
    }
    protobuf_c_message_free_unpacked(req, NULL);
    V1beta1__PreStartContainerResponse r;
    v1beta1__pre_start_container_response__init(&r);
    finish(c, pack(&r.base), GRPC_STATUS_OK, NULL);
}

static void answer_prefer(struct call *c)
{
    struct gp_plugin *p = c->s->p;
    V1beta1__PreferredAllocationRequest *req = (V1beta1__PreferredAllocationRequest *)unpack(
        &v1beta1__preferred_allocation_request__descriptor, c->recv);
    if (!req) {
        finish(c, NULL, GRPC_STATUS_INVALID_ARGUMENT, "PreferredAllocationRequest does not parse");
        return;
    }
    size_t nc = req->n_container_requests;
    V1beta1__ContainerPreferredAllocationResponse *cr = calloc(nc ? nc : 1, sizeof *cr);
    V1beta1__ContainerPreferredAllocationResponse **crp = calloc(nc ? nc : 1, sizeof *crp);
    char(*ids)[GP_NODE_DEV_ID_LEN] = calloc(GP_NODE_ALLOC_MAX * (nc ? nc : 1), sizeof *ids);
    char **idp = calloc(GP_NODE_ALLOC_MAX * (nc ? nc : 1), sizeof *idp);
    const char *resname = p->set.res[c->s->ri].name;
    if (!cr || !crp || !ids || !idp)
        goto oom;
    for (size_t i = 0; i < nc; i++) {
        const V1beta1__ContainerPreferredAllocationRequest *q = req->container_requests[i];
        size_t size = q->allocation_size > 0 ? (size_t)q->allocation_size : 0;
        if (size > GP_NODE_ALLOC_MAX)
            size = GP_NODE_ALLOC_MAX;
        struct gp_node_choice ch = {.set = false};
        struct gp_diag d;
        if (p->o.choice && p->o.choice(p->o.ctx, resname, size, false, &ch, &d) != GP_OK)
            ch.set = false;
        size_t out[GP_NODE_ALLOC_MAX];
        pthread_mutex_lock(&p->mu);
        const struct gp_node_resource *r = &p->set.res[c->s->ri];
        size_t k = gp_node_dev_prefer(r, &p->inv, (const char *const *)q->available_deviceids,
                                      q->n_available_deviceids,
                                      (const char *const *)q->must_include_deviceids,
                                      q->n_must_include_deviceids, size, &ch, out);
        V1beta1__ContainerPreferredAllocationResponse one;
        v1beta1__container_preferred_allocation_response__init(&one);
        one.deviceids = &idp[i * GP_NODE_ALLOC_MAX];
        for (size_t j = 0; j < k; j++) {
            char *dst = ids[i * GP_NODE_ALLOC_MAX + j];
            memcpy(dst, r->devs[out[j]].id, GP_NODE_DEV_ID_LEN);
            one.deviceids[j] = dst;
        }
        pthread_mutex_unlock(&p->mu);
        one.n_deviceids = k;
        cr[i] = one;
        crp[i] = &cr[i];
    }
    V1beta1__PreferredAllocationResponse resp;
    v1beta1__preferred_allocation_response__init(&resp);
    resp.n_container_responses = nc;
    resp.container_responses = crp;
    finish(c, pack(&resp.base), GRPC_STATUS_OK, NULL);
    goto done;
oom:
    finish(c, NULL, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
done:
    free(cr);
    free(crp);
    free(ids);
    free(idp);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* One container's answer as protobuf: envs, mounts (MPS), CDI devices. */
struct c_answer {
    V1beta1__ContainerAllocateResponse r;
    V1beta1__ContainerAllocateResponse__EnvsEntry env[4];
    V1beta1__ContainerAllocateResponse__EnvsEntry *envp[4];
    V1beta1__Mount mount[2];
    V1beta1__Mount *mountp[2];
    V1beta1__CDIDevice cdi[GP_NODE_ALLOC_MAX];
    V1beta1__CDIDevice *cdip[GP_NODE_ALLOC_MAX];
    char cdi_name[GP_NODE_ALLOC_MAX][GP_NODE_UUID_LEN + 16];
    char pct[16];
    struct gp_node_alloc a;
};

static void answer_fill(struct c_answer *x, const struct gp_node_resource *r)
{
    static char k_visible[] = "NVIDIA_VISIBLE_DEVICES",
                k_pct[] = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                k_mem[] = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", k_pipe[] = "CUDA_MPS_PIPE_DIRECTORY",
                shm[] = "/dev/shm";
    V1beta1__ContainerAllocateResponse r0;
    v1beta1__container_allocate_response__init(&r0);
    x->r = r0;
    size_t ne = 0;
    V1beta1__ContainerAllocateResponse__EnvsEntry e0;
    v1beta1__container_allocate_response__envs_entry__init(&e0);
    x->env[ne] = e0;
    x->env[ne].key = k_visible;
    x->env[ne++].value = x->a.visible;
    if (x->a.mps) {
        snprintf(x->pct, sizeof x->pct, "%u", x->a.mps_thread_percent);
        x->env[ne] = e0;
        x->env[ne].key = k_pct;
        x->env[ne++].value = x->pct;
        x->env[ne] = e0;
        x->env[ne].key = k_mem;
        x->env[ne++].value = x->a.mps_mem_limit;
        /* the control daemon of the resource, through its pipe directory
         * and its shm (NVIDIA's plugin, internal/plugin/mps.go updateReponse;
         * the daemon itself is NVIDIA's mps-control-daemon, docs/node.md) */
        x->env[ne] = e0;
        x->env[ne].key = k_pipe;
        x->env[ne++].value = x->a.mps_pipe_dir;
        V1beta1__Mount m0;
        v1beta1__mount__init(&m0);
        x->mount[0] = m0;
        x->mount[0].container_path = x->a.mps_pipe_dir;
        x->mount[0].host_path = x->a.mps_pipe_host;
        x->mount[1] = m0;
        x->mount[1].container_path = shm;
        x->mount[1].host_path = x->a.mps_shm_host;
        x->mountp[0] = &x->mount[0];
        x->mountp[1] = &x->mount[1];
        x->r.n_mounts = 2;
        x->r.mounts = x->mountp;
    }
    for (size_t i = 0; i < ne; i++)
        x->envp[i] = &x->env[i];
    x->r.n_envs = ne;
    x->r.envs = x->envp;
    for (size_t i = 0; i < x->a.n; i++) {
        V1beta1__CDIDevice d;
        v1beta1__cdidevice__init(&d);
        /* the CDI device nvidia-ctk's spec names by UUID */
        snprintf(x->cdi_name[i], sizeof x->cdi_name[i], "nvidia.com/gpu=%s",
                 r->devs[x->a.dev[i]].uuid);
        d.name = x->cdi_name[i];
        x->cdi[i] = d;
        x->cdip[i] = &x->cdi[i];
    }
    x->r.n_cdi_devices = x->a.n;
    x->r.cdi_devices = x->cdip;
}

/* A device ID of container request i that an earlier one of the same
 * AllocateRequest asked too; NULL when none. */
static const char *dup_across(const V1beta1__AllocateRequest *req, size_t i)
{
    const V1beta1__ContainerAllocateRequest *q = req->container_requests[i];
    for (size_t j = 0; j < i; j++) {
        const V1beta1__ContainerAllocateRequest *o = req->container_requests[j];
        for (size_t a = 0; a < q->n_devices_ids; a++)
            for (size_t b = 0; b < o->n_devices_ids; b++)
                if (strcmp(q->devices_ids[a], o->devices_ids[b]) == 0)
                    return q->devices_ids[a];
    }
    return NULL;
}

/* One container request: the scheduler's choice for it (asked while a
 * pod is found: *asking false once none was), its answer, the done
 * callback. */
static enum gp_err alloc_one(struct gp_plugin *p, size_t ri, const V1beta1__AllocateRequest *req,
                             size_t i, bool *asking, struct c_answer *x, char *who, size_t who_n,
                             struct gp_diag *d)
{
    const char *resname = p->set.res[ri].name;
    const V1beta1__ContainerAllocateRequest *q = req->container_requests[i];
    struct gp_node_choice ch = {.set = false};
    enum gp_err e = GP_OK;
    if (*asking && p->o.choice) {
        e = p->o.choice(p->o.ctx, resname, q->n_devices_ids, true, &ch, d);
        *asking = ch.set;
    }
    if (e == GP_OK) {
        pthread_mutex_lock(&p->mu);
        const struct gp_node_resource *r = &p->set.res[ri];
        e = gp_node_dev_allocate(r, &p->inv, (const char *const *)q->devices_ids, q->n_devices_ids,
                                 &ch, &p->set.sharing, &x->a, d);
        if (e == GP_OK)
            answer_fill(x, r);
        pthread_mutex_unlock(&p->mu);
    }
    if (p->o.done && ch.set) {
        struct gp_diag dd;
        enum gp_err de =
            p->o.done(p->o.ctx, resname, &ch, e == GP_OK ? &x->a : NULL, e == GP_OK, &dd);
        if (e == GP_OK && de != GP_OK) {
            e = de;
            *d = dd;
        }
    }
    if (ch.set && i == 0)
        snprintf(who, who_n, "%s%s%s", ch.pod, ch.container[0] ? " container " : "", ch.container);
    return e;
}

/* Returns finish's answer: false when no completion will come. */
static bool answer_alloc(struct call *c)
{
    struct gp_plugin *p = c->s->p;
    const char *resname = p->set.res[c->s->ri].name;
    V1beta1__AllocateRequest *req =
        (V1beta1__AllocateRequest *)unpack(&v1beta1__allocate_request__descriptor, c->recv);
    if (!req)
        return finish(c, NULL, GRPC_STATUS_INVALID_ARGUMENT, "AllocateRequest does not parse");
    size_t nc = req->n_container_requests;
    struct c_answer *xs = calloc(nc ? nc : 1, sizeof *xs);
    V1beta1__ContainerAllocateResponse **rp = calloc(nc ? nc : 1, sizeof *rp);
    struct gp_diag d = {{0}};
    enum gp_err e = xs && rp ? GP_OK : gp_diag_set(&d, GP_ENOMEM, "out of memory");
    char who[400] = "(no pod asked)";
    bool asking = true;
    /* one Allocate at a time on the node: the kubelet sends one per
     * container (devicemanager allocateContainerResources), each served
     * with that container's part of the pod's GPUs (node/podseq.h) */
    /* a device ID named for two containers (HAMi #1741) is refused
     * before any pod is looked for */
    for (size_t i = 0; i < nc && e == GP_OK; i++) {
        const char *dup = dup_across(req, i);
        if (dup)
            e = gp_diag_set(&d, GP_EINVALID, "%s: device ID \"%s\" asked for two containers",
                            resname, dup);
    }
    pthread_mutex_lock(&p->alloc_mu);
    for (size_t i = 0; i < nc && e == GP_OK; i++) {
        e = alloc_one(p, c->s->ri, req, i, &asking, &xs[i], who, sizeof who, &d);
        if (e == GP_OK)
            rp[i] = &xs[i].r;
    }
    pthread_mutex_unlock(&p->alloc_mu);
    pthread_mutex_lock(&p->mu);
    if (e == GP_OK)
        p->st.allocations++;
    else
        p->st.refusals++;
    pthread_mutex_unlock(&p->mu);
    if (e == GP_OK)
        gp_plugin_log(p, "%s: Allocate %s: %s", resname, who, nc ? xs[0].a.visible : "");
    else
        gp_plugin_log(p, "%s: Allocate refused: %s", resname, d.msg);
    grpc_byte_buffer *msg = NULL;
    if (e == GP_OK) {
        V1beta1__AllocateResponse resp;
        v1beta1__allocate_response__init(&resp);
        resp.n_container_responses = nc;
        resp.container_responses = rp;
        msg = pack(&resp.base);
    }
    free(xs);
    free(rp);
    protobuf_c_message_free_unpacked(&req->base, NULL);
    grpc_status_code code = e == GP_OK       ? GRPC_STATUS_OK
                            : e == GP_ENOMEM ? GRPC_STATUS_RESOURCE_EXHAUSTED
                                             : GRPC_STATUS_INVALID_ARGUMENT;
    return finish(c, msg, code, e == GP_OK ? NULL : d.msg);
}

static void *alloc_thread(void *arg)
{
    struct call *c = arg;
    struct srv *s = c->s;
    if (!answer_alloc(c)) /* no completion will come for it */
        call_free(c);
    pthread_mutex_lock(&s->p->mu);
    s->workers--;
    pthread_cond_broadcast(&s->p->cv);
    pthread_mutex_unlock(&s->p->mu);
    return NULL;
}

/* --- the loop ---------------------------------------------------------------- */

static void on_arrival(struct call *c)
{
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (grpc_slice_str_cmp(c->details.method, methods[i].path) == 0)
            c->m = methods[i].m;
    if (c->m == M_UNKNOWN) {
        finish(c, NULL, GRPC_STATUS_UNIMPLEMENTED, "unknown method");
        return;
    }
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->recv;
    if (!start(c, &op, 1, &c->t_recv))
        c->finished = true;
}

static void on_received(struct call *c, bool ok)
{
    struct srv *s = c->s;
    if (!ok || (!c->recv && c->m != M_WATCH)) {
        finish(c, NULL, GRPC_STATUS_INVALID_ARGUMENT, "no request message");
        return;
    }
    switch (c->m) {
    case M_OPTIONS:
        answer_options(c);
        break;
    case M_PRESTART:
        answer_prestart(c);
        break;
    case M_PREFER:
        answer_prefer(c);
        break;
    case M_WATCH:
        watch_open(c);
        break;
    case M_ALLOC: {
        pthread_t t;
        pthread_mutex_lock(&s->p->mu);
        s->workers++;
        pthread_mutex_unlock(&s->p->mu);
        if (pthread_create(&t, NULL, alloc_thread, c) != 0) {
            pthread_mutex_lock(&s->p->mu);
            s->workers--;
            pthread_mutex_unlock(&s->p->mu);
            finish(c, NULL, GRPC_STATUS_RESOURCE_EXHAUSTED, "no thread for Allocate");
        } else
            pthread_detach(t);
        break;
    }
    default:
        break;
    }
}

/* One completion; the call is freed once nothing of it is in flight. */
static void on_event(struct srv *s, struct tag *t, bool ok)
{
    struct call *c = t->c;
    if (t->step == T_NEW) {
        if (!ok) { /* the server is shutting down */
            call_free(c);
            return;
        }
        request_next(s);
        on_arrival(c);
    } else {
        c->pending--;
        switch (t->step) {
        case T_RECV:
            on_received(c, ok);
            break;
        case T_SEND:
            c->send_busy = false;
            if (!ok)
                c->closed = true;
            break;
        case T_CLOSE:
            c->closed = true;
            c->finished = true;
            break;
        case T_FINISH:
            c->finished = true;
            break;
        default:
            break;
        }
    }
    if (c->m == M_ALLOC && t->step == T_RECV)
        return; /* the Allocate thread holds it */
    if (c->in_list && c->closed)
        watch_unlist(c);
    if (c->finished && c->pending == 0 && !c->in_list)
        call_free(c);
}

void *gp_plugin_serve(void *arg)
{
    struct srv *s = arg;
    bool shutting = false;
    int shutdown_tag = 0;
    for (int i = 0; i < 4; i++) /* calls asked for ahead */
        request_next(s);
    for (;;) {
        gpr_timespec dl =
            gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(50, GPR_TIMESPAN));
        grpc_event ev = grpc_completion_queue_next(s->cq, dl, NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type == GRPC_OP_COMPLETE) {
            if (ev.tag == &shutdown_tag) {
                /* every call has ended; the Allocate threads still
                 * start their batches on the queue, so wait for them */
                pthread_mutex_lock(&s->p->mu);
                while (s->workers > 0)
                    pthread_cond_wait(&s->p->cv, &s->p->mu);
                pthread_mutex_unlock(&s->p->mu);
                grpc_completion_queue_shutdown(s->cq);
                continue;
            }
            on_event(s, ev.tag, ev.success != 0);
        }
        if (!shutting && atomic_load(&s->stopping)) {
            shutting = true;
            grpc_server_shutdown_and_notify(s->server, s->cq, &shutdown_tag);
            grpc_server_cancel_all_calls(s->server);
        }
        if (!shutting)
            watch_push(s);
    }
    return NULL;
}
