/* cmd_providers.c - `gpuplane providers`: the provider catalog compiled
 * from data/providers.json (io/catalog.h), with the user's own offers
 * (--offers FILE) laid over it, filtered and sorted, as two tables (the
 * providers' Kubernetes, the offers with every price's date, age and
 * source) or as JSON (one object per provider, its offers inside). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/providers_out.h"
#include "io/catalog.h"
#include "util/arena.h"
#include "util/sbuf.h"
#include "util/units.h"

#define DEFAULT_STALE_DAYS 180

struct providers_opts {
    struct gp_catalog_filter filter;
    const char *offers, *today;
    int64_t stale_days;
    int sort;
    bool json, help, ib;
};

static void providers_usage(FILE *f)
{
    fprintf(f,
            "usage: gpuplane providers [filters] [--sort KEY] [--offers FILE] [--json]\n"
            "\n"
            "The GPU clouds of the catalog (data/providers.json, compiled in) and their GPU\n"
            "offers: what each one's Kubernetes gives, and every price with its date, its\n"
            "age and its source.\n"
            "\n"
            "filters (all must hold):\n"
            "  --k8s LIST          managed, byo (machines you join to your own cluster) or\n"
            "                      none, comma-separated\n"
            "  --gpu MODEL         the offer's GPU (H100, A100-80GB, L40S, ...)\n"
            "  --min-memory GB     GPU memory per GPU, at least\n"
            "  --gpus N            GPUs per node\n"
            "  --sharing LIST      time-slicing, mps, mig: the provider allows each\n"
            "  --interconnect W    a word of the provider's fabric (InfiniBand, RoCE, EFA,\n"
            "                      RDMA, ...; any: a fabric is stated); --ib: InfiniBand\n"
            "  --rwx               ReadWriteMany shared storage\n"
            "  --spot              spot or preemptible GPU nodes\n"
            "  --scale-to-zero     node pools that scale to zero\n"
            "  --drivers           NVIDIA drivers preinstalled\n"
            "  --min-price USD     on-demand price per GPU-hour, at least\n"
            "  --max-price USD     on-demand price per GPU-hour, at most\n"
            "  --mine              only the offers of --offers\n"
            "\n"
            "options:\n"
            "  --sort KEY          price, spot, gpu, memory, provider or age (default: the\n"
            "                      catalog's order)\n"
            "  --offers FILE       your own offers (negotiated prices, reservations at their\n"
            "                      marginal cost): they replace the catalog's offer they name\n"
            "                      or are added, and are marked * (docs/FORMATS.md)\n"
            "  --stale-days N      a price older than N days is stale (default %d)\n"
            "  --today DATE        the date ages are counted to, YYYY-MM-DD (default: today,\n"
            "                      or $GPUPLANE_TODAY)\n"
            "  --json              JSON on stdout: an array, one object per provider\n"
            "  -h, --help          this help\n",
            DEFAULT_STALE_DAYS);
    gp_opts_usage_common(f);
    fprintf(f, "\n"
               "Unknown facts are shown as '?'. Prices are a dated snapshot, not a live feed.\n"
               "exit codes: 0 success, 2 bad input or usage, 1 any other failure\n");
}

static enum gp_err set_kube(void *opts, const char *v, struct gp_diag *d)
{
    struct providers_opts *o = opts;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (strcmp(w, "managed") == 0)
            o->filter.kube_mask |= 1u << GP_KUBE_MANAGED;
        else if (strcmp(w, "byo") == 0)
            o->filter.kube_mask |= 1u << GP_KUBE_BYO;
        else if (strcmp(w, "none") == 0)
            o->filter.kube_mask |= 1u << GP_KUBE_NONE;
        else
            return gp_diag_set(d, GP_EUSAGE,
                               "--k8s: expected managed, byo or none (comma-separated), got '%s'",
                               w);
    }
    return o->filter.kube_mask ? GP_OK
                               : gp_diag_set(d, GP_EUSAGE, "--k8s: expected managed, byo or none");
}

static enum gp_err set_sharing(void *opts, const char *v, struct gp_diag *d)
{
    struct providers_opts *o = opts;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (strcmp(w, "time-slicing") == 0)
            o->filter.sharing |= 1u << GP_CATALOG_SHARE_TIMESLICE;
        else if (strcmp(w, "mps") == 0)
            o->filter.sharing |= 1u << GP_CATALOG_SHARE_MPS;
        else if (strcmp(w, "mig") == 0)
            o->filter.sharing |= 1u << GP_CATALOG_SHARE_MIG;
        else
            return gp_diag_set(d, GP_EUSAGE,
                               "--sharing: expected time-slicing, mps or mig (comma-separated), "
                               "got '%s'",
                               w);
    }
    return o->filter.sharing
               ? GP_OK
               : gp_diag_set(d, GP_EUSAGE, "--sharing: expected time-slicing, mps or mig");
}

static enum gp_err read_count(const char *flag, const char *v, int64_t max, int64_t *out,
                              struct gp_diag *d)
{
    if (!gp_units_uint(v, out) || *out < 1 || *out > max)
        return gp_diag_set(d, GP_EUSAGE,
                           "%s: expected a whole number from 1 to %" PRId64 ", got '%s'", flag, max,
                           v);
    return GP_OK;
}

static enum gp_err set_min_memory(void *opts, const char *v, struct gp_diag *d)
{
    struct providers_opts *o = opts;
    int64_t n;
    enum gp_err err = read_count("--min-memory", v, 4096, &n, d);
    o->filter.min_mem_gb = (uint32_t)n;
    return err;
}

static enum gp_err set_gpus(void *opts, const char *v, struct gp_diag *d)
{
    struct providers_opts *o = opts;
    int64_t n;
    enum gp_err err = read_count("--gpus", v, 64, &n, d);
    o->filter.gpus = (uint32_t)n;
    return err;
}

static enum gp_err set_stale(void *opts, const char *v, struct gp_diag *d)
{
    struct providers_opts *o = opts;
    if (!gp_units_uint(v, &o->stale_days) || o->stale_days > 100000)
        return gp_diag_set(d, GP_EUSAGE,
                           "--stale-days: expected a whole number of days (0 to 100000), got "
                           "'%s'",
                           v);
    return GP_OK;
}

static enum gp_err read_price(const char *flag, const char *v, double *out, struct gp_diag *d)
{
    if (!gp_units_number(v, out) || *out < 0 || *out > 1e6)
        return gp_diag_set(d, GP_EUSAGE, "%s: expected a price in USD per GPU-hour, got '%s'", flag,
                           v);
    return GP_OK;
}

static enum gp_err set_min_price(void *opts, const char *v, struct gp_diag *d)
{
    return read_price("--min-price", v, &((struct providers_opts *)opts)->filter.min_price, d);
}

static enum gp_err set_max_price(void *opts, const char *v, struct gp_diag *d)
{
    return read_price("--max-price", v, &((struct providers_opts *)opts)->filter.max_price, d);
}

static enum gp_err set_sort(void *opts, const char *v, struct gp_diag *d)
{
    struct providers_opts *o = opts;
    o->sort = gp_catalog_sort_parse(v);
    if (o->sort < 0)
        return gp_diag_set(d, GP_EUSAGE, "--sort: expected one of %s, got '%s'",
                           gp_catalog_sort_names(), v);
    return GP_OK;
}

static const struct gp_opt providers_opt_table[] = {
    GP_OPT_VALUE_FN("--k8s", set_kube),
    GP_OPT_STRING_AT("--gpu", struct providers_opts, filter.gpu),
    GP_OPT_VALUE_FN("--min-memory", set_min_memory),
    GP_OPT_VALUE_FN("--gpus", set_gpus),
    GP_OPT_VALUE_FN("--sharing", set_sharing),
    GP_OPT_STRING_AT("--interconnect", struct providers_opts, filter.fabric),
    GP_OPT_FLAG_AT("--ib", struct providers_opts, ib),
    GP_OPT_FLAG_AT("--rwx", struct providers_opts, filter.rwx),
    GP_OPT_FLAG_AT("--spot", struct providers_opts, filter.spot),
    GP_OPT_FLAG_AT("--scale-to-zero", struct providers_opts, filter.scale_to_zero),
    GP_OPT_FLAG_AT("--drivers", struct providers_opts, filter.drivers),
    GP_OPT_VALUE_FN("--min-price", set_min_price),
    GP_OPT_VALUE_FN("--max-price", set_max_price),
    GP_OPT_FLAG_AT("--mine", struct providers_opts, filter.user_only),
    GP_OPT_VALUE_FN("--sort", set_sort),
    GP_OPT_STRING_AT("--offers", struct providers_opts, offers),
    GP_OPT_VALUE_FN("--stale-days", set_stale),
    GP_OPT_STRING_AT("--today", struct providers_opts, today),
    GP_OPT_FLAG_AT("--json", struct providers_opts, json),
    GP_OPT_FLAG_AT("--help", struct providers_opts, help),
    GP_OPT_FLAG_AT("-h", struct providers_opts, help),
};

/* Today in days since 1970-01-01: --today, else $GPUPLANE_TODAY, else the
 * clock (UTC). */
