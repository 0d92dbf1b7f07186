/*
 * Device differential test of the software float routines
 * (scripts/soft_device_check.sh): softcheck_run (firmware/softcheck)
 * compares, on the core itself, the library's soft-float routines with the
 * platform's float operations, and the q15 device kernels with plain
 * integer loops. Prints one line per check:
 *
 *   SOFTCHECK <check> pairs <n> mismatches <m> [first a <hex> b <hex> got <hex> want <hex>]
 */
#include <stdint.h>
#include "fw.h"

typedef struct {
    uint32_t mismatches, a, b, got, want;
} found_t;

void softcheck_run(uint32_t which, uint32_t seed, uint32_t n, found_t *out);

#ifndef SOFTCHECK_N
#define SOFTCHECK_N 200000u
#endif

int main(void)
{
    static const char *const names[4] = {"matvec-step", "sf-add-sub-mul", "matvec-rows", "q15-kernels"};
    static const uint32_t counts[4] = {SOFTCHECK_N, SOFTCHECK_N, SOFTCHECK_N / 20u, SOFTCHECK_N / 50u};
    uint32_t bad = 0;
    for (uint32_t k = 0; k < 4; k++) {
        found_t f;
        softcheck_run(k, 0x9E3779B9u + k, counts[k], &f);
        fw_puts("SOFTCHECK ");
        fw_puts(names[k]);
        fw_puts(" pairs ");
        fw_put_uint(counts[k]);
        fw_puts(" mismatches ");
        fw_put_uint(f.mismatches);
        if (f.mismatches) {
            fw_puts(" first a ");
            fw_put_hex32(f.a);
            fw_puts(" b ");
            fw_put_hex32(f.b);
            fw_puts(" got ");
            fw_put_hex32(f.got);
            fw_puts(" want ");
            fw_put_hex32(f.want);
        }
        fw_putc('\n');
        bad += f.mismatches;
    }
    fw_flush();
    return bad ? 1 : 0;
}
