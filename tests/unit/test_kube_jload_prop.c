/* test_kube_jload_prop.c - property tests of the lean JSON scanner
 * (kube/jload.c) against jansson's own json_loadb, on random documents
 * (seeded, so every run reads the same ones) and on real objects: the
 * scanner's answer is jansson's (a tree, key for key in the same order, or
 * none), with and without JSON_REJECT_DUPLICATES; gp_kube_jload_skip's is
 * jansson's tree with the members named deleted (skip lists of many
 * tables, made at run time, and the pods informer's own); and
 * gp_kube_jload_members's, the root's members named, are jansson's
 * tree's; gp_kube_jload_reuse's (and gp_kube_jload_members's, as a watch
 * event is read), with the previous version's members taken, is
 * gp_kube_jload_skip's, a member taken only where its text is the
 * previous version's and taken wherever it is. The real objects are the
 * API server's recorded answers in the shared reference data
 * (k8s/samples/recorded-apiserver-v1.28): the ":shared" run, skipped
 * where that data is absent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shared_data.h"

#include "kube/jload.h"
#include "kube/objects.h"
#include "kube/watch.h"

/* --- a seeded generator (splitmix64) ----------------------------------- */

static uint64_t rng_state;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static size_t pick(size_t n)
{
    return (size_t)(rng() % n);
}

/* --- the trees compared ---------------------------------------------- */

/* a and b the same tree, key for key in the same order; false with the
 * first difference's place in why. */
static bool same_tree(json_t *a, json_t *b, char *why, size_t n)
{
    if (json_typeof(a) != json_typeof(b)) {
        snprintf(why, n, "types %d and %d", json_typeof(a), json_typeof(b));
        return false;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b)) {
            snprintf(why, n, "%zu and %zu members", json_object_size(a), json_object_size(b));
            return false;
        }
        void *ia = json_object_iter(a), *ib = json_object_iter(b);
        for (; ia && ib; ia = json_object_iter_next(a, ia), ib = json_object_iter_next(b, ib)) {
            if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib)) != 0) {
                snprintf(why, n, "keys %s and %s", json_object_iter_key(ia),
                         json_object_iter_key(ib));
                return false;
            }
            if (!same_tree(json_object_iter_value(ia), json_object_iter_value(ib), why, n))
                return false;
        }
        return true;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b)) {
            snprintf(why, n, "%zu and %zu elements", json_array_size(a), json_array_size(b));
            return false;
        }
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same_tree(json_array_get(a, i), json_array_get(b, i), why, n))
                return false;
        return true;
    }
    if (!json_equal(a, b)) {
        snprintf(why, n, "values differ");
        return false;
    }
    return true;
}

static void check_same(json_t *got, json_t *want, const char *what, const char *text, size_t len)
{
    char why[160];
    if ((got != NULL) != (want != NULL))
        fail_msg("%s: %s where jansson %s: %.*s", what, got ? "a tree" : "none",
                 want ? "reads it" : "refuses it", (int)len, text);
    if (got && !same_tree(got, want, why, sizeof why))
        fail_msg("%s: not jansson's tree (%s): %.*s", what, why, (int)len, text);
}

/* --- skip lists: the reference is jansson's tree, pruned ---------------- */

/* sk's leaves deleted from v, as jload.h says (the first of a key's kids
 * only, the first 64 kids; "[]": each element of an array). */
static void prune(json_t *v, const struct gp_kube_jskip *sk)
{
    size_t nk = sk->nkids < 64 ? sk->nkids : 64;
    for (size_t i = 0; i < nk; i++) {
        const struct gp_kube_jskip *kid = &sk->kids[i];
        bool first = true;
        for (size_t j = 0; j < i; j++)
            first = first && strcmp(sk->kids[j].key, kid->key) != 0;
        if (!first)
            continue;
        if (strcmp(kid->key, "[]") == 0) {
            size_t j;
            json_t *e;
            json_array_foreach(v, j, e) prune(e, kid);
        } else if (!kid->nkids) {
            json_object_del(v, kid->key);
        } else {
            prune(json_object_get(v, kid->key), kid);
        }
    }
}

