//! The q15 forward pass (docs/Q15.md#the-forward-pass), lean plan: one
//! layer at a time over every position of the window, one position at a
//! time within a layer. Every row has its own exponent, so this order gives
//! the same bits as any other (the numpy reference's cached and lean senses).
use super::arith::*;
use super::params::{Area, LayerQ, PSrc, PVec, Scale, Vals};
use crate::format::{Model, Packing, Tensor};
use crate::forward::Tokens;
use crate::kernels::isa::Accel;
#[cfg(atome_x86)]
use crate::kernels::q15::conv::{conv5_avx2, Taps};
#[cfg(atome_thumb2)]
use crate::kernels::q15::conv_t2::{conv5_t2, Taps5};
#[cfg(atome_armv6m)]
use crate::kernels::q15::{conv_t1::conv5_t1, has_code10, Taps5};
use crate::kernels::q15::norm::row_stats;
use crate::kernels::q15::quant::{or_abs, rshr_sat};
use crate::kernels::q15::{dot_q, matvec_q, matvec_q_multi_checked, trit2_no_code10, MvJobQ};
use crate::math::lnf;

/// The buffers of one call (all caller-owned; see [`super::Q15Runner`]).
pub struct Bufs<'w> {
    /// Residual rows, S x D, and their exponents.
    pub x: &'w mut [i16],
    /// Exponents of x.
    pub ex: &'w mut [i16],
    /// Keys of the current layer, S x DH.
    pub k: &'w mut [i16],
    /// Their exponents.
    pub ek: &'w mut [i16],
    /// Values of the current layer, S x D.
    pub v: &'w mut [i16],
    /// Their exponents.
    pub ev: &'w mut [i16],
    /// Normalized rows, a ring of K.
    pub ring: &'w mut [i16],
    /// Their exponents.
    pub ering: &'w mut [i16],
    /// The query of the mixed position, DH.
    pub q: &'w mut [i16],
    /// The sparse pathway's output, D.
    pub sparse: &'w mut [i16],
    /// SSM hidden mantissas, D.
    pub hs: &'w mut [i32],
    /// Matvec outputs (keys, values, router, query: DH + D + 3 + DH) and row temporaries.
    pub mv: &'w mut [i32],
    /// Attention slots: index, score (low, high), probability; 4 x TOP_K.
    pub slots: &'w mut [i32],
    /// What the logits area cannot hold of one layer's tanh(a), gamma, beta
    /// and SSM gain (D int32 each; see [`super::param_ints`]).
    pub pa: &'w mut [i32],
    /// Router entropies of the last position, L binary32 bit patterns.
    pub ent: &'w mut [i32],
}

/// Runs `$body` with `$i` bound to an int32 iterator over a [`Vals`]: one
/// copy of the loop per representation, each a plain slice loop.
macro_rules! with_ints {
    ($v:expr, |$i:ident| $body:expr) => {
        match $v {
            Vals::Bits(s) => {
                let $i = s.iter().map(|f| f.to_bits() as i32);
                $body
            }
            Vals::Ints(s) => {
                let $i = s.iter().copied();
                $body
            }
        }
    };
}

/// The block's kernels as out-of-line functions, each compiled twice on
/// x86-64: once for the baseline and once with AVX2, where LLVM turns their
/// integer loops into 8-lane ones (integer results: the same bits by
/// construction). `name::call(accel, ..)` picks the copy; elsewhere there
/// is one copy, as before.
macro_rules! kernel {
    ($name:ident = $body:ident $(::<$g:literal>)? ($($a:ident : $t:ty),* $(,)?) -> $r:ty) => {
        #[allow(clippy::too_many_arguments)]
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[inline(never)]
            pub(super) fn port($($a: $t),*) -> $r {
                $body$(::<$g>)?($($a),*)
            }
            /// # Safety
            /// The CPU must have AVX2.
            #[cfg(atome_x86)]
            #[target_feature(enable = "avx2")]
            #[inline(never)]
            pub(super) unsafe fn avx2($($a: $t),*) -> $r {
                $body$(::<$g>)?($($a),*)
            }
            #[inline(always)]
            pub(super) fn call(acc: Accel, $($a: $t),*) -> $r {
                #[cfg(atome_x86)]
                if acc.avx2() {
                    // SAFETY: `Accel::avx2` is true only when cpuid and
                    // xgetbv showed AVX2 and the OS saving the YMM state.
                    return unsafe { avx2($($a),*) };
                }
                let _ = acc;
                port($($a),*)
            }
        }
    };
}

kernel!(k_layer_norm = layer_norm::<false>(xm: &[i16], ex: i32, g: &PSrc, b: &PSrc, w: &mut [i32], out: &mut [i16]) -> i32);
kernel!(k_ssm_step = ssm_step::<false>(sb: &PSrc, tanh: Vals, hs: &mut [i32], ehs: i32, h: &[i16], eh: i32) -> i32);
kernel!(k_conv_sums = conv_sums(avx2: bool, clean: bool, conv: &Tensor, ring: &[i16], ering: &[i16], t: usize, d: usize, out: &mut [i32]) -> (u32, i32));
kernel!(k_mix = mix::<false>(p: &LayerQ, st: State, lm: &mut [i32], l: (u32, i32), sp: (&mut [i16], i32), r: [i32; 3], xr: &mut [i16], ex: i32) -> i32);
kernel!(k_attention_top = attention_top(dh: usize, p: &LayerQ, t: usize, eq: i32, top_k: usize, b: &mut Bufs) -> Option<usize>);
kernel!(k_attention_sum = attention_sum(top_k: usize, keff: usize, b: &mut Bufs) -> Option<i32>);
kernel!(k_quant_into = quant_into(src: &[i32], e: i32, out: &mut [i16]) -> i32);

/// quant15 of exact integers `src` at exponent e into `out`; the exponent.
///
/// (Here and below a quantization needs only bitlen(max |v|), which the
/// bitwise OR of the magnitudes has too: the first passes OR them, two
/// instructions where a 64-bit max takes five.)
fn quant_into(src: &[i32], e: i32, out: &mut [i16]) -> i32 {
    let mx = or_abs(src);
    quant_into_mx(src, mx, e, out)
}

/// [`quant_into`] with the OR of the magnitudes known.
#[inline(always)]
fn quant_into_mx(src: &[i32], mx: u32, e: i32, out: &mut [i16]) -> i32 {
    let s = qshift(u64::from(mx), QA);
    quant_at(src, s, out);
    qexp(u64::from(mx), e, QA)
}

/// The mantissas of quant15 at shift s = bitlen(max |src|) - 15 into `out`.
#[inline(always)]
fn quant_at(src: &[i32], s: i32, out: &mut [i16]) {
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


/// Exact dot product of row j of W with h (the head's fallback when its
/// rows cannot be cut at a byte boundary).
fn row_dot(w: &Tensor, j: usize, h: &[i16]) -> i64 {
    let mut codes = [0i8; 32];
    let mut acc = 0i64;
    let mut c0 = 0;
    while c0 < w.cols {
        let len = (w.cols - c0).min(codes.len());
        w.decode(j * w.cols + c0, &mut codes[..len]);
        for (i, &c) in codes[..len].iter().enumerate() {
            acc += i64::from(i32::from(c) * i32::from(h.get(c0 + i).copied().unwrap_or(0)));
        }
        c0 += len;
    }
    acc
}

/// Rows j0..j0+n of W as a tensor of their own, when row j0 starts on a
/// whole unit of the packing (4 Trit2 codes a byte, 5 Base3, 8 P3 in 3 bytes).
fn rows_of<'a>(w: &Tensor<'a>, j0: usize, n: usize) -> Option<Tensor<'a>> {
    let first = j0.checked_mul(w.cols)?;
    let unit = match w.packing {
        Packing::Trit2 => 4,
        Packing::Base3 => 5,
        Packing::P3 => 8,
    };
    if first % unit != 0 {
        return None;
    }
    let data = w.data.get(w.packing.payload_len(first)..).unwrap_or(&[]);
    Some(Tensor { data, scale: w.scale, rows: n, cols: w.cols, packing: w.packing })
}

