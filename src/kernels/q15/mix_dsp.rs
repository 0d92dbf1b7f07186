//! The mix's sums on Armv7E-M (Cortex-M4, M7), two elements a step in
//! asm (docs/Q15.md#mix): W = x' + k0 rshr(L, tl) + k1 rshr(hs, ts) + k2
//! sp, where `SMMULR` gives floor((A B + 2^31) / 2^32), so that rshr(v,
//! t) = SMMULR(v, 2^(32 - t)) for 2 <= t <= 31 in one instruction and one
//! register (LLVM's (v + r) >> t takes two of each; t = 1, whose
//! multiplier is no int32, as SMMULR(2 v, 2^30)), and `SMLABB`/`SMLATB`
//! take the int16 halves of a word of sparse outputs or residuals. 16
//! instructions an element in two passes, where LLVM's two passes take
//! 24. Only the rows' usual grids (the residual shifted left, the state
//! shifted right by 2 or more) run here: the other cases' code would cost
//! more flash than it saves instructions.

/// The multiplier of a rounding shift by 1 <= t <= 31 of a doubled
/// value: rshr(v, t) = SMMULR(2 v, 2^(31 - t)) (floor((v 2^(32 - t) +
/// 2^31) / 2^32); every value the mix shifts is below 2^30, so 2 v is an
/// int32).
pub const fn shift_mul(t: u32) -> i32 {
    1 << (31 - t)
}

/// One pair of [`pass_local`] (no instruction here sets N, Z or C).
macro_rules! local_pair {
    () => {
        concat!(
            "ldrd {w0}, {w1}, [{wp}]\n",
            "ldr {s}, [{sp}], #4\n",
            ".if {loc}\n",
            "lsl {w0}, {w0}, #1\n",
            "lsl {w1}, {w1}, #1\n",
            "smmulr {w0}, {w0}, {ml}\n",
            "smmulr {w1}, {w1}, {ml}\n",
            ".endif\n",
            "mul {w0}, {w0}, {k0}\n",
            "mul {w1}, {w1}, {k0}\n",
            "smlabb {w0}, {s}, {k2}, {w0}\n",
            "smlatb {w1}, {s}, {k2}, {w1}\n",
            "strd {w0}, {w1}, [{wp}], #8\n",
        )
    };
}

/// First pass: w = k0 rshr(w, tl) + k2 sp (wrapping) over pairs of
/// elements (`LOC`: 1 for a shift tl >= 1, `ml` = [`shift_mul`](tl); 0 for
/// none, the grid folded into k0); |k2| < 2^15.
///
/// # Safety
/// `w.len()` and `sp.len()` at least 2 * pairs, pairs >= 1.
#[inline(always)]
unsafe fn pass_local<const LOC: usize>(w: *mut i32, sp: *const i16, pairs: usize, ml: i32, k0: i32, k2: i32) {
    // SAFETY: the caller's contract: pairs steps, each reading two int32
    // at w (word aligned, as LDRD needs: an i32 slice) and one word of two
    // int16 at sp (Armv7E-M allows unaligned LDR from normal memory), and
    // writing the two int32 back. Only the named registers and the flags
    // (Q included) change.
    unsafe {
        core::arch::asm!(
            // (No instruction of a pair sets N, Z or C.)
            odd_then_pairs!("n", local_pair()),
            loc = const LOC,
            wp = inout(reg) w => _,
            sp = inout(reg) sp => _,
            n = inout(reg) pairs => _,
            ml = in(reg) ml,
            k0 = in(reg) k0,
            k2 = in(reg) k2,
            w0 = out(reg) _,
            w1 = out(reg) _,
            s = out(reg) _,
            options(nostack),
        );
    }
}

