//! The mix's sums on Armv7E-M (Cortex-M4, M7), two elements a step in
//! asm (docs/Q15.md#mix): W = x' + k0 rshr(L, tl) + k1 rshr(hs, ts) + k2
//! sp, where `SMMULR` gives floor((A B + 2^31) / 2^32), so that rshr(v,
//! t) = SMMULR(v, 2^(32 - t)) for 2 <= t <= 31 in one instruction and one
//! register (LLVM's (v + r) >> t takes two of each), `SMMLAR` adds the
//! residual's rshr(x, sx) = SMMLAR(x, 2^(32 - sx), W) straight into the
//! sum, and `SMLABB`/`SMLATB` take the int16 halves of a word of sparse
//! outputs or residuals. 16 instructions an element in two passes, where
//! LLVM's two passes take 24.

/// How a pathway's rounding shift runs: `SHIFT_NONE` (t <= 0 or t >= 32,
/// which the caller folds into its coefficient), `SHIFT_MUL` (2 <= t <=
/// 31: SMMULR by 2^(32 - t)) or `SHIFT_ONE` (t = 1, whose multiplier 2^31
/// is no int32: the value doubled first, then SMMULR by 2^30; the values
/// are below 2^30).
pub const SHIFT_NONE: usize = 0;
/// See [`SHIFT_NONE`].
pub const SHIFT_ONE: usize = 1;
/// See [`SHIFT_NONE`].
pub const SHIFT_MUL: usize = 2;

/// The multiplier of a rounding shift by 1 <= t <= 31 (see [`SHIFT_NONE`]).
pub const fn shift_mul(t: u32) -> i32 {
    if t <= 1 {
        1 << 30
    } else {
        1 << (32 - t)
    }
}

/// The residual's term: `X_SHIFT` rshr(x, sx) by SMMLAR (factor
/// [`shift_mul`](sx) for 2 <= sx <= 31, 0 for sx >= 32), `X_MUL` x kx
/// (factor kx <= 2^14), `X_HALF` rshr(x, 1) of both halves by `SHADD16`
/// with 1 (factor 0x00010001), then `SXTAH`.
pub const X_SHIFT: usize = 0;
/// See [`X_SHIFT`].
pub const X_MUL: usize = 1;
/// See [`X_SHIFT`].
pub const X_HALF: usize = 2;

