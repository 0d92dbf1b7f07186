/*
 * Generation benchmark firmware (scripts/cortex_bench.sh): by default
 * scenario S4 (BENCHMARKS.md#reference-scenarios), toy configuration (S=64), atome_generate from bytes [90,98)
 * of the text T with max_tokens 64 (56 tokens fit the window), the whole
 * call timed with the board timer under `qemu -icount shift=0`. GEN_FROM,
 * GEN_LEN and GEN_MAX set the prompt's offset and length and max_tokens
 * (the S2-like run of the 944K model: 64, 16, 64). Prints:
 *
 *   GEN ticks <t> insns_x10_per_tick <k> count <n> stack <bytes>
 *   TOKENS <the generated ids>
 */
#include "atome.h"
#include "fw.h"
#include "bench_text.h"

extern const uint8_t bench_blob[];
extern const uint8_t bench_blob_end[];

static atome_state_t st;
static atome_model_t model;
static int gen_out[ATOME_MAX_SEQ];

#ifndef GEN_FROM
#define GEN_FROM 90
#endif
#ifndef GEN_LEN
#define GEN_LEN 8
#endif
#ifndef GEN_MAX
#define GEN_MAX 64
#endif


int main(void)
{
    int toks[GEN_LEN];
    for (int i = 0; i < GEN_LEN; i++) toks[i] = (unsigned char)T[GEN_FROM + i];

    atome_init(&st);
    int rc = atome_load(&model, bench_blob, (size_t)(bench_blob_end - bench_blob));
    if (rc != 0) {
        fw_puts("GEN load failed\n");
        return 1;
    }
    uintptr_t ref = fw_stack_paint();
    fw_timer_start();
    uint32_t t0 = fw_timer_ticks();
    int cnt = atome_generate(&model, &st, toks, GEN_LEN, gen_out, GEN_MAX);
    uint32_t t1 = fw_timer_ticks();
    uint32_t peak = fw_stack_peak(ref);

    return fw_report_generation("GEN", t1 - t0, cnt, gen_out, ATOME_MAX_SEQ, peak);
}
