/* Predicts the next byte after T[10:42] with the embedded blob and prints
 * the logits the way c_examples/logits.c --hex does (one 8-hex-digit bit
 * pattern a line), then "next <id>", with newlib's printf. */
#include <stdio.h>
#include <string.h>
#include "atome.h"

extern const uint8_t atome_blob[], atome_blob_end[];
static atome_model_t model;
static atome_state_t state;

static const char T[] =
    "Once upon a time, there was a little girl named Lily. She loved to play "
    "outside in the sunshine. One day, she saw a big red ball in the park. She "
    "ran to get it, but a dog took it first.";

int main(void)
{
    int toks[32];
    for (int i = 0; i < 32; i++) toks[i] = (unsigned char)T[10 + i];
    int rc = atome_load(&model, atome_blob, (size_t)(atome_blob_end - atome_blob));
    if (rc != 0) {
        printf("atome_load: %d\n", rc);
        return 1;
    }
    int next = atome_predict_next(&model, &state, toks, 32);
    const float *lg = atome_get_logits(&state);
    for (int i = 0; i < ATOME_VOCAB_SIZE; i++) {
        uint32_t b;
        memcpy(&b, &lg[i], 4);
        printf("%08lx\n", (unsigned long)b);
    }
    printf("next %d\n", next);
    return next < 0;
}
