/* health.c - GPU health from XIDs: the XID table (NVIDIA's XID catalog,
 * docs/node.md "Health"), the per-GPU state machine with time passed in,
 * and the change posted as an Event on the Node (node/events.h). */
#include "node/health.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/events.h"

/* The XIDs we classify by name, from the "Resolution Bucket (Immediate
 * Action)" of NVIDIA's XID catalog for Ampere and newer
 * (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html),
 * as NVIDIA's NVSentinel carries it (xiderrorsmapping.csv, its
 * gpu-health-monitor chart): RESTART_APP and IGNORE are application
 * errors (the GPU is fine), RESTART_BM and RESTART_VM fatal (the GPU is
 * back only with the machine or the driver), RESET_GPU (and XID 48, whose
 * WORKFLOW_XID_48 ends in a reset: an uncorrectable ECC error's row
 * remapping pends until one) kept out until a GPU reset is seen, never by
 * the quiet period alone, and the other WORKFLOW_ buckets,
 * CHECK_MECHANICALS, UPDATE_SWFW and the rest recoverable (kept out until
 * a reset or a quiet period). The catalog wins over NVIDIA
 * k8s-device-plugin's default ignore list (13, 31, 43, 45, 68, 109) where
 * they disagree: 109 is RESET_GPU in the catalog (k8s-device-plugin #1974
 * is that disagreement). An XID not listed: recoverable. */
struct xid_row {
    unsigned xid;
    enum gp_xid_class cls;
    const char *text;
};

