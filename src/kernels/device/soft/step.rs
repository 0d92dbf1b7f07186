//! The accumulate step of the software matvec: one term added to the
//! unpacked accumulator with IEEE rounding ([`step`]), the loop over a
//! block's entries ([`run_words`]) that hands the common steps to this
//! core's assembly loop or to their Rust twin ([`fast_words`]), and the P3
//! path. soft.rs holds the number format, the words and the passes.

use super::*;


/// acc + x (or acc - x when `neg`) on an unpacked accumulator held as
/// (m6, e): m6 = its signed mantissa << 6 (0 for +0.0, with e = 0), e its
/// exponent as in [`Soft`]; the term as x6 = its mantissa << 6 and ex. The
/// step of the matvec's inner loop. False on overflow, with (m6, e) unchanged.
#[inline(always)]
fn step(m6: &mut i32, e: &mut i32, x6: i32, ex: i32, neg: bool) -> bool {
    let x = if neg { x6.wrapping_neg() } else { x6 };
    // big: the side of the larger exponent eb (the term as often as the
    // accumulator in a row's running sum); small is shifted to it.
    let d = e.wrapping_sub(ex);
    let (big, small, eb, d) = if d >= 0 { (*m6, x, *e, d) } else { (x, *m6, ex, d.wrapping_neg()) };
    if d > 31 {
        // Then eb >= 32: big is a normal number, and |small| / 2^d is below
        // 2^-2 of big's bit 0, far under half an ulp even in the binade
        // below (an ulp of 32 there): the sum rounds to big.
        *m6 = big;
        *e = eb;
        return true;
    }
    // Fast path: the rounded sum stays strictly inside big's binade. Then
    // t = big + floor(small / 2^d) rounded at bit 6 is the IEEE sum, except
    // when t's low six bits are exactly a half (32) and bits were shifted
    // out: the exact sum is then above the half (see below).
    let s = small >> d;
    let t = big.wrapping_add(s);
    // floor((t + 31 + lsb) / 64) * 64: nearest, ties to even, for either
    // sign (two's complement floors).
    let r = t.wrapping_add(31 + ((t >> 6) & 1)) & !63;
    // |r| in (2^29, 2^30), one's complement magnitude for negatives (r is a
    // multiple of 64, so both edges are excluded either way): the rounded
    // sum keeps the exponent. Excluded: 2^29 (t may be below the binade,
    // where rounding is at bit 5) and 2^30 (the next binade).
    let a = r ^ (r >> 31);
    if (a.wrapping_sub((1 << 29) + 1) as u32) < (1 << 29) - 2 && (t & 63 != 32 || s << d == small) {
        *m6 = r;
        *e = eb;
        return true;
    }
    // The sum left the binade by one bit: round at bit 7 (|t| >= 2^30) or
    // at bit 5 (|t| in [2^28, 2^29): one leading bit lost, the shifted-out
    // bits jammed into bit 0 as in add6; big is normal there, since eb >= 3).
    // A t still inside the binade (a tie or an edge above) gets p = 5 too,
    // and its |q| >= 2^24 fails the range check: add6 takes it.
    let tj = t | ((s << d) != small) as i32;
    let u = tj.unsigned_abs();
    let p = if u >= 1 << 30 { 7 } else { 5 };
    if u >= 1 << 28 {
        let q = tj.wrapping_add((1 << (p - 1)) - 1 + ((tj >> p) & 1)) >> p;
        let ne = eb + p - 6;
        if ((q + (1 << 24) - 1) as u32) < (1 << 25) - 1 && ((ne - 2) as u32) <= 252 {
            *m6 = q << 6;
            *e = ne;
            return true;
        }
    }
    let r = add6(*m6, *e, x, ex);
    let ne = (r >> 32) as i32;
    if ne > 254 {
        return false;
    }
    *m6 = r as i32;
    *e = ne;
    true
}

