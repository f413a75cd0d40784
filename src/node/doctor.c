/* doctor.c - the node doctor's checks: each reads files under a root (the
 * driver's /proc entry, the runtime's configuration, the kubelet's
 * directory) or the inventory discovery made, and gives a verdict with
 * its fix. The CUDA rule is io/compat.h's. */
#include "node/doctor.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/compat.h"
#include "util/fs.h"

#define INSTALL_TOOLKIT                                                                            \
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"

static const char *root_of(const struct gp_node_doctor_opts *o)
{
    return o->root && strcmp(o->root, "/") != 0 ? o->root : "";
}

static void under(const char *root, const char *path, char *out, size_t n)
{
    snprintf(out, n, "%s%s", root, path);
}

/* The file's text (malloc'd), or NULL when it cannot be read. */
static char *slurp(const char *root, const char *path)
{
    char p[4096];
    under(root, path, p, sizeof p);
    char *text;
    size_t len;
    struct gp_diag d = {""};
    return gp_fs_read(p, &text, &len, &d) == GP_OK ? text : NULL;
}

static struct gp_node_check *add(struct gp_node_doctor *r, const char *name, enum gp_node_verdict v)
{
    struct gp_node_check *c = &r->checks[r->n++];
    memset(c, 0, sizeof *c);
    c->name = name;
    c->verdict = v;
    return c;
}

