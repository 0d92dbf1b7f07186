//! exp2q (2^-x in Q30) and softmax_q (docs/Q15.md#exp2q-2-x-in-q30,
//! docs/Q15.md#softmax_q), with the Horner steps in asm on ARMv6-M.

use super::*;

/// The coefficients in the order [`exp2_horner_t1`] adds them.
#[cfg(all(atome_armv6m, not(atome_small)))]
static EXP2_C_DOWN: [i32; 5] = [EXP2_C[4] as i32, EXP2_C[3] as i32, EXP2_C[2] as i32, EXP2_C[1] as i32, EXP2_C[0] as i32];

/// exp2q's Horner steps acc = C_i + rshr(acc f, 24) from acc = C5, on
/// ARMv6-M in asm: each product as [`rshr_mul_split`]'s (k = 8; |acc| <
/// 2^30 and 0 <= f < 2^24 are within its bounds) with f's halves in
/// registers for all five steps: 21 instructions a step where LLVM's
/// spilled loop took about 30.
#[cfg(all(atome_armv6m, not(atome_small)))]
#[cfg_attr(not(atome_small), inline(always))]
fn exp2_horner_t1(f: i32) -> i32 {
    let acc: i32;
    // One step: r0 = acc, r1 = bl, r2 = bh; the next coefficient from the
    // table in r8 at byte offset `off`.
    macro_rules! step {
        ($off:literal) => {
            concat!(
                "asrs r3, r0, #16\n",
                "uxth r4, r0\n",
                "movs r5, r3\n",
                "muls r5, r1, r5\n",
                "movs r0, r4\n",
                "muls r0, r2, r0\n",
                "adds r5, r5, r0\n",
                "muls r4, r1, r4\n",
                "lsrs r4, r4, #16\n",
                "uxtb r0, r5\n",
                "adds r4, r4, r0\n",
                "adds r4, #128\n",
                "asrs r4, r4, #8\n",
                "asrs r5, r5, #8\n",
                "adds r4, r4, r5\n",
                "muls r3, r2, r3\n",
                "lsls r3, r3, #8\n",
                "adds r0, r3, r4\n",
                "mov r3, r8\n",
                "ldr r3, [r3, #", $off, "]\n",
                "adds r0, r0, r3\n",
            )
        };
    }
    // SAFETY: reads the five words of EXP2_C_DOWN; register arithmetic
    // otherwise. Only the named registers and the flags change; no stack
    // use.
    unsafe {
        core::arch::asm!(
            "mov r8, r3",
            "uxth r1, r2",
            "lsrs r2, r2, #16",
            step!("0"),
            step!("4"),
            step!("8"),
            step!("12"),
            step!("16"),
            inout("r0") EXP2_C[5] as i32 => acc,
            out("r1") _,
            inout("r2") f => _,
            inout("r3") EXP2_C_DOWN.as_ptr() => _,
            out("r4") _,
            out("r5") _,
            out("r8") _,
            options(readonly, nostack),
        );
    }
    acc
}

/// 2^(-v / 2^24) in Q30 for v >= 0 (saturated at 2^30).
#[inline]
pub fn exp2q(v: i64) -> i64 {
    if v >= 0 {
        return exp2q_nn(v);
    }
    let ip = (v >> 24) as i32;
    let f = v & ((1 << 24) - 1);
    let mut acc = EXP2_C[5];
    for &c in EXP2_C[..5].iter().rev() {
        acc = c + rshr(acc * f, 24);
    }
    rshr(acc.clamp(0, ONE_Q30), ip)
}

