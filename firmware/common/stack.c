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