static void say(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

/* The kernel module's version from /proc/driver/nvidia/version ("NVRM
 * version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar ..."). */
static bool module_version(const char *text, char *out, size_t n)
{
    const char *k = strstr(text, "Kernel Module");
    if (!k)
        k = strstr(text, "Open Kernel Module"); /* same words; kept for clarity */
    if (!k)
        return false;
    k += strlen("Kernel Module");
    while (*k == ' ' || *k == '\t')
        k++;
    size_t len = strspn(k, "0123456789.");
    if (len == 0 || len >= n)
        return false;
    memcpy(out, k, len);
    out[len] = '\0';
    return true;
}

static void check_driver(const struct gp_node_doctor_opts *o, struct gp_node_doctor *r,
                         char *driver, size_t dn)
{
    const char *root = root_of(o);
    char *text = slurp(root, "/proc/driver/nvidia/version");
    driver[0] = '\0';
    if (!text || !module_version(text, driver, dn)) {
        struct gp_node_check *c = add(r, "driver", GP_NODE_FAIL);
        r->no_driver = true;
        say(c->detail, sizeof c->detail, "no NVIDIA kernel module: /proc/driver/nvidia/version %s",
            text ? "names no version" : "is absent");
        say(c->fix, sizeof c->fix,
            "install the NVIDIA data-centre driver (e.g. apt install nvidia-driver-550-server) "
            "and load it (modprobe nvidia), or let the GPU Operator's driver container do it");
        free(text);
        return;
    }
    free(text);
    if (!o->inv) {
        struct gp_node_check *c = add(r, "driver", GP_NODE_FAIL);
        say(c->detail, sizeof c->detail, "kernel module %s loaded, but NVML cannot be used: %s",
            driver, o->nvml_error ? o->nvml_error : "not asked");
        say(c->fix, sizeof c->fix,
            "install the driver's user-space libraries of the same version (libnvidia-ml.so.1; "
            "the nvidia-utils-%.3s-server package on Ubuntu)",
            driver);
        return;
    }
    if (strcmp(o->inv->driver_version, driver) != 0) {
        struct gp_node_check *c = add(r, "driver", GP_NODE_FAIL);
        say(c->detail, sizeof c->detail,
            "kernel module %s but user-space driver (NVML) %s: a driver upgrade not finished",
            driver, o->inv->driver_version);
        say(c->fix, sizeof c->fix,
            "reboot the node (or unload and reload the nvidia modules) so both are the same "
            "version");
        return;
    }
    struct gp_node_check *c = add(r, "driver", GP_NODE_PASS);
    say(c->detail, sizeof c->detail, "NVIDIA driver %s loaded, %zu GPU%s, CUDA driver API %d.%d",
        driver, o->inv->n_gpus, o->inv->n_gpus == 1 ? "" : "s", o->inv->cuda_driver_version / 1000,
        (o->inv->cuda_driver_version % 1000) / 10);
}

static enum gp_err check_cuda(const struct gp_node_doctor_opts *o, const char *driver,
                              struct gp_node_doctor *r, struct gp_diag *d)
{
    struct gp_cuda_version cuda;
    struct gp_image_info img;
    memset(&img, 0, sizeof img);
    if (o->cuda && !gp_compat_parse_cuda(o->cuda, &cuda))
        return gp_diag_set(d, GP_EUSAGE, "--cuda: expected a CUDA version like 12.4, got '%s'",
                           o->cuda);
    if (o->image && !o->cuda) {
        if (gp_compat_image(o->image, &img) != GP_IMAGE_FOUND)
            return gp_diag_set(d, GP_EUSAGE,
                               "--image %s: data/cuda-images.json gives no CUDA version for it; "
                               "give --cuda",
                               o->image);
        cuda = img.cuda;
    }
    uint32_t code;
    if (!o->cuda && !o->image) {
        struct gp_node_check *c = add(r, "cuda", GP_NODE_SKIP);
        const char *rep =
            driver[0] && gp_compat_parse_driver(driver, &code) ? gp_compat_reported(code) : NULL;
        say(c->detail, sizeof c->detail, "no --cuda or --image given%s%s%s",
            rep ? "; the driver reports CUDA " : "", rep ? rep : "", rep ? " (nvidia-smi)" : "");
        return GP_OK;
    }
    char v[24];
    gp_compat_cuda_text(&cuda, v, sizeof v);
    if (!driver[0] || !gp_compat_parse_driver(driver, &code)) {
        struct gp_node_check *c = add(r, "cuda", GP_NODE_SKIP);
        say(c->detail, sizeof c->detail, "CUDA %s: no driver to check it against", v);
        return GP_OK;
    }
    const char *model = o->inv && o->inv->n_gpus ? o->inv->gpus[0].name : NULL;
    struct gp_compat_result res;
    if (!gp_compat_check(&cuda, code, gp_compat_gpu_class(model),
                         img.ngc && img.ngc->compat_in_image, &res))
        return gp_diag_set(d, GP_EUSAGE, "--cuda %s: %s", v, res.reason);
    enum gp_node_verdict verdict = res.verdict == GP_COMPAT_NATIVE ? GP_NODE_PASS
                                   : res.verdict == GP_COMPAT_NO   ? GP_NODE_FAIL
                                                                   : GP_NODE_WARN;
    struct gp_node_check *c = add(r, "cuda", verdict);
    say(c->detail, sizeof c->detail, "CUDA %s%s%s on driver %s: %s", v, o->image ? " of " : "",
        o->image ? o->image : "", driver, res.reason);
    char need[24];
    gp_compat_driver_text(res.native_min, true, need, sizeof need);
    if (verdict != GP_NODE_PASS)
        say(c->fix, sizeof c->fix,
            "upgrade the driver to %s or later for CUDA %s natively%s (gpuplane compat --cuda %s "
            "--driver %s)",
            need, v, verdict == GP_NODE_WARN ? "" : ", or use an image built for an older CUDA", v,
            driver);
    return GP_OK;
}

/* The first of names found executable in a PATH directory under root. */
static const char *on_path(const struct gp_node_doctor_opts *o, const char *const *names, size_t n,
                           char *where, size_t wn)
{
    const char *path = o->path ? o->path : getenv("PATH");
    for (size_t k = 0; k < n; k++) {
        for (const char *p = path ? path : ""; *p;) {
            size_t len = strcspn(p, ":");
            char file[4096];
            snprintf(file, sizeof file, "%s%.*s/%s", root_of(o), (int)len, p, names[k]);
            if (len && access(file, X_OK) == 0) {
                snprintf(where, wn, "%.*s/%s", (int)len, p, names[k]);
                return names[k];
            }
            p += len + (p[len] == ':');
        }
    }
    return NULL;
}

static void check_toolkit(const struct gp_node_doctor_opts *o, struct gp_node_doctor *r)
{
    static const char *const names[] = {"nvidia-ctk", "nvidia-container-runtime",
                                        "nvidia-container-runtime-hook"};
    char where[4096];
    if (on_path(o, names, 3, where, sizeof where)) {
        struct gp_node_check *c = add(r, "toolkit", GP_NODE_PASS);
        say(c->detail, sizeof c->detail, "NVIDIA Container Toolkit: %s", where);
        return;
    }
    struct gp_node_check *c = add(r, "toolkit", GP_NODE_FAIL);
    say(c->detail, sizeof c->detail,
        "NVIDIA Container Toolkit not found: no nvidia-ctk or nvidia-container-runtime on PATH");
    say(c->fix, sizeof c->fix, "install nvidia-container-toolkit (%s)", INSTALL_TOOLKIT);
}

/* Whether a TOML text has a line, outside comments, containing needle. */
static bool toml_has(const char *text, const char *needle)
{
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *s = p;
        while (s < p + len && (*s == ' ' || *s == '\t'))
            s++;
        if (*s != '#') {
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)(len < 1023 ? len : 1023), p);
            char *hash = strchr(line, '#');
            if (hash)
                *hash = '\0';
            if (strstr(line, needle))
                return true;
        }
        p = e ? e + 1 : NULL;
    }
    return false;
}

