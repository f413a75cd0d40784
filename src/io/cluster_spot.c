/* cluster_spot.c - spot pools of a Cluster spec: spot: true, and the
 * interruptions (a Poisson rate per node-hour, recorded times, or a file
 * of times next to the cluster file) with the notice before each; the
 * fields are checked together once the pool is read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/cluster_internal.h"
#include "io/spot_times.h"
#include "util/fs.h"

#define MAX_NOTICE_S     3600.0
#define MAX_RATE         1000.0 /* interruptions per node-hour */
#define MAX_TIMES        1000000
#define MAX_TIME_S       1e9
#define MAX_SERIES_BYTES (16u << 20)

enum gp_err gp_cluster_pool_spot(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.spot = v;
    return gp_cluster_read_bool(y, v, &po->spec.spot);
}

enum gp_err gp_cluster_pool_rate(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.rate = v;
    return gp_yaml_number(y, v, 0, MAX_RATE, &po->spec.spot_rate_per_node_hour);
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

struct times_walk {
    double *t;
};

static enum gp_err time_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct times_walk *w = ctx;
    return gp_cluster_read_duration(y, item, MAX_TIME_S, &w->t[i]);
}

enum gp_err gp_cluster_pool_times(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.times = v;
    if (!fy_node_is_sequence(v))
        return gp_yaml_list(y, v, time_item, NULL); /* reports the type */
    int n = fy_node_sequence_item_count(v);
    if (n <= 0)
        return GP_OK;
    if (n > MAX_TIMES)
        return gp_yaml_fail(y, v, GP_ELIMIT, "%d times, more than the %d supported", n, MAX_TIMES);
    struct times_walk w = {gp_arena_alloc(y->arena, (size_t)n * sizeof(double))};
    if (!w.t)
        return gp_cluster_oom(y);
    enum gp_err err = gp_yaml_list(y, v, time_item, &w);
    if (err != GP_OK)
        return err;
    qsort(w.t, (size_t)n, sizeof *w.t, cmp_double);
    po->spec.spot_times_s = w.t;
    po->spec.nspot_times = (size_t)n;
    return GP_OK;
}

/* The directory part of the YAML file's name, with its slash ("" when none). */
static size_t dir_len(const char *name)
{
    const char *slash = strrchr(name, '/');
    return slash ? (size_t)(slash - name) + 1 : 0;
}

/* interruptionFile: a text file of times (one duration per line, "#"
 * comments and blank lines ignored), relative to the cluster file. */
enum gp_err gp_cluster_pool_file(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    const char *rel;
    po->f.file = v;
    enum gp_err err = gp_yaml_string(y, v, &rel);
    if (err != GP_OK)
        return err;
    size_t dl = rel[0] == '/' ? 0 : dir_len(y->name);
    char *path = gp_arena_printf(y->arena, "%.*s%s", (int)dl, y->name, rel);
    if (!path)
        return gp_cluster_oom(y);
    char q[80];
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_SERIES_BYTES)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "expected a readable regular file of at most 16 MiB, got \"%s\" (%s)",
                            gp_yaml_quote(v, q, sizeof q), path);
    char *text = NULL;
    size_t len = 0;
    struct gp_diag d = {""};
    if ((err = gp_fs_read(path, &text, &len, &d)) == GP_OK)
        err = gp_spot_times_parse(text, len, path, MAX_TIME_S, MAX_TIMES, y->arena,
                                  &po->spec.spot_times_s, &po->spec.nspot_times, &d);
    free(text);
    return err == GP_OK ? GP_OK : gp_yaml_fail(y, v, err, "%s", d.msg);
}

enum gp_err gp_cluster_pool_notice(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.notice = v;
    return gp_cluster_read_duration(y, v, MAX_NOTICE_S, &po->spec.spot_notice_s);
}

#define DEFAULT_NOTICE_S 120.0 /* AWS's two-minute warning */

/* The interruption fields need spot: true; a rate or a series, not both. */
enum gp_err gp_cluster_check_spot(struct gp_yaml *y, struct cluster_pool *po)
{
    struct gp_pool_spec *p = &po->spec;
    static const char *const keys[] = {"interruptionRate", "interruptionTimes", "interruptionFile",
                                       "spotNotice"};
    struct fy_node *nodes[] = {po->f.rate, po->f.times, po->f.file, po->f.notice};
    if (!p->spot) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (nodes[i])
                return gp_cluster_key_fail(y, keys[i], nodes[i], GP_EINVALID,
                                           "only with spot: true");
        return GP_OK;
    }
    if (po->f.times && po->f.file)
        return gp_cluster_key_fail(y, "interruptionFile", po->f.file, GP_EINVALID,
                                   "not with interruptionTimes (one recorded series per pool)");
    if (po->f.rate && (po->f.times || po->f.file))
        return gp_cluster_key_fail(y, "interruptionRate", po->f.rate, GP_EINVALID,
                                   "not with a recorded series (%s): give a rate or the times",
                                   po->f.times ? "interruptionTimes" : "interruptionFile");
    if (!po->f.notice)
        p->spot_notice_s = DEFAULT_NOTICE_S;
    return GP_OK;
}
