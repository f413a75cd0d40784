/* fs.c - file helpers: bounded whole-file reads, one-file outputs. */
#define _POSIX_C_SOURCE 200809L
#include "util/fs.h"
#include "util/output.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t max_read_bytes = GP_FS_MAX_READ_DEFAULT;
static const char *max_read_hint = "";

void gp_fs_set_max_read(uint64_t bytes, const char *hint)
{
    max_read_bytes = bytes ? bytes : GP_FS_MAX_READ_DEFAULT;
    max_read_hint = hint ? hint : "";
}

uint64_t gp_fs_max_read(void)
{
    return max_read_bytes;
}

/* size: the file's size in bytes, or 0 for a stream read to the limit */
static enum gp_err too_large(const char *path, uint64_t size, struct gp_diag *diag)
{
    char what[64] = "gives more than";
    if (size)
        snprintf(what, sizeof what, "is %.1f MiB, more than", (double)size / 1048576.0);
    return gp_diag_set(diag, GP_EINVALID, "%s: %s the input limit of %llu MiB%s%s", path, what,
                       (unsigned long long)(max_read_bytes >> 20), *max_read_hint ? "; " : "",
                       max_read_hint);
}

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
    /* a regular file is checked by its size before anything is read, and
     * read into one buffer of that size; anything else (a pipe, /dev/zero)
     * is read in growing steps and stopped at the limit */
    uint64_t limit = max_read_bytes;
    bool regular = S_ISREG(st.st_mode) && st.st_size >= 0;
    if (regular && (uint64_t)st.st_size > limit) {
        err = too_large(path, (uint64_t)st.st_size, diag);
        goto out;
    }
    if (limit > SIZE_MAX - 2)
        limit = SIZE_MAX - 2;
    for (;;) {
        if (len == cap) {
            if (cap > limit) {
                err = too_large(path, 0, diag);
                goto out;
            }
            size_t grow = regular && cap == 0 ? (size_t)st.st_size + 1 : (cap ? cap : 65536);
            size_t ncap = cap + grow > limit + 1 ? (size_t)limit + 1 : cap + grow;
            char *p = realloc(buf, ncap + 1);
            if (!p) {
                err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", path);
                goto out;
            }
            buf = p;
            cap = ncap;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (len > limit) {
            err = too_large(path, 0, diag);
            goto out;
        }
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