/// LayerNorm of the block (xm, ex) with (g, b) into `out`; its exponent
/// (docs/Q15.md#layernorm). `w` (D values) is scratch. (`GENERAL`: the
/// int64 path for every row; the tests compare the two.)
#[inline(always)]
fn layer_norm<const GENERAL: bool>(xm: &[i16], ex: i32, g: &PSrc, b: &PSrc, w: &mut [i32], out: &mut [i16]) -> i32 {
    let d = xm.len() as i64;
    if d == 0 {
        return E_ZERO;
    }
    // |S| <= D * 32767 < 2^31 and m^2 < 2^30 (docs/Q15.md#integer-widths).
    let (s32, q, lo, hi) = row_stats(xm);
    let s = i64::from(s32);
    let n = d * q - s * s;
    const LIM: i64 = 1 << 62;
    let base = 21475 * d * d;
    let k = 31 + 2 * ex;
    let eps = if ex == E_ZERO {
        LIM
    } else if k >= 0 {
        rshr(base, k.min(63))
    } else {
        let left = (-k).min(62);
        if base > (LIM >> left) {
            LIM
        } else {
            base << left
        }
    };
    let n2 = n + eps;
    let inv = 1.0f32 / crate::math::sqrtf(n2.max(1) as f32);
    let (mi, ei) = f32_parts(inv);
    // c = D m - S is increasing in m: its largest magnitude, and that of
    // its rounding cm, are at the row's extremes, so both grids are known
    // before the per-element pass.
    let (chi, clo) = (d * i64::from(hi) - s, d * i64::from(lo) - s);
    let sc = qshift(chi.unsigned_abs().max(clo.unsigned_abs()), QA);
    let (im, ie) = quant_scalar(mi, ei, QA);
    let mz = rshr(chi, sc).unsigned_abs().max(rshr(clo, sc).unsigned_abs()) * im as u64;
    let sz = qshift(mz, QA);
    let ze = if mz == 0 { E_ZERO } else { sc + ie + sz };
    let (e1, e2) = (ecomb(g.e, ze), b.e);
    let a = align_at(&[top(e1, 30), top(e2, QA as i32)], LN_ROOM);
    let (s1, s2) = (ashift(a, e1), ashift(a, e2));
    let mx = if !GENERAL && d <= 16383 && sc >= -15 && sz >= -15 {
        // Each rshr as (v * M + R) >> S with per-row constants (M = 2^-s
        // for a left shift), D and S folded into the first: every true
        // value is an int32 (|c| < 2^30 for D < 2^14; wrapping products
        // whose true result fits are exact).
        let rs = |s: i32| -> (i32, i32, u32) {
            if s <= 0 {
                (1 << -s, 0, 0)
            } else {
                let s = s.min(31);
                (1, 1 << (s - 1), s as u32)
            }
        };
        let (m1, r1, t1) = rs(sc);
        let (m2, r2, t2) = rs(sz);
        let (_, r3, t3) = rs(s1.max(1));
        let (m4, r4, t4) = rs(s2);
        let c1 = [(d as i32).wrapping_mul(m1), r1.wrapping_sub(s32.wrapping_mul(m1)), (im as i32) * m2, r2, r3, m4, r4];
        let t = [t1, t2, t3, t4];
        // Cortex-M0: three passes in asm (kernels::q15::norm).
        #[cfg(atome_armv6m)]
        if let (Some(gv), Some(bv), Some(wr)) = (g.vals(), b.vals(), w.get_mut(..xm.len())) {
            let ((gp, gn), (bp, bn)) = (gv.words(), bv.words());
            if gn >= wr.len() && bn >= wr.len() {
                // SAFETY: gp and bp address gn, bn >= wr.len() int32.
                if let Some(mx) = unsafe { crate::kernels::q15::norm::ln_passes_t1(xm, gp, bp, c1, t, wr) } {
                    quant_at(w, qshift(u64::from(mx), QA), out);
                    return qexp(u64::from(mx), a, QA);
                }
            }
        }
        // Armv7E-M: the first pass, then the affine pass by SMMULR and
        // SMMLAR (kernels::q15::norm).
        #[cfg(atome_dsp)]
        if let (Some(gv), Some(bv), Some(wr)) = (g.vals(), b.vals(), w.get_mut(..xm.len())) {
            let ((gp, gn), (bp, bn)) = (gv.words(), bv.words());
            if gn >= wr.len() && bn >= wr.len() {
                let [dm, c, im, r2, ..] = c1;
                if !crate::kernels::q15::norm::ln_first_t2(xm, [dm, c, im, r2], [t[0], t[1]], wr) {
                    for (o, &m) in wr.iter_mut().zip(xm) {
                        let cm = i32::from(m).wrapping_mul(dm).wrapping_add(c) >> t[0];
                        *o = (cm.wrapping_mul(im) + r2) >> t[1];
                    }
                }
                // SAFETY: gp and bp address gn, bn >= wr.len() int32, word
                // aligned (i32 or f32 slices).
                if let Some(mx) = unsafe { crate::kernels::q15::norm::ln_affine_dsp(wr, gp, bp, t[2], t[3], c1[5]) } {
                    quant_at(w, qshift(u64::from(mx), QA), out);
                    return qexp(u64::from(mx), a, QA);
                }
            }
        }
        match (g.vals(), b.vals()) {
            // (int32 views of both kinds: one copy of the loops.)
            (Some(gv), Some(bv)) => ln_sums(xm, gv.ints().iter().copied(), bv.ints().iter().copied(), c1, t, w),
            _ => ln_sums(xm, (0..xm.len()).map(|i| g.m(i)), (0..xm.len()).map(|i| b.m(i)), c1, t, w),
        }
    } else {
        // (Any D and grid: the same integers in int64.)
        let mut mx = 0u32;
        for (i, (o, &m)) in w.iter_mut().zip(xm).enumerate() {
            let cm = rshr(d * i64::from(m) - s, sc);
            let zm = rshr(cm * im, sz);
            let v = rshr(i64::from(g.m(i)) * zm, s1) + rshr(i64::from(b.m(i)), s2);
            // |v| < 2^30.
            mx |= v.unsigned_abs() as u32;
            *o = v as i32;
        }
        mx
    };
    quant_at(w, qshift(u64::from(mx), QA), out);
    qexp(u64::from(mx), a, QA)
}

/// LayerNorm's grid: 29 bits below its largest term's bound.
const LN_ROOM: i32 = 29;

/// LayerNorm's per-element pass: cm = (m D' + C) >> t0, zm = (cm I + R2)
/// >> t1, W = ((g zm + R3) >> t2) + ((b B + R4) >> t3) into `w`; OR of |W|.
#[inline(always)]
fn ln_sums(xm: &[i16], gi: impl Iterator<Item = i32>, bi: impl Iterator<Item = i32>, [dm, c, im, r2, r3, m4, r4]: [i32; 7], [t0, t1, t2, t3]: [u32; 4], w: &mut [i32]) -> u32 {
    // On Armv7-M and later, two passes, each with few enough constants to
    // stay in registers (one pass spills about ten loads an element there;
    // on Armv6-M and RV32 one pass is the faster: S3 q15 M4F -49K, M3
    // -33K, M0 +26K, RV32 +33K instructions with two).
    if !cfg!(atome_thumb2) {
        let mut mx = 0u32;
        for ((o, &m), (gm, bm)) in w.iter_mut().zip(xm).zip(gi.zip(bi)) {
            let cm = i32::from(m).wrapping_mul(dm).wrapping_add(c) >> t0;
            let zm = (cm.wrapping_mul(im) + r2) >> t1;
            let v = ((gm * zm + r3) >> t2) + ((bm * m4 + r4) >> t3);
            mx |= v.unsigned_abs();
            *o = v;
        }
        return mx;
    }
    #[cfg(atome_thumb2)]
    let done = w.get_mut(..xm.len()).is_some_and(|wr| crate::kernels::q15::norm::ln_first_t2(xm, [dm, c, im, r2], [t0, t1], wr));
    #[cfg(not(atome_thumb2))]
    let done = false;
    if !done {
        for (o, &m) in w.iter_mut().zip(xm) {
            let cm = i32::from(m).wrapping_mul(dm).wrapping_add(c) >> t0;
            *o = (cm.wrapping_mul(im) + r2) >> t1;
        }
    }
    ln_affine(w, gi, bi, [r3, m4, r4], [t2, t3])
}

/// LayerNorm's second pass on Armv7-M: W = ((g zm + R3) >> t2) + ((b B +
/// R4) >> t3) in place; OR of |W|. (Out of line: alone, its constants stay
/// in registers whatever the caller's code around it.)
#[inline(never)]
fn ln_affine(w: &mut [i32], gi: impl Iterator<Item = i32>, bi: impl Iterator<Item = i32>, [r3, m4, r4]: [i32; 3], [t2, t3]: [u32; 2]) -> u32 {
    let mut mx = 0u32;
    for (o, (gm, bm)) in w.iter_mut().zip(gi.zip(bi)) {
        let v = ((gm * *o + r3) >> t2) + ((bm * m4 + r4) >> t3);
        mx |= v.unsigned_abs();
        *o = v;
    }
    mx
}

