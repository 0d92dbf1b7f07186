/*
 * q15 matvec kernel benchmark (scripts/q15_kernel_bench.sh): times
 * q15mv_run (atome::kernels::q15::matvec::matvec_q behind a C symbol, see
 * firmware/q15mv) on the matrix shapes of S3 (default configuration, D=64,
 * DH=16, V=256, 32 positions) with the board timer under
 * `qemu -icount shift=0`. Prints one line per shape:
 *
 *   Q15MV packing <p> rows <r> cols <c> n <n> ticks <t> insns_x10_per_tick <k> check <sum>
 */
#include <stddef.h>
#include <stdint.h>
#include "fw.h"

void q15mv_run(uint32_t packing, const uint8_t *data, size_t dlen, size_t rows, size_t cols,
               const int16_t *xs, size_t xlen, size_t n, int32_t *out, size_t olen);

#define MAXW (256 * 64 * 3 / 8 + 8)
static uint32_t rnd(void);
static uint8_t wdata[MAXW];
static int16_t xs[32 * 64];
static int32_t out[32 * 256];
static uint32_t seed = 12345u;
void q15mv_multi4(const uint8_t *data, const size_t *r, size_t cols, const int16_t *xs, size_t n, int32_t *out);

static void fill_trit2(size_t dlen)
{
    for (size_t i = 0; i < dlen; i++) {
        uint32_t r = rnd();
        uint8_t b = 0;
        for (int k = 0; k < 4; k++) b |= (uint8_t)(((r >> (3 * k)) % 3 == 0 ? 0u : (r >> (3 * k)) % 3 == 1 ? 1u : 3u) << (2 * k));
        wdata[i] = b;
    }
}

/* One block's four projections in one call (Wq, Wk, Wv, router: 99 rows sharing the tables). */
static void bench_multi(void)
{
    static const size_t r[4] = {16, 16, 64, 3};
    size_t cols = 64, n = 32, tot = 99;
    fill_trit2(tot * cols / 4);
    for (size_t i = 0; i < n * cols; i++) xs[i] = (int16_t)((int32_t)(rnd() % 65535u) - 32767);
    fw_timer_start();
    uint32_t t0 = fw_timer_ticks();
    q15mv_multi4(wdata, r, cols, xs, n, out);
    uint32_t t1 = fw_timer_ticks();
    uint32_t check = 0;
    for (size_t i = 0; i < n * tot; i++) check = check * 31u + (uint32_t)out[i];
    fw_puts("Q15MV packing multi rows 99 cols 64 n 32 ticks ");
    fw_put_uint(t1 - t0);
    fw_puts(" insns_x10_per_tick ");
    fw_put_uint(fw_tick_insns_x10);
    fw_puts(" check ");
    fw_put_hex32(check);
    fw_putc('\n');
}

static uint32_t rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}

static void bench(uint32_t packing, size_t rows, size_t cols, size_t n)
{
    size_t w = rows * cols, dlen;
    if (packing == 0) dlen = (w + 3) / 4;
    else if (packing == 1) dlen = (w + 4) / 5;
    else dlen = 3 * ((w + 7) / 8);
    for (size_t i = 0; i < dlen; i++) {
        uint32_t r = rnd();
        /* Trit2: never the unused code 10; Base3: bytes <= 242 */
        if (packing == 0) {
            uint8_t b = 0;
            for (int k = 0; k < 4; k++) b |= (uint8_t)(((r >> (3 * k)) % 3 == 0 ? 0u : (r >> (3 * k)) % 3 == 1 ? 1u : 3u) << (2 * k));
            wdata[i] = b;
        } else if (packing == 1) {
            wdata[i] = (uint8_t)(r % 243);
        } else {
            wdata[i] = (uint8_t)r;
        }
    }
    for (size_t i = 0; i < n * cols; i++) xs[i] = (int16_t)((int32_t)(rnd() % 65535u) - 32767);
    fw_timer_start();
    uint32_t t0 = fw_timer_ticks();
    q15mv_run(packing, wdata, dlen, rows, cols, xs, n * cols, n, out, n * rows);
    uint32_t t1 = fw_timer_ticks();
    uint32_t check = 0;
    for (size_t i = 0; i < n * rows; i++) check = check * 31u + (uint32_t)out[i];
    fw_puts("Q15MV packing ");
    fw_put_uint(packing);
    fw_puts(" rows ");
    fw_put_uint((uint32_t)rows);
    fw_puts(" cols ");
    fw_put_uint((uint32_t)cols);
    fw_puts(" n ");
    fw_put_uint((uint32_t)n);
    fw_puts(" ticks ");
    fw_put_uint(t1 - t0);
    fw_puts(" insns_x10_per_tick ");
    fw_put_uint(fw_tick_insns_x10);
    fw_puts(" check ");
    fw_put_hex32(check);
    fw_putc('\n');
}

int main(void)
{
    /* S3's matvec calls per layer (Wq, Wk: 16 x 64; Wv: 64 x 64; router: 3 x 64; 32 positions), the head (256 x 64, one position) */
    bench(0, 16, 64, 32);
    bench(0, 64, 64, 32);
    bench(0, 3, 64, 32);
    bench(0, 256, 64, 1);
    bench_multi();
    /* Odd byte counts per row (the SMLAD loop's single-byte tail): exactness only, through the checksums */
    bench(0, 16, 36, 3);
    bench(0, 9, 4, 5);
    bench(0, 8, 28, 2);
    bench(1, 64, 64, 32);
    bench(2, 64, 64, 32);
    return 0;
}
