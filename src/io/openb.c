/* openb.c - readers for the Alibaba openb GPU-sharing trace (the FGD paper's
 * cluster-trace-gpu-v2023): the node list (sn,cpu_milli,memory_mib,gpu,
 * model) as a gp_cluster with one pool per node shape, and the pod list
 * (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
 * creation_time,deletion_time,scheduled_time; the multigpu files have only
 * the first five) as pod items, from a file read in pieces. For a static
 * run (gp_workload.static_only) a pod list keeps one item per distinct pod
 * and the rows' order (struct gp_trace). Columns are matched by header
 * name. docs/FORMATS.md describes the mapping. */
#include "io/cluster.h"
#include "io/csv.h"
#include "io/workload.h"
#include "util/fs.h"
#include "util/vec.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define OPENB_MAX_CPU_MILLI 1000000000LL /* a million cores */
#define OPENB_MAX_MEM_MIB   1000000000LL /* about 954 TiB */
#define OPENB_MAX_TIME_S    1e12         /* about 31,700 years */
#define OPENB_MAX_MODEL_LEN 63           /* a Kubernetes label value */

/* Per-GPU memory of the models whose memory is public. G2 and G3 are
 * undisclosed internal codes: 0 (unknown). */
static const struct {
    const char *model;
    uint32_t mem_mib;
} openb_gpu_mem[] = {
    {"T4", 16384}, {"P100", 16384}, {"V100M16", 16384}, {"V100M32", 32768}, {"A10", 24576},
};

static uint32_t openb_model_mem(const char *model)
{
    for (size_t i = 0; i < sizeof openb_gpu_mem / sizeof openb_gpu_mem[0]; i++)
        if (strcmp(openb_gpu_mem[i].model, model) == 0)
            return openb_gpu_mem[i].mem_mib;
    return 0;
}

/* A GPU model name must be usable as a label value: 1..63 of [A-Za-z0-9._-]. */
static bool openb_model_ok(const char *s, size_t n)
{
    if (n == 0 || n > OPENB_MAX_MODEL_LEN)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '-'))
            return false;
    }
    return true;
}

/* "96c" for 96000, "1500m" for 1500; "384gi" for 393216, "1000mi" otherwise. */
static void openb_shape_suffix(int64_t cpu_milli, int64_t mem_mib, char *out, size_t n)
{
    char cpu[32], mem[32];
    if (cpu_milli % 1000 == 0)
        snprintf(cpu, sizeof cpu, "%" PRId64 "c", cpu_milli / 1000);
    else
        snprintf(cpu, sizeof cpu, "%" PRId64 "m", cpu_milli);
    if (mem_mib % 1024 == 0)
        snprintf(mem, sizeof mem, "%" PRId64 "gi", mem_mib / 1024);
    else
        snprintf(mem, sizeof mem, "%" PRId64 "mi", mem_mib);
    snprintf(out, n, "-%s-%s", cpu, mem);
}

enum gp_err gp_cluster_parse_openb(const char *text, size_t len, const char *name,
                                   struct gp_arena *a, struct gp_cluster *out, struct gp_diag *diag)
{
    enum { C_SN, C_CPU, C_MEM, C_GPU, C_MODEL, C_N };
    static const struct gp_csv_col cols[C_N] = {
        {"sn", true}, {"cpu_milli", true}, {"memory_mib", true}, {"gpu", true}, {"model", false},
    };
    struct gp_csv c;
    struct gp_csv_map names = {0}, shapes = {0}, bases = {0}, pool_names = {0};
    GP_VEC(struct gp_node_spec) nodes = {0};
    GP_VEC(uint32_t) node_pool = {0};
    GP_VEC(struct gp_pool_spec) pools = {0};
    GP_VEC(uint32_t) pool_base = {0};   /* per pool: index into base_shapes */
    GP_VEC(uint32_t) base_shapes = {0}; /* per (model, gpus): how many shapes */
    GP_VEC(struct gp_kv *) pool_labels = {0};
    int idx[C_N];
    bool got;
    enum gp_err err;