/// The general case of [`step`]: m6 * 2^(e-156) + x * 2^(ex-156) rounded to
/// nearest, ties to even, as (e << 32) | m6 (bits) again, with an exponent
/// above 254 on overflow (two words: returned in registers). Either side
/// may be zero (m = 0, e = 0) or subnormal (e = 1).
#[inline(never)]
fn add6(m6: i32, e: i32, x: i32, ex: i32) -> u64 {
    // big: the operand of the larger exponent; small is shifted to it.
    let (big, small, mut te, d) = if e >= ex { (m6, x, e, (e - ex) as u32) } else { (x, m6, ex, (ex - e) as u32) };
    // Arithmetic shifts floor; a nonzero remainder is jammed into bit 0,
    // which keeps every rounding decision at bit 7, 6 or 5 (after one
    // normalising shift left: only d <= 1 shifts more, and loses nothing)
    // that the exact sum would give.
    let (s, lost) = if d < 31 {
        let s = small >> d;
        (s, (s << d) != small)
    } else {
        (small >> 31, small != 0)
    };
    let mut t = big.wrapping_add(s) | lost as i32;
    let u = t.unsigned_abs();
    // The rounding bit: |t| in [2^(p+23), 2^(p+24)) has its 24 significant
    // bits above bit p.
    let p = if u >= 1 << 30 {
        7
    } else if u >= 1 << 29 {
        6
    } else if u >= 1 << 28 && te > 1 {
        5
    } else {
        if t == 0 {
            return 0;
        }
        // Massive cancellation (exact) or a subnormal result (exact; its
        // exponent stays 1).
        while t.unsigned_abs() < 1 << 29 && te > 1 {
            t <<= 1;
            te -= 1;
        }
        6
    };
    let h = 1 << (p - 1);
    let mut q = t.wrapping_add(h - 1 + ((t >> p) & 1)) >> p;
    te += p - 6;
    if q.unsigned_abs() == 1 << 24 {
        // Rounded up into the next binade; exact.
        q >>= 1;
        te += 1;
    }
    ((te as u64) << 32) | (q << 6) as u32 as u64
}

/// acc + x (`neg` false) or acc - x through the matvec's accumulate step,
/// for the differential tests: every finite pair goes through the step
/// (zeros too: the matvec starts from +0.0 and adds zero inputs) except an
/// acc of -0.0, which the matvec never holds; the rest as [`add_f32`].
pub fn add_step(acc: f32, x: f32, neg: bool) -> f32 {
    let xv = if neg { -x } else { x };
    match (unpack(acc), unpack(x)) {
        (Some(a), Some(u)) if acc.to_bits() != 0x8000_0000 => {
            let (mut m, mut e) = (a.m << 6, a.e);
            if step(&mut m, &mut e, u.m << 6, u.e, neg) {
                pack(Soft { m: m >> 6, e })
            } else {
                f32::from_bits((xv.to_bits() & 0x8000_0000) | 0x7f80_0000)
            }
        }
        _ => add_f32(acc, xv),
    }
}

/// Adds the entries' terms (+-1 weights; entries as [`ent`])
/// of the input words `x` to the accumulator st = [m6, e - WB] (m6 = 0
/// with any exponent is +0.0); returns how many were added (fewer than all
/// when the next one overflows; st holds the sum before it). Where the
/// core has one, an assembly loop (soft_t1.rs, soft_t2.rs, soft_rv.rs) takes the steps it
/// can and this Rust step the others; the accumulator handed to it is
/// zero or normal with e >= WB (so its test "big exponent >= 32" also
/// means "big is a nonzero normal").
#[inline(always)]
fn run_words(ents: &[u8], x: &[i32; SB], st: &mut [i32; 2]) -> usize {
    run_words_from(ents, x, st, 0)
}

