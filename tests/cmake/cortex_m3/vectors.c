/* Vector table for QEMU mps2-an385: reset goes to newlib's crt0 (_start from
 * rdimon-crt0), which sets up the stack and heap from semihosting
 * HEAPINFO, zeroes .bss, initialises the semihosting file handles and calls
 * main; exit() ends QEMU through semihosting. .data needs no copy here:
 * QEMU loads it straight into RAM from the ELF (a real board would copy it). */
#include <stdint.h>

extern void _start(void);
extern uint32_t __stack_top__[];

static void fault(void)
{
    for (;;) { }
}

typedef void (*vector_t)(void);
__attribute__((section(".isr_vector"), used))
const vector_t vectors[16] = {
    (vector_t)__stack_top__, _start, fault, fault, fault, fault, fault,
    0, 0, 0, 0, fault, fault, 0, fault, fault,
};
