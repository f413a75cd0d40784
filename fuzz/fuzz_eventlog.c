/* fuzz_eventlog.c - libFuzzer target for the scheduler's event log
 * (io/eventlog.h) and its replay (sim/replay.h): the input is the log,
 * read from a memory stream line by line (torn lines, lines that do not
 * read, lines past the cap) and replayed through the engine - every call
 * the log asks for made with the ids and specs it names. Any input gives a
 * result or an error with a one-line message naming the stream's line;
 * never a crash, a hang or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > (1u << 20))
        return 0;
    FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");
    if (!f)
        return 0;
    struct gp_replay_result r;
    struct gp_diag d = {""};
    enum gp_err err = gp_replay_stream(f, "fuzz", NULL, NULL, &r, &d);
    fclose(f);
    if (err != GP_OK && (d.msg[0] == '\0' || strchr(d.msg, '\n')))
        __builtin_trap();
    if (err == GP_OK && (r.matched > r.decisions || (r.has_diff && r.differing == 0)))
        __builtin_trap();
    return 0;
}
