//! Bit-exact software f32 accumulation for cores without an FPU
//! (thumbv6m, thumbv7m, thumbv7em-none-eabi, riscv32imc/imac).
//!
//! There every `f32 + f32` is a compiler-builtins call that unpacks both
//! operands, aligns, adds, rounds and packs again (40-70 instructions). A
//! matvec row adds dozens of terms into one accumulator, so here the
//! accumulator stays unpacked (a signed mantissa and an exponent) and each
//! input is unpacked once per position and block (one word per input:
//! mantissa << 6 and exponent). Every single add still rounds to nearest,
//! ties to even, exactly as IEEE binary32: each partial sum equals the
//! hardware f32 add bit for bit (tests/soft_add.rs, scripts/soft_add_long.sh).
//! The common steps run in a loop of few cases (Thumb-1 assembly in
//! soft_t1.rs on Cortex-M0, Thumb-2 assembly in soft_t2.rs on the other Arm
//! cores without an FPU, RV32 assembly in soft_rv.rs on riscv32, their Rust
//! twin `fast_words` elsewhere and on the host, where the tests check it);
//! the others in the general Rust step.
//!
//! Non-finite values never enter the software arithmetic: a block whose
//! inputs or incoming accumulator hold an infinity or NaN, and the rest of a
//! block from an add that overflows, use the platform's f32 add. So NaN
//! payloads, infinities and their signs are exactly what the plain float
//! loop gives on each target (tests/nonfinite.rs only asks that NaN stays
//! NaN, but the bits are the platform's too). [`add_f32`], the host-testable
//! whole-float add, returns the default quiet NaN (0x7fc00000) for NaN
//! results; its tests compare NaN results by NaN-ness only, since hardware
//! NaN payloads differ between architectures.

use crate::format::{Packing, Tensor};
use crate::kernels::matvec::{decode, term};

mod float;
mod step;
pub use float::{add, add_f32, pack, unpack, Soft, ZERO};
pub use step::{add_step, add_step_words};
#[cfg(any(atome_t2_soft, atome_rv32))]
use step::{asm_run_acc, asm_run_vecs, run_words_from};
use step::{run_general, run_words_fast};

/// Columns unpacked per block: 32, the skip block PB (half the per-row-block
/// work per term of 16).
pub(super) const SB: usize = 32;
/// Inputs are taken or skipped (when the slice is short) in blocks of this
/// many columns, as the portable float loop does (matvec.rs BLOCK).
const PB: usize = 32;
/// Input vectors per pass: 4, or 3 on thumbv6m (no 32-bit atomics is how
/// cfg tells it), where four vectors' 128-byte word blocks would take
/// predict_next's peak stack past 2 KiB.
const SNB: usize = if cfg!(atome_armv6m) { 3 } else { 4 };

/// The entries' layout: column << ENT_COL | negate << ENT_NEG. On riscv32
/// the column is kept as its word's byte offset (column * 4) and the sign
/// in bit 7, so the assembly loop (soft_rv.rs) takes the sign with one
/// branch on a sign-extending byte load and adds the offset as it is.
const ENT_COL: u32 = if cfg!(atome_rv32) { 2 } else { 3 };
const ENT_NEG: u32 = if cfg!(atome_rv32) { 7 } else { 0 };
/// [`ENT_COL`] of a Trit2 byte's first column for the next byte (four
/// columns on), in each of a word's byte lanes.
const KX: u32 = (4 << ENT_COL) * 0x0101_0101;

/// An entry: column k, negated or not.
#[inline(always)]
fn ent(k: usize, neg: bool) -> u8 {
    (k as u8) << ENT_COL | (neg as u8) << ENT_NEG
}

/// An entry's column.
#[inline(always)]
fn ent_col(en: u8) -> usize {
    (en >> ENT_COL) as usize & (SB - 1)
}

/// Whether an entry's term is subtracted.
#[inline(always)]
fn ent_neg(en: u8) -> bool {
    (en >> ENT_NEG) & 1 != 0
}

