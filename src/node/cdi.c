/* cdi.c - the node's CDI spec: its devices and containerEdits built with
 * jansson from an inventory and the driver's files under a root, written
 * atomically, and a validator of the CDI specification's rules (SPEC.md of
 * cncf-tags/container-device-interface; the layout follows NVIDIA's
 * nvidia-ctk cdi generate, NVIDIA/nvidia-container-toolkit). */
#include "node/cdi.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fs.h"

static const char *root_of(const struct gp_node_cdi_opts *o)
{
    return o && o->root && strcmp(o->root, "/") != 0 ? o->root : "";
}

static void host(const char *root, const char *path, char *out, size_t n)
{
    snprintf(out, n, "%s%s", root, path);
}

static bool exists(const char *root, const char *path)
{
    char p[4096];
    host(root, path, p, sizeof p);
    struct stat st;
    return stat(p, &st) == 0;
}

static json_t *node(const char *root, const char *path)
{
    char hp[4096];
    host(root, path, hp, sizeof hp);
    return json_pack("{s:s,s:s}", "path", path, "hostPath", hp);
}

/* The minors of MIG access files, from the nvidia-caps driver's table
 * ("gpu0/gi1/access 12", "gpu0/gi1/ci0/access 13"). */
struct minors {
    char *text;
};

static bool minor_of(const struct minors *m, const char *name, unsigned *out)
{
    size_t nl = strlen(name);
    for (const char *p = m->text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > nl + 1 && strncmp(p, name, nl) == 0 && p[nl] == ' ') {
            *out = (unsigned)strtoul(p + nl + 1, NULL, 10);
            return true;
        }
        p = e ? e + 1 : NULL;
    }
    return false;
}

static enum gp_err mig_nodes(const char *root, const struct minors *m, const struct gp_node_gpu *g,
                             const struct gp_node_mig *mig, json_t *nodes, struct gp_diag *d)
{
    char name[96], path[96];
    unsigned minor;
    snprintf(name, sizeof name, "gpu%u/gi%u/access", g->index, mig->gi_id);
    if (!minor_of(m, name, &minor))
        return gp_diag_set(d, GP_EINVALID,
                           "%s/proc/driver/nvidia-caps/mig-minors: no line for %s (MIG device %s)",
                           root, name, mig->uuid);
    snprintf(path, sizeof path, "/dev/nvidia-caps/nvidia-cap%u", minor);
    json_array_append_new(nodes, node(root, path));
    snprintf(name, sizeof name, "gpu%u/gi%u/ci%u/access", g->index, mig->gi_id, mig->ci_id);
    if (!minor_of(m, name, &minor))
        return gp_diag_set(d, GP_EINVALID,
                           "%s/proc/driver/nvidia-caps/mig-minors: no line for %s (MIG device %s)",
                           root, name, mig->uuid);
    snprintf(path, sizeof path, "/dev/nvidia-caps/nvidia-cap%u", minor);
    json_array_append_new(nodes, node(root, path));
    return GP_OK;
}

static json_t *device(const char *name, json_t *nodes)
{
    return json_pack("{s:s,s:{s:o}}", "name", name, "containerEdits", "deviceNodes", nodes);
}

/* The driver's user-space files of its version (nvidia-ctk's "driver
 * libraries" and binaries): lib*.so.<version> of NVIDIA's in the library
 * directories, the binaries in /usr/bin, sorted so the spec is stable. */
static const char *const lib_dirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                       "/usr/lib64", "/lib/x86_64-linux-gnu"};
static const char *const lib_prefixes[] = {"libcuda.so.", "libcudadebugger.so.", "libnvidia-",
                                           "libnvcuvid.so.", "libnvoptix.so."};
static const char *const binaries[] = {"nvidia-smi", "nvidia-debugdump", "nvidia-persistenced",
                                       "nvidia-cuda-mps-control", "nvidia-cuda-mps-server"};

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool nvidia_lib(const char *f, const char *version)
{
    size_t fl = strlen(f), vl = strlen(version);
    if (fl <= vl + 4 || strcmp(f + fl - vl, version) != 0 || strncmp(f + fl - vl - 4, ".so.", 4))
        return false;
    for (size_t i = 0; i < sizeof lib_prefixes / sizeof lib_prefixes[0]; i++)
        if (strncmp(f, lib_prefixes[i], strlen(lib_prefixes[i])) == 0)
            return true;
    return false;
}

