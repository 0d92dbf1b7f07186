//! The two passes of quant15 over a block of exact int32 sums: the OR of
//! their magnitudes (whose bit length is the largest's), and the rounding
//! shift with saturation to +-32767. In asm on the Thumb-2 cores (SSAT
//! saturates and shifts in one instruction; LLVM's loops took 7 and 14
//! instructions an element, these take 5 and 9; the shift 6.5 on
//! Armv7E-M, two elements a word by its DSP instructions), in asm on
//! ARMv6-M too, plain loops elsewhere. Then the quantization itself ([`quant_into`]).
use crate::q15::arith::{qexp, qshift, QA};

/// 2^15 - 1, the activation saturation.
pub const LIM15: i32 = 32767;

/// One pair of [`or_abs`]'s Thumb-2 loop (no instruction here sets the
/// flags).
#[cfg(all(atome_thumb2, not(atome_small)))]
macro_rules! or_pair {
    () => {
        concat!(
            "ldrd {a}, {b}, [{p}], #8\n",
            "eor {t}, {a}, {a}, asr #31\n",
            "sub {t}, {t}, {a}, asr #31\n",
            "orr {mx}, {mx}, {t}\n",
            "eor {t}, {b}, {b}, asr #31\n",
            "sub {t}, {t}, {b}, asr #31\n",
            "orr {mx}, {mx}, {t}\n",
        )
    };
}

/// OR of |v| over `src`.
#[cfg_attr(not(atome_small), inline(always))]
pub fn or_abs(src: &[i32]) -> u32 {
    #[cfg(all(atome_thumb2, not(atome_small)))]
    if src.len() >= 2 {
        let pairs = src.len() / 2;
        let mut mx = 0u32;
        // SAFETY: reads 2 * pairs <= src.len() int32 from src (word
        // aligned: an i32 slice), two a step, pairs >= 1 steps. Only the
        // named registers and the flags change.
        unsafe {
            core::arch::asm!(
                // (No instruction of a pair sets N, Z or C.)
                odd_then_pairs!("n", or_pair()),
                p = inout(reg) src.as_ptr() => _,
                n = inout(reg) pairs => _,
                mx = inout(reg) mx,
                a = out(reg) _,
                b = out(reg) _,
                t = out(reg) _,
                options(readonly, nostack),
            );
        }
        return src.get(2 * pairs..).unwrap_or(&[]).iter().fold(mx, |m, v| m | v.unsigned_abs());
    }
    #[cfg(all(atome_armv6m, not(atome_small)))]
    if src.len() >= 4 {
        // ARMv6-M: four elements a step (LLVM's loop: 7 instructions an
        // element with its loop test; 5.5 here).
        let quads = src.len() / 4;
        let mut mx = 0u32;
        // SAFETY: reads 4 * quads <= src.len() int32 from src (word
        // aligned: an i32 slice), quads >= 1 steps. Only the named
        // registers and the flags change; no stack use.
        unsafe {
            core::arch::asm!(
                "2:",
                ".rept 4",
                "ldmia {p}!, {{{a}}}",
                "asrs {t}, {a}, #31",
                "eors {a}, {t}",
                "subs {a}, {a}, {t}",
                "orrs {mx}, {a}",
                ".endr",
                "subs {n}, #1",
                "bne 2b",
                p = inout(reg) src.as_ptr() => _,
                n = inout(reg) quads => _,
                mx = inout(reg) mx,
                a = out(reg) _,
                t = out(reg) _,
                options(readonly, nostack),
            );
        }
        return src.get(4 * quads..).unwrap_or(&[]).iter().fold(mx, |m, v| m | v.unsigned_abs());
    }
    src.iter().fold(0, |m, v| m | v.unsigned_abs())
}

/// The end of a pair of [`rshr_sat`]'s Armv7E-M loops: the two saturated
/// int16 in `{a}` and `{b}` packed, -32768 raised to -32767 in both
/// halves (`{lim}` = 0x80018001), one word stored (no flag but GE set).
#[cfg(all(atome_dsp, not(atome_small)))]
macro_rules! pack_store {
    () => {
        concat!(
            "pkhbt {a}, {a}, {b}, lsl #16\n",
            "ssub16 {b}, {a}, {lim}\n",
            "sel {a}, {a}, {lim}\n",
            "str {a}, [{o}], #4\n",
        )
    };
}

