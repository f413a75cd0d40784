/* sched_records.c - what keeps the scheduler's memory following what is
 * alive and a gang's losses said: the records of deleted Nodes (and of
 * nodes only pods named) and of deleted PodGroups freed once nothing
 * refers to them (docs/kube.md, "Memory"), and the Events on a gang's
 * member that loses its decision after its siblings were bound ("Gangs":
 * a bound pod cannot be unbound); and the members waiting for their
 * PodGroup, by its key, let into the engine when it comes (no rebuild:
 * the review's R13); and the pods by namespace (pdb.c: a budget's change
 * looks at its namespace's pods alone, R13). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sched_internal.h"

/* Records nothing needs any more, freed, so that memory follows what is
 * alive (a scheduler runs for months; autoscaled nodes and one PodGroup
 * per Job come and go): a node record without its Node (deleted, or only
 * pods named it) once no pod books it, holds, waits for or is being bound
 * on its slot or node; a PodGroup the API deleted once no pod names it
 * (its engine gang forgotten: the engine frees it with its last member).
 * Each walk runs only after something may have left one unused. */
void gp_ks_records_sweep(struct gp_kube_sched *s)
{
    if (s->nodes_gone) {
        s->nodes_gone = false;
        for (size_t i = 0; i < s->nnodes; i++) {
            struct snode *n = s->nodes[i];
            n->ref = n->obj || n->nbook > 0 || n->slot_n > 0 || n->wait_head || n->kicked ||
                     n->unread > 0 /* (sched.c pod_unreadable) */ ||
                     n->unread_said; /* its Node unreadable: said once a spell */
        }
        for (size_t i = 0; i < s->npods; i++) {
            struct snode *r[] = {s->pods[i]->booked, s->pods[i]->slot, s->pods[i]->wait_on,
                                 s->pods[i]->binding, s->pods[i]->bound_to};
            for (size_t k = 0; k < sizeof r / sizeof r[0]; k++)
                if (r[k])
                    r[k]->ref = true;
        }
        for (size_t i = s->nnodes; i-- > 0;) { /* (the last one moves into i: seen already) */
            struct snode *n = s->nodes[i];
            if (n->ref)
                continue;
            json_object_del(s->node_index, n->name);
            s->nodes[i] = s->nodes[--s->nnodes];
            if (i < s->nnodes)
                json_object_set_new(s->node_index, s->nodes[i]->name, json_integer((json_int_t)i));
            gp_ks_node_free(s, n);
        }
    }
    if (s->groups_gone) {
        s->groups_gone = false;
        for (size_t i = 0; i < s->ngroups; i++)
            s->groups[i].ref = !s->groups[i].deleted;
        for (size_t i = 0; i < s->npods; i++) {
            const struct gp_kube_pod_info *in = &s->pods[i]->info;
            if (!in->group)
                continue;
            char key[600];
            snprintf(key, sizeof key, "%s/%s", in->ns, in->group);
            json_t *g = json_object_get(s->group_index, key);
            if (g)
                s->groups[json_integer_value(g)].ref = true;
        }
        for (size_t i = s->ngroups; i-- > 0;) {
            struct sgroup *g = &s->groups[i];
            if (g->ref)
                continue;
            if (s->e && g->eng)
                gp_engine_group_forget(s->e, g->eng);
            json_object_del(s->group_index, g->key);
            free(g->key);
            s->groups[i] = s->groups[--s->ngroups];
            if (i < s->ngroups)
                json_object_set_new(s->group_index, s->groups[i].key, json_integer((json_int_t)i));
        }
    }
}

/* Whether the PodGroup a pod names was deleted. */
bool gp_ks_group_deleted(const struct gp_kube_sched *s, const struct gp_kube_pod_info *in)
{
    char key[600];
    snprintf(key, sizeof key, "%s/%s", in->ns, in->group);
    json_t *g = json_object_get(s->group_index, key);
    return g && s->groups[json_integer_value(g)].deleted;
}

/* A Warning Event on gang member p that loses its decision (why), with
 * its gang's state: how many of its other members the API shows on a
 * node (a bound pod cannot be unbound: those stay). */
void gp_ks_gang_event(struct gp_kube_sched *s, const struct spod *p, const char *why)
{
    const struct gp_kube_pod_info *in = &p->info;
    unsigned others = 0, bound = 0;
    for (size_t i = 0; i < s->npods; i++) {
        const struct gp_kube_pod_info *q = &s->pods[i]->info;
        if (s->pods[i] == p || !q->group || strcmp(q->group, in->group) != 0 ||
            strcmp(q->ns, in->ns) != 0 || q->ended)
            continue;
        others++;
        bound += q->node_name != NULL;
    }
    char note[1024];
    snprintf(note, sizeof note, "%s; gang %s/%s: %u of its %u other members bound", why, in->ns,
             in->group, bound, others);
    gp_ks_event(s, "Pod", in->ns, in->name, in->uid, "Warning", "FailedScheduling", "Scheduling",
                note);
}

/* A kept gang member (bind.c BO_KEPT) that ends or goes before its
 * Binding went through: its GPUs are released (by the caller), said. */