static json_t *mount(const char *root, const char *path)
{
    char hp[4096];
    host(root, path, hp, sizeof hp);
    return json_pack("{s:s,s:s,s:[s,s,s,s,s]}", "hostPath", hp, "containerPath", path, "options",
                     "ro", "nosuid", "nodev", "rbind", "rprivate");
}

/* Mounts of the driver's files; folders gets the library directories with
 * any (for update-ldcache), *libcuda_dir the one holding libcuda. */
static void driver_files(const char *root, const char *version, json_t *mounts, json_t *folders,
                         const char **libcuda_dir)
{
    *libcuda_dir = NULL;
    for (size_t k = 0; k < sizeof lib_dirs / sizeof lib_dirs[0]; k++) {
        char dir[4096];
        host(root, lib_dirs[k], dir, sizeof dir);
        DIR *dp = opendir(dir);
        if (!dp)
            continue;
        char **names = NULL;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(dp)) != NULL) {
            if (!nvidia_lib(e->d_name, version))
                continue;
            char **grown = realloc(names, (n + 1) * sizeof *names);
            if (!grown)
                break;
            names = grown;
            names[n] = strdup(e->d_name);
            if (names[n])
                n++;
        }
        closedir(dp);
        if (n)
            qsort(names, n, sizeof *names, by_str);
        for (size_t i = 0; i < n; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", lib_dirs[k], names[i]);
            json_array_append_new(mounts, mount(root, path));
            if (strncmp(names[i], "libcuda.so.", 11) == 0 && !*libcuda_dir)
                *libcuda_dir = lib_dirs[k];
            free(names[i]);
        }
        free(names);
        if (n)
            json_array_append_new(folders, json_string(lib_dirs[k]));
    }
    for (size_t i = 0; i < sizeof binaries / sizeof binaries[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "/usr/bin/%s", binaries[i]);
        if (exists(root, path))
            json_array_append_new(mounts, mount(root, path));
    }
}

static json_t *hook(const char *path, json_t *args)
{
    return json_pack("{s:s,s:s,s:o}", "hookName", "createContainer", "path", path, "args", args);
}