/// Exponent offset of the input words: an input's biased exponent e is
/// held as e - WB in six bits, so inputs with e in [WB, WB + 63] (|x| from
/// 2^-31 to below 2^33) take the word path; a block with another nonzero
/// input uses the platform's float add (rare: LayerNorm and conv outputs).
const WB: i32 = 96;

/// An input as one word, (signed mantissa << 6) | (e - WB), 0 for either
/// zero (adding a zero never changes a running sum that is not -0.0, and
/// the sum starts at +0.0); None outside the window or not finite. On the
/// Thumb-2 loop's cores the two fields trade places, (e - WB) << 26 | the
/// mantissa's low 26 bits ([`WORD_HI`]).
#[inline(always)]
fn word(v: f32) -> Option<i32> {
    let b = v.to_bits();
    // e - WB (wrapping: above 63 for every exponent outside the window,
    // subnormals and zeros too); fewer instructions than through unpack.
    let ee = ((b >> 23) & 255).wrapping_sub(WB as u32);
    if ee > 63 {
        return if b << 1 == 0 { Some(0) } else { None };
    }
    // The mantissa with its implicit bit (bit 23: the exponent's low bit
    // shifted to bit 31 and set), signed.
    let m = ((b << 8 | 1 << 31) >> 8) as i32;
    let m = if (b as i32) < 0 { -m } else { m };
    Some(if WORD_HI { (ee << 26) as i32 | (m & 0x3ff_ffff) } else { (m << 6) | ee as i32 })
}

/// The words' layout of the Thumb-2 loop (soft_t2.rs): exponent on top,
/// where one shifted operand takes it (d = e - (w >> 26)) and one shift
/// the mantissa (x6 = w << 6), instead of two masks and a subtract.
const WORD_HI: bool = cfg!(atome_t2_soft);

/// A word's signed mantissa << 6.
#[inline(always)]
fn word_m6(w: i32) -> i32 {
    if WORD_HI {
        w << 6
    } else {
        w & !63
    }
}

/// A word's exponent - WB.
#[inline(always)]
fn word_ex(w: i32) -> i32 {
    if WORD_HI {
        (w as u32 >> 26) as i32
    } else {
        w & 63
    }
}

/// How one vector's block is added.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Short input slice: nothing is added.
    Skip,
    /// Finite inputs: the software accumulate.
    Soft,
    /// An infinity or NaN among the inputs: the platform's f32 add.
    Float,
}

/// For b < n: out[b*ostride + j] = (W x_b)[j] for j < W.rows, with
/// x_b = xs[b*xstride ..][.. W.cols]: exactly the portable float loop of
/// `matvec_batch_accel` (each (row, vector) adds its nonzero terms in column
/// order from +0.0, then times the scale), bit for bit, with each add done
/// in software. Outputs must not overlap (ostride >= W.rows or n <= 1);
/// otherwise the plain float loop runs, which fixes which result survives.
pub fn matvec_soft(w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) {
    let mut b0 = 0;
    while b0 < n {
        let nb = (n - b0).min(SNB);
        if n > 1 && ostride < w.rows {
            float_pass(w, xs, xstride, b0, nb, out, ostride);
        } else {
            soft_pass(w, xs, xstride, b0, nb, out, ostride);
        }
        b0 += nb;
    }
}

/// The plain float loop over one pass, in its write order.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn float_pass(w: &Tensor, xs: &[f32], xstride: usize, b0: usize, nb: usize, out: &mut [f32], ostride: usize) {
    let cols = w.cols;
    let mut codes = [0i8; PB];
    for j in 0..w.rows {
        let mut acc = [0.0f32; SNB];
        let mut c0 = 0;
        while c0 < cols {
            let len = (cols - c0).min(PB);
            let codes = &mut codes[..len];
            decode(w, j * cols + c0, codes);
            for (b, a) in acc.iter_mut().enumerate().take(nb) {
                let base = (b0 + b) * xstride + c0;
                if let Some(x) = xs.get(base..base + len) {
                    *a = float_block(*a, codes, x);
                }
            }
            c0 += len;
        }
        for (b, a) in acc.iter().enumerate().take(nb) {
            if let Some(o) = out.get_mut((b0 + b) * ostride + j) {
                *o = a * w.scale;
            }
        }
    }
}

