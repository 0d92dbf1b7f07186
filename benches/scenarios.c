/* Scenario driver for BENCHMARKS.md#reference-scenarios (S1-S5), run under callgrind by
 * scripts/callgrind.sh.
 *
 *   scenarios <S1|S2|S3|S4|S5> <models-dir> [--time N]
 *
 * Compile with the -D flags of the scenario's configuration (and
 * -DATOME_STATE_CACHED=1 for a cached library) and link the matching
 * libatome.a. The blob is read and loaded (atome_load / atome_classifier_load)
 * and the state is atome_init'ed before the measured call, so
 *   valgrind --tool=callgrind --toggle-collect=<call> scenarios ...
 * counts exactly one atome_predict_next / atome_generate / atome_classify on a
 * fresh state (nothing cached from before the call).
 * With --time N, it also times N calls (each on a freshly initialised state,
 * atome_init outside the timed region) with CLOCK_MONOTONIC and prints the
 * median and minimum.
 *
 * Input text T (bytes), as in BENCHMARKS.md#reference-scenarios:
 *   S1 944K model  (D=256 L=8 DH=64 S=64) predict_next(T[0:64))
 *   S2 944K model  (D=256 L=8 DH=64 S=64) generate(T[64:80), max_tokens 64)
 *   S3 default.atome (default configuration) predict_next(T[10:42))
 *   S4 model_toy.atome (D=64 L=4 DH=16 S=64) generate(T[90:98), max_tokens 64)
 *   S5 agri.atomecl (D=32 L=2 DH=8 S=32)      classify(T[20:52))
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "atome.h"
#include "common.h" /* read_file, shared with the examples */

static const char T[] =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
    "sunshine. One day, she saw a big red ball in the park. She ran to get it, but a dog took it first.";

struct scenario {
    const char *name, *blob, *call;
    int kind; /* 0 predict_next, 1 generate, 2 classify */
    int from, to, max_tokens;
    int d, l, dh, s; /* configuration it needs (V=256 K=5 TOPK=4 for all five) */
};

static const struct scenario SCEN[] = {
    {"S1", "atome_944k.bin", "atome_predict_next", 0, 0, 64, 0, 256, 8, 64, 64},
    {"S2", "atome_944k.bin", "atome_generate", 1, 64, 80, 64, 256, 8, 64, 64},
    {"S3", "default.atome", "atome_predict_next", 0, 10, 42, 0, 64, 4, 16, 32},
    {"S4", "model_toy.atome", "atome_generate", 1, 90, 98, 64, 64, 4, 16, 64},
    {"S5", "agri.atomecl", "atome_classify", 2, 20, 52, 0, 32, 2, 8, 32},
};

static atome_model_t model;
static atome_classifier_t clf;
static int toks[128], out[128];
static float class_logits[ATOME_MAX_CLASSES];

/* The measured call: one of the three entry points, nothing else. */
static int run(const struct scenario *sc, atome_state_t *st, int n) {
    switch (sc->kind) {
    case 0: return atome_predict_next(&model, st, toks, n);
    case 1: return atome_generate(&model, st, toks, n, out, sc->max_tokens);
    default: return atome_classify(&clf, st, toks, n, class_logits);
    }
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const struct scenario *sc = NULL;
    char path[1024];
    unsigned char *blob;
    size_t len = 0;
    atome_state_t *st;
    int i, n, rc, reps = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: %s S1|S2|S3|S4|S5 MODELS_DIR [--time N]\n", argv[0]);
        return 2;
    }
    if (argc >= 5 && strcmp(argv[3], "--time") == 0) reps = atoi(argv[4]);
    for (i = 0; i < (int)(sizeof SCEN / sizeof SCEN[0]); i++)
        if (strcmp(argv[1], SCEN[i].name) == 0) sc = &SCEN[i];
    if (!sc) {
        fprintf(stderr, "unknown scenario %s\n", argv[1]);
        return 2;
    }
    if (sc->d != ATOME_D_MODEL || sc->l != ATOME_N_LAYERS || sc->dh != ATOME_D_HEAD || sc->s != ATOME_MAX_SEQ ||
        ATOME_VOCAB_SIZE != 256 || ATOME_KERNEL_SIZE != 5 || ATOME_TOP_K != 4) {
        fprintf(stderr, "%s needs D=%d L=%d DH=%d S=%d (V=256 K=5 TOPK=4); this driver was built for D=%d L=%d DH=%d S=%d\n",
                sc->name, sc->d, sc->l, sc->dh, sc->s, ATOME_D_MODEL, ATOME_N_LAYERS, ATOME_D_HEAD, ATOME_MAX_SEQ);
        return 2;
    }
    snprintf(path, sizeof path, "%s/%s", argv[2], sc->blob);
    blob = read_file(path, &len);
    if (!blob) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    rc = sc->kind == 2 ? atome_classifier_load(&clf, blob, len) : atome_load(&model, blob, len);
    if (rc != 0) {
        fprintf(stderr, "load %s: %d\n", path, rc);
        return 1;
    }
    n = sc->to - sc->from;
    for (i = 0; i < n; i++) toks[i] = (unsigned char)T[sc->from + i];
    st = (atome_state_t *)malloc(sizeof *st);
    if (!st) return 1;
    atome_init(st);

    rc = run(sc, st, n); /* the call callgrind counts (--toggle-collect) */

    printf("%s %s(%s, %d tokens) -> %d", sc->name, sc->call, sc->blob, n, rc);
    if (sc->kind == 1) {
        printf(" [");
        for (i = 0; i < rc; i++) printf("%s%d", i ? " " : "", out[i]);
        printf("] \"");
        for (i = 0; i < rc; i++) putchar(out[i] >= 32 && out[i] < 127 ? out[i] : '.');
        printf("\"");
    }
    printf(" state=%u bytes %s\n", (unsigned)sizeof(atome_state_t),
#if defined(ATOME_STATE_CACHED)
           "cached"
#else
           "lean"
#endif
    );
    if (rc < 0 || (sc->kind == 1 && rc != (sc->max_tokens < ATOME_MAX_SEQ - n ? sc->max_tokens : ATOME_MAX_SEQ - n))) {
        fprintf(stderr, "unexpected result %d\n", rc);
        return 1;
    }
    if (reps > 0) {
        double *t = (double *)malloc(sizeof(double) * (size_t)reps);
        if (!t) return 1;
        for (i = 0; i < reps; i++) {
            double t0;
            atome_init(st);
            t0 = now_ns();
            (void)run(sc, st, n);
            t[i] = now_ns() - t0;
        }
        qsort(t, (size_t)reps, sizeof(double), cmp_d);
        printf("%s time: median %.1f us, min %.1f us over %d calls\n", sc->name, t[reps / 2] / 1e3, t[0] / 1e3, reps);
        free(t);
    }
    free(st);
    free(blob);
    return 0;
}
