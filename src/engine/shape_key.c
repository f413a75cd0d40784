/* shape_key.c - when two pods are one request shape: every field of
 * struct shape_key compared by content, and a hash that agrees with that
 * comparison. Readers give each pod its own copy of its tolerations,
 * node selector, affinity and MIG profile (src/kube/objects.c, a
 * manifest's Pod documents), and a real API server adds two tolerations
 * to every pod, so pods of one template are one shape only if these are
 * compared by what they say, not where they are. Arrays are compared in
 * order (a different order is a different shape: never wrong, only less
 * shared), and a NULL string differs from "". Pointer equality is the
 * fast path (pods made from one template share their arrays). */
#include "engine/internal.h"

#include <string.h>

/* --- hashing: FNV-1a over the content, NULL marked ------------------- */

static uint64_t mix(uint64_t h, uint64_t w)
{
    return (h ^ w) * 0x100000001b3ULL;
}

static uint64_t str_hash(uint64_t h, const char *s)
{
    if (!s)
        return mix(h, 0x1ff); /* not a byte: NULL is not "" */
    for (; *s; s++)
        h = mix(h, (unsigned char)*s);
    return mix(h, 0x100); /* the end: "ab","c" is not "a","bc" */
}

static uint64_t kv_hash(uint64_t h, const struct gp_kv *kv, size_t n)
{
    h = mix(h, n);
    for (size_t i = 0; i < n; i++)
        h = str_hash(str_hash(h, kv[i].key), kv[i].value);
    return h;
}

static uint64_t strs_hash(uint64_t h, const char *const *s, size_t n)
{
    h = mix(h, n);
    for (size_t i = 0; i < n; i++)
        h = str_hash(h, s[i]);
    return h;
}

static uint64_t tol_hash(uint64_t h, const struct gp_toleration *t, size_t n)
{
    h = mix(h, n);
    for (size_t i = 0; i < n; i++)
        h = mix(str_hash(str_hash(h, t[i].key), t[i].value), (uint64_t)t[i].op_exists |
                                                                 (uint64_t)t[i].any_effect << 1 |
                                                                 (uint64_t)t[i].effect << 2);
    return h;
}

static uint64_t exprs_hash(uint64_t h, const struct gp_match_expr *x, size_t n)
{
    h = mix(h, n);
    for (size_t i = 0; i < n; i++)
        h = strs_hash(mix(str_hash(h, x[i].key), (uint64_t)x[i].op), x[i].values, x[i].nvalues);
    return h;
}

static uint64_t node_terms_hash(uint64_t h, const struct gp_node_term *t, size_t n)
{
    h = mix(h, n);
    for (size_t i = 0; i < n; i++)
        h = mix(exprs_hash(exprs_hash(h, t[i].labels, t[i].nlabels), t[i].fields, t[i].nfields),
                (uint64_t)(uint32_t)t[i].weight);
    return h;
}

static uint64_t sel_hash(uint64_t h, const struct gp_label_selector *s)
{
    return exprs_hash(kv_hash(mix(h, s->set), s->labels, s->nlabels), s->exprs, s->nexprs);
}

static uint64_t pod_terms_hash(uint64_t h, const struct gp_pod_term *t, size_t n)
{
    h = mix(h, n);
    for (size_t i = 0; i < n; i++) {
        h = strs_hash(sel_hash(h, &t[i].selector), t[i].namespaces, t[i].nnamespaces);
        h = mix(str_hash(sel_hash(h, &t[i].ns_selector), t[i].topology_key),
                (uint64_t)(uint32_t)t[i].weight);
    }
    return h;
}

static uint64_t cons_hash(uint64_t h, const struct gp_pod_constraints *c)
{
    if (!c)
        return mix(h, 0);
    h = node_terms_hash(mix(h, 1), c->node_required, c->nnode_required);
    h = node_terms_hash(h, c->node_preferred, c->nnode_preferred);
    h = pod_terms_hash(pod_terms_hash(h, c->affinity, c->naffinity), c->affinity_preferred,
                       c->naffinity_preferred);
    h = pod_terms_hash(pod_terms_hash(h, c->anti, c->nanti), c->anti_preferred, c->nanti_preferred);
    h = mix(h, c->nspread);
    for (size_t i = 0; i < c->nspread; i++) {
        const struct gp_spread *s = &c->spread[i];
        h = sel_hash(str_hash(mix(h, (uint64_t)(uint32_t)s->max_skew), s->topology_key),
                     &s->selector);
        h = mix(h, (uint64_t)(uint32_t)s->min_domains << 3 | (uint64_t)s->schedule_anyway |
                       (uint64_t)s->ignore_affinity << 1 | (uint64_t)s->honor_taints << 2);
    }
    h = mix(h, c->nvolumes);
    for (size_t i = 0; i < c->nvolumes; i++)
        h = node_terms_hash(
            mix(h, (uint64_t)c->volumes[i].zone | (uint64_t)c->volumes[i].bind << 1),
            c->volumes[i].terms, c->volumes[i].nterms);
    return h;
}

