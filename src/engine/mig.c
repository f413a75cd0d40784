/* mig.c - MIG layouts: validity, placement of one more instance by the
 * "keep room for the largest profiles" rule, layouts from mig-parted
 * counts, named configurations and model names. Pure functions over the
 * constant tables compiled from data/mig-profiles.json. */
#include "engine/mig.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* --- models and profiles ------------------------------------------------ */

static char upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool same_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (upper(*a) != upper(*b))
            return false;
    return *a == *b;
}

static const struct gp_mig_model *model_by_id(const char *id)
{
    for (size_t i = 0; i < gp_mig_nmodels; i++)
        if (same_nocase(gp_mig_models[i].id, id))
            return &gp_mig_models[i];
    return NULL;
}

/* The name's words, upper-cased: "NVIDIA A100 80GB PCIe" -> NVIDIA, A100,
 * 80GB, PCIE. At most 12 words of at most 15 characters are looked at. */
struct words {
    char w[12][16];
    size_t n;
};

static void split_words(const char *s, struct words *out)
{
    out->n = 0;
    while (*s && out->n < 12) {
        while (*s && !is_alnum(*s))
            s++;
        size_t len = 0;
        while (is_alnum(*s)) {
            if (len < sizeof out->w[0] - 1)
                out->w[out->n][len++] = upper(*s);
            s++;
        }
        if (len > 0)
            out->w[out->n++][len] = '\0';
    }
}

/* The memory a name states in GB ("80GB", "144G", or "80" then "GB"), or 0. */
static unsigned stated_gb(const struct words *w)
{
    for (size_t i = 0; i < w->n; i++) {
        const char *p = w->w[i];
        unsigned v = 0;
        size_t digits = 0;
        while (*p >= '0' && *p <= '9' && digits < 5) {
            v = v * 10 + (unsigned)(*p - '0');
            p++;
            digits++;
        }
        if (digits == 0)
            continue;
        if (strcmp(p, "GB") == 0 || strcmp(p, "G") == 0)
            return v;
        if (*p == '\0' && i + 1 < w->n && (!strcmp(w->w[i + 1], "GB") || !strcmp(w->w[i + 1], "G")))
            return v;
    }
    return 0;
}

static bool has_word(const struct words *w, const char *word)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->w[i], word) == 0)
            return true;
    return false;
}

const struct gp_mig_model *gp_mig_model_find(const char *name)
{
    if (!name || !*name)
        return NULL;
    const struct gp_mig_model *m = model_by_id(name);
    if (m)
        return m;
    for (size_t i = 0; i < gp_mig_nmodels; i++)
        for (size_t j = 0; j < gp_mig_models[i].nproducts; j++)
            if (same_nocase(gp_mig_models[i].products[j], name))
                return &gp_mig_models[i];
    /* the family word and the stated memory decide */
    struct words w;
    split_words(name, &w);
    unsigned gb = stated_gb(&w);
    bool nvl = has_word(&w, "NVL");
    if (has_word(&w, "A30"))
        return gb == 0 || gb == 24 ? model_by_id("A30-24GB") : NULL;
    if (has_word(&w, "A100") || has_word(&w, "A800"))
        return gb == 40 ? model_by_id("A100-40GB") : gb == 80 ? model_by_id("A100-80GB") : NULL;
    if (has_word(&w, "H100") || has_word(&w, "H800")) {
        if (nvl || gb == 94)
            return model_by_id("H100-94GB");
        if (gb == 96)
            return model_by_id("GH200-96GB");
        return gb == 0 || gb == 80 ? model_by_id("H100-80GB") : NULL;
    }
    if (has_word(&w, "H20"))
        return gb == 0 || gb == 96 ? model_by_id("GH200-96GB") : NULL;
    if (has_word(&w, "H200"))
        return gb == 0 || gb == 141 ? model_by_id("H200-141GB") : NULL;
    if (has_word(&w, "GH200"))
        return model_by_id(gb == 144 ? "GH200-144GB" : "GH200-96GB");
    if (has_word(&w, "B200"))
        return gb == 0 || gb == 180 ? model_by_id("B200-180GB") : NULL;
    if (has_word(&w, "GB200"))
        return gb == 0 || gb == 186 ? model_by_id("GB200-186GB") : NULL;
    return NULL;
}