/// The float loop's terms of one block.
fn float_block(mut s: f32, codes: &[i8], x: &[f32]) -> f32 {
    for (&c, &v) in codes.iter().zip(x) {
        s = term(s, c, v);
    }
    s
}

/// One pass of up to SNB vectors. Column blocks are the outer loop, so each
/// input is unpacked once; the running sums live in `out` as floats between
/// blocks (exact: every partial sum is a float).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn soft_pass(w: &Tensor, xs: &[f32], xstride: usize, b0: usize, nb: usize, out: &mut [f32], ostride: usize) {
    let (rows, cols) = (w.rows, w.cols);
    // (Lets the compiler see every b < SNB: no bounds checks.)
    let nb = nb.min(SNB);
    for b in 0..nb {
        for j in 0..rows {
            if let Some(o) = out.get_mut((b0 + b) * ostride + j) {
                *o = 0.0;
            }
        }
    }
    // The block's inputs as words (see [`word`]), per vector.
    let mut xb = [[0i32; SB]; SNB];
    let mut mode = [Mode::Skip; SNB];
    let mut codes = [0i8; SB];
    // Nonzero weights of a row's block: entries (see [`ent`]).
    // (Four spare bytes: trit2_ents stores four entries at a time.)
    let mut ents = [0u8; SB + 4];
    let general = w.packing == Packing::P3;
    // Every vector's sum of every row is within `out` (then the assembly
    // loop may run the vectors of a row block in one call).
    #[cfg(any(atome_t2_soft, atome_rv32))]
    let vecs_ok = nb >= 1 && (b0 + nb - 1).checked_mul(ostride).and_then(|v| v.checked_add(rows)).is_some_and(|v| v <= out.len());
    let mut c0 = 0;
    while c0 < cols {
        let len = (cols - c0).min(SB);
        let p0 = c0 - c0 % PB;
        let plen = (cols - p0).min(PB);
        for b in 0..nb {
            let base = (b0 + b) * xstride;
            mode[b] = Mode::Skip;
            if xs.get(base + p0..base + p0 + plen).is_none() {
                continue;
            }
            let Some(x) = xs.get(base + c0..base + c0 + len) else { continue };
            mode[b] = Mode::Soft;
            // RV32: in assembly (two inputs a round, no constants spilled).
            #[cfg(atome_rv32)]
            {
                // SAFETY: x holds len <= SB floats, xb[b] SB words.
                if !unsafe { super::soft_rv::block_words(x.as_ptr(), x.len().min(SB), xb[b].as_mut_ptr()) } {
                    mode[b] = Mode::Float;
                }
            }
            #[cfg(not(atome_rv32))]
            for (&v, xw) in x.iter().zip(xb[b].iter_mut()) {
                match word(v) {
                    Some(u) => *xw = u,
                    None => mode[b] = Mode::Float,
                }
            }
        }
        let codes = &mut codes[..len];
        // Which vectors' blocks are soft, bit b for vector b.
        #[cfg(any(atome_t2_soft, atome_rv32))]
        let soft = mode.iter().enumerate().take(nb).fold(0u32, |s, (b, &m)| s | ((m == Mode::Soft) as u32) << b);
        for j in 0..rows {
            let start = j * cols + c0;
            // Trit2 from a byte boundary (bytes within `data`): the entries
            // straight from the bytes; `codes` is decoded only for the rare
            // paths below.
            let mut decoded = false;
            let tb = w.data.get(start / 4..start / 4 + len.div_ceil(4));
            // RV32, a full pass of soft vectors on whole Trit2 bytes: the
            // four sums in one loop straight from the bytes (no entries
            // built); entries only when a vector stops for the Rust step.
            #[cfg(atome_rv32)]
            if let (true, Packing::Trit2, 0, 0, Some(tb)) = (vecs_ok && (nb == SNB || nb == 1) && soft == (1 << nb) - 1, w.packing, start % 4, len % 4, tb) {
                // SAFETY: the four vectors have their sums in `out`
                // (vecs_ok), spaced ostride floats, and their words in
                // xb (SB words each, contiguous); tb holds len / 4 <= SB / 4
                // bytes, so every column named is below SB. (The sums
                // are +0.0 in the first block: set so above.)
                let r = unsafe {
                    let o = out.as_mut_ptr().add(b0 * ostride + j);
                    if nb == 1 {
                        super::soft_rv_vec4::run_vec1_t2(o, tb.as_ptr(), tb.len(), xb.as_ptr().cast::<i32>(), &TRIT2_V4, c0 == 0)
                    } else {
                        super::soft_rv_vec4::run_vec4_t2(o, ostride * 4, tb.as_ptr(), xb.as_ptr().cast::<i32>(), tb.len(), &TRIT2_V4, c0 == 0)
                    }
                };
                if r == 0 {
                    continue;
                }
                if r != 1 {
                    let ne = trit2_ents(tb, len, &mut ents);
                    let ents = &ents[..ne.min(SB)];
                    let col = (r >> 2) as usize - 1;
                    let k = ents.iter().position(|&en| ent_col(en) == col).unwrap_or(ents.len());
                    finish_vecs(w, start, codes, &mut decoded, xs, xstride, b0, c0, len, j, out, ostride, ents, &xb[..nb], (r & 3) as usize, k);
                    continue;
                }
            }
            let ne = if let (Packing::Trit2, 0, Some(tb)) = (w.packing, start % 4, tb) {
                trit2_ents(tb, len, &mut ents)
            } else {
                decode(w, start, codes);
                decoded = true;
                let mut ne = 0;
                for (k, &c) in codes.iter().enumerate() {
                    if c != 0 {
                        if let Some(en) = ents.get_mut(ne) {
                            *en = ent(k, c < 0);
                        }
                        ne += 1;
                    }
                }
                ne
            };
            let ents = &ents[..ne.min(SB)];
            // RV32, a full pass of soft vectors: the four sums in one loop
            // (one entry load and decode for four steps); a vector stopped
            // by a case for the Rust step is finished here vector by vector.
            #[cfg(atome_rv32)]
            if vecs_ok && !general && !ents.is_empty() && nb == SNB && soft == (1 << SNB) - 1 {
                let n = ents.len();
                // SAFETY: the four vectors have their sums in `out`
                // (vecs_ok), spaced ostride floats, and their words in
                // xb (SB words each, contiguous); ents[0..n] are entries
                // built above (column < SB), n >= 1.
                let r = unsafe {
                    let o = out.as_mut_ptr().add(b0 * ostride + j);
                    super::soft_rv_vec4::run_vec4(o, ostride * 4, ents.as_ptr().add(n), xb.as_ptr().cast::<i32>(), -(n as i32))
                };
                if r == 0 {
                    continue;
                }
                if r != 1 {
                    finish_vecs(w, start, codes, &mut decoded, xs, xstride, b0, c0, len, j, out, ostride, ents, &xb[..], (r & 3) as usize, n - (r >> 2) as usize);
                    continue;
                }
            }
            let mut bn = 0;
            while bn < nb {
                // Thumb-2 and RV32: the assembly loop runs the vectors' sums in a row
                // while it can; vector bn is then left to the code below,
                // or finished here from where the loop stopped.
                #[cfg(any(atome_t2_soft, atome_rv32))]
                if vecs_ok && !general && !ents.is_empty() {
                    let n = ents.len();
                    // SAFETY: vectors bn..nb have their sums in `out`
                    // (vecs_ok), spaced ostride floats, and their words in
                    // xb[bn..nb] (SB words each, contiguous); ents[0..n] are
                    // entries built above (column < SB), n >= 1, nb > bn.
                    let r = unsafe {
                        let o = out.as_mut_ptr().add((b0 + bn) * ostride + j);
                        let words = xb.as_ptr().add(bn).cast::<i32>();
                        asm_run_vecs(o, nb - bn, ents.as_ptr().add(n), words, soft >> bn, ostride * 4, -(n as i32))
                    };
                    let (lo, hi) = (r as i32, (r >> 32) as u32);
                    bn += (hi >> 16) as usize;
                    if lo & 63 != 0 {
                        let b = bn.min(SNB - 1);
                        bn += 1;
                        let mut st = [lo & !63, hi as i16 as i32];
                        let done = run_words_from(ents, &xb[b], &mut st, n - (lo & 63) as usize);
                        let Some(o) = out.get_mut((b0 + b) * ostride + j) else { continue };
                        if let Some(k) = acc_end(o, ents, st, done) {
                            let base = (b0 + b) * xstride + c0;
                            *o = block_float(w, start, codes, &mut decoded, *o, k, xs.get(base..base + len).unwrap_or(&[]));
                        }
                        continue;
                    }
                    if bn >= nb {
                        break;
                    }
                }
                let b = bn.min(SNB - 1);
                bn += 1;
                let Some(o) = out.get_mut((b0 + b) * ostride + j) else { continue };
                let base = (b0 + b) * xstride + c0;
                if mode[b] == Mode::Soft && !general {
                    // The common case first, the rare paths out of line
                    // (fewer instructions of glue per row block and vector).
                    if let Some(over) = acc_block(o, ents, &xb[b]) {
                        if let Some(k) = over {
                            // Overflow at column k: the float add from there on.
                            *o = block_float(w, start, codes, &mut decoded, *o, k, xs.get(base..base + len).unwrap_or(&[]));
                        }
                        continue;
                    }
                }
                let x = xs.get(base..base + len).unwrap_or(&[]);
                *o = match (mode[b], unpack(*o)) {
                    (Mode::Skip, _) => continue,
                    (Mode::Soft, Some(a)) if general => run_general(a, codes, x),
                    // Infinite or NaN inputs, or an accumulator outside the
                    // words' range (infinite, NaN, below 2^(WB-127)).
                    _ => block_float(w, start, codes, &mut decoded, *o, 0, x),
                };
            }
        }
        c0 += len;
    }
    for b in 0..nb {
        for j in 0..rows {
            if let Some(o) = out.get_mut((b0 + b) * ostride + j) {
                // (sf::mul: the exact integer multiply where it is faster.)
                *o = super::sf::mul(*o, w.scale);
            }
        }
    }
}

