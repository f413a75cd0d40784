/* cmd_packing.c - `gpuplane packing`: the FGD paper's static packing
 * experiment (Weng et al., USENIX ATC '23) as a matrix: every workload x
 * policy x seed is one static-mode simulation on the openb GPU cluster, and
 * the unallocated GPU % at 100 % arrived is compared, per workload and
 * policy, with the authors' published runs. The cluster and each workload
 * are read once; each simulation gets its own arena. With --jobs N > 1 the
 * cells are shared out round-robin to N forked workers that send their
 * results back through pipes; results are stored by cell index, so the
 * output does not depend on the number of workers or their timing. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/packing.h"
#include "engine/engine.h"
#include "io/cluster.h"
#include "io/fgd_results.h"
#include "io/workload.h"
#include "plan/bound.h"
#include "sim/sim.h"
#include "util/arena.h"
#include "util/fs.h"
#include "util/sbuf.h"
#include "util/units.h"

#define EXPECTED_FILE   "analysis_allo_discrete.csv"
#define CLUSTER_FILE    "openb_node_list_gpu_node.csv"
#define POD_FILE_PREFIX GP_PACKING_POD_FILE_PREFIX
#define TRACE_HINT                                                                                 \
    "the openb CSVs are the folder cluster-trace-gpu-v2023/csv of Alibaba's public repository "    \
    "https://github.com/alibaba/clusterdata (research use only): git clone --depth 1 "             \
    "https://github.com/alibaba/clusterdata, then --data clusterdata/cluster-trace-gpu-v2023/csv"
#define EXPECTED_HINT                                                                              \
    "the FGD authors' tables are the folder experiments/analysis/expected_results of "             \
    "https://github.com/hkust-adsl/kubernetes-scheduler-simulator"

#define MAX_WORKLOADS GP_PACKING_MAX_WORKLOADS
#define MAX_POLICIES  GP_PACKING_MAX_POLICIES
#define MAX_JOBS      64
#define MAX_CELLS     1000000

struct packing_opts {
    const char *data, *expected;
    const char *workloads_arg, *policies_arg, *seeds_arg;
    double inflate, cpu_scale, node_sample;
    unsigned jobs;
    const char *json, *markdown, *report;
    bool no_bound, quiet, no_progress, help;
};

static void packing_usage(FILE *f)
{
    fprintf(f,
            "usage: gpuplane packing [--data DIR] [--expected DIR] [--workloads LIST]\n"
            "                        [--policies LIST] [--seeds A-B|LIST] [--inflate X]\n"
            "                        [--json FILE] [--markdown FILE] [--report FILE.html] "
            "[options]\n"
            "\n"
            "Runs the static packing experiment of the FGD paper (Weng et al., USENIX ATC '23)\n"
            "on the Alibaba openb trace: for every workload, policy and seed, pods arrive one\n"
            "at a time in a seeded shuffled order, inflated to X times the cluster's GPUs, and\n"
            "never leave. Prints the unallocated GPU %% at 100 %% arrived (mean and sd over\n"
            "the seeds) beside the authors' published numbers. See docs/fragmentation.md.\n"
            "\n"
            "inputs:\n"
            "  --data DIR          the openb CSVs (required): the folder\n"
            "                      cluster-trace-gpu-v2023/csv of Alibaba's public repository\n"
            "                      https://github.com/alibaba/clusterdata (research use only;\n"
            "                      git clone --depth 1 https://github.com/alibaba/clusterdata)\n"
            "  --expected DIR      the authors' result tables, for the paper column (none\n"
            "                      without it): experiments/analysis/expected_results of\n"
            "                      https://github.com/hkust-adsl/kubernetes-scheduler-simulator;\n"
            "                      a path to " EXPECTED_FILE " itself works too\n"
            "experiment:\n"
            "  --workloads LIST    comma-separated openb workload names (file " POD_FILE_PREFIX
            "NAME.csv),\n"
            "                      or 'all' for the paper's 17 (default: default)\n"
            "  --policies LIST     comma-separated policies, or 'all' for every registered one\n"
            "                      (default: the paper's six: random, dot-product,\n"
            "                      gpu-clustering, gpu-packing, best-fit, fgd)\n"
            "  --seeds SEEDS       a range A-B or a list like 42,43,50-51 (default 42-51)\n"
            "  --inflate X         resample pods until their GPU request is X times the\n"
            "                      cluster's GPUs (default 1.3, the paper's value)\n"
            "  --cpu-scale F       every node's CPU times F, e.g. 0.6 for less CPU per GPU\n"
            "                      (default 1; not 1: no paper column)\n"
            "  --node-sample F     each seed runs on a random F of the nodes, drawn with the\n"
            "                      seed, e.g. 0.5 for random halves (default 1: all nodes;\n"
            "                      below 1: no paper column)\n"
            "  --no-bound          no lower bound (one LP per workload and seed, 0.3-0.7 s)\n"
            "  --jobs N            worker processes (default 2; 1 runs in this process)\n"
            "outputs:\n"
            "  --json FILE         every run and every summary as JSON\n"
            "  --markdown FILE     the table as Markdown\n"
            "  --report FILE       a self-contained HTML page with a chart per workload\n"
            "  --quiet             no table on stdout\n"
            "  --no-progress       no progress line (it is shown only on a terminal)\n"
            "  -h, --help          this help\n");
    gp_opts_usage_common(f);
    fprintf(f, "\n"
               "exit codes: 0 success, 2 bad input or usage, 1 any other failure\n");
}

/* ---- options ------------------------------------------------------------- */