/// Q30 router probabilities (3) from the exact router sums `acc3` of a
/// normalized row at exponent eh.
#[inline(never)]
fn router(sc: Scale, acc3: &[i32], eh: i32) -> [i32; 3] {
    let mut acc = [0i32; 3];
    for (a, &m) in acc.iter_mut().zip(acc3) {
        *a = m;
    }
    let mut r = [0i32; 3];
    softmax_q(|j| acc.get(j).map_or(0, |&a| i64::from(a)), sc.m, ecomb_plain(sc.e, eh), &mut r);
    r
}

/// A plain exponent sum (as the contract writes `se + e_h`): any E_ZERO
/// operand only ever meets zero mantissas.
#[inline(always)]
fn ecomb_plain(a: i32, b: i32) -> i32 {
    a + b
}

/// The model's one window run: the residual row n-1 after every layer, with
/// its exponent. None when the model cannot run in q15 (a P3 model wider than
/// the int32 matvec's bound).
pub fn run(model: &Model, toks: &Tokens, n: usize, b: &mut Bufs, logits: &mut [f32]) -> Option<()> {
    let dims = model.dims;
    let (d, kk) = (dims.d_model, dims.kernel_size);
    // (Never so for a loaded model; checked here so that no division or
    // chunking below can panic.)
    if d == 0 || kk == 0 {
        return None;
    }
    if model.packing == Packing::P3 && (d > 7281 || kk > 7281) {
        return None;
    }
    // The parameter area out of `b` for the blocks (so that the layer's
    // vectors can be read while `b` is lent whole), and back on every exit.
    let pa = core::mem::take(&mut b.pa);
    let r = blocks(model, toks, n, b, &mut *pa, logits);
    b.pa = pa;
    r
}

/// The embedding and the blocks of [`run`], with the parameter area `pa`.
/// (Inlined: a frame of its own would add to the peak stack.)
#[inline(always)]
fn blocks(model: &Model, toks: &Tokens, n: usize, b: &mut Bufs, pa: &mut [i32], logits: &mut [f32]) -> Option<()> {
    let dims = model.dims;
    let (d, dh, kk, l_n) = (dims.d_model, dims.d_head, dims.kernel_size, dims.n_layers);
    let accel = Accel::detect();
    // Embedding.
    for t in 0..n {
        embed(&model.embed, toks.id(t, dims.vocab), t, b)?;
    }
    for l in 0..l_n {
        let bl = model.block(l);
        let p = LayerQ::new(&bl, d, dh);
        let last = l + 1 == l_n;
        // tanh(a), gamma, beta and the SSM gain of this layer as int32: in
        // the logits area as far as it goes (bit patterns: the logits are
        // written only after the last block), then in the int32 area.
        let mut areas = logits.chunks_exact_mut(d).map(Area::Bits).chain(pa.chunks_exact_mut(d).map(Area::Ints));
        let tanh = areas.next()?.fill(|c| tanh_q30(bl.ssm.a.get(c)));
        let pg = PSrc::new(p.g, areas.next());
        let pb = PSrc::new(p.b, areas.next());
        let psb = PSrc::new(p.sb, areas.next());
        let clean = conv_clean(&bl.conv, d);
        // Checked once per layer instead of at each position's matvec (only
        // the AVX2 shift decode needs it).
        let nc10 = accel.avx2() && [&bl.wk, &bl.wv, &bl.router, &bl.wq].into_iter().all(|w| trit2_no_code10(accel, w));
        for hs in b.hs.iter_mut() {
            *hs = 0;
        }
        let mut ehs = E_ZERO;
        for t in 0..n {
            let slot = t % kk;
            let mixes = !last || t + 1 == n;
            // LayerNorm into the ring.
            let eh = {
                let xr = b.x.get(t * d..(t + 1) * d)?;
                let ex = i32::from(*b.ex.get(t)?);
                let out = b.ring.get_mut(slot * d..(slot + 1) * d)?;
                k_layer_norm::call(accel, xr, ex, &pg, &pb, b.mv.get_mut(..d)?, out)
            };
            *b.ering.get_mut(slot)? = eh as i16;
            let h = b.ring.get(slot * d..(slot + 1) * d)?;
            ehs = k_ssm_step::call(accel, &psb, tanh, b.hs.get_mut(..d)?, ehs, h, eh);
            // Keys and values of this position, and at a mixing position
            // the router and the query: one matvec call, so that the
            // table kernels build their tables once for all these rows.
            {
                let (ok, r) = b.mv.split_at_mut_checked(dh)?;
                let (ov, r) = r.split_at_mut_checked(d)?;
                let (or, r) = r.split_at_mut_checked(3)?;
                let oq = r.get_mut(..dh)?;
                let (wk, wv, wr, wq) = (
                    MvJobQ { w: &bl.wk, out: ok, ostride: dh },
                    MvJobQ { w: &bl.wv, out: ov, ostride: d },
                    MvJobQ { w: &bl.router, out: or, ostride: 3 },
                    MvJobQ { w: &bl.wq, out: oq, ostride: dh },
                );
                // The last layer mixes only its last position, whose
                // attention reads the values of at most TOP_K keys: there
                // the value cache keeps the normalized rows instead, and
                // only the chosen ones become values (below).
                match (last, mixes) {
                    (false, true) => matvec_q_multi_checked(accel, &mut [wk, wv, wr, wq], h, d, 1, nc10),
                    (false, false) => matvec_q_multi_checked(accel, &mut [wk, wv], h, d, 1, nc10),
                    (true, true) => matvec_q_multi_checked(accel, &mut [wk, wr, wq], h, d, 1, nc10),
                    (true, false) => matvec_q_multi_checked(accel, &mut [wk], h, d, 1, nc10),
                }
            }
            let e = k_quant_into::call(accel, b.mv.get(..dh)?, eh, b.k.get_mut(t * dh..(t + 1) * dh)?);
            *b.ek.get_mut(t)? = e as i16;
            if last {
                b.v.get_mut(t * d..(t + 1) * d)?.copy_from_slice(b.ring.get(slot * d..(slot + 1) * d)?);
                *b.ev.get_mut(t)? = eh as i16;
            } else {
                let e = k_quant_into::call(accel, b.mv.get(dh..dh + d)?, eh, b.v.get_mut(t * d..(t + 1) * d)?);
                *b.ev.get_mut(t)? = e as i16;
            }
            if !mixes {
                continue;
            }
            let r = router(p.router, b.mv.get(dh + d..dh + d + 3)?, eh);
            if t + 1 == n {
                *b.ent.get_mut(l)? = entropy(r);
            }
            let eq = k_quant_into::call(accel, b.mv.get(dh + d + 3..2 * dh + d + 3)?, eh, b.q.get_mut(..dh)?);
            let keff = k_attention_top::call(accel, dh, &p, t, eq, dims.top_k, b)?;
            if last {
                // The chosen keys' values from their normalized rows, in
                // place (the same v_j = quant15(Wv h_j) as the other layers').
                for i in 0..keff {
                    let j = usize::try_from(*b.slots.get(i)?).ok()?;
                    let row = b.v.get_mut(j * d..(j + 1) * d)?;
                    let out = b.mv.get_mut(..d)?;
                    matvec_q_multi_checked(accel, &mut [MvJobQ { w: &bl.wv, out, ostride: d }], row, d, 1, nc10);
                    let e = k_quant_into::call(accel, b.mv.get(..d)?, i32::from(*b.ev.get(j)?), row);
                    *b.ev.get_mut(j)? = e as i16;
                }
            }
            let esp = k_attention_sum::call(accel, dims.top_k, keff, b)?;
            let (mxl, et) = k_conv_sums::call(accel, accel.avx2(), clean, &bl.conv, b.ring, b.ering, t, d, b.mv.get_mut(..d)?);
            let ex = i32::from(*b.ex.get(t)?);
            let st = State { hs: b.hs.get(..d)?, ehs };
            let e = k_mix::call(accel, &p, st, b.mv.get_mut(..d)?, (mxl, et), (b.sparse.get_mut(..d)?, esp), r, b.x.get_mut(t * d..(t + 1) * d)?, ex);
            *b.ex.get_mut(t)? = e as i16;
        }
    }
    Some(())
}