static const struct xid_row xid_table[] = {
    {8, GP_XID_APPLICATION, "GPU stopped processing"},
    {11, GP_XID_APPLICATION, "invalid or corrupted push buffer stream"},
    {13, GP_XID_APPLICATION, "graphics engine exception"},
    {14, GP_XID_APPLICATION, "fake error"},
    {25, GP_XID_APPLICATION, "graphics engine illegal notify"},
    {31, GP_XID_APPLICATION, "GPU memory page fault"},
    {32, GP_XID_APPLICATION, "invalid or corrupted push buffer stream (PBDMA)"},
    {37, GP_XID_APPLICATION, "FECS unimplemented firmware method"},
    {38, GP_XID_APPLICATION, "FECS watchdog timeout"},
    {39, GP_XID_APPLICATION, "copy engine 0 error"},
    {40, GP_XID_APPLICATION, "copy engine 1 error"},
    {41, GP_XID_APPLICATION, "copy engine 2 error"},
    {43, GP_XID_APPLICATION, "GPU stopped processing (reset channel)"},
    {44, GP_XID_APPLICATION, "graphics engine fault during context switch"},
    {45, GP_XID_APPLICATION, "preemptive cleanup, due to previous errors"},
    {46, GP_XID_RESET, "GPU timeout"},
    {48, GP_XID_RESET, "double bit ECC error"},
    {54, GP_XID_RECOVERABLE, "power-reduced clocking"},
    {60, GP_XID_APPLICATION, "SEC2 error"},
    {61, GP_XID_RECOVERABLE, "internal micro-controller breakpoint/warning"},
    {62, GP_XID_RESET, "internal micro-controller halt"},
    {63, GP_XID_APPLICATION, "ECC page retirement or row remapping recorded"},
    {64, GP_XID_RESET, "ECC page retirement or row remapping failure"},
    {66, GP_XID_APPLICATION, "FECS register access violation"},
    {67, GP_XID_APPLICATION, "FECS verification violation"},
    {68, GP_XID_APPLICATION, "NVDEC0 exception"},
    {69, GP_XID_APPLICATION, "graphics engine class error"},
    {70, GP_XID_APPLICATION, "copy engine 3 error"},
    {71, GP_XID_APPLICATION, "copy engine 4 error"},
    {72, GP_XID_APPLICATION, "copy engine 5 error"},
    {74, GP_XID_RECOVERABLE, "NVLink error"},
    {75, GP_XID_APPLICATION, "copy engine 6 error"},
    {76, GP_XID_APPLICATION, "copy engine 7 error"},
    {77, GP_XID_APPLICATION, "copy engine 8 error"},
    {78, GP_XID_RECOVERABLE, "vGPU start error"},
    {79, GP_XID_FATAL, "GPU has fallen off the bus"},
    {80, GP_XID_APPLICATION, "push buffer CRC mismatch"},
    {82, GP_XID_APPLICATION, "NVJPG0 error"},
    {83, GP_XID_APPLICATION, "NVDEC1 error"},
    {84, GP_XID_APPLICATION, "NVDEC2 error"},
    {85, GP_XID_APPLICATION, "copy engine 9 error"},
    {86, GP_XID_APPLICATION, "OFA0 error"},
    {88, GP_XID_APPLICATION, "NVDEC3 error"},
    {89, GP_XID_APPLICATION, "NVDEC4 error"},
    {92, GP_XID_APPLICATION, "excessive single-bit ECC interrupts"},
    {93, GP_XID_APPLICATION, "InfoROM erase limit exceeded"},
    {94, GP_XID_APPLICATION, "contained ECC error"},
    {95, GP_XID_RESET, "uncontained ECC error"},
    {96, GP_XID_APPLICATION, "NVDEC5 error"},
    {97, GP_XID_APPLICATION, "NVDEC6 error"},
    {98, GP_XID_APPLICATION, "NVDEC7 error"},
    {99, GP_XID_APPLICATION, "NVJPG1 error"},
    {100, GP_XID_APPLICATION, "NVJPG2 error"},
    {101, GP_XID_APPLICATION, "NVJPG3 error"},
    {102, GP_XID_APPLICATION, "NVJPG4 error"},
    {103, GP_XID_APPLICATION, "NVJPG5 error"},
    {104, GP_XID_APPLICATION, "NVJPG6 error"},
    {105, GP_XID_APPLICATION, "NVJPG7 error"},
    {106, GP_XID_APPLICATION, "SMBPBI test message"},
    {107, GP_XID_APPLICATION, "SMBPBI test message (silent)"},
    {109, GP_XID_RESET, "context switch timeout"},
    {110, GP_XID_RESET, "security fault"},
    {119, GP_XID_RESET, "GSP RPC timeout"},
    {120, GP_XID_RESET, "GSP error"},
    {121, GP_XID_APPLICATION, "C2C error"},
    {126, GP_XID_APPLICATION, "copy engine 10 error"},
    {127, GP_XID_APPLICATION, "copy engine 11 error"},
    {128, GP_XID_APPLICATION, "copy engine 12 error"},
    {129, GP_XID_APPLICATION, "copy engine 13 error"},
    {130, GP_XID_APPLICATION, "copy engine 14 error"},
    {131, GP_XID_APPLICATION, "copy engine 15 error"},
    {132, GP_XID_APPLICATION, "copy engine 16 error"},
    {133, GP_XID_APPLICATION, "copy engine 17 error"},
    {134, GP_XID_APPLICATION, "copy engine 18 error"},
    {135, GP_XID_APPLICATION, "copy engine 19 error"},
    {136, GP_XID_RESET, "NVLink ALI training failure"},
    {137, GP_XID_APPLICATION, "NVLink FLA privilege error"},
    {139, GP_XID_APPLICATION, "OFA1 error"},
    {140, GP_XID_RESET, "unrecovered ECC error"},
    {141, GP_XID_APPLICATION, "fast path error"},
    {143, GP_XID_RESET, "GPU initialisation error"},
    {151, GP_XID_FATAL, "key rotation error"},
    {152, GP_XID_APPLICATION, "DLA SMMU error"},
    {153, GP_XID_APPLICATION, "DLA timeout"},
    {154, GP_XID_RECOVERABLE, "GPU recovery action changed"},
    {155, GP_XID_RECOVERABLE, "NVLink software-defined error"},
    {156, GP_XID_RECOVERABLE, "resource retirement event"},
    {157, GP_XID_APPLICATION, "resource retirement failure"},
    {158, GP_XID_RECOVERABLE, "GPU fatal timeout"},
    {160, GP_XID_FATAL, "channel retirement event"},
    {161, GP_XID_APPLICATION, "channel retirement failure"},
};

