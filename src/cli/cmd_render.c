/* cmd_render.c - `gpuplane render`: the NVIDIA device plugin configs,
 * mig-parted config, GPU Operator ConfigMaps and node labels a Cluster
 * spec's GPU sharing needs (io/render.h). Everything is rendered before
 * anything is printed or written; with --out each file appears whole or
 * not at all, and a failed run removes the ones it wrote. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "io/cluster.h"
#include "io/render.h"
#include "util/arena.h"
#include "util/fs.h"
#include "util/sbuf.h"

struct render_opts {
    const char *cluster;
    const char *out;
    bool help;
};

static void render_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane render --cluster FILE [--out DIR]\n"
               "\n"
               "Emits what a Cluster spec's GPU sharing needs on the Kubernetes side, in the\n"
               "formats NVIDIA's tools read (docs/sharing.md):\n"
               "  device-plugin-<pool>.yaml     NVIDIA device plugin config of each GPU pool\n"
               "                                (time-slicing, MPS, MIG strategy)\n"
               "  configmap-device-plugin.yaml  those configs as one ConfigMap, a key per pool\n"
               "  mig-parted.yaml               mig-parted config: a MIG layout per MIG pool\n"
               "  configmap-mig-parted.yaml     that as the GPU Operator's custom MIG ConfigMap\n"
               "  node-labels.yaml              the labels each pool's nodes need\n"
               "\n"
               "options:\n"
               "  --cluster FILE  the cluster spec (gpuplane Cluster YAML, docs/FORMATS.md)\n"
               "  --out DIR       write one file each into DIR (created if missing); without\n"
               "                  it everything goes to stdout as one YAML stream, each\n"
               "                  document starting with a '# file: NAME' comment\n"
               "  -h, --help      this help\n"
               "\n"
               "exit codes: 0 success, 2 bad input or usage, 1 any other failure\n");
}

static const struct gp_opt render_opt_table[] = {
    GP_OPT_STRING_AT("--cluster", struct render_opts, cluster),
    GP_OPT_STRING_AT("--out", struct render_opts, out),
    GP_OPT_FLAG_AT("--help", struct render_opts, help),
    GP_OPT_FLAG_AT("-h", struct render_opts, help),
};

/* Writes every file into dir; on a failure removes those already written. */
static enum gp_err write_files(const char *dir, const struct gp_render *r, struct gp_diag *d)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return gp_diag_set(d, errno == ENOENT || errno == ENOTDIR ? GP_ENOTFOUND : GP_EIO,
                           "--out %s: cannot create the directory: %s", dir, strerror(errno));
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gp_diag_set(d, GP_EUSAGE, "--out %s: not a directory", dir);
    enum gp_err err = GP_OK;
    size_t written = 0;
    char path[4096];
    bool slash = dir[strlen(dir) - 1] == '/';
    for (size_t i = 0; i < r->nfiles && err == GP_OK; i++) {
        int n = snprintf(path, sizeof path, "%s%s%s", dir, slash ? "" : "/", r->files[i].name);
        if (n < 0 || (size_t)n >= sizeof path) {
            err = gp_diag_set(d, GP_EUSAGE, "--out %s: path too long", dir);
            break;
        }
        err = gp_fs_write_atomic(path, gp_sbuf_str(&r->files[i].text), r->files[i].text.len, d);
        if (err == GP_OK)
            written++;
    }
    for (size_t i = 0; err != GP_OK && i < written; i++) {
        snprintf(path, sizeof path, "%s%s%s", dir, slash ? "" : "/", r->files[i].name);
        remove(path);
    }
    return err;
}

int gp_cmd_render(int argc, char **argv)
{
    struct render_opts o;
    memset(&o, 0, sizeof o);
    struct gp_diag diag = {""};
    struct gp_arena arena;
    gp_arena_init(&arena);
    struct gp_cluster cluster;
    memset(&cluster, 0, sizeof cluster);
    struct gp_render r;
    memset(&r, 0, sizeof r);
    struct gp_sbuf stream;
    gp_sbuf_init(&stream);
    int rc = 0;

    enum gp_err err =
        gp_opts_parse(argc, argv, render_opt_table,
                      sizeof render_opt_table / sizeof render_opt_table[0], &o, &diag);
    if (err != GP_OK)
        goto fail;
    if (o.help) {
        render_usage(stdout);
        goto out;
    }
    if (!o.cluster) {
        err = gp_diag_set(&diag, GP_EUSAGE,
                          "render: --cluster FILE is required (see gpuplane "
                          "render --help)");
        goto fail;
    }
    if ((err = gp_cluster_load(o.cluster, &arena, &cluster, &diag)) != GP_OK)
        goto fail;
    gp_cli_warn_cluster(&cluster);
    if ((err = gp_render_cluster(&cluster, &r, &diag)) != GP_OK)
        goto fail;
    if (o.out) {
        if ((err = write_files(o.out, &r, &diag)) != GP_OK)
            goto fail;
        for (size_t i = 0; i < r.nfiles; i++)
            printf("wrote %s%s%s\n", o.out, o.out[strlen(o.out) - 1] == '/' ? "" : "/",
                   r.files[i].name);
    } else {
        gp_render_stream(&r, &stream);
        if (stream.oom) {
            err = gp_diag_set(&diag, GP_ENOMEM, "render: out of memory");
            goto fail;
        }
        if (fwrite(gp_sbuf_str(&stream), 1, stream.len, stdout) != stream.len ||
            fflush(stdout) != 0) {
            err = gp_diag_set(&diag, GP_EIO, "render: cannot write to stdout: %s", strerror(errno));
            goto fail;
        }
    }
    goto out;
fail:
    rc = gp_cli_fail(err, diag.msg);
out:
    gp_sbuf_free(&stream);
    gp_render_free(&r);
    gp_arena_free(&arena);
    return rc;
}
