/* compat.c - driver <-> CUDA compatibility (io/compat.h): versions read and
 * printed, the release a version names, the rule (native, minor-version,
 * forward compatibility) with its reason, the class of a GPU model, and
 * the CUDA version of an image reference; all over the constant tables
 * compiled from data/cuda-driver-compat.json and data/cuda-images.json. */
#include "io/compat.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRIVER_CODE(maj, min, pat) ((uint32_t)(maj)*100000u + (uint32_t)(min)*100u + (pat))

/* Up to max dot-separated numbers of digits only; the count read. */
static int parse_parts(const char *s, long *parts, int max, int keep)
{
    int n = 0;
    const char *c = s;
    while (*c) {
        if (!isdigit((unsigned char)*c) || n == max)
            return -1;
        char *end;
        long v = strtol(c, &end, 10);
        if (end - c > 6)
            return -1;
        if (n < keep)
            parts[n] = v;
        n++;
        c = end;
        if (*c == '.') {
            c++;
            if (!*c)
                return -1;
        } else if (*c) {
            return -1;
        }
    }
    return n;
}

bool gp_compat_parse_cuda(const char *s, struct gp_cuda_version *out)
{
    long p[3] = {0, 0, -1};
    int n = s ? parse_parts(s, p, 4, 3) : -1;
    if (n < 2 || p[0] < 1 || p[0] > 99 || p[1] > 99 || p[2] > 99)
        return false;
    out->major = (int)p[0];
    out->minor = (int)p[1];
    out->patch = n >= 3 ? (int)p[2] : -1;
    return true;
}

void gp_compat_cuda_text(const struct gp_cuda_version *v, char *buf, size_t size)
{
    if (v->patch >= 0)
        snprintf(buf, size, "%d.%d.%d", v->major, v->minor, v->patch);
    else
        snprintf(buf, size, "%d.%d", v->major, v->minor);
}

bool gp_compat_parse_driver(const char *s, uint32_t *code)
{
    long p[3] = {0, 0, 0};
    int n = s ? parse_parts(s, p, 3, 3) : -1;
    if (n < 1 || p[0] < 1 || p[0] > 9999 || p[1] > 999 || p[2] > 99)
        return false;
    *code = DRIVER_CODE(p[0], p[1], p[2]);
    return true;
}

void gp_compat_driver_text(uint32_t code, bool full, char *buf, size_t size)
{
    unsigned maj = code / 100000u, min = code / 100u % 1000u, pat = code % 100u;
    if (min == 0 && pat == 0)
        snprintf(buf, size, "%u", maj);
    else if (full && pat)
        snprintf(buf, size, "%u.%02u.%02u", maj, min, pat);
    else
        snprintf(buf, size, "%u.%02u", maj, min);
}

/* The release named, exactly or by its minor version's first; with exact
 * cleared, the latest update of the minor version when the patch is one
 * the table does not have. */
static const struct gp_cuda_release *find_release(const struct gp_cuda_version *v, bool *exact)
{
    const struct gp_cuda_release *first = NULL, *latest = NULL;
    *exact = true;
    for (size_t i = 0; i < gp_cuda_nreleases; i++) {
        const struct gp_cuda_release *r = &gp_cuda_releases[i];
        if (r->major != v->major || r->minor != v->minor)
            continue;
        if (v->patch >= 0 && r->patch == v->patch)
            return r;
        if (!first || r->patch < first->patch)
            first = r;
        if ((!latest || r->patch > latest->patch) && (v->patch < 0 || r->patch < v->patch))
            latest = r;
    }
    if (v->patch < 0)
        return first;
    *exact = false;
    return latest;
}

const struct gp_cuda_release *gp_compat_release(const struct gp_cuda_version *v)
{
    bool exact;
    const struct gp_cuda_release *r = find_release(v, &exact);
    return exact ? r : NULL;
}

uint32_t gp_compat_native_min(const struct gp_cuda_release *r)
{
    uint32_t code;
    if (*r->toolkit_min && gp_compat_parse_driver(r->toolkit_min, &code))
        return code;
    return DRIVER_CODE(r->branch, 0, 0);
}

uint32_t gp_compat_minor_min(const struct gp_cuda_release *r)
{
    uint32_t code = 0;
    return gp_compat_parse_driver(r->minor_compat_min, &code) ? code : 0;
}

const char *gp_compat_reported(uint32_t driver)
{
    for (size_t i = 0; i < gp_cuda_nreported; i++)
        if (gp_cuda_reported[i].branch == driver / 100000u)
            return gp_cuda_reported[i].cuda;
    return NULL;
}

/* --- GPUs ------------------------------------------------------------------ */

