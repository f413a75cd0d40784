/* cmd_render.c - `gpuplane render`: the NVIDIA device plugin configs,
 * mig-parted config, GPU Operator ConfigMaps and node labels a Cluster
 * spec's GPU sharing needs (io/render.h), or with --self gpuplane's own
 * deployment (kube/deploy.h). Everything is rendered before
 * anything is printed or written; with --out each file appears whole or
 * not at all, and a failed run removes the ones it wrote. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "engine/engine.h"
#include "io/cluster.h"
#include "io/render.h"
#include "kube/deploy.h"
#include "util/arena.h"
#include "util/fs.h"
#include "util/sbuf.h"

struct render_opts {
    const char *cluster;
    const char *out;
    bool help;
    /* --self */
    bool self, no_namespace;
    const char *ns, *image, *scheduler_name, *replicas, *policy;
};

static void render_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane render --cluster FILE [--out DIR]\n"
               "       gpuplane render --self [--namespace NS] [--no-namespace] [--image IMAGE]\n"
               "                       [--scheduler-name NAME] [--policy NAME] [--replicas N]\n"
               "                       [--out DIR]\n"
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
               "  --out DIR       write one file each into DIR (created if missing), all new\n"
               "                  or all old; without it (or with '-', a FIFO or a device)\n"
               "                  everything goes to stdout (or there) as one YAML stream,\n"
               "                  each document starting with a '# file: NAME' comment\n"
               "  -h, --help      this help\n"
               "\n"
               "With --self, gpuplane's own deployment instead (docs/kube.md, \"Deploying\"):\n"
               "  00-namespace.yaml .. 07-deployment.yaml  the Namespace, ServiceAccount,\n"
               "                  ClusterRole and Role with exactly what the scheduler uses,\n"
               "                  their bindings, its ConfigMap and the Deployment\n"
               "  --namespace NS  where it runs (default " GP_DEPLOY_NAMESPACE ")\n"
               "  --no-namespace  no Namespace object (NS exists already)\n"
               "  --image IMAGE   the container image (default " GP_DEPLOY_IMAGE ")\n"
               "  --scheduler-name NAME  the spec.schedulerName it takes "
               "(default " GP_DEPLOY_SCHEDULER_NAME ")\n"
               "  --policy NAME   the placement policy it runs (default " GP_DEPLOY_POLICY ")\n"
               "  --replicas N    replicas, one leading at a time (default 2, 1 to 10)\n");
    gp_opts_usage_common(f);
    fprintf(f, "\n"
               "exit codes: 0 success, 2 bad input or usage, 1 any other failure\n");
}

static const struct gp_opt render_opt_table[] = {
    GP_OPT_STRING_AT("--cluster", struct render_opts, cluster),
    GP_OPT_STRING_AT("--out", struct render_opts, out),
    GP_OPT_FLAG_AT("--help", struct render_opts, help),
    GP_OPT_FLAG_AT("-h", struct render_opts, help),
    GP_OPT_FLAG_AT("--self", struct render_opts, self),
    GP_OPT_FLAG_AT("--no-namespace", struct render_opts, no_namespace),
    GP_OPT_STRING_AT("--namespace", struct render_opts, ns),
    GP_OPT_STRING_AT("--image", struct render_opts, image),
    GP_OPT_STRING_AT("--scheduler-name", struct render_opts, scheduler_name),
    GP_OPT_STRING_AT("--replicas", struct render_opts, replicas),
    GP_OPT_STRING_AT("--policy", struct render_opts, policy),
};

/* --self: the deployment's options checked and rendered. */
static enum gp_err render_self(const struct render_opts *o, struct gp_render *r, struct gp_diag *d)
{
    struct gp_deploy_opts dopts;
    gp_deploy_opts_default(&dopts);
    if (o->ns)
        dopts.ns = o->ns;
    dopts.namespace_object = !o->no_namespace;
    if (o->image)
        dopts.image = o->image;
    if (o->scheduler_name)
        dopts.scheduler_name = o->scheduler_name;
    if (o->policy) {
        if (!gp_policy_find(o->policy)) {
            char names[256] = "";
            for (size_t i = 0; gp_policies[i]; i++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                         gp_policies[i]->name);
            return gp_diag_set(d, GP_EUSAGE, "--policy: unknown policy '%s' (expected one of: %s)",
                               o->policy, names);
        }
        dopts.policy = o->policy;
    }
    if (o->replicas) {
        char *end = NULL;
        unsigned long n = strtoul(o->replicas, &end, 10);
        if (!*o->replicas || *end || o->replicas[0] == '-' || n > 1000)
            return gp_diag_set(d, GP_EUSAGE, "--replicas %s: expected 1 to 10", o->replicas);
        dopts.replicas = (unsigned)n;
    }
    return gp_deploy_render(&dopts, r, d);
}

/* The options of one form given to the other. */
static enum gp_err check_forms(const struct render_opts *o, struct gp_diag *d)
{
    if (o->self && o->cluster)
        return gp_diag_set(d, GP_EUSAGE, "render: --self and --cluster: one or the other");
    if (!o->self && !o->cluster)
        return gp_diag_set(d, GP_EUSAGE,
                           "render: --cluster FILE is required, or --self (see gpuplane "
                           "render --help)");
    const char *self_only = o->no_namespace     ? "--no-namespace"
                            : o->ns             ? "--namespace"
                            : o->image          ? "--image"
                            : o->scheduler_name ? "--scheduler-name"
                            : o->replicas       ? "--replicas"
                            : o->policy         ? "--policy"
                                                : NULL;
    if (!o->self && self_only)
        return gp_diag_set(d, GP_EUSAGE, "render: %s goes with --self", self_only);
    return GP_OK;
}

