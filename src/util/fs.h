/* fs.h - whole-file reads and all-or-nothing writes: an output file is
 * written to a temporary name and renamed into place only when complete,
 * so a failed run never leaves partial output behind. */
#ifndef GP_UTIL_FS_H
#define GP_UTIL_FS_H

#include <stddef.h>

#include "util/err.h"

/* Reads a whole file into a malloc'd, NUL-terminated buffer (caller frees).
 * Errors: GP_ENOTFOUND (missing), GP_EIO; diag names the path. */
enum gp_err gp_fs_read(const char *path, char **out, size_t *out_len, struct gp_diag *diag);

/* Writes len bytes to path atomically (temp file + rename). */
enum gp_err gp_fs_write_atomic(const char *path, const char *data, size_t len,
                               struct gp_diag *diag);

#endif