/// One pair of [`pass_state`] (no instruction here sets N, Z or C).
macro_rules! state_pair {
    () => {
        concat!(
            "ldrd {w0}, {w1}, [{wp}]\n",
            "ldrd {h0}, {h1}, [{hp}], #8\n",
            "smmulr {h0}, {h0}, {ms}\n",
            "smmulr {h1}, {h1}, {ms}\n",
            "mla {w0}, {h0}, {k1}, {w0}\n",
            "mla {w1}, {h1}, {k1}, {w1}\n",
            "ldr {h0}, [{xp}], #4\n",
            "smlabb {w0}, {h0}, {m}, {w0}\n",
            "smlatb {w1}, {h0}, {m}, {w1}\n",
            "strd {w0}, {w1}, [{wp}], #8\n",
            "eor {h0}, {w0}, {w0}, asr #31\n",
            "sub {h0}, {h0}, {w0}, asr #31\n",
            "orr {or}, {or}, {h0}\n",
            "eor {h0}, {w1}, {w1}, asr #31\n",
            "sub {h0}, {h0}, {w1}, asr #31\n",
            "orr {or}, {or}, {h0}\n",
        )
    };
}

/// Second pass: w += x kx (the residual shifted left, kx = `mx` <= 2^14)
/// + k1 rshr(hs, ts) for 2 <= ts <= 31 (SMMULR by `ms` = 2^(32 - ts)); the
/// OR of |w|.
///
/// # Safety
/// `w.len()`, `hs.len()` and `x.len()` at least 2 * pairs, pairs >= 1.
#[inline(always)]
unsafe fn pass_state(w: *mut i32, hs: *const i32, x: *const i16, pairs: usize, ms: i32, k1: i32, mx: i32) -> u32 {
    let mut or = 0u32;
    // SAFETY: the caller's contract: pairs steps, each reading two int32
    // at w and at hs (word aligned: i32 slices) and one word of two int16
    // at x (unaligned LDR allowed), and writing the two int32 of w back.
    // Only the named registers and the flags (Q included) change.
    unsafe {
        core::arch::asm!(
            // (No instruction of a pair sets N, Z or C.)
            odd_then_pairs!("n", state_pair()),
            wp = inout(reg) w => _,
            hp = inout(reg) hs => _,
            xp = inout(reg) x => _,
            n = inout(reg) pairs => _,
            ms = in(reg) ms,
            k1 = in(reg) k1,
            m = in(reg) mx,
            or = inout(reg) or,
            w0 = out(reg) _,
            w1 = out(reg) _,
            h0 = out(reg) _,
            h1 = out(reg) _,
            options(nostack),
        );
    }
    or
}

/// The mix's sums (see the module) into `lm` (the exact conv sums on
/// entry, |L| < 2^18; |hs| < 2^30), each pathway's shift as the engine's
/// grid gives it (tl, ts: 0 when folded into the coefficient, else 1 to
/// 31) and the residual's shift sx (<= 0: a left shift by at most 14;
/// else rshr by sx, 0 from 32 on); the OR of |W|. In asm for the rows'
/// usual grids (a state shift ts >= 1, the residual shifted left), by
/// [`super::mix::mix_sums_any`] otherwise. None (nothing written) for an
/// odd or mismatched length or a shift outside those ranges.
#[inline(always)]
pub fn mix_sums_dsp(lm: &mut [i32], hs: &[i32], sp: &[i16], xr: &[i16], (tl, ts, sx): (u32, u32, i32), [k0, k1, k2]: [i32; 3]) -> Option<u32> {
    let n = lm.len();
    if n == 0 || !n.is_multiple_of(2) || hs.len() < n || sp.len() < n || xr.len() < n || !(-32768..32768).contains(&k2) || tl > 31 || ts > 31 {
        return None;
    }
    if ts < 2 || sx > 0 {
        let xs = if sx <= 0 { -(-sx).min(14) } else { sx };
        return Some(super::mix::mix_sums_any(lm, hs, sp, xr, [k0, k1, k2], (tl as i32, ts as i32, xs)));
    }
    let (w, pairs) = (lm.as_mut_ptr(), n / 2);
    // SAFETY: every slice holds at least n = 2 * pairs elements, pairs >= 1.
    unsafe {
        if tl == 0 {
            pass_local::<0>(w, sp.as_ptr(), pairs, 0, k0, k2);
        } else {
            pass_local::<1>(w, sp.as_ptr(), pairs, shift_mul(tl), k0, k2);
        }
        Some(pass_state(w, hs.as_ptr(), xr.as_ptr(), pairs, 1 << (32 - ts), k1, 1 << (-sx).min(14)))
    }
}
