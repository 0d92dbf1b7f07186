/* classify: classifier blob and text in, class and logits out.
 *   classify <blob.atomecl> <text>
 * The sensor heads in shared/models use D=32, L=2, DH=8, S=32. */
#include <string.h>
#include "atome.h"
#include "common.h"

static atome_classifier_t clf;
static atome_state_t state;
static int ids[4096];

int main(int argc, char **argv) {
    size_t len = 0;
    unsigned char *blob;
    float logits[ATOME_MAX_CLASSES];
    int n, i, k, rc;
    if (argc != 3) {
        fprintf(stderr, "usage: classify <blob.atomecl> <text>\n");
        return 1;
    }
    blob = read_file(argv[1], &len);
    if (!blob) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    rc = atome_classifier_load(&clf, blob, len);
    if (rc != 0) {
        fprintf(stderr, "atome_classifier_load: %d\n", rc);
        free(blob);
        return 1;
    }
    n = (int)strlen(argv[2]);
    if (n > 4096) {
        n = 4096;
    }
    for (i = 0; i < n; i++) {
        ids[i] = (unsigned char)argv[2][i];
    }
    k = atome_classify(&clf, &state, ids, n, logits);
    if (k < 0) {
        fprintf(stderr, "atome_classify: %d\n", k);
        free(blob);
        return 1;
    }
    printf("class %d of %d\n", k, clf.n_classes);
    for (i = 0; i < clf.n_classes; i++) {
        printf("%d %.9g\n", i, (double)logits[i]);
    }
    free(blob);
    return 0;
}
