/* test_philly.c - the Philly job table and machine list readers
 * (io/philly.c): the UTC time parser, small synthetic fixtures, every error
 * class, and the real files under GP_SHARED_DIR when they are there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared_data.h"

#include "io/cluster.h"
#include "io/philly.h"
#include "io/philly_vc.h"
#include "io/workload.h"
#include "util/arena.h"
#include "util/fs.h"

#define PHILLY_SHARED GP_SHARED_DIR "/data/philly/"

static char *slurp(const char *path, size_t *len)
{
    char *text = NULL;
    struct gp_diag d;
    if (gp_fs_read(path, &text, len, &d) != GP_OK)
        fail_msg("%s", d.msg);
    return text;
}

static void test_time(void **state)
{
    (void)state;
    /* expected values from Python's calendar.timegm */
    static const struct {
        const char *s;
        int64_t t;
    } good[] = {
        {"1970-01-01 00:00:00", 0},
        {"1969-12-31 23:59:59", -1},
        {"2000-02-29 12:00:00", 951825600},
        {"2017-09-04 10:30:41", 1504521041},
        {"2017-12-22 08:02:11", 1513929731},
        {"2400-03-01 00:00:00", 13574649600},
        {"0001-01-01 00:00:00", -62135596800},
        {"2017-09-04T10:30:41", 1504521041},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t t = 42;
        assert_true(gp_philly_parse_time(good[i].s, &t));
        assert_true(t == good[i].t);
    }
    static const char *const bad[] = {
        "",
        "2017-02-29 00:00:00", /* not a leap year */
        "1900-02-29 00:00:00", /* nor this */
        "2017-13-01 00:00:00",
        "2017-00-01 00:00:00",
        "2017-04-31 00:00:00",
        "2017-01-00 00:00:00",
        "2017-01-01 24:00:00",
        "2017-01-01 00:60:00",
        "2017-01-01 00:00:60",
        "2017-1-01 00:00:00",
        "2017-01-01 00:00:00Z",
        "2017-01-01 00:00",
        "2017/01/01 00:00:00",
        "2017-01-01 0a:00:00",
        "-017-01-01 00:00:00",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t t = 42;
        assert_false(gp_philly_parse_time(bad[i], &t));
        assert_true(t == 42);
    }
    /* every day of a few years, against the C library (TZ-free: gmtime) */
    for (time_t t = 946684800; t < 1104537600; t += 86400 + 3661) {
        struct tm tm;
        char s[32];
        assert_non_null(gmtime_r(&t, &tm));
        strftime(s, sizeof s, "%Y-%m-%d %H:%M:%S", &tm);
        int64_t got;
        assert_true(gp_philly_parse_time(s, &got));
        assert_true(got == (int64_t)t);
    }
}

static void test_jobs_fixture(void **state)
{
    (void)state;
    size_t len;
    char *text = slurp(GP_TEST_DATA "/philly/jobs.csv", &len);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    assert_int_equal(gp_workload_parse_philly(text, len, "jobs.csv", &a, &w, &d), GP_OK);
    assert_int_equal(w.nitems, 5);

    const struct gp_item *it = &w.items[0];
    assert_string_equal(it->name, "philly-0");
    assert_string_equal(it->pod.name, "philly-0");
    assert_string_equal(it->source, "jobs.csv:2");
    assert_int_equal(it->kind, GP_ITEM_POD);
    assert_int_equal(it->pod.gpu_count, 1);
    assert_int_equal(it->pod.gpu_milli, 1000);
    assert_int_equal(it->pod.cpu_milli, 4000);
    assert_int_equal(it->pod.mem_mib, 32768);
    assert_true(it->has_duration);
    assert_int_equal(it->duration.kind, GP_DIST_FIXED);
    assert_true(it->duration.a == 66.0);
    assert_true(it->arrival_s == 716516.0); /* from 2017-09-30 23:59:59, the earliest */
    assert_string_equal(it->queue, "11cb48");
    assert_int_equal(it->repeat, 1);

    it = &w.items[1]; /* the earliest row, not the first */
    assert_true(it->arrival_s == 0.0);
    assert_int_equal(it->pod.gpu_count, 2);
    assert_int_equal(it->pod.cpu_milli, 8000);
    assert_int_equal(it->pod.mem_mib, 65536);
    assert_true(it->duration.a == 2951.5);
    assert_string_equal(it->queue, "6214e9");

    it = &w.items[2]; /* across a month end: one second later */
    assert_true(it->arrival_s == 1.0);
    assert_int_equal(it->kind, GP_ITEM_POD);
    assert_int_equal(it->pod.gpu_count, 8);
    assert_ptr_equal(it->queue, w.items[0].queue); /* interned */

    it = &w.items[3]; /* 12 GPUs: a gang of 2 pods of 8 */
    assert_int_equal(it->kind, GP_ITEM_JOB);
    assert_int_equal(it->completions, 2);
    assert_int_equal(it->parallelism, 2);
    assert_int_equal(it->gang_min, 2); /* placed all or nothing */
    assert_int_equal(it->pod.gpu_count, 8);
    assert_int_equal(it->pod.cpu_milli, 32000);
    assert_int_equal(it->pod.mem_mib, 262144);
    assert_true(it->arrival_s == 713617.0);
    assert_string_equal(it->queue, "b436b2");

    it = &w.items[4]; /* 128 GPUs: 16 pods */
    assert_int_equal(it->kind, GP_ITEM_JOB);
    assert_int_equal(it->completions, 16);
    assert_int_equal(it->parallelism, 16);
    assert_true(it->arrival_s == 7113732.0);
    assert_true(it->duration.a == 1.0);
    assert_string_equal(it->source, "jobs.csv:6");
    gp_arena_free(&a);
    free(text);
}