/* A number in (0, max] for flag, e.g. "1.3"; example goes in the message. */
static enum gp_err set_ratio(const char *flag, const char *v, double max, const char *example,
                             double *out, struct gp_diag *d)
{
    if (!gp_units_number(v, out) || !(*out > 0) || *out > max)
        return gp_diag_set(
            d, GP_EUSAGE, "%s: expected a number greater than 0 and at most %g (e.g. %s), got '%s'",
            flag, max, example, v);
    return GP_OK;
}

static enum gp_err set_inflate(void *opts, const char *v, struct gp_diag *d)
{
    return set_ratio("--inflate", v, 100, "1.3", &((struct packing_opts *)opts)->inflate, d);
}

static enum gp_err set_cpu_scale(void *opts, const char *v, struct gp_diag *d)
{
    return set_ratio("--cpu-scale", v, 100, "0.6", &((struct packing_opts *)opts)->cpu_scale, d);
}

static enum gp_err set_node_sample(void *opts, const char *v, struct gp_diag *d)
{
    return set_ratio("--node-sample", v, 1, "0.5", &((struct packing_opts *)opts)->node_sample, d);
}

static enum gp_err set_jobs(void *opts, const char *v, struct gp_diag *d)
{
    struct packing_opts *o = opts;
    int64_t n;
    if (!gp_units_uint(v, &n) || n < 1 || n > MAX_JOBS)
        return gp_diag_set(d, GP_EUSAGE, "--jobs: expected an integer 1..%d, got '%s'", MAX_JOBS,
                           v);
    o->jobs = (unsigned)n;
    return GP_OK;
}

static const struct gp_opt packing_opt_table[] = {
    GP_OPT_STRING_AT("--data", struct packing_opts, data),
    GP_OPT_STRING_AT("--expected", struct packing_opts, expected),
    GP_OPT_STRING_AT("--workloads", struct packing_opts, workloads_arg),
    GP_OPT_STRING_AT("--policies", struct packing_opts, policies_arg),
    GP_OPT_STRING_AT("--seeds", struct packing_opts, seeds_arg),
    GP_OPT_VALUE_FN("--inflate", set_inflate),
    GP_OPT_VALUE_FN("--cpu-scale", set_cpu_scale),
    GP_OPT_VALUE_FN("--node-sample", set_node_sample),
    GP_OPT_FLAG_AT("--no-bound", struct packing_opts, no_bound),
    GP_OPT_VALUE_FN("--jobs", set_jobs),
    GP_OPT_STRING_AT("--json", struct packing_opts, json),
    GP_OPT_STRING_AT("--markdown", struct packing_opts, markdown),
    GP_OPT_STRING_AT("--report", struct packing_opts, report),
    GP_OPT_FLAG_AT("--quiet", struct packing_opts, quiet),
    GP_OPT_FLAG_AT("--no-progress", struct packing_opts, no_progress),
    GP_OPT_FLAG_AT("--help", struct packing_opts, help),
    GP_OPT_FLAG_AT("-h", struct packing_opts, help),
};