/* the names the documents and skip lists are made of: the pods
 * informer's skip list's and a few more (string literals: a skip table's
 * keys do not change, jload.h) */
static const char *const names[] = {
    "metadata",
    "spec",
    "status",
    "containers",
    "image",
    "name",
    "resources",
    "tolerations",
    "annotations",
    "labels",
    "volumes",
    "phase",
    "conditions",
    "managedFields",
    "kind",
    "apiVersion",
    "ports",
    "env",
    "a",
    "b",
    "c",
    "",
    "[]",
    "k8s.io/x",
    "tolerationSeconds",
    "nodeName",
    "containerPort",
    "hostPort",
    "priority",
    "uid",
    "namespace",
    "resourceVersion",
};
#define NNAMES (sizeof names / sizeof *names)

/* a random skip list of up to depth levels below sk (its kids on the heap,
 * freed by skip_free) */
static void skip_make(struct gp_kube_jskip *sk, const char *key, int depth)
{
    sk->key = key;
    sk->nkids = depth > 0 ? pick(7) : 0;
    sk->kids = NULL;
    if (!sk->nkids)
        return;
    struct gp_kube_jskip *kids = calloc(sk->nkids, sizeof *kids);
    assert_non_null(kids);
    for (size_t i = 0; i < sk->nkids; i++)
        skip_make(&kids[i], names[pick(NNAMES)], pick(3) ? depth - 1 : 0);
    sk->kids = kids;
}

static void skip_free(const struct gp_kube_jskip *sk)
{
    for (size_t i = 0; i < sk->nkids; i++)
        skip_free(&sk->kids[i]);
    free((void *)(uintptr_t)sk->kids);
}

/* --- random documents ---------------------------------------------- */

struct buf {
    char *b;
    size_t n, cap;
};

static void put(struct buf *o, const char *s, size_t n)
{
    if (o->n + n + 1 > o->cap) {
        o->cap = (o->n + n + 1) * 2;
        o->b = realloc(o->b, o->cap);
        assert_non_null(o->b);
    }
    if (n) /* (an empty part has no text yet: memcpy takes no NULL) */
        memcpy(o->b + o->n, s, n);
    o->n += n;
    o->b[o->n] = '\0';
}

static void puts_(struct buf *o, const char *s)
{
    put(o, s, strlen(s));
}

static void ws(struct buf *o)
{
    static const char *const w[] = {" ", "\n", "\t", "\r\n  "};
    if (pick(12) == 0)
        puts_(o, w[pick(4)]);
}

/* what the scanner reads itself only: no \u, UTF-8, control character,
 * real or integer over 18 digits (gen_string, gen_value) */
static bool gen_plain;

/* a string's text: mostly plain of every length (the scanner reads eight
 * bytes at a time), now and then an escape, a \u, UTF-8 or (rarely) a
 * control character */
static void gen_string(struct buf *o, bool key)
{
    puts_(o, "\"");
    if (key && pick(3)) {
        puts_(o, names[pick(NNAMES)]);
    } else {
        size_t len = pick(4) ? pick(12) : pick(40);
        for (size_t i = 0; i < len; i++) {
            size_t r = pick(60);
            if (r == 0) {
                static const char *const esc[] = {"\\n", "\\\"", "\\\\", "\\/",
                                                  "\\t", "\\b",  "\\f",  "\\r"};
                puts_(o, esc[pick(8)]);
            } else if (gen_plain) {
                puts_(o, "p");
            } else if (r == 1) {
                static const char *const u[] = {"\\u00e9", "\\u0041", "\\ud800",
                                                "\\u12g4", "\\u0000", "\\ud83d\\ude00"};
                puts_(o, u[pick(6)]); /* a lone surrogate, a bad digit, NUL: refused */
            } else if (r == 2) {
                puts_(o, "\xc3\xa9");
            } else if (r == 3 && pick(8) == 0) {
                puts_(o, "\x01");
            } else {
                char c = (char)(' ' + 1 + pick(94));
                if (c == '"' || c == '\\')
                    c = 'q';
                put(o, &c, 1);
            }
        }
    }
    puts_(o, "\"");
}

