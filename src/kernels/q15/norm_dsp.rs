//! LayerNorm's affine pass on Armv7E-M (Cortex-M4, M7) by `SMMULR` and
//! `SMMLAR`, two elements a step.

/// LayerNorm's affine pass on Armv7E-M: W = rshr(g zm, t2) + beta term,
/// the beta term rshr(b, t3) for t3 >= 1 or b m4 for t3 = 0, in place of
/// the zm in `w`; the OR of |W|. `SMMULR` by 2^(32 - t) is rshr by t in
/// one instruction (t = 1: the value doubled first, then 2^30; |g zm| <
/// 2^30 and |b| < 2^23 leave room), `SMMLAR` adds the beta term's: two
/// elements a step, 9 instructions an element against LLVM's 15. None
/// (nothing written) for an odd length, shifts outside 1..=31 (t2) and
/// 0..=31 (t3).
///
/// # Safety
/// `g` and `b` must be readable for `w.len()` int32 each, 4-byte aligned.
#[cfg(all(atome_dsp, not(atome_small)))]
#[inline(always)]
pub unsafe fn ln_affine_dsp(w: &mut [i32], g: *const i32, b: *const i32, t2: u32, t3: u32, m4: i32) -> Option<u32> {
    let n = w.len();
    if n == 0 || !n.is_multiple_of(2) || !(1..=31).contains(&t2) || t3 > 31 {
        return None;
    }
    let mul = |t: u32| if t <= 1 { 1i32 << 30 } else { 1i32 << (32 - t) };
    let (mg, mb) = (mul(t2), if t3 == 0 { m4 } else { mul(t3) });
    let (gm, bm) = (if t2 == 1 { 1 } else { 2 }, t3.min(2) as usize);
    let wp = w.as_mut_ptr();
    // SAFETY: the caller's contract and the length check: n / 2 steps,
    // each reading two int32 at g, b and w (word aligned, as LDRD needs)
    // and writing two at w. Only the named registers and the flags (Q
    // included) change.
    unsafe {
        Some(match (gm, bm) {
            (1, 0) => affine_loop::<1, 0>(wp, g, b, n / 2, mg, mb),
            (1, 1) => affine_loop::<1, 1>(wp, g, b, n / 2, mg, mb),
            (1, _) => affine_loop::<1, 2>(wp, g, b, n / 2, mg, mb),
            (_, 0) => affine_loop::<2, 0>(wp, g, b, n / 2, mg, mb),
            (_, 1) => affine_loop::<2, 1>(wp, g, b, n / 2, mg, mb),
            (_, _) => affine_loop::<2, 2>(wp, g, b, n / 2, mg, mb),
        })
    }
}

/// One pair of [`affine_loop`] (no instruction here sets N, Z or C).
#[cfg(all(atome_dsp, not(atome_small)))]
macro_rules! affine_pair {
    () => {
        concat!(
            "ldrd {a0}, {a1}, [{gp}], #8\n",
            "ldrd {z0}, {z1}, [{wp}]\n",
            "mul {z0}, {a0}, {z0}\n",
            "mul {z1}, {a1}, {z1}\n",
            ".if {gm} == 1\n",
            "lsl {z0}, {z0}, #1\n",
            "lsl {z1}, {z1}, #1\n",
            ".endif\n",
            "smmulr {z0}, {z0}, {mg}\n",
            "smmulr {z1}, {z1}, {mg}\n",
            "ldrd {a0}, {a1}, [{bp}], #8\n",
            ".if {bm} == 0\n",
            "mla {z0}, {a0}, {mb}, {z0}\n",
            "mla {z1}, {a1}, {mb}, {z1}\n",
            ".else\n",
            ".if {bm} == 1\n",
            "lsl {a0}, {a0}, #1\n",
            "lsl {a1}, {a1}, #1\n",
            ".endif\n",
            "smmlar {z0}, {a0}, {mb}, {z0}\n",
            "smmlar {z1}, {a1}, {mb}, {z1}\n",
            ".endif\n",
            "strd {z0}, {z1}, [{wp}], #8\n",
            "eor {a0}, {z0}, {z0}, asr #31\n",
            "sub {a0}, {a0}, {z0}, asr #31\n",
            "orr {mx}, {mx}, {a0}\n",
            "eor {a0}, {z1}, {z1}, asr #31\n",
            "sub {a0}, {a0}, {z1}, asr #31\n",
            "orr {mx}, {mx}, {a0}\n",
        )
    };
}

/// [`ln_affine_dsp`]'s loop: `GM` 1 (t2 = 1: double, then SMMULR) or 2
/// (SMMULR); `BM` 0 (MLA by m4), 1 (t3 = 1: double, then SMMLAR) or 2
/// (SMMLAR).
///
/// # Safety
/// pairs >= 1; 2 * pairs int32 readable at g and b and read-writable at
/// w, all 4-byte aligned.
#[cfg(all(atome_dsp, not(atome_small)))]
#[inline(always)]
unsafe fn affine_loop<const GM: usize, const BM: usize>(w: *mut i32, g: *const i32, b: *const i32, pairs: usize, mg: i32, mb: i32) -> u32 {
    let mut mx = 0u32;
    // SAFETY: the caller's contract. Only the named registers and the
    // flags (Q included) change.
    unsafe {
        core::arch::asm!(
            // (No instruction of a pair sets N, Z or C.)
            odd_then_pairs!("n", affine_pair()),
            gm = const GM,
            bm = const BM,
            wp = inout(reg) w => _,
            gp = inout(reg) g => _,
            bp = inout(reg) b => _,
            n = inout(reg) pairs => _,
            mg = in(reg) mg,
            mb = in(reg) mb,
            mx = inout(reg) mx,
            a0 = out(reg) _,
            a1 = out(reg) _,
            z0 = out(reg) _,
            z1 = out(reg) _,
            options(nostack),
        );
    }
    mx
}