uint64_t gp_eng_shape_hash(const struct shape_key *k)
{
    const uint64_t words[] = {(uint64_t)k->cpu_milli,
                              (uint64_t)k->mem_mib,
                              (uint64_t)k->gpu_count << 32 | k->gpu_milli,
                              (uint64_t)k->gpu_mem_mib << 32 | k->queue,
                              k->model_mask,
                              (uint64_t)k->share_modes | (uint64_t)k->gpu_resource << 8 |
                                  (uint64_t)k->cuda_driver_min << 16,
                              k->gpu_container_max};
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        h = mix(h, words[i]);
    h = str_hash(h, k->mig_profile);
    h = kv_hash(h, k->node_selector, k->nnode_selector);
    h = tol_hash(h, k->tolerations, k->ntolerations);
    h = cons_hash(h, k->constraints);
    h = str_hash(h, k->ns ? k->ns : "default");
    h = kv_hash(h, k->labels, k->nlabels);
    for (size_t i = 0; i < k->nscalars; i++)
        h = mix(str_hash(h, k->scalars[i].name), (uint64_t)k->scalars[i].amount);
    for (size_t i = 0; i < k->nhost_ports; i++)
        h = mix(str_hash(h, k->host_ports[i].ip),
                (uint64_t)k->host_ports[i].port << 8 | k->host_ports[i].protocol);
    for (size_t i = 0; i < k->nclaims; i++)
        if (k->claims[i].rwop)
            h = str_hash(h, k->claims[i].key);
    for (size_t i = 0; i < k->ncsi_volumes; i++)
        h = str_hash(str_hash(h, k->csi_volumes[i].driver), k->csi_volumes[i].name);
    h ^= h >> 29; /* the table takes the low bits */
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
}

/* --- equality: what the hash reads, compared ------------------------- */

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool kv_eq(const struct gp_kv *a, const struct gp_kv *b, size_t n)
{
    for (size_t i = 0; a != b && i < n; i++)
        if (!same_str(a[i].key, b[i].key) || !same_str(a[i].value, b[i].value))
            return false;
    return true;
}

static bool strs_eq(const char *const *a, size_t na, const char *const *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; a != b && i < na; i++)
        if (!same_str(a[i], b[i]))
            return false;
    return true;
}

static bool tol_eq(const struct gp_toleration *a, const struct gp_toleration *b, size_t n)
{
    for (size_t i = 0; a != b && i < n; i++)
        if (!same_str(a[i].key, b[i].key) || !same_str(a[i].value, b[i].value) ||
            a[i].op_exists != b[i].op_exists || a[i].any_effect != b[i].any_effect ||
            a[i].effect != b[i].effect)
            return false;
    return true;
}

static bool exprs_eq(const struct gp_match_expr *a, size_t na, const struct gp_match_expr *b,
                     size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; a != b && i < na; i++)
        if (!same_str(a[i].key, b[i].key) || a[i].op != b[i].op ||
            !strs_eq(a[i].values, a[i].nvalues, b[i].values, b[i].nvalues))
            return false;
    return true;
}

static bool node_terms_eq(const struct gp_node_term *a, size_t na, const struct gp_node_term *b,
                          size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; a != b && i < na; i++)
        if (!exprs_eq(a[i].labels, a[i].nlabels, b[i].labels, b[i].nlabels) ||
            !exprs_eq(a[i].fields, a[i].nfields, b[i].fields, b[i].nfields) ||
            a[i].weight != b[i].weight)
            return false;
    return true;
}

static bool sel_eq(const struct gp_label_selector *a, const struct gp_label_selector *b)
{
    return a->set == b->set && a->nlabels == b->nlabels &&
           kv_eq(a->labels, b->labels, a->nlabels) &&
           exprs_eq(a->exprs, a->nexprs, b->exprs, b->nexprs);
}

static bool pod_terms_eq(const struct gp_pod_term *a, size_t na, const struct gp_pod_term *b,
                         size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; a != b && i < na; i++)
        if (!sel_eq(&a[i].selector, &b[i].selector) ||
            !strs_eq(a[i].namespaces, a[i].nnamespaces, b[i].namespaces, b[i].nnamespaces) ||
            !sel_eq(&a[i].ns_selector, &b[i].ns_selector) ||
            !same_str(a[i].topology_key, b[i].topology_key) || a[i].weight != b[i].weight)
            return false;
    return true;
}