static void gen_value(struct buf *o, int depth);

static void gen_object(struct buf *o, int depth)
{
    puts_(o, "{");
    ws(o);
    size_t n = pick(depth > 0 ? 7 : 2);
    for (size_t i = 0; i < n; i++) {
        if (i) {
            puts_(o, ",");
            ws(o);
        }
        gen_string(o, true);
        ws(o);
        puts_(o, ":");
        ws(o);
        gen_value(o, depth - 1);
        ws(o);
    }
    puts_(o, "}");
}

static void gen_value(struct buf *o, int depth)
{
    char num[40];
    switch (depth > 0 ? pick(10) : 4 + pick(6)) {
    case 0:
    case 1:
        gen_object(o, depth);
        return;
    case 2:
    case 3: {
        puts_(o, "[");
        ws(o);
        size_t n = pick(5);
        for (size_t i = 0; i < n; i++) {
            if (i) {
                puts_(o, ",");
                ws(o);
            }
            gen_value(o, depth - 1);
            ws(o);
        }
        puts_(o, "]");
        return;
    }
    case 4:
    case 5:
        gen_string(o, false);
        return;
    case 6: {
        static const char *const big[] = {"123456789012345678",
                                          "-123456789012345678",
                                          "1234567890123456789",
                                          "0",
                                          "-0",
                                          "1.5",
                                          "2e3",
                                          "-7E-2"};
        if (pick(3) == 0 && !gen_plain)
            snprintf(num, sizeof num, "%s", big[pick(8)]);
        else
            snprintf(num, sizeof num, "%lld", (long long)(rng() % 2000000) - 1000000);
        puts_(o, num);
        return;
    }
    case 7:
        puts_(o, "true");
        return;
    case 8:
        puts_(o, "false");
        return;
    default:
        puts_(o, "null");
        return;
    }
}

/* an object's root of which metadata is a member: the four names
 * gp_kube_meta_ids reads (strings mostly, now and then another value or
 * a name given twice) among others, the metadata anywhere in the root */
static void gen_meta_doc(struct buf *o)
{
    static const char *const ids[] = {"name", "namespace", "uid", "resourceVersion", "labels"};
    puts_(o, "{");
    size_t before = pick(3), after = pick(3);
    for (size_t i = 0; i < before; i++) {
        gen_string(o, true);
        puts_(o, ":");
        gen_value(o, 2);
        puts_(o, ",");
    }
    puts_(o, "\"metadata\":{");
    size_t n = pick(7);
    for (size_t i = 0; i < n; i++) {
        if (i)
            puts_(o, ",");
        puts_(o, "\"");
        puts_(o, pick(4) ? ids[pick(5)] : names[pick(NNAMES)]);
        puts_(o, "\":");
        if (pick(5))
            gen_string(o, false);
        else
            gen_value(o, 1);
    }
    puts_(o, "}");
    for (size_t i = 0; i < after; i++) {
        puts_(o, ",");
        gen_string(o, true);
        puts_(o, ":");
        gen_value(o, 2);
    }
    puts_(o, "}");
}

/* the text broken now and then: a byte changed, dropped or the text cut */
static void damage(struct buf *o)
{
    if (o->n < 2 || pick(4) != 0)
        return;
    static const char bytes[] = "{}[]\",:\\ 0a-.e\x01\x80";
    size_t at = pick(o->n);
    switch (pick(3)) {
    case 0:
        o->b[at] = bytes[pick(sizeof bytes - 1)];
        break;
    case 1:
        memmove(o->b + at, o->b + at + 1, o->n - at);
        o->n--;
        break;
    default:
        o->n = at;
        o->b[at] = '\0';
        break;
    }
}

static size_t meta_reads; /* documents whose metadata's names the parse read */

/* text read every way against jansson: the scanner's tree, gp_kube_jload's
 * answer under both flags, and gp_kube_jload_skip's under sk */