static const struct xid_row *xid_find(unsigned xid)
{
    for (size_t i = 0; i < sizeof xid_table / sizeof xid_table[0]; i++)
        if (xid_table[i].xid == xid)
            return &xid_table[i];
    return NULL;
}

enum gp_xid_class gp_node_xid_class(unsigned xid)
{
    const struct xid_row *r = xid_find(xid);
    return r ? r->cls : GP_XID_RECOVERABLE;
}

const char *gp_node_xid_class_name(enum gp_xid_class c)
{
    switch (c) {
    case GP_XID_APPLICATION:
        return "application";
    case GP_XID_RECOVERABLE:
        return "recoverable";
    case GP_XID_FATAL:
        return "fatal";
    case GP_XID_RESET:
        return "reset";
    default:
        return "unknown";
    }
}

const char *gp_node_xid_text(unsigned xid)
{
    const struct xid_row *r = xid_find(xid);
    return r ? r->text : NULL;
}

const char *gp_node_health_state_name(enum gp_node_health_state s)
{
    switch (s) {
    case GP_NODE_HEALTHY:
        return "healthy";
    case GP_NODE_UNHEALTHY_RECOVERABLE:
        return "unhealthy (recoverable)";
    case GP_NODE_UNHEALTHY_FATAL:
        return "unhealthy (fatal)";
    case GP_NODE_UNHEALTHY_RESET:
        return "unhealthy (until a reset)";
    }
    return "unknown";
}

void gp_node_health_opts_default(struct gp_node_health_opts *o)
{
    o->quiet_s = 600;
}

void gp_node_health_init(struct gp_node_health *h, size_t n_gpus,
                         const struct gp_node_health_opts *o)
{
    memset(h, 0, sizeof *h);
    if (o)
        h->o = *o;
    else
        gp_node_health_opts_default(&h->o);
    h->n_gpus = n_gpus < GP_NODE_MAX_GPUS ? n_gpus : GP_NODE_MAX_GPUS;
}

/* Moves GPU g to state `to`; true (and *ch) when that is a change. */
static bool move(struct gp_node_health *h, unsigned g, enum gp_node_health_state to,
                 enum gp_node_health_cause cause, unsigned xid, enum gp_xid_class cls, double now_s,
                 struct gp_node_health_change *ch)
{
    struct gp_node_gpu_health *s = &h->gpus[g];
    if (s->state == to)
        return false;
    if (ch)
        *ch = (struct gp_node_health_change){
            .gpu = g, .from = s->state, .to = to, .cause = cause, .xid = xid, .cls = cls};
    if (s->state == GP_NODE_HEALTHY)
        s->bad_since_s = now_s;
    s->state = to;
    return true;
}

bool gp_node_health_xid(struct gp_node_health *h, unsigned gpu, unsigned xid, double now_s,
                        struct gp_node_health_change *ch)
{
    if (gpu >= h->n_gpus)
        return false;
    struct gp_node_gpu_health *s = &h->gpus[gpu];
    enum gp_xid_class cls = gp_node_xid_class(xid);
    s->xids[cls]++;
    s->last_xid = xid;
    s->last_class = cls;
    if (cls == GP_XID_APPLICATION)
        return false;
    s->last_bad_s = now_s;
    if (cls == GP_XID_FATAL)
        return move(h, gpu, GP_NODE_UNHEALTHY_FATAL, GP_NODE_CAUSE_XID, xid, cls, now_s, ch);
    if (s->state == GP_NODE_UNHEALTHY_FATAL)
        return false;
    if (cls == GP_XID_RESET) /* no quiet period brings it back: only a reset */
        return move(h, gpu, GP_NODE_UNHEALTHY_RESET, GP_NODE_CAUSE_XID, xid, cls, now_s, ch);
    if (s->state == GP_NODE_UNHEALTHY_RESET)
        return false;
    return move(h, gpu, GP_NODE_UNHEALTHY_RECOVERABLE, GP_NODE_CAUSE_XID, xid, cls, now_s, ch);
}

