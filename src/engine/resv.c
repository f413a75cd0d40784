/* resv.c - EASY backfilling's reservation of room (docs/ARCHITECTURE.md,
 * "Queue orders and backfill"): the head that does not fit for lack of
 * room gets a shadow time - when enough of the bound pods will have ended
 * (bind time + duration hint), released on a projection of their nodes,
 * for the pods it needs to fit - and a spare; a later pod is held back
 * when it would take more of the head's slots there than the spare. The
 * bound pods' expected ends are kept in a heap on every bind and release;
 * the projection is made with what each unchanged node remembers of the
 * last computations ("the incremental reservation" below). The orders
 * themselves, and the quota's reservation, are order.c's. */
#include "engine/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How many pods like u fit node n as it is (up to cap): the node filters
 * without quotas, and for whole GPUs the free whole GPUs, cpu and memory;
 * a share is taken again and again on a copy. */
int64_t gp_eng_head_slots(const struct gp_engine *e, const struct gp_node *n,
                          const struct gp_pod *u, int64_t cap)
{
    if (filter_fit(e, n, u) != GP_FILTER_COUNT)
        return 0;
    int64_t k = cap;
    if (u->spec.cpu_milli > 0 && n->cpu_free_milli / u->spec.cpu_milli < k)
        k = n->cpu_free_milli / u->spec.cpu_milli;
    if (u->spec.mem_mib > 0 && n->mem_free_mib / u->spec.mem_mib < k)
        k = n->mem_free_mib / u->spec.mem_mib;
    if (u->spec.gpu_count == 0)
        return k;
    if (u->spec.gpu_milli == GP_GPU_MILLI)
        return (int64_t)(n->gpus_whole_free / u->spec.gpu_count) < k
                   ? (int64_t)(n->gpus_whole_free / u->spec.gpu_count)
                   : k;
    struct gp_node c = *n;
    struct gp_pick pick;
    int64_t got = 0;
    while (got < k && filter_fit(e, &c, u) == GP_FILTER_COUNT &&
           gp_engine_pick_default(&c, u, &pick) == 0) {
        gp_eng_node_take(&c, u, &pick);
        got++;
    }
    return got;
}

/* Node i as projected at the shadow time: its own projection when a
 * backfilled pod changed it (e->proj), else the node with the releases of
 * the last computation (its memory's copy, when it released any), else
 * the node itself. */
static const struct gp_node *proj_get(const struct gp_engine *e, uint32_t i)
{
    if (i >= e->proj.len)
        return &e->nodes.items[i]; /* no projection (out of memory) */
    if (e->proj_mark.items[i] == e->proj_stamp)
        return &e->proj.items[i];
    const struct resv_node *rn = &e->rnodes.items[i];
    return rn->m > 0 ? &rn->copy : &e->nodes.items[i];
}

/* Does the reservation hold pod p back? Not the head (or its gang), nor a
 * pod whose hint says it ends by the shadow time. */
bool gp_eng_resv_applies(const struct gp_engine *e, const struct gp_pod *p)
{
    const struct resv *r = &e->resv;
    if (!r->on || p->id == r->head || (r->group && p->spec.group == r->group))
        return false;
    double h = p->spec.duration_hint_s;
    return !(h > 0 && e->now_s + h <= r->shadow_s);
}

/* The head's slots on node i as projected: counted by the computation or
 * the last take there, unless the node itself is the projection and has
 * changed since (a pod the reservation does not hold back was bound). */
static int64_t proj_slots(const struct gp_engine *e, uint32_t i, const struct gp_pod *u)
{
    if (i < e->proj.len && e->proj_ver.items[i] == gp_eng_node_ver(e, i) &&
        e->proj_ver.items[i] != 0)
        return e->proj_slots.items[i];
    return gp_eng_head_slots(e, proj_get(e, i), u, e->resv.need);
}

/* How many of the head's slots at the shadow time pod p takes on node n. */
int64_t gp_eng_resv_loss(const struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p)
{
    const struct gp_pod *u = pod_at(e, e->resv.head);
    const struct gp_node *at = proj_get(e, n->id);
    int64_t before = proj_slots(e, n->id, u);
    if (before == 0)
        return 0;
    struct gp_node c = *at;
    struct gp_pick pick;
    if (gp_engine_pick_default(&c, p, &pick) != 0)
        return before; /* cannot tell: count the node lost */
    gp_eng_node_take(&c, p, &pick);
    return before - gp_eng_head_slots(e, &c, u, e->resv.need);
}