/// One pair of [`rshr_sat`]'s Armv7E-M loop for shifts of 1 or more: rshr
/// by SMMULR, SSAT, then [`pack_store`] (no instruction here sets N, Z or
/// C).
#[cfg(all(atome_dsp, not(atome_small)))]
macro_rules! rshr_pair {
    () => {
        concat!(
            "ldrd {a}, {b}, [{p}], #8\n",
            "smmulr {a}, {a}, {m}\n",
            "smmulr {b}, {b}, {m}\n",
            "ssat {a}, #16, {a}\n",
            "ssat {b}, #16, {b}\n",
            pack_store!(),
        )
    };
}

/// out[i] = clamp(((src[i] >> n) + 1) >> 1, -32767, 32767) (rshr by n + 1
/// then saturation) over the shorter length (n above 31 counts as 31).
#[cfg_attr(not(atome_small), inline(always))]
pub fn rshr_sat(src: &[i32], n: u32, out: &mut [i16]) {
    #[cfg(all(atome_dsp, not(atome_small)))]
    if let len @ 2.. = src.len().min(out.len()) {
        // Armv7E-M: two elements a step, each shifted, rounded and
        // saturated to [-32768, 32767] by SSAT, packed by PKHBT, then both
        // -32768 up to -32767 at once (SSUB16 against -32767 sets the GE
        // flags of the halves at or above it, SEL keeps those) and one
        // word stored: 6.5 instructions an element against 8.5.
        let pairs = len / 2;
        let n = n.min(31);
        // (Both loops below read 2 * pairs <= len int32 from src (word
        // aligned: an i32 slice, as LDRD needs) and write as many int16 to
        // out as pairs words (Armv7E-M allows unaligned STR to normal
        // memory), both at least len long; pairs >= 1 steps. Only the
        // named registers and the flags (GE included) change.)
        if n >= 1 {
            // rshr by n + 1 = SMMULR by 2^(31 - n) (floor((v 2^(31-n) +
            // 2^31) / 2^32), any int32 v): one instruction where the
            // shift, the add and SSAT's shift take two (5 instructions an
            // element, two pairs a step).
            // SAFETY: as said above.
            unsafe {
                core::arch::asm!(
                    // (No instruction of a pair sets N, Z or C.)
                    odd_then_pairs!("c", rshr_pair()),
                    p = inout(reg) src.as_ptr() => _,
                    o = inout(reg) out.as_mut_ptr() => _,
                    c = inout(reg) pairs => _,
                    m = in(reg) 1u32 << (31 - n),
                    lim = in(reg) 0x8001_8001u32,
                    a = out(reg) _,
                    b = out(reg) _,
                    options(nostack),
                );
            }
        } else {
            // SAFETY: as said above.
            unsafe {
                core::arch::asm!(
                    "2:",
                    "ldrd {a}, {b}, [{p}], #8",
                    "asr {a}, {a}, {n}",
                    "asr {b}, {b}, {n}",
                    "add {a}, {a}, #1",
                    "add {b}, {b}, #1",
                    "ssat {a}, #16, {a}, asr #1",
                    "ssat {b}, #16, {b}, asr #1",
                    pack_store!(),
                    "subs {c}, {c}, #1",
                    "bne 2b",
                    p = inout(reg) src.as_ptr() => _,
                    o = inout(reg) out.as_mut_ptr() => _,
                    c = inout(reg) pairs => _,
                    n = in(reg) n,
                    lim = in(reg) 0x8001_8001u32,
                    a = out(reg) _,
                    b = out(reg) _,
                    options(nostack),
                );
            }
        }
        // The odd element.
        if let (Some(&v), Some(o)) = (src.get(2 * pairs), out.get_mut(2 * pairs)) {
            *o = (((v >> n) + 1) >> 1).clamp(-LIM15, LIM15) as i16;
        }
        return;
    }
    #[cfg(all(atome_thumb2, not(atome_small)))]
    if let len @ 1.. = src.len().min(out.len()) {
        // One element: the rounding shift, saturated to [-32768, 32767] by
        // SSAT, then -32768 up to -32767.
        macro_rules! sat_step {
            () => {
                concat!(
                    "ldr {v}, [{p}], #4\n",
                    "asr {v}, {v}, {n}\n",
                    "add {v}, {v}, #1\n",
                    "ssat {v}, #16, {v}, asr #1\n",
                    "cmn {v}, #32768\n",
                    "it eq\n",
                    "addeq {v}, {v}, #1\n",
                    "strh {v}, [{o}], #2\n",
                )
            };
        }
        // SAFETY: reads len int32 from src and writes len int16 to out
        // (both at least len long): len % 2 elements, then len / 2 steps
        // of two. Only the named registers and the flags change.
        unsafe {
            core::arch::asm!(
                // An odd element first, then two a step.
                "lsrs {c}, {c}, #1",
                "bcc 3f",
                sat_step!(),
                "3:",
                "cmp {c}, #0",
                "beq 4f",
                "2:",
                sat_step!(),
                sat_step!(),
                "subs {c}, {c}, #1",
                "bne 2b",
                "4:",
                p = inout(reg) src.as_ptr() => _,
                o = inout(reg) out.as_mut_ptr() => _,
                c = inout(reg) len => _,
                n = in(reg) n.min(31),
                v = out(reg) _,
                options(nostack),
            );
        }
        return;
    }
    #[cfg(all(atome_armv6m, not(atome_small)))]
    if let len @ 2.. = src.len().min(out.len()) {
        // ARMv6-M: two elements a step, the bounds in registers (LLVM's
        // loop reloads them from the literal pool every element: 17
        // instructions an element against about 10 here).
        let pairs = len / 2;
        // SAFETY: reads 2 * pairs <= len int32 from src (word aligned: an
        // i32 slice) and writes as many int16 to out (halfword aligned: an
        // i16 slice), both at least len long; pairs >= 1 steps, stopping
        // when the src pointer reaches its end. Only the named registers
        // and the flags change; no stack use.
        unsafe {
            core::arch::asm!(
                // The end to a high register (Thumb-1 takes those only as
                // clobbers); CMP reads it.
                "mov r8, r2",
                "2:",
                ".irp k, 0, 2",
                "ldmia r0!, {{r2}}",
                "asrs r2, r3",
                "adds r2, #1",
                "asrs r2, r2, #1",
                "cmp r2, r4",
                "ble 5f",
                "mov r2, r4",
                "5:",
                "cmp r2, r5",
                "bge 6f",
                "mov r2, r5",
                "6:",
                "strh r2, [r1, #\\k]",
                ".endr",
                "adds r1, #4",
                "cmp r0, r8",
                "bne 2b",
                inout("r0") src.as_ptr() => _,
                inout("r1") out.as_mut_ptr() => _,
                inout("r2") src.as_ptr().wrapping_add(2 * pairs) => _,
                in("r3") n.min(31),
                in("r4") LIM15,
                in("r5") -LIM15,
                out("r8") _,
                options(nostack),
            );
        }
        if let (Some(&v), Some(o)) = (src.get(2 * pairs), out.get_mut(2 * pairs)) {
            if len % 2 == 1 {
                *o = (((v >> n.min(31)) + 1) >> 1).clamp(-LIM15, LIM15) as i16;
            }
        }
        return;
    }
    let n = n.min(31);
    for (o, &v) in out.iter_mut().zip(src) {
        *o = (((v >> n) + 1) >> 1).clamp(-LIM15, LIM15) as i16;
    }
}