/* Where --out goes: a directory (made if missing) for one file each, or
 * "-", a FIFO or a device for the one stream. Checked before the cluster
 * is read. */
static enum gp_err check_out(const char *out, bool *to_dir, struct gp_diag *d)
{
    static const char *const flag = "--out";
    struct stat st;
    *to_dir = false;
    if (strcmp(out, "-") == 0)
        return gp_cli_outputs_prepare(&flag, &out, 1, d);
    if (stat(out, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            *to_dir = true;
            if (access(out, W_OK | X_OK) != 0)
                return gp_diag_set(d, GP_EUSAGE, "--out %s: cannot write in the directory: %s", out,
                                   strerror(errno));
            return GP_OK;
        }
        if (S_ISREG(st.st_mode) && strncmp(out, "/dev/", 5) != 0 &&
            strncmp(out, "/proc/self/fd/", 14) != 0)
            return gp_diag_set(d, GP_EUSAGE,
                               "--out %s: is a file; expected a directory (or - for standard "
                               "output)",
                               out);
        return gp_cli_outputs_prepare(&flag, &out, 1, d);
    }
    if (errno != ENOENT)
        return gp_diag_set(d, GP_EUSAGE, "--out %s: %s", out, strerror(errno));
    *to_dir = true;
    char parent[4096];
    const char *slash = strrchr(out, '/');
    snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - out) : 1, slash ? out : ".");
    if (!*parent)
        snprintf(parent, sizeof parent, "/");
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        return gp_diag_set(d, GP_EUSAGE, "--out %s: no directory '%s' to create it in", out,
                           parent);
    if (access(parent, W_OK | X_OK) != 0)
        return gp_diag_set(d, GP_EUSAGE, "--out %s: cannot create it in '%s': %s", out, parent,
                           strerror(errno));
    return GP_OK;
}

/* Writes every file into dir, all new or all old; a directory made for
 * them is removed again if they cannot be written. */
static enum gp_err write_files(const char *dir, const char *cluster_arg, const struct gp_render *r,
                               struct gp_arena *a, const char ***paths, struct gp_diag *d)
{
    bool made = mkdir(dir, 0777) == 0;
    if (!made && errno != EEXIST)
        return gp_diag_set(d, GP_EUSAGE, "--out %s: cannot create the directory: %s", dir,
                           strerror(errno));
    enum gp_err err = GP_OK;
    const char **p = gp_arena_alloc(a, (r->nfiles ? r->nfiles : 1) * sizeof *p);
    const char **flags = gp_arena_alloc(a, (r->nfiles ? r->nfiles : 1) * sizeof *flags);
    struct gp_sbuf *bufs = gp_arena_alloc(a, (r->nfiles ? r->nfiles : 1) * sizeof *bufs);
    if (!p || !flags || !bufs)
        err = gp_diag_set(d, GP_ENOMEM, "render: out of memory");
    bool slash = dir[strlen(dir) - 1] == '/';
    for (size_t i = 0; i < r->nfiles && err == GP_OK; i++) {
        flags[i] = "--out";
        bufs[i] = r->files[i].text;
        if (!(p[i] = gp_arena_printf(a, "%s%s%s", dir, slash ? "" : "/", r->files[i].name)))
            err = gp_diag_set(d, GP_ENOMEM, "render: out of memory");
    }
    if (err == GP_OK)
        err = gp_cli_outputs_prepare(flags, p, r->nfiles, d);
    if (err == GP_OK && cluster_arg)
        err = gp_cli_outputs_input("--cluster", cluster_arg, d);
    if (err == GP_OK)
        err = gp_cli_write_all(p, bufs, r->nfiles, d);
    if (err != GP_OK && made) {
        gp_cli_outputs_release();
        rmdir(dir);
    }
    *paths = p;
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
    if ((err = check_forms(&o, &diag)) != GP_OK)
        goto fail;
    bool to_dir = false;
    if (o.out && (err = check_out(o.out, &to_dir, &diag)) != GP_OK)
        goto fail;
    if (o.self) {
        if ((err = render_self(&o, &r, &diag)) != GP_OK)
            goto fail;
    } else {
        if (!to_dir && (err = gp_cli_outputs_input("--cluster", o.cluster, &diag)) != GP_OK)
            goto fail;
        if ((err = gp_cluster_load(o.cluster, &arena, &cluster, &diag)) != GP_OK)
            goto fail;
        gp_cli_warn_cluster(&cluster);
        if ((err = gp_render_cluster(&cluster, &r, &diag)) != GP_OK)
            goto fail;
    }
    if (to_dir) {
        const char **paths = NULL;
        if ((err = write_files(o.out, o.cluster, &r, &arena, &paths, &diag)) != GP_OK)
            goto fail;
        for (size_t i = 0; i < r.nfiles; i++)
            printf("wrote %s\n", paths[i]);
    } else if (o.out) {
        gp_render_stream(&r, &stream);
        if ((err = gp_cli_write_all(&o.out, &stream, 1, &diag)) != GP_OK)
            goto fail;
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
