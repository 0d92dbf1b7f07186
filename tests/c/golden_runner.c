/* Reads calls from stdin, one per line, runs them through the C API and
 * prints one result line each (bit patterns in hex). Used by tests/golden.py.
 *   P <blob> <n> <ids...>              -> "P <next> <hex logits...>"
 *   C <blob> <n> <ids...>              -> "C <class> <hex logits...>"
 *   G <blob> <max> <n> <ids...>        -> "G <count> <tokens...>"
 * Blobs are loaded once per distinct path (up to 16). */
#include <stdint.h>
#include <string.h>
#include "atome.h"
#include "common.h"

static atome_model_t models[16];
static atome_classifier_t clfs[16];
static char paths[16][512];
static int nblobs;
static atome_state_t state;
static int ids[4096];
static int outbuf[4096];

static int find(const char *path, int clf) {
    int i, rc;
    size_t len = 0;
    unsigned char *b;
    for (i = 0; i < nblobs; i++) {
        if (strcmp(paths[i], path) == 0) {
            return i;
        }
    }
    if (nblobs == 16 || strlen(path) >= sizeof paths[0]) {
        return -1;
    }
    b = read_file(path, &len);
    if (!b) {
        return -1;
    }
    rc = clf ? atome_classifier_load(&clfs[nblobs], b, len) : atome_load(&models[nblobs], b, len);
    if (rc != 0) {
        fprintf(stderr, "load %s: %d\n", path, rc);
        return -1;
    }
    strcpy(paths[nblobs], path);
    return nblobs++;
}

static void hex(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    printf(" %08x", (unsigned)u);
}

int main(void) {
    char op[4], path[512];
    int n, i, m, r, maxt;
    float cl[ATOME_MAX_CLASSES];
    while (scanf("%3s %511s", op, path) == 2) {
        maxt = 0;
        if (op[0] == 'G' && scanf("%d", &maxt) != 1) {
            return 2;
        }
        if (scanf("%d", &n) != 1 || n < 0 || n > 4096) {
            return 2;
        }
        for (i = 0; i < n; i++) {
            if (scanf("%d", &ids[i]) != 1) {
                return 2;
            }
        }
        m = find(path, op[0] == 'C');
        if (m < 0) {
            printf("E load\n");
            continue;
        }
        if (op[0] == 'P') {
            const float *lg;
            r = atome_predict_next(&models[m], &state, ids, n);
            lg = atome_get_logits(&state);
            printf("P %d", r);
            for (i = 0; i < ATOME_VOCAB_SIZE; i++) {
                hex(lg[i]);
            }
        } else if (op[0] == 'C') {
            r = atome_classify(&clfs[m], &state, ids, n, cl);
            printf("C %d", r);
            for (i = 0; i < clfs[m].n_classes; i++) {
                hex(cl[i]);
            }
        } else {
            if (maxt > 4096) {
                return 2;
            }
            r = atome_generate(&models[m], &state, ids, n, outbuf, maxt);
            printf("G %d", r);
            for (i = 0; i < r; i++) {
                printf(" %d", outbuf[i]);
            }
        }
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