/* ---- inputs -------------------------------------------------------------- */

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static enum gp_err resolve_data(struct packing_opts *o, struct gp_diag *d)
{
    if (!o->data)
        return gp_diag_set(d, GP_EUSAGE, "packing: --data DIR is required; " TRACE_HINT);
    if (!is_dir(o->data))
        return gp_diag_set(d, GP_ENOTFOUND, "--data: '%s' is not a folder; " TRACE_HINT, o->data);
    return GP_OK;
}

/* The published table's path, or NULL for none. */
static enum gp_err resolve_expected(const struct packing_opts *o, struct gp_arena *a,
                                    const char **path, struct gp_diag *d)
{
    *path = NULL;
    if (!o->expected)
        return GP_OK;
    if (is_file(o->expected)) {
        *path = o->expected;
        return GP_OK;
    }
    if (!is_dir(o->expected))
        return gp_diag_set(d, GP_ENOTFOUND,
                           "--expected: '%s' is neither a folder nor a file (expected the FGD "
                           "results folder holding " EXPECTED_FILE "; " EXPECTED_HINT ")",
                           o->expected);
    char *p = gp_arena_printf(a, "%s/" EXPECTED_FILE, o->expected);
    if (!p)
        return gp_diag_set(d, GP_ENOMEM, "--expected: out of memory");
    if (!is_file(p))
        return gp_diag_set(d, GP_ENOTFOUND, "--expected: no %s (expected the FGD results folder)",
                           p);
    *path = p;
    return GP_OK;
}

/* ---- the lower bound -------------------------------------------------------
 * The least unallocated GPU % at 100 % arrived that any placement, even one
 * that knows the whole sequence, could reach on this workload's arrival
 * sequences (src/plan/bound.h, docs/bound.md): per seed, the same sequence
 * the simulator replays, bounded at the point it reads at 100 %; averaged
 * over the seeds. Clusters the bound does not model (GPU sharing) have none. */
static enum gp_err packing_bound(const struct gp_cluster *whole, double node_sample,
                                 const struct gp_workload *workload, const uint64_t *seeds,
                                 size_t nseeds, double inflate, struct gp_packing_bound *out,
                                 struct gp_diag *diag)
{
    enum gp_err err = GP_OK;
    double sum = 0, left_cpu = 0, free_cpu = 0, left_mem = 0, free_mem = 0;
    memset(out, 0, sizeof *out);
    out->pct = NAN;
    out->note = "not available";
    out->informative = true;
    for (size_t k = 0; k < nseeds && err == GP_OK; k++) {
        struct gp_sim_config cfg;
        gp_sim_config_default(&cfg);
        cfg.mode = GP_SIM_STATIC;
        cfg.seed = seeds[k];
        cfg.inflate = inflate;
        struct gp_arena a;
        gp_arena_init(&a);
        const struct gp_pod_spec **pods;
        size_t n;
        struct gp_bound_result res;
        struct gp_cluster cluster = *whole;
        if (node_sample < 1)
            err = gp_packing_cluster(whole, 1, node_sample, seeds[k], &a, &cluster, diag);
        if (err == GP_OK)
            err = gp_sim_static_sequence(&cfg, &cluster, workload, &a, &pods, &n, diag);
        if (err == GP_OK)
            err = gp_bound_at(&cluster, pods, n, 100, &res, diag);
        gp_arena_free(&a);
        if (err == GP_EUNSUPPORTED) {
            out->note = "not available for GPU sharing";
            return GP_OK;
        }
        if (err != GP_OK)
            break;
        sum += res.unallocated_pct;
        out->informative &= res.informative;
        if (res.cluster_cpu_milli > 0) {
            left_cpu += 100 * res.left_out_cpu_milli / res.cluster_cpu_milli;
            free_cpu += 100 * (res.cluster_cpu_milli - res.lp_cpu_milli) / res.cluster_cpu_milli;
        }
        if (res.cluster_mem_mib > 0) {
            left_mem += 100 * res.left_out_mem_mib / res.cluster_mem_mib;
            free_mem += 100 * (res.cluster_mem_mib - res.lp_mem_mib) / res.cluster_mem_mib;
        }
    }
    if (err != GP_OK)
        return err;
    if (nseeds > 0) {
        double k = (double)nseeds;
        out->have = true;
        out->pct = sum / k;
        out->note = NULL;
        out->left_cpu_pct = left_cpu / k;
        out->free_cpu_pct = free_cpu / k;
        out->left_mem_pct = left_mem / k;
        out->free_mem_pct = free_mem / k;
    }
    return GP_OK;
}