    if (!name)
        name = "<openb>";
    gp_csv_init(&c, text, len, name);
    err = gp_csv_header(&c, cols, C_N, 0, idx, diag);
    if (err != GP_OK)
        goto out;
    while ((err = gp_csv_next(&c, &got, diag)) == GP_OK && got) {
        struct gp_node_spec n = {0};
        int64_t cpu, mem, gpus;
        const char *sn = gp_csv_field(&c, idx[C_SN]);
        if (!*sn) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[C_SN], "sn", "a node name", diag);
            goto out;
        }
        if ((err = gp_csv_int(&c, idx[C_CPU], "cpu_milli", 0, OPENB_MAX_CPU_MILLI, &cpu, diag)) ||
            (err = gp_csv_int(&c, idx[C_MEM], "memory_mib", 0, OPENB_MAX_MEM_MIB, &mem, diag)) ||
            (err = gp_csv_int(&c, idx[C_GPU], "gpu", 0, GP_MAX_GPUS_PER_NODE, &gpus, diag)))
            goto out;
        const char *model = gp_csv_field(&c, idx[C_MODEL]);
        if (gpus == 0) {
            model = ""; /* a model on a CPU-only node means nothing */
        } else if (!openb_model_ok(model, strlen(model))) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[C_MODEL], "model",
                             "a GPU model name (1-63 of A-Z a-z 0-9 . _ -) for a node with GPUs",
                             diag);
            goto out;
        }
        if ((err = gp_csv_unique_name(&c, &names, a, sn, "sn", "node", "defined", &n.name, diag)) !=
            GP_OK)
            goto out;
        bool found; /* the map lookups below only insert */
        n.cpu_milli = cpu;
        n.mem_mib = mem;
        n.gpu_count = (uint32_t)gpus;
        n.gpu_mem_mib = openb_model_mem(model);

        /* the node's shape, and its pool */
        char key[OPENB_MAX_MODEL_LEN + 80];
        snprintf(key, sizeof key, "%s|%" PRId64 "|%" PRId64 "|%" PRId64, model, gpus, cpu, mem);
        uint32_t pi;
        if (!gp_csv_map_get(&shapes, key, &pi)) {
            struct gp_pool_spec p = {0};
            const char *k = gp_arena_strdup(a, key);
            p.gpu_model = *model ? gp_arena_strdup(a, model) : NULL;
            p.gpus_per_node = (uint32_t)gpus;
            p.gpu_mem_mib = n.gpu_mem_mib;
            p.cpu_milli = cpu;
            p.mem_mib = mem;
            pi = (uint32_t)pools.len;
            /* how many shapes share this (model, gpus): decides the names */
            char bkey[OPENB_MAX_MODEL_LEN + 24];
            snprintf(bkey, sizeof bkey, "%s|%" PRId64, model, gpus);
            uint32_t bi;
            const char *bk = NULL;
            if (!gp_csv_map_get(&bases, bkey, &bi)) {
                bi = (uint32_t)base_shapes.len;
                bk = gp_arena_strdup(a, bkey);
                if (!bk || GP_VEC_PUSH(&base_shapes, 0) != 0 ||
                    gp_csv_map_put(&bases, bk, bi, &found, &bi) != GP_OK) {
                    err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
                    goto out;
                }
            }
            base_shapes.items[bi]++;
            if (!k || (*model && !p.gpu_model) || GP_VEC_PUSH(&pools, p) != 0 ||
                GP_VEC_PUSH(&pool_base, bi) != 0 ||
                gp_csv_map_put(&shapes, k, pi, &found, &pi) != GP_OK) {
                err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
                goto out;
            }
        }
        pools.items[pi].count++;
        n.gpu_model = pools.items[pi].gpu_model;
        if (GP_VEC_PUSH(&nodes, n) != 0 || GP_VEC_PUSH(&node_pool, pi) != 0) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            goto out;
        }
    }
    if (err != GP_OK)
        goto out;
    if (nodes.len == 0) {
        err = gp_diag_set(diag, GP_EINVALID,
                          "%s: no nodes, expected at least one row after the header", name);
        goto out;
    }

    /* pool names: openb-<model>-<n>gpu (openb-cpu for CPU-only nodes), with
     * -<cores>c-<memory>gi added when that name covers several shapes */
    for (size_t i = 0; i < pools.len; i++) {
        struct gp_pool_spec *p = &pools.items[i];
        char suffix[80] = "";
        if (base_shapes.items[pool_base.items[i]] > 1)
            openb_shape_suffix(p->cpu_milli, p->mem_mib, suffix, sizeof suffix);
        char *pname = p->gpu_model ? gp_arena_printf(a, "openb-%s-%" PRIu32 "gpu%s", p->gpu_model,
                                                     p->gpus_per_node, suffix)
                                   : gp_arena_printf(a, "openb-cpu%s", suffix);
        /* only a contrived model name can make two names collide: number them */
        const char *base = pname;
        for (unsigned k = 2; pname; k++) {
            bool found;
            uint32_t other;
            if (gp_csv_map_put(&pool_names, pname, (uint32_t)i, &found, &other) != GP_OK)
                pname = NULL;
            else if (found)
                pname = gp_arena_printf(a, "%s-%u", base, k);
            else
                break;
        }
        struct gp_kv *labels = gp_arena_alloc(a, 2 * sizeof *labels);
        if (!pname || !labels || GP_VEC_PUSH(&pool_labels, labels) != 0) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            goto out;
        }
        p->name = pname;
        labels[0].key = "gpuplane.io/pool";
        labels[0].value = pname;
        labels[1].key = "nvidia.com/gpu.product";
        labels[1].value = p->gpu_model;
    }
    /* the nodes carry the labels; a pool's own labels are user labels */
    for (size_t j = 0; j < nodes.len; j++) {
        const struct gp_pool_spec *p = &pools.items[node_pool.items[j]];
        nodes.items[j].pool = p->name;
        nodes.items[j].labels = pool_labels.items[node_pool.items[j]];
        nodes.items[j].nlabels = p->gpu_model ? 2 : 1;
    }

    out->name = "openb";
    out->source = gp_arena_strdup(a, name);
    out->pools = gp_arena_memdup(a, pools.items, pools.len * sizeof *pools.items);
    out->npools = pools.len;
    out->nodes = gp_arena_memdup(a, nodes.items, nodes.len * sizeof *nodes.items);
    out->nnodes = nodes.len;
    if (!out->source || !out->pools || !out->nodes) {
        memset(out, 0, sizeof *out);
        err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
    }