/// Row t of the residual: the embedding of `tok`.
#[inline(never)]
fn embed(w: &Tensor, tok: usize, t: usize, b: &mut Bufs) -> Option<()> {
    let d = w.cols;
    let em = Scale::of(w);
    let emm = em.m as i32;
    let tmp = b.mv.get_mut(..d)?;
    let mut codes = [0i8; 32];
    let mut c0 = 0;
    for part in tmp.chunks_mut(codes.len()) {
        let cs = codes.get_mut(..part.len())?;
        w.decode(tok * d + c0, cs);
        for (o, &c) in part.iter_mut().zip(cs.iter()) {
            // |w| <= 9, |sm| <= 32767: int32.
            *o = i32::from(c) * emm;
        }
        c0 += part.len();
    }
    let e = quant_into(tmp, em.e, b.x.get_mut(t * d..(t + 1) * d)?);
    *b.ex.get_mut(t)? = e as i16;
    Some(())
}

/// The router entropy (nats) of probabilities r (Q30), as binary32 bits.
#[inline(always)]
fn entropy(r: [i32; 3]) -> i32 {
    let mut hsum = 0.0f32;
    for &ri in &r {
        let v = to_f32(i64::from(ri), -30);
        if v >= f32::MIN_POSITIVE {
            hsum -= v * lnf(v);
        }
    }
    hsum.to_bits() as i32
}

/// One SSM step (docs/Q15.md#ssm-state-pathway) on the hidden mantissas
/// `hs` (exponent ehs) with the normalized row (h, eh); the new exponent.
/// (`GENERAL`: the sums without the usual shifts' fast loop.)
#[inline(always)]
fn ssm_step<const GENERAL: bool>(sb: &PSrc, tanh: Vals, hs: &mut [i32], ehs: i32, h: &[i16], eh: i32) -> i32 {
    let e1 = ecomb(ehs, -30);
    let e2 = ecomb(sb.e, eh);
    // Both terms rounded onto a grid 30 bits below the larger's bound (the
    // decay term shifts by 30 or more, the input term by 8 or more): each
    // below 2^30, the sum an int32 (docs/Q15.md#ssm-state-pathway).
    let a = align_at(&[top(e1, 60), top(e2, QP as i32 + QA as i32)], SSM_ROOM);
    let (s1, s2) = (ashift(a, e1).max(1) as u32, ashift(a, e2).max(1) as u32);
    #[cfg(atome_thumb2)]
    if let (false, 30..=32, 1..=32, Some(bv)) = (GENERAL, s1, s2, sb.vals()) {
        let ((tp, tn), (bp, bn)) = (tanh.words(), bv.words());
        if tn >= hs.len() && bn >= hs.len() {
            // SAFETY: tp and bp address tn, bn >= hs.len() int32 (the
            // caller's vectors), s1 in 30..=32, s2 in 1..=32.
            let mx = unsafe { crate::kernels::q15::ssm::ssm_sums_s(tp, bp, hs, h, s1, s2) };
            return ssm_norm(hs, mx, a);
        }
    }
    // Cortex-M0: the split products' loops (one per usual decay shift)
    // over int32 views of both vectors, compiled once each.
    if let (true, false, Some(bv)) = (NO_SMULL, GENERAL, sb.vals()) {
        if let Some(mx) = ssm_sums_m0(tanh.ints(), bv.ints(), hs, h, s1, s2) {
            return ssm_norm(hs, mx, a);
        }
    }
    let bits = |f: &f32| f.to_bits() as i32;
    let mx = match sb.vals() {
        Some(Vals::Bits(bs)) => match tanh {
            Vals::Bits(ts) => ssm_sums::<GENERAL>(ts.iter().map(bits), bs.iter().map(bits), hs, h, s1, s2),
            Vals::Ints(ts) => ssm_sums::<GENERAL>(ts.iter().copied(), bs.iter().map(bits), hs, h, s1, s2),
        },
        Some(Vals::Ints(bs)) => with_ints!(tanh, |ti| ssm_sums::<GENERAL>(ti, bs.iter().copied(), hs, h, s1, s2)),
        None => with_ints!(tanh, |ti| ssm_sums::<GENERAL>(ti, (0..h.len()).map(|c| sb.m(c)), hs, h, s1, s2)),
    };
    ssm_norm(hs, mx, a)
}

/// The SSM state renormalized to 30 bits after its sums (OR of |W| `mx`,
/// grid a); its exponent.
#[inline(always)]
fn ssm_norm(hs: &mut [i32], mx: u32, a: i32) -> i32 {
    let sh = qshift(u64::from(mx), QH);
    const LIM30: i32 = (1 << QH) - 1;
    if sh >= 1 {
        // |W| < 2^31: sh = 1, floor((W + 1) / 2) without the overflow.
        for hc in hs.iter_mut() {
            *hc = ((*hc >> 1) + (*hc & 1)).min(LIM30);
        }
    } else if sh < 0 {
        // (sh = 0, the sums already on 30 bits: nothing to do.)
        let n = (-sh).min(31) as u32;
        for hc in hs.iter_mut() {
            *hc <<= n;
        }
    }
    qexp(u64::from(mx), a, QH)
}

/// The SSM's grid: 30 bits below its larger term's bound.
const SSM_ROOM: i32 = 30;

/// The SSM sums W_c = rshr(T_c hs_c, s1) + rshr(b_c h_c, s2) into hs; OR
/// of |W|. (|T hs| < 2^60 with s1 >= 30, |b h| < 2^38 with s2 >= 8:
/// rshr_to32's bound.)
#[inline(always)]
fn ssm_sums<const GENERAL: bool>(ti: impl Iterator<Item = i32>, bi: impl Iterator<Item = i32>, hs: &mut [i32], h: &[i16], s1: u32, s2: u32) -> u32 {
    let mut mx = 0u32;
    if !GENERAL && s1 <= 32 && s2 <= 32 {
        // The usual shifts (s1 = 30 when the decay term is the larger):
        // rshr_hl's low-word case only, its branch out of the loop.
        let r = |v: i64, s: u32| rshr_hl_lo((v >> 32) as i32, v as u32, s);
        for ((hc, &hv), (t, bm)) in hs.iter_mut().zip(h).zip(ti.zip(bi)) {
            let v = r(mul64(t, *hc), s1) + r(mul64_16(bm, i32::from(hv)), s2);
            mx |= v.unsigned_abs();
            *hc = v;
        }
        return mx;
    }
    for ((hc, &hv), (t, bm)) in hs.iter_mut().zip(h).zip(ti.zip(bi)) {
        let v = rshr_to32(mul64(t, *hc), s1) + rshr_to32(mul64_16(bm, i32::from(hv)), s2);
        mx |= v.unsigned_abs();
        *hc = v;
    }
    mx
}

/// [`ssm_sums`] on Cortex-M0 (no 32 x 32 -> 64 multiply) for the usual
/// shifts, by 16-bit halves and int32 operations (|T|, |hs| <= 2^30: the
/// split's bound; |h| <= 32767); None for other shifts. The decay shifts
/// of the runs (30 to 32) as constants: their masks and shifts become
/// immediates, fewer values to spill.
#[inline(never)]
fn ssm_sums_m0(t: &[i32], b: &[i32], hs: &mut [i32], h: &[i16], s1: u32, s2: u32) -> Option<u32> {
    if !(1..=15).contains(&s2) {
        return None;
    }
    Some(match s1 {
        30 => ssm_sums_split::<14>(t, b, hs, h, s2),
        31 => ssm_sums_split::<15>(t, b, hs, h, s2),
        32 => ssm_sums_split::<16>(t, b, hs, h, s2),
        17..=29 => {
            let mut mx = 0u32;
            for ((hc, &hv), (&t, &bm)) in hs.iter_mut().zip(h).zip(t.iter().zip(b)) {
                let v = rshr_mul_split(t, *hc, s1 - 16).wrapping_add(rshr_mul16_split(bm, i32::from(hv), s2));
                mx |= v.unsigned_abs();
                *hc = v;
            }
            mx
        }
        _ => return None,
    })
}

/// [`ssm_sums_m0`]'s loops for a decay shift of 16 + K, in two passes
/// (fewer live values each).
#[inline(always)]
fn ssm_sums_split<const K: u32>(t: &[i32], b: &[i32], hs: &mut [i32], h: &[i16], s2: u32) -> u32 {
    let mut mx = 0u32;
    for (hc, &t) in hs.iter_mut().zip(t) {
        *hc = rshr_mul_split(t, *hc, K);
    }
    for ((hc, &hv), &bm) in hs.iter_mut().zip(h).zip(b) {
        let v = hc.wrapping_add(rshr_mul16_split(bm, i32::from(hv), s2));
        mx |= v.unsigned_abs();
        *hc = v;
    }
    mx
}

