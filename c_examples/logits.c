/* logits: blob and token ids in, the V logits out, one per line (%.9g).
 *   logits [--hex] <blob> <id> [id ...]
 * --hex prints each logit's binary32 bit pattern as 8 hex digits instead.
 * Exit status 0 on success, 1 on a bad argument or blob. */
#include <stdint.h>
#include <string.h>
#include "atome.h"
#include "common.h"

static atome_model_t model;
static atome_state_t state;

int main(int argc, char **argv) {
    int hex = 0, i, n = 0, next, rc;
    int *ids;
    size_t len = 0;
    unsigned char *blob;
    const float *logits;
    if (argc > 1 && strcmp(argv[1], "--hex") == 0) {
        hex = 1;
        argv++;
        argc--;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: logits [--hex] <blob> <id> [id ...]\n");
        return 1;
    }
    blob = read_file(argv[1], &len);
    if (!blob) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    rc = atome_load(&model, blob, len);
    if (rc != 0) {
        fprintf(stderr, "atome_load: %d\n", rc);
        free(blob);
        return 1;
    }
    ids = (int *)malloc(sizeof(int) * (size_t)(argc - 2));
    if (!ids) {
        free(blob);
        return 1;
    }
    for (i = 2; i < argc; i++) {
        ids[n++] = atoi(argv[i]);
    }
    next = atome_predict_next(&model, &state, ids, n);
    if (next < 0) {
        fprintf(stderr, "atome_predict_next: %d\n", next);
        free(ids);
        free(blob);
        return 1;
    }
    logits = atome_get_logits(&state);
    for (i = 0; i < ATOME_VOCAB_SIZE; i++) {
        if (hex) {
            uint32_t b;
            memcpy(&b, &logits[i], 4);
            printf("%08x\n", (unsigned)b);
        } else {
            printf("%.9g\n", (double)logits[i]);
        }
    }
    fprintf(stderr, "next %d\n", next);
    free(ids);
    free(blob);
    return 0;
}
