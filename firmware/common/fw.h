/*
 * Tiny platform layer shared by the test firmwares and their host twin.
 *
 * On a board (firmware/common/startup.c + semihost.c) output goes through
 * ARM semihosting (SYS_WRITE0) and fw_exit() ends QEMU with SYS_EXIT_EXTENDED.
 * On the host (firmware/host/host_platform.c) the same calls use stdio, so
 * the runner prints byte-identical text on both sides.
 */
#ifndef ATOME_FW_H
#define ATOME_FW_H

#include <stdint.h>
#include <stddef.h>

void fw_puts(const char *s);          /* buffered text output */
void fw_putc(char c);
void fw_put_hex32(uint32_t v);        /* 8 lowercase hex digits */
void fw_put_int(int32_t v);           /* decimal */
void fw_put_uint(uint32_t v);
void fw_flush(void);
__attribute__((noreturn)) void fw_exit(int code);  /* flushes, never returns */

/* Peak-stack measurement (painted stack). On the host these are no-ops
 * that report 0. Usage:
 *     uintptr_t ref = fw_stack_paint();   // paints everything below the caller
 *     ... call under test ...
 *     uint32_t peak = fw_stack_peak(ref); // bytes below ref that were written
 * fw_stack_overflowed() is true when the lowest word of the stack region was
 * ever written (the stack ran into .bss). */
/* The word the start-up code paints the stack with. */
#define FW_STACK_PAINT 0xC5AC5AC5u
uintptr_t fw_stack_paint(void);
uint32_t fw_stack_peak(uintptr_t ref);
int fw_stack_overflowed(void);
uint32_t fw_stack_size(void);         /* bytes between the stack limit and its top */

/* The report of a generation run (board_main.c, gen_main.c):
 *   <tag> ticks <t> insns_x10_per_tick <k> count <n> stack <bytes>
 *   TOKENS <the generated ids, at most max>
 * then "STACK OVERFLOW" when the stack ran into .bss. Returns the
 * firmware's exit code: 2 on an overflow, 1 when nothing was generated. */
int fw_report_generation(const char *tag, uint32_t ticks, int cnt, const int *out, int max, uint32_t peak);

/* Cycle/instruction counter. On the MPS2 boards this is the CMSDK APB timer
 * 0 at 0x40000000 (25 MHz: under `qemu -icount shift=0` one tick = 40
 * instructions); on the micro:bit the nRF51 TIMER0 at 16 MHz (62.5
 * instructions a tick); FW_TICK_INSNS_X10 gives instructions per tick * 10.
 * On the host both return 0. */
void fw_timer_start(void);
uint32_t fw_timer_ticks(void);        /* ticks since fw_timer_start */
extern const uint32_t fw_tick_insns_x10;

#endif