static enum gp_err today_days(const char *arg, char buf[32], int64_t *days, const char **shown,
                              struct gp_diag *d)
{
    const char *flag = "--today";
    if (!arg && (arg = getenv("GPUPLANE_TODAY")) != NULL && *arg)
        flag = "GPUPLANE_TODAY";
    else if (!arg || !*arg) {
        time_t now = time(NULL);
        struct tm tm;
        if (now == (time_t)-1 || !gmtime_r(&now, &tm))
            return gp_diag_set(d, GP_EIO, "providers: cannot read the clock; give --today");
        snprintf(buf, 32, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
        arg = buf;
    }
    if (!gp_catalog_date_days(arg, days))
        return gp_diag_set(d, GP_EUSAGE, "%s: expected a date YYYY-MM-DD, got '%s'", flag, arg);
    *shown = arg;
    return GP_OK;
}

int gp_cmd_providers(int argc, char **argv)
{
    struct providers_opts o;
    memset(&o, 0, sizeof o);
    o.filter.min_price = o.filter.max_price = -1;
    o.stale_days = DEFAULT_STALE_DAYS;
    struct gp_diag diag = {""};
    struct gp_arena arena;
    gp_arena_init(&arena);
    struct gp_sbuf out;
    gp_sbuf_init(&out);
    struct gp_user_offers user;
    memset(&user, 0, sizeof user);
    int rc = 0;

    enum gp_err err =
        gp_opts_parse(argc, argv, providers_opt_table,
                      sizeof providers_opt_table / sizeof providers_opt_table[0], &o, &diag);
    if (err != GP_OK)
        goto fail;
    if (o.help) {
        providers_usage(stdout);
        goto out;
    }
    if (o.ib) {
        if (o.filter.fabric) {
            err = gp_diag_set(&diag, GP_EUSAGE,
                              "providers: --ib is --interconnect infiniband; "
                              "give one of them");
            goto fail;
        }
        o.filter.fabric = "infiniband";
    }
    if (o.filter.min_price >= 0 && o.filter.max_price >= 0 &&
        o.filter.min_price > o.filter.max_price) {
        err = gp_diag_set(&diag, GP_EUSAGE, "providers: --min-price is above --max-price");
        goto fail;
    }
    if (o.filter.user_only && !o.offers) {
        err = gp_diag_set(&diag, GP_EUSAGE, "providers: --mine needs --offers FILE");
        goto fail;
    }
    int64_t today = 0;
    const char *today_text = "";
    char today_buf[32];
    if ((err = today_days(o.today, today_buf, &today, &today_text, &diag)) != GP_OK)
        goto fail;
    if (o.offers && (err = gp_catalog_offers_load(o.offers, today, &arena, &user, &diag)) != GP_OK)
        goto fail;
    struct gp_catalog_row *rows;
    size_t nrows;
    if ((err = gp_catalog_rows(o.offers ? &user : NULL, today, o.stale_days, &arena, &rows, &nrows,
                               &diag)) != GP_OK)
        goto fail;
    size_t kept = 0;
    for (size_t i = 0; i < nrows; i++)
        if (gp_catalog_row_matches(&rows[i], &o.filter))
            rows[kept++] = rows[i];
    gp_catalog_sort(rows, kept, (enum gp_catalog_sort)o.sort);
    struct gp_providers_view v = {rows,       kept,         &o.filter,  o.offers ? &user : NULL,
                                  today_text, o.stale_days, o.sort != 0};
    if (o.json)
        err = gp_providers_json(&v, &out, &diag);
    else
        gp_providers_text(&v, &out);
    if (err == GP_OK && out.oom)
        err = gp_diag_set(&diag, GP_ENOMEM, "providers: out of memory");
    if (err != GP_OK)
        goto fail;
    if (fwrite(gp_sbuf_str(&out), 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
        err = gp_diag_set(&diag, GP_EIO, "providers: cannot write to stdout: %s", strerror(errno));
        goto fail;
    }
    goto out;
fail:
    rc = gp_cli_fail(err, diag.msg);
out:
    gp_sbuf_free(&out);
    gp_arena_free(&arena);
    return rc;
}