/// The exact conv sums of position t into `out` (D values; |L| <= 9 K 32767
/// fits an int32 for K <= 7281, which `run` checks): (max |L|, E_t).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn conv_sums(avx2: bool, clean: bool, conv: &Tensor, ring: &[i16], ering: &[i16], t: usize, d: usize, out: &mut [i32]) -> (u32, i32) {
    let kk = ering.len();
    if kk == 0 {
        // (run checks K >= 1.)
        return (0, E_ZERO);
    }
    let nt = kk.min(t + 1);
    // Ring row of tap k: (t - k) mod K; on Armv6-M, whose divisions are
    // library calls, stepped down from t mod K instead (S3 M0 -60K; the
    // cores that divide in hardware gain nothing from the branch).
    let slot0 = t % kk;
    let ring_row = |k: usize| {
        if cfg!(atome_armv6m) {
            if k <= slot0 {
                slot0 - k
            } else {
                slot0 + kk - k
            }
        } else {
            (t - k) % kk
        }
    };
    // Taps aligned to the largest exponent among them.
    let mut et = E_ZERO;
    for k in 0..nt {
        let ek = i32::from(ering.get(ring_row(k)).copied().unwrap_or(E_ZERO as i16));
        if ek != E_ZERO {
            et = if et == E_ZERO { ek } else { et.max(ek) };
        }
    }
    let mut mx = 0u32;
    const TAPS: usize = 16;
    if kk <= TAPS {
        // Each tap's row and shift once per position (-1: a zero row).
        let (mut rows, mut shs) = ([0usize; TAPS], [-1i32; TAPS]);
        for k in 0..nt {
            let row = ring_row(k);
            let ek = i32::from(ering.get(row).copied().unwrap_or(E_ZERO as i16));
            rows[k] = row * d;
            if ek != E_ZERO {
                shs[k] = et - ek;
            }
        }
        if conv.packing == Packing::Trit2 && kk == 5 {
            // K = 5 (the models' width; a zero or missing row's weights
            // masked to 0): one pass over the channels, each channel's ten
            // code bits read at once, its five taps summed in a register
            // (with AVX2: kernels::q15::conv, eight channels a step).
            let mut mask = 0u32;
            // A tap's rounding shift as (x + a) >> s (rshr; s = 0 keeps x;
            // s >= 16 rounds every int16 to 0, so 16 stands for more).
            let (mut a, mut sv) = ([0i32; 5], [0u32; 5]);
            for (k, &sh) in shs.iter().enumerate().take(nt) {
                if sh >= 0 {
                    mask |= 3 << (2 * k);
                    let s = sh.min(16) as u32;
                    sv[k] = s;
                    a[k] = (1 << s) >> 1;
                }
            }
            #[cfg(atome_x86)]
            if avx2 {
                let row = |k: usize| ring.get(rows[k]..rows[k] + d).unwrap_or(&[]);
                let taps = Taps { rows: [row(0), row(1), row(2), row(3), row(4)], a, s: sv, mask };
                // SAFETY: `avx2` comes from `Accel::avx2` (cpuid and xgetbv
                // showed AVX2).
                if let Some(mx) = unsafe { conv5_avx2(conv.data, &taps, out) } {
                    return (mx, et);
                }
            }
            let _ = avx2;
            #[cfg(atome_thumb2)]
            if sv.iter().all(|&s| s <= 1) {
                // (A missing tap's row is row 0, read and masked out.)
                let row = |k: usize| ring.get(rows[k]..rows[k] + d).unwrap_or(&[]);
                let shifted = sv.iter().enumerate().fold(0, |m, (k, &s)| m | s << k);
                let valid = (0..5).fold(0, |v, k| v | ((mask >> (2 * k)) & 1) << k);
                let taps = Taps5 { rows: [row(0), row(1), row(2), row(3), row(4)], shifted, valid };
                if conv5_t2(conv.data, &taps, out).is_some() {
                    return (or_abs(out), et);
                }
            }
            #[cfg(atome_armv6m)]
            if sv.iter().all(|&s| s <= 1) {
                // (A missing tap's row is not read.)
                let row = |k: usize| ring.get(rows[k]..rows[k] + d).unwrap_or(&[]);
                let shifted = sv.iter().enumerate().fold(0, |m, (k, &s)| m | s << k);
                let valid = (0..5).fold(0, |v, k| v | ((mask >> (2 * k)) & 1) << k);
                let taps = Taps5 { rows: [row(0), row(1), row(2), row(3), row(4)], shifted, valid };
                if conv5_t1(conv.data, &taps, clean, out).is_some() {
                    return (or_abs(out), et);
                }
            }
            let _ = clean;
            let shifted = sv.iter().any(|&s| s > 0);
            let row = |k: usize| ring.get(rows[k]..rows[k] + d).unwrap_or(&[]);
            let xs = out.iter_mut().zip(row(0)).zip(row(1)).zip(row(2)).zip(row(3)).zip(row(4));
            let (data, mut bit) = (conv.data, 0usize);
            // (A missing row is empty: the zip then stops early, and the
            // general path below does the channels.)
            if xs.len() == d {
                const W: [i32; 4] = [0, 1, 0, -1];
                let w = |b: u32, k: u32| W[((b >> (2 * k)) & 3) as usize];
                for (((((o, &x0), &x1), &x2), &x3), &x4) in xs {
                    let at = bit >> 3;
                    let bits = match data.get(at..at + 4) {
                        Some(&[b0, b1, b2, b3]) => u32::from_le_bytes([b0, b1, b2, b3]),
                        _ => {
                            let mut v = 0u32;
                            for i in 0..4 {
                                v |= u32::from(data.get(at + i).copied().unwrap_or(0)) << (8 * i);
                            }
                            v
                        }
                    };
                    let b = (bits >> (bit & 7)) & mask;
                    let (x0, x1, x2, x3, x4) = if shifted {
                        let r = |x: i16, k: usize| (i32::from(x) + a[k]) >> sv[k];
                        (r(x0, 0), r(x1, 1), r(x2, 2), r(x3, 3), r(x4, 4))
                    } else {
                        (i32::from(x0), i32::from(x1), i32::from(x2), i32::from(x3), i32::from(x4))
                    };
                    let acc = w(b, 0) * x0 + w(b, 1) * x1 + w(b, 2) * x2 + w(b, 3) * x3 + w(b, 4) * x4;
                    *o = acc;
                    mx |= acc.unsigned_abs();
                    bit += 10;
                }
                return (mx, et);
            }
        }
        if conv.packing == Packing::Trit2 {
            // The sums by tap, the 2-bit codes read in place (c * K + k;
            // 1: +1, 3: -1, 0 and 2: 0; past the end of the data: 0, as
            // decode); a tap's shift is the same for every channel.
            out.fill(0);
            for k in 0..nt {
                let xk = ring.get(rows[k]..rows[k] + d).unwrap_or(&[]);
                match shs[k] {
                    0 => conv_tap_trit2(conv.data, k, kk, xk, out, |x| x),
                    sh if sh > 0 => conv_tap_trit2(conv.data, k, kk, xk, out, |x| rshr32(x, sh)),
                    _ => {}
                }
            }
            for &o in out.iter() {
                mx |= o.unsigned_abs();
            }
            return (mx, et);
        }
        // The taps of several channels decoded at once.
        let mut taps = [0i8; 4 * TAPS];
        let per = taps.len() / kk;
        let mut c0 = 0;
        while c0 < d {
            let nc = per.min(d - c0);
            // (nc K <= 4 TAPS.)
            let Some(tc) = taps.get_mut(..nc * kk) else { break };
            conv.decode(c0 * kk, tc);
            for (i, (o, ct)) in out.iter_mut().skip(c0).zip(tc.chunks_exact(kk)).enumerate() {
                let c = c0 + i;
                let mut acc = 0i32;
                for k in 0..nt {
                    if shs[k] >= 0 {
                        let x = i32::from(ring.get(rows[k] + c).copied().unwrap_or(0));
                        let w = i32::from(ct.get(k).copied().unwrap_or(0));
                        acc += w * rshr32(x, shs[k]);
                    }
                }
                *o = acc;
                mx |= acc.unsigned_abs();
            }
            c0 += nc;
        }
    } else {
        for (c, o) in out.iter_mut().enumerate() {
            let mut acc = 0i32;
            for k in 0..nt {
                let row = ring_row(k);
                let ek = i32::from(ering.get(row).copied().unwrap_or(E_ZERO as i16));
                if ek == E_ZERO {
                    continue;
                }
                let x = i32::from(ring.get(row * d + c).copied().unwrap_or(0));
                acc += i32::from(conv.weight(c * kk + k)) * rshr32(x, et - ek);
            }
            *o = acc;
            mx |= acc.unsigned_abs();
        }
    }
    (mx, et)
}