out:
    gp_csv_free(&c);
    gp_csv_map_free(&names);
    gp_csv_map_free(&shapes);
    gp_csv_map_free(&bases);
    gp_csv_map_free(&pool_names);
    GP_VEC_FREE(&nodes);
    GP_VEC_FREE(&node_pool);
    GP_VEC_FREE(&pools);
    GP_VEC_FREE(&pool_base);
    GP_VEC_FREE(&base_shapes);
    GP_VEC_FREE(&pool_labels);
    return err;
}

/* The distinct model names of a row's gpu_spec ("A|B"), in the order
 * written, as spans of the current field: the row's pod whatever memory it
 * ends up in. An empty spec (or only separators) is "any model": 0. */
struct openb_models {
    const char *name[GP_MAX_GPU_MODELS];
    size_t len[GP_MAX_GPU_MODELS];
    size_t n;
};

static enum gp_err openb_gpu_spec(const struct gp_csv *c, int idx, struct openb_models *m,
                                  struct gp_diag *diag)
{
    const char *s = gp_csv_field(c, idx);
    m->n = 0;
    for (const char *p = s; *p;) {
        const char *e = strchr(p, '|');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        while (l && (*p == ' ' || *p == '\t')) {
            p++;
            l--;
        }
        while (l && (p[l - 1] == ' ' || p[l - 1] == '\t'))
            l--;
        if (l) {
            if (!openb_model_ok(p, l))
                return gp_csv_bad(c, GP_EINVALID, idx, "gpu_spec",
                                  "GPU model names (A-Z a-z 0-9 . _ -) separated by '|'", diag);
            bool dup = false;
            for (size_t i = 0; i < m->n && !dup; i++)
                dup = m->len[i] == l && memcmp(m->name[i], p, l) == 0;
            if (!dup) {
                if (m->n == GP_MAX_GPU_MODELS)
                    return gp_csv_bad(c, GP_EINVALID, idx, "gpu_spec",
                                      "at most 64 distinct GPU models", diag);
                m->name[m->n] = p;
                m->len[m->n++] = l;
            }
        }
        if (!e)
            break;
        p = e + 1;
    }
    return GP_OK;
}