bool gp_node_health_lost(struct gp_node_health *h, unsigned gpu, double now_s,
                         struct gp_node_health_change *ch)
{
    if (gpu >= h->n_gpus)
        return false;
    h->gpus[gpu].last_bad_s = now_s;
    return move(h, gpu, GP_NODE_UNHEALTHY_FATAL, GP_NODE_CAUSE_LOST, 0, GP_XID_FATAL, now_s, ch);
}

bool gp_node_health_reset(struct gp_node_health *h, unsigned gpu, double now_s,
                          struct gp_node_health_change *ch)
{
    if (gpu >= h->n_gpus || (h->gpus[gpu].state != GP_NODE_UNHEALTHY_RECOVERABLE &&
                             h->gpus[gpu].state != GP_NODE_UNHEALTHY_RESET))
        return false;
    return move(h, gpu, GP_NODE_HEALTHY, GP_NODE_CAUSE_RESET, 0, GP_XID_RECOVERABLE, now_s, ch);
}

size_t gp_node_health_tick(struct gp_node_health *h, double now_s, struct gp_node_health_change *ch,
                           size_t cap)
{
    size_t n = 0;
    for (unsigned g = 0; g < h->n_gpus; g++) {
        struct gp_node_gpu_health *s = &h->gpus[g];
        if (s->state != GP_NODE_UNHEALTHY_RECOVERABLE || now_s - s->last_bad_s < h->o.quiet_s)
            continue;
        struct gp_node_health_change c;
        move(h, g, GP_NODE_HEALTHY, GP_NODE_CAUSE_QUIET, 0, GP_XID_RECOVERABLE, now_s, &c);
        if (n < cap && ch)
            ch[n] = c;
        n++;
    }
    return n;
}

size_t gp_node_health_driver_reload(struct gp_node_health *h, double now_s,
                                    struct gp_node_health_change *ch, size_t cap)
{
    size_t n = 0;
    for (unsigned g = 0; g < h->n_gpus; g++) {
        struct gp_node_health_change c;
        if (!move(h, g, GP_NODE_HEALTHY, GP_NODE_CAUSE_DRIVER_RELOAD, 0, GP_XID_FATAL, now_s, &c))
            continue;
        if (n < cap && ch)
            ch[n] = c;
        n++;
    }
    return n;
}

bool gp_node_health_back(struct gp_node_health *h, unsigned gpu, enum gp_node_health_cause cause,
                         double now_s, struct gp_node_health_change *ch)
{
    if (gpu >= h->n_gpus)
        return false;
    return move(h, gpu, GP_NODE_HEALTHY, cause, 0, GP_XID_FATAL, now_s, ch);
}

void gp_node_health_grow(struct gp_node_health *h, size_t n_gpus)
{
    if (n_gpus > GP_NODE_MAX_GPUS)
        n_gpus = GP_NODE_MAX_GPUS;
    for (size_t g = h->n_gpus; g < n_gpus; g++)
        memset(&h->gpus[g], 0, sizeof h->gpus[g]);
    if (n_gpus > h->n_gpus)
        h->n_gpus = n_gpus;
}

bool gp_node_health_ok(const struct gp_node_health *h, unsigned gpu)
{
    return gpu < h->n_gpus && h->gpus[gpu].state == GP_NODE_HEALTHY;
}

