/*
 * Painted-stack measurement shared by the Arm and RISC-V start-up code
 * (each paints the stack with FW_STACK_PAINT; fw_stack_paint, in assembly,
 * stays with the start-up code of its architecture).
 */
#include "fw.h"

extern uint32_t __stack_limit__[], __stack_top__[];

uint32_t fw_stack_peak(uintptr_t ref)
{
    const uint32_t *p = __stack_limit__;
    while ((uintptr_t)p < ref && *p == FW_STACK_PAINT) p++;
    return (uint32_t)(ref - (uintptr_t)p);
}

int fw_stack_overflowed(void)
{
    return __stack_limit__[0] != FW_STACK_PAINT;
}

uint32_t fw_stack_size(void)
{
    return (uint32_t)((uintptr_t)__stack_top__ - (uintptr_t)__stack_limit__);
}

int fw_report_generation(const char *tag, uint32_t ticks, int cnt, const int *out, int max, uint32_t peak)
{
    fw_puts(tag);
    fw_puts(" ticks ");
    fw_put_uint(ticks);
    fw_puts(" insns_x10_per_tick ");
    fw_put_uint(fw_tick_insns_x10);
    fw_puts(" count ");
    fw_put_int(cnt);
    fw_puts(" stack ");
    fw_put_uint(peak);
    fw_puts("\nTOKENS");
    for (int i = 0; i < cnt && i < max; i++) {
        fw_putc(' ');
        fw_put_int(out[i]);
    }
    fw_putc('\n');
    if (fw_stack_overflowed()) {
        fw_puts("STACK OVERFLOW\n");
        return 2;
    }
    return cnt > 0 ? 0 : 1;
}
