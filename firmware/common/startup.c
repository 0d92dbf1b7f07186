/*
 * Start-up code for the QEMU Cortex-M boards used by the tests:
 * vector table, reset handler (FPU enable, .data copy, .bss zeroing, stack
 * painting), fault reporting over semihosting, painted-stack measurement and
 * the instruction timer.
 *
 * Compile with -ffreestanding -fno-tree-loop-distribute-patterns so that the
 * copy loops below are not turned into memcpy/memset calls before .data exists.
 * Board selection: -DFW_BOARD_MPS2 or -DFW_BOARD_MICROBIT.
 */
#include "fw.h"

/* Provided by the linker script (firmware/ld/common.ld). */
extern uint32_t __data_load__[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_limit__[], __stack_top__[];

extern int main(void);


static inline uintptr_t current_sp(void)
{
    uintptr_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

__attribute__((noreturn)) void Reset_Handler(void)
{
#if defined(__ARM_FP)
    /* Hard-float build: grant full access to CP10/CP11 (the FPU) in CPACR
     * before any floating-point instruction runs. */
    *(volatile uint32_t *)0xE000ED88u |= (0xFu << 20);
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    uint32_t *src = __data_load__;
    for (uint32_t *dst = __data_start__; dst < __data_end__;) *dst++ = *src++;
    for (uint32_t *dst = __bss_start__; dst < __bss_end__;) *dst++ = 0;
    /* Paint the whole stack region below the current frame. */
    uintptr_t lim = current_sp() - 64;
    for (uint32_t *p = __stack_limit__; (uintptr_t)p < lim; p++) *p = FW_STACK_PAINT;

    fw_exit(main());
}

/* ---- painted stack --------------------------------------------------- */

/* Naked so that SP at entry is exactly the caller's SP at the call: the
 * returned reference is where the frame of the next call will start. Paints
 * every word from the stack limit up to that SP. Thumb-1 only (runs on v6-M). */
__attribute__((naked)) uintptr_t fw_stack_paint(void)
{
    __asm__ volatile(
        ".syntax unified\n\t"
        "mov r0, sp\n\t"
        "ldr r1, =__stack_limit__\n\t"
        "ldr r2, =0xC5AC5AC5\n\t"
        "1:\n\t"
        "cmp r1, r0\n\t"
        "bhs 2f\n\t"
        "str r2, [r1]\n\t"
        "adds r1, #4\n\t"
        "b 1b\n\t"
        "2:\n\t"
        "bx lr\n\t"
        ".ltorg\n");
}

/* ---- timer ------------------------------------------------------------ */

#if defined(FW_BOARD_MPS2) || defined(FW_BOARD_MPS2_AN505)
#if defined(FW_BOARD_MPS2)
/* CMSDK APB timer 0 (MPS2 AN385/AN386/AN500), PCLK 25 MHz, counts down. */
#define TIMER0_BASE 0x40000000u
const uint32_t fw_tick_insns_x10 = 400;
#else
/* AN505 (Cortex-M33): CMSDK timer 0 at its Secure alias 0x50000000, clocked
 * at the 20 MHz SYSCLK: one tick = 50 instructions under -icount shift=0. */
#define TIMER0_BASE 0x50000000u
const uint32_t fw_tick_insns_x10 = 500;
#endif
#define TIMER0_CTRL   (*(volatile uint32_t *)(TIMER0_BASE + 0u))
#define TIMER0_VALUE  (*(volatile uint32_t *)(TIMER0_BASE + 4u))
#define TIMER0_RELOAD (*(volatile uint32_t *)(TIMER0_BASE + 8u))
void fw_timer_start(void)
{
    TIMER0_CTRL = 0;
    TIMER0_RELOAD = 0xFFFFFFFFu;
    TIMER0_VALUE = 0xFFFFFFFFu;
    TIMER0_CTRL = 1;
}
uint32_t fw_timer_ticks(void) { return 0xFFFFFFFFu - TIMER0_VALUE; }
#elif defined(FW_BOARD_MICROBIT)
/* nRF51 TIMER0, 32-bit, prescaler 0 = 16 MHz: 62.5 instructions a tick
 * under -icount shift=0. */
#define NRF_TIMER0 0x40008000u
#define TIMER_REG(off) (*(volatile uint32_t *)(NRF_TIMER0 + (off)))
const uint32_t fw_tick_insns_x10 = 625;
void fw_timer_start(void)
{
    TIMER_REG(0x004) = 1;      /* TASKS_STOP */
    TIMER_REG(0x504) = 0;      /* MODE = timer */
    TIMER_REG(0x508) = 3;      /* BITMODE = 32 bit */
    TIMER_REG(0x510) = 0;      /* PRESCALER = 0 */
    TIMER_REG(0x00C) = 1;      /* TASKS_CLEAR */
    TIMER_REG(0x000) = 1;      /* TASKS_START */
}
uint32_t fw_timer_ticks(void)
{
    TIMER_REG(0x040) = 1;      /* TASKS_CAPTURE[0] */
    return TIMER_REG(0x540);   /* CC[0] */
}
#else
#error "define FW_BOARD_MPS2 or FW_BOARD_MICROBIT"
#endif

/* ---- faults ------------------------------------------------------------ */

__attribute__((used, noreturn)) void fw_fault_report(uint32_t *frame, uint32_t exc_return)
{
    (void)exc_return;
    fw_puts("\nFAULT pc=");
    fw_put_hex32(frame[6]);
    fw_puts(" lr=");
    fw_put_hex32(frame[5]);
#if !defined(__ARM_ARCH_6M__)
    fw_puts(" cfsr=");
    fw_put_hex32(*(volatile uint32_t *)0xE000ED28u);
    fw_puts(" hfsr=");
    fw_put_hex32(*(volatile uint32_t *)0xE000ED2Cu);
    fw_puts(" bfar=");
    fw_put_hex32(*(volatile uint32_t *)0xE000ED38u);
#endif
    fw_puts("\n");
    fw_exit(3);
}

__attribute__((naked)) void Fault_Handler(void)
{
    __asm__ volatile(
        "mrs r0, msp\n\t"
        "mov r1, lr\n\t"
        "ldr r2, =fw_fault_report\n\t"
        "bx r2\n\t"
        ".ltorg\n");
}

void Default_Handler(void)
{
    fw_puts("\nUNEXPECTED IRQ\n");
    fw_exit(4);
}

typedef void (*vector_t)(void);

__attribute__((section(".isr_vector"), used))
const vector_t fw_vector_table[48] = {
    (vector_t)__stack_top__,
    (vector_t)Reset_Handler,
    Default_Handler,   /* NMI */
    Fault_Handler,     /* HardFault */
    Fault_Handler,     /* MemManage */
    Fault_Handler,     /* BusFault */
    Fault_Handler,     /* UsageFault */
    0, 0, 0, 0,
    Default_Handler,   /* SVCall */
    Default_Handler,   /* DebugMonitor */
    0,
    Default_Handler,   /* PendSV */
    Default_Handler,   /* SysTick */
    /* external interrupts: all unexpected */
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
};
