/* fs.h - whole-file reads and one-file all-or-nothing writes (several
 * outputs written all together: util/output.h). */
#ifndef GP_UTIL_FS_H
#define GP_UTIL_FS_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* The most bytes gp_fs_read reads from one file, process-wide: 256 MiB
 * unless gp_fs_set_max_read raises it (0: the default again). hint is
 * added to the message of a file over the limit ("--max-input-mib raises
 * it"). */
#define GP_FS_MAX_READ_DEFAULT ((uint64_t)256 << 20)
void gp_fs_set_max_read(uint64_t bytes, const char *hint);
uint64_t gp_fs_max_read(void);

/* Reads a whole file into a malloc'd, NUL-terminated buffer (caller frees).
 * A regular file larger than the limit is refused before it is read; a
 * pipe or device (/dev/zero) is read up to the limit and then refused.
 * Errors: GP_ENOTFOUND (missing), GP_EINVALID (a directory, over the
 * limit), GP_EIO; diag names the path. */
enum gp_err gp_fs_read(const char *path, char **out, size_t *out_len, struct gp_diag *diag);

/* Writes len bytes to path as a one-file output set (util/output.h): a
 * temporary beside the target renamed into place; a symlink is written
 * through, a device or FIFO in place. */
enum gp_err gp_fs_write_atomic(const char *path, const char *data, size_t len,
                               struct gp_diag *diag);

#endif