const char *gp_compat_gpu_class_name(enum gp_gpu_class c)
{
    switch (c) {
    case GP_GPU_DATACENTER:
        return "a data-centre GPU";
    case GP_GPU_RTX_PRO:
        return "a professional RTX GPU";
    case GP_GPU_CONSUMER:
        return "a GeForce GPU";
    case GP_GPU_NOT_NVIDIA:
        return "not an NVIDIA GPU";
    case GP_GPU_UNKNOWN:
        break;
    }
    return "a GPU of unknown class";
}

enum gp_gpu_class gp_compat_gpu_class(const char *model)
{
    /* NVIDIA's data-centre product lines (formerly Tesla), by family word */
    static const char *const datacentre[] = {
        "A100", "A800",  "A30",  "A40",  "A10",  "A10G",  "A16",   "A2",  "H100", "H800", "H200",
        "H20",  "GH200", "B100", "B200", "B300", "GB200", "GB300", "L4",  "L40",  "L40S", "L20",
        "L2",   "T4",    "V100", "P100", "P40",  "P4",    "K80",   "K40", "M60",  "M40",  "M10",
    };
    char w[16][24];
    size_t n = 0;
    for (const char *c = model ? model : ""; *c && n < 16;) {
        while (*c && !isalnum((unsigned char)*c))
            c++;
        size_t len = 0;
        while (isalnum((unsigned char)*c)) {
            if (len + 1 < sizeof w[n])
                w[n][len++] = (char)toupper((unsigned char)*c);
            c++;
        }
        w[n][len] = '\0';
        if (len && strcmp(w[n], "NVIDIA") != 0 && strcmp(w[n], "TESLA") != 0)
            n++;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(w[i], "AMD") == 0 || strcmp(w[i], "RADEON") == 0 ||
            strcmp(w[i], "INSTINCT") == 0 || strcmp(w[i], "INTEL") == 0 ||
            strcmp(w[i], "GAUDI") == 0 || strcmp(w[i], "GAUDI2") == 0 ||
            (strncmp(w[i], "MI", 2) == 0 && isdigit((unsigned char)w[i][2])))
            return GP_GPU_NOT_NVIDIA;
        if (strcmp(w[i], "GEFORCE") == 0 || strcmp(w[i], "TITAN") == 0 || strcmp(w[i], "GTX") == 0)
            return GP_GPU_CONSUMER;
    }
    for (size_t i = 0; i < n; i++) {
        /* RTX 4090 (GeForce) against RTX 6000, RTX A6000, RTX PRO 6000 */
        const char *num = NULL;
        if (strcmp(w[i], "RTX") == 0 && i + 1 < n)
            num = w[i + 1];
        else if (strncmp(w[i], "RTX", 3) == 0 && w[i][3])
            num = w[i] + 3;
        if (!num)
            continue;
        if (strlen(num) == 4 && strspn(num, "0123456789") == 4)
            return strcmp(num + 1, "000") == 0 ? GP_GPU_RTX_PRO : GP_GPU_CONSUMER;
        return GP_GPU_RTX_PRO; /* RTX A6000, RTX PRO 6000 */
    }
    if (n > 0)
        for (size_t k = 0; k < sizeof datacentre / sizeof datacentre[0]; k++)
            if (strcmp(w[0], datacentre[k]) == 0)
                return GP_GPU_DATACENTER;
    return GP_GPU_UNKNOWN;
}

/* --- the rule -------------------------------------------------------------- */

/* The smallest cuda-compat package of the driver's branch that holds CUDA
 * major.minor; major 0 when none (or the branch is end of life). */
static struct gp_cuda_package forward_package(uint32_t driver, int major, int minor)
{
    struct gp_cuda_package none = {0, 0};
    for (size_t i = 0; i < gp_cuda_nforward; i++) {
        const struct gp_cuda_forward *f = &gp_cuda_forward[i];
        if (f->branch != driver / 100000u)
            continue;
        for (unsigned k = 0; k < f->count; k++) {
            struct gp_cuda_package p = gp_cuda_packages[f->first + k];
            if (p.major > major || (p.major == major && p.minor >= minor))
                return p;
        }
    }
    return none;
}

static const struct gp_cuda_family *family_of(int major)
{
    for (size_t i = 0; i < gp_cuda_nfamilies; i++)
        if (gp_cuda_families[i].major == major)
            return &gp_cuda_families[i];
    return NULL;
}

/* The minor versions the table has, oldest first, for the message of one
 * it has not. */
static void known_minors(char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = gp_cuda_nreleases; i-- > 0 && o < size;) {
        const struct gp_cuda_release *r = &gp_cuda_releases[i];
        if (i + 1 < gp_cuda_nreleases && gp_cuda_releases[i + 1].major == r->major &&
            gp_cuda_releases[i + 1].minor == r->minor)
            continue; /* the table lists the newest first */
        int w = snprintf(buf + o, size - o, "%s%u.%u", o ? ", " : "", r->major, r->minor);
        o += w > 0 ? (size_t)w : 0;
    }
}