/* Pod p, held back by the reservation, was bound on node n: the
 * projection loses what it takes (logged, for a gang attempt taken back). */
void gp_eng_resv_take(struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p)
{
    uint32_t i = n->id;
    if (i >= e->proj.len)
        return; /* no projection (out of memory): nothing to follow */
    int64_t loss = gp_eng_resv_loss(e, n, p);
    bool projected = e->proj_mark.items[i] == e->proj_stamp;
    struct resv_undo u;
    u.node = i;
    u.projected = projected;
    u.spare = e->resv.spare;
    if (projected)
        u.before = e->proj.items[i];
    if (GP_VEC_PUSH(&e->resv_log, u) != 0) {
        e->resv.spare = -1; /* out of memory: hold back everything else */
        return;
    }
    if (!projected) {
        e->proj.items[i] = *proj_get(e, i);
        e->proj_mark.items[i] = e->proj_stamp;
    }
    struct gp_node *at = &e->proj.items[i];
    struct gp_pick pick;
    if (gp_engine_pick_default(at, p, &pick) == 0)
        gp_eng_node_take(at, p, &pick);
    e->proj_ver.items[i] = 0; /* counted again when asked */
    e->resv.spare -= loss;
}

/* Takes back the projection changes logged since `mark`. */
void gp_eng_resv_undo(struct gp_engine *e, size_t mark)
{
    while (e->resv_log.len > mark) {
        const struct resv_undo *u = &e->resv_log.items[--e->resv_log.len];
        e->resv.spare = u->spare;
        if (u->projected)
            e->proj.items[u->node] = u->before;
        else
            e->proj_mark.items[u->node] = e->proj_stamp - 1;
    }
}

static int pod_end_cmp(const void *pa, const void *pb)
{
    const struct pod_end *a = pa, *b = pb;
    if (a->end_s != b->end_s)
        return a->end_s < b->end_s ? -1 : 1;
    return a->pod < b->pod ? -1 : a->pod > b->pod;
}

/* Lists the expected ends (bind time + duration hint, not before now) of
 * the bound pods of queue x's subtree (NONE: of every queue), sorted.
 * Pods without a hint never end. False when out of memory. */
bool gp_eng_ends_list(struct gp_engine *e, uint32_t x)
{
    e->ends.len = 0;
    for (size_t i = 0; i < e->queues.len; i++) {
        uint32_t y = (uint32_t)i;
        while (x != NONE && y != NONE && y != x)
            y = e->queues.items[y].parent;
        if (x != NONE && y != x)
            continue;
        const struct queue *q = &e->queues.items[i];
        for (size_t k = 0; k < q->bound.len; k++) {
            const struct gp_pod *p = pod_at(e, q->bound.items[k]);
            if (!(p->spec.duration_hint_s > 0))
                continue;
            struct pod_end pe = {px_at(e, p->id)->bound_at_s + p->spec.duration_hint_s, p->id};
            if (pe.end_s < e->now_s)
                pe.end_s = e->now_s; /* overdue: it may end any moment */
            if (GP_VEC_PUSH(&e->ends, pe) != 0)
                return false;
        }
    }
    if (e->ends.len > 1)
        qsort(e->ends.items, e->ends.len, sizeof e->ends.items[0], pod_end_cmp);
    return true;
}

/* ---- the bound pods' expected ends, kept in order -------------------------
 * In a heap (O(log n) a bind or a release), and while there are at most
 * e->ends_sorted_max of them also in a sorted array, e->ends_sorted (a bind
 * or a release moves what comes after it): the projection reads the ends
 * in order once or more a cycle, from the array at a few instructions an
 * end instead of a walk of the heap at a few hundred. The array is off
 * (ends_sorted_ok false) once it would grow past e->ends_sorted_max (4096;
 * tests lower it), or out of memory, until a walk finds the heap small
 * again and makes it anew from there. */

