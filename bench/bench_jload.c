/* bench_jload.c - the watch-event parse alone (issue 14): each line of the
 * files, a watch event (the JSON lines of a watch of pods, e.g. the
 * recorded kube-apiserver answers in
 * ../shared/k8s/samples/recorded-apiserver-v1.28/watch-raw.jsonl), read
 * through gp_kube_event_parse_reuse as the pods informer reads it: its
 * skip list (gp_kube_pod_unread) and the version of the object stored
 * before, with its marks (kube/jload.h), from a store of the events read
 * so far; --repeat N reads the files N times, the store emptied before
 * each. Prints the events, the members shared and the best time an event.
 * For instruction counts of the parse alone:
 *   valgrind --tool=callgrind --toggle-collect=gp_kube_event_parse_reuse \
 *     bench_jload --repeat 500 FILE
 *
 *   bench_jload [--repeat N] FILE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "kube/jalloc.h"
#include "kube/jload.h"
#include "kube/objects.h"
#include "kube/watch.h"

struct version {
    json_t *obj; /* NULL: deleted */
    struct gp_kube_jmarks mk;
};

struct store {
    json_t *index; /* "ns/name" -> the version's index */
    struct version *v;
    size_t n, cap;
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* gp_kube_jreuse's prev: the stored version of the object named by the
 * metadata read, and its marks (informer.c's prev_of). */
static const json_t *prev_of(const json_t *meta, void *ctx, const struct gp_kube_jmark **marks,
                             size_t *nmarks)
{
    struct store *st = ctx;
    struct gp_kube_ids id;
    gp_kube_meta_ids(meta, &id);
    if (!id.name)
        return NULL;
    char key[600];
    gp_kube_key_make(id.ns, id.name, key, sizeof key);
    json_t *at = json_object_get(st->index, key);
    struct version *v = at ? &st->v[json_integer_value(at)] : NULL;
    if (!v || !v->obj)
        return NULL;
    *marks = v->mk.m;
    *nmarks = v->mk.n;
    return v->obj;
}

/* The event's object stored (or its version dropped, for DELETED). */
static int store_put(struct store *st, const struct gp_kube_event *ev,
                     const struct gp_kube_jmarks *mk)
{
    char key[600];
    gp_kube_key_make(ev->ns, ev->name, key, sizeof key);
    json_t *at = json_object_get(st->index, key);
    size_t i;
    if (at) {
        i = (size_t)json_integer_value(at);
    } else {
        if (st->n == st->cap) {
            size_t cap = st->cap ? 2 * st->cap : 1024;
            struct version *v = realloc(st->v, cap * sizeof *v);
            if (!v)
                return -1;
            st->v = v;
            st->cap = cap;
        }
        i = st->n++;
        st->v[i].obj = NULL;
        if (json_object_set_new(st->index, key, json_integer((json_int_t)i)) != 0)
            return -1;
    }
    json_decref(st->v[i].obj);
    st->v[i].obj = ev->type == GP_KUBE_DELETED ? NULL : json_incref(ev->object);
    st->v[i].mk = *mk;
    return 0;
}

static void store_clear(struct store *st)
{
    for (size_t i = 0; i < st->n; i++)
        json_decref(st->v[i].obj);
    st->n = 0;
    json_object_clear(st->index);
}

/* The lines of path appended to *lines (NUL-terminated copies). */
static int read_lines(const char *path, char ***lines, size_t *n, size_t *cap)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_jload: %s: cannot be read\n", path);
        return -1;
    }
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &lcap, f)) > 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 1024;
            char **l = realloc(*lines, c * sizeof *l);
            if (!l) {
                rc = -1;
                break;
            }
            *lines = l;
            *cap = c;
        }
        if (!((*lines)[*n] = strdup(line)))
            rc = -1;
        else
            (*n)++;
    }
    free(line);
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned long repeat = 1;
    char **lines = NULL;
    size_t nlines = 0, cap = 0;
    int i = 1;
    if (i + 1 < argc && strcmp(argv[i], "--repeat") == 0) {
        char *end;
        repeat = strtoul(argv[i + 1], &end, 10);
        if (*argv[i + 1] == '\0' || *end != '\0' || repeat < 1 || repeat > 1000000) {
            fprintf(stderr, "bench_jload: --repeat must be 1 to 1000000, not '%s'\n", argv[i + 1]);
            return 2;
        }
        i += 2;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: bench_jload [--repeat N] FILE...\n");
        return 2;
    }
    for (; i < argc; i++)
        if (read_lines(argv[i], &lines, &nlines, &cap) != 0)
            return 1;
    gp_kube_jalloc_install(); /* as the informers' threads (run.c) */
    gp_kube_jalloc_thread(true);
    const struct gp_kube_jskip ev_kids[] = {
        {"object", gp_kube_pod_unread.kids, gp_kube_pod_unread.nkids}};
    const struct gp_kube_jskip ev_skip = {NULL, ev_kids, 1};
    struct store st = {json_object(), NULL, 0, 0};
    struct gp_kube_jreuse ru = {.at = "object", .prev = prev_of, .ctx = &st};
    size_t shared = 0, bad = 0;
    double best = -1;
    for (unsigned long r = 0; r < repeat; r++) {
        store_clear(&st);
        double parse_s = 0;
        for (size_t k = 0; k < nlines; k++) {
            struct gp_kube_event ev;
            struct gp_diag d = {""};
            double a = mono();
            enum gp_err err =
                gp_kube_event_parse_reuse(lines[k], strlen(lines[k]), &ev_skip, &ru, &ev, &d);
            parse_s += mono() - a;
            if (err != GP_OK) {
                if (r == 0)
                    fprintf(stderr, "bench_jload: line %zu: %s\n", k + 1, d.msg);
                bad++;
                continue;
            }
            shared += ru.reused;
            if (ev.type != GP_KUBE_BOOKMARK && ev.type != GP_KUBE_ERROR &&
                store_put(&st, &ev, &ru.out) != 0) {
                fprintf(stderr, "bench_jload: out of memory\n");
                return 1;
            }
            gp_kube_event_clear(&ev);
        }
        if (best < 0 || parse_s < best)
            best = parse_s;
    }
    store_clear(&st);
    json_decref(st.index);
    free(st.v);
    printf("events: %zu a pass, %lu passes; refused: %zu; members shared: %zu (%.2f an event)\n",
           nlines, repeat, bad, shared, (double)shared / (double)(nlines * repeat));
    printf("parse: best pass %.3f ms, %.2f us an event\n", best * 1e3,
           best * 1e6 / (double)(nlines ? nlines : 1));
    for (size_t k = 0; k < nlines; k++)
        free(lines[k]);
    free(lines);
    return bad ? 1 : 0;
}