const struct gp_mig_model *gp_mig_model_by_pci(uint32_t pci_id)
{
    for (size_t i = 0; i < gp_mig_nmodels; i++)
        for (size_t j = 0; j < gp_mig_models[i].npci_ids; j++)
            if (gp_mig_models[i].pci_ids[j] == pci_id)
                return &gp_mig_models[i];
    return NULL;
}

int gp_mig_profile_find(const struct gp_mig_model *m, const char *name)
{
    if (!m || !name)
        return -1;
    for (size_t i = 0; i < m->nprofiles; i++)
        if (strcmp(m->profiles[i].name, name) == 0)
            return (int)i;
    return -1;
}

int gp_mig_profile_by_resource(const struct gp_mig_model *m, const char *resource)
{
    static const char prefix[] = "nvidia.com/mig-";
    if (!resource || strncmp(resource, prefix, sizeof prefix - 1) != 0)
        return -1;
    return gp_mig_profile_find(m, resource + sizeof prefix - 1);
}

/* --- layouts ------------------------------------------------------------- */

static uint32_t span(const struct gp_mig_profile *p, unsigned start)
{
    return ((UINT32_C(1) << p->memory_slices) - 1) << start;
}

/* The valid starts of a profile as "0, 4" for messages. */
static const char *starts_text(const struct gp_mig_profile *p, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned s = 0; s < GP_MIG_MAX_SLICES && o < size; s++) {
        if (!(p->start_mask & (1u << s)))
            continue;
        int w = snprintf(buf + o, size - o, "%s%u", o ? ", " : "", s);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    return buf;
}