double gp_node_health_next_s(const struct gp_node_health *h)
{
    double next = -1;
    for (unsigned g = 0; g < h->n_gpus; g++) {
        const struct gp_node_gpu_health *s = &h->gpus[g];
        if (s->state != GP_NODE_UNHEALTHY_RECOVERABLE)
            continue;
        double t = s->last_bad_s + h->o.quiet_s;
        if (next < 0 || t < next)
            next = t;
    }
    return next;
}

void gp_node_health_apply(const struct gp_node_health *h, struct gp_node_inventory *inv)
{
    for (size_t i = 0; i < inv->n_gpus; i++) {
        unsigned g = inv->gpus[i].index;
        if (g >= h->n_gpus)
            continue;
        inv->gpus[i].healthy = h->gpus[g].state == GP_NODE_HEALTHY;
        inv->gpus[i].last_xid = h->gpus[g].last_xid;
    }
}

const char *gp_node_health_reason(const struct gp_node_health_change *ch, const char **type)
{
    bool bad = ch->to != GP_NODE_HEALTHY;
    if (type)
        *type = bad ? "Warning" : "Normal";
    return bad ? "GPUUnhealthy" : "GPUHealthy";
}

static const char *cause_text(const struct gp_node_health_change *ch)
{
    switch (ch->cause) {
    case GP_NODE_CAUSE_RESET:
        return "a GPU reset was seen";
    case GP_NODE_CAUSE_QUIET:
        return "no recoverable XID for the quiet period";
    case GP_NODE_CAUSE_DRIVER_RELOAD:
        return "the driver was reloaded";
    case GP_NODE_CAUSE_LOST:
        return "NVML reports the GPU lost";
    case GP_NODE_CAUSE_BACK:
        return "NVML reads it again";
    case GP_NODE_CAUSE_XID:
        break;
    }
    return "an XID";
}

void gp_node_health_note(const struct gp_node_health_change *ch, const struct gp_node_gpu *gpu,
                         char *note, size_t n)
{
    char who[160];
    if (gpu && gpu->uuid[0])
        snprintf(who, sizeof who, "GPU %u (%.96s)", ch->gpu, gpu->uuid);
    else
        snprintf(who, sizeof who, "GPU %u", ch->gpu);
    const char *until = ch->to == GP_NODE_UNHEALTHY_FATAL ? "unhealthy until the driver is reloaded"
                        : ch->to == GP_NODE_UNHEALTHY_RESET
                            ? "unhealthy until a GPU reset is seen"
                            : "unhealthy until a GPU reset or a quiet period";
    if (ch->to == GP_NODE_HEALTHY) {
        snprintf(note, n, "%s: healthy again: %s", who, cause_text(ch));
    } else if (ch->cause == GP_NODE_CAUSE_XID) {
        const char *text = gp_node_xid_text(ch->xid);
        snprintf(note, n, "%s: XID %u (%s: %s): %s", who, ch->xid, gp_node_xid_class_name(ch->cls),
                 text ? text : "not in the catalog table", until);
    } else {
        snprintf(note, n, "%s: %s: %s", who, cause_text(ch), until);
    }
}

enum gp_err gp_node_health_event(struct gp_kube_client *c, const char *node, const char *node_uid,
                                 const char *instance, const struct gp_node_health_change *ch,
                                 const struct gp_node_gpu *gpu, struct gp_diag *diag)
{
    const char *type, *reason = gp_node_health_reason(ch, &type);
    char note[512], tag[24];
    gp_node_health_note(ch, gpu, note, sizeof note);
    snprintf(tag, sizeof tag, "gpu%u", ch->gpu);
    struct gp_node_event ev = {.type = type,
                               .reason = reason,
                               .action = ch->to == GP_NODE_HEALTHY ? "Recover" : "XID",
                               .note = note,
                               .tag = tag};
    return gp_node_event_post(c, node, node_uid, instance, &ev, diag);
}
