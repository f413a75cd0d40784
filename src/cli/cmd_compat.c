/* cmd_compat.c - `gpuplane compat`: whether a CUDA version (given, or an
 * image's from data/cuda-images.json) runs on an NVIDIA driver, and how:
 * natively, under minor-version compatibility, or through the cuda-compat
 * package (forward compatibility, data-centre GPUs only); with the reason,
 * the caveats and what nvidia-smi's "CUDA Version" says (io/compat.h,
 * docs/compat.md). Exit 0: it runs; 1: it does not; 2: bad input. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "io/compat.h"
#include "util/sbuf.h"

struct compat_opts {
    const char *cuda, *image, *driver, *gpu;
    bool help;
};

static void compat_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane compat (--cuda VERSION | --image REF) --driver VERSION "
               "[--gpu MODEL]\n"
               "\n"
               "Whether CUDA code runs on an NVIDIA driver, and how (docs/compat.md): natively\n"
               "(the driver is at least the toolkit's), under minor-version compatibility (a\n"
               "driver of the same CUDA major release; no JIT of newer PTX), or through the\n"
               "cuda-compat package (forward compatibility: data-centre GPUs only). From\n"
               "data/cuda-driver-compat.json and data/cuda-images.json, compiled in.\n"
               "\n"
               "options:\n"
               "  --cuda VERSION    the CUDA toolkit the code was built with: 12.4 or 12.4.1\n"
               "  --image REF       or a container image: NGC framework releases\n"
               "                    (nvcr.io/nvidia/pytorch:24.05-py3), nvidia/cuda and\n"
               "                    pytorch/pytorch tags\n"
               "  --driver VERSION  the node's NVIDIA driver: 535.104.05\n"
               "  --gpu MODEL       the GPU (A100, H100-80GB, RTX 4090, ...): forward\n"
               "                    compatibility needs a data-centre GPU\n"
               "  -h, --help        this help\n");
    gp_opts_usage_common(f);
    fprintf(f, "\n"
               "exit codes: 0 it runs, 1 it does not, 2 bad input or usage\n");
}

static const struct gp_opt compat_opt_table[] = {
    GP_OPT_STRING_AT("--cuda", struct compat_opts, cuda),
    GP_OPT_STRING_AT("--image", struct compat_opts, image),
    GP_OPT_STRING_AT("--driver", struct compat_opts, driver),
    GP_OPT_STRING_AT("--gpu", struct compat_opts, gpu),
    GP_OPT_FLAG_AT("--help", struct compat_opts, help),
    GP_OPT_FLAG_AT("-h", struct compat_opts, help),
};

static const char *const verdicts[] = {
    "runs: natively",
    "runs: minor-version compatibility",
    "runs: forward compatibility (cuda-compat)",
    "does not run",
};

/* The CUDA version of --image, or an error naming what the table knows. */
static enum gp_err image_cuda(const char *ref, struct gp_image_info *info, struct gp_diag *d)
{
    enum gp_image_found f = gp_compat_image(ref, info);
    if (f == GP_IMAGE_FOUND)
        return GP_OK;
    if (f == GP_IMAGE_UNKNOWN_TAG && info->rule)
        return gp_diag_set(d, GP_EINVALID,
                           "--image %s: the tag does not name a CUDA version as %s tags do "
                           "(data/cuda-images.json); give --cuda",
                           ref, info->rule->repository);
    if (f == GP_IMAGE_UNKNOWN_TAG) {
        char rels[300];
        size_t o = 0;
        rels[0] = '\0';
        const char *fw = info->repository + strlen("nvcr.io/nvidia/");
        for (size_t i = 0; i < gp_image_nngc && o < sizeof rels; i++)
            if (strcmp(gp_image_ngc[i].repository, fw) == 0) {
                int w = snprintf(rels + o, sizeof rels - o, "%s%s", o ? ", " : "",
                                 gp_image_ngc[i].release);
                o += w > 0 ? (size_t)w : 0;
            }
        return gp_diag_set(d, GP_EINVALID,
                           "--image %s: data/cuda-images.json has no CUDA version for this "
                           "release of %s (it has %s); give --cuda",
                           ref, info->repository, rels);
    }
    return gp_diag_set(d, GP_EINVALID,
                       "--image %s: data/cuda-images.json does not know %s (it knows NGC "
                       "framework releases nvcr.io/nvidia/<name>:YY.MM, nvidia/cuda and "
                       "pytorch/pytorch tags); give --cuda",
                       ref, info->repository);
}

