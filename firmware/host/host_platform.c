/*
 * Host twin of the board platform layer (fw.h), printing through stdio in
 * exactly the firmware's format: the parity runner's host build
 * (host/parity_host.c) and tests/c/rt_hostile.c's host run link it.
 * Stack and timer functions report 0 (the comparison ignores '#' lines).
 */
#include <stdio.h>
#include <stdlib.h>
#include "fw.h"

const uint32_t fw_tick_insns_x10 = 0;

void fw_putc(char c) { putchar(c); }
void fw_puts(const char *s) { fputs(s, stdout); }
void fw_put_hex32(uint32_t v) { printf("%08x", (unsigned)v); }
void fw_put_uint(uint32_t v) { printf("%u", (unsigned)v); }
void fw_put_int(int32_t v) { printf("%d", (int)v); }
void fw_flush(void) { fflush(stdout); }
void fw_exit(int code) { fflush(stdout); exit(code); }
uintptr_t fw_stack_paint(void) { return 0; }
uint32_t fw_stack_peak(uintptr_t ref) { (void)ref; return 0; }
int fw_stack_overflowed(void) { return 0; }
uint32_t fw_stack_size(void) { return 0; }
void fw_timer_start(void) { }
uint32_t fw_timer_ticks(void) { return 0; }