/* containerd's config: the nvidia runtime ([...runtimes.nvidia]) or CDI
 * (enable_cdi = true; containerd 2.x, config version 3, enables it unless
 * told not to). */
static bool containerd_ok(const char *t, char *how, size_t n)
{
    bool v3 = toml_has(t, "version = 3");
    bool cdi_off = toml_has(t, "enable_cdi = false");
    if (toml_has(t, ".runtimes.nvidia]") || toml_has(t, ".runtimes.\"nvidia\"]") ||
        toml_has(t, ".runtimes.'nvidia']"))
        say(how, n, "containerd: the nvidia runtime is configured (/etc/containerd/config.toml)");
    else if (toml_has(t, "enable_cdi = true"))
        say(how, n, "containerd: CDI enabled (enable_cdi = true in /etc/containerd/config.toml)");
    else if (v3 && !cdi_off)
        say(how, n, "containerd 2.x (config version 3): CDI enabled by default");
    else
        return false;
    return true;
}

static void check_runtime(const struct gp_node_doctor_opts *o, struct gp_node_doctor *r)
{
    const char *root = root_of(o);
    char *ctd = slurp(root, "/etc/containerd/config.toml");
    char *crio = slurp(root, "/etc/crio/crio.conf");
    char how[320];
    bool ok = ctd && containerd_ok(ctd, how, sizeof how);
    if (!ok && crio) {
        /* CRI-O has CDI on by default since 1.23; the nvidia runtime is a
         * [crio.runtime.runtimes.nvidia] table */
        ok = true;
        say(how, sizeof how, "CRI-O: %s",
            toml_has(crio, "runtimes.nvidia]") ? "the nvidia runtime is configured"
                                               : "CDI (on by default since CRI-O 1.23)");
    }
    if (ok) {
        struct gp_node_check *c = add(r, "runtime", GP_NODE_PASS);
        say(c->detail, sizeof c->detail, "%s", how);
    } else {
        struct gp_node_check *c = add(r, "runtime", GP_NODE_FAIL);
        say(c->detail, sizeof c->detail, "%s",
            ctd ? "containerd has neither the nvidia runtime nor CDI "
                  "(/etc/containerd/config.toml)"
                : "no containerd (/etc/containerd/config.toml) or CRI-O (/etc/crio/crio.conf) "
                  "configuration");
        say(c->fix, sizeof c->fix,
            "nvidia-ctk runtime configure --runtime=containerd --cdi.enabled && systemctl "
            "restart containerd (CRI-O: --runtime=crio)");
    }
    free(ctd);
    free(crio);
}

static void check_plugins(const struct gp_node_doctor_opts *o, struct gp_node_doctor *r)
{
    char dir[4096], sock[4096];
    under(root_of(o), "/var/lib/kubelet/device-plugins", dir, sizeof dir);
    under(root_of(o), "/var/lib/kubelet/device-plugins/kubelet.sock", sock, sizeof sock);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        struct gp_node_check *c = add(r, "device-plugins", GP_NODE_FAIL);
        say(c->detail, sizeof c->detail, "/var/lib/kubelet/device-plugins is absent");
        say(c->fix, sizeof c->fix,
            "is this a Kubernetes node with the kubelet running? (a kubelet with another "
            "--root-dir: run the agent with its directory)");
        return;
    }
    if (stat(sock, &st) != 0) {
        struct gp_node_check *c = add(r, "device-plugins", GP_NODE_WARN);
        say(c->detail, sizeof c->detail,
            "/var/lib/kubelet/device-plugins exists but has no kubelet.sock");
        say(c->fix, sizeof c->fix, "start the kubelet (systemctl status kubelet)");
        return;
    }
    struct gp_node_check *c = add(r, "device-plugins", GP_NODE_PASS);
    say(c->detail, sizeof c->detail, "/var/lib/kubelet/device-plugins/kubelet.sock present");
}

