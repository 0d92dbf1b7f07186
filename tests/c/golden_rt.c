/* tests/c/golden_runner.c's protocol through the runtime-dimension API, for
 * a library built once with no knobs (tests/golden.py compares its output
 * with the compile-time build of each configuration, bit for bit).
 *   golden_rt V,D,L,DH,K,TOPK,S <flags 0..3>   < calls   > results
 * flags as atome_rt_open's: 0 float lean, 1 float cached (ATOME_RT_CACHED),
 * 2 q15 lean (ATOME_RT_Q15), 3 q15 cached. Every blob is opened with those
 * dimensions (bare blobs) in one static buffer; the handle is reopened per
 * blob. */
#include <stdint.h>
#include <string.h>
#include "atome.h"
#include "common.h"

/* Room for the largest golden configuration in every mode. */
#define F32_BYTES ATOME_RT_WORK_SIZE(256, 256, 8, 64, 5, 4, 128, ATOME_RT_CACHED)
#define Q15_BYTES ATOME_RT_WORK_SIZE(256, 256, 8, 64, 5, 4, 128, ATOME_RT_Q15 | ATOME_RT_CACHED)
#define WORK_BYTES (F32_BYTES > Q15_BYTES ? F32_BYTES : Q15_BYTES)
static uint32_t work[(WORK_BYTES + 3) / 4];
static int ids[4096];
static int outbuf[4096];
static char cur[512];
static unsigned char *blob;
static size_t blob_len;

static void hex(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    printf(" %08x", (unsigned)u);
}

int main(int argc, char **argv) {
    char op[4], path[512];
    int n, i, r, maxt, flags, rc;
    atome_dims_t dims;
    atome_rt_t rt;
    float cl[256];
    memset(&dims, 0, sizeof dims);
    if (argc != 3 || sscanf(argv[1], "%d,%d,%d,%d,%d,%d,%d", &dims.vocab_size, &dims.d_model, &dims.n_layers,
                            &dims.d_head, &dims.kernel_size, &dims.top_k, &dims.max_seq) != 7) {
        fprintf(stderr, "usage: golden_rt V,D,L,DH,K,TOPK,S flags\n");
        return 2;
    }
    flags = atoi(argv[2]);
    if (atome_rt_work_size(&dims, flags) > sizeof work) {
        fprintf(stderr, "buffer too small: %lu\n", (unsigned long)atome_rt_work_size(&dims, flags));
        return 2;
    }
    cur[0] = 0;
    while (scanf("%3s %511s", op, path) == 2) {
        maxt = 0;
        if (op[0] == 'G' && scanf("%d", &maxt) != 1) return 2;
        if (scanf("%d", &n) != 1 || n < 0 || n > 4096) return 2;
        for (i = 0; i < n; i++) {
            if (scanf("%d", &ids[i]) != 1) return 2;
        }
        if (strcmp(cur, path) != 0) {
            free(blob);
            blob = read_file(path, &blob_len);
            if (!blob) return 2;
            strcpy(cur, path);
            rc = atome_rt_open(&rt, blob, blob_len, &dims, flags, work, sizeof work);
            if (rc != 0) {
                fprintf(stderr, "open %s: %d\n", path, rc);
                cur[0] = 0;
                printf("E load\n");
                continue;
            }
        }
        if (op[0] == 'P') {
            const float *lg;
            r = atome_rt_predict_next(&rt, ids, n);
            lg = atome_rt_logits(&rt);
            printf("P %d", r);
            for (i = 0; i < dims.vocab_size; i++) hex(lg[i]);
        } else if (op[0] == 'C') {
            atome_dims_t d;
            atome_rt_dims(&rt, &d);
            r = atome_rt_classify(&rt, ids, n, cl);
            printf("C %d", r);
            for (i = 0; i < d.n_classes && i < 256; i++) hex(cl[i]);
        } else {
            if (maxt > 4096) return 2;
            r = atome_rt_generate(&rt, ids, n, outbuf, maxt);
            printf("G %d", r);
            for (i = 0; i < r; i++) printf(" %d", outbuf[i]);
        }
        printf("\n");
        fflush(stdout);
    }
    free(blob);
    return 0;
}
