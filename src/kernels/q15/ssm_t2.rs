//! The SSM step's sums on Armv7-M and later (`SMULL`), in the usual cases
//! of a decay shift of 30, 31 or 32 (s1 = 30 when the decay term is the
//! larger, up to 32 when the input term is):
//! W_c = rshr(T_c hs_c, s1) + rshr(b_c h_c, s2) into hs, each rounding
//! as (v + 2^(s-1)) >> s on the 64-bit product (the result fits 32 bits:
//! docs/Q15.md#ssm-state-pathway), 23 instructions an element where
//! LLVM's loop spills to 32 (33 for shifts other than 30).

/// The loop of [`ssm_sums_s`] for a decay shift of `s1` (its rounding
/// addend `rnd` = 2^(s1-1) and the high word's shift `ls` = 32 - s1 as
/// literals: immediates keep two registers free).
#[cfg(all(atome_thumb2, not(atome_dsp), not(atome_small)))]
macro_rules! ssm_loop {
    ($s1:literal, $rnd:literal, $ls:literal, $t:ident, $b:ident, $hp:ident, $h:ident, $n:ident, $s2:ident, $mx:ident) => {
        core::arch::asm!(
            "2:",
            "ldr {a}, [{tp}], #4",
            "ldr {x}, [{hp}]",
            "smull {lo}, {hi}, {a}, {x}",
            concat!("adds {lo}, {lo}, #", $rnd),
            "adc {hi}, {hi}, #0",
            concat!("lsr {lo}, {lo}, #", $s1),
            concat!("orr {lo}, {lo}, {hi}, lsl #", $ls),
            "ldr {a}, [{bp}], #4",
            "ldrsh {x}, [{xp}], #2",
            "smull {a}, {x}, {a}, {x}",
            "adds {a}, {a}, {rnd}",
            "adc {x}, {x}, #0",
            "lsr {a}, {a}, {s2}",
            "rsb {hi}, {s2}, #32",
            "lsl {x}, {x}, {hi}",
            "orr {a}, {a}, {x}",
            "add {lo}, {lo}, {a}",
            "str {lo}, [{hp}], #4",
            "eor {a}, {lo}, {lo}, asr #31",
            "sub {a}, {a}, {lo}, asr #31",
            "orr {mx}, {mx}, {a}",
            "cmp {hp}, {end}",
            "bne 2b",
            tp = inout(reg) $t => _,
            bp = inout(reg) $b => _,
            hp = inout(reg) $hp => _,
            xp = inout(reg) $h.as_ptr() => _,
            end = in(reg) $hp.wrapping_add($n),
            rnd = in(reg) 1u32 << ($s2 - 1),
            s2 = in(reg) $s2,
            mx = inout(reg) $mx,
            a = out(reg) _,
            x = out(reg) _,
            lo = out(reg) _,
            hi = out(reg) _,
            options(nostack),
        )
    };
}

/// One element of [`ssm_loop_dsp`] (no instruction here sets N, Z or C).
#[cfg(all(atome_dsp, not(atome_small)))]
macro_rules! ssm_elem_dsp {
    ($s1:literal) => {
        concat!(
            "ldr {a}, [{tp}], #4\n",
            "ldr {x}, [{hp}]\n",
            ".if ", $s1, " == 30\n",
            "qadd {a}, {a}, {a}\n",
            ".endif\n",
            ".if ", $s1, " <= 31\n",
            "lsl {x}, {x}, #1\n",
            ".endif\n",
            "smmulr {p}, {a}, {x}\n",
            "ldr {a}, [{bp}], #4\n",
            "ldrsh {x}, [{xp}], #2\n",
            "lsl {a}, {a}, {k1}\n",
            "lsl {x}, {x}, {k2}\n",
            "smmulr {a}, {a}, {x}\n",
            "add {p}, {p}, {a}\n",
            "str {p}, [{hp}], #4\n",
            "eor {a}, {p}, {p}, asr #31\n",
            "sub {a}, {a}, {p}, asr #31\n",
            "orr {mx}, {mx}, {a}\n",
        )
    };
}