/// Adds a row block's entries to the running sum `*o` through the word
/// loop: Some(None) when all were added, Some(Some(k)) when the add at
/// column k overflows (`*o` then holds the sum before it), None when `*o`
/// is not one of the loop's accumulators (see [`acc_words`]; unchanged).
#[inline(always)]
fn acc_block(o: &mut f32, ents: &[u8], x: &[i32; SB]) -> Option<Option<usize>> {
    // Thumb-2 and RV32: the assembly loop unpacks and packs the sum itself.
    #[cfg(any(atome_t2_soft, atome_rv32))]
    if !ents.is_empty() {
        let n = ents.len();
        // SAFETY: ents[0..n] are entries built by soft_pass (column < SB,
        // so the words read are x's), n >= 1, o is one float.
        let r = unsafe { asm_run_acc(o, -(n as i32), ents.as_ptr().add(n), x) };
        let (lo, hi) = (r as i32, (r >> 32) as i32);
        if lo & 63 == 0 {
            return if hi == 0 { Some(None) } else { None };
        }
        let mut st = [lo & !63, hi];
        let done = run_words_from(ents, x, &mut st, n - (lo & 63) as usize);
        return Some(acc_end(o, ents, st, done));
    }
    let mut st = acc_words(*o)?;
    let done = run_words_fast(ents, x, &mut st);
    Some(acc_end(o, ents, st, done))
}