/// [`run_words`] with the assembly loop's first run inlined (most
/// blocks need nothing else): no call into the general loop for them.
#[inline(always)]
pub(super) fn run_words_fast(ents: &[u8], x: &[i32; SB], st: &mut [i32; 2]) -> usize {
    #[cfg(any(atome_arm_soft, atome_rv32))]
    {
        let n = ents.len();
        if n > 0 && (st[0] == 0 || st[1] >= 0) {
            // SAFETY: as in run_words_from: ents[0..n] are entries built by
            // soft_pass, n >= 1, st is two words, the invariant was checked.
            let left = unsafe { asm_run(st, -(n as i32), ents.as_ptr().add(n), x) };
            if left == 0 {
                return n;
            }
            return run_words_from(ents, x, st, (n as i32 + left) as usize);
        }
    }
    run_words_from(ents, x, st, 0)
}

/// [`run_words`] from entry i on.
#[inline(never)]
pub(super) fn run_words_from(ents: &[u8], x: &[i32; SB], st: &mut [i32; 2], mut i: usize) -> usize {
    let n = ents.len();
    while i < n {
        #[cfg(not(any(atome_arm_soft, atome_rv32)))]
        if st[0] == 0 || st[1] >= 0 {
            i = fast_words(st, ents, x, i);
            if i >= n {
                break;
            }
        }
        #[cfg(any(atome_arm_soft, atome_rv32))]
        if st[0] == 0 || st[1] >= 0 {
            // SAFETY: ents[i..n] are entries built by soft_pass (column <
            // SB, so the words read are x's), n - i >= 1, st is two
            // words, and the accumulator invariant was just checked.
            let left = unsafe { asm_run(st, i as i32 - n as i32, ents.as_ptr().add(n), x) };
            i = (n as i32 + left) as usize;
            if i >= n {
                break;
            }
        }
        // (get, not [i]: i < n holds, but the compiler cannot see it through
        // the loops above, and the no-panic audit wants no bounds check.)
        let Some(&en) = ents.get(i) else { break };
        let w = x[ent_col(en)];
        let x6 = word_m6(w);
        let ex = if x6 == 0 { 0 } else { word_ex(w) + WB };
        let (mut m, mut e) = (st[0], if st[0] == 0 { 0 } else { st[1] + WB });
        if !step(&mut m, &mut e, x6, ex, ent_neg(en)) {
            return i;
        }
        *st = [m, if m == 0 { -WB } else { e - WB }];
        i += 1;
    }
    n
}

/// The assembly loops of this core (one contract): Thumb-1 on Cortex-M0,
/// Thumb-2 on the other Arm cores without an FPU, RV32 on riscv32.
#[cfg(atome_armv6m)]
pub(super) use crate::kernels::device::soft_t1 as asm;
#[cfg(atome_t2_soft)]
pub(super) use crate::kernels::device::soft_t2 as asm;
#[cfg(atome_rv32)]
pub(super) use crate::kernels::device::soft_rv as asm;
/// Runs entries `ents[len-rem ..]` (rem = -neg_rem) on the accumulator
/// `st` = [m6, e - WB] with the input words `words` (see `soft::word`) in
/// this core's assembly loop; returns 0 when all are done, else minus the
/// count left, the first of which needs the Rust step. `st` is updated to
/// the sum before it.
///
/// # Safety
/// `ents_end` - rem .. `ents_end` are readable entries (k << 3 | neg, k <
/// SB), `words` has SB readable words, `st` two writable words, rem >= 1;
/// the accumulator holds the invariant of `soft::run_words` (zero, or a
/// normal m6 with e - WB >= 0).
#[cfg(any(atome_armv6m, atome_t2_soft, atome_rv32))]
pub(super) unsafe fn asm_run(st: &mut [i32; 2], neg_rem: i32, ents_end: *const u8, words: &[i32; SB]) -> i32 {
    // SAFETY: the caller's contract above; the routine reads only those
    // bytes and words, writes only `st`, and keeps the calling
    // convention's callee-saved registers (AAPCS; on RV32 it uses no
    // stack and only caller-saved registers).
    unsafe { asm::soft_run(st.as_mut_ptr(), neg_rem, ents_end, words.as_ptr()) }
}