/// [`ssm_loop`] on Armv7E-M (M4, M7), where `SMMULR` gives
/// floor((A B + 2^31) / 2^32), the rounding shift by 32 of a product, in
/// one instruction: rshr(T hs, s1) = SMMULR(T 2^(32-s1-u), hs 2^u) and
/// rshr(b h, s2) = SMMULR(b 2^k1, h 2^k2) with k1 + k2 = 32 - s2 (every
/// factor within int32: |hs| < 2^30, |h| < 2^15, |b| < 2^23, s2 >= 8).
/// For s1 = 30, 2T by the saturating `QADD`: T = 2^30 gives 2^31 - 1, and
/// with |hs| < 2^30 the floor is still hs, the exact rshr(2^30 hs, 30).
/// 16 instructions an element (two a step) against 23.
#[cfg(all(atome_dsp, not(atome_small)))]
macro_rules! ssm_loop_dsp {
    ($s1:literal, $t:ident, $b:ident, $hp:ident, $h:ident, $n:ident, $k1:ident, $k2:ident, $mx:ident) => {
        core::arch::asm!(
            // (No instruction of an element sets N, Z or C.)
            odd_then_pairs!("n", ssm_elem_dsp($s1)),
            tp = inout(reg) $t => _,
            bp = inout(reg) $b => _,
            hp = inout(reg) $hp => _,
            xp = inout(reg) $h.as_ptr() => _,
            n = inout(reg) $n => _,
            k1 = in(reg) $k1,
            k2 = in(reg) $k2,
            mx = inout(reg) $mx,
            a = out(reg) _,
            x = out(reg) _,
            p = out(reg) _,
            options(nostack),
        )
    };
}

/// The sums for every channel of `hs` (decay shift s1: 30, 31 or 32); OR
/// of |W|.
///
/// # Safety
/// `t` and `b` must be readable for `hs.len()` int32 each (any alignment
/// of 4); `h` at least as long as `hs`; 30 <= s1 <= 32, 1 <= s2 <= 32.
#[cfg(all(atome_thumb2, not(atome_small)))]
#[inline(always)]
pub unsafe fn ssm_sums_s(t: *const i32, b: *const i32, hs: &mut [i32], h: &[i16], s1: u32, s2: u32) -> u32 {
    let n = hs.len().min(h.len());
    if n == 0 {
        return 0;
    }
    let hp = hs.as_mut_ptr();
    let mut mx = 0u32;
    // (Both loops below: the caller's contract holds; each loop reads t,
    // b, hs and h at element c < n and writes hs[c], and stops when the hs
    // pointer reaches hp + n. Only the named registers and the flags
    // change.)
    #[cfg(all(atome_dsp, not(atome_small)))]
    if s2 >= 8 {
        let k2 = (32 - s2).min(16);
        let k1 = 32 - s2 - k2;
        // SAFETY: as said above (the Q flag, which nothing reads, may be
        // set; s2 >= 8 keeps the factors within int32).
        unsafe {
            match s1 {
                30 => ssm_loop_dsp!("30", t, b, hp, h, n, k1, k2, mx),
                31 => ssm_loop_dsp!("31", t, b, hp, h, n, k1, k2, mx),
                _ => ssm_loop_dsp!("32", t, b, hp, h, n, k1, k2, mx),
            }
        }
        return mx;
    }
    // Armv7E-M, input shifts below 8 (never in the engine's rows, whose
    // input term shifts by 8 or more): a plain loop, one copy.
    #[cfg(all(atome_dsp, not(atome_small)))]
    {
        use crate::q15::arith::{mul64, mul64_16, rshr_to32};
        // SAFETY: the caller's contract (n int32 readable at t and b).
        let (ts, bs) = unsafe { (core::slice::from_raw_parts(t, n), core::slice::from_raw_parts(b, n)) };
        for ((hc, &hv), (&t, &bm)) in hs.iter_mut().zip(h).zip(ts.iter().zip(bs)) {
            let v = rshr_to32(mul64(t, *hc), s1) + rshr_to32(mul64_16(bm, i32::from(hv)), s2);
            mx |= v.unsigned_abs();
            *hc = v;
        }
        mx
    }
    // SAFETY: as said above.
    #[cfg(not(all(atome_dsp, not(atome_small))))]
    unsafe {
        match s1 {
            30 => ssm_loop!("30", "0x20000000", "2", t, b, hp, h, n, s2, mx),
            31 => ssm_loop!("31", "0x40000000", "1", t, b, hp, h, n, s2, mx),
            _ => ssm_loop!("32", "0x80000000", "0", t, b, hp, h, n, s2, mx),
        }
        mx
    }
}
