/* shared_data.h - for unit tests that read the shared reference data
 * (GP_SHARED_DIR, ../shared beside the checkout), which a checkout may not
 * have. Such tests go in a second group that the executable runs when
 * given "shared"; tests/CMakeLists.txt registers that run as its own ctest
 * test (unit/NAME:shared) for every file that includes this header. A test
 * of the group starts with GP_NEED_SHARED(path): when the file cannot be
 * read the test is skipped, and gp_shared_exit() turns a run with a skip
 * and no failure into exit code 77, which ctest reports as skipped
 * (SKIP_RETURN_CODE), never as passed.
 *
 *     int main(int argc, char **argv)
 *     {
 *         const struct CMUnitTest tests[] = {...}, shared[] = {...};
 *         if (gp_shared_mode(argc, argv))
 *             return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
 *         return cmocka_run_group_tests(tests, NULL, NULL);
 *     }
 *
 * Include after <cmocka.h>. */
#ifndef GP_TESTS_SHARED_DATA_H
#define GP_TESTS_SHARED_DATA_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define GP_SHARED_SKIP_EXIT 77

static unsigned gp_shared_skipped; /* tests skipped for want of a file */

/* Whether path is readable; counts a skip and says so when it is not. */
static inline bool gp_shared_have(const char *path)
{
    if (access(path, R_OK) == 0)
        return true;
    print_message("skipped: %s is not readable (no shared reference data)\n", path);
    gp_shared_skipped++;
    return false;
}

#define GP_NEED_SHARED(path)                                                                       \
    do {                                                                                           \
        if (!gp_shared_have(path))                                                                 \
            skip();                                                                                \
    } while (0)

/* Whether the executable was asked for its shared-data group. */
static inline bool gp_shared_mode(int argc, char **argv)
{
    return argc > 1 && strcmp(argv[1], "shared") == 0;
}

/* The exit code of the shared-data group from its failure count. */
static inline int gp_shared_exit(int failed)
{
    if (failed)
        return 1;
    return gp_shared_skipped ? GP_SHARED_SKIP_EXIT : 0;
}

#endif