/// One pair of [`pass_local`] (no instruction here sets N, Z or C).
macro_rules! local_pair {
    () => {
        concat!(
            "ldrd {w0}, {w1}, [{wp}]\n",
            "ldr {s}, [{sp}], #4\n",
            ".if {loc} == 1\n",
            "lsl {w0}, {w0}, #1\n",
            "lsl {w1}, {w1}, #1\n",
            ".endif\n",
            ".if {loc}\n",
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
/// elements (`LOC`: [`SHIFT_NONE`] or [`SHIFT_MUL`] with `ml` =
/// [`shift_mul`](tl)); |k2| < 2^15.
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
            ".if {sta} == 1\n",
            "lsl {h0}, {h0}, #1\n",
            "lsl {h1}, {h1}, #1\n",
            ".endif\n",
            ".if {sta}\n",
            "smmulr {h0}, {h0}, {ms}\n",
            "smmulr {h1}, {h1}, {ms}\n",
            ".endif\n",
            "mla {w0}, {h0}, {k1}, {w0}\n",
            "mla {w1}, {h1}, {k1}, {w1}\n",
            "ldr {h0}, [{xp}], #4\n",
            ".if {xmul} == 1\n",
            "smlabb {w0}, {h0}, {m}, {w0}\n",
            "smlatb {w1}, {h0}, {m}, {w1}\n",
            ".elseif {xmul} == 2\n",
            "shadd16 {h0}, {h0}, {m}\n",
            "sxtah {w0}, {w0}, {h0}\n",
            "add {w1}, {w1}, {h0}, asr #16\n",
            ".else\n",
            "sxth {h1}, {h0}\n",
            "asr {h0}, {h0}, #16\n",
            "smmlar {w0}, {h1}, {m}, {w0}\n",
            "smmlar {w1}, {h0}, {m}, {w1}\n",
            ".endif\n",
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

/// Second pass: w += the residual's term (`XMUL`: [`X_SHIFT`], [`X_MUL`]
/// or [`X_HALF`], `mx` its factor) + k1 rshr(hs, ts) (`STA` as `LOC`
/// above, `ms` its multiplier); the OR of |w|.
///
/// # Safety
/// `w.len()`, `hs.len()` and `x.len()` at least 2 * pairs, pairs >= 1.
#[inline(always)]
unsafe fn pass_state<const STA: usize, const XMUL: usize>(w: *mut i32, hs: *const i32, x: *const i16, pairs: usize, ms: i32, k1: i32, mx: i32) -> u32 {
    let mut or = 0u32;
    // SAFETY: the caller's contract: pairs steps, each reading two int32
    // at w and at hs (word aligned: i32 slices) and one word of two int16
    // at x (unaligned LDR allowed), and writing the two int32 of w back.
    // Only the named registers and the flags (Q included) change.
    unsafe {
        core::arch::asm!(
            // (No instruction of a pair sets N, Z or C.)
            odd_then_pairs!("n", state_pair()),
            sta = const STA,
            xmul = const XMUL,
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
/// else rshr by sx, 0 from 32 on); the OR of |W|. None (nothing written)
/// for an odd or mismatched length or a shift outside those ranges.
#[inline(always)]
pub fn mix_sums_dsp(lm: &mut [i32], hs: &[i32], sp: &[i16], xr: &[i16], (tl, ts, sx): (u32, u32, i32), [k0, k1, k2]: [i32; 3]) -> Option<u32> {
    let n = lm.len();
    if n == 0 || !n.is_multiple_of(2) || hs.len() < n || sp.len() < n || xr.len() < n || !(-32768..32768).contains(&k2) || tl > 31 || ts > 31 {
        return None;
    }
    let mode = |t: u32| match t {
        0 => (SHIFT_NONE, 0),
        1 => (SHIFT_ONE, shift_mul(1)),
        _ => (SHIFT_MUL, shift_mul(t)),
    };
    let ((loc, ml), (sta, ms)) = (mode(tl), mode(ts));
    let (xm, m) = match sx {
        ..=0 => (X_MUL, 1 << (-sx).min(14)),
        1 => (X_HALF, 0x0001_0001),
        2..=31 => (X_SHIFT, shift_mul(sx as u32)),
        _ => (X_SHIFT, 0),
    };
    let (w, pairs) = (lm.as_mut_ptr(), n / 2);
    // SAFETY: every slice holds at least n = 2 * pairs elements, pairs >= 1.
    unsafe {
        match loc {
            SHIFT_MUL => pass_local::<SHIFT_MUL>(w, sp.as_ptr(), pairs, ml, k0, k2),
            SHIFT_ONE => pass_local::<SHIFT_ONE>(w, sp.as_ptr(), pairs, ml, k0, k2),
            _ => pass_local::<SHIFT_NONE>(w, sp.as_ptr(), pairs, ml, k0, k2),
        }
        let (h, x) = (hs.as_ptr(), xr.as_ptr());
        Some(match (sta, xm) {
            (SHIFT_MUL, X_MUL) => pass_state::<SHIFT_MUL, X_MUL>(w, h, x, pairs, ms, k1, m),
            (SHIFT_MUL, X_HALF) => pass_state::<SHIFT_MUL, X_HALF>(w, h, x, pairs, ms, k1, m),
            (SHIFT_MUL, _) => pass_state::<SHIFT_MUL, X_SHIFT>(w, h, x, pairs, ms, k1, m),
            (SHIFT_ONE, X_MUL) => pass_state::<SHIFT_ONE, X_MUL>(w, h, x, pairs, ms, k1, m),
            (SHIFT_ONE, X_HALF) => pass_state::<SHIFT_ONE, X_HALF>(w, h, x, pairs, ms, k1, m),
            (SHIFT_ONE, _) => pass_state::<SHIFT_ONE, X_SHIFT>(w, h, x, pairs, ms, k1, m),
            (_, X_MUL) => pass_state::<SHIFT_NONE, X_MUL>(w, h, x, pairs, ms, k1, m),
            (_, X_HALF) => pass_state::<SHIFT_NONE, X_HALF>(w, h, x, pairs, ms, k1, m),
            (_, _) => pass_state::<SHIFT_NONE, X_SHIFT>(w, h, x, pairs, ms, k1, m),
        })
    }
}