/// Whether the Cortex-M0 conv kernel may read the layer's K = 5 conv
/// payload of `d` channels (no code `10` in the bytes it reads): checked
/// once per layer and call rather than at every position.
#[inline(never)]
fn conv_clean(conv: &Tensor, d: usize) -> bool {
    #[cfg(atome_armv6m)]
    if conv.packing == Packing::Trit2 {
        return conv.data.get(..d / 4 * 5).is_some_and(|p| !has_code10(p));
    }
    let _ = (conv, d);
    false
}

/// out[c] += w(c, k) * f(x[c]) over the channels, w read from Trit2 codes
/// at c * kk + k.
#[inline(always)]
fn conv_tap_trit2(data: &[u8], k: usize, kk: usize, x: &[i16], out: &mut [i32], f: impl Fn(i32) -> i32) {
    let mut n = k;
    for (o, &xv) in out.iter_mut().zip(x) {
        let code = i32::from(data.get(n >> 2).copied().unwrap_or(0) >> ((n & 3) * 2)) & 3;
        *o += (code & 1) * (1 - (code & 2)) * f(i32::from(xv));
        n += kk;
    }
}

/// The SSM hidden state (c_out * h) of a mix.
struct State<'b> {
    hs: &'b [i32],
    ehs: i32,
}

/// The mix of position t (docs/Q15.md#mix) into its residual row `xr`
/// (exponent ex); the new exponent. `lm` holds the exact conv sums and
/// becomes scratch. (`GENERAL`: the rshr32 loop for every grid.)
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn mix<const GENERAL: bool>(p: &LayerQ, st: State, lm: &mut [i32], (mxl, et): (u32, i32), (sp, esp): (&mut [i16], i32), r: [i32; 3], xr: &mut [i16], ex: i32) -> i32 {
    // The local and state pathways on their 15-bit grids (shifts sl, ss),
    // formed in the sum's loop (docs/Q15.md#mix).
    let (sl, el) = (qshift(u64::from(mxl), QA), qexp(u64::from(mxl), et, QA));
    let hs = st.hs;
    let mxs = or_abs(hs);
    let (ss, es) = (qshift(u64::from(mxs), QA), qexp(u64::from(mxs), st.ehs, QA));
    let (c0m, c0e) = quant_scalar(i64::from(r[0]) * p.conv.m, p.conv.e - 30, QA);
    let (c1m, c1e) = quant_scalar(i64::from(r[1]), -30, QA);
    let (c2m, c2e) = quant_scalar(i64::from(r[2]) * p.wv.m, p.wv.e - 30, QA);
    let (e0, e1, e2) = (ecomb(c0e, el), ecomb(c1e, es), ecomb(c2e, esp));
    // Every coefficient rounded once onto the sum's grid A (its shift is at
    // least 1: |k| <= 2^14), the residual too: each term is at most 2^29
    // and the sum an int32.
    let a = align_at(&[top(ex, QA as i32), top(e0, 30), top(e1, 30), top(e2, 30)], MIX_ROOM);
    let k = |c: i64, e: i32| rshr(c, ashift(a, e)) as i32;
    let ks = [k(c0m, e0), k(c1m, e1), k(c2m, e2)];
    let sx = ashift(a, ex);
    let mx = if !GENERAL {
        // Each pathway's grid as (v + r) >> t: a right shift s in 1..=31
        // rounds (r = 2^(s-1)); a left shift (s <= 0, exact) moves into
        // its coefficient instead (k (v << n) = (k << n) v, wrapping: the
        // product fits an int32, so the wrapped factor gives it exactly),
        // and s >= 32 (every rshr32 0) makes the coefficient 0.
        let grid = |s: i32, k: i32| -> (i32, u32, i32) {
            match s {
                1..=31 => (1 << (s - 1), s as u32, k),
                ..=0 => (0, 0, k.wrapping_shl((-s).min(31) as u32)),
                _ => (0, 0, 0),
            }
        };
        let ((rl, tl, k0), (rs, ts, k1)) = (grid(sl, ks[0]), grid(ss, ks[1]));
        let ks = [k0, k1, ks[2]];
        let loc = move |w: i32| (w + rl) >> tl;
        let sta = move |h: i32| (h + rs) >> ts;
        // Armv7E-M: the same sums by SMMULR/SMMLAR (kernels::q15::mix).
        #[cfg(atome_dsp)]
        let fast = crate::kernels::q15::mix::mix_sums_dsp(lm, hs, sp, xr, (tl, ts, sx), ks);
        #[cfg(not(atome_dsp))]
        let fast: Option<u32> = None;
        if let Some(mx) = fast {
            mx
        } else if sx <= 0 {
            // The residual shifted left (exact): a fourth product.
            let kx = 1 << (-sx).min(14);
            mix_sums(lm, hs, sp, xr, ks, loc, sta, move |x| x * kx)
        } else {
            let n = (sx - 1).min(30);
            mix_sums(lm, hs, sp, xr, ks, loc, sta, move |x| ((x >> n) + 1) >> 1)
        }
    } else {
        // (|L| < 2^18, |hs| < 2^30: every rshr32 result within +-2^15.)
        mix_sums(lm, hs, sp, xr, ks, move |w| rshr32(w, sl), move |h| rshr32(h, ss), move |x| rshr32(x, sx))
    };
    quant_at(lm, qshift(u64::from(mx), QA), xr);
    qexp(u64::from(mx), a, QA)
}

/// The grid of the mix: 29 bits below its largest term's bound.
const MIX_ROOM: i32 = 29;

/// The mix's sums W = x' + k0 local + k1 state + k2 sparse into `lm`,
/// which holds the exact conv sums on entry; local, state and x' come
/// from their closures (grids and the residual's shift); OR of |W|.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn mix_sums(lm: &mut [i32], hs: &[i32], sp: &[i16], xr: &[i16], [k0, k1, k2]: [i32; 3], loc: impl Fn(i32) -> i32, sta: impl Fn(i32) -> i32, xf: impl Fn(i32) -> i32) -> u32 {
    let mut mx = 0u32;
    if cfg!(atome_thumb2) {
        // Two passes on Thumb-2, each with few enough constants to stay
        // in registers (one pass reloads some every element).
        for (w, &spc) in lm.iter_mut().zip(sp) {
            *w = k0.wrapping_mul(loc(*w)).wrapping_add(k2 * i32::from(spc));
        }
        for ((w, &h), &xc) in lm.iter_mut().zip(hs).zip(xr) {
            let v = w.wrapping_add(xf(i32::from(xc))).wrapping_add(k1.wrapping_mul(sta(h)));
            mx |= v.unsigned_abs();
            *w = v;
        }
        return mx;
    }
    for (((w, &h), &spc), &xc) in lm.iter_mut().zip(hs).zip(sp).zip(xr) {
        // (Wrapping: a coefficient may carry a left shift, see `mix`; the
        // sum itself is an int32.)
        let v = xf(i32::from(xc)).wrapping_add(k0.wrapping_mul(loc(*w))).wrapping_add(k1.wrapping_mul(sta(h))).wrapping_add(k2 * i32::from(spc));
        mx |= v.unsigned_abs();
        *w = v;
    }
    mx
}

