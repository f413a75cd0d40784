/* test_static_trace.c - an openb trace read for the static mode only
 * (gp_workload.static_only, io/workload.h): it keeps what a static run
 * reads and no more (a few bytes of arena per row, where an item per row
 * costs over 400), and the run is the same as over one item per row: the
 * same arrival sequence, the same results, the same errors. A pod list
 * file read in pieces (gp_workload_read_openb) is its text read whole.
 * The real openb traces under GP_SHARED_DIR when they are there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared_data.h"

#include "engine/engine.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "sim/sim.h"
#include "util/arena.h"
#include "util/fs.h"

#define OPENB_SHARED GP_SHARED_DIR "/data/openb/"

/* The pods of the synthetic trace: a row is one of these, by a fixed
 * sequence of draws; names are unique, times differ. */
static const char *const shapes[] = {
    "6000,12000,1,300,",       "32000,128000,1,1000,",     "8000,30000,2,1000,V100M16|T4",
    "4000,16000,1,500,T4",     "16000,64000,4,1000,",      "2000,4000,0,0,",
    "12000,40000,1,1000,P100", "4000,16000,1,500,V100M16", "8000,30000,2,1000,T4|V100M16",
    "96000,393216,8,1000,",    "1000,2000,1,100,",         "6000,12000,1,250,",
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* A trace of n rows; bad_row > 0 puts a bad gpu_milli on that row. */
static char *trace_csv(size_t n, size_t bad_row, size_t *len)
{
    size_t cap = 128 + n * 96;
    char *s = malloc(cap);
    assert_non_null(s);
    size_t at = (size_t)snprintf(s, cap,
                                 "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,"
                                 "pod_phase,creation_time,deletion_time,scheduled_time\n");
    uint64_t x = 88172645463325252u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const char *shape = i + 1 == bad_row ? "1000,2000,0,5," : shapes[x % NSHAPES];
        at += (size_t)snprintf(s + at, cap - at, "pod-%06zu,%s,LS,Running,%zu,%zu,%zu\n", i, shape,
                               100 + i, 5000 + 3 * i, 100 + i);
    }
    *len = at;
    return s;
}

static void read_trace(const char *text, size_t len, bool static_only, struct gp_arena *a,
                       struct gp_workload *w)
{
    struct gp_diag d = {""};
    memset(w, 0, sizeof *w);
    w->static_only = static_only;
    if (gp_workload_parse_openb(text, len, "pods.csv", a, w, &d) != GP_OK)
        fail_msg("%s", d.msg);
}

/* Two sequences of pods are the same requests in the same order. */
static void assert_same_pods(const struct gp_pod_spec *const *p, size_t n,
                             const struct gp_pod_spec *const *q, size_t m)
{
    assert_int_equal(n, m);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(p[i]->cpu_milli, q[i]->cpu_milli);
        assert_int_equal(p[i]->mem_mib, q[i]->mem_mib);
        assert_int_equal(p[i]->gpu_count, q[i]->gpu_count);
        assert_int_equal(p[i]->gpu_milli, q[i]->gpu_milli);
        assert_int_equal(p[i]->ngpu_models, q[i]->ngpu_models);
        for (size_t k = 0; k < p[i]->ngpu_models; k++)
            assert_string_equal(p[i]->gpu_models[k], q[i]->gpu_models[k]);
    }
}

static void load_cluster(struct gp_arena *a, struct gp_cluster *c)
{
    struct gp_diag d = {""};
    memset(c, 0, sizeof *c);
    if (gp_cluster_load("openb:" GP_TEST_DATA "/sim/nodes.csv", a, c, &d) != GP_OK)
        fail_msg("%s", d.msg);
}