/* ---- running the cells --------------------------------------------------- */

struct run_ctx {
    struct gp_packing *pk;
    const struct gp_cluster *cluster;
    const struct gp_workload *wl; /* [nworkloads] */
    bool progress;
    struct timespec start;
    size_t done, total;
    unsigned jobs;
};

static double elapsed_s(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

static void progress_line(struct run_ctx *rc)
{
    if (!rc->progress)
        return;
    fprintf(stderr, "\r  packing: %zu/%zu simulations (%d %%), %.0f s", rc->done, rc->total,
            (int)(100.0 * (double)rc->done / (double)(rc->total ? rc->total : 1)),
            elapsed_s(&rc->start));
    fflush(stderr);
}

static void cell_coords(const struct gp_packing *pk, size_t cell, size_t *w, size_t *p, size_t *s)
{
    *s = cell % pk->nseeds;
    *p = (cell / pk->nseeds) % pk->npolicies;
    *w = cell / pk->nseeds / pk->npolicies;
}

/* One simulation; its arena lives only for this call. curve gets
 * pk->npoints values (NaN where the run has no point). */
static enum gp_err run_cell(const struct run_ctx *rc, size_t cell, struct gp_packing_cell *out,
                            double *curve, struct gp_diag *d)
{
    const struct gp_packing *pk = rc->pk;
    size_t w, p, s;
    cell_coords(pk, cell, &w, &p, &s);
    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.mode = GP_SIM_STATIC;
    cfg.policy = pk->policies[p];
    cfg.seed = pk->seeds[s];
    cfg.inflate = pk->inflate;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    memset(&r, 0, sizeof r);
    struct gp_diag sd = {""};
    struct gp_cluster cluster = *rc->cluster;
    enum gp_err err = GP_OK;
    if (pk->node_sample < 1)
        err = gp_packing_cluster(rc->cluster, 1, pk->node_sample, cfg.seed, &a, &cluster, &sd);
    if (err == GP_OK)
        err = gp_sim_run(&cfg, &cluster, &rc->wl[w], &a, &r, &sd);
    if (err != GP_OK) {
        gp_diag_set(d, err, "packing: workload %s, policy %s, seed %llu: %s", pk->workloads[w],
                    pk->policies[p]->name, (unsigned long long)pk->seeds[s], sd.msg);
        goto done;
    }
    out->at100_pct = r.unallocated_gpu_pct_at_100;
    out->pods_submitted = r.pods_submitted;
    out->pods_failed = r.pods_failed;
    out->gpus = 0;
    for (size_t i = 0; i < cluster.nnodes; i++)
        out->gpus += cluster.nodes[i].gpu_count;
    for (size_t x = 0; x < pk->npoints; x++)
        curve[x] = NAN;
    for (size_t i = 0; r.curve && i < r.ncurve; i++) {
        double x = r.curve[i].arrived_pct;
        if (isfinite(x) && x >= 0 && x < (double)pk->npoints && x == floor(x))
            curve[(size_t)x] = r.curve[i].unallocated_pct;
    }
done:
    gp_arena_free(&a);
    return err;
}

static enum gp_err run_serial(struct run_ctx *rc, struct gp_diag *d)
{
    struct gp_packing *pk = rc->pk;
    for (size_t c = 0; c < rc->total; c++) {
        enum gp_err err = run_cell(rc, c, &pk->cells[c], &pk->curves[c * pk->npoints], d);
        if (err != GP_OK)
            return err;
        rc->done++;
        progress_line(rc);
    }
    return GP_OK;
}

/* What a worker sends for each cell, followed by npoints doubles (the
 * curve) when err is GP_OK. */
struct wire {
    uint64_t cell;
    int32_t err;
    struct gp_packing_cell c;
    struct gp_diag diag;
};

static bool write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* Reads exactly n bytes; returns n, 0 at a clean end of file, or -1. */
static ssize_t read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, p + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            return got == 0 ? 0 : -1;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

/* A worker: cells first, first + step, ...; never returns. */
static void worker(struct run_ctx *rc, size_t first, size_t step, int fd)
{
    const struct gp_packing *pk = rc->pk;
    double *curve = malloc((pk->npoints ? pk->npoints : 1) * sizeof *curve);
    int status = 0;
    for (size_t c = first; c < rc->total; c += step) {
        struct wire m;
        memset(&m, 0, sizeof m);
        m.cell = c;
        m.err = curve ? run_cell(rc, c, &m.c, curve, &m.diag)
                      : gp_diag_set(&m.diag, GP_ENOMEM, "packing: out of memory in a worker");
        bool ok = write_all(fd, &m, sizeof m);
        if (ok && m.err == GP_OK)
            ok = write_all(fd, curve, pk->npoints * sizeof *curve);
        if (!ok || m.err != GP_OK) {
            status = 1;
            break;
        }
    }
    free(curve);
    close(fd);
    _exit(status);
}

static enum gp_err run_forked(struct run_ctx *rc, struct gp_diag *d)
{
    struct gp_packing *pk = rc->pk;
    unsigned jobs = rc->jobs;
    pid_t pids[MAX_JOBS];
    struct pollfd fds[MAX_JOBS];
    unsigned started = 0, open = 0;
    enum gp_err err = GP_OK;
    fflush(stdout);
    fflush(stderr);
    for (unsigned j = 0; j < jobs; j++) {
        int pfd[2];
        if (pipe(pfd) != 0) {
            err = gp_diag_set(d, GP_EIO, "packing: cannot create a pipe: %s", strerror(errno));
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            close(pfd[0]);
            close(pfd[1]);
            err = gp_diag_set(d, GP_EIO, "packing: cannot start a worker: %s", strerror(errno));
            break;
        }
        if (pid == 0) {
            close(pfd[0]);
            for (unsigned k = 0; k < started; k++)
                close(fds[k].fd);
            worker(rc, j, jobs, pfd[1]);
        }
        close(pfd[1]);
        pids[started] = pid;
        fds[started].fd = pfd[0];
        fds[started].events = POLLIN;
        fds[started].revents = 0;
        started++;
        open++;
    }
    while (err == GP_OK && open > 0) {
        int k = poll(fds, started, -1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            err = gp_diag_set(d, GP_EIO, "packing: waiting for the workers: %s", strerror(errno));
            break;
        }
        for (unsigned j = 0; j < started && err == GP_OK; j++) {
            if (fds[j].fd < 0 || !(fds[j].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            struct wire m;
            ssize_t got = read_all(fds[j].fd, &m, sizeof m);
            if (got == 0) {
                close(fds[j].fd);
                fds[j].fd = -1;
                open--;
                continue;
            }
            if (got < 0 || m.cell >= rc->total) {
                err = gp_diag_set(d, GP_EIO, "packing: a worker's results were cut short");
                break;
            }
            if (m.err != GP_OK) {
                memcpy(d, &m.diag, sizeof *d);
                d->msg[sizeof d->msg - 1] = '\0';
                err = m.err > GP_OK && m.err < GP_E_COUNT ? (enum gp_err)m.err : GP_ESTATE;
                break;
            }
            double *curve = &pk->curves[m.cell * pk->npoints];
            if (read_all(fds[j].fd, curve, pk->npoints * sizeof *curve) !=
                (ssize_t)(pk->npoints * sizeof *curve)) {
                err = gp_diag_set(d, GP_EIO, "packing: a worker's results were cut short");
                break;
            }
            pk->cells[m.cell] = m.c;
            rc->done++;
            progress_line(rc);
        }
    }
    /* on an error the other workers are stopped; then every worker is reaped */
    for (unsigned j = 0; j < started; j++) {
        if (fds[j].fd >= 0)
            close(fds[j].fd);
        if (err != GP_OK)
            kill(pids[j], SIGTERM);
    }
    for (unsigned j = 0; j < started; j++) {
        int status = 0;
        while (waitpid(pids[j], &status, 0) < 0 && errno == EINTR)
            ;
        if (err == GP_OK && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            err = WIFSIGNALED(status)
                      ? gp_diag_set(d, GP_ESTATE, "packing: a worker was killed by signal %d",
                                    WTERMSIG(status))
                      : gp_diag_set(d, GP_ESTATE, "packing: a worker failed");
    }
    if (err == GP_OK && rc->done != rc->total)
        err = gp_diag_set(d, GP_ESTATE, "packing: %zu of %zu simulations came back", rc->done,
                          rc->total);
    return err;
}

/* ---- summaries ----------------------------------------------------------- */

static void mean_sd(const double *v, size_t n, size_t stride, double *mean, double *sd,
                    size_t *used)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i * stride])) {
            sum += v[i * stride];
            k++;
        }
    *used = k;
    *mean = k ? sum / (double)k : NAN;
    double ss = 0;
    for (size_t i = 0; k && i < n; i++)
        if (isfinite(v[i * stride]))
            ss += (v[i * stride] - *mean) * (v[i * stride] - *mean);
    *sd = k > 1 ? sqrt(ss / (double)(k - 1)) : (k ? 0 : NAN);
}

