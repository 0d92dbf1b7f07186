//! LayerNorm's affine pass on Armv7E-M (Cortex-M4, M7) by `SMMULR`, two
//! elements a step.

/// One pair of [`ln_affine_dsp`]'s loop (no instruction here sets N, Z or
/// C).
#[cfg(all(atome_dsp, not(atome_small)))]
macro_rules! affine_pair {
    () => {
        concat!(
            "ldrd {a0}, {a1}, [{gp}], #8\n",
            "ldrd {z0}, {z1}, [{wp}]\n",
            "mul {z0}, {a0}, {z0}\n",
            "mul {z1}, {a1}, {z1}\n",
            "lsl {z0}, {z0}, #1\n",
            "lsl {z1}, {z1}, #1\n",
            "smmulr {z0}, {z0}, {mg}\n",
            "smmulr {z1}, {z1}, {mg}\n",
            "ldrd {a0}, {a1}, [{bp}], #8\n",
            "mla {z0}, {a0}, {mb}, {z0}\n",
            "mla {z1}, {a1}, {mb}, {z1}\n",
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

/// LayerNorm's affine pass on Armv7E-M: W = rshr(g zm, t2) + beta term,
/// the beta term rshr(b, t3) for t3 >= 1 or b m4 for t3 = 0, in place of
/// the zm in `w`; the OR of |W|. The rows' usual case, t3 = 0 (the gamma
/// term the larger), in asm: rshr by t as `SMMULR` of the doubled value
/// by 2^(31 - t) (|g zm| < 2^30 leaves room for the doubling), then
/// `MLA` adds b m4: two elements a step, 9.5 instructions an element
/// against LLVM's 15. Other beta shifts by a plain loop (one copy). None
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
    if t3 != 0 {
        // SAFETY: the caller's contract (n int32 readable at g and b).
        let (gs, bs) = unsafe { (core::slice::from_raw_parts(g, n), core::slice::from_raw_parts(b, n)) };
        return Some(affine_any(w, gs, bs, t2, t3));
    }
    let mut mx = 0u32;
    // SAFETY: the caller's contract and the length check: n / 2 steps,
    // each reading two int32 at g, b and w (word aligned, as LDRD needs)
    // and writing two at w. Only the named registers and the flags (Q
    // included) change.
    unsafe {
        core::arch::asm!(
            // (No instruction of a pair sets N, Z or C.)
            odd_then_pairs!("n", affine_pair()),
            wp = inout(reg) w.as_mut_ptr() => _,
            gp = inout(reg) g => _,
            bp = inout(reg) b => _,
            n = inout(reg) n / 2 => _,
            mg = in(reg) 1i32 << (31 - t2),
            mb = in(reg) m4,
            mx = inout(reg) mx,
            a0 = out(reg) _,
            a1 = out(reg) _,
            z0 = out(reg) _,
            z1 = out(reg) _,
            options(nostack),
        );
    }
    Some(mx)
}

/// [`ln_affine_dsp`] for a beta shift t3 >= 1 (the beta term the larger:
/// rare), in Rust. (Out of line: off the usual path.)
#[cfg(all(atome_dsp, not(atome_small)))]
#[inline(never)]
fn affine_any(w: &mut [i32], g: &[i32], b: &[i32], t2: u32, t3: u32) -> u32 {
    let r = |v: i32, t: u32| ((v >> (t - 1)) + 1) >> 1;
    let mut mx = 0u32;
    for (o, (&gm, &bm)) in w.iter_mut().zip(g.iter().zip(b)) {
        let v = r(gm.wrapping_mul(*o), t2) + r(bm, t3);
        mx |= v.unsigned_abs();
        *o = v;
    }
    mx
}