/// The sparse pathway's selection at position t (the query (b.q, eq)
/// already there): the top-k keys and their probabilities into `b.slots`;
/// the number of slots. Calls no matvec: its frame is not under the
/// kernels' on the stack.
#[inline(always)]
fn attention_top(dh: usize, p: &LayerQ, t: usize, eq: i32, top_k: usize, b: &mut Bufs) -> Option<usize> {
    // The largest key exponent: E_ZERO is i16::MIN, below every other,
    // so the plain maximum skips the zero keys (and is E_ZERO when all are).
    const _: () = assert!(E_ZERO == i16::MIN as i32);
    let kt = i32::from(b.ek.get(..=t)?.iter().copied().max().unwrap_or(E_ZERO as i16));
    let (q, keys, ek) = (b.q.get(..dh)?, &*b.k, &*b.ek);
    let sigma = |key: &[i16], e: i16| -> i64 {
        let e = i32::from(e);
        if e == E_ZERO {
            return 0;
        }
        let dot = dot_q(q, key);
        // (Most keys are on the largest grid: no shift.)
        if e == kt {
            dot
        } else {
            rshr(dot, (kt - e).min(63))
        }
    };
    // Top-k: descending g * sigma, earlier keys first on ties.
    let g = p.cq.m.signum();
    let keff = top_k.min(t + 1);
    if keff == 0 {
        // (A loaded model has top_k >= 1.)
        return None;
    }
    let (idx, rest) = b.slots.split_at_mut_checked(top_k)?;
    let (lo, rest) = rest.split_at_mut_checked(top_k)?;
    let (hi, pr) = rest.split_at_mut_checked(top_k)?;
    let (idx, lo, hi) = (idx.get_mut(..keff)?, lo.get_mut(..keff)?, hi.get_mut(..keff)?);
    let score = |lo: &[i32], hi: &[i32], i: usize| match (lo.get(i), hi.get(i)) {
        (Some(&l), Some(&h)) => (i64::from(h) << 32) | i64::from(l as u32),
        _ => 0,
    };
    let mut cnt = 0usize;
    // The k-th best signed score once k are held (the bar a later key
    // must pass), kept here rather than rebuilt from its two words.
    let mut bar = 0i64;
    // (Keys 0..=t and their exponents, cut once: no index arithmetic per
    // key. A loaded model has DH >= 1; checked so that no chunking can
    // panic.)
    if dh == 0 {
        return None;
    }
    let (keys, ek) = (keys.get(..(t + 1) * dh)?, ek.get(..=t)?);
    for (j, (key, &e)) in keys.chunks_exact(dh).zip(ek).enumerate() {
        let sg = sigma(key, e);
        let s = sgn_mul(g, sg);
        if cnt == keff && s <= bar {
            continue;
        }
        let mut pos = cnt.min(keff - 1);
        while pos > 0 && sgn_mul(g, score(lo, hi, pos - 1)) < s {
            // (pos < keff = the slices' length.)
            if let (Some(&i), Some(&l), Some(&h)) = (idx.get(pos - 1), lo.get(pos - 1), hi.get(pos - 1)) {
                if pos < keff {
                    idx[pos] = i;
                    lo[pos] = l;
                    hi[pos] = h;
                }
            }
            pos -= 1;
        }
        if let (Some(i), Some(l), Some(h)) = (idx.get_mut(pos), lo.get_mut(pos), hi.get_mut(pos)) {
            *i = j as i32;
            *l = sg as i32;
            *h = (sg >> 32) as i32;
        }
        cnt = (cnt + 1).min(keff);
        if cnt == keff {
            bar = sgn_mul(g, score(lo, hi, keff - 1));
        }
    }
    let pr = pr.get_mut(..keff)?;
    softmax_q(|i| score(lo, hi, i), p.cq.m, p.cq.e + eq + kt, pr);
    Some(keff)
}

/// The sparse pathway's weighted sum over the `keff` slots that
/// [`attention_top`] chose, into `b.sparse`; its exponent.
#[inline(always)]
fn attention_sum(top_k: usize, keff: usize, b: &mut Bufs) -> Option<i32> {
    let d = b.sparse.len();
    let idx = b.slots.get(..keff)?;
    let pr = b.slots.get(3 * top_k..3 * top_k + keff)?;
    let mut f = E_ZERO;
    let ev_of = |j: i32| i32::from(b.ev.get(j as usize).copied().unwrap_or(E_ZERO as i16));
    for &j in idx.iter() {
        let e = ev_of(j);
        if e != E_ZERO {
            f = if f == E_ZERO { e } else { f.max(e) };
        }
    }
    let vals = &*b.v;
    let slots = idx.iter().zip(pr.iter());
    // Each probability on the grid of the largest value, Q15 there:
    // k_s = rshr(p_s, 15 + f - e_s) (0 for a zero value row), and the sum
    // A = sum k_s v_s at exponent f - 15 is exact (docs/Q15.md#sparse-attention).
    let kw = |j: i32, ps: i32| -> i32 {
        let e = ev_of(j);
        if e == E_ZERO {
            0
        } else {
            rshr32(ps, (15 + f - e).min(32))
        }
    };
    let ksum: i64 = slots.clone().map(|(&j, &ps)| i64::from(kw(j, ps))).sum();
    let out = b.mv.get_mut(..d)?;
    let mut mx = 0u32;
    if ksum <= 1 << 16 {
        // sum k_s |v_s| <= 2^16 (2^15 - 1) < 2^31: int32 sums. Up to four
        // rows (the usual TOP_K) at once, in registers (k = 0 pads).
        let mut rows: [&[i16]; 4] = [&[]; 4];
        let mut ks = [0i32; 4];
        let mut ns = 0;
        for (&j, &ps) in slots.clone() {
            let k = kw(j, ps);
            if k == 0 {
                continue;
            }
            if let (Some(r), Some(kk)) = (rows.get_mut(ns), ks.get_mut(ns)) {
                *r = vals.get(j as usize * d..(j as usize + 1) * d)?;
                *kk = k;
            }
            ns += 1;
        }
        if ns <= 4 {
            for r in rows.iter_mut().skip(ns) {
                *r = vals.get(..d)?;
            }
            #[cfg(atome_dsp)]
            if let Some(mx) = crate::kernels::q15::mix::att_sum4_dsp(out, rows, ks) {
                return Some(quant_into_mx(out, mx, f - 15, b.sparse));
            }
            let [r0, r1, r2, r3] = rows;
            let [k0, k1, k2, k3] = ks;
            if cfg!(atome_armv6m) {
                // Armv6-M: two rows a pass (four rows, their weights and
                // the sums do not fit its eight low registers; S3 M0 -20K;
                // RV32 and Thumb-2 gain nothing).
                for (o, (&v0, &v1)) in out.iter_mut().zip(r0.iter().zip(r1)) {
                    *o = k0 * i32::from(v0) + k1 * i32::from(v1);
                }
                for (o, (&v2, &v3)) in out.iter_mut().zip(r2.iter().zip(r3)) {
                    let a = *o + k2 * i32::from(v2) + k3 * i32::from(v3);
                    mx |= a.unsigned_abs();
                    *o = a;
                }
                return Some(quant_into_mx(out, mx, f - 15, b.sparse));
            }
            for ((o, (&v0, &v1)), (&v2, &v3)) in out.iter_mut().zip(r0.iter().zip(r1)).zip(r2.iter().zip(r3)) {
                let a = k0 * i32::from(v0) + k1 * i32::from(v1) + k2 * i32::from(v2) + k3 * i32::from(v3);
                mx |= a.unsigned_abs();
                *o = a;
            }
        } else {
            out.fill(0);
            for (&j, &ps) in slots {
                let k = kw(j, ps);
                if k == 0 {
                    continue;
                }
                let row = vals.get(j as usize * d..(j as usize + 1) * d)?;
                for (o, &v) in out.iter_mut().zip(row) {
                    *o += k * i32::from(v);
                }
            }
            mx = out.iter().fold(0, |a, v| a | v.unsigned_abs());
        }
        return Some(quant_into_mx(out, mx, f - 15, b.sparse));
    }
    // (More slots than any real TOP_K: int64 sums, each channel twice.)
    let acc = |c: usize| -> i64 {
        slots.clone().map(|(&j, &ps)| i64::from(kw(j, ps)) * i64::from(vals.get(j as usize * d + c).copied().unwrap_or(0))).sum()
    };
    let mut mx = 0u64;
    for c in 0..d {
        mx |= acc(c).unsigned_abs();
    }
    let s = qshift(mx, QA);
    for (c, o) in b.sparse.iter_mut().enumerate() {
        *o = qm(acc(c), s, QA) as i16;
    }
    Some(qexp(mx, f - 15, QA))
}

/// Final LayerNorm of residual row n-1 into the ring's first row; its
/// exponent. Then [`head_logits`] reads it.
pub fn final_row(model: &Model, n: usize, b: &mut Bufs) -> Option<i32> {
    let d = model.dims.d_model;
    let g = PSrc::new(PVec::new(model.final_norm.gamma, d, QA), None);
    let be = PSrc::new(PVec::new(model.final_norm.beta, d, QA), None);
    let xr = b.x.get((n - 1) * d..n * d)?;
    let ex = i32::from(*b.ex.get(n - 1)?);
    k_layer_norm::call(Accel::detect(), xr, ex, &g, &be, b.mv.get_mut(..d)?, b.ring.get_mut(..d)?)
        .into()
}