/* The models as an arena array of strings (NULL for none); false when out
 * of memory. */
static bool openb_models_copy(const struct openb_models *m, struct gp_arena *a,
                              const char *const **out)
{
    *out = NULL;
    if (m->n == 0)
        return true;
    const char **v = gp_arena_alloc(a, m->n * sizeof *v);
    if (!v)
        return false;
    for (size_t i = 0; i < m->n; i++)
        if (!(v[i] = gp_arena_strndup(a, m->name[i], m->len[i])))
            return false;
    *out = v;
    return true;
}

/* The key of a row's pod for the static mode: every field of the pod it
 * makes but its name (the models in their order: the engine numbers them
 * in the order it meets them). false when it does not fit (never: 64
 * models of 63 bytes). */
#define OPENB_KEY_MAX (GP_MAX_GPU_MODELS * (OPENB_MAX_MODEL_LEN + 1) + 96)
static bool openb_pod_key(int64_t cpu, int64_t mem, int64_t ngpu, int64_t milli,
                          const struct openb_models *m, char *key, size_t cap)
{
    int n =
        snprintf(key, cap, "%" PRId64 "|%" PRId64 "|%" PRId64 "|%" PRId64, cpu, mem, ngpu, milli);
    size_t at = n > 0 ? (size_t)n : cap;
    for (size_t i = 0; i < m->n && at < cap; i++) {
        if (at + 1 + m->len[i] >= cap)
            return false;
        key[at++] = '|';
        memcpy(key + at, m->name[i], m->len[i]);
        at += m->len[i];
        key[at] = '\0';
    }
    return at < cap;
}

/* A static-only read's rows: the item of each row (less the file's first),
 * and the items by pod key. */
struct openb_rows {
    struct gp_csv_map pods; /* key (in the arena) -> item less the first */
    uint32_t *row_items;    /* in the arena, grown with gp_arena_grow */
    size_t nrows, cap;
};

static enum gp_err openb_row_push(struct openb_rows *rs, struct gp_arena *a, uint32_t item)
{
    if (rs->nrows == rs->cap) {
        size_t cap = rs->cap ? 2 * rs->cap : 1024;
        if (cap > SIZE_MAX / sizeof *rs->row_items)
            return GP_ENOMEM;
        uint32_t *v = gp_arena_grow(a, rs->row_items, rs->cap * sizeof *v, cap * sizeof *v);
        if (!v)
            return GP_ENOMEM;
        rs->row_items = v;
        rs->cap = cap;
    }
    rs->row_items[rs->nrows++] = item;
    return GP_OK;
}

/* Records the file's rows as a trace of w (workload.h). */
static enum gp_err openb_trace_add(struct gp_workload *w, struct gp_arena *a, size_t first,
                                   const struct openb_rows *rs)
{
    if (w->ntraces == w->traces_cap) {
        size_t cap = w->traces_cap ? 2 * w->traces_cap : 4;
        struct gp_trace *t =
            gp_arena_grow(a, w->traces, w->traces_cap * sizeof *t, cap * sizeof *t);
        if (!t)
            return GP_ENOMEM;
        w->traces = t;
        w->traces_cap = cap;
    }
    w->traces[w->ntraces++] = (struct gp_trace){first, w->nitems - first, rs->row_items, rs->nrows};
    return GP_OK;
}

/* An optional time column: -1 when the column or the value is absent. */
static enum gp_err openb_time(const struct gp_csv *c, int idx, const char *col, double *out,
                              struct gp_diag *diag)
{
    *out = -1;
    if (!*gp_csv_field(c, idx))
        return GP_OK;
    return gp_csv_number(c, idx, col, 0, OPENB_MAX_TIME_S, out, diag);
}

/* ---- a pod list file read in pieces ------------------------------------- */

