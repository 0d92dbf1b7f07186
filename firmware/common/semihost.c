/*
 * Minimal semihosting (no newlib, no rdimon): SYS_WRITE0 for text and
 * SYS_EXIT_EXTENDED for the exit status, through `bkpt 0xAB` (the Arm
 * M-profile semihosting trap) or the RISC-V slli/ebreak/srai sequence.
 * QEMU must run with -semihosting-config enable=on.
 */
#include "fw.h"

#define SYS_WRITE0         0x04
#define SYS_EXIT           0x18
#define SYS_EXIT_EXTENDED  0x20
#define ADP_Stopped_ApplicationExit 0x20026

#if defined(__riscv)
/* RISC-V semihosting: the ebreak between the two marker shifts, all three
 * uncompressed, in one page (the function is 16-byte aligned). The calling
 * convention already puts op in a0 and arg in a1; the result comes in a0. */
__asm__(
    ".section .text.fw_semihost_trap,\"ax\",@progbits\n"
    ".balign 16\n"
    ".type fw_semihost_trap, @function\n"
    "fw_semihost_trap:\n"
    ".option push\n"
    ".option norvc\n"
    "slli x0, x0, 0x1f\n"
    "ebreak\n"
    "srai x0, x0, 7\n"
    "ret\n"
    ".option pop\n"
    ".size fw_semihost_trap, . - fw_semihost_trap\n");
int fw_semihost_trap(int op, const void *arg);
#define semihost_call fw_semihost_trap
#else
static inline int semihost_call(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}
#endif

#define OUTBUF 192
static char outbuf[OUTBUF + 1];
static unsigned outlen;

void fw_flush(void)
{
    if (outlen) {
        outbuf[outlen] = 0;
        semihost_call(SYS_WRITE0, outbuf);
        outlen = 0;
    }
}

void fw_putc(char c)
{
    if (outlen == OUTBUF) fw_flush();
    outbuf[outlen++] = c;
}

void fw_puts(const char *s)
{
    while (*s) fw_putc(*s++);
}

void fw_put_hex32(uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    for (int sh = 28; sh >= 0; sh -= 4) fw_putc(hex[(v >> sh) & 0xF]);
}

void fw_put_uint(uint32_t v)
{
    char tmp[11];
    int n = 0;
    do { tmp[n++] = (char)('0' + v % 10u); v /= 10u; } while (v);
    while (n) fw_putc(tmp[--n]);
}

void fw_put_int(int32_t v)
{
    if (v < 0) { fw_putc('-'); fw_put_uint((uint32_t)0 - (uint32_t)v); }
    else fw_put_uint((uint32_t)v);
}

void fw_exit(int code)
{
    fw_flush();
    uint32_t block[2] = { ADP_Stopped_ApplicationExit, (uint32_t)code };
    semihost_call(SYS_EXIT_EXTENDED, block);
    /* Fallback for a host without the extended call. */
    semihost_call(SYS_EXIT, (const void *)(uintptr_t)(code == 0 ? ADP_Stopped_ApplicationExit : 0x20023));
    for (;;) { }
}
