/*
 * Benchmark firmware (scripts/cortex_bench.sh): BENCHMARKS.md#reference-scenarios scenario S3,
 * default configuration, atome_predict_next on bytes [10,42) of the text T,
 * timed with the board timer under `qemu -icount shift=0`, peak stack by
 * stack painting. Prints '#'-free result lines:
 *
 *   BENCH load <rc> id <next> ticks <t> insns_x10_per_tick <k> stack <bytes>
 *   BENCH generate ticks <t> count <n> stack <bytes>
 *   LOGITS <V hex bit patterns>
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
    int toks[32];
    for (int i = 0; i < 32; i++) toks[i] = (unsigned char)T[10 + i];

    atome_init(&st);
    int rc = atome_load(&model, bench_blob, (size_t)(bench_blob_end - bench_blob));

    uintptr_t ref = fw_stack_paint();
    fw_timer_start();
    uint32_t t0 = fw_timer_ticks();
    int id = atome_predict_next(&model, &st, toks, 32);
    uint32_t t1 = fw_timer_ticks();
    uint32_t peak = fw_stack_peak(ref);

    fw_puts("BENCH load ");
    fw_put_int(rc);
    fw_puts(" id ");
    fw_put_int(id);
    fw_puts(" ticks ");
    fw_put_uint(t1 - t0);
    fw_puts(" insns_x10_per_tick ");
    fw_put_uint(fw_tick_insns_x10);
    fw_puts(" stack ");
    fw_put_uint(peak);
    fw_puts("\nLOGITS");
    const float *lg = atome_get_logits(&st);
    for (int i = 0; i < ATOME_VOCAB_SIZE; i++) {
        uint32_t b;
        __builtin_memcpy(&b, &lg[i], 4);
        fw_putc(' ');
        fw_put_hex32(b);
    }
    fw_putc('\n');

    /* Peak stack of the other big entry point (short run: 4 new tokens). */
    ref = fw_stack_paint();
    t0 = fw_timer_ticks();
    int cnt = atome_generate(&model, &st, toks, 28, gen_out, 4);
    t1 = fw_timer_ticks();
    peak = fw_stack_peak(ref);
    fw_puts("BENCH generate ticks ");
    fw_put_uint(t1 - t0);
    fw_puts(" count ");
    fw_put_int(cnt);
    fw_puts(" stack ");
    fw_put_uint(peak);
    fw_putc('\n');
    if (fw_stack_overflowed()) {
        fw_puts("STACK OVERFLOW\n");
        return 2;
    }
    return (rc == 0 && id >= 0) ? 0 : 1;
}
