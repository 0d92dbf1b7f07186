//! The two passes of quant15 over a block of exact int32 sums: the OR of
//! their magnitudes (whose bit length is the largest's), and the rounding
//! shift with saturation to +-32767. In asm on the Thumb-2 cores (SSAT
//! saturates and shifts in one instruction; LLVM's loops took 7 and 14
//! instructions an element, these take 5 and 9), plain loops elsewhere.

/// 2^15 - 1, the activation saturation.
pub const LIM15: i32 = 32767;

/// OR of |v| over `src`.
#[inline(always)]
pub fn or_abs(src: &[i32]) -> u32 {
    #[cfg(atome_thumb2)]
    if src.len() >= 2 {
        let pairs = src.len() / 2;
        let mut mx = 0u32;
        // SAFETY: reads 2 * pairs <= src.len() int32 from src (word
        // aligned: an i32 slice), two a step, pairs >= 1 steps. Only the
        // named registers and the flags change.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldrd {a}, {b}, [{p}], #8",
                "eor {t}, {a}, {a}, asr #31",
                "sub {t}, {t}, {a}, asr #31",
                "orr {mx}, {mx}, {t}",
                "eor {t}, {b}, {b}, asr #31",
                "sub {t}, {t}, {b}, asr #31",
                "orr {mx}, {mx}, {t}",
                "subs {n}, {n}, #1",
                "bne 2b",
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
    src.iter().fold(0, |m, v| m | v.unsigned_abs())
}

/// out[i] = clamp(((src[i] >> n) + 1) >> 1, -32767, 32767) (rshr by n + 1
/// then saturation) over the shorter length (n above 31 counts as 31).
#[inline(always)]
pub fn rshr_sat(src: &[i32], n: u32, out: &mut [i16]) {
    #[cfg(atome_thumb2)]
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
    let n = n.min(31);
    for (o, &v) in out.iter_mut().zip(src) {
        *o = (((v >> n) + 1) >> 1).clamp(-LIM15, LIM15) as i16;
    }
}