/* The tokenizer borrows its text and keeps nothing of it between records
 * but its cursor, so a file can be given to it in pieces, each ending where
 * a record ends: after a line feed outside quotes (an even number of quotes
 * since the piece began: a record the tokenizer accepts has an even
 * number, and a newline inside a quoted field follows an odd one). A piece
 * also holds at least one byte that is not a blank or a line end, so that
 * the header is in the first one. A file without such a line feed (CR line
 * ends, an unbalanced quote) is read on into one piece, at worst the rest
 * of the file, as the whole-text reader would hold it. */
struct openb_pieces {
    FILE *f;
    char *buf; /* malloc'd */
    size_t len, cap;
    size_t given;   /* bytes of buf the tokenizer has had */
    size_t scanned; /* bytes of buf looked at for the piece's end */
    size_t cut;     /* where the piece can end (0: not found yet) */
    bool odd;       /* an odd number of quotes in buf[0 .. scanned) */
    bool content;   /* a byte that is not blank or a line end in it */
    bool eof;
    size_t bom;          /* 3 when the file starts with a UTF-8 byte order mark */
    uint64_t total, max; /* bytes read; the input limit */
};

static size_t piece_bytes = (size_t)1 << 20;

void gp_workload_set_openb_piece(size_t bytes)
{
    piece_bytes = bytes ? bytes : (size_t)1 << 20;
}

/* Whether the byte at the scan is one of a byte order mark at the start of
 * the file (not content: gp_csv_init skips it). */
static bool bom_byte(const struct openb_pieces *s, char ch)
{
    uint64_t at = s->total - s->len + s->scanned; /* its offset in the file */
    return at < 3 && ch == "\xEF\xBB\xBF"[at];
}

static void pieces_scan(struct openb_pieces *s)
{
    for (; s->scanned < s->len; s->scanned++) {
        char ch = s->buf[s->scanned];
        if (ch == '"')
            s->odd = !s->odd;
        else if (ch == '\n' && !s->odd && s->content)
            s->cut = s->scanned + 1;
        else if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n' && !bom_byte(s, ch))
            s->content = true;
    }
}

/* The next piece (*n == 0: the end of the file). GP_ELIMIT when the file
 * has grown past the input limit while it was read; GP_EIO, GP_ENOMEM. */
static enum gp_err pieces_next(struct openb_pieces *s, const char *path, const char **text,
                               size_t *n, struct gp_diag *diag)
{
    if (s->given) /* buf is NULL before the first piece */
        memmove(s->buf, s->buf + s->given, s->len - s->given);
    s->len -= s->given;
    s->given = s->scanned = s->cut = 0;
    s->odd = s->content = false;
    pieces_scan(s);
    while (!s->cut && !s->eof) {
        if (s->cap - s->len < piece_bytes) {
            if (s->cap > SIZE_MAX / 2 - piece_bytes)
                return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", path);
            size_t cap = s->cap < piece_bytes ? 2 * piece_bytes : 2 * s->cap;
            /* a file with no cut is read on whole: no more room than the
             * limit's (the file is at most that; len <= max) */
            if (s->max < SIZE_MAX / 4 && cap > s->max + 2 * piece_bytes)
                cap = (size_t)s->max + 2 * piece_bytes;
            char *b = realloc(s->buf, cap);
            if (!b)
                return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", path);
            s->buf = b;
            s->cap = cap;
        }
        size_t r = fread(s->buf + s->len, 1, piece_bytes, s->f);
        if (r == 0 && ferror(s->f))
            return gp_diag_set(diag, GP_EIO, "%s: read error", path);
        s->eof = r == 0;
        s->len += r;
        s->total += r;
        if (s->total > s->max)
            return GP_ELIMIT;
        pieces_scan(s);
    }
    s->given = s->cut ? s->cut : s->len;
    *text = s->buf;
    *n = s->given;
    return GP_OK;
}

/* The next record of c, from the next piece when this one is done. */
static enum gp_err next_record(struct gp_csv *c, struct openb_pieces *s, bool *got,
                               struct gp_diag *diag)
{
    for (;;) {
        enum gp_err err = gp_csv_next(c, got, diag);
        if (err != GP_OK || *got || !s)
            return err;
        const char *text;
        size_t n;
        if ((err = pieces_next(s, c->name, &text, &n, diag)) != GP_OK || n == 0)
            return err;
        c->p = text;
        c->end = text + n;
    }
}