static void read_every_way(const char *text, size_t n, const struct gp_kube_jskip *sk)
{
    json_t *ref = json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL);
    json_t *lean = gp_kube_jload_lean(text, n);
    if (lean)
        check_same(lean, ref, "gp_kube_jload_lean", text, n);
    json_decref(lean);
    json_t *got = gp_kube_jload(text, n, JSON_REJECT_DUPLICATES, NULL);
    check_same(got, ref, "gp_kube_jload", text, n);
    json_decref(got);
    json_t *ref0 = json_loadb(text, n, 0, NULL);
    got = gp_kube_jload(text, n, 0, NULL);
    check_same(got, ref0, "gp_kube_jload (flags 0)", text, n);
    json_decref(got);
    json_decref(ref0);
    if (ref)
        prune(ref, sk);
    got = gp_kube_jload_skip(text, n, JSON_REJECT_DUPLICATES, NULL, sk);
    check_same(got, ref, "gp_kube_jload_skip", text, n);
    json_decref(got);
    /* the root's members by name: the root's own names (the root then
     * not built), one more, or a few of the vocabulary's */
    const char *want[8];
    size_t nw = 0;
    if (json_is_object(ref) && pick(2)) {
        const char *k;
        json_t *v;
        json_object_foreach(ref, k, v)
        {
            if (nw < 6)
                want[nw++] = k;
        }
    }
    while (nw < 8 && pick(3))
        want[nw++] = names[pick(NNAMES)];
    /* the root as the object of gp_kube_jload_reuse (no previous
     * version): the tree gp_kube_jload_skip's, and the metadata's four
     * names as gp_kube_meta_ids reads them where the parse says it read
     * them */
    struct gp_kube_jreuse ru = {.at = NULL};
    got = gp_kube_jload_reuse(text, n, JSON_REJECT_DUPLICATES, NULL, sk, &ru);
    check_same(got, ref, "gp_kube_jload_reuse", text, n);
    if (ru.meta_read) {
        struct gp_kube_ids id;
        gp_kube_meta_ids(json_object_get(got, "metadata"), &id);
        if (id.ns != ru.meta_ns || id.name != ru.meta_name || id.uid != ru.meta_uid ||
            id.rv != ru.meta_rv)
            fail_msg("gp_kube_jload_reuse: not the metadata's names: %.*s", (int)n, text);
        meta_reads++;
    }
    json_decref(got);
    json_t *vals[8];
    json_error_t err;
    bool read =
        gp_kube_jload_members(text, n, JSON_REJECT_DUPLICATES, &err, sk, NULL, want, nw, vals);
    if (read != (ref != NULL))
        fail_msg("gp_kube_jload_members: %s: %.*s", read ? "read" : "refused", (int)n, text);
    for (size_t i = 0; i < nw; i++) {
        json_t *w = json_object_get(ref, want[i]);
        if (w || vals[i])
            check_same(vals[i], w, "gp_kube_jload_members", text, n);
        json_decref(vals[i]);
    }
    json_decref(ref);
}

static void test_random_documents(void **state)
{
    (void)state;
    rng_state = 14;
    struct buf o = {0};
    size_t lean_read = 0;
    for (int i = 0; i < 6000; i++) {
        gen_plain = i % 2; /* half of them the scanner's own, but damaged */
        o.n = 0;
        size_t shape = pick(8);
        if (shape < 2)
            gen_meta_doc(&o);
        else if (shape < 5)
            gen_object(&o, 1 + (int)pick(5));
        else
            gen_value(&o, 1 + (int)pick(5));
        damage(&o);
        struct gp_kube_jskip sk;
        skip_make(&sk, NULL, 4);
        read_every_way(o.b, o.n, &sk);
        read_every_way(o.b, o.n, &gp_kube_pod_unread);
        skip_free(&sk);
        json_t *lean = gp_kube_jload_lean(o.b, o.n);
        lean_read += lean != NULL;
        json_decref(lean);
    }
    free(o.b);
    gen_plain = false;
    print_message("read by the scanner: %zu of 6000, their metadata's names: %zu\n", lean_read,
                  meta_reads);
    assert_true(lean_read > 1500);
    assert_true(meta_reads > 300);
}

/* Short documents of one string: its bytes within the text's last eight,
 * where the scanner reads a byte at a time: any of them special. */