void gp_ks_kept_gone(struct gp_kube_sched *s, struct spod *p)
{
    if (p->st != SP_ASSUMED || p->rebind_at <= 0 || !p->info.group)
        return;
    char why[400];
    snprintf(why, sizeof why, "deleted before its Binding to %s went through: its GPUs released",
             p->info.ann_node ? p->info.ann_node : "its node");
    gp_ks_gang_event(s, p, why);
    p->rebind_at = 0;
}

/* --- members waiting for their PodGroup ---------------------------------- */

void gp_ks_group_unwait(struct gp_kube_sched *s, struct spod *p)
{
    if (!p->wait_group)
        return;
    json_t *set = json_object_get(s->group_wait, p->wait_group);
    json_object_del(set, p->key);
    if (set && json_object_size(set) == 0)
        json_object_del(s->group_wait, p->wait_group);
    free(p->wait_group);
    p->wait_group = NULL;
}

void gp_ks_group_wait(struct gp_kube_sched *s, struct spod *p, const char *key)
{
    if (p->wait_group && strcmp(p->wait_group, key) == 0)
        return;
    gp_ks_group_unwait(s, p);
    json_t *set = json_object_get(s->group_wait, key);
    if (!set && json_object_set_new(s->group_wait, key, set = json_object()) != 0)
        return; /* (out of memory: the PodGroup's arrival misses it; a rebuild finds it) */
    if (json_object_set_new(set, p->key, json_true()) == 0)
        p->wait_group = strdup(key);
    if (!p->wait_group)
        json_object_del(set, p->key);
}

void gp_ks_group_admit(struct gp_kube_sched *s, const char *key)
{
    json_t *set = json_object_get(s->group_wait, key);
    if (!set)
        return;
    json_incref(set); /* (unwait below empties and deletes it) */
    const char *pk;
    json_t *v, *tmp;
    json_object_foreach_safe(set, tmp, pk, v)
    {
        struct spod *p = gp_ks_pod_find(s, pk);
        if (!p)
            continue;
        gp_ks_group_unwait(s, p);
        /* a pending pod of ours that waited for it alone (gated, bound or
         * ended pods are not: sched.c gp_kube_sched_pod_change) */
        if (p->st != SP_IGNORED || p->eng != SP_NONE || !p->ours || !p->readable ||
            p->info.node_name || p->info.ended)
            continue;
        if (gp_ks_engine_add(s, p) == GP_OK) {
            p->st = SP_WAITING;
            gp_ks_audit_pod(s, p, false);
            gp_ks_slot_update(s, p, false);
        }
    }
    json_decref(set);
}

/* --- pods by namespace ----------------------------------------------------- */

bool gp_ks_ns_add(struct gp_kube_sched *s, struct spod *p)
{
    const char *slash = strchr(p->key, '/'); /* "ns/name" (gp_kube_key_make) */
    size_t len = slash ? (size_t)(slash - p->key) : 0;
    char name[300];
    snprintf(name, sizeof name, "%.*s", (int)len, p->key);
    json_t *at = json_object_get(s->ns_index, name);
    struct sns *ns = at ? s->nss[json_integer_value(at)] : NULL;
    if (!ns) {
        if (s->nnss == s->capnss) {
            size_t cap = s->capnss ? s->capnss * 2 : 16;
            struct sns **v = realloc(s->nss, cap * sizeof *v);
            if (!v)
                return false;
            s->nss = v;
            s->capnss = cap;
        }
        if (!(ns = calloc(1, sizeof *ns)) || !(ns->name = strdup(name)) ||
            json_object_set_new(s->ns_index, name, json_integer((json_int_t)s->nnss)) != 0) {
            if (ns)
                free(ns->name);
            free(ns);
            return false;
        }
        s->nss[s->nnss++] = ns;
    }
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 8;
        struct spod **v = realloc(ns->pods, cap * sizeof *v);
        if (!v)
            return false; /* (an empty new record stays: freed with the scheduler) */
        ns->pods = v;
        ns->cap = cap;
    }
    p->ns = ns;
    p->ns_at = ns->n;
    ns->pods[ns->n++] = p;
    return true;
}

void gp_ks_ns_remove(struct gp_kube_sched *s, struct spod *p)
{
    struct sns *ns = p->ns;
    if (!ns)
        return;
    ns->pods[p->ns_at] = ns->pods[--ns->n];
    ns->pods[p->ns_at]->ns_at = p->ns_at;
    p->ns = NULL;
    if (ns->n > 0)
        return;
    size_t i = (size_t)json_integer_value(json_object_get(s->ns_index, ns->name));
    json_object_del(s->ns_index, ns->name);
    s->nss[i] = s->nss[--s->nnss];
    if (i < s->nnss)
        json_object_set_new(s->ns_index, s->nss[i]->name, json_integer((json_int_t)i));
    free(ns->pods);
    free(ns->name);
    free(ns);
}

struct spod *const *gp_ks_ns_pods(const struct gp_kube_sched *s, const char *ns, size_t *n)
{
    json_t *at = json_object_get(s->ns_index, ns);
    const struct sns *r = at ? s->nss[json_integer_value(at)] : NULL;
    *n = r ? r->n : 0;
    return r ? r->pods : NULL;
}