static void print_result(struct gp_sbuf *o, const struct compat_opts *opt,
                         const struct gp_cuda_version *cuda, uint32_t driver,
                         const struct gp_image_info *img, const struct gp_compat_result *r)
{
    char v[24], d[24];
    gp_compat_cuda_text(cuda, v, sizeof v);
    gp_compat_driver_text(driver, true, d, sizeof d);
    gp_sbuf_printf(o, "gpuplane compat: CUDA %s%s%s on driver %s%s%s\n", v,
                   opt->image ? " from " : "", opt->image ? opt->image : "", d,
                   opt->gpu ? ", GPU " : "", opt->gpu ? opt->gpu : "");
    gp_sbuf_printf(o, "%s\n  %s\n", verdicts[r->verdict], r->reason);
    if (r->verdict == GP_COMPAT_MINOR) {
        gp_sbuf_add(o, "  caveat: under minor-version compatibility an application that "
                       "JIT-compiles PTX newer than the driver fails\n"
                       "    (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), and calls that need the "
                       "newer driver return\n"
                       "    cudaErrorCallRequiresNewerDriver: it must carry SASS for its GPU "
                       "(nvcc -arch=sm_XX)\n");
        if (r->forward_possible)
            gp_sbuf_printf(o,
                           "  on a data-centre GPU, cuda-compat-%u-%u (forward compatibility) "
                           "lifts that limit%s\n",
                           r->package.major, r->package.minor,
                           r->image_ships_compat ? "; the image ships it"
                                                 : ": install it in the image and put its "
                                                   "libraries on the loader path");
    }
    if (r->verdict == GP_COMPAT_FORWARD)
        gp_sbuf_printf(o,
                       "  cuda-compat-%u-%u installs libcuda and the PTX JIT into "
                       "/usr/local/cuda-%u.%u/compat, not on the\n"
                       "    loader path (LD_LIBRARY_PATH or ld.so.conf); with it, CUDA-OpenGL/"
                       "Vulkan interop does not work\n",
                       r->package.major, r->package.minor, r->package.major, r->package.minor);
    if (r->reported)
        gp_sbuf_printf(o,
                       "  nvidia-smi on this driver shows \"CUDA Version: %s\": the newest CUDA "
                       "the driver supports, not\n"
                       "    the CUDA of an image or of an installed toolkit\n",
                       r->reported);
    if (img->ngc)
        gp_sbuf_printf(o, "  image: NGC %s %s is based on CUDA %s (%s%s%s)\n    %s\n",
                       img->ngc->repository, img->ngc->release, img->ngc->cuda,
                       img->ngc->confidence,
                       strcmp(img->ngc->confidence, "sibling") == 0
                           ? ": the release notes of other NGC containers of that month"
                           : ": its release notes",
                       "", img->ngc->source);
    else if (img->rule)
        gp_sbuf_printf(o, "  image: %s tags name their CUDA version\n    %s\n",
                       img->rule->repository, img->rule->source);
    if (r->release)
        gp_sbuf_printf(o, "  source: %s\n", r->release->source);
}

int gp_cmd_compat(int argc, char **argv)
{
    struct compat_opts o;
    memset(&o, 0, sizeof o);
    struct gp_diag diag = {""};
    struct gp_sbuf out;
    gp_sbuf_init(&out);
    int rc = 0;
    enum gp_err err =
        gp_opts_parse(argc, argv, compat_opt_table,
                      sizeof compat_opt_table / sizeof compat_opt_table[0], &o, &diag);
    if (err != GP_OK)
        goto fail;
    if (o.help) {
        compat_usage(stdout);
        goto out;
    }
    if ((o.cuda != NULL) == (o.image != NULL)) {
        err = gp_diag_set(&diag, GP_EUSAGE,
                          "compat: give --cuda VERSION or --image REF, one of them (see "
                          "gpuplane compat --help)");
        goto fail;
    }
    if (!o.driver) {
        err = gp_diag_set(&diag, GP_EUSAGE,
                          "compat: --driver VERSION is required (nvidia-smi's \"Driver "
                          "Version\", e.g. 535.104.05)");
        goto fail;
    }
    uint32_t driver;
    if (!gp_compat_parse_driver(o.driver, &driver)) {
        err = gp_diag_set(&diag, GP_EUSAGE,
                          "--driver: expected an NVIDIA driver version like 535.104.05, got "
                          "'%s'",
                          o.driver);
        goto fail;
    }
    struct gp_image_info img;
    memset(&img, 0, sizeof img);
    struct gp_cuda_version cuda;
    if (o.cuda && !gp_compat_parse_cuda(o.cuda, &cuda)) {
        err = gp_diag_set(&diag, GP_EUSAGE,
                          "--cuda: expected a CUDA version like 12.4 or 12.4.1, got '%s'", o.cuda);
        goto fail;
    }
    if (o.image) {
        if ((err = image_cuda(o.image, &img, &diag)) != GP_OK)
            goto fail;
        cuda = img.cuda;
    }
    struct gp_compat_result r;
    if (!gp_compat_check(&cuda, driver, gp_compat_gpu_class(o.gpu),
                         img.ngc && img.ngc->compat_in_image, &r)) {
        err = gp_diag_set(&diag, GP_EINVALID, "%s%s: %s", o.cuda ? "--cuda " : "--image ",
                          o.cuda ? o.cuda : o.image, r.reason);
        goto fail;
    }
    print_result(&out, &o, &cuda, driver, &img, &r);
    if (out.oom) {
        err = gp_diag_set(&diag, GP_ENOMEM, "compat: out of memory");
        goto fail;
    }
    if (fwrite(gp_sbuf_str(&out), 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
        err = gp_diag_set(&diag, GP_EIO, "compat: cannot write to stdout: %s", strerror(errno));
        goto fail;
    }
    rc = r.verdict == GP_COMPAT_NO ? 1 : 0;
    goto out;
fail:
    rc = gp_cli_fail(err, diag.msg);
out:
    gp_sbuf_free(&out);
    return rc;
}
