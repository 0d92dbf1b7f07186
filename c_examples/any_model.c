/* any_model: one build of the library runs any model, in any mode, through
 * the runtime API (atome_rt_*). The memory is one static buffer sized at
 * compile time with ATOME_RT_WORK_SIZE for the largest model this program
 * accepts (the 944K TinyStories model at a 64-token window, in every mode).
 *   any_model [--q15] [--cached] <model> [text] [max_tokens]
 * <model> is an ATOMEF container (dimensions in its header; the CLI's
 * `convert` writes one) or a bare blob followed by its dimensions:
 *   any_model [--q15] [--cached] --dims V,D,L,DH,K,TOPK,S <blob> [text] [max_tokens]
 * --q15 runs the q15 integer mode (ATOME_RT_Q15), --cached the cached plan
 * (ATOME_RT_CACHED); the default is the float lean mode. A language model
 * continues the text; a classifier prints its class. */
#include <string.h>
#include "atome.h"
#include "common.h"

/* Largest: V=256, D=256, L=8, DH=64, K=5, TOP_K=4, S=64, in every mode (the
 * float cached plan needs the most). */
#define MAX_(a, b) ((a) > (b) ? (a) : (b))
#define WORK_BYTES MAX_(MAX_(ATOME_RT_WORK_SIZE(256, 256, 8, 64, 5, 4, 64, 0), \
                             ATOME_RT_WORK_SIZE(256, 256, 8, 64, 5, 4, 64, ATOME_RT_CACHED)), \
                        MAX_(ATOME_RT_WORK_SIZE(256, 256, 8, 64, 5, 4, 64, ATOME_RT_Q15), \
                             ATOME_RT_WORK_SIZE(256, 256, 8, 64, 5, 4, 64, ATOME_RT_Q15 | ATOME_RT_CACHED)))
static uint32_t work[(WORK_BYTES + 3) / 4];
static int ids[4096];
static int out[4096];

/* atome_rt_open's codes (docs/API.md, runtime-dimension API). */
static const char *open_error(int rc) {
    switch (rc) {
    case -1: return "unknown magic, fewer than 7 bytes, or a dimension outside 1..65535";
    case -2: return "truncated";
    case -3: return "more than 15 bytes after the blob";
    case -4: return "an ATOME02 byte above 242";
    case -5: return "--dims disagree with the container header";
    case -6: return "corrupted (CRC)";
    case -7: return "the buffer is too small for these dimensions";
    case -8: return "the container header does not describe its payload";
    case -9: return "dimensions missing: a bare blob needs --dims";
    default: return "unknown code";
    }
}

int main(int argc, char **argv) {
    atome_rt_t rt;
    atome_dims_t dims, *given = NULL;
    const char *path, *text = "Once upon a time";
    unsigned char *blob;
    size_t len = 0;
    int a = 1, n, i, rc, max_tokens = 32, flags = 0;
    memset(&dims, 0, sizeof dims);
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
        if (strcmp(argv[a], "--q15") == 0) {
            flags |= ATOME_RT_Q15;
        } else if (strcmp(argv[a], "--cached") == 0) {
            flags |= ATOME_RT_CACHED;
        } else if (strcmp(argv[a], "--dims") == 0 && a + 1 < argc
                   && sscanf(argv[a + 1], "%d,%d,%d,%d,%d,%d,%d", &dims.vocab_size, &dims.d_model, &dims.n_layers,
                             &dims.d_head, &dims.kernel_size, &dims.top_k, &dims.max_seq) == 7) {
            given = &dims;
            a++;
        } else {
            fprintf(stderr, "%s: unknown option (or --dims without V,D,L,DH,K,TOPK,S)\n", argv[a]);
            return 2;
        }
    }
    if (argc <= a) {
        fprintf(stderr, "usage: any_model [--q15] [--cached] [--dims V,D,L,DH,K,TOPK,S] <model> [text] [max_tokens]\n");
        return 2;
    }
    path = argv[a];
    if (argc > a + 1) text = argv[a + 1];
    if (argc > a + 2) max_tokens = atoi(argv[a + 2]);
    blob = read_file(path, &len);
    if (!blob) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    rc = atome_rt_open(&rt, blob, len, given, flags, work, sizeof work);
    if (rc != 0) {
        fprintf(stderr, "%s: atome_rt_open: %d: %s", path, rc, open_error(rc));
        if (rc == -7 && given)
            fprintf(stderr, " (needs %lu bytes, have %lu)", (unsigned long)atome_rt_work_size(given, flags),
                    (unsigned long)sizeof work);
        fprintf(stderr, "\n");
        free(blob);
        return 1;
    }
    atome_rt_dims(&rt, &dims);
    printf("model: V=%d D=%d L=%d DH=%d K=%d TOPK=%d S=%d classes=%d, %s %s, buffer %lu of %lu bytes\n",
           dims.vocab_size, dims.d_model, dims.n_layers, dims.d_head, dims.kernel_size, dims.top_k,
           dims.max_seq, dims.n_classes, flags & ATOME_RT_Q15 ? "q15" : "f32", flags & ATOME_RT_CACHED ? "cached" : "lean",
           (unsigned long)atome_rt_work_size(&dims, flags), (unsigned long)sizeof work);
    n = (int)strlen(text);
    if (n > 4096) n = 4096;
    for (i = 0; i < n; i++) ids[i] = (unsigned char)text[i];
    if (dims.n_classes > 0) {
        float logits[256];
        int k;
        if (dims.n_classes > 256) {
            free(blob);
            return 1;
        }
        k = atome_rt_classify(&rt, ids, n, logits);
        if (k < 0) {
            fprintf(stderr, "atome_rt_classify: %d\n", k);
            free(blob);
            return 1;
        }
        printf("class %d of %d\n", k, dims.n_classes);
        for (i = 0; i < dims.n_classes; i++) printf("%d %.9g\n", i, (double)logits[i]);
    } else {
        int start = n > dims.max_seq - 1 ? n - (dims.max_seq - 1) : 0; /* leave room to generate */
        int got = atome_rt_generate(&rt, ids + start, n - start, out, max_tokens);
        printf("%s|", text);
        for (i = 0; i < got; i++) putchar(out[i] >= 32 && out[i] < 127 ? out[i] : '?');
        printf("|\n%d tokens\n", got);
    }
    free(blob);
    return 0;
}
