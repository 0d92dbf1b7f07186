/*
 * Generation benchmark firmware (scripts/cortex_bench.sh): scenario S4
 * (BENCHMARKS.md#reference-scenarios), toy configuration (S=64), atome_generate from bytes [90,98)
 * of the text T with max_tokens 64 (56 tokens fit the window), the whole
 * call timed with the board timer under `qemu -icount shift=0`. Prints:
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


int main(void)
{
    int toks[8];
    for (int i = 0; i < 8; i++) toks[i] = (unsigned char)T[90 + i];

    atome_init(&st);
    int rc = atome_load(&model, bench_blob, (size_t)(bench_blob_end - bench_blob));
    if (rc != 0) {
        fw_puts("GEN load failed\n");
        return 1;
    }
    uintptr_t ref = fw_stack_paint();
    fw_timer_start();
    uint32_t t0 = fw_timer_ticks();
    int cnt = atome_generate(&model, &st, toks, 8, gen_out, 64);
    uint32_t t1 = fw_timer_ticks();
    uint32_t peak = fw_stack_peak(ref);

    fw_puts("GEN ticks ");
    fw_put_uint(t1 - t0);
    fw_puts(" insns_x10_per_tick ");
    fw_put_uint(fw_tick_insns_x10);
    fw_puts(" count ");
    fw_put_int(cnt);
    fw_puts(" stack ");
    fw_put_uint(peak);
    fw_puts("\nTOKENS");
    for (int i = 0; i < cnt && i < ATOME_MAX_SEQ; i++) {
        fw_putc(' ');
        fw_put_int(gen_out[i]);
    }
    fw_putc('\n');
    if (fw_stack_overflowed()) {
        fw_puts("STACK OVERFLOW\n");
        return 2;
    }
    return cnt > 0 ? 0 : 1;
}