/// Logits of a head over the final row (h, eh): each the exact integer
/// result rounded once to binary32, into `out` (rows values); the first
/// largest. The exact sums come by blocks of `mv.len()` rows through the
/// matvec kernel.
pub fn head_logits(w: &Tensor, h: &[i16], eh: i32, mv: &mut [i32], mut out: Option<&mut [f32]>) -> usize {
    let sc = Scale::of(w);
    let e = ecomb_plain(sc.e, eh);
    let blk = mv.len().max(1);
    let mut best = 0;
    let mut best_v = 0.0f32;
    let mut j0 = 0;
    while j0 < w.rows {
        let nb = blk.min(w.rows - j0);
        let sub = rows_of(w, j0, nb);
        if let Some(t) = &sub {
            matvec_q(t, h, w.cols, 1, mv, nb);
        }
        for i in 0..nb {
            let j = j0 + i;
            let acc = match sub {
                Some(_) => i64::from(mv.get(i).copied().unwrap_or(0)),
                None => row_dot(w, j, h),
            };
            let v = to_f32(acc * sc.m, e);
            if j == 0 || v > best_v {
                best = j;
                best_v = v;
            }
            if let Some(o) = out.as_deref_mut().and_then(|o| o.get_mut(j)) {
                *o = v;
            }
        }
        j0 += nb;
    }
    best
}

/// Fast paths against the general (int64) paths on the same inputs: the
/// models of the numpy parity tests rarely reach the general ones.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Floats;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        /// Uniform in [-2^bits + 1, 2^bits - 1].
        fn int(&mut self, bits: u32) -> i32 {
            let m = (1i64 << bits) - 1;
            ((self.next() % (2 * m as u64 + 1)) as i64 - m) as i32
        }
        fn f32s(&mut self, n: usize, spread: i32) -> [u8; 4 * 64] {
            let mut b = [0u8; 4 * 64];
            for i in 0..n {
                let v = self.int(20) as f32 * (2f32).powi(self.int(spread.max(0) as u32) - 20);
                b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
            }
            b
        }
    }

    #[test]
    fn layer_norm_fast_equals_general() {
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        for case in 0..20000 {
            let d = [1, 2, 3, 16, 22, 64][case % 6];
            // Magnitudes from a few units to the full 15 bits, constant
            // rows, zero rows.
            let bits = (r.next() % 16) as u32;
            let mut xm = [0i16; 64];
            let base = r.int(14);
            for x in xm.iter_mut().take(d) {
                *x = match case % 7 {
                    0 => base as i16,
                    1 => 0,
                    _ => r.int(bits.max(1)).clamp(-32767, 32767) as i16,
                };
            }
            let ex = if case % 11 == 0 { E_ZERO } else { r.int(6) };
            let (gb, bb) = (r.f32s(d, (case % 5) as i32), r.f32s(d, (case % 3) as i32));
            let g = PSrc::new(PVec::new(Floats::new(&gb[..4 * d]), d, QA), None);
            let b = PSrc::new(PVec::new(Floats::new(&bb[..4 * d]), d, QA), None);
            let (mut w1, mut w2, mut o1, mut o2) = ([0i32; 64], [0i32; 64], [0i16; 64], [0i16; 64]);
            let e1 = layer_norm::<false>(&xm[..d], ex, &g, &b, &mut w1[..d], &mut o1[..d]);
            let e2 = layer_norm::<true>(&xm[..d], ex, &g, &b, &mut w2[..d], &mut o2[..d]);
            // The unquantized sums too (a one-unit error there rarely
            // reaches the output).
            assert_eq!((e1, &o1[..d], &w1[..d]), (e2, &o2[..d], &w2[..d]), "case {case}");
        }
    }

    #[test]
    fn ssm_step_fast_equals_general() {
        let mut r = Rng(0x2545_F491_4F6C_DD1D);
        for case in 0..20000 {
            let d = [1, 5, 16, 64][case % 4];
            let mut hs = [0i32; 64];
            let mut h = [0i16; 64];
            let mut t = [0i32; 64];
            let hb = (r.next() % 31) as u32;
            for c in 0..d {
                hs[c] = r.int(hb.max(1)).clamp(-(1 << 30) + 1, (1 << 30) - 1);
                h[c] = r.int(15) as i16;
                t[c] = r.int(30);
            }
            let ehs = if case % 9 == 0 { E_ZERO } else { r.int(7) };
            let eh = if case % 13 == 0 { E_ZERO } else { r.int(7) };
            let bb = r.f32s(d, (case % 8) as i32 * 4);
            let sb = PSrc::new(PVec::new(Floats::new(&bb[..4 * d]), d, QP), None);
            let (mut h1, mut h2) = (hs, hs);
            let e1 = ssm_step::<false>(&sb, Vals::Ints(&t[..d]), &mut h1[..d], ehs, &h[..d], eh);
            let e2 = ssm_step::<true>(&sb, Vals::Ints(&t[..d]), &mut h2[..d], ehs, &h[..d], eh);
            assert_eq!((e1, &h1[..d]), (e2, &h2[..d]), "case {case}");
        }
    }

    #[test]
    fn mix_fast_equals_general() {
        let mut r = Rng(0xD1B5_4A32_D192_ED03);
        let none = Floats::new(&[]);
        let sc = |m: i32, e: i32| Scale { m: i64::from(m), e: if m == 0 { E_ZERO } else { e } };
        for case in 0..20000 {
            let d = [1, 7, 16, 64][case % 4];
            let p = LayerQ {
                g: PVec::new(none, 0, QA),
                b: PVec::new(none, 0, QA),
                sb: PVec::new(none, 0, QP),
                conv: sc(r.int(15), r.int(8)),
                wv: sc(r.int(15), r.int(8)),
                router: sc(1, 0),
                cq: sc(1, 0),
            };
            let (lb, hb, vb) = ((r.next() % 19) as u32, (r.next() % 31) as u32, (r.next() % 16) as u32);
            let (mut lm, mut hs, mut sp, mut xr) = ([0i32; 64], [0i32; 64], [0i16; 64], [0i16; 64]);
            for c in 0..d {
                lm[c] = r.int(lb.max(1));
                hs[c] = r.int(hb.max(1));
                sp[c] = r.int(vb.max(1)) as i16;
                xr[c] = r.int(15) as i16;
            }
            let mxl = lm[..d].iter().fold(0u32, |a, v| a | v.unsigned_abs());
            let (et, esp, ex, ehs) = (r.int(6), r.int(6), if case % 17 == 0 { E_ZERO } else { r.int(6) }, r.int(6));
            let r0 = (r.next() % (1 << 30)) as i32;
            let r1 = (r.next() % ((1u64 << 30) - r0 as u64 + 1)) as i32;
            let rr = [r0, r1, (1 << 30) - r0 - r1];
            let (mut l1, mut l2, mut s1, mut s2, mut x1, mut x2) = (lm, lm, sp, sp, xr, xr);
            let st = State { hs: &hs[..d], ehs };
            let e1 = mix::<false>(&p, st, &mut l1[..d], (mxl, et), (&mut s1[..d], esp), rr, &mut x1[..d], ex);
            let st = State { hs: &hs[..d], ehs };
            let e2 = mix::<true>(&p, st, &mut l2[..d], (mxl, et), (&mut s2[..d], esp), rr, &mut x2[..d], ex);
            assert_eq!((e1, &x1[..d], &l1[..d]), (e2, &x2[..d], &l2[..d]), "case {case}");
        }
    }

    /// The AVX2 conv (kernels::q15::conv) against the engine's own loop:
    /// widths with and without a partial last step, zero and missing rows,
    /// taps on different grids, payloads with code 10, and a payload one
    /// byte short (its missing codes read as 0).
    #[test]
    fn conv_avx2_equals_loop() {
        if !Accel::detect().avx2() {
            return;
        }
        let mut r = Rng(0x6A09_E667_F3BC_C908);
        for case in 0..4000 {
            let d = [1, 3, 7, 8, 9, 16, 21, 64][case % 8];
            let t = (r.next() % 9) as usize;
            let mut ring = [0i16; 5 * 64];
            for x in ring.iter_mut().take(5 * d) {
                let bits = (r.next() % 16) as u32 + 1;
                *x = r.int(bits).clamp(-32768, 32767) as i16;
            }
            let mut ering = [0i16; 5];
            for e in ering.iter_mut() {
                *e = if r.next().is_multiple_of(6) { E_ZERO as i16 } else { (r.int(5) % 20) as i16 };
            }
            let mut data = [0u8; 5 * 64 * 2 / 8 + 1];
            for b in data.iter_mut() {
                *b = r.next() as u8;
            }
            let len = (10 * d).div_ceil(8) - usize::from(case % 5 == 0);
            let conv = Tensor { data: &data[..len], scale: 1.0, rows: d, cols: 5, packing: Packing::Trit2 };
            let (mut o1, mut o2) = ([0i32; 64], [0i32; 64]);
            let a = conv_sums(false, false, &conv, &ring[..5 * d], &ering, t, d, &mut o1[..d]);
            let b = conv_sums(true, false, &conv, &ring[..5 * d], &ering, t, d, &mut o2[..d]);
            assert_eq!((a, &o1[..d]), (b, &o2[..d]), "case {case}");
        }
    }
}