static enum gp_err jobs(const char *text, struct gp_diag *d)
{
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    enum gp_err err = gp_workload_parse_philly(text, strlen(text), "j.csv", &a, &w, d);
    if (err != GP_OK)
        assert_int_equal(w.nitems, 0);
    gp_arena_free(&a);
    return err;
}

#define JOB_HEADER "timestamp,duration,num_gpus,gpu_time,cluster\n"

static void test_job_errors(void **state)
{
    (void)state;
    struct gp_diag d;
    assert_int_equal(jobs(JOB_HEADER "2017-10-09 07:01:55,66.0,x,66.0,vc\n", &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "j.csv:2: column 'num_gpus': expected an integer 1..65536, got \"x\"");
    assert_int_equal(jobs(JOB_HEADER "2017-10-09 07:01:55,66.0,0,0,vc\n", &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "j.csv:2: column 'num_gpus': expected an integer 1..65536, got \"0\"");
    assert_int_equal(jobs(JOB_HEADER "2017-10-09 07:01:55,-5,1,66.0,vc\n", &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "j.csv:2: column 'duration': expected a number 0..1e+10, got \"-5\"");
    assert_int_equal(jobs(JOB_HEADER "2017-10-09 07:01:55,66.0,1,lots,vc\n", &d), GP_EINVALID);
    assert_string_equal(d.msg, "j.csv:2: column 'gpu_time': expected a number >= 0, got \"lots\"");
    assert_int_equal(jobs(JOB_HEADER "\n2017-02-30 07:01:55,66.0,1,66.0,vc\n", &d), GP_EINVALID);
    assert_string_equal(d.msg, "j.csv:3: column 'timestamp': expected a time YYYY-MM-DD HH:MM:SS, "
                               "got \"2017-02-30 07:01:55\"");
    assert_int_equal(jobs(JOB_HEADER "2017-10-09 07:01:55,66.0,1,66.0\n", &d), GP_EPARSE);
    assert_string_equal(d.msg, "j.csv:2: expected 5 fields as in the header, got 4");
    assert_int_equal(jobs(JOB_HEADER "\"2017-10-09 07:01:55,66.0,1,66.0,vc\n", &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "j.csv:2: unterminated quoted field"));
    assert_int_equal(jobs("timestamp,duration,gpus\n", &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "j.csv:1: unknown column \"gpus\""));
    assert_int_equal(jobs("timestamp,duration\n", &d), GP_EPARSE);
    assert_string_equal(d.msg, "j.csv:1: missing required column 'num_gpus' in the header");
    assert_int_equal(jobs("", &d), GP_EPARSE);
    assert_string_equal(d.msg, "j.csv: empty file, expected a header line");
    assert_int_equal(jobs(JOB_HEADER "\n\n", &d), GP_EINVALID);
    assert_string_equal(d.msg, "j.csv: no jobs, expected at least one row after the header");
    /* optional columns may be absent or empty */
    assert_int_equal(jobs("num_gpus,timestamp,duration\r\n3,2017-10-09 07:01:55,1\r\n", &d), GP_OK);
    assert_int_equal(jobs(JOB_HEADER "2017-10-09 07:01:55,66.0,1,,\n", &d), GP_OK);
}

static enum gp_err machines(const char *text, struct gp_arena *a, struct gp_cluster *c,
                            struct gp_diag *d)
{
    *c = (struct gp_cluster){0};
    return gp_cluster_parse_philly(text, strlen(text), "m.txt", a, c, d);
}

static void test_machine_list(void **state)
{
    (void)state;
    size_t len;
    char *text = slurp(GP_TEST_DATA "/philly/machines.txt", &len);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c = {0};
    struct gp_diag d = {""};
    assert_int_equal(gp_cluster_parse_philly(text, len, "machines.txt", &a, &c, &d), GP_OK);
    assert_string_equal(c.source, "machines.txt");
    assert_int_equal(c.nnodes, 3);
    const struct gp_node_spec *n = &c.nodes[0];
    assert_string_equal(n->name, "m0");
    assert_int_equal(n->gpu_count, 2);
    assert_int_equal(n->gpu_mem_mib, 12288);
    assert_string_equal(n->gpu_model, "philly-12GB");
    assert_int_equal(n->cpu_milli, 8000);
    assert_int_equal(n->mem_mib, 65536);
    assert_string_equal(n->pool, "philly-2gpu-12GB");
    assert_int_equal(n->nlabels, 2);
    assert_string_equal(n->labels[0].key, "gpuplane.io/pool");
    assert_string_equal(n->labels[0].value, "philly-2gpu-12GB");
    assert_string_equal(n->labels[1].key, "nvidia.com/gpu.product");
    assert_string_equal(n->labels[1].value, "philly-12GB");
    n = &c.nodes[1];
    assert_string_equal(n->name, "m1");
    assert_int_equal(n->gpu_count, 8);
    assert_int_equal(n->gpu_mem_mib, 24576);
    assert_string_equal(n->gpu_model, "philly-24GB");
    assert_int_equal(n->cpu_milli, 32000);
    assert_int_equal(n->mem_mib, 262144);
    assert_string_equal(n->pool, "philly-8gpu-24GB");
    assert_string_equal(n->labels[0].value, "philly-8gpu-24GB");
    assert_string_equal(c.nodes[2].pool, "philly-2gpu-12GB");
    assert_ptr_equal(c.nodes[2].labels, c.nodes[0].labels);
    assert_int_equal(c.npools, 2);
    assert_string_equal(c.pools[0].name, "philly-2gpu-12GB");
    assert_int_equal(c.pools[0].count, 2);
    assert_int_equal(c.pools[0].gpus_per_node, 2);
    assert_int_equal(c.pools[0].gpu_mem_mib, 12288);
    assert_string_equal(c.pools[1].name, "philly-8gpu-24GB");
    assert_int_equal(c.pools[1].count, 1);
    free(text);

    /* the revised list: no GPU memory, machines without GPUs left out */
    text = slurp(GP_TEST_DATA "/philly/machines_revised.csv", &len);
    assert_int_equal(gp_cluster_parse_philly(text, len, "rev.csv", &a, &c, &d), GP_OK);
    assert_int_equal(c.nnodes, 3);
    assert_string_equal(c.nodes[0].name, "m0");
    assert_string_equal(c.nodes[1].name, "m1");
    assert_string_equal(c.nodes[2].name, "m3");
    assert_int_equal(c.nodes[1].gpu_count, 4);
    assert_int_equal(c.nodes[1].gpu_mem_mib, 0);
    assert_string_equal(c.nodes[1].gpu_model, "philly");
    assert_int_equal(c.nodes[1].cpu_milli, 16000);
    assert_string_equal(c.nodes[1].pool, "philly-4gpu");
    assert_int_equal(c.npools, 2);
    assert_string_equal(c.pools[0].name, "philly-8gpu");
    assert_int_equal(c.pools[0].count, 2);
    free(text);
    gp_arena_free(&a);
}

static void test_machine_errors(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c;
    struct gp_diag d;
#define M_HEADER "machineId, number of GPUs, single GPU mem\n"
    assert_int_equal(machines(M_HEADER "m0,2, 12TB\n", &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg, "m.txt:2: column 'single GPU mem': expected a GPU memory size like "
                               "12GB (1..1024), got \"12TB\"");
    assert_int_equal(machines(M_HEADER "m0,2, 0GB\n", &a, &c, &d), GP_EINVALID);
    assert_int_equal(machines(M_HEADER "m0,two, 12GB\n", &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "m.txt:2: column 'number of GPUs': expected an integer 0..16, got \"two\"");
    assert_int_equal(machines(M_HEADER "m0,2, 12GB\nm0,8, 24GB\n", &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg, "m.txt:3: column 'machineId': machine \"m0\" is already listed on "
                               "line 2");
    assert_int_equal(machines(M_HEADER " ,2, 12GB\n", &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg, "m.txt:2: column 'machineId': expected a machine name, got \"\"");
    assert_int_equal(machines(M_HEADER "m0,2\n", &a, &c, &d), GP_EPARSE);
    assert_int_equal(machines("machineId\n", &a, &c, &d), GP_EPARSE);
    assert_string_equal(d.msg, "m.txt:1: missing required column 'number of GPUs' in the header");
    assert_int_equal(machines("", &a, &c, &d), GP_EPARSE);
    assert_int_equal(machines(M_HEADER, &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg, "m.txt: no machines, expected at least one row after the header");
    assert_int_equal(machines(",machineId,number of GPUs\n0,m0,0\n", &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg, "m.txt: no machine has GPUs, expected at least one");
    /* memory spellings */
    assert_int_equal(machines(M_HEADER "a,1,16\nb,1,16 GB\nc,1,16GiB\n", &a, &c, &d), GP_OK);
    assert_int_equal(c.npools, 1);
    assert_int_equal(c.nodes[2].gpu_mem_mib, 16384);
    gp_arena_free(&a);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The real job table: row count, gang sizes and time span of the data
 * README. */
static void test_real_jobs(void **state)
{
    (void)state;
    const char *path = PHILLY_SHARED "pollux-osdi21/philly.csv";
    GP_NEED_SHARED(path);
    size_t len;
    char *text = slurp(path, &len);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    double t0 = now_s();
    enum gp_err err = gp_workload_parse_philly(text, len, path, &a, &w, &d);
    double took = now_s() - t0;
    if (err != GP_OK)
        fail_msg("%s", d.msg);
    fprintf(stderr, "parsed %zu Philly jobs (%zu bytes) in %.3f s\n", w.nitems, len, took);
    /* printed, not asserted: a loaded machine or a sanitizer build is no
     * failure; the parser's speed is measured in bench/ */
    assert_int_equal(w.nitems, 82247);
    /* pods: num_gpus 1, 2, 4, 8; gangs (jobs of 8-GPU pods): 12 and 16
     * GPUs make 2 pods, 24 make 3, 32 make 4, 64 make 8, 128 make 16 */
    uint32_t pods_by_gpus[9] = {0}, gangs_by_pods[17] = {0}, other = 0;
    double last = 0, first = 1;
    size_t vc_6214e9 = 0;
    for (size_t i = 0; i < w.nitems; i++) {
        const struct gp_item *it = &w.items[i];
        if (it->kind == GP_ITEM_POD && it->pod.gpu_count <= 8)
            pods_by_gpus[it->pod.gpu_count]++;
        else if (it->kind == GP_ITEM_JOB && it->pod.gpu_count == 8 && it->completions <= 16 &&
                 it->parallelism == it->completions)
            gangs_by_pods[it->completions]++;
        else
            other++;
        if (it->arrival_s > last)
            last = it->arrival_s;
        if (it->arrival_s < first)
            first = it->arrival_s;
        assert_true(it->has_duration);
        assert_true(it->duration.a >= 1.0);
        vc_6214e9 += it->queue && strcmp(it->queue, "6214e9") == 0;
    }
    assert_int_equal(other, 0);
    assert_int_equal(pods_by_gpus[1], 76627);
    assert_int_equal(pods_by_gpus[2], 1818);
    assert_int_equal(pods_by_gpus[4], 1870);
    assert_int_equal(pods_by_gpus[8], 1643);
    assert_int_equal(gangs_by_pods[2], 7 + 199);
    assert_int_equal(gangs_by_pods[3], 7);
    assert_int_equal(gangs_by_pods[4], 67);
    assert_int_equal(gangs_by_pods[8], 6);
    assert_int_equal(gangs_by_pods[16], 3);
    assert_true(first == 0.0);
    assert_true(last == 9408690.0); /* 2017-09-04 10:30:41 to 2017-12-22 08:02:11 */
    assert_int_equal(vc_6214e9, 41226);
    gp_arena_free(&a);
    free(text);
}

static void test_real_machines(void **state)
{
    (void)state;
    const char *path = PHILLY_SHARED "machine-list/cluster_machine_list";
    GP_NEED_SHARED(path);
    size_t len;
    char *text = slurp(path, &len);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c = {0};
    struct gp_diag d = {""};
    if (gp_cluster_parse_philly(text, len, path, &a, &c, &d) != GP_OK)
        fail_msg("%s", d.msg);
    assert_int_equal(c.nnodes, 552);
    assert_int_equal(c.npools, 2);
    assert_string_equal(c.pools[0].name, "philly-2gpu-12GB");
    assert_int_equal(c.pools[0].count, 321);
    assert_string_equal(c.pools[1].name, "philly-8gpu-24GB");
    assert_int_equal(c.pools[1].count, 231);
    free(text);

    path = PHILLY_SHARED "machine-list/revised_machine_list.csv";
    GP_NEED_SHARED(path);
    text = slurp(path, &len);
    if (gp_cluster_parse_philly(text, len, path, &a, &c, &d) != GP_OK)
        fail_msg("%s", d.msg);
    assert_int_equal(c.nnodes, 552 - 13);
    uint32_t by_gpus[9] = {0};
    for (size_t i = 0; i < c.nnodes; i++) {
        assert_true(c.nodes[i].gpu_count <= 8);
        by_gpus[c.nodes[i].gpu_count]++;
    }
    assert_int_equal(by_gpus[8], 264);
    assert_int_equal(by_gpus[4], 271);
    assert_int_equal(by_gpus[3], 1);
    assert_int_equal(by_gpus[2], 3);
    gp_arena_free(&a);
    free(text);
}

/* --vc-queues: one queue per VC in order of first use, sized from a VC
 * list when given; errors name the list's line. */
static void test_vc_queues(void **state)
{
    (void)state;
    static const char jobs[] = "timestamp,duration,num_gpus,gpu_time,cluster\n"
                               "2017-10-01 00:00:00,10,1,10,vcB\n"
                               "2017-10-01 00:00:01,10,16,160,vcA\n"
                               "2017-10-01 00:00:02,10,1,10,vcB\n"
                               "2017-10-01 00:00:03,10,1,10,\n";
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    assert_int_equal(gp_workload_parse_philly(jobs, sizeof jobs - 1, "j.csv", &a, &w, &d), GP_OK);
    static const char vcs[] = "vc,node num\nvcA,4\nvcZ,2\n";
    assert_int_equal(gp_philly_vc_queues(&w, vcs, sizeof vcs - 1, "vcs.csv", &a, &d), GP_OK);
    assert_int_equal(w.nqueues, 2);
    assert_string_equal(w.queues[0].spec.name, "vcB"); /* first used */
    assert_true(w.queues[0].spec.weight == 1);
    assert_false(w.queues[0].spec.gpu_milli.limited);
    assert_true(w.queues[0].spec.no_preempt_within);
    assert_string_equal(w.queues[1].spec.name, "vcA");
    assert_true(w.queues[1].spec.weight == 4);
    assert_true(w.queues[1].spec.gpu_milli.limited);
    assert_int_equal(w.queues[1].spec.gpu_milli.guaranteed, 0);
    assert_int_equal(w.queues[1].spec.gpu_milli.borrow_limit, 4 * 8 * 1000);
    assert_null(w.queues[1].parent);
    /* declared already */
    assert_int_equal(gp_philly_vc_queues(&w, NULL, 0, NULL, &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "declares its own queues"));
    /* a bad list leaves the workload as it was */
    w.nqueues = 0;
    static const char bad[] = "vc,node num\nvcA,4\nvcA,2\n";
    assert_int_equal(gp_philly_vc_queues(&w, bad, sizeof bad - 1, "vcs.csv", &a, &d), GP_EINVALID);
    assert_string_equal(d.msg, "vcs.csv:3: VC \"vcA\" is listed twice");
    assert_int_equal(w.nqueues, 0);
    static const char neg[] = "vc,node num\nvcA,-1\n";
    assert_int_equal(gp_philly_vc_queues(&w, neg, sizeof neg - 1, "vcs.csv", &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "vcs.csv:2: column 'node num'"));
    /* no list: equal weights, no caps */
    assert_int_equal(gp_philly_vc_queues(&w, NULL, 0, NULL, &a, &d), GP_OK);
    assert_int_equal(w.nqueues, 2);
    assert_false(w.queues[1].spec.gpu_milli.limited);
    gp_arena_free(&a);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time),           cmocka_unit_test(test_jobs_fixture),
        cmocka_unit_test(test_job_errors),     cmocka_unit_test(test_machine_list),
        cmocka_unit_test(test_machine_errors), cmocka_unit_test(test_vc_queues),
    };
    /* tests/CMakeLists.txt runs these apart (shared_data.h) */
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_real_jobs),
        cmocka_unit_test(test_real_machines),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