static enum gp_err summarise(struct gp_packing *pk, const struct gp_fgd_results *paper,
                             struct gp_diag *d)
{
    size_t ns = pk->nseeds, np = pk->npoints;
    double *tmp = malloc((ns ? ns : 1) * sizeof *tmp);
    if (!tmp)
        return gp_diag_set(d, GP_ENOMEM, "packing: out of memory");
    for (size_t w = 0; w < pk->nworkloads; w++) {
        for (size_t p = 0; p < pk->npolicies; p++) {
            size_t wp = w * pk->npolicies + p;
            struct gp_packing_sum *sum = &pk->sums[wp];
            for (size_t s = 0; s < ns; s++)
                tmp[s] = pk->cells[wp * ns + s].at100_pct;
            mean_sd(tmp, ns, 1, &sum->mean, &sum->sd, &sum->n);
            for (size_t x = 0; x < np; x++) {
                double m, sd;
                size_t k;
                mean_sd(&pk->curves[wp * ns * np + x], ns, np, &m, &sd, &k);
                pk->mean_curves[wp * np + x] = m;
                pk->paper_curves[wp * np + x] = NAN;
            }
            sum->paper_n = 0;
            sum->paper_mean = sum->paper_sd = sum->diff = NAN;
            sum->off = false;
            if (!paper)
                continue;
            const char *wl = pk->workloads[w], *pol = pk->policies[p]->name;
            double m, sd;
            sum->paper_n = gp_fgd_results_stat(paper, wl, pol, pk->inflate, 100, &m, &sd);
            if (sum->paper_n > 0) {
                sum->paper_mean = 100 - m; /* the table holds allocation % */
                sum->paper_sd = sd;
                sum->diff = sum->mean - sum->paper_mean;
                sum->off = fabs(sum->diff) > GP_PACKING_OFF_PTS;
            }
            for (size_t x = 0; x < np; x++)
                if (gp_fgd_results_stat(paper, wl, pol, pk->inflate, x, &m, &sd) > 0)
                    pk->paper_curves[wp * np + x] = 100 - m;
        }
    }
    free(tmp);
    return GP_OK;
}