static json_t *top_edits(const char *root, const struct gp_node_inventory *inv,
                         const char *hook_path)
{
    json_t *nodes = json_array();
    json_array_append_new(nodes, node(root, "/dev/nvidiactl"));
    static const char *const optional[] = {"/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                                           "/dev/nvidia-modeset"};
    for (size_t i = 0; i < 3; i++)
        if (exists(root, optional[i]))
            json_array_append_new(nodes, node(root, optional[i]));
    json_t *mounts = json_array(), *folders = json_array(), *hooks = json_array();
    const char *libcuda_dir;
    driver_files(root, inv->driver_version, mounts, folders, &libcuda_dir);
    const char *hook_name = strrchr(hook_path, '/') ? strrchr(hook_path, '/') + 1 : hook_path;
    if (libcuda_dir) {
        char link[512];
        snprintf(link, sizeof link, "libcuda.so.1::%s/libcuda.so", libcuda_dir);
        json_array_append_new(hooks, hook(hook_path, json_pack("[s,s,s,s]", hook_name,
                                                               "create-symlinks", "--link", link)));
    }
    if (json_array_size(folders)) {
        json_t *args = json_pack("[s,s]", hook_name, "update-ldcache");
        size_t i;
        json_t *f;
        json_array_foreach(folders, i, f)
        {
            json_array_append_new(args, json_string("--folder"));
            json_array_append(args, f);
        }
        json_array_append_new(hooks, hook(hook_path, args));
    }
    json_decref(folders);
    json_t *edits =
        json_pack("{s:[s],s:o}", "env", "NVIDIA_VISIBLE_DEVICES=void", "deviceNodes", nodes);
    if (json_array_size(hooks))
        json_object_set(edits, "hooks", hooks);
    if (json_array_size(mounts))
        json_object_set(edits, "mounts", mounts);
    json_decref(hooks);
    json_decref(mounts);
    return edits;
}

enum gp_err gp_node_cdi_build(const struct gp_node_inventory *inv, const struct gp_node_cdi_opts *o,
                              char **out, struct gp_diag *d)
{
    *out = NULL;
    const char *root = root_of(o);
    const char *hook_path = o && o->hook_path ? o->hook_path : GP_NODE_CDI_HOOK_PATH;
    if (inv->n_gpus == 0)
        return gp_diag_set(d, GP_EINVALID, "CDI: the node has no GPU to describe");
    struct minors m = {NULL};
    bool any_mig = false;
    for (size_t i = 0; i < inv->n_gpus; i++)
        any_mig |= inv->gpus[i].mig_enabled && inv->gpus[i].n_migs > 0;
    if (any_mig) {
        char path[4096];
        host(root, "/proc/driver/nvidia-caps/mig-minors", path, sizeof path);
        size_t len;
        enum gp_err err = gp_fs_read(path, &m.text, &len, d);
        if (err != GP_OK)
            return gp_diag_set(d, GP_ENOTFOUND,
                               "CDI: MIG devices need the nvidia-caps minors, %s: %s", path,
                               d->msg);
    }
    json_t *devices = json_array(), *all = json_array();
    enum gp_err err = GP_OK;
    for (size_t i = 0; i < inv->n_gpus && err == GP_OK; i++) {
        const struct gp_node_gpu *g = &inv->gpus[i];
        char path[64], name[GP_NODE_UUID_LEN + 16];
        snprintf(path, sizeof path, "/dev/nvidia%u", g->index);
        snprintf(name, sizeof name, "%u", g->index);
        json_array_append_new(all, node(root, path));
        json_t *nodes = json_pack("[o]", node(root, path));
        json_array_append_new(devices, device(name, json_deep_copy(nodes)));
        json_array_append_new(devices, device(g->uuid, nodes));
        for (size_t k = 0; g->mig_enabled && k < g->n_migs && err == GP_OK; k++) {
            json_t *mn = json_pack("[o]", node(root, path));
            if ((err = mig_nodes(root, &m, g, &g->migs[k], mn, d)) != GP_OK) {
                json_decref(mn);
                break;
            }
            json_array_append_new(all, json_incref(json_array_get(mn, 1)));
            json_array_append_new(all, json_incref(json_array_get(mn, 2)));
            snprintf(name, sizeof name, "%u:%zu", g->index, k);
            json_array_append_new(devices, device(name, json_deep_copy(mn)));
            json_array_append_new(devices, device(g->migs[k].uuid, mn));
        }
    }
    free(m.text);
    if (err != GP_OK) {
        json_decref(devices);
        json_decref(all);
        return err;
    }
    json_array_append_new(devices, device("all", all));
    json_t *spec =
        json_pack("{s:s,s:s,s:o,s:o}", "cdiVersion", GP_NODE_CDI_VERSION, "kind", GP_NODE_CDI_KIND,
                  "devices", devices, "containerEdits", top_edits(root, inv, hook_path));
    char *text = spec ? json_dumps(spec, JSON_INDENT(2)) : NULL;
    json_decref(spec);
    if (!text)
        return gp_diag_set(d, GP_ENOMEM, "CDI: out of memory");
    size_t n = strlen(text);
    char *withnl = realloc(text, n + 2);
    if (!withnl) {
        free(text);
        return gp_diag_set(d, GP_ENOMEM, "CDI: out of memory");
    }
    withnl[n] = '\n';
    withnl[n + 1] = '\0';
    if ((err = gp_node_cdi_validate(withnl, d)) != GP_OK) {
        free(withnl);
        return err;
    }
    *out = withnl;
    return GP_OK;
}

enum gp_err gp_node_cdi_write(const char *dir, const char *spec, struct gp_diag *d)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, GP_NODE_CDI_FILE);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gp_diag_set(d, GP_ENOTFOUND, "CDI: %s is not a directory (--cdi-dir)", dir);
    enum gp_err err = gp_node_cdi_validate(spec, d); /* never a spec CDI refuses */
    if (err != GP_OK)
        return err;
    return gp_fs_write_atomic(path, spec, strlen(spec), d);
}
