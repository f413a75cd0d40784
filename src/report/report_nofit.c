/* report_nofit.c - why pods can never fit, as the outputs say it: one
 * sentence per row of the result's never-fit reasons, with its numbers
 * ("they need 9 GPUs, the largest node has 8"; "gang pretrain needs 24
 * GPUs in one rack, the largest rack has 16"), and the need's name in the
 * JSON. The same words in the summary, the JSON and the HTML report. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/report_fmt.h"

static void fmt_cpus(char *buf, size_t n, int64_t milli)
{
    char num[32];
    gp_report_fmt_num(num, sizeof num, (double)milli / 1000.0, 3);
    snprintf(buf, n, "%s %s", num, milli == 1000 ? "CPU" : "CPUs");
}

static void fmt_mib(char *buf, size_t n, int64_t mib)
{
    char num[32];
    if (mib >= 1024 * 1024) {
        gp_report_fmt_num(num, sizeof num, (double)mib / (1024.0 * 1024.0), 2);
        snprintf(buf, n, "%s TiB", num);
    } else if (mib >= 1024) {
        gp_report_fmt_num(num, sizeof num, (double)mib / 1024.0, 2);
        snprintf(buf, n, "%s GiB", num);
    } else {
        snprintf(buf, n, "%" PRId64 " MiB", mib);
    }
}

static void fmt_gpus(char *buf, size_t n, int64_t milli)
{
    char num[32];
    gp_report_fmt_num(num, sizeof num, (double)milli / GP_GPU_MILLI, 3);
    snprintf(buf, n, "%s %s", num, milli == GP_GPU_MILLI ? "GPU" : "GPUs");
}

/* A count of CPUs or GPUs (from milli) without its unit: what a node has,
 * after what they need said the unit ("they need 9 GPUs, ... has 8"). */
static void fmt_milli(char *buf, size_t n, int64_t milli)
{
    gp_report_fmt_num(buf, n, (double)milli / 1000.0, 3);
}

/* "rack" for gpuplane.io/rack: what one value of a label is called. */
static const char *domain_noun(const char *key)
{
    const char *slash = key ? strrchr(key, '/') : NULL;
    return slash ? slash + 1 : key ? key : "domain";
}

/* The resources one pod asks for at once: "64 CPUs, 512 GiB of memory
 * and 8 GPUs". */
static void fmt_together(char *buf, size_t n, const struct gp_sim_nofit *nf)
{
    char part[3][64];
    int k = 0;
    if (nf->cpu_milli > 0)
        fmt_cpus(part[k++], sizeof part[0], nf->cpu_milli);
    if (nf->mem_mib > 0) {
        char m[48];
        fmt_mib(m, sizeof m, nf->mem_mib);
        snprintf(part[k++], sizeof part[0], "%s of memory", m);
    }
    if (nf->gpus > 0)
        snprintf(part[k++], sizeof part[0], "%" PRIu32 " %s", nf->gpus,
                 gp_report_plural(nf->gpus, "GPU", "GPUs"));
    if (k == 3)
        snprintf(buf, n, "%s, %s and %s", part[0], part[1], part[2]);
    else if (k == 2)
        snprintf(buf, n, "%s and %s", part[0], part[1]);
    else
        snprintf(buf, n, "%s", k ? part[0] : "what they ask");
}

static void nofit_gang_gpus(char *buf, size_t n, const struct gp_sim_nofit *nf)
{
    char need[48], have[48];
    const char *noun = domain_noun(nf->what);
    fmt_gpus(need, sizeof need, nf->need);
    fmt_milli(have, sizeof have, nf->have);
    if (nf->have >= nf->need) /* enough GPUs, but its pods do not pack into them */
        snprintf(buf, n,
                 "gang %s: its %" PRIu32 " pods do not pack into the nodes %s%s that can take "
                 "them (they need %s of %s)",
                 nf->gang ? nf->gang : "-", nf->gpus, nf->what ? "of any one " : "",
                 nf->what ? noun : "", need, have);
    else if (nf->what)
        snprintf(buf, n, "gang %s needs %s in one %s, the largest %s has %s",
                 nf->gang ? nf->gang : "-", need, noun, noun, have);
    else
        snprintf(buf, n, "gang %s needs %s, the nodes that can take its pods have %s",
                 nf->gang ? nf->gang : "-", need, have);
}