/// The end of [`acc_block`]: the sum into `*o`, and the column of the
/// entry `done` when it is one (the add that overflowed).
#[inline(always)]
fn acc_end(o: &mut f32, ents: &[u8], st: [i32; 2], done: usize) -> Option<usize> {
    *o = pack(Soft { m: st[0] >> 6, e: st[1] + WB });
    ents.get(done).map(|&en| ent_col(en))
}

/// The vectors of a pass (their words `xb`: four, or one) after an RV32
/// loop over them stopped at entry k for vector `stop`: vectors below it
/// from entry k + 1, the others from entry k, each through [`acc_block`]
/// (the float add from an overflow on).
#[cfg(atome_rv32)]
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn finish_vecs(
    w: &Tensor, start: usize, codes: &mut [i8], decoded: &mut bool, xs: &[f32], xstride: usize, b0: usize, c0: usize, len: usize, j: usize,
    out: &mut [f32], ostride: usize, ents: &[u8], xb: &[[i32; SB]], stop: usize, k: usize,
) {
    for (b, x) in xb.iter().enumerate() {
        let from = if b < stop { k + 1 } else { k };
        let Some(rest) = ents.get(from..) else { continue };
        let Some(o) = out.get_mut((b0 + b) * ostride + j) else { continue };
        let col = match acc_block(o, rest, x) {
            Some(None) => continue,
            Some(Some(col)) => col,
            // (Not reached: the loop packed a valid sum.)
            None => rest.first().map_or(len, |&en| ent_col(en)),
        };
        let base = (b0 + b) * xstride + c0;
        *o = block_float(w, start, codes, decoded, *o, col, xs.get(base..base + len).unwrap_or(&[]));
    }
}

