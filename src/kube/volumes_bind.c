/* volumes_bind.c - the claims gpuplane provisions for a pod it placed:
 * kube-scheduler's VolumeBinding PreBind for dynamic provisioning
 * (pkg/scheduler/framework/plugins/volumebinding/binder.go, v1.28:
 * AssumePodVolumes, BindPodVolumes, bindAPIUpdate, checkBindings;
 * volume_binding.go PreBind, bindTimeoutSeconds 600), with the PV
 * controller's side (pkg/controller/volume/persistentvolume: the
 * annotation AnnSelectedNode, volume.kubernetes.io/selected-node, that
 * asks the external provisioner for a volume reachable from that node,
 * and rescheduleProvisioning, which takes it off when provisioning fails).
 *
 * A pod of ours decided on node N whose claims of a WaitForFirstConsumer
 * class are not bound (volumes.c gave the engine their conditions: the
 * class's allowedTopologies, or the node the annotation names) is held
 * before its annotation patch and Binding (gp_ks_volumes_bind_hold, from
 * bind.c's dispatch): each such claim without the annotation gets it
 * (bindAPIUpdate: a merge patch conditioned on the claim's
 * resourceVersion, where upstream sends an Update of the cached object,
 * both refused with 409 when the claim changed), and the pod stays
 * ASSUMED, its resources held in the engine, no binder busy, while the
 * provisioner works. Each cycle (gp_ks_resume) looks at the claims as the
 * informer shows them (checkBindings): every claim bound (spec.volumeName
 * and pv.kubernetes.io/bind-completed) to a volume whose node affinity N
 * meets (volume.CheckNodeAffinity: N's labels), the pod goes on to its
 * annotation patch and Binding as any other; the annotation gone or
 * naming another node (the provisioner gave up: "provisioning failed for
 * PVC"), the volume's node affinity not met, the patch refused, or
 * bind_timeout_s passed ("binding volumes: timed out waiting for the
 * condition"), the decision is taken back: a Warning FailedScheduling
 * Event in kube-scheduler's words for a failed PreBind, the pod backed
 * off and tried again. As upstream (revertAssumedPVCs restores only the
 * scheduler's cache), gpuplane does not take the annotation off a claim:
 * the provisioner does when it cannot provision (rescheduleProvisioning),
 * and while it is on the retried pod may go to that node alone (volumes.c,
 * FindPodVolumes' fast path). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sched_internal.h"

#define ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"

static const char *str_of(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* A NodeSelectorRequirement against value v (NULL: the label absent). */
static bool req_ok(const json_t *e, const char *v)
{
    const char *op = str_of(e, "operator");
    const json_t *vals = json_object_get(e, "values");
    if (!op)
        return false;
    if (strcmp(op, "Exists") == 0)
        return v != NULL;
    if (strcmp(op, "DoesNotExist") == 0)
        return v == NULL;
    bool in = false;
    size_t i;
    json_t *x;
    json_array_foreach(vals, i, x) in =
        in || (v && json_string_value(x) && strcmp(v, json_string_value(x)) == 0);
    if (strcmp(op, "In") == 0)
        return in;
    if (strcmp(op, "NotIn") == 0)
        return !in;
    if ((strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) && v && json_array_size(vals) == 1) {
        char *end1, *end2;
        const char *w = json_string_value(json_array_get(vals, 0));
        long long a = strtoll(v, &end1, 10), b = w ? strtoll(w, &end2, 10) : 0;
        if (!w || *end1 || *end2 || !*v || !*w)
            return false;
        return op[0] == 'G' ? a > b : a < b;
    }
    return false;
}

/* volume.CheckNodeAffinity: the volume's required terms (ORed) against
 * the node's labels alone (a matchFields requirement compares ""). */
static bool pv_fits(const json_t *pv, const json_t *labels)
{
    const json_t *req =
        json_object_get(json_object_get(json_object_get(pv, "spec"), "nodeAffinity"), "required");
    if (!req)
        return true;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(req, "nodeSelectorTerms"), i, t)
    {
        const json_t *le = json_object_get(t, "matchExpressions"),
                     *fe = json_object_get(t, "matchFields");
        if (json_array_size(le) + json_array_size(fe) == 0)
            continue; /* an empty term matches nothing */
        bool ok = true;
        size_t k;
        json_t *e;
        json_array_foreach(le, k, e) ok = ok && req_ok(e, str_of(labels, str_of(e, "key")));
        json_array_foreach(fe, k, e) ok = ok && req_ok(e, "");
        if (ok)
            return true;
    }
    return false;
}

