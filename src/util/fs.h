/* fs.h - whole-file reads and one-file all-or-nothing writes (several
 * outputs written all together: util/output.h). */
#ifndef GP_UTIL_FS_H
#define GP_UTIL_FS_H

#include <stddef.h>

#include "util/err.h"

/* Reads a whole file into a malloc'd, NUL-terminated buffer (caller frees).
 * Errors: GP_ENOTFOUND (missing), GP_EIO; diag names the path. */
enum gp_err gp_fs_read(const char *path, char **out, size_t *out_len, struct gp_diag *diag);

/* Writes len bytes to path as a one-file output set (util/output.h): a
 * temporary beside the target renamed into place; a symlink is written
 * through, a device or FIFO in place. */
enum gp_err gp_fs_write_atomic(const char *path, const char *data, size_t len,
                               struct gp_diag *diag);

#endif