/* ---- outputs ------------------------------------------------------------- */

enum { OUT_JSON, OUT_MARKDOWN, OUT_REPORT, NOUT };

static enum gp_err check_outputs(const struct packing_opts *o, struct gp_diag *d)
{
    static const char *const flags[NOUT] = {"--json", "--markdown", "--report"};
    const char *paths[NOUT] = {o->json, o->markdown, o->report};
    return gp_cli_outputs_prepare(flags, paths, NOUT, d);
}

/* Renders every requested output, then writes them; on any failure removes
 * the ones already written, so a run leaves all of its outputs or none. */
static enum gp_err write_outputs(const struct packing_opts *o, const struct gp_packing *pk,
                                 struct gp_diag *d)
{
    const char *paths[NOUT] = {o->json, o->markdown, o->report};
    struct gp_sbuf buf[NOUT];
    enum gp_err err = GP_OK;
    for (int i = 0; i < NOUT; i++)
        gp_sbuf_init(&buf[i]);
    if (o->json)
        err = gp_packing_json(&buf[OUT_JSON], pk, d);
    if (o->markdown)
        gp_packing_markdown(&buf[OUT_MARKDOWN], pk);
    if (o->report)
        gp_packing_html(&buf[OUT_REPORT], pk);
    if (err == GP_OK)
        err = gp_cli_write_all(paths, buf, NOUT, d);
    for (int i = 0; i < NOUT; i++)
        gp_sbuf_free(&buf[i]);
    return err;
}

/* ---- the command --------------------------------------------------------- */