/* The class's volumeBindingMode is WaitForFirstConsumer. */
static bool delayed(const struct gp_kube_sched *s, const json_t *pvc)
{
    const json_t *meta = json_object_get(pvc, "metadata");
    const char *cls =
        str_of(json_object_get(meta, "annotations"), "volume.beta.kubernetes.io/storage-class");
    if (!cls)
        cls = str_of(json_object_get(pvc, "spec"), "storageClassName");
    const char *mode = str_of(json_object_get(s->scs, cls ? cls : ""), "volumeBindingMode");
    return mode && strcmp(mode, "WaitForFirstConsumer") == 0;
}

enum step { ST_READY, ST_WAIT, ST_FAIL };

/* One claim of the pod, for node `node` (labels its labels): ready (bound,
 * its volume's affinity met; or not one to provision), waiting, or failed
 * (why in msg). A claim to annotate is annotated (write). */
static enum step claim_step(struct gp_kube_sched *s, struct spod *p, const char *key,
                            const char *node, const json_t *labels, bool write, char *msg,
                            size_t size)
{
    const json_t *pvc = json_object_get(s->pvcs, key);
    if (!pvc) {
        snprintf(msg, size,
                 "binding volumes: failed to check provisioning pvc: persistentvolumeclaim "
                 "\"%s\" not found",
                 key);
        return ST_FAIL;
    }
    const json_t *meta = json_object_get(pvc, "metadata");
    const json_t *ann = json_object_get(meta, "annotations");
    const char *vn = str_of(json_object_get(pvc, "spec"), "volumeName");
    const char *name = str_of(meta, "name");
    if (vn && vn[0] && !str_of(ann, GP_KUBE_ANN_SELECTED_NODE))
        return ST_READY; /* bound before: its volume was a filter's (boundClaims) */
    if (vn && vn[0]) {   /* provisioned for a node: bound (or being bound) by the PV controller */
        const json_t *pv = json_object_get(s->pvs, vn);
        if (!pv)
            return ST_WAIT; /* (not seen yet: checkBindings waits too) */
        if (!pv_fits(pv, labels)) {
            snprintf(msg, size,
                     "binding volumes: pv \"%s\" node affinity doesn't match node \"%s\": "
                     "no matching NodeSelectorTerms",
                     vn, node);
            return ST_FAIL;
        }
        return json_object_get(ann, ANN_BIND_COMPLETED) ? ST_READY : ST_WAIT;
    }
    if (!delayed(s, pvc))
        return ST_READY; /* (volumes.c refused it else) */
    /* checkBindings: a claim to provision that the informer shows older
     * than our patches made it is waited for (versioner.
     * CompareResourceVersion against the assume cache's copy). Only such
     * a claim: a claim bound before is ready whatever its version, though
     * it is older than another claim's patch (prov_rv is the pod's
     * newest) */
    const char *have = gp_kube_meta(pvc, "resourceVersion");
    if (p->prov_rv && have && strtoull(have, NULL, 10) < p->prov_rv)
        return ST_WAIT;
    const char *sel = str_of(ann, GP_KUBE_ANN_SELECTED_NODE);
    if (sel && strcmp(sel, node) == 0)
        return ST_WAIT;
    if (sel || !write) { /* taken off, or another node's: the provisioner gave up */
        snprintf(msg, size, "binding volumes: provisioning failed for PVC \"%.200s\"",
                 name ? name : key);
        return ST_FAIL;
    }
    /* bindAPIUpdate: the annotation, the claim as the informer has it the
     * precondition */
    const char *ns = str_of(meta, "namespace"), *rv = str_of(meta, "resourceVersion");
    if (!rv || !rv[0]) { /* "" in a merge patch is no precondition: nothing sent */
        snprintf(msg, size,
                 "binding volumes: persistentvolumeclaim \"%.200s\" has no "
                 "metadata.resourceVersion",
                 name ? name : key);
        return ST_FAIL;
    }
    char path[700];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s",
             ns ? ns : "default", name ? name : "");
    json_t *body = json_pack("{s:{s:s,s:{s:s}}}", "metadata", "resourceVersion", rv, "annotations",
                             GP_KUBE_ANN_SELECTED_NODE, node);
    json_t *ans = NULL;
    long st = gp_ks_leading(s) && s->c
                  ? gp_ks_send(s->c, "PATCH", path, body, "application/merge-patch+json", &ans)
                  : (json_decref(body), 0);
    s->st.claim_patches++;
    const char *nrv = gp_kube_meta(ans, "resourceVersion");
    unsigned long long made = nrv ? strtoull(nrv, NULL, 10) : 0;
    json_decref(ans);
    if (st == 200) {
        p->prov_rv = made > p->prov_rv ? made : p->prov_rv;
        return ST_WAIT;
    }
    if (st == 409)
        snprintf(
            msg, size,
            "Operation cannot be fulfilled on persistentvolumeclaims \"%.200s\": the object has "
            "been modified; please apply your changes to the latest version and try again",
            name ? name : key);
    else
        snprintf(msg, size, "updating persistentvolumeclaim \"%.200s\": status %ld",
                 name ? name : key, st);
    return ST_FAIL;
}