/// Per Trit2 byte, its entries for the RV32 four-vector loop on bytes
/// (soft_rv_vec4.rs `run_vec4_t2`): the first in the top byte, each its column
/// in the byte * 4 | 2 | negate << 7 (never zero, so a zero byte ends
/// them), the unused low bytes zero.
#[cfg(atome_rv32)]
static TRIT2_V4: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let (mut e, mut sh, mut p) = (0u32, 24, 0);
        while p < 4 {
            let c = (b >> (2 * p)) & 3;
            if c == 1 || c == 3 {
                e |= ((p * 4 + 2) as u32 | ((c == 3) as u32) << 7) << sh;
                sh -= 8;
            }
            p += 1;
        }
        t[b] = e;
        b += 1;
    }
    t
};

/// A running sum as the loop's accumulator [m6, e - WB] (see
/// [`step::run_words`]): either zero, or a normal number with e >= WB; None
/// otherwise (the float add takes the block).
#[inline(always)]
fn acc_words(v: f32) -> Option<[i32; 2]> {
    let b = v.to_bits();
    if b << 1 == 0 {
        return Some([0, -WB]);
    }
    let f = ((b >> 23) & 0xff) as i32;
    if f < WB || f == 0xff {
        return None;
    }
    let m = ((b & 0x7f_ffff) | 1 << 23) as i32;
    Some([if (b as i32) < 0 { -m } else { m } << 6, f - WB])
}

/// The float loop's terms of a row block from column k on, onto `acc`
/// (the rare paths of [`soft_pass`]); decodes the block's codes first
/// unless that was done.
#[cold]
#[inline(never)]
fn block_float(w: &Tensor, start: usize, codes: &mut [i8], decoded: &mut bool, acc: f32, k: usize, x: &[f32]) -> f32 {
    if !*decoded {
        decode(w, start, codes);
        *decoded = true;
    }
    float_block(acc, codes.get(k..).unwrap_or(&[]), x.get(k..).unwrap_or(&[]))
}

/// Per Trit2 byte (four weights, low bits first: 01 +1, 11 -1, else 0):
/// its entries ([`ent`] of its position) as the bytes of a word, first in
/// the low byte, and in bits 8.. of [`TRIT2_N`] their count.
const TRIT2_ENTS: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let (mut e, mut n, mut p) = (0u32, 0u32, 0);
        while p < 4 {
            let c = (b >> (2 * p)) & 3;
            if c == 1 || c == 3 {
                e |= ((p << ENT_COL) as u32 | ((c == 3) as u32) << ENT_NEG) << (8 * n);
                n += 1;
            }
            p += 1;
        }
        t[b] = e;
        b += 1;
    }
    t
};

/// The number of nonzero weights in a Trit2 byte.
const TRIT2_N: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let mut p = 0;
        while p < 4 {
            let c = (b >> (2 * p)) & 3;
            t[b] += (c == 1 || c == 3) as u8;
            p += 1;
        }
        b += 1;
    }
    t
};