/* A static run over both readings: the same sequence, the same results. */
static void assert_same_runs(const struct gp_workload *rows, const struct gp_workload *items,
                             uint64_t seed, const char *policy)
{
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c;
    load_cluster(&a, &c);
    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.mode = GP_SIM_STATIC;
    cfg.seed = seed;
    cfg.inflate = 1.3;
    cfg.policy = gp_policy_find(policy);
    assert_non_null(cfg.policy);
    struct gp_diag d = {""};
    const struct gp_pod_spec **p, **q;
    size_t n, m;
    assert_int_equal(gp_sim_static_sequence(&cfg, &c, rows, &a, &p, &n, &d), GP_OK);
    assert_int_equal(gp_sim_static_sequence(&cfg, &c, items, &a, &q, &m, &d), GP_OK);
    assert_true(n > 0);
    assert_same_pods(p, n, q, m);
    cfg.inflate = 0; /* every pod, none resampled: the order of the whole trace */
    assert_int_equal(gp_sim_static_sequence(&cfg, &c, rows, &a, &p, &n, &d), GP_OK);
    assert_int_equal(gp_sim_static_sequence(&cfg, &c, items, &a, &q, &m, &d), GP_OK);
    assert_int_equal(n, items->nitems);
    assert_same_pods(p, n, q, m);
    cfg.inflate = 1.3;
    struct gp_sim_result r1, r2;
    if (gp_sim_run(&cfg, &c, rows, &a, &r1, &d) != GP_OK ||
        gp_sim_run(&cfg, &c, items, &a, &r2, &d) != GP_OK)
        fail_msg("%s", d.msg);
    assert_int_equal(r1.pods_submitted, r2.pods_submitted);
    assert_int_equal(r1.pods_scheduled, r2.pods_scheduled);
    assert_int_equal(r1.pods_failed, r2.pods_failed);
    assert_int_equal(r1.pods_never_fit, r2.pods_never_fit);
    assert_int_equal(r1.nnofit, r2.nnofit);
    assert_true(r1.unallocated_gpu_pct_at_100 == r2.unallocated_gpu_pct_at_100);
    assert_int_equal(r1.ncurve, r2.ncurve);
    for (size_t i = 0; i < r1.ncurve; i++)
        assert_true(r1.curve[i].unallocated_pct == r2.curve[i].unallocated_pct);
    gp_arena_free(&a);
}

/* 40,000 rows of 12 pods: 12 items, the rows' order, a few bytes a row. */
static void test_rows_kept_small(void **state)
{
    (void)state;
    const size_t n = 40000;
    size_t len;
    char *text = trace_csv(n, 0, &len);
    struct gp_arena a, b;
    gp_arena_init(&a);
    gp_arena_init(&b);
    struct gp_workload rows, items;
    read_trace(text, len, true, &a, &rows);
    read_trace(text, len, false, &b, &items);
    assert_int_equal(rows.nitems, NSHAPES);
    assert_int_equal(rows.ntraces, 1);
    assert_int_equal(rows.traces[0].first, 0);
    assert_int_equal(rows.traces[0].nitems, NSHAPES);
    assert_int_equal(rows.traces[0].nrows, n);
    uint64_t sum = 0;
    for (size_t i = 0; i < rows.nitems; i++)
        sum += rows.items[i].repeat;
    assert_int_equal(sum, n);
    /* each row is its item's pod; an item is its first row's */
    for (size_t k = 0; k < n; k++) {
        const struct gp_item *it = &rows.items[rows.traces[0].row_items[k]];
        assert_int_equal(it->pod.cpu_milli, items.items[k].pod.cpu_milli);
        assert_int_equal(it->pod.gpu_milli, items.items[k].pod.gpu_milli);
        assert_int_equal(it->pod.ngpu_models, items.items[k].pod.ngpu_models);
    }
    assert_string_equal(rows.items[0].source, "pods.csv:2");
    assert_string_equal(rows.items[0].name, "pod-000000");
    /* what it costs: the row order (4 bytes a row, doubled while it grows)
     * and the arena's first blocks; an item per row is over 400 bytes */
    size_t bytes = gp_arena_bytes(&a);
    assert_true(bytes < 16 * n + 512 * 1024);
    assert_true(gp_arena_bytes(&b) > 400 * n);
    assert_same_runs(&rows, &items, 42, "best-fit");
    assert_same_runs(&rows, &items, 7, "random");
    free(text);
    gp_arena_free(&a);
    gp_arena_free(&b);
}

