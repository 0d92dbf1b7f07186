/* generate: prompt text in, continuation out, tokens per second printed.
 *   generate [--model <blob>] [--max N] [prompt text]
 * Without --model it runs a deterministic random-weight model that it builds
 * in memory for the configuration it was compiled with (a smoke test of the
 * whole engine, not a language model: expect gibberish). For real text use
 * the 944K TinyStories blob with the library and this file built for
 * ATOME_D_MODEL=256 ATOME_N_LAYERS=8 ATOME_D_HEAD=64 ATOME_MAX_SEQ=64. */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "atome.h"
#include "common.h"

static atome_model_t model;
static atome_state_t state;
static int prompt[ATOME_MAX_SEQ];
static int out[ATOME_MAX_SEQ];

/* Ternary record: scale, then 2-bit codes (00 0, 01 +1, 11 -1). */
static size_t put_ternary(unsigned char *p, size_t n, uint32_t *rng, float scale) {
    size_t i;
    memcpy(p, &scale, 4);
    for (i = 0; i < (n + 3) / 4; i++) {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 17;
        *rng ^= *rng << 5;
        p[4 + i] = (unsigned char)(*rng & 0xDD); /* codes 00, 01, 11 only */
    }
    return 4 + (n + 3) / 4;
}

static size_t put_floats(unsigned char *p, size_t n, float base, float step) {
    size_t i;
    for (i = 0; i < n; i++) {
        float f = base + step * (float)(i % 7);
        memcpy(p + 4 * i, &f, 4);
    }
    return 4 * n;
}

/* Builds an ATOME01 blob for this configuration; returns its length. */
static size_t builtin_model(unsigned char *p) {
    const size_t V = ATOME_VOCAB_SIZE, D = ATOME_D_MODEL, DH = ATOME_D_HEAD, K = ATOME_KERNEL_SIZE;
    uint32_t rng = 0x2545F491u;
    size_t o = 7, l;
    memcpy(p, "ATOME01", 7);
    o += put_ternary(p + o, V * D, &rng, 0.5f);
    for (l = 0; l < ATOME_N_LAYERS; l++) {
        o += put_floats(p + o, D, 1.0f, 0.05f);
        o += put_floats(p + o, D, -0.05f, 0.02f);
        o += put_ternary(p + o, D * K, &rng, 0.3f);
        o += put_floats(p + o, D, 0.5f, 0.1f);
        o += put_floats(p + o, D, 0.4f, -0.1f);
        o += put_floats(p + o, D, 0.3f, 0.05f);
        o += put_ternary(p + o, DH * D, &rng, 0.1f);
        o += put_ternary(p + o, DH * D, &rng, 0.1f);
        o += put_ternary(p + o, D * D, &rng, 0.08f);
        o += put_ternary(p + o, 3 * D, &rng, 0.2f);
    }
    o += put_floats(p + o, D, 1.0f, 0.0f);
    o += put_floats(p + o, D, 0.0f, 0.0f);
    o += put_ternary(p + o, V * D, &rng, 0.2f);
    return o;
}

#define BUILTIN_MAX (7 + 2 * (4 + (ATOME_VOCAB_SIZE * ATOME_D_MODEL + 3) / 4) + 8 * ATOME_D_MODEL + \
    ATOME_N_LAYERS * (20 * ATOME_D_MODEL + 5 * 4 + (ATOME_D_MODEL * ATOME_KERNEL_SIZE + 3) / 4 + \
    2 * ((ATOME_D_HEAD * ATOME_D_MODEL + 3) / 4) + (ATOME_D_MODEL * ATOME_D_MODEL + 3) / 4 + (3 * ATOME_D_MODEL + 3) / 4))
static unsigned char builtin[BUILTIN_MAX];

int main(int argc, char **argv) {
    const char *path = NULL, *text = "Once upon a time";
    int max = ATOME_MAX_SEQ, i, n, count, rc;
    size_t len = 0;
    unsigned char *blob;
    clock_t t0, t1;
    double secs;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            path = argv[++i];
        } else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc) {
            max = atoi(argv[++i]);
        } else {
            text = argv[i];
        }
    }
    if (path) {
        blob = read_file(path, &len);
        if (!blob) {
            fprintf(stderr, "cannot read %s\n", path);
            return 1;
        }
    } else {
        blob = builtin;
        len = builtin_model(builtin);
        printf("[no --model given: built-in deterministic random model, %lu bytes]\n", (unsigned long)len);
    }
    rc = atome_load(&model, blob, len);
    if (rc != 0) {
        fprintf(stderr, "atome_load: %d (a blob built for another ATOME_* configuration?)\n", rc);
        return 1;
    }
    n = (int)strlen(text);
    if (n > ATOME_MAX_SEQ - 1) {
        n = ATOME_MAX_SEQ - 1;
    }
    if (n < 1) {
        fprintf(stderr, "empty prompt\n");
        return 1;
    }
    for (i = 0; i < n; i++) {
        prompt[i] = (unsigned char)text[i];
    }
    if (max > ATOME_MAX_SEQ) {
        max = ATOME_MAX_SEQ;
    }
    t0 = clock();
    count = atome_generate(&model, &state, prompt, n, out, max);
    t1 = clock();
    secs = (double)(t1 - t0) / CLOCKS_PER_SEC;
    printf("%.*s|", n, text);
    for (i = 0; i < count; i++) {
        int c = out[i];
        putchar(c >= 32 && c < 127 ? c : (c == '\n' ? '\n' : '?'));
    }
    printf("|\n%d tokens in %.3f s (%.1f tokens/s), state %lu bytes\n", count, secs,
           secs > 0 ? count / secs : 0.0, (unsigned long)ATOME_STATE_SIZE);
    return count > 0 ? 0 : 1;
}