/// [`asm_run`] on a running sum held as a float (Thumb-2 and RV32):
/// unpacks `*o` (as `soft::acc_words`), runs the entries and packs the sum
/// back into `*o`, so the glue per row block and vector stays small.
/// Returns 0 when all entries were added; 1 << 32 when `*o` is not one of
/// the loop's accumulators (left as it was: the float add takes the
/// block); else (e - WB) << 32 | m6 | (count left), the sum before the
/// first entry left to the Rust step (m6's low six bits are zero), `*o`
/// untouched.
///
/// # Safety
/// As [`asm_run`], with `o` in place of `st`.
#[cfg(any(atome_t2_soft, atome_rv32))]
pub(super) unsafe fn asm_run_acc(o: &mut f32, neg_rem: i32, ents_end: *const u8, words: &[i32; SB]) -> u64 {
    // SAFETY: as in `asm_run`; the routine writes only `*o`.
    unsafe { asm::soft_acc(o, neg_rem, ents_end, words.as_ptr()) }
}

/// [`asm_run_acc`] for consecutive vectors of one row block: vector i (i <
/// `nv`) has its sum at byte offset i * `ostride` from `o` and its words
/// at `words`.add(i * SB), and is taken while bit i of `soft` is set.
/// Returns hi << 32 | lo with hi = k << 16 | (e - WB) as u16: k vectors
/// were done; lo = 0 when vector k (if k < nv) was not started (its bit
/// is clear, or its sum is not one of the loop's accumulators: `*o` as it
/// was), else lo = m6 | (count left), the sum of vector k before the
/// first entry left to the Rust step.
///
/// # Safety
/// As [`asm_run_acc`] for each of the `nv` >= 1 vectors (all the sums are
/// writable floats, all the words readable).
#[cfg(any(atome_t2_soft, atome_rv32))]
pub(super) unsafe fn asm_run_vecs(o: *mut f32, nv: usize, ents_end: *const u8, words: *const i32, soft: u32, ostride: usize, neg_rem: i32) -> u64 {
    // SAFETY: as in `asm_run_acc`, for each vector (the RV32 routine's
    // 16-byte frame is its own).
    unsafe { asm::soft_vec(o, nv, ents_end, words, soft, ostride, neg_rem) }
}