static bool fail(char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(char *why, size_t size, const char *fmt, ...)
{
    if (why && size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
    }
    return false;
}

bool gp_mig_layout_valid(const struct gp_mig_model *m, const struct gp_mig_layout *l, char *why,
                         size_t why_size)
{
    if (l->n > GP_MIG_MAX_INSTANCES)
        return fail(why, why_size, "%u instances, more than %d", l->n, GP_MIG_MAX_INSTANCES);
    unsigned count[GP_MIG_MAX_PROFILES] = {0};
    uint32_t used = 0;
    unsigned compute = 0, media = 0;
    for (unsigned i = 0; i < l->n; i++) {
        const struct gp_mig_instance *in = &l->inst[i];
        if (in->profile >= m->nprofiles)
            return fail(why, why_size, "instance %u: no profile %u on %s", i, in->profile, m->id);
        const struct gp_mig_profile *p = &m->profiles[in->profile];
        char buf[48];
        if (in->start >= GP_MIG_MAX_SLICES || !(p->start_mask & (1u << in->start)))
            return fail(why, why_size, "%s at slice %u: not a valid start (valid: %s)", p->name,
                        in->start, starts_text(p, buf, sizeof buf));
        uint32_t s = span(p, in->start);
        if (used & s) {
            for (unsigned j = 0; j < i; j++) {
                const struct gp_mig_profile *q = &m->profiles[l->inst[j].profile];
                if (span(q, l->inst[j].start) & s)
                    return fail(why, why_size, "%s at slice %u overlaps %s at slice %u", p->name,
                                in->start, q->name, l->inst[j].start);
            }
        }
        used |= s;
        compute += p->compute_slices;
        if (++count[in->profile] > p->max_instances)
            return fail(why, why_size, "%u instances of %s, at most %u on %s", count[in->profile],
                        p->name, p->max_instances, m->id);
        if (p->media_ext && ++media > 1)
            return fail(why, why_size, "%u +me instances, at most one per GPU", media);
    }
    if (compute > m->compute_slices)
        return fail(why, why_size, "%u compute slices, %s has %u", compute, m->id,
                    m->compute_slices);
    if (why && why_size)
        why[0] = '\0';
    return true;
}

uint32_t gp_mig_used_slices(const struct gp_mig_model *m, const struct gp_mig_layout *l)
{
    uint32_t used = 0;
    for (unsigned i = 0; i < l->n && i < GP_MIG_MAX_INSTANCES; i++)
        if (l->inst[i].profile < m->nprofiles)
            used |= span(&m->profiles[l->inst[i].profile], l->inst[i].start);
    return used;
}

unsigned gp_mig_used_compute(const struct gp_mig_model *m, const struct gp_mig_layout *l)
{
    unsigned c = 0;
    for (unsigned i = 0; i < l->n && i < GP_MIG_MAX_INSTANCES; i++)
        if (l->inst[i].profile < m->nprofiles)
            c += m->profiles[l->inst[i].profile].compute_slices;
    return c;
}

/* What adding instances needs to know about a layout. */
struct occupancy {
    uint32_t used;    /* memory slices */
    unsigned compute; /* compute slices */
    unsigned media;   /* +me instances */
    unsigned count[GP_MIG_MAX_PROFILES];
    unsigned n;
};

static void occupancy_of(const struct gp_mig_model *m, const struct gp_mig_layout *l,
                         struct occupancy *o)
{
    memset(o, 0, sizeof *o);
    for (unsigned i = 0; i < l->n && i < GP_MIG_MAX_INSTANCES; i++) {
        unsigned pi = l->inst[i].profile;
        if (pi >= m->nprofiles)
            continue;
        const struct gp_mig_profile *p = &m->profiles[pi];
        o->used |= span(p, l->inst[i].start);
        o->compute += p->compute_slices;
        o->media += p->media_ext;
        o->count[pi]++;
        o->n++;
    }
}

static void occupy(const struct gp_mig_model *m, struct occupancy *o, unsigned pi, unsigned start,
                   int sign)
{
    const struct gp_mig_profile *p = &m->profiles[pi];
    if (sign > 0)
        o->used |= span(p, start);
    else
        o->used &= ~span(p, start);
    o->compute = (unsigned)((int)o->compute + sign * p->compute_slices);
    o->media = (unsigned)((int)o->media + sign * p->media_ext);
    o->count[pi] = (unsigned)((int)o->count[pi] + sign);
    o->n = (unsigned)((int)o->n + sign);
}

static bool fits(const struct gp_mig_model *m, const struct occupancy *o, unsigned pi,
                 unsigned start)
{
    const struct gp_mig_profile *p = &m->profiles[pi];
    return start < GP_MIG_MAX_SLICES && (p->start_mask & (1u << start)) &&
           !(o->used & span(p, start)) && o->compute + p->compute_slices <= m->compute_slices &&
           o->count[pi] < p->max_instances && !(p->media_ext && o->media > 0) &&
           o->n < GP_MIG_MAX_INSTANCES;
}

bool gp_mig_fits(const struct gp_mig_model *m, const struct gp_mig_layout *l, unsigned p,
                 unsigned start)
{
    if (p >= m->nprofiles)
        return false;
    struct occupancy o;
    occupancy_of(m, l, &o);
    return fits(m, &o, p, start);
}

/* Instances of one profile alone that still fit: taking valid starts from
 * the lowest is optimal, because every instance has the same size (the
 * earliest-ending interval first). */
static unsigned capacity(const struct gp_mig_model *m, const struct occupancy *o, unsigned pi)
{
    struct occupancy t = *o;
    unsigned k = 0;
    for (unsigned s = 0; s < GP_MIG_MAX_SLICES; s++) {
        if (fits(m, &t, pi, s)) {
            occupy(m, &t, pi, s, +1);
            k++;
        }
    }
    return k;
}

unsigned gp_mig_capacity(const struct gp_mig_model *m, const struct gp_mig_layout *l, unsigned p)
{
    if (p >= m->nprofiles)
        return 0;
    struct occupancy o;
    occupancy_of(m, l, &o);
    return capacity(m, &o, p);
}

/* The profiles from the largest to the smallest: memory slices, then
 * compute slices, then the data's order. */
static void by_size(const struct gp_mig_model *m, unsigned order[GP_MIG_MAX_PROFILES])
{
    size_t n = m->nprofiles;
    for (size_t i = 0; i < n; i++)
        order[i] = (unsigned)i;
    for (size_t i = 1; i < n; i++) { /* insertion sort: stable */
        unsigned x = order[i];
        const struct gp_mig_profile *px = &m->profiles[x];
        size_t j = i;
        while (j > 0) {
            const struct gp_mig_profile *py = &m->profiles[order[j - 1]];
            bool larger =
                px->memory_slices > py->memory_slices ||
                (px->memory_slices == py->memory_slices && px->compute_slices > py->compute_slices);
            if (!larger)
                break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
}

/* The room a layout keeps, largest profile first, for comparing starts. */
static void room(const struct gp_mig_model *m, const struct occupancy *o,
                 const unsigned order[GP_MIG_MAX_PROFILES], unsigned out[GP_MIG_MAX_PROFILES])
{
    for (size_t i = 0; i < m->nprofiles; i++)
        out[i] = capacity(m, o, order[i]);
}

/* True when room vector a keeps more for the larger profiles than b. */
static bool more_room(const struct gp_mig_model *m, const unsigned *a, const unsigned *b)
{
    for (size_t k = 0; k < m->nprofiles; k++)
        if (a[k] != b[k])
            return a[k] > b[k];
    return false;
}

/* The starts where profile pi fits, best first by the placement rule
 * (equal room: the lower start first). */
static unsigned ranked_starts(const struct gp_mig_model *m, const struct occupancy *o, unsigned pi,
                              unsigned starts[GP_MIG_MAX_SLICES])
{
    unsigned order[GP_MIG_MAX_PROFILES];
    unsigned rooms[GP_MIG_MAX_SLICES][GP_MIG_MAX_PROFILES];
    unsigned n = 0;
    by_size(m, order);
    for (unsigned s = 0; s < GP_MIG_MAX_SLICES; s++) {
        if (!fits(m, o, pi, s))
            continue;
        struct occupancy t = *o;
        occupy(m, &t, pi, s, +1);
        unsigned r[GP_MIG_MAX_PROFILES];
        room(m, &t, order, r);
        unsigned j = n;
        while (j > 0 && more_room(m, r, rooms[j - 1])) {
            memcpy(rooms[j], rooms[j - 1], sizeof r);
            starts[j] = starts[j - 1];
            j--;
        }
        memcpy(rooms[j], r, sizeof r);
        starts[j] = s;
        n++;
    }
    return n;
}

int gp_mig_place(const struct gp_mig_model *m, const struct gp_mig_layout *l, unsigned p)
{
    if (p >= m->nprofiles)
        return -1;
    struct occupancy o;
    occupancy_of(m, l, &o);
    unsigned starts[GP_MIG_MAX_SLICES];
    return ranked_starts(m, &o, p, starts) > 0 ? (int)starts[0] : -1;
}

int gp_mig_add(const struct gp_mig_model *m, struct gp_mig_layout *l, unsigned p)
{
    int s = gp_mig_place(m, l, p);
    if (s < 0 || l->n >= GP_MIG_MAX_INSTANCES)
        return -1;
    l->inst[l->n].profile = (uint8_t)p;
    l->inst[l->n].start = (uint8_t)s;
    return l->n++;
}

void gp_mig_remove(struct gp_mig_layout *l, unsigned i)
{
    if (i >= l->n)
        return;
    memmove(&l->inst[i], &l->inst[i + 1], (l->n - i - 1) * sizeof l->inst[0]);
    l->n--;
}

uint32_t gp_mig_free_profiles(const struct gp_mig_model *m, const struct gp_mig_layout *l)
{
    struct occupancy o;
    occupancy_of(m, l, &o);
    uint32_t mask = 0;
    for (unsigned p = 0; p < m->nprofiles; p++)
        for (unsigned s = 0; s < GP_MIG_MAX_SLICES; s++)
            if (fits(m, &o, p, s)) {
                mask |= UINT32_C(1) << p;
                break;
            }
    return mask;
}

void gp_mig_layout_counts(const struct gp_mig_model *m, const struct gp_mig_layout *l,
                          struct gp_mig_counts *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < l->n && i < GP_MIG_MAX_INSTANCES; i++)
        if (l->inst[i].profile < m->nprofiles && out->n[l->inst[i].profile] < UINT8_MAX)
            out->n[l->inst[i].profile]++;
}

/* The search behind gp_mig_layout_from_counts: instance k of the list
 * (largest first) tries its starts best first, so the first layout found
 * is the one gp_mig_place would build when that one works. The slices in
 * use after k instances decide whether the rest can be placed, so a
 * (k, slices) pair that failed once is not tried again: at most
 * 9 x 256 states, whatever the counts. */
struct search {
    const struct gp_mig_model *m;
    /* the profile of each instance to place: at most max_instances (<= 8)
     * of each profile; only the first 8 can ever be placed */
    uint8_t list[GP_MIG_MAX_PROFILES * GP_MIG_MAX_INSTANCES];
    unsigned n;
    struct gp_mig_layout *out;
    unsigned deepest; /* the furthest instance that found no start */
    bool greedy;      /* only the best start of each instance (no backtracking) */
    uint8_t failed[GP_MIG_MAX_INSTANCES + 1][(1u << GP_MIG_MAX_SLICES) / 8];
};

static bool place_from(struct search *s, struct occupancy *o, unsigned k)
{
    if (k == s->n)
        return true;
    if (k >= GP_MIG_MAX_INSTANCES) { /* a full GPU */
        s->deepest = k;
        return false;
    }
    uint32_t used = o->used & ((1u << GP_MIG_MAX_SLICES) - 1);
    if (s->failed[k][used / 8] & (1u << (used % 8)))
        return false;
    unsigned pi = s->list[k];
    unsigned starts[GP_MIG_MAX_SLICES];
    unsigned n = ranked_starts(s->m, o, pi, starts);
    for (unsigned i = 0; i < n; i++) {
        occupy(s->m, o, pi, starts[i], +1);
        s->out->inst[k].profile = (uint8_t)pi;
        s->out->inst[k].start = (uint8_t)starts[i];
        if (place_from(s, o, k + 1))
            return true;
        occupy(s->m, o, pi, starts[i], -1);
        if (s->greedy)
            break;
    }
    if (n == 0 && k > s->deepest)
        s->deepest = k;
    s->failed[k][used / 8] |= (uint8_t)(1u << (used % 8));
    return false;
}

bool gp_mig_layout_from_counts(const struct gp_mig_model *m, const struct gp_mig_counts *counts,
                               struct gp_mig_layout *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    unsigned total = 0, compute = 0, memory = 0;
    for (unsigned p = 0; p < GP_MIG_MAX_PROFILES; p++) {
        unsigned c = counts->n[p];
        if (c == 0)
            continue;
        if (p >= m->nprofiles)
            return fail(why, why_size, "no profile %u on %s", p, m->id);
        const struct gp_mig_profile *pr = &m->profiles[p];
        if (c > pr->max_instances || c > GP_MIG_MAX_INSTANCES)
            return fail(why, why_size, "\"%s\": %u instances, at most %u on %s", pr->name, c,
                        pr->max_instances, m->id);
        total += c;
        compute += c * pr->compute_slices;
        memory += c * pr->memory_slices;
    }
    struct search s;
    memset(&s, 0, sizeof s);
    s.m = m;
    s.out = out;
    unsigned order[GP_MIG_MAX_PROFILES];
    by_size(m, order);
    for (size_t i = 0; i < m->nprofiles; i++)
        for (unsigned c = 0; c < counts->n[order[i]]; c++)
            s.list[s.n++] = (uint8_t)order[i];
    /* too many slices in all: no search, only the greedy pass that finds
     * the profile to name */
    s.greedy =
        memory > m->memory_slices || compute > m->compute_slices || total > GP_MIG_MAX_INSTANCES;
    struct occupancy o;
    memset(&o, 0, sizeof o);
    if (place_from(&s, &o, 0)) {
        out->n = (uint8_t)s.n;
        return true;
    }
    memset(out, 0, sizeof *out);
    /* name the profile whose instance found no room, and why if simple */
    const struct gp_mig_profile *pr = &m->profiles[s.list[s.deepest]];
    unsigned nth = 1;
    for (unsigned k = 0; k < s.deepest; k++)
        nth += s.list[k] == s.list[s.deepest];
    char extra[96] = "";
    if (memory > m->memory_slices)
        snprintf(extra, sizeof extra, ": the layout needs %u memory slices, %s has %u", memory,
                 m->id, m->memory_slices);
    else if (compute > m->compute_slices)
        snprintf(extra, sizeof extra, ": the layout needs %u compute slices, %s has %u", compute,
                 m->id, m->compute_slices);
    else
        snprintf(extra, sizeof extra, " on %s", m->id);
    return fail(why, why_size, "\"%s\": no room for instance %u of %u beside the larger ones%s",
                pr->name, nth, counts->n[s.list[s.deepest]], extra);
}

bool gp_mig_named_config(const struct gp_mig_model *m, const char *name, struct gp_mig_counts *out,
                         bool *mig_enabled)
{
    memset(out, 0, sizeof *out);
    *mig_enabled = true;
    if (!name || strncmp(name, "all-", 4) != 0)
        return false;
    const char *rest = name + 4;
    if (strcmp(rest, "disabled") == 0) {
        *mig_enabled = false;
        return true;
    }
    if (strcmp(rest, "enabled") == 0)
        return true;
    if (strcmp(rest, "balanced") == 0) {
        int one = -1, two = -1, three = -1;
        for (size_t i = 0; i < m->nprofiles; i++) {
            const struct gp_mig_profile *p = &m->profiles[i];
            if (p->media_ext)
                continue;
            if (one < 0 && p->compute_slices == 1 && p->memory_slices == 1)
                one = (int)i;
            if (two < 0 && p->compute_slices == 2)
                two = (int)i;
            if (three < 0 && p->compute_slices == 3)
                three = (int)i;
        }
        if (one < 0 || two < 0)
            return false;
        out->n[one] = 2;
        out->n[two] = 1;
        if (three >= 0)
            out->n[three] = 1;
        return true;
    }
    /* all-1g.10gb, all-1g.10gb.me (for 1g.10gb+me) */
    char profile[32];
    size_t len = strlen(rest);
    if (len >= sizeof profile)
        return false;
    memcpy(profile, rest, len + 1);
    if (len > 3 && strcmp(profile + len - 3, ".me") == 0)
        profile[len - 3] = '+';
    int p = gp_mig_profile_find(m, profile);
    if (p < 0)
        return false;
    out->n[p] = m->profiles[p].max_instances;
    return true;
}

const char *gp_mig_layout_format(const struct gp_mig_model *m, const struct gp_mig_layout *l,
                                 char *buf, size_t size)
{
    size_t o = 0;
    if (size == 0)
        return buf;
    buf[0] = '\0';
    for (unsigned i = 0; i < l->n && i < GP_MIG_MAX_INSTANCES && o < size; i++) {
        const char *name =
            l->inst[i].profile < m->nprofiles ? m->profiles[l->inst[i].profile].name : "?";
        int w = snprintf(buf + o, size - o, "%s%s@%u", i ? " " : "", name, l->inst[i].start);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    return buf;
}