/* A bad row is the same error, on the same line, either way; nothing of
 * the file is kept. */
static void test_errors_same(void **state)
{
    (void)state;
    size_t len;
    char *text = trace_csv(3000, 2500, &len);
    char want[sizeof(struct gp_diag)], got[sizeof(struct gp_diag)];
    for (int mode = 0; mode < 2; mode++) {
        struct gp_arena a;
        gp_arena_init(&a);
        struct gp_workload w = {0};
        w.static_only = mode == 1;
        struct gp_diag d = {""};
        assert_int_equal(gp_workload_parse_openb(text, len, "pods.csv", &a, &w, &d), GP_EINVALID);
        assert_int_equal(w.nitems, 0);
        assert_int_equal(w.ntraces, 0);
        snprintf(mode ? got : want, sizeof want, "%s", d.msg);
        gp_arena_free(&a);
    }
    assert_non_null(strstr(want, "pods.csv:2501:"));
    assert_string_equal(got, want);
    free(text);
}

/* Two traces and a manifest between them: each trace's rows in place. */
static void test_traces_in_order(void **state)
{
    (void)state;
    size_t len1, len2;
    char *t1 = trace_csv(500, 0, &len1), *t2 = trace_csv(700, 0, &len2);
    static const char pod[] = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: solo\nspec:\n"
                              "  containers:\n  - name: c\n    resources:\n"
                              "      requests: {cpu: \"3\", memory: 1Gi}\n";
    struct gp_arena a, b;
    gp_arena_init(&a);
    gp_arena_init(&b);
    struct gp_workload w[2];
    for (int mode = 0; mode < 2; mode++) {
        struct gp_arena *ar = mode ? &a : &b;
        struct gp_diag d = {""};
        memset(&w[mode], 0, sizeof w[mode]);
        w[mode].static_only = mode == 1;
        if (gp_workload_parse_openb(t1, len1, "a.csv", ar, &w[mode], &d) != GP_OK ||
            gp_workload_parse_manifest(pod, sizeof pod - 1, "solo.yaml", ar, &w[mode], &d) !=
                GP_OK ||
            gp_workload_parse_openb(t2, len2, "b.csv", ar, &w[mode], &d) != GP_OK ||
            gp_workload_finish(&w[mode], ar, &d) != GP_OK)
            fail_msg("%s", d.msg);
    }
    assert_int_equal(w[1].ntraces, 2);
    assert_int_equal(w[1].nitems, 2 * NSHAPES + 1);
    assert_int_equal(w[1].traces[1].first, NSHAPES + 1);
    assert_int_equal(w[0].nitems, 1201);
    assert_same_runs(&w[1], &w[0], 3, "best-fit");
    free(t1);
    free(t2);
    gp_arena_free(&a);
    gp_arena_free(&b);
}

/* The pod budget counts a trace's rows, and says so. */
static void test_budget_counts_rows(void **state)
{
    (void)state;
    size_t len;
    char *text = trace_csv(3000, 0, &len);
    char path[] = "/tmp/gp-static-trace-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    char arg[64];
    snprintf(arg, sizeof arg, "openb:%s", path);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {.static_only = true};
    struct gp_diag d = {""};
    gp_workload_set_max_pods(2999, NULL);
    enum gp_err err = gp_workload_load(arg, &a, &w, &d);
    gp_workload_set_max_pods(0, NULL);
    assert_int_equal(err, GP_EINVALID);
    assert_non_null(strstr(d.msg, "rows of the trace ask for it"));
    assert_int_equal(w.nitems, 0);
    assert_int_equal(w.ntraces, 0);
    gp_workload_set_max_pods(3000, NULL);
    err = gp_workload_load(arg, &a, &w, &d);
    gp_workload_set_max_pods(0, NULL);
    unlink(path);
    assert_int_equal(err, GP_OK);
    assert_int_equal(w.nitems, NSHAPES);
    assert_int_equal(w.ntraces, 1);
    assert_int_equal(w.traces[0].nrows, 3000);
    free(text);
    gp_arena_free(&a);
}

