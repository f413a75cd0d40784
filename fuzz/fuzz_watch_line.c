/* fuzz_watch_line.c - libFuzzer target for the watch stream reader
 * (kube/watch.c): the input, fed in chunks cut where its first byte says,
 * is split into lines under a 512-byte cap and each line parsed as a watch
 * event; an event parsed has its strings set (name and resourceVersion
 * where the type needs them), an error has a one-line diag; never a
 * crash, a hang or a leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_line(const char *line, size_t len, void *ctx)
{
    (void)ctx;
    if (len == 0 || len > 512 || strlen(line) > len)
        __builtin_trap();
    struct gp_kube_event ev;
    struct gp_diag d = {""};
    if (gp_kube_event_parse(line, len, &ev, &d) == GP_OK) {
        if (!ev.object || !ev.ns || !ev.name || !ev.rv || !ev.message)
            __builtin_trap();
        if (ev.type != GP_KUBE_ERROR && !ev.rv[0])
            __builtin_trap();
        if (ev.type <= GP_KUBE_DELETED && !ev.name[0])
            __builtin_trap();
        gp_kube_event_clear(&ev);
    } else if (d.msg[0] == '\0' || strchr(d.msg, '\n') || ev.object) {
        __builtin_trap();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t chunk = (size_t)data[0] % 64 + 1;
    struct gp_kube_lines l;
    struct gp_diag d = {""};
    gp_kube_lines_init(&l, 512);
    for (size_t off = 1; off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        enum gp_err err = gp_kube_lines_feed(&l, (const char *)data + off, n, on_line, NULL, &d);
        if (err == GP_ELIMIT)
            break;
        if (err != GP_OK)
            __builtin_trap();
    }
    gp_kube_lines_free(&l);
    return 0;
}