static bool spread_eq(const struct gp_spread *a, size_t na, const struct gp_spread *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; a != b && i < na; i++)
        if (a[i].max_skew != b[i].max_skew || !same_str(a[i].topology_key, b[i].topology_key) ||
            a[i].schedule_anyway != b[i].schedule_anyway ||
            !sel_eq(&a[i].selector, &b[i].selector) || a[i].min_domains != b[i].min_domains ||
            a[i].ignore_affinity != b[i].ignore_affinity || a[i].honor_taints != b[i].honor_taints)
            return false;
    return true;
}

static bool scalars_eq(const struct gp_scalar *a, const struct gp_scalar *b, size_t na, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na && a != b; i++)
        if (a[i].amount != b[i].amount || strcmp(a[i].name, b[i].name) != 0)
            return false;
    return true;
}

static bool ports_eq(const struct gp_host_port *a, const struct gp_host_port *b, size_t na,
                     size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na && a != b; i++)
        if (a[i].port != b[i].port || a[i].protocol != b[i].protocol || !same_str(a[i].ip, b[i].ip))
            return false;
    return true;
}

static bool csi_eq(const struct gp_csi_volume *a, const struct gp_csi_volume *b, size_t na,
                   size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na && a != b; i++)
        if (!same_str(a[i].driver, b[i].driver) || !same_str(a[i].name, b[i].name))
            return false;
    return true;
}

/* The ReadWriteOncePod claims of a and b, in order, the same. */
static bool claims_eq(const struct gp_claim_use *a, size_t na, const struct gp_claim_use *b,
                      size_t nb)
{
    size_t i = 0, j = 0;
    for (;;) {
        while (i < na && !a[i].rwop)
            i++;
        while (j < nb && !b[j].rwop)
            j++;
        if (i == na || j == nb)
            return i == na && j == nb;
        if (!same_str(a[i].key, b[j].key))
            return false;
        i++;
        j++;
    }
}

static bool volumes_eq(const struct gp_volume_terms *a, size_t na, const struct gp_volume_terms *b,
                       size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na && a != b; i++)
        if (a[i].zone != b[i].zone || a[i].bind != b[i].bind ||
            !node_terms_eq(a[i].terms, a[i].nterms, b[i].terms, b[i].nterms))
            return false;
    return true;
}

bool gp_eng_cons_eq(const struct gp_pod_constraints *a, const struct gp_pod_constraints *b)
{
    if (a == b)
        return true;
    if (!a || !b)
        return false;
    return node_terms_eq(a->node_required, a->nnode_required, b->node_required,
                         b->nnode_required) &&
           node_terms_eq(a->node_preferred, a->nnode_preferred, b->node_preferred,
                         b->nnode_preferred) &&
           pod_terms_eq(a->affinity, a->naffinity, b->affinity, b->naffinity) &&
           pod_terms_eq(a->affinity_preferred, a->naffinity_preferred, b->affinity_preferred,
                        b->naffinity_preferred) &&
           pod_terms_eq(a->anti, a->nanti, b->anti, b->nanti) &&
           pod_terms_eq(a->anti_preferred, a->nanti_preferred, b->anti_preferred,
                        b->nanti_preferred) &&
           spread_eq(a->spread, a->nspread, b->spread, b->nspread) &&
           volumes_eq(a->volumes, a->nvolumes, b->volumes, b->nvolumes);
}

bool gp_eng_shape_eq(const struct shape_key *a, const struct shape_key *b)
{
    return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib &&
           a->gpu_count == b->gpu_count && a->gpu_milli == b->gpu_milli &&
           a->gpu_mem_mib == b->gpu_mem_mib && a->queue == b->queue &&
           a->model_mask == b->model_mask && a->share_modes == b->share_modes &&
           a->gpu_resource == b->gpu_resource && a->cuda_driver_min == b->cuda_driver_min &&
           a->gpu_container_max == b->gpu_container_max && a->nnode_selector == b->nnode_selector &&
           a->ntolerations == b->ntolerations && a->nlabels == b->nlabels &&
           same_str(a->mig_profile, b->mig_profile) &&
           same_str(a->ns ? a->ns : "default", b->ns ? b->ns : "default") &&
           kv_eq(a->labels, b->labels, a->nlabels) &&
           kv_eq(a->node_selector, b->node_selector, a->nnode_selector) &&
           tol_eq(a->tolerations, b->tolerations, a->ntolerations) &&
           scalars_eq(a->scalars, b->scalars, a->nscalars, b->nscalars) &&
           ports_eq(a->host_ports, b->host_ports, a->nhost_ports, b->nhost_ports) &&
           claims_eq(a->claims, a->nclaims, b->claims, b->nclaims) &&
           csi_eq(a->csi_volumes, b->csi_volumes, a->ncsi_volumes, b->ncsi_volumes) &&
           gp_eng_cons_eq(a->constraints, b->constraints);
}