/// [`exp2q`] of a v >= 0 (the only inputs the softmax and tanh give).
#[inline(always)]
pub(super) fn exp2q_nn(v: i64) -> i64 {
    let v = v.min(U_MAX);
    // (The softmax's largest term, d = 0: the polynomial at 0 is C0 = 2^30.
    // From 2^32 on, every rshr32 is 0.)
    if v == 0 {
        return ONE_Q30;
    }
    if v >= 32 << 24 {
        return 0;
    }
    // int32 Horner: every multiplicand is a partial sum of C5..C1,
    // below sum |C1..C5| < 2^30, and f < 2^24, so each product is
    // below 2^54, its rshr below 2^30 and each new acc below 2^31.
    let (ip, f) = ((v >> 24) as i32, (v & ((1 << 24) - 1)) as i32);
    #[cfg(all(atome_armv6m, not(atome_small)))]
    let acc = exp2_horner_t1(f);
    #[cfg(not(all(atome_armv6m, not(atome_small))))]
    let acc = {
        let mut acc = EXP2_C[5] as i32;
        for &c in EXP2_C[..5].iter().rev() {
            acc = c as i32 + rshr_to32(mul64(acc, f), 24);
        }
        acc
    };
    i64::from(rshr32(acc.clamp(0, ONE_Q30 as i32), ip))
}

/// min(v * 2^k, 2^30) for k >= 0 (saturating), min(rshr(v, -k), 2^30)
/// otherwise: a Q24 exp2q input from an exact product and its exponent.
#[inline]
pub(super) fn to_q24(v: i64, k: i32) -> i64 {
    if k >= 0 {
        let left = k.min(62);
        if v > (U_MAX >> left) {
            U_MAX
        } else {
            v << left
        }
    } else {
        rshr(v, (-k).min(63)).min(U_MAX)
    }
}

/// g * v for a sign g in {-1, 0, 1}; on Cortex-M0 without a multiply (a
/// library call there).
#[cfg_attr(not(atome_small), inline(always))]
pub fn sgn_mul(g: i64, v: i64) -> i64 {
    if NO_SMULL {
        match g {
            1 => v,
            -1 => -v,
            _ => 0,
        }
    } else {
        g * v
    }
}

/// softmax_q of the real scores sig(j) * cm * 2^ce, j < out.len(), each
/// score an int64 given by its two words `lo[j]` and `hi[j]` (lo[j] alone,
/// sign-extended, where `hi` is shorter; 0 where `lo` is): Q30
/// probabilities into `out`. (One copy for the router and the attention;
/// not generic.)
#[inline(never)]
pub fn softmax_q(lo: &[i32], hi: &[i32], cm: i64, ce: i32, out: &mut [i32]) {
    let sig = |j: usize| match (lo.get(j), hi.get(j)) {
        (Some(&l), Some(&h)) => (i64::from(h) << 32) | i64::from(l as u32),
        (Some(&l), None) => i64::from(l),
        _ => 0,
    };
    let g = cm.signum();
    let mut mx = i64::MIN;
    for j in 0..out.len() {
        mx = mx.max(sgn_mul(g, sig(j)));
    }
    let (km, ke) = quant_scalar(cm.abs() * L2E_Q30, ce - 30, QA);
    let k = ke + 24;
    let mut z = 0i64;
    for (j, o) in out.iter_mut().enumerate() {
        let d = mx - sgn_mul(g, sig(j));
        // (0 <= d; |km| < 2^15: an int32 d makes the product mul64's,
        // without a 64 x 64 library call on Cortex-M0.)
        let p = match i32::try_from(d) {
            Ok(d32) if NO_SMULL => mul64(d32, km as i32),
            _ => d * km,
        };
        // (p >= 0: d >= 0 and km >= 0. Size-first: the one exp2q, shared
        // with tanh_q30.)
        #[cfg(not(atome_small))]
        let e = exp2q_nn(to_q24(p, k));
        #[cfg(atome_small)]
        let e = exp2q(to_q24(p, k));
        *o = e as i32;
        z += e;
    }
    // The largest term is exp2q(0) = 2^30, so z >= 2^30 for a non-empty
    // out: max(1) is a no-op that lets the division be seen as safe.
    let rz = div_q32(1 << 61, z.max(1) as u64) as i64;
    for o in out.iter_mut() {
        // (*o <= 2^30; rz <= 2^31, an int32 unless z = 2^30.)
        let p = match i32::try_from(rz) {
            Ok(r32) if NO_SMULL => mul64(*o, r32),
            _ => i64::from(*o) * rz,
        };
        *o = rshr(p, 31) as i32;
    }
}
