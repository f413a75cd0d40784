/* fs.c - file helpers. */
#define _POSIX_C_SOURCE 200809L
#include "util/fs.h"
#include "util/output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum gp_err gp_fs_read(const char *path, char **out, size_t *out_len, struct gp_diag *diag)
{
    enum gp_err err = GP_OK;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return gp_diag_set(diag, e == ENOENT ? GP_ENOTFOUND : GP_EIO, "%s: cannot open: %s", path,
                           strerror(e));
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        err = gp_diag_set(diag, GP_EINVALID, "%s: is a directory, expected a file", path);
        goto out;
    }
    for (;;) {
        if (cap - len < 65536) {
            cap = cap ? cap * 2 : 65536;
            char *p = realloc(buf, cap + 1);
            if (!p) {
                err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", path);
                goto out;
            }
            buf = p;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f))
                err = gp_diag_set(diag, GP_EIO, "%s: read error", path);
            break;
        }
    }
out:
    fclose(f);
    if (err != GP_OK) {
        free(buf);
        return err;
    }
    if (!buf) {
        buf = malloc(1);
        if (!buf)
            return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", path);
    }
    buf[len] = '\0';
    *out = buf;
    if (out_len)
        *out_len = len;
    return GP_OK;
}

enum gp_err gp_fs_write_atomic(const char *path, const char *data, size_t len, struct gp_diag *diag)
{
    struct gp_output_set set;
    size_t i = 0;
    gp_output_set_init(&set);
    enum gp_err err = gp_output_add(&set, "output", path, &i, diag);
    if (err == GP_OK)
        err = gp_output_put(&set, i, data, len, diag);
    if (err == GP_OK)
        err = gp_output_commit(&set, diag);
    gp_output_set_free(&set);
    return err;
}
