/* The scenarios of benches/scenarios.c through the runtime-dimension API,
 * for a library built with no knobs (scripts/callgrind.sh compares the two).
 *   scenarios_rt <S1|S2|S3|S4|S5> <models-dir>
 * The blob is opened (atome_rt_open, lean plan) before the measured call, so
 *   valgrind --tool=callgrind --toggle-collect=atome_rt_<call> ...
 * counts one call, as for the compile-time build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "atome.h"
#include "common.h"

static const char T[] =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
    "sunshine. One day, she saw a big red ball in the park. She ran to get it, but a dog took it first.";

struct scenario {
    const char *name, *blob;
    int kind; /* 0 predict_next, 1 generate, 2 classify */
    int from, to, max_tokens;
    int d, l, dh, s;
};

static const struct scenario SCEN[] = {
    {"S1", "atome_944k.bin", 0, 0, 64, 0, 256, 8, 64, 64},
    {"S2", "atome_944k.bin", 1, 64, 80, 64, 256, 8, 64, 64},
    {"S3", "default.atome", 0, 10, 42, 0, 64, 4, 16, 32},
    {"S4", "model_toy.atome", 1, 90, 98, 64, 64, 4, 16, 64},
    {"S5", "agri.atomecl", 2, 20, 52, 0, 32, 2, 8, 32},
};

#define WORK_BYTES ATOME_RT_WORK_SIZE(256, 256, 8, 64, 5, 4, 64, 0)
static uint32_t work[(WORK_BYTES + 3) / 4];
static int toks[128], out[128];
static float class_logits[256];

int main(int argc, char **argv) {
    const struct scenario *sc = NULL;
    atome_rt_t rt;
    atome_dims_t dims;
    char path[1024];
    unsigned char *blob;
    size_t len = 0;
    int i, n, r;
    if (argc < 3) {
        fprintf(stderr, "usage: %s S1|S2|S3|S4|S5 MODELS_DIR\n", argv[0]);
        return 2;
    }
    for (i = 0; i < 5; i++) {
        if (strcmp(argv[1], SCEN[i].name) == 0) sc = &SCEN[i];
    }
    if (!sc) return 2;
    snprintf(path, sizeof path, "%s/%s", argv[2], sc->blob);
    blob = read_file(path, &len);
    if (!blob) return 1;
    memset(&dims, 0, sizeof dims);
    dims.vocab_size = 256; dims.d_model = sc->d; dims.n_layers = sc->l; dims.d_head = sc->dh;
    dims.kernel_size = 5; dims.top_k = 4; dims.max_seq = sc->s;
    if (atome_rt_open(&rt, blob, len, &dims, 0, work, sizeof work) != 0) return 1;
    n = sc->to - sc->from;
    for (i = 0; i < n; i++) toks[i] = (unsigned char)T[sc->from + i];
    switch (sc->kind) {
    case 0: r = atome_rt_predict_next(&rt, toks, n); break;
    case 1: r = atome_rt_generate(&rt, toks, n, out, sc->max_tokens); break;
    default: r = atome_rt_classify(&rt, toks, n, class_logits); break;
    }
    printf("%s runtime API: %d\n", sc->name, r);
    free(blob);
    return 0;
}