/// The steps of the Thumb-1 loop (soft_t1.rs) in Rust, case for case, for
/// the other cores (and the host, where the tests check it): from entry i
/// on, adds terms to st (same form as in [`run_words`]) while each is one
/// of the cases below; returns the index of the first entry it leaves to
/// [`step`] (ents.len() when none). With t = big + floor(small / 2^d) and
/// a = |t| (one's complement for negative t):
///   a in [2^29, 2^30 - 32): round at bit 6, big's exponent;
///   a >= 2^30:              round at bit 7, exponent + 1;
///   a in [2^28, 2^29 - 32): round at bit 5, exponent - 1;
///   a < 2^28: more than one leading bit cancelled, so d <= 1 and t is
///   exact: shifted up into [2^29, 2^30);
/// unless the rounding bits are exactly a half while d > 6 (bits were
/// shifted out, so the exact sum is above the half; with d <= 6 nothing is
/// lost, the words' low six bits being zero) or the exponent - WB leaves
/// [0, 155]. Every accumulator stays below 2^30 - 32 in magnitude, so no
/// sum overflows 32 bits.
// (The Arm soft-float cores and riscv32 run the assembly instead.)
#[cfg_attr(any(atome_arm_soft, atome_rv32), allow(dead_code))]
#[inline(always)]
fn fast_words(st: &mut [i32; 2], ents: &[u8], x: &[i32; SB], mut i: usize) -> usize {
    let (mut m, mut e) = (st[0], st[1]);
    while let Some(&en) = ents.get(i) {
        let w = x[ent_col(en)];
        let ex = word_ex(w);
        let xv = if ent_neg(en) { word_m6(w).wrapping_neg() } else { word_m6(w) };
        let d = e.wrapping_sub(ex);
        let (t, eb, d) = if d >= 0 {
            if d > 31 {
                // The term is below a quarter of the accumulator's bit 0.
                i += 1;
                continue;
            }
            (m.wrapping_add(xv >> d), e, d)
        } else {
            let d = d.wrapping_neg();
            if d > 31 {
                // The accumulator is zero (the invariant of run_words).
                m = xv;
                e = ex;
                i += 1;
                continue;
            }
            (xv.wrapping_add(m >> d), ex, d)
        };
        let a = (t ^ (t >> 31)) as u32;
        let exact_half = |mask: i32, half: i32| t & mask == half && d > 6;
        if a.wrapping_sub(1 << 29) < (1 << 29) - 32 {
            if exact_half(63, 32) {
                break;
            }
            m = t.wrapping_add(31 + ((t >> 6) & 1)) & !63;
            e = eb;
        } else if a >> 30 != 0 {
            if exact_half(127, 64) || eb > 154 {
                break;
            }
            m = (t.wrapping_add(63 + ((t >> 7) & 1)) >> 7) << 6;
            e = eb + 1;
        } else if a >> 28 == 1 {
            if a >= (1 << 29) - 32 || exact_half(31, 16) || eb < 1 {
                break;
            }
            m = (t.wrapping_add(15 + ((t >> 5) & 1)) >> 5) << 6;
            e = eb - 1;
        } else if a >> 28 == 0 {
            if t == 0 {
                m = 0;
                e = -WB;
            } else {
                let mut u = t.unsigned_abs();
                let mut ne = eb;
                while u >> 29 == 0 {
                    u <<= 1;
                    ne -= 1;
                }
                if ne < 0 {
                    break;
                }
                m = if t < 0 { (u as i32).wrapping_neg() } else { u as i32 };
                e = ne;
            }
        } else {
            break;
        }
        i += 1;
    }
    *st = [m, e];
    i
}

/// acc + x (`neg` false) or acc - x through the word path of the matvec
/// ([`run_words`]: on the host the Rust twin of the Thumb-1 loop, then
/// [`step`]), for the differential tests; operands outside the word path
/// (not finite, an x or nonzero acc outside the exponent window, acc -0.0)
/// as [`add_f32`].
pub fn add_step_words(acc: f32, x: f32, neg: bool) -> f32 {
    let xv = if neg { -x } else { x };
    let (Some(a), Some(w)) = (unpack(acc), word(x)) else { return add_f32(acc, xv) };
    if acc.to_bits() == 0x8000_0000 || (a.m != 0 && a.e < WB) {
        return add_f32(acc, xv);
    }
    let mut st = if a.m == 0 { [0, -WB] } else { [a.m << 6, a.e - WB] };
    let mut words = [0i32; SB];
    words[5] = w;
    let ents = [ent(5, neg)];
    if run_words(&ents, &words, &mut st) == 0 {
        return f32::from_bits((xv.to_bits() & 0x8000_0000) | 0x7f80_0000);
    }
    pack(Soft { m: st[0] >> 6, e: st[1] + WB })
}

/// P3 (weights +-3, +-9 too): each product c * x in the platform's float
/// multiply (as the float loop does), then the software add. Switches to
/// the float add when a product or a sum is not finite.
#[inline(never)]
pub(super) fn run_general(a: Soft, codes: &[i8], x: &[f32]) -> f32 {
    let mut a = a;
    for (k, (&c, &v)) in codes.iter().zip(x).enumerate() {
        let p = match c {
            0 => continue,
            1 => v,
            -1 => -v,
            c => (c as f32) * v,
        };
        match unpack(p).and_then(|p| add(a, p)) {
            Some(s) => a = s,
            None => return float_block(pack(a), codes.get(k..).unwrap_or(&[]), x.get(k..).unwrap_or(&[])),
        }
    }
    pack(a)
}