static void test_short_strings(void **state)
{
    (void)state;
    rng_state = 17;
    static const char bytes[] = {'a',  '"',  '\\', 'n',        'u',        '0',        0x01,
                                 0x1f, 0x20, 0x7f, (char)0x80, (char)0xc3, (char)0xa9, '\0'};
    char text[16];
    for (int i = 0; i < 20000; i++) {
        size_t n = 0, len = pick(8);
        text[n++] = '[';
        text[n++] = '"';
        for (size_t k = 0; k < len; k++)
            text[n++] = bytes[pick(sizeof bytes)];
        text[n++] = '"';
        if (pick(4))
            text[n++] = ']';
        read_every_way(text, n, &gp_kube_pod_unread);
    }
}

/* Many skip tables in one document, more than the scanner keeps at once
 * per thread: each object's members left out as its own table says,
 * whichever table was looked at last. */
static void test_many_tables(void **state)
{
    (void)state;
    rng_state = 15;
    enum { NT = 80 };
    struct gp_kube_jskip tabs[NT], leaf[NT][2], root;
    struct gp_kube_jskip *rk = calloc(NT, sizeof *rk);
    assert_non_null(rk);
    struct buf o = {0};
    char key[16];
    static char keys[NT][8]; /* the tables' names, written once */
    for (int i = 0; i < NT; i++) {
        snprintf(keys[i], sizeof keys[i], "t%d", i);
        leaf[i][0] = (struct gp_kube_jskip){names[i % NNAMES], NULL, 0};
        leaf[i][1] = (struct gp_kube_jskip){"x", NULL, 0};
        tabs[i] = (struct gp_kube_jskip){keys[i], leaf[i], 2};
        rk[i] = tabs[i];
    }
    root = (struct gp_kube_jskip){NULL, rk, NT};
    int order[NT];
    for (int i = 0; i < NT; i++)
        order[i] = i;
    for (int r = 0; r < 40; r++) {
        for (int i = NT - 1; i > 0; i--) { /* the tables in another order each time */
            size_t j = pick((size_t)i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        o.n = 0;
        puts_(&o, "{");
        for (int i = 0; i < NT; i++) {
            int t = order[i];
            snprintf(key, sizeof key, "%s\"t%d\":{", i ? "," : "", t);
            puts_(&o, key);
            /* each nested object one table deeper: a member of every name */
            for (size_t k = 0; k < NNAMES; k++) {
                if (strcmp(names[k], "[]") == 0)
                    continue;
                snprintf(key, sizeof key, "%s\"", k ? "," : "");
                puts_(&o, key);
                puts_(&o, names[k]);
                puts_(&o, "\":[1]");
            }
            puts_(&o, ",\"x\":2}");
        }
        puts_(&o, "}");
        json_t *ref = json_loadb(o.b, o.n, JSON_REJECT_DUPLICATES, NULL);
        assert_non_null(ref);
        json_t *lean = gp_kube_jload_lean(o.b, o.n);
        assert_non_null(lean); /* the scanner's to read */
        json_decref(lean);
        prune(ref, &root);
        json_t *got = gp_kube_jload_skip(o.b, o.n, JSON_REJECT_DUPLICATES, NULL, &root);
        check_same(got, ref, "gp_kube_jload_skip (many tables)", o.b, o.n);
        json_decref(got);
        json_decref(ref);
    }
    free(rk);
    free(o.b);
}

/* --- members taken from the previous version ------------------------ */

static struct {
    json_t *obj;
    struct gp_kube_jmarks mk;
} prev;

static const json_t *prev_of(const json_t *meta, void *ctx, const struct gp_kube_jmark **marks,
                             size_t *nmarks)
{
    (void)meta;
    (void)ctx;
    if (!prev.obj)
        return NULL;
    *marks = prev.mk.m;
    *nmarks = prev.mk.n;
    return prev.obj;
}

/* the member texts of a version: spec and status (objects of objects and
 * arrays), one changed at random from the one before */
struct version {
    struct buf part[3][4]; /* spec's, status's and extra's members' texts */
};

static void gen_part(struct buf *o)
{
    o->n = 0;
    switch (pick(3)) {
    case 0:
        gen_object(o, 1 + (int)pick(3));
        break;
    case 1:
        puts_(o, "[");
        gen_value(o, 2);
        puts_(o, ",");
        gen_value(o, 1);
        puts_(o, "]");
        break;
    default:
        gen_value(o, 1); /* a scalar now and then */
        break;
    }
}

static const char *const part_keys[3] = {"spec", "status", "extra"};
static const char *const member_keys[4] = {"a", "containers", "b", "tolerations"};

static void version_text(struct version *v, struct buf *o, int rv)
{
    char head[128];
    o->n = 0;
    snprintf(head, sizeof head,
             "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\","
             "\"resourceVersion\":\"%d\"}",
             rv);
    puts_(o, head);
    for (int p = 0; p < 3; p++) {
        puts_(o, ",\"");
        puts_(o, part_keys[p]);
        puts_(o, "\":{");
        for (int m = 0; m < 4; m++) {
            if (m)
                puts_(o, ",");
            puts_(o, "\"");
            puts_(o, member_keys[m]);
            puts_(o, "\":");
            put(o, v->part[p][m].b, v->part[p][m].n);
        }
        puts_(o, "}");
    }
    puts_(o, "}}");
}

static bool same_text(const struct buf *a, const struct buf *b)
{
    return a->n == b->n && memcmp(a->b, b->b, a->n) == 0;
}

static void test_random_versions(void **state)
{
    (void)state;
    rng_state = 16;
    const struct gp_kube_jskip ev_kids[] = {
        {"object", gp_kube_pod_unread.kids, gp_kube_pod_unread.nkids}};
    const struct gp_kube_jskip ev = {NULL, ev_kids, 1};
    struct version v[2];
    memset(v, 0, sizeof v);
    struct buf text = {0};
    size_t taken = 0;
    gen_plain = true; /* but a duplicate key now and then: jansson's then */
    for (int round = 0; round < 300; round++) {
        json_decref(prev.obj);
        prev.obj = NULL;
        for (int p = 0; p < 3; p++)
            for (int m = 0; m < 4; m++)
                gen_part(&v[0].part[p][m]);
        for (int rv = 1; rv < 12; rv++) {
            struct version *cur = &v[rv & 1], *was = &v[(rv & 1) ^ 1];
            if (rv > 1) { /* from the one before, a member or two changed */
                for (int p = 0; p < 3; p++)
                    for (int m = 0; m < 4; m++) {
                        cur->part[p][m].n = 0;
                        put(&cur->part[p][m], was->part[p][m].b, was->part[p][m].n);
                    }
                for (size_t k = pick(3); k > 0; k--)
                    gen_part(&cur->part[pick(3)][pick(4)]);
            }
            version_text(cur, &text, rv);
            struct gp_kube_jreuse ru = {.at = "object", .prev = prev_of};
            /* as a watch event is read (watch.c): the root's type and
             * object, now and then through gp_kube_jload_reuse */
            static const char *const ev_names[] = {"type", "object"};
            json_t *got[2] = {NULL, NULL}, *doc = NULL;
            if (pick(4)) {
                if (!gp_kube_jload_members(text.b, text.n, JSON_REJECT_DUPLICATES, NULL, &ev, &ru,
                                           ev_names, 2, got))
                    got[0] = got[1] = NULL;
            } else {
                doc = gp_kube_jload_reuse(text.b, text.n, JSON_REJECT_DUPLICATES, NULL, &ev, &ru);
                got[1] = json_incref(json_object_get(doc, "object"));
                json_decref(doc);
            }
            json_t *plain = gp_kube_jload_skip(text.b, text.n, JSON_REJECT_DUPLICATES, NULL, &ev);
            check_same(got[1], json_object_get(plain, "object"), "gp_kube_jload_reuse", text.b,
                       text.n);
            json_decref(plain);
            json_decref(got[0]);
            json_t *obj = got[1];
            /* taken exactly where the member's text is the one before
             * (both versions read by the scanner: a version jansson read
             * has no marks, and nothing is taken into one) */
            bool scanned = prev.mk.n > 0 && ru.out.n > 0;
            for (int p = 0; p < 3 && prev.obj && rv > 1; p++) {
                json_t *np = json_object_get(obj, part_keys[p]);
                json_t *op = json_object_get(prev.obj, part_keys[p]);
                bool all = true;
                for (int m = 0; m < 4; m++)
                    all = all && same_text(&cur->part[p][m], &was->part[p][m]);
                if (np == op) {
                    if (!all)
                        fail_msg("%s taken, its text not the same: %.*s", part_keys[p], (int)text.n,
                                 text.b);
                    taken++;
                    continue;
                }
                if (all && scanned && json_is_object(np))
                    fail_msg("%s read again, its text the same: %.*s", part_keys[p], (int)text.n,
                             text.b);
                for (int m = 0; m < 4; m++) {
                    json_t *nm = json_object_get(np, member_keys[m]);
                    json_t *om = json_object_get(op, member_keys[m]);
                    bool same = same_text(&cur->part[p][m], &was->part[p][m]);
                    bool container = json_is_object(nm) || json_is_array(nm);
                    if (nm && nm == om && !same)
                        fail_msg("%s.%s taken, its text not the same", part_keys[p],
                                 member_keys[m]);
                    if (container && same && scanned && json_is_object(op) && om &&
                        (json_is_object(om) || json_is_array(om)) && nm != om)
                        fail_msg("%s.%s read again, its text the same: %.*s", part_keys[p],
                                 member_keys[m], (int)text.n, text.b);
                }
            }
            json_decref(prev.obj);
            prev.obj = obj;
            prev.mk = ru.out;
        }
    }
    json_decref(prev.obj);
    prev.obj = NULL;
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < 3; p++)
            for (int m = 0; m < 4; m++)
                free(v[i].part[p][m].b);
    free(text.b);
    gen_plain = false;
    print_message("members taken: %zu\n", taken);
    assert_true(taken > 300);
}

/* --- real objects (the shared reference data) ------------------------ */

#define GP_RECORDED GP_SHARED_DIR "/k8s/samples/recorded-apiserver-v1.28/"

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    struct buf o = {0};
    char chunk[4096];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        put(&o, chunk, k);
    fclose(f);
    *n = o.n;
    return o.b;
}