static void nofit_gpus(char *buf, size_t n, const struct gp_sim_nofit *nf, const char *may,
                       const char *scope)
{
    if (nf->what) { /* MIG instances */
        if (nf->have > 0)
            snprintf(buf, n,
                     "they need %" PRId64 " MIG %s instances, the largest %snode%s holds %" PRId64,
                     nf->need, nf->what, scope, may, nf->have);
        else
            snprintf(buf, n, "they need %" PRId64 " MIG %s %s, no node%s can hold one", nf->need,
                     nf->what, gp_report_plural((uint64_t)nf->need, "instance", "instances"), may);
    } else if (nf->have <= 0) {
        snprintf(buf, n, "they need %" PRId64 " %s, no node%s has a GPU", nf->need,
                 gp_report_plural((uint64_t)nf->need, "GPU", "GPUs"), may);
    } else if (nf->have_what) { /* a sharing limit per pod, not the node's GPUs */
        snprintf(buf, n, "they need %" PRId64 " GPUs, a %snode%s gives one pod at most %" PRId64,
                 nf->need, scope, may, nf->have);
    } else {
        snprintf(buf, n, "they need %" PRId64 " GPUs, the largest %snode%s has %" PRId64, nf->need,
                 scope, may, nf->have);
    }
}

static void nofit_quota(char *buf, size_t n, const struct gp_sim_nofit *nf)
{
    char need[48], have[48];
    if (nf->resource == GP_SIM_NOFIT_CPU) {
        fmt_cpus(need, sizeof need, nf->need);
        fmt_cpus(have, sizeof have, nf->have);
    } else if (nf->resource == GP_SIM_NOFIT_MEMORY) {
        fmt_mib(need, sizeof need, nf->need);
        fmt_mib(have, sizeof have, nf->have);
    } else {
        fmt_gpus(need, sizeof need, nf->need);
        fmt_gpus(have, sizeof have, nf->have);
    }
    snprintf(buf, n, "they need %s, queue %s's limit is %s", need, nf->what ? nf->what : "-", have);
}

/* The reason of a row about pods, "they" being its pods. */
static void nofit_pods(char *buf, size_t n, const struct gp_sim_nofit *nf)
{
    /* the largest of the nodes they may use, when it is not the cluster's:
     * "the largest T4 node" (their GPU models alone), or "the largest
     * node they may use" */
    char scope[128] = "";
    if (nf->narrowed && nf->scope)
        snprintf(scope, sizeof scope, "%.100s ", nf->scope);
    const char *may = nf->narrowed && !nf->scope ? " they may use" : "";
    char a[64], b[64], t[256];
    switch (nf->kind) {
    case GP_SIM_NOFIT_SELECTOR:
        snprintf(buf, n, "no node matches their node selector %s (0 of %" PRId64 " %s)",
                 nf->what ? nf->what : "", nf->need,
                 gp_report_plural((uint64_t)nf->need, "node", "nodes"));
        break;
    case GP_SIM_NOFIT_TAINT:
        if (nf->need == 1)
            snprintf(buf, n, "the one node they may use has a taint they do not tolerate%s%s%s",
                     nf->what ? " (" : "", nf->what ? nf->what : "", nf->what ? ")" : "");
        else
            snprintf(buf, n,
                     "all %" PRId64 " nodes they may use have a taint they do not tolerate%s%s%s",
                     nf->need, nf->what ? " (such as " : "", nf->what ? nf->what : "",
                     nf->what ? ")" : "");
        break;
    case GP_SIM_NOFIT_GPU_MODEL:
        snprintf(buf, n, "they need a %s GPU, the nodes they may use have %s",
                 nf->what ? nf->what : "-", nf->have_what ? nf->have_what : "none");
        break;
    case GP_SIM_NOFIT_SHARING:
        snprintf(buf, n, "they ask for %s, the nodes they may use share GPUs as %s",
                 nf->what ? nf->what : "-", nf->have_what ? nf->have_what : "-");
        break;
    case GP_SIM_NOFIT_CPU:
        fmt_cpus(a, sizeof a, nf->need);
        fmt_milli(b, sizeof b, nf->have);
        snprintf(buf, n, "they need %s, the largest %snode%s has %s", a, scope, may, b);
        break;
    case GP_SIM_NOFIT_MEMORY:
        fmt_mib(a, sizeof a, nf->need);
        fmt_mib(b, sizeof b, nf->have);
        snprintf(buf, n, "they need %s of memory, the largest %snode%s has %s", a, scope, may, b);
        break;
    case GP_SIM_NOFIT_GPUS:
        nofit_gpus(buf, n, nf, may, scope);
        break;
    case GP_SIM_NOFIT_GPU_MEMORY:
        fmt_mib(a, sizeof a, nf->need);
        fmt_mib(b, sizeof b, nf->have);
        snprintf(buf, n, "they need %s of GPU memory, the largest %sGPU%s has %s", a, scope, may,
                 b);
        break;
    case GP_SIM_NOFIT_TOGETHER:
        fmt_together(t, sizeof t, nf);
        snprintf(buf, n, "no node has %s at once", t);
        break;
    case GP_SIM_NOFIT_FILTER:
        if (nf->filter == GP_FILTER_NODE_STATE)
            snprintf(buf, n, "the cluster has no node");
        else
            snprintf(buf, n, "no node they may use passes the %s filter: %s",
                     gp_filter_name(nf->filter), gp_filter_text(nf->filter));
        break;
    case GP_SIM_NOFIT_QUOTA:
        nofit_quota(buf, n, nf);
        break;
    default:
        snprintf(buf, n, "-");
        break;
    }
}