/// [`TRIT2_ENTS`] and [`TRIT2_N`] side by side: the one copy in flash,
/// read by [`trit2_ents`] and by the Thumb-1 loop (soft_t1.rs), which
/// takes its address.
#[repr(C)]
pub(super) struct Trit2Tabs {
    /// [`TRIT2_ENTS`].
    pub ents: [u32; 256],
    /// [`TRIT2_N`].
    pub n: [u8; 256],
}

static TRIT2_TABS: Trit2Tabs = Trit2Tabs { ents: TRIT2_ENTS, n: TRIT2_N };

/// The entries of whole Trit2 bytes into `ents` from index 0, as
/// [`trit2_ents`] builds them (byte q's entries + q * 0x20 in each lane,
/// four bytes stored per byte, the count advanced by its number of nonzero
/// weights), in the core's assembly: Thumb-1 on Cortex-M0 (soft_t1.rs:
/// 15.5 instructions a byte; 27 when inlined in Rust, where its constants
/// were spilled), Thumb-2 on the other Arm cores without an FPU
/// (soft_t2.rs: 9 a byte); returns the count.
#[cfg(atome_arm_soft)]
fn trit2_ents_asm(bytes: &[u8], ents: &mut [u8; SB + 4], tabs: &Trit2Tabs) -> usize {
    // At most SB / 4 bytes: every store (count <= 4q, four bytes) stays
    // within the SB + 4 entries.
    let bytes = &bytes[..bytes.len().min(SB / 4)];
    if bytes.is_empty() {
        return 0;
    }
    // SAFETY: `bytes` is readable for its length (>= 1), the stores stay in
    // `ents` (above; on Armv7-M word stores at any byte offset, which those
    // cores take), `tabs` is the 1,280-byte table pair; the routine touches
    // nothing else and keeps the callee-saved registers (AAPCS).
    unsafe { step::asm::trit2_ents(bytes.as_ptr(), bytes.len(), ents.as_mut_ptr(), tabs) }
}

/// The entries ([`ent`]) of the Trit2 weights in `bytes` (the
/// block's len <= SB weights from a byte boundary: len.div_ceil(4) bytes),
/// four weights a byte through [`TRIT2_ENTS`]; returns their count.
// (Out of line on the Thumb-2 loop's cores, where soft_pass is short of
// registers: fewer instructions per row block there. Inlined elsewhere:
// out of line costs M0 and riscv32 more than it saves.)
#[cfg_attr(atome_t2_soft, inline(never))]
#[cfg_attr(not(atome_t2_soft), inline(always))]
fn trit2_ents(bytes: &[u8], len: usize, ents: &mut [u8; SB + 4]) -> usize {
    let (full, part) = bytes.split_at((len / 4).min(bytes.len()));
    // Column << ENT_COL of the byte's first weight, in every byte lane
    // (each lane stays below 256: column <= 31): kx.
    #[cfg(not(atome_arm_soft))]
    let (mut ne, mut kx) = (0, 0u32);
    // The Arm cores without an FPU: the whole bytes in assembly.
    #[cfg(atome_arm_soft)]
    let (full, mut ne, mut kx) = (&[] as &[u8], trit2_ents_asm(full, ents, &TRIT2_TABS), (full.len() as u32).wrapping_mul(KX));
    let mut put = |b: usize, ne: &mut usize| {
        let e = TRIT2_TABS.ents[b & 255].wrapping_add(kx);
        // ne <= 4q < SB for byte q, so the four bytes fit.
        let i = *ne & (SB - 1);
        ents[i..i + 4].copy_from_slice(&e.to_le_bytes());
        *ne += TRIT2_TABS.n[b & 255] as usize;
        kx = kx.wrapping_add(KX);
    };
    for &b in full {
        put(b as usize, &mut ne);
    }
    if let Some(&b) = part.first() {
        // The last, partial byte: its weights past len are the next block's.
        put(b as usize & ((1 << (2 * (len % 4))) - 1), &mut ne);
    }
    ne
}