int gp_cmd_packing(int argc, char **argv)
{
    struct packing_opts o;
    memset(&o, 0, sizeof o);
    o.inflate = 1.3;
    o.cpu_scale = 1;
    o.node_sample = 1;
    o.jobs = 2;
    struct gp_diag diag = {""};
    struct gp_arena arena;
    gp_arena_init(&arena);
    struct gp_packing pk;
    memset(&pk, 0, sizeof pk);
    struct gp_fgd_results paper;
    memset(&paper, 0, sizeof paper);
    struct run_ctx rc;
    memset(&rc, 0, sizeof rc);
    clock_gettime(CLOCK_MONOTONIC, &rc.start);
    const char *workloads[MAX_WORKLOADS];
    const struct gp_policy_ops *policies[MAX_POLICIES];
    uint64_t *seeds = NULL;
    int rc_exit = 0;

    enum gp_err err =
        gp_opts_parse(argc, argv, packing_opt_table,
                      sizeof packing_opt_table / sizeof packing_opt_table[0], &o, &diag);
    if (err != GP_OK)
        goto fail;
    if (o.help) {
        packing_usage(stdout);
        goto out;
    }
    /* every argument is checked before anything is loaded or run */
    if ((err = check_outputs(&o, &diag)) != GP_OK)
        goto fail;
    if ((err = gp_packing_parse_policies(o.policies_arg, &arena, policies, &pk.npolicies, &diag)) !=
        GP_OK)
        goto fail;
    if ((err = gp_packing_parse_seeds(o.seeds_arg ? o.seeds_arg : "42-51", &arena, &seeds,
                                      &pk.nseeds, &diag)) != GP_OK)
        goto fail;
    if ((err = resolve_data(&o, &diag)) != GP_OK)
        goto fail;
    if ((err = gp_packing_parse_workloads(o.workloads_arg ? o.workloads_arg : "default", o.data,
                                          &arena, workloads, &pk.nworkloads, &diag)) != GP_OK)
        goto fail;
    const char *expected_path;
    if ((err = resolve_expected(&o, &arena, &expected_path, &diag)) != GP_OK)
        goto fail;
    if (o.cpu_scale != 1 || o.node_sample < 1)
        expected_path = NULL; /* the published runs are on the whole trace cluster */
    size_t total = pk.nworkloads * pk.npolicies * pk.nseeds;
    if (total > MAX_CELLS) {
        err = gp_diag_set(&diag, GP_EUSAGE, "packing: %zu simulations requested, at most %d", total,
                          MAX_CELLS);
        goto fail;
    }

    /* inputs: the published table, the cluster, each workload, once */
    if (expected_path && (err = gp_fgd_results_load(expected_path, &arena, &paper, &diag)) != GP_OK)
        goto fail;
    struct gp_cluster trace, cluster;
    memset(&trace, 0, sizeof trace);
    pk.cluster_path = gp_arena_printf(&arena, "%s/" CLUSTER_FILE, o.data);
    char *cluster_arg = gp_arena_printf(&arena, "openb:%s", pk.cluster_path ? pk.cluster_path : "");
    if (!pk.cluster_path || !cluster_arg) {
        err = gp_diag_set(&diag, GP_ENOMEM, "packing: out of memory");
        goto fail;
    }
    if (!is_file(pk.cluster_path)) {
        err = gp_diag_set(&diag, GP_ENOTFOUND, "--data: no %s in '%s'; " TRACE_HINT, CLUSTER_FILE,
                          o.data);
        goto fail;
    }
    if ((err = gp_cli_outputs_input("--data", pk.cluster_path, &diag)) != GP_OK ||
        (err = gp_cli_outputs_input("--expected", expected_path, &diag)) != GP_OK)
        goto fail;
    if ((err = gp_cluster_load(cluster_arg, &arena, &trace, &diag)) != GP_OK)
        goto fail;
    /* the CPU scaled once; a sample, if any, is drawn per seed from this */
    if ((err = gp_packing_cluster(&trace, o.cpu_scale, 1, 0, &arena, &cluster, &diag)) != GP_OK)
        goto fail;
    gp_cli_warn_cluster(&cluster);
    if (cluster.nnodes == 0) {
        err = gp_diag_set(&diag, GP_EINVALID, "%s: the cluster has no nodes", pk.cluster_path);
        goto fail;
    }
    struct gp_workload *wl = gp_arena_alloc(&arena, pk.nworkloads * sizeof *wl);
    pk.bounds = gp_arena_alloc(&arena, pk.nworkloads * sizeof *pk.bounds);
    if (!wl || !pk.bounds) {
        err = gp_diag_set(&diag, GP_ENOMEM, "packing: out of memory");
        goto fail;
    }
    for (size_t w = 0; w < pk.nworkloads; w++) {
        char *arg =
            gp_arena_printf(&arena, "openb:%s/" POD_FILE_PREFIX "%s.csv", o.data, workloads[w]);
        if (!arg) {
            err = gp_diag_set(&diag, GP_ENOMEM, "packing: out of memory");
            goto fail;
        }
        wl[w].static_only = true; /* static runs only: the trace keeps what they read */
        if ((err = gp_cli_outputs_input("--workloads", arg, &diag)) != GP_OK ||
            (err = gp_workload_load(arg, &arena, &wl[w], &diag)) != GP_OK ||
            (err = gp_workload_finish(&wl[w], &arena, &diag)) != GP_OK)
            goto fail;
    }

    pk.data_dir = o.data;
    pk.expected_path = expected_path;
    pk.workloads = workloads;
    pk.policies = policies;
    pk.seeds = seeds;
    pk.inflate = o.inflate;
    pk.cpu_scale = o.cpu_scale;
    pk.node_sample = o.node_sample;
    pk.nodes = (uint32_t)cluster.nnodes;
    pk.sample_nodes = (uint32_t)gp_packing_sample_size(cluster.nnodes, o.node_sample);
    for (size_t i = 0; i < cluster.nnodes; i++)
        pk.gpus += cluster.nodes[i].gpu_count;
    pk.npoints = (size_t)floor(o.inflate * 100 + 1e-9) + 1;
    size_t nwp = pk.nworkloads * pk.npolicies;
    pk.cells = gp_arena_alloc(&arena, total * sizeof *pk.cells);
    pk.curves = gp_arena_alloc(&arena, total * pk.npoints * sizeof *pk.curves);
    pk.sums = gp_arena_alloc(&arena, nwp * sizeof *pk.sums);
    pk.mean_curves = gp_arena_alloc(&arena, nwp * pk.npoints * sizeof *pk.mean_curves);
    pk.paper_curves = gp_arena_alloc(&arena, nwp * pk.npoints * sizeof *pk.paper_curves);
    if (!pk.cells || !pk.curves || !pk.sums || !pk.mean_curves || !pk.paper_curves) {
        err = gp_diag_set(&diag, GP_ENOMEM, "packing: out of memory");
        goto fail;
    }
    for (size_t w = 0; w < pk.nworkloads; w++) {
        memset(&pk.bounds[w], 0, sizeof pk.bounds[w]);
        pk.bounds[w].pct = NAN;
        pk.bounds[w].note = "not computed (--no-bound)";
        pk.bounds[w].informative = true;
        if (!o.no_bound && (err = packing_bound(&cluster, o.node_sample, &wl[w], seeds, pk.nseeds,
                                                o.inflate, &pk.bounds[w], &diag)) != GP_OK)
            goto fail;
    }

    rc.pk = &pk;
    rc.cluster = &cluster;
    rc.wl = wl;
    rc.total = total;
    rc.jobs = o.jobs < total ? o.jobs : (unsigned)(total ? total : 1);
    rc.progress = !o.quiet && !o.no_progress && isatty(STDERR_FILENO);
    progress_line(&rc);
    err = rc.jobs > 1 ? run_forked(&rc, &diag) : run_serial(&rc, &diag);
    if (rc.progress)
        fprintf(stderr, "\r%*s\r", 70, "");
    if (err != GP_OK)
        goto fail;
    double wall_s = elapsed_s(&rc.start);
    if ((err = summarise(&pk, expected_path ? &paper : NULL, &diag)) != GP_OK)
        goto fail;
    if ((err = write_outputs(&o, &pk, &diag)) != GP_OK)
        goto fail;
    if (!o.quiet) {
        gp_packing_print(stdout, &pk);
        if (!expected_path)
            printf("\nno paper column: --expected DIR adds it; " EXPECTED_HINT "\n");
        printf("\nran %zu simulations in %.1f s of wall time (%u worker%s)\n", total, wall_s,
               rc.jobs, rc.jobs == 1 ? "" : "s");
        const char *outs[NOUT] = {o.json, o.markdown, o.report};
        for (int i = 0; i < NOUT; i++)
            if (outs[i])
                printf("wrote %s\n", outs[i]);
    }
    goto out;
fail:
    rc_exit = gp_cli_fail(err, diag.msg);
out:
    gp_arena_free(&arena);
    return rc_exit;
}