/* --mig: "none", or PROFILE=N[,PROFILE=N...] per GPU. */
struct layout {
    size_t n;
    char profile[GP_NODE_MAX_MIGS][32];
    unsigned count[GP_NODE_MAX_MIGS];
};

static enum gp_err parse_layout(const char *s, struct layout *l, struct gp_diag *d)
{
    l->n = 0;
    if (strcmp(s, "none") == 0)
        return GP_OK;
    size_t sl = strlen(s);
    bool dangling = sl == 0 || s[sl - 1] == ','; /* "" or "a=1,": an empty last entry */
    for (const char *p = s; dangling || *p;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        char *end;
        unsigned long c = eq ? strtoul(eq + 1, &end, 10) : 0;
        if (!eq || eq == p || (size_t)(eq - p) >= 32 || c == 0 || c > GP_NODE_MAX_MIGS ||
            end != p + len || l->n == GP_NODE_MAX_MIGS)
            return gp_diag_set(d, GP_EUSAGE,
                               "--mig: expected none or PROFILE=N[,PROFILE=N...] (1g.10gb=7), "
                               "got '%s'",
                               s);
        snprintf(l->profile[l->n], sizeof l->profile[0], "%.*s", (int)(eq - p), p);
        l->count[l->n++] = (unsigned)c;
        p += len + (p[len] == ',');
    }
    return GP_OK;
}

/* Why GPU g does not have layout l, in why; false when it has. */
static bool layout_differs(const struct gp_node_gpu *g, const struct layout *l, char *why, size_t n)
{
    if (l->n == 0) {
        if (g->mig_enabled)
            say(why, n, "GPU %u has MIG mode on", g->index);
        return g->mig_enabled;
    }
    if (!g->mig_enabled) {
        say(why, n, "GPU %u has MIG mode off", g->index);
        return true;
    }
    size_t total = 0;
    for (size_t k = 0; k < l->n; k++) {
        unsigned have = 0;
        for (size_t m = 0; m < g->n_migs; m++)
            have += strcmp(g->migs[m].profile, l->profile[k]) == 0;
        if (have != l->count[k]) {
            say(why, n, "GPU %u has %u MIG device%s %s, the layout %u", g->index, have,
                have == 1 ? "" : "s", l->profile[k], l->count[k]);
            return true;
        }
        total += have;
    }
    if (total != g->n_migs) {
        say(why, n, "GPU %u has %zu MIG devices, the layout %zu", g->index, g->n_migs, total);
        return true;
    }
    return false;
}

static enum gp_err check_mig(const struct gp_node_doctor_opts *o, struct gp_node_doctor *r,
                             struct gp_diag *d)
{
    struct layout l;
    if (o->mig && parse_layout(o->mig, &l, d) != GP_OK)
        return GP_EUSAGE;
    if (!o->mig || !o->inv) {
        struct gp_node_check *c = add(r, "mig", GP_NODE_SKIP);
        size_t on = 0;
        for (size_t i = 0; o->inv && i < o->inv->n_gpus; i++)
            on += o->inv->gpus[i].mig_enabled;
        say(c->detail, sizeof c->detail, "%s", !o->inv ? "no GPU information (NVML)" : "");
        if (o->inv)
            say(c->detail, sizeof c->detail, "no --mig layout given; %zu of %zu GPUs in MIG mode",
                on, o->inv->n_gpus);
        return GP_OK;
    }
    char why[256];
    for (size_t i = 0; i < o->inv->n_gpus; i++)
        if (layout_differs(&o->inv->gpus[i], &l, why, sizeof why)) {
            struct gp_node_check *c = add(r, "mig", GP_NODE_FAIL);
            say(c->detail, sizeof c->detail, "the pool's layout is %s: %s", o->mig, why);
            say(c->fix, sizeof c->fix,
                "apply the layout with nvidia-mig-parted (or the GPU Operator's mig-manager: "
                "label the node nvidia.com/mig.config=<name>); MIG mode changes need the GPUs "
                "idle, some a reset");
            return GP_OK;
        }
    struct gp_node_check *c = add(r, "mig", GP_NODE_PASS);
    say(c->detail, sizeof c->detail, "every GPU has the layout %s", o->mig);
    return GP_OK;
}

