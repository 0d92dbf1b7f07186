/* State-size test (S1-x86-f32-state and S3-x86-f32-state of
 * BENCHMARKS.md#targets, and the q15 cached state's budgets). With the lean
 * float state:
 *   944K model (D=256 L=8 DH=64 V=256 K=5 TOPK=4) at S=64: sizeof(atome_state_t) <= 160000
 *   default configuration:                               sizeof(atome_state_t) <= 24000
 * With the q15 cached state (ATOME_DTYPE_Q15=1 ATOME_STATE_CACHED=1):
 *   944K model at S=64: <= 365000; at S=32: <= 200000 (an RP2040's 264 KB
 *   with room for the application); default configuration: <= 30000.
 * Compile with the configuration's -D flags and link the matching
 * libatome.a (scripts/state_sizes.sh --check does both). Exits non-zero on a
 * failure or when built for a state or configuration without a limit. */
#include <stdio.h>
#include "atome.h"

#define IS_944K (ATOME_D_MODEL == 256 && ATOME_N_LAYERS == 8 && ATOME_D_HEAD == 64 && \
    ATOME_VOCAB_SIZE == 256 && ATOME_KERNEL_SIZE == 5 && ATOME_TOP_K == 4 && ATOME_MAX_CLASSES == 16)
#define IS_DEFAULT (ATOME_D_MODEL == 64 && ATOME_N_LAYERS == 4 && ATOME_D_HEAD == 16 && ATOME_MAX_SEQ == 32 && \
    ATOME_VOCAB_SIZE == 256 && ATOME_KERNEL_SIZE == 5 && ATOME_TOP_K == 4 && ATOME_MAX_CLASSES == 16)

#if defined(ATOME_STATE_CACHED) && defined(ATOME_DTYPE_Q15)
#define CACHED 3 /* atome_build_config_t.state_cached: 1 cached | 2 q15 */
#if IS_944K && ATOME_MAX_SEQ == 64
#define LIMIT 365000u
#define WHAT "944K model at S=64, q15 cached"
#elif IS_944K && ATOME_MAX_SEQ == 32
#define LIMIT 200000u
#define WHAT "944K model at S=32, q15 cached"
#elif IS_DEFAULT
#define LIMIT 30000u
#define WHAT "default configuration, q15 cached"
#else
#error "sizeof_check.c knows q15 cached limits for the 944K model at S=64 and S=32 and the default configuration only"
#endif
#elif defined(ATOME_STATE_CACHED) || defined(ATOME_DTYPE_Q15)
#error "sizeof_check.c checks the lean float state or the q15 cached state"
#else
#define CACHED 0
#if IS_944K && ATOME_MAX_SEQ == 64
#define LIMIT 160000u
#define WHAT "944K model at S=64, lean"
#elif IS_DEFAULT
#define LIMIT 24000u
#define WHAT "default configuration, lean"
#else
#error "sizeof_check.c knows lean limits for the 944K model at S=64 and the default configuration only"
#endif
#endif

int main(void) {
    atome_build_config_t c;
    unsigned size = (unsigned)sizeof(atome_state_t);
    int failed = 0;
    if (atome_get_build_config(&c) != 0 || c.state_size != size || c.state_cached != CACHED) {
        printf("FAIL %s: library and header disagree (library state_size %u, cached %d)\n", WHAT,
               (unsigned)c.state_size, (int)c.state_cached);
        failed = 1;
    } else if (size > LIMIT) {
        printf("FAIL %s: sizeof(atome_state_t) = %u > %u\n", WHAT, size, LIMIT);
        failed = 1;
    } else {
        printf("PASS %s: sizeof(atome_state_t) = %u <= %u\n", WHAT, size, LIMIT);
    }
    printf("sizeof_check: %d passed, %d failed\n", !failed, failed);
    return failed;
}