/* A pod list from text (s NULL) or from the pieces of a file (text the
 * first). */
static enum gp_err parse_pods(const char *text, size_t len, struct openb_pieces *src,
                              const char *name, struct gp_arena *a, struct gp_workload *w,
                              struct gp_diag *diag)
{
    enum {
        C_NAME,
        C_CPU,
        C_MEM,
        C_NGPU,
        C_MILLI,
        C_SPEC,
        C_QOS,
        C_PHASE,
        C_CREATE,
        C_DELETE,
        C_SCHED,
        C_N
    };
    static const struct gp_csv_col cols[C_N] = {
        {"name", false},          {"cpu_milli", true},       {"memory_mib", true},
        {"num_gpu", true},        {"gpu_milli", true},       {"gpu_spec", false},
        {"qos", false},           {"pod_phase", false},      {"creation_time", false},
        {"deletion_time", false}, {"scheduled_time", false},
    };
    struct gp_csv c;
    struct openb_rows rs = {0};
    struct openb_models models;
    const size_t start = w->nitems;
    size_t row = 0;
    int idx[C_N];
    bool got;
    enum gp_err err;

    if (!name)
        name = "<openb>";
    gp_csv_init(&c, text, len, name);
    err = gp_csv_header(&c, cols, C_N, 0, idx, diag);
    if (err != GP_OK)
        goto out;
    while ((err = next_record(&c, src, &got, diag)) == GP_OK && got) {
        struct gp_item it = {0};
        int64_t cpu, mem, ngpu, milli;
        double created, deleted, sched;
        if ((err = gp_csv_int(&c, idx[C_CPU], "cpu_milli", 0, OPENB_MAX_CPU_MILLI, &cpu, diag)) ||
            (err = gp_csv_int(&c, idx[C_MEM], "memory_mib", 0, OPENB_MAX_MEM_MIB, &mem, diag)) ||
            (err = gp_csv_int(&c, idx[C_NGPU], "num_gpu", 0, GP_MAX_GPUS_PER_NODE, &ngpu, diag)) ||
            (err = gp_csv_int(&c, idx[C_MILLI], "gpu_milli", 0, GP_GPU_MILLI, &milli, diag)))
            goto out;
        if (ngpu == 0 && milli != 0) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[C_MILLI], "gpu_milli",
                             "0 for a pod with num_gpu 0", diag);
            goto out;
        }
        if (ngpu >= 1 && milli == 0) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[C_MILLI], "gpu_milli",
                             "an integer 1..1000 for a pod with GPUs", diag);
            goto out;
        }
        if (ngpu > 1 && milli != GP_GPU_MILLI) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[C_MILLI], "gpu_milli",
                             "1000 for a pod with num_gpu > 1 (a share needs num_gpu 1)", diag);
            goto out;
        }
        if ((err = openb_gpu_spec(&c, idx[C_SPEC], &models, diag)) ||
            (err = openb_time(&c, idx[C_CREATE], "creation_time", &created, diag)) ||
            (err = openb_time(&c, idx[C_DELETE], "deletion_time", &deleted, diag)) ||
            (err = openb_time(&c, idx[C_SCHED], "scheduled_time", &sched, diag)))
            goto out;
        /* static only: a row that asks for the pod of an earlier row is
         * that row's item once more */
        char key[OPENB_KEY_MAX];
        uint32_t k;
        if (w->static_only) {
            if (!openb_pod_key(cpu, mem, ngpu, milli, &models, key, sizeof key)) {
                err = gp_csv_fail(&c, GP_ELIMIT, diag, "the row's pod is too long to key");
                goto out;
            }
            if (gp_csv_map_get(&rs.pods, key, &k)) {
                struct gp_item *same = &w->items[start + k];
                if (same->repeat == UINT32_MAX) {
                    err = gp_csv_fail(&c, GP_ELIMIT, diag,
                                      "more than %" PRIu32 " rows ask for the pod of %s",
                                      UINT32_MAX, same->source);
                    goto out;
                }
                same->repeat++;
                if ((err = openb_row_push(&rs, a, k)) != GP_OK) {
                    gp_diag_set(diag, err, "%s: out of memory", name);
                    goto out;
                }
                row++;
                continue;
            }
        }
        const char *pname = gp_csv_field(&c, idx[C_NAME]);
        it.name = *pname ? gp_arena_strdup(a, pname) : gp_arena_printf(a, "openb-pod-%04zu", row);
        it.source = gp_arena_printf(a, "%s:%lu", name, c.line);
        if (!it.name || !it.source || !openb_models_copy(&models, a, &it.pod.gpu_models)) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            goto out;
        }
        it.pod.ngpu_models = models.n;
        it.kind = GP_ITEM_POD;
        it.pod.name = it.name;
        it.pod.cpu_milli = cpu;
        it.pod.mem_mib = mem;
        it.pod.gpu_count = (uint32_t)ngpu;
        it.pod.gpu_milli = (uint32_t)milli;
        it.repeat = 1;
        /* the raw creation time for now (-1: none); made relative below */
        it.arrival_s = w->static_only ? -1 : created;
        if (!w->static_only && created >= 0 && deleted > created) {
            it.has_duration = true;
            it.duration.kind = GP_DIST_FIXED;
            it.duration.a = deleted - created;
        }
        if (w->static_only) {
            const char *kk = gp_arena_strdup(a, key);
            bool found;
            k = (uint32_t)(w->nitems - start);
            if (!kk || gp_csv_map_put(&rs.pods, kk, k, &found, &k) != GP_OK ||
                openb_row_push(&rs, a, k) != GP_OK) {
                err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
                goto out;
            }
        }
        if ((err = gp_workload_append(w, a, &it)) != GP_OK) {
            gp_diag_set(diag, err, "%s: out of memory", name);
            goto out;
        }
        row++;
    }
    if (err != GP_OK)
        goto out;
    if (row == 0) {
        err = gp_diag_set(diag, GP_EINVALID,
                          "%s: no pods, expected at least one row after the header", name);
        goto out;
    }
    /* arrivals count from the earliest creation time of the file */
    double first = INFINITY;
    for (size_t i = start; i < w->nitems; i++)
        if (w->items[i].arrival_s >= 0 && w->items[i].arrival_s < first)
            first = w->items[i].arrival_s;
    for (size_t i = start; i < w->nitems; i++)
        w->items[i].arrival_s = w->items[i].arrival_s >= 0 ? w->items[i].arrival_s - first : 0;
    if (w->static_only && (err = openb_trace_add(w, a, start, &rs)) != GP_OK)
        gp_diag_set(diag, err, "%s: out of memory", name);