/* each of text's lines (or the whole), read every way, then each with a
 * byte changed at every place */
static void real_read(const char *text, size_t n, bool lines)
{
    const struct gp_kube_jskip ev_kids[] = {
        {"object", gp_kube_pod_unread.kids, gp_kube_pod_unread.nkids}};
    const struct gp_kube_jskip ev = {NULL, ev_kids, 1};
    const char *p = text, *end = text + n;
    while (p < end) {
        const char *e = lines ? memchr(p, '\n', (size_t)(end - p)) : NULL;
        size_t len = (size_t)((e ? e : end) - p);
        if (len > 0) {
            read_every_way(p, len, &gp_kube_pod_unread);
            read_every_way(p, len, &ev);
            char *copy = malloc(len);
            assert_non_null(copy);
            static const char bytes[] = "}\"\\,:1";
            for (size_t at = 0; at < len; at += 7) {
                memcpy(copy, p, len);
                copy[at] = bytes[at % (sizeof bytes - 1)];
                read_every_way(copy, len, &ev);
            }
            free(copy);
        }
        p += len + 1;
    }
}

static void test_recorded_objects(void **state)
{
    (void)state;
    static const char *const whole[] = {"pod-create.json", "pod-get.json", "pod-stale.json",
                                        "node-status-patch.json"};
    char path[1024];
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++) {
        snprintf(path, sizeof path, "%s%s", GP_RECORDED, whole[i]);
        GP_NEED_SHARED(path);
        size_t n;
        char *t = slurp(path, &n);
        real_read(t, n, false);
        free(t);
    }
    snprintf(path, sizeof path, "%s%s", GP_RECORDED, "watch-raw.jsonl");
    GP_NEED_SHARED(path);
    size_t n;
    char *t = slurp(path, &n);
    real_read(t, n, true);
    free(t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_documents),
        cmocka_unit_test(test_short_strings),
        cmocka_unit_test(test_many_tables),
        cmocka_unit_test(test_random_versions),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_recorded_objects),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