/* Writes len bytes of text to a new temporary file, named into path. */
static void write_temp(char *path, const char *text, size_t len)
{
    strcpy(path, "/tmp/gp-static-trace-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
}

static void assert_same_items(const struct gp_workload *p, const struct gp_workload *q)
{
    assert_int_equal(p->nitems, q->nitems);
    assert_int_equal(p->ntraces, q->ntraces);
    for (size_t i = 0; i < p->nitems; i++) {
        const struct gp_item *x = &p->items[i], *y = &q->items[i];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->source, y->source);
        assert_int_equal(x->repeat, y->repeat);
        assert_true(x->arrival_s == y->arrival_s && x->has_duration == y->has_duration &&
                    x->duration.a == y->duration.a);
        const struct gp_pod_spec *a = &x->pod, *b = &y->pod;
        assert_same_pods(&a, 1, &b, 1);
    }
    for (size_t t = 0; t < p->ntraces; t++) {
        assert_int_equal(p->traces[t].nrows, q->traces[t].nrows);
        assert_memory_equal(p->traces[t].row_items, q->traces[t].row_items,
                            p->traces[t].nrows * sizeof *p->traces[t].row_items);
    }
}

/* A file read in pieces is its text read whole: the same items, traces
 * and errors (lines included), whatever the piece size, for quoted fields
 * across lines, CRLF and CR line ends, a byte order mark, blank lines,
 * errors early and late, an unterminated or a stray quote. */
