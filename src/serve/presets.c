/* presets.c - the LLM presets of data/serving-models.json (their sources
 * and fits are there; test_serve_presets.c checks this table against the
 * file). */
#include <string.h>

#include "serve/llm.h"

const struct gp_serve_preset gp_serve_presets[] = {
    {"qwen3-8b-fp8/h100", {0.00461, 0.0000565, 0.030, 0.000024, 512, 600000}, 128, 1024},
    {"llama-3.3-70b-fp8/2xh100", {0.0183, 0.0007, 0.100, 0.0000158, 256, 550000}, 5000, 500},
    {"qwen3-8b-fp8/a100", {0.00922, 0.000113, 0.060, 0.000048, 512, 600000}, 128, 1024},
};
const size_t gp_serve_npresets = sizeof gp_serve_presets / sizeof gp_serve_presets[0];

const struct gp_serve_preset *gp_serve_preset_find(const char *name)
{
    for (size_t i = 0; i < gp_serve_npresets; i++)
        if (strcmp(gp_serve_presets[i].name, name) == 0)
            return &gp_serve_presets[i];
    return NULL;
}