void gp_report_nofit_text(char *buf, size_t n, const struct gp_sim_nofit *nf)
{
    if (n == 0)
        return;
    if (nf->kind == GP_SIM_NOFIT_GANG_GPUS) {
        nofit_gang_gpus(buf, n, nf);
    } else if (nf->kind == GP_SIM_NOFIT_GANG_MEMBERS) {
        snprintf(buf, n, "gang %s: minMember %" PRId64 " > %" PRId64 " %s that can exist",
                 nf->gang ? nf->gang : "-", nf->need, nf->have,
                 gp_report_plural((uint64_t)nf->have, "member", "members"));
    } else if (nf->gang) {
        char t[512];
        nofit_pods(t, sizeof t, nf);
        snprintf(buf, n, "gang %s: %s", nf->gang, t);
    } else {
        nofit_pods(buf, n, nf);
    }
}

void gp_report_nofit_line(char *buf, size_t n, const struct gp_sim_nofit *nf)
{
    char t[640];
    gp_report_nofit_text(t, sizeof t, nf);
    if (nf->gangs)
        snprintf(buf, n, "%" PRIu64 " %s (%" PRIu64 " %s) can never start: %s", nf->gangs,
                 gp_report_plural(nf->gangs, "gang", "gangs"), nf->pods,
                 gp_report_plural(nf->pods, "pod", "pods"), t);
    else
        snprintf(buf, n, "%" PRIu64 " %s can never fit: %s", nf->pods,
                 gp_report_plural(nf->pods, "pod", "pods"), t);
}

const char *gp_report_nofit_resource(const struct gp_sim_nofit *nf)
{
    switch (nf->kind) {
    case GP_SIM_NOFIT_SELECTOR:
        return "node-selector";
    case GP_SIM_NOFIT_TAINT:
        return "taint";
    case GP_SIM_NOFIT_GPU_MODEL:
        return "gpu-model";
    case GP_SIM_NOFIT_SHARING:
        return "sharing";
    case GP_SIM_NOFIT_CPU:
        return "cpu";
    case GP_SIM_NOFIT_MEMORY:
        return "memory";
    case GP_SIM_NOFIT_GPUS:
        return nf->what ? "mig" : "gpu-count";
    case GP_SIM_NOFIT_GPU_MEMORY:
        return "gpu-memory";
    case GP_SIM_NOFIT_TOGETHER:
        return "together";
    case GP_SIM_NOFIT_FILTER:
        return gp_filter_name(nf->filter);
    case GP_SIM_NOFIT_QUOTA:
        return nf->resource == GP_SIM_NOFIT_CPU      ? "quota-cpu"
               : nf->resource == GP_SIM_NOFIT_MEMORY ? "quota-memory"
                                                     : "quota-gpus";
    case GP_SIM_NOFIT_GANG_GPUS:
        return "gang-gpus";
    case GP_SIM_NOFIT_GANG_MEMBERS:
        return "gang-members";
    }
    return "other";
}