static void check_persistence(const struct gp_node_doctor_opts *o, struct gp_node_doctor *r)
{
    if (!o->inv) {
        add(r, "persistence", GP_NODE_SKIP);
        say(r->checks[r->n - 1].detail, sizeof r->checks[0].detail, "no GPU information (NVML)");
        return;
    }
    size_t off = 0;
    unsigned first = 0;
    for (size_t i = 0; i < o->inv->n_gpus; i++)
        if (!o->inv->gpus[i].persistence_mode && off++ == 0)
            first = o->inv->gpus[i].index;
    if (off == 0) {
        struct gp_node_check *c = add(r, "persistence", GP_NODE_PASS);
        say(c->detail, sizeof c->detail, "persistence mode on for every GPU");
        return;
    }
    struct gp_node_check *c = add(r, "persistence", GP_NODE_WARN);
    say(c->detail, sizeof c->detail,
        "persistence mode off on %zu GPU%s (first: GPU %u): each first CUDA call pays the "
        "driver's initialisation",
        off, off == 1 ? "" : "s", first);
    say(c->fix, sizeof c->fix,
        "systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1, lost at reboot)");
}

/* The pid of a running nvidia-cuda-mps-control (its /proc/PID/cmdline's
 * first word, by its base name: /proc/PID/comm holds 15 characters of
 * it), or 0. */
static long mps_daemon_pid(const char *root)
{
    char p[4096];
    under(root, "/proc", p, sizeof p);
    DIR *dir = opendir(p);
    if (!dir)
        return 0;
    long pid = 0;
    struct dirent *de;
    while (!pid && (de = readdir(dir)) != NULL) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
            strspn(de->d_name, "0123456789") != strlen(de->d_name))
            continue;
        char rel[300];
        snprintf(rel, sizeof rel, "/proc/%s/cmdline", de->d_name);
        char *cmd = slurp(root, rel);
        if (!cmd)
            continue;
        const char *base = strrchr(cmd, '/');
        base = base ? base + 1 : cmd;
        if (strcmp(base, "nvidia-cuda-mps-control") == 0)
            pid = strtol(de->d_name, NULL, 10);
        free(cmd);
    }
    closedir(dir);
    return pid;
}

/* The first <mpsRoot>/nvidia.com/<resource>/pipe directory (the pipe
 * directory NVIDIA's mps-control-daemon gives each resource it shares:
 * cmd/mps-control-daemon/mps/daemon.go, root.PipeDir), with has_control
 * set when the control daemon's `control` pipe is in it. */