static void test_pieces_same(void **state)
{
    (void)state;
    static const char hdr[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
    static const char *const bodies[] = {
        "a,1000,2000,1,500,T4\nb,2000,4000,0,0,\n\"c\nd \"\"e\"\"\",1000,2000,1,500,T4\n",
        "a,1000,2000,1,500,T4\r\nb,2000,4000,0,0,\r\n\r\n  \r\nc,1000,2000,1,500,T4",
        "a,1000,2000,1,500,T4\rb,2000,4000,0,0,\rc,1000,2000,1,500,T4\r",
        "a,1000,2000,1,500,T4\n\n   \n\t\nb,1000,2000,1,500,T4\nc,1,2,0,0,\n",
        "a,1000,2000,1,500,T4\nb,1000,2000,1,500,T4\nc,1000,2000,1,5000,T4\n",
        "a,1000,2000,1,500,T4\nb,1000,2000,1,500,T4\n\"c,1000,2000,1,500,T4\nd,1,2,0,0,\n",
        "a,1000,2000,1,500,T4\nb,10\"00,2000,1,500,T4\nc,1,2,0,0,\nd,1,2,0,0,\n",
        "a,1000,2000,1,500,T4\nb,1000,2000,1,500\nc,1,2,0,0,\n",
        "",
    };
    static const char *const prefixes[] = {"", "\xEF\xBB\xBF", "\xEF\xBB\xBF\n\n", "\n  \n"};
    static const size_t pieces[] = {1, 2, 3, 5, 8, 13, 64, 4096};
    char text[1024], path[64];
    for (size_t b = 0; b < sizeof bodies / sizeof bodies[0]; b++)
        for (size_t f = 0; f < sizeof prefixes / sizeof prefixes[0]; f++) {
            int len =
                snprintf(text, sizeof text, "%s%s%s", prefixes[f], b == 8 ? "" : hdr, bodies[b]);
            write_temp(path, text, (size_t)len);
            for (int so = 0; so < 2; so++) {
                struct gp_arena a;
                gp_arena_init(&a);
                struct gp_workload whole = {.static_only = so == 1};
                struct gp_diag dw = {""};
                enum gp_err ew = gp_workload_parse_openb(text, (size_t)len, path, &a, &whole, &dw);
                for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
                    struct gp_workload read = {.static_only = so == 1};
                    struct gp_diag dr = {""};
                    gp_workload_set_openb_piece(pieces[k]);
                    enum gp_err er = gp_workload_read_openb(path, &a, &read, &dr);
                    gp_workload_set_openb_piece(0);
                    if (er != ew || (ew != GP_OK && strcmp(dr.msg, dw.msg) != 0))
                        fail_msg("body %zu prefix %zu piece %zu: got %d \"%s\", want %d \"%s\"", b,
                                 f, pieces[k], (int)er, dr.msg, (int)ew, dw.msg);
                    if (ew == GP_OK)
                        assert_same_items(&read, &whole);
                }
                gp_arena_free(&a);
            }
            unlink(path);
        }
    /* a file over the input limit: gp_fs_read's refusal; under a small
     * limit a file with no cut (CR line ends) still reads whole */
    int len = snprintf(text, sizeof text, "%s%s", hdr, bodies[2]);
    write_temp(path, text, (size_t)len);
    struct gp_diag want = {""}, got = {""};
    char *ignored = NULL;
    size_t ilen;
    gp_fs_set_max_read(64, NULL);
    assert_int_equal(gp_fs_read(path, &ignored, &ilen, &want), GP_EINVALID);
    struct gp_arena la;
    gp_arena_init(&la);
    struct gp_workload lw = {0};
    assert_int_equal(gp_workload_read_openb(path, &la, &lw, &got), GP_EINVALID);
    assert_string_equal(got.msg, want.msg);
    gp_fs_set_max_read((uint64_t)len, NULL);
    gp_workload_set_openb_piece(4);
    assert_int_equal(gp_workload_read_openb(path, &la, &lw, &got), GP_OK);
    assert_int_equal(lw.nitems, 3);
    gp_workload_set_openb_piece(0);
    gp_fs_set_max_read(0, NULL);
    gp_arena_free(&la);
    unlink(path);

    /* a trace of many pieces */
    size_t n;
    char *big = trace_csv(3000, 0, &n);
    write_temp(path, big, n);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload whole = {.static_only = true}, read = {.static_only = true};
    struct gp_diag d = {""};
    assert_int_equal(gp_workload_parse_openb(big, n, path, &a, &whole, &d), GP_OK);
    gp_workload_set_openb_piece(1000);
    assert_int_equal(gp_workload_read_openb(path, &a, &read, &d), GP_OK);
    gp_workload_set_openb_piece(0);
    assert_same_items(&read, &whole);
    unlink(path);
    free(big);
    gp_arena_free(&a);
}

/* The openb traces of the FGD paper: the same sequences either way. */
static void test_shared_traces(void **state)
{
    (void)state;
    static const char *const names[] = {"default", "gpushare40", "multigpu50", "gpuspec33"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, OPENB_SHARED "openb_pod_list_%s.csv", names[i]);
        GP_NEED_SHARED(path);
        char *text = NULL;
        size_t len = 0;
        struct gp_diag d = {""};
        if (gp_fs_read(path, &text, &len, &d) != GP_OK)
            fail_msg("%s", d.msg);
        struct gp_arena a, b;
        gp_arena_init(&a);
        gp_arena_init(&b);
        struct gp_workload rows, items;
        read_trace(text, len, true, &a, &rows);
        read_trace(text, len, false, &b, &items);
        assert_true(rows.nitems < items.nitems / 10);
        assert_same_runs(&rows, &items, 42, "fgd");
        free(text);
        gp_arena_free(&a);
        gp_arena_free(&b);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_kept_small), cmocka_unit_test(test_errors_same),
        cmocka_unit_test(test_traces_in_order), cmocka_unit_test(test_budget_counts_rows),
        cmocka_unit_test(test_pieces_same),
    };
    /* tests/CMakeLists.txt runs these apart (shared_data.h) */
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_shared_traces),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