kernel!(
    /// [`quant_into_impl`] through the build's dispatch.
    quant_into = quant_into_impl(src: &[i32], e: i32, out: &mut [i16]) -> i32);

/// quant15 of exact integers `src` at exponent e into `out`; the exponent.
///
/// (Here and below a quantization needs only bitlen(max |v|), which the
/// bitwise OR of the magnitudes has too: the first passes OR them, two
/// instructions where a 64-bit max takes five.)
pub(crate) fn quant_into_impl(src: &[i32], e: i32, out: &mut [i16]) -> i32 {
    let mx = or_abs(src);
    quant_into_mx(src, mx, e, out)
}

/// [`quant_into_impl`] with the OR of the magnitudes known.
#[cfg_attr(not(atome_small), inline(always))]
pub(crate) fn quant_into_mx(src: &[i32], mx: u32, e: i32, out: &mut [i16]) -> i32 {
    let s = qshift(u64::from(mx), QA);
    quant_at(src, s, out);
    qexp(u64::from(mx), e, QA)
}

/// The mantissas of quant15 at shift s = bitlen(max |src|) - 15 into `out`.
#[cfg_attr(not(atome_small), inline(always))]
pub(crate) fn quant_at(src: &[i32], s: i32, out: &mut [i16]) {
    // Every rshr32 result is within +-2^15 (int32 work). One loop per
    // case, the shift's branches out of the loop.
    if s >= 1 {
        // (s <= 17: |v| < 2^32.)
        rshr_sat(src, (s - 1) as u32, out);
    } else {
        // mx < 2^(15 + s): the left shift is exact and within +-32767.
        let n = (-s).min(31) as u32;
        for (o, &v) in out.iter_mut().zip(src) {
            *o = (v << n) as i16;
        }
    }
}