static bool mps_pipe_dir(const char *root, const char *mps_root, char *out, size_t n,
                         bool *has_control)
{
    char base[4096];
    snprintf(base, sizeof base, "%s%s/nvidia.com", root, mps_root);
    DIR *dir = opendir(base);
    *has_control = false;
    if (!dir)
        return false;
    bool found = false;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char pipe[4096 + 300], control[4096 + 310];
        snprintf(pipe, sizeof pipe, "%s/%s/pipe", base, de->d_name);
        struct stat st;
        if (stat(pipe, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        snprintf(control, sizeof control, "%s/control", pipe);
        bool ctl = access(control, F_OK) == 0;
        if (!found || (ctl && !*has_control)) {
            snprintf(out, n, "%s/nvidia.com/%s/pipe", mps_root, de->d_name);
            *has_control = ctl;
            found = true;
        }
    }
    closedir(dir);
    return found;
}

#define MPS_DAEMON_FIX                                                                             \
    "run NVIDIA's mps-control-daemon (the device plugin's DaemonSet with sharing.mps: one "        \
    "per resource), or nvidia-cuda-mps-control -d with "                                           \
    "CUDA_MPS_PIPE_DIRECTORY=%s/nvidia.com/gpu/pipe, as root"

/* MPS (--mps): the limits of MPS replicas are the MPS server's, which a
 * container reaches only through the control daemon's pipe directory,
 * mounted from <mpsRoot>/<resource>/pipe by the agent's Allocate answer
 * (docs/node.md, "MPS: the control daemon is not gpuplane's"). Fails when
 * a GPU is in MIG mode (NVIDIA's plugin refuses MPS with MIG), when no
 * nvidia-cuda-mps-control runs, or when no resource's pipe directory
 * under mpsRoot holds the daemon's `control` pipe. */
static void check_mps(const struct gp_node_doctor_opts *o, struct gp_node_doctor *r)
{
    if (!o->mps) {
        struct gp_node_check *c = add(r, "mps", GP_NODE_SKIP);
        say(c->detail, sizeof c->detail, "the pool does not share by MPS (no --mps)");
        return;
    }
    const char *root = root_of(o);
    const char *mr = o->mps_root && o->mps_root[0] ? o->mps_root : "/run/nvidia/mps";
    for (size_t i = 0; o->inv && i < o->inv->n_gpus; i++)
        if (o->inv->gpus[i].mig_enabled) {
            struct gp_node_check *c = add(r, "mps", GP_NODE_FAIL);
            say(c->detail, sizeof c->detail,
                "GPU %u is in MIG mode: NVIDIA's device plugin refuses MPS with MIG devices",
                o->inv->gpus[i].index);
            say(c->fix, sizeof c->fix,
                "turn MIG mode off on the pool's GPUs (nvidia-smi -i N -mig 0), or share them "
                "by time-slicing");
            return;
        }
    long pid = mps_daemon_pid(root);
    if (!pid) {
        struct gp_node_check *c = add(r, "mps", GP_NODE_FAIL);
        say(c->detail, sizeof c->detail,
            "no nvidia-cuda-mps-control process: MPS clients cannot connect, their limits are "
            "not applied");
        say(c->fix, sizeof c->fix, MPS_DAEMON_FIX, mr);
        return;
    }
    char dir[4096] = "";
    bool control = false;
    bool have = mps_pipe_dir(root, mr, dir, sizeof dir, &control);
    if (!have || !control) {
        struct gp_node_check *c = add(r, "mps", GP_NODE_FAIL);
        if (have)
            say(c->detail, sizeof c->detail,
                "nvidia-cuda-mps-control runs (pid %ld) but %s has no control pipe: the daemon "
                "listens elsewhere",
                pid, dir);
        else
            say(c->detail, sizeof c->detail,
                "nvidia-cuda-mps-control runs (pid %ld) but %s/nvidia.com/<resource>/pipe does "
                "not exist: the containers' CUDA_MPS_PIPE_DIRECTORY is mounted from there",
                pid, mr);
        say(c->fix, sizeof c->fix,
            "restart the daemon with CUDA_MPS_PIPE_DIRECTORY=%s/nvidia.com/gpu/pipe (the "
            "agent's flags.mpsRoot must be the daemon's root)",
            mr);
        return;
    }
    struct gp_node_check *c = add(r, "mps", GP_NODE_PASS);
    say(c->detail, sizeof c->detail, "nvidia-cuda-mps-control runs (pid %ld), listening in %s", pid,
        dir);
}

enum gp_err gp_node_doctor_run(const struct gp_node_doctor_opts *o, struct gp_node_doctor *out,
                               struct gp_diag *d)
{
    memset(out, 0, sizeof *out);
    char driver[GP_NODE_VER_LEN];
    check_driver(o, out, driver, sizeof driver);
    enum gp_err err = check_cuda(o, driver, out, d);
    if (err == GP_OK) {
        check_toolkit(o, out);
        check_runtime(o, out);
        check_plugins(o, out);
        err = check_mig(o, out, d);
    }
    if (err == GP_OK) {
        check_persistence(o, out);
        check_mps(o, out);
    }
    return err;
}

int gp_node_doctor_exit(const struct gp_node_doctor *r)
{
    if (r->no_driver)
        return 3;
    for (size_t i = 0; i < r->n; i++)
        if (r->checks[i].verdict == GP_NODE_FAIL)
            return 1;
    return 0;
}

const char *gp_node_verdict_name(enum gp_node_verdict v)
{
    static const char *const names[] = {"pass", "warn", "fail", "skip"};
    return names[v];
}