/* Why forward compatibility does not apply, or "" when it may. */
static const char *forward_refusal(const struct gp_compat_result *r, uint32_t driver, char *buf,
                                   size_t size)
{
    if (r->package.major == 0) {
        bool listed = false;
        for (size_t i = 0; i < gp_cuda_nforward; i++)
            listed |= gp_cuda_forward[i].branch == driver / 100000u;
        if (listed)
            snprintf(buf, size, "no cuda-compat package of branch %u holds CUDA %u.%u",
                     driver / 100000u, r->release->major, r->release->minor);
        else
            snprintf(buf, size,
                     "branch %u has no cuda-compat package (an end-of-life or feature branch)",
                     driver / 100000u);
        return buf;
    }
    if (r->gpu == GP_GPU_CONSUMER || r->gpu == GP_GPU_NOT_NVIDIA) {
        snprintf(buf, size, "cuda-compat-%u-%u needs a data-centre GPU, and this is %s",
                 r->package.major, r->package.minor, gp_compat_gpu_class_name(r->gpu));
        return buf;
    }
    buf[0] = '\0';
    return buf;
}

bool gp_compat_check(const struct gp_cuda_version *cuda, uint32_t driver, enum gp_gpu_class gpu,
                     bool image_ships_compat, struct gp_compat_result *out)
{
    memset(out, 0, sizeof *out);
    out->gpu = gpu;
    out->image_ships_compat = image_ships_compat;
    out->reported = gp_compat_reported(driver);
    char v[24], d[24], need[24], mmin[24], why[200], known[400];
    gp_compat_cuda_text(cuda, v, sizeof v);
    gp_compat_driver_text(driver, true, d, sizeof d);
    bool exact;
    const struct gp_cuda_release *rel = find_release(cuda, &exact);
    if (!rel) {
        known_minors(known, sizeof known);
        snprintf(out->reason, sizeof out->reason,
                 "CUDA %s is not in data/cuda-driver-compat.json (it has %s)", v, known);
        out->verdict = GP_COMPAT_NO;
        return false;
    }
    out->release = rel;
    out->native_min = gp_compat_native_min(rel);
    const struct gp_cuda_family *fam = family_of(rel->major);
    uint32_t fmin = 0;
    if (fam && gp_compat_parse_driver(fam->linux_min, &fmin))
        out->minor_min = gp_compat_minor_min(rel) ? gp_compat_minor_min(rel) : fmin;
    gp_compat_driver_text(out->native_min, true, need, sizeof need);
    gp_compat_driver_text(out->minor_min, true, mmin, sizeof mmin);
    char label[120];
    if (exact)
        snprintf(label, sizeof label, "%s", rel->label);
    else
        snprintf(label, sizeof label, "CUDA %s (read as %s, the table's latest %u.%u update)", v,
                 rel->label, rel->major, rel->minor);
    if (gpu == GP_GPU_NOT_NVIDIA) {
        out->verdict = GP_COMPAT_NO;
        snprintf(out->reason, sizeof out->reason, "%s: no CUDA driver runs on it",
                 gp_compat_gpu_class_name(gpu));
        return true;
    }
    if (driver >= out->native_min) {
        out->verdict = GP_COMPAT_NATIVE;
        if (*rel->toolkit_min)
            snprintf(out->reason, sizeof out->reason,
                     "driver %s >= %s, which %s needs for all its features", d, need, label);
        else
            snprintf(out->reason, sizeof out->reason,
                     "driver %s is of branch R%u or later, which %s needs (NVIDIA names the "
                     "branch only)",
                     d, rel->branch, label);
        return true;
    }
    out->package = forward_package(driver, rel->major, rel->minor);
    out->forward_possible = out->package.major != 0 && gpu != GP_GPU_CONSUMER;
    out->forward_needs_gpu = gpu != GP_GPU_DATACENTER;
    bool minor = out->minor_min && driver >= out->minor_min;
    char pkg[32];
    snprintf(pkg, sizeof pkg, "cuda-compat-%u-%u", out->package.major, out->package.minor);
    if (out->forward_possible && gpu == GP_GPU_DATACENTER && image_ships_compat) {
        out->verdict = GP_COMPAT_FORWARD;
        snprintf(out->reason, sizeof out->reason,
                 "driver %s < %s, which %s needs, but the image ships the CUDA forward-"
                 "compatibility libraries (%s) for branch %u, and they run on data-centre GPUs",
                 d, need, label, pkg, driver / 100000u);
    } else if (minor) {
        out->verdict = GP_COMPAT_MINOR;
        snprintf(out->reason, sizeof out->reason,
                 "driver %s < %s, which %s needs for all its features, but >= %s, the oldest "
                 "driver of CUDA %u.x minor-version compatibility",
                 d, need, label, mmin, rel->major);
    } else if (out->forward_possible) {
        out->verdict = GP_COMPAT_FORWARD;
        snprintf(out->reason, sizeof out->reason,
                 "driver %s < %s, which %s needs, and below CUDA %u.x minor-version "
                 "compatibility (%s), but branch %u takes %s: forward compatibility, with the "
                 "package in the image on the loader path, on a data-centre GPU%s",
                 d, need, label, rel->major, out->minor_min ? mmin : "none", driver / 100000u, pkg,
                 gpu == GP_GPU_DATACENTER ? "" : " (not known to be one: give --gpu)");
    } else {
        out->verdict = GP_COMPAT_NO;
        forward_refusal(out, driver, why, sizeof why);
        if (out->minor_min)
            snprintf(out->reason, sizeof out->reason,
                     "driver %s < %s, the oldest driver CUDA %u.x runs on under minor-version "
                     "compatibility (%s needs %s); %s",
                     d, mmin, rel->major, label, need, why);
        else
            snprintf(out->reason, sizeof out->reason, "driver %s < %s, which %s needs; %s", d, need,
                     label, why);
    }
    return true;
}

