/*
 * Start-up code for QEMU's RISC-V `virt` machine (qemu-system-riscv32 -M virt
 * -bios none), used to run the riscv32imc / riscv32imac builds of
 * libatome.a (the ISA of the ESP32-C3 / C6 / H2): Reset_Handler sets the
 * stack, copies .data, zeroes .bss, paints the stack and calls main; a trap
 * handler reports mcause/mepc/mtval over semihosting. The "flash" and RAM
 * regions are both in the machine's RAM at 0x80000000 (firmware/ld/riscv-virt.ld).
 *
 * Timer: the instret CSR. Under `qemu -icount shift=0` it counts retired
 * instructions exactly, so one tick = one instruction.
 */
#include "fw.h"

extern uint32_t __data_load__[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_limit__[], __stack_top__[];
extern int main(void);


void fw_c_start(void);
void fw_trap(void);

__attribute__((naked, section(".text.reset"))) void Reset_Handler(void)
{
    __asm__ volatile(
        ".option push\n\t"
        ".option norelax\n\t"
        "la sp, __stack_top__\n\t"
        "la t0, fw_trap_entry\n\t"
        "csrw mtvec, t0\n\t"
        "j fw_c_start\n\t"
        ".balign 4\n"
        "fw_trap_entry:\n\t"
        "la sp, __stack_top__\n\t"
        "j fw_trap\n\t"
        ".option pop\n");
}

static inline uintptr_t current_sp(void)
{
    uintptr_t sp;
    __asm__ volatile("mv %0, sp" : "=r"(sp));
    return sp;
}

__attribute__((noreturn, used)) void fw_c_start(void)
{
    uint32_t *src = __data_load__;
    for (volatile uint32_t *dst = __data_start__; dst < __data_end__;) *dst++ = *src++;
    for (volatile uint32_t *dst = __bss_start__; dst < __bss_end__;) *dst++ = 0;
    uintptr_t lim = current_sp() - 64;
    for (volatile uint32_t *p = __stack_limit__; (uintptr_t)p < lim; p++) *p = FW_STACK_PAINT;
    fw_exit(main());
}

/* Naked: SP at entry is the caller's SP; paints everything below it. */
__attribute__((naked)) uintptr_t fw_stack_paint(void)
{
    __asm__ volatile(
        "mv a0, sp\n\t"
        "la a1, __stack_limit__\n\t"
        "li a2, 0xC5AC5AC5\n"
        "1:\n\t"
        "bgeu a1, a0, 2f\n\t"
        "sw a2, 0(a1)\n\t"
        "addi a1, a1, 4\n\t"
        "j 1b\n"
        "2:\n\t"
        "ret\n");
}

const uint32_t fw_tick_insns_x10 = 10;
static uint32_t t_start;

static inline uint32_t instret(void)
{
    uint32_t v;
    __asm__ volatile("csrr %0, minstret" : "=r"(v));
    return v;
}

void fw_timer_start(void) { t_start = instret(); }
uint32_t fw_timer_ticks(void) { return instret() - t_start; }

__attribute__((noreturn, used)) void fw_trap(void)
{
    uint32_t cause, epc, tval;
    __asm__ volatile("csrr %0, mcause" : "=r"(cause));
    __asm__ volatile("csrr %0, mepc" : "=r"(epc));
    __asm__ volatile("csrr %0, mtval" : "=r"(tval));
    fw_puts("\nFAULT mcause=");
    fw_put_hex32(cause);
    fw_puts(" mepc=");
    fw_put_hex32(epc);
    fw_puts(" mtval=");
    fw_put_hex32(tval);
    fw_puts("\n");
    fw_exit(3);
}