bool gp_ks_volumes_bind_hold(struct gp_kube_sched *s, struct spod *p)
{
    if (!p->ours || !p->info.claims || !s->e || p->node == SP_NONE)
        return false;
    const struct gp_node *nd = gp_engine_node(s->e, p->node);
    const char *node = nd ? nd->spec.name : NULL;
    struct snode *sn = node ? gp_ks_node_get(s, node, false) : NULL;
    if (!node)
        return false;
    const json_t *labels =
        json_object_get(json_object_get(sn ? sn->obj : NULL, "metadata"), "labels");
    const char *ns = p->info.ns ? p->info.ns : "default";
    enum step worst = ST_READY;
    char msg[1024] = "";
    size_t i;
    json_t *vol;
    json_array_foreach(json_object_get(json_object_get(p->obj, "spec"), "volumes"), i, vol)
    {
        const json_t *pc = json_object_get(vol, "persistentVolumeClaim");
        char cn[300], key[600];
        if (pc)
            snprintf(cn, sizeof cn, "%s", str_of(pc, "claimName") ? str_of(pc, "claimName") : "");
        else if (json_object_get(vol, "ephemeral"))
            snprintf(cn, sizeof cn, "%s-%s", p->info.name,
                     str_of(vol, "name") ? str_of(vol, "name") : "");
        else
            continue;
        gp_kube_key_make(ns, cn, key, sizeof key);
        enum step st = claim_step(s, p, key, node, labels, p->prov_at == 0, msg, sizeof msg);
        worst = st > worst ? st : worst;
        if (st == ST_FAIL)
            break;
    }
    if (worst == ST_WAIT && p->prov_at == 0)
        p->prov_at = s->now_s > 0 ? s->now_s : 1e-9;
    if (worst == ST_WAIT && s->now_s >= p->prov_at + s->o.bind_timeout_s) {
        worst = ST_FAIL; /* BindPodVolumes' wait.PollUntilContextTimeout */
        snprintf(msg, sizeof msg, "binding volumes: timed out waiting for the condition");
    }
    if (worst == ST_WAIT) {
        s->maybe_resume = true; /* looked at again by gp_ks_resume */
        return true;
    }
    p->prov_at = 0;
    p->prov_rv = 0;
    if (worst == ST_READY)
        return false;
    /* PreBind failed: the pod's words (schedule_one.go bindingCycle:
     * "running PreBind plugin ...") and its decision taken back */
    char note[1200];
    snprintf(note, sizeof note, "running PreBind plugin \"VolumeBinding\": %s", msg);
    gp_ks_event(s, "Pod", p->info.ns, p->info.name, p->info.uid, "Warning", "FailedScheduling",
                "Scheduling", note);
    s->st.claim_failures++;
    gp_ks_release(s, p);
    return true;
}
