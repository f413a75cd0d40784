/* claims.c - kube-scheduler's VolumeRestrictions plugin for
 * ReadWriteOncePod claims (pkg/scheduler/framework/plugins/
 * volumerestrictions/volume_restrictions.go, v1.28, read and re-derived):
 * how many bound pods use each PersistentVolumeClaim (the snapshot's
 * StorageInfos().IsPVCUsedByPods, from NodeInfo.PVCRefCounts), kept as
 * pods bind and release, and whether a pod's ReadWriteOncePod claims are
 * used by another. Upstream's PreFilter counts the conflicting uses
 * (calPreFilterState) and its Filter refuses every node while the count
 * is above 0 (Unschedulable, so preemption may help); RemovePod takes a
 * victim's uses off the count, so evicting the holder on its node lets
 * the pod go there. Here a victim released by the preemption search takes
 * its uses off (gp_eng_release), which is that. Only pods with claims
 * cost anything. Out of memory, a use is not counted: until the next
 * cycle's start counts the bound pods' uses anew, the filter reads the
 * bound pods themselves (slower, the same answers), so no pod is refused
 * for a count that was lost. */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

struct claim_ent {
    char *key; /* owned */
    uint32_t uses;
    struct claim_ent *next;
};

static uint64_t key_hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static struct claim_ent **slot_of(struct claim_map *m, const char *key)
{
    struct claim_ent **at = &m->buckets[key_hash(key) & (m->nbuckets - 1)];
    while (*at && strcmp((*at)->key, key) != 0)
        at = &(*at)->next;
    return at;
}

/* Twice the buckets once the entries outnumber them; false when out of memory. */
static bool grow(struct claim_map *m)
{
    if (m->nbuckets && m->len < m->nbuckets)
        return true;
    size_t n = m->nbuckets ? 2 * m->nbuckets : 64;
    struct claim_ent **b = calloc(n, sizeof *b);
    if (!b)
        return false;
    for (size_t i = 0; i < m->nbuckets; i++)
        for (struct claim_ent *c = m->buckets[i], *next; c; c = next) {
            next = c->next;
            size_t k = key_hash(c->key) & (n - 1);
            c->next = b[k];
            b[k] = c;
        }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
    return true;
}

void gp_eng_claims_bind(struct gp_engine *e, const struct gp_pod *p, int sign)
{
    struct claim_map *m = &e->claims;
    for (size_t i = 0; i < p->spec.nclaims; i++) {
        const char *key = p->spec.claims[i].key ? p->spec.claims[i].key : "";
        if (sign < 0) {
            struct claim_ent **at = m->nbuckets ? slot_of(m, key) : NULL;
            if (at && *at && --(*at)->uses == 0) {
                struct claim_ent *c = *at;
                *at = c->next;
                free(c->key);
                free(c);
                m->len--;
            }
            continue;
        }
        if (!grow(m)) {
            m->broken = true;
            continue;
        }
        struct claim_ent **at = slot_of(m, key);
        if (*at) {
            (*at)->uses++;
            continue;
        }
        struct claim_ent *c = malloc(sizeof *c);
        char *k = c ? strdup(key) : NULL;
        if (!k) {
            free(c);
            m->broken = true;
            continue;
        }
        *c = (struct claim_ent){k, 1, NULL};
        *at = c;
        m->len++;
    }
}

/* How many of p's volumes name claim `key`: its own uses of it, which
 * NodeInfo's PVCRefCounts counts one per volume (updatePVCRefCounts). */
static uint32_t own_uses(const struct gp_pod *p, const char *key)
{
    uint32_t n = 0;
    for (size_t i = 0; i < p->spec.nclaims; i++)
        n += strcmp(p->spec.claims[i].key ? p->spec.claims[i].key : "", key) == 0;
    return n;
}

/* Whether a bound pod other than p names claim `key`, from the pods
 * themselves (the counts cannot be trusted). */
static bool bound_uses(const struct gp_engine *e, const struct gp_pod *p, const char *key)
{
    for (size_t q = 0; q < e->queues.len; q++) {
        const struct queue *qu = &e->queues.items[q];
        for (size_t i = 0; i < qu->bound.len; i++) {
            const struct gp_pod *b = pod_at(e, qu->bound.items[i]);
            if (b->id != p->id && b->spec.nclaims && own_uses(b, key))
                return true;
        }
    }
    return false;
}

bool gp_eng_claims_held(const struct gp_engine *e, const struct gp_pod *p)
{
    const struct claim_map *m = &e->claims;
    if (m->broken) { /* a use could not be counted: the bound pods say */
        for (size_t i = 0; i < p->spec.nclaims; i++)
            if (p->spec.claims[i].rwop &&
                bound_uses(e, p, p->spec.claims[i].key ? p->spec.claims[i].key : ""))
                return true;
        return false;
    }
    if (!m->nbuckets)
        return false;
    for (size_t i = 0; i < p->spec.nclaims; i++) {
        const struct gp_claim_use *u = &p->spec.claims[i];
        if (!u->rwop)
            continue;
        const char *key = u->key ? u->key : "";
        const struct claim_ent *c = m->buckets[key_hash(key) & (m->nbuckets - 1)];
        while (c && strcmp(c->key, key) != 0)
            c = c->next;
        /* a bound p's own uses are not another pod's: upstream asks of a
         * pod not in the snapshot yet, whose uses, however many volumes
         * name the claim, none of the counts holds */
        if (c && c->uses > (p->state == GP_POD_BOUND ? own_uses(p, key) : 0u))
            return true;
    }
    return false;
}

void gp_eng_claims_recount(struct gp_engine *e)
{
    if (!e->claims.broken)
        return;
    gp_eng_claims_free(e);
    for (size_t q = 0; q < e->queues.len; q++) {
        const struct queue *qu = &e->queues.items[q];
        for (size_t i = 0; i < qu->bound.len; i++) {
            const struct gp_pod *b = pod_at(e, qu->bound.items[i]);
            if (b->spec.nclaims)
                gp_eng_claims_bind(e, b, 1); /* out of memory again: broken again */
        }
    }
}

void gp_eng_claims_free(struct gp_engine *e)
{
    struct claim_map *m = &e->claims;
    for (size_t i = 0; i < m->nbuckets; i++)
        for (struct claim_ent *c = m->buckets[i], *next; c; c = next) {
            next = c->next;
            free(c->key);
            free(c);
        }
    free(m->buckets);
    *m = (struct claim_map){0};
}