out:
    gp_csv_free(&c);
    gp_csv_map_free(&rs.pods);
    if (err != GP_OK)
        w->nitems = start; /* all or nothing */
    return err;
}

enum gp_err gp_workload_parse_openb(const char *text, size_t len, const char *name,
                                    struct gp_arena *a, struct gp_workload *w, struct gp_diag *diag)
{
    return parse_pods(text, len, NULL, name, a, w, diag);
}

/* The whole file at once, through gp_fs_read (its checks and messages). */
static enum gp_err read_whole(const char *path, struct gp_arena *a, struct gp_workload *w,
                              struct gp_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    enum gp_err err = gp_fs_read(path, &text, &len, diag);
    if (err == GP_OK)
        err = parse_pods(text, len, NULL, path, a, w, diag);
    free(text);
    return err;
}

enum gp_err gp_workload_read_openb(const char *path, struct gp_arena *a, struct gp_workload *w,
                                   struct gp_diag *diag)
{
    struct stat st;
    struct openb_pieces s = {.max = gp_fs_max_read()};
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
        (uint64_t)st.st_size > s.max || !(s.f = fopen(path, "rb")))
        return read_whole(path, a, w, diag); /* its errors, or a pipe or a device */
    const char *text = NULL;
    size_t n = 0;
    enum gp_err err = pieces_next(&s, path, &text, &n, diag);
    if (err == GP_OK)
        err = parse_pods(text, n, &s, path, a, w, diag);
    fclose(s.f);
    free(s.buf);
    if (err == GP_ELIMIT && s.total > s.max) /* it grew: gp_fs_read says so */
        return read_whole(path, a, w, diag);
    return err;
}