/* --- images ------------------------------------------------------------------ */

/* X.Y[.Z] at the start of s, ended by '-' or the end. */
static bool leading_version(const char *s, struct gp_cuda_version *v)
{
    char buf[24];
    size_t n = strcspn(s, "-");
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return gp_compat_parse_cuda(buf, v);
}

/* A dash-separated word cudaX.Y[.Z] of the tag. */
static bool cuda_word(const char *tag, struct gp_cuda_version *v)
{
    for (const char *c = tag; *c;) {
        size_t n = strcspn(c, "-");
        if (n > 4 && strncmp(c, "cuda", 4) == 0) {
            char buf[24];
            if (n - 4 < sizeof buf) {
                memcpy(buf, c + 4, n - 4);
                buf[n - 4] = '\0';
                if (gp_compat_parse_cuda(buf, v))
                    return true;
            }
        }
        c += n;
        if (*c == '-')
            c++;
    }
    return false;
}

enum gp_image_found gp_compat_image(const char *ref, struct gp_image_info *out)
{
    memset(out, 0, sizeof *out);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", ref ? ref : "");
    char *at = strchr(buf, '@');
    if (at)
        *at = '\0';
    char *slash = strrchr(buf, '/');
    char *colon = strrchr(slash ? slash : buf, ':');
    const char *tag = "latest";
    if (colon) {
        *colon = '\0';
        tag = colon + 1;
    }
    const char *repo = buf;
    static const char *const hubs[] = {"docker.io/", "index.docker.io/", "registry-1.docker.io/"};
    for (size_t i = 0; i < sizeof hubs / sizeof hubs[0]; i++)
        if (strncmp(repo, hubs[i], strlen(hubs[i])) == 0)
            repo += strlen(hubs[i]);
    if (strncmp(repo, "library/", 8) == 0)
        repo += 8;
    snprintf(out->repository, sizeof out->repository, "%s", repo);
    for (size_t i = 0; i < gp_image_nrules; i++) {
        const struct gp_image_rule *r = &gp_image_rules[i];
        if (strcmp(r->repository, repo) != 0)
            continue;
        out->rule = r;
        bool ok = r->parse == GP_IMAGE_TAG_LEADING ? leading_version(tag, &out->cuda)
                                                   : cuda_word(tag, &out->cuda);
        return ok ? GP_IMAGE_FOUND : GP_IMAGE_UNKNOWN_TAG;
    }
    static const char ngc[] = "nvcr.io/nvidia/";
    if (strncmp(repo, ngc, sizeof ngc - 1) != 0)
        return GP_IMAGE_UNKNOWN;
    const char *fw = repo + sizeof ngc - 1;
    bool known = false;
    for (size_t i = 0; i < gp_image_nngc; i++) {
        const struct gp_image_ngc *n = &gp_image_ngc[i];
        if (strcmp(n->repository, fw) != 0)
            continue;
        known = true;
        if (strncmp(tag, n->release, 5) == 0 && (tag[5] == '\0' || tag[5] == '-') &&
            gp_compat_parse_cuda(n->cuda, &out->cuda)) {
            out->ngc = n;
            return GP_IMAGE_FOUND;
        }
    }
    return known ? GP_IMAGE_UNKNOWN_TAG : GP_IMAGE_UNKNOWN;
}
