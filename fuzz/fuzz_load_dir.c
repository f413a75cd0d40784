/* fuzz_load_dir.c - libFuzzer target for reading a workload directory
 * (gp_workload_load on a folder, io/load.c): the input is a little file
 * tree, "NAME\nCONTENT" records separated by lines "@@@" (a NAME ending
 * in '/' is a subdirectory), written to a fresh temporary folder. Any
 * tree gives items that each name their file and line, or an error with a
 * one-line diag and nothing added; never a crash, a hang or a leak. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];

static void clear_dir(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && depth < 4) {
            clear_dir(path, depth + 1);
            rmdir(path);
        } else {
            unlink(path);
        }
    }
    closedir(d);
}

/* One record: a name (sanitised: no '/' inside, at most 60 bytes) and
 * its content. */
static void write_record(const char *rec, size_t len)
{
    const char *nl = memchr(rec, '\n', len);
    size_t nlen = nl ? (size_t)(nl - rec) : len;
    char name[64];
    size_t k = 0;
    for (size_t i = 0; i < nlen && k < 60; i++)
        name[k++] = rec[i] == '/' && i + 1 < nlen ? '_' : (rec[i] ? rec[i] : '_');
    name[k] = '\0';
    if (k == 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "/") == 0)
        return;
    char path[160];
    if (name[k - 1] == '/') {
        name[k - 1] = '\0';
        snprintf(path, sizeof path, "%s/%s", root, name);
        mkdir(path, 0700);
        return;
    }
    snprintf(path, sizeof path, "%s/%s", root, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    if (nl)
        fwrite(nl + 1, 1, len - nlen - 1, f);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!root[0]) {
        snprintf(root, sizeof root, "/tmp/gp-fuzz-dir-%ld-XXXXXX", (long)getpid());
        if (!mkdtemp(root))
            __builtin_trap();
    }
    clear_dir(root, 0);
    const char *p = (const char *)data, *end = p + size;
    int records = 0;
    while (p < end && records < 16) {
        const char *sep = NULL;
        for (const char *q = p; q + 4 <= end; q++)
            if (memcmp(q, "\n@@@", 4) == 0) {
                sep = q;
                break;
            }
        const char *stop = sep ? sep : end;
        write_record(p, (size_t)(stop - p));
        records++;
        if (!sep)
            break;
        p = sep + 4;
        if (p < end && *p == '\n')
            p++;
    }
    struct gp_arena a;
    struct gp_workload w;
    struct gp_diag d = {""};
    memset(&w, 0, sizeof w);
    gp_arena_init(&a);
    gp_workload_set_max_pods(100000, NULL);
    enum gp_err err = gp_workload_load(root, &a, &w, &d);
    if (err != GP_OK) {
        if (d.msg[0] == '\0' || strchr(d.msg, '\n') || w.nitems != 0)
            __builtin_trap();
    } else {
        for (size_t i = 0; i < w.nitems; i++)
            if (!w.items[i].name || !w.items[i].source ||
                strncmp(w.items[i].source, root, strlen(root)) != 0)
                __builtin_trap();
    }
    gp_arena_free(&a);
    return 0;
}