static void end_moved(void *ctx, uint32_t id, size_t pos)
{
    px_at(ctx, id)->end_at = (uint32_t)pos + 1;
}

void gp_eng_ends_init(struct gp_engine *e)
{
    gp_kheap_init(&e->end_heap, end_moved, e);
    e->ends_sorted_ok = true; /* no end, none listed */
    e->ends_sorted_max = 4096;
}

static bool item_before(struct gp_kheap_item a, struct gp_kheap_item b)
{
    return a.key < b.key || (a.key == b.key && a.id < b.id);
}

/* The rank of `it` in the array: the number of entries before it. */
static size_t sorted_rank(const struct gp_engine *e, struct gp_kheap_item it)
{
    size_t lo = 0, hi = e->ends_sorted.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (item_before(e->ends_sorted.items[mid], it))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void sorted_add(struct gp_engine *e, struct gp_kheap_item it)
{
    if (!e->ends_sorted_ok)
        return;
    if (e->ends_sorted.len >= e->ends_sorted_max ||
        GP_VEC_RESERVE(&e->ends_sorted, e->ends_sorted.len + 1) != 0) {
        e->ends_sorted_ok = false; /* from the heap, until it is small again */
        return;
    }
    size_t r = sorted_rank(e, it);
    struct gp_kheap_item *a = e->ends_sorted.items;
    memmove(a + r + 1, a + r, (e->ends_sorted.len - r) * sizeof *a);
    a[r] = it;
    e->ends_sorted.len++;
}

static void sorted_drop(struct gp_engine *e, struct gp_kheap_item it)
{
    if (!e->ends_sorted_ok)
        return;
    size_t r = sorted_rank(e, it);
    struct gp_kheap_item *a = e->ends_sorted.items;
    if (r == e->ends_sorted.len || a[r].id != it.id || a[r].key != it.key) {
        e->ends_sorted_ok = false; /* not expected: not there */
        return;
    }
    memmove(a + r, a + r + 1, (e->ends_sorted.len - r - 1) * sizeof *a);
    e->ends_sorted.len--;
}

void gp_eng_ends_charge(struct gp_engine *e, const struct gp_pod *p, int sign)
{
    if (!e->backfill || !(p->spec.duration_hint_s > 0))
        return;
    struct pod_x *x = px_at(e, p->id);
    if (sign > 0) {
        struct gp_kheap_item it = {x->bound_at_s + p->spec.duration_hint_s, p->id};
        if (gp_kheap_push(&e->end_heap, it.key, it.id) != GP_OK)
            e->ends_oom = true; /* from now on listed and sorted */
        else
            sorted_add(e, it);
    } else if (x->end_at) {
        sorted_drop(e, e->end_heap.items[x->end_at - 1]);
        gp_kheap_remove(&e->end_heap, x->end_at - 1);
        x->end_at = 0;
    }
}

void gp_eng_ends_rebound(struct gp_engine *e, const struct gp_pod *p)
{
    const struct pod_x *x = pxc_of(p);
    if (!x->end_at)
        return;
    struct gp_kheap_item it = {x->bound_at_s + p->spec.duration_hint_s, p->id};
    sorted_drop(e, e->end_heap.items[x->end_at - 1]);
    gp_kheap_rekey(&e->end_heap, x->end_at - 1, it.key);
    sorted_add(e, it);
}

/* The array made anew from a whole walk of the heap (when it is off and
 * the heap small). False when out of memory (it stays off). */
static bool sorted_make(struct gp_engine *e)
{
    if (e->end_heap.len > e->ends_sorted_max ||
        GP_VEC_RESERVE(&e->ends_sorted, e->end_heap.len) != 0)
        return false;
    e->ends_sorted.len = 0;
    gp_kheap_walk_begin(&e->end_heap);
    struct gp_kheap_item it;
    while (gp_kheap_walk_next(&e->end_heap, &it))
        e->ends_sorted.items[e->ends_sorted.len++] = it;
    e->ends_sorted_ok = !e->end_heap.walk_oom;
    return e->ends_sorted_ok;
}

/* The ends of every queue's bound pods in the order ends_list sorts them,
 * one at a time from the array or the heap: the overdue ones (and those
 * due now) first, as ends at now in pod order, then the others in order. */
struct ends_walk {
    size_t at;   /* next of e->ends, the overdue ones */
    bool sorted; /* from e->ends_sorted, at rank `next_at` */
    size_t next_at;
    bool have; /* `next`: the first end after now, taken from the heap */
    struct gp_kheap_item next;
};

static bool ends_walk_begin(struct gp_engine *e, struct ends_walk *w)
{
    *w = (struct ends_walk){0};
    e->ends.len = 0;
    if (e->ends_sorted_ok || sorted_make(e)) {
        w->sorted = true;
        const struct gp_kheap_item *a = e->ends_sorted.items;
        size_t n = e->ends_sorted.len, i = 0;
        for (; i < n && !(a[i].key > e->now_s); i++) {
            struct pod_end pe = {e->now_s, a[i].id};
            if (GP_VEC_PUSH(&e->ends, pe) != 0)
                return false;
        }
        w->next_at = i;
    } else {
        gp_kheap_walk_begin(&e->end_heap);
        struct gp_kheap_item it;
        while (gp_kheap_walk_next(&e->end_heap, &it)) {
            if (it.key > e->now_s) {
                w->have = true;
                w->next = it;
                break;
            }
            struct pod_end pe = {e->now_s, it.id};
            if (GP_VEC_PUSH(&e->ends, pe) != 0)
                return false;
        }
        if (e->end_heap.walk_oom)
            return false;
    }
    if (e->ends.len > 1)
        qsort(e->ends.items, e->ends.len, sizeof e->ends.items[0], pod_end_cmp);
    return true;
}

static bool ends_walk_next(struct gp_engine *e, struct ends_walk *w, struct pod_end *out)
{
    if (w->at < e->ends.len) {
        *out = e->ends.items[w->at++];
        return true;
    }
    if (w->sorted) {
        if (w->next_at >= e->ends_sorted.len)
            return false;
        const struct gp_kheap_item *it = &e->ends_sorted.items[w->next_at++];
        *out = (struct pod_end){it->key, it->id};
        return true;
    }
    if (!w->have)
        return false;
    *out = (struct pod_end){w->next.key, w->next.id};
    w->have = gp_kheap_walk_next(&e->end_heap, &w->next);
    return true;
}

/* ---- the incremental reservation ------------------------------------------
 * The head's reservation is a function of the nodes, the bound pods'
 * expected ends and the head's key (its shape, the pods needed, whether
 * its label filters apply): count on every node the pods like the head
 * that fit it (its slots), then release the bound pods in the order of
 * their ends on a projection of the nodes until `need` fit; the shadow
 * time is the end that made it, the spare what fits beyond need then. It
 * is computed anew whenever the state changed (nearly every cycle of a
 * queued cluster), but most of it is what the last computation found:
 * between two cycles a few nodes changed, and the walk meets the same
 * releases on the others.
 *
 * So each node remembers (struct resv_node) its slots as it is, the
 * releases an earlier walk made on it in order with the slots after each,
 * and its copy with all of them released. The invariant: an entry is used
 * only while the node's version (index.c: a new number on every change of
 * the node) and the head's key (rcache_epoch) are those it was made at,
 * and a remembered release only when the walk releases that very pod at
 * that place in the node's order - so every count used is the one a
 * computation from scratch makes on the same node state. A walk that
 * releases another pod there (the order of the ends changed: a pod became
 * overdue, or was bound) drops the node's later entries and goes on from
 * a copy rebuilt with the releases it kept. Heads whose filters read the
 * other pods (topo_hard) or a gang's domain are never remembered. At the
 * end a node whose copy went further than this walk (an earlier shadow)
 * gets its projection made in e->proj, as before; the others are read
 * from their copies (proj_get). e->no_resv_incr turns the memory off;
 * e->resv_check compares every computation with one from scratch. */

/* Starts node i for this computation: its memory checked (made anew for a
 * node changed since), nothing released yet. Returns its slots. */
static int64_t rnode_start(struct gp_engine *e, uint32_t i, const struct gp_pod *p, uint32_t need)
{
    struct resv_node *rn = &e->rnodes.items[i];
    uint64_t v = gp_eng_node_ver(e, i);
    if (rn->epoch != e->rcache_epoch || rn->ver != v || v == 0) {
        rn->epoch = e->rcache_epoch;
        rn->ver = v;
        rn->seq.len = 0;
        rn->copy_ok = false;
        rn->slots0 = gp_eng_head_slots(e, &e->nodes.items[i], p, need);
    } else {
        e->resv_incr_hits++;
    }
    rn->m = 0;
    return rn->slots0;
}

/* Bound pod b, the next end of the walk, released on its node's
 * projection. Returns the node's slots after; -1 when out of memory. */
static int64_t rnode_release(struct gp_engine *e, const struct gp_pod *b, const struct gp_pod *p,
                             uint32_t need)
{
    struct resv_node *rn = &e->rnodes.items[b->node];
    if (rn->m < rn->seq.len) {
        if (rn->seq.items[rn->m].pod == b->id) { /* as the walk that made the entry */
            e->resv_incr_hits++;
            return rn->seq.items[rn->m++].slots;
        }
        rn->seq.len = rn->m; /* another order from here: the rest is made anew */
        rn->copy_ok = false;
    }
    if (!rn->copy_ok) { /* the node with the releases kept */
        rn->copy = e->nodes.items[b->node];
        for (uint32_t k = 0; k < rn->m; k++) {
            const struct gp_pod *q = pod_at(e, rn->seq.items[k].pod);
            gp_eng_node_give(&rn->copy, q, &q->pick);
        }
        rn->copy_ok = true;
    }
    gp_eng_node_give(&rn->copy, b, &b->pick);
    struct resv_step st = {b->id, gp_eng_head_slots(e, &rn->copy, p, need)};
    if (GP_VEC_PUSH(&rn->seq, st) != 0) {
        rn->copy_ok = false; /* the copy went one release past seq */
        return -1;
    }
    rn->m++;
    return st.slots;
}

/* After the walk: node i's projection is its copy when the walk released
 * all of seq (or nothing); else it is made in e->proj. */
static void rnodes_settle(struct gp_engine *e)
{
    for (size_t i = 0; i < e->proj.len; i++) {
        struct resv_node *rn = &e->rnodes.items[i];
        e->proj_ver.items[i] = rn->m > 0 ? 0 : gp_eng_node_ver(e, (uint32_t)i);
        if (rn->m == 0 || (rn->m == rn->seq.len && rn->copy_ok))
            continue;
        struct gp_node *at = &e->proj.items[i];
        *at = e->nodes.items[i];
        for (uint32_t k = 0; k < rn->m; k++) {
            const struct gp_pod *q = pod_at(e, rn->seq.items[k].pod);
            gp_eng_node_give(at, q, &q->pick);
        }
        e->proj_mark.items[i] = e->proj_stamp;
    }
}

/* The projection for head p: counts, releases in the order of the ends
 * until `need` fit, and sets the shadow and the spare (spare -1, shadow
 * INFINITY when out of memory). */
static void resv_project(struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    struct resv *r = &e->resv;
    size_t nn = e->nodes.len;
    e->proj_stamp++;
    e->proj.len = 0;
    e->resv_log.len = 0;
    r->shadow_s = INFINITY;
    r->spare = -1;
    if (GP_VEC_RESERVE(&e->proj, nn) != 0 || GP_VEC_RESERVE(&e->proj_mark, nn) != 0 ||
        GP_VEC_RESERVE(&e->proj_slots, nn) != 0 || GP_VEC_RESERVE(&e->proj_ver, nn) != 0 ||
        GP_VEC_RESERVE(&e->rnodes, nn) != 0)
        return; /* out of memory: hold back everything else */
    while (e->proj_mark.len < nn)
        e->proj_mark.items[e->proj_mark.len++] = 0;
    while (e->rnodes.len < nn)
        e->rnodes.items[e->rnodes.len++] = (struct resv_node){0};
    e->proj.len = e->proj_slots.len = e->proj_ver.len = nn;
    int64_t total = 0, *slots = e->proj_slots.items; /* per node, as projected so far */
    for (size_t i = 0; i < nn; i++)
        total += slots[i] = rnode_start(e, (uint32_t)i, p, need);
    double shadow = e->now_s;
    bool oom = false;
    if (total < need) {
        /* the bound pods' ends in order: from the heap, or listed and sorted */
        struct ends_walk w;
        bool heap = !e->ends_oom;
        oom = heap ? !ends_walk_begin(e, &w) : !gp_eng_ends_list(e, NONE);
        shadow = INFINITY;
        struct pod_end pe;
        for (size_t k = 0; !oom && shadow == INFINITY; k++) {
            if (heap ? !ends_walk_next(e, &w, &pe) : k == e->ends.len)
                break;
            if (!heap)
                pe = e->ends.items[k];
            const struct gp_pod *b = pod_at(e, pe.pod);
            int64_t after = rnode_release(e, b, p, need);
            if (after < 0) {
                oom = true;
                break;
            }
            total += after - slots[b->node];
            slots[b->node] = after;
            if (total >= need)
                shadow = pe.end_s;
        }
        oom |= heap && !w.sorted && e->end_heap.walk_oom && shadow == INFINITY;
    }
    rnodes_settle(e);
    if (oom) {
        e->rcache_epoch++; /* what was half made is not kept */
        return;            /* out of memory: hold back everything else */
    }
    r->shadow_s = shadow;
    r->spare = total - need;
}

/* e->resv_check: the computation just made, against one from scratch. */
static void resv_check(struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    size_t nn = e->proj.len;
    struct gp_node *was = nn ? malloc(nn * sizeof *was) : NULL;
    int64_t *slots = nn ? malloc(nn * sizeof *slots) : NULL;
    if (nn && (!was || !slots)) {
        free(was);
        free(slots);
        return;
    }
    for (size_t i = 0; i < nn; i++) {
        memcpy(&was[i], proj_get(e, (uint32_t)i), sizeof was[i]);
        slots[i] = e->proj_slots.items[i];
    }
    double shadow = e->resv.shadow_s;
    int64_t spare = e->resv.spare;
    e->rcache_epoch++; /* every node made anew */
    resv_project(e, p, need);
    bool same = e->proj.len == nn && e->resv.spare == spare &&
                (e->resv.shadow_s == shadow || (isnan(shadow) && isnan(e->resv.shadow_s)));
    for (size_t i = 0; same && i < nn; i++)
        same = slots[i] == e->proj_slots.items[i] &&
               memcmp(&was[i], proj_get(e, (uint32_t)i), sizeof was[i]) == 0;
    if (e->ends_sorted_ok) { /* the array is the heap in order */
        same &= e->ends_sorted.len == e->end_heap.len;
        gp_kheap_walk_begin(&e->end_heap);
        struct gp_kheap_item it;
        for (size_t k = 0; same && gp_kheap_walk_next(&e->end_heap, &it); k++)
            same = it.id == e->ends_sorted.items[k].id && it.key == e->ends_sorted.items[k].key;
    }
    e->resv_mismatches += !same;
    free(was);
    free(slots);
}

void gp_eng_resv_compute(struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    struct resv *r = &e->resv;
    r->on = true;
    if (r->valid && r->head == p->id && r->ver == e->state_ver)
        return;
    e->resv_stamp++;
    r->valid = true;
    r->head = p->id;
    r->group = p->spec.group;
    r->need = need;
    r->ver = e->state_ver;
    /* the memory holds for one key of the head, and only when what fits a
     * node depends on that node alone */
    bool keep = !e->no_resv_incr && !e->domain_key && !topo_hard(e, p);
    if (!keep || e->rcache_shape != p->shape || e->rcache_need != need ||
        e->rcache_lf != p->label_filters) {
        e->rcache_epoch++;
        e->rcache_shape = keep ? p->shape : NONE;
        e->rcache_need = need;
        e->rcache_lf = p->label_filters;
    }
    resv_project(e, p, need);
    if (e->resv_check && keep)
        resv_check(e, p, need);
    if (!keep)
        e->rcache_epoch++;
}

void gp_eng_resv_free(struct gp_engine *e)
{
    for (size_t i = 0; i < e->rnodes.len; i++)
        GP_VEC_FREE(&e->rnodes.items[i].seq);
    GP_VEC_FREE(&e->rnodes);
    GP_VEC_FREE(&e->proj_ver);
    GP_VEC_FREE(&e->ends_sorted);
}
