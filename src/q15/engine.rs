//! The q15 forward pass (docs/Q15.md#the-forward-pass), lean plan: one
//! layer at a time over every position of the window, one position at a
//! time within a layer. Every row has its own exponent, so this order gives
//! the same bits as any other (the numpy reference's cached and lean senses).
//! The arithmetic is in [`crate::kernels::q15`], one file per operation.
use super::arith::{ecomb_plain, gt_num, tanh_q30, to_f32_prod, E_ZERO, QA, QP};
use super::params::{Area, LayerQ, PSrc, PVec, Scale};
use crate::format::{Model, Packing, Tensor};
use crate::forward::Tokens;
use crate::kernels::isa::Accel;
use crate::kernels::q15::{attention, conv, head, mix, norm, quant, ssm};
use crate::kernels::q15::matvec_q;
use crate::kernels::q15::matvec::{bytes_pay, matvec_q_bytes};
#[cfg(atome_small)]
use crate::kernels::q15::matvec::matvec_q_accel;
#[cfg(not(atome_small))]
use crate::kernels::q15::{matvec_q_multi_checked, trit2_no_code10, MvJobQ};

#[path = "cached.rs"]
pub mod cached;
#[path = "tiny.rs"]
pub mod tiny;
pub use tiny::{Q15TinyLayout, Q15TinyRunner, Q15TinyState};

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

/// The model's one window run: the residual row n-1 after every layer, with
/// its exponent. None when the model cannot run in q15 (a P3 model wider than
/// the int32 matvec's bound). `all` (when not empty: n x L) receives every
/// position's router entropies.
pub fn run(model: &Model, toks: &Tokens, n: usize, b: &mut Bufs, logits: &mut [f32], all: &mut [f32]) -> Option<()> {
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
    let r = blocks(model, toks, n, b, &mut *pa, logits, all);
    b.pa = pa;
    r
}

/// The embedding and the blocks of [`run`], with the parameter area `pa`.
/// (Inlined: a frame of its own would add to the peak stack.)
#[inline(always)]
fn blocks(model: &Model, toks: &Tokens, n: usize, b: &mut Bufs, pa: &mut [i32], logits: &mut [f32], all: &mut [f32]) -> Option<()> {
    let ents = !all.is_empty();
    let dims = model.dims;
    let (d, dh, kk, l_n) = (dims.d_model, dims.d_head, dims.kernel_size, dims.n_layers);
    let accel = Accel::detect();
    // Embedding.
    for t in 0..n {
        embed(&model.embed(), toks.id(t, dims.vocab), t, b)?;
    }
    for l in 0..l_n {
        let bl = model.block(l);
        // (LayerQ::new's parts, each built where it is kept: no whole
        // LayerQ on the stack beside its vectors' sources.)
        let [s_conv, s_wv, s_router, cq] = LayerQ::scales_of(&bl, dh);
        let last = l + 1 == l_n;
        // tanh(a), gamma, beta and the SSM gain of this layer as int32: in
        // the logits area as far as it goes (bit patterns: the logits are
        // written only after the last block), then in the int32 area.
        let mut areas = logits.chunks_exact_mut(d).map(Area::Bits).chain(pa.chunks_exact_mut(d).map(Area::Ints));
        let (nm, ssm) = (bl.norm(), bl.ssm());
        let tanh = areas.next()?.fill(|c| tanh_q30(ssm.a.get(c)));
        let pg = PSrc::of(nm.gamma, None, d, QA, areas.next());
        let pb = PSrc::of(nm.beta, None, d, QA, areas.next());
        let psb = PSrc::of(ssm.b, Some(ssm.c_out), d, QP, areas.next());
        let clean = conv::conv_clean(&bl.conv(), d);
        // Checked once per layer instead of at each position's matvec (only
        // the AVX2 shift decode needs it).
        #[cfg(not(atome_small))]
        let nc10 = accel.avx2() && [&bl.wk(), &bl.wv(), &bl.router(), &bl.wq()].into_iter().all(|w| trit2_no_code10(accel, w));
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
                norm::layer_norm(accel, xr, ex, &pg, &pb, b.mv.get_mut(..d)?, out)
            };
            *b.ering.get_mut(slot)? = eh as i16;
            let h = b.ring.get(slot * d..(slot + 1) * d)?;
            ehs = ssm::ssm_step(accel, &psb, tanh, b.hs.get_mut(..d)?, ehs, h, eh);
            // Keys and values of this position, and at a mixing position
            // the router and the query: one matvec call, so that the
            // table kernels build their tables once for all these rows.
            // (Size-first: one matrix at a time, no job arrays on the stack.)
            #[cfg(atome_small)]
            {
                matvec_q_accel(accel, &bl.wk(), h, d, 1, b.mv.get_mut(..dh)?, dh);
                if !last {
                    matvec_q_accel(accel, &bl.wv(), h, d, 1, b.mv.get_mut(dh..dh + d)?, d);
                }
                if mixes || ents {
                    matvec_q_accel(accel, &bl.router(), h, d, 1, b.mv.get_mut(dh + d..dh + d + 3)?, 3);
                }
                if mixes {
                    matvec_q_accel(accel, &bl.wq(), h, d, 1, b.mv.get_mut(dh + d + 3..2 * dh + d + 3)?, dh);
                }
            }
            #[cfg(not(atome_small))]
            {
                let (ok, r) = b.mv.split_at_mut_checked(dh)?;
                let (ov, r) = r.split_at_mut_checked(d)?;
                let (or, r) = r.split_at_mut_checked(3)?;
                let oq = r.get_mut(..dh)?;
                let (wk, wv, wr, wq) = (
                    MvJobQ { w: &bl.wk(), out: ok, ostride: dh },
                    MvJobQ { w: &bl.wv(), out: ov, ostride: d },
                    MvJobQ { w: &bl.router(), out: or, ostride: 3 },
                    MvJobQ { w: &bl.wq(), out: oq, ostride: dh },
                );
                // The last layer mixes only its last position, whose
                // attention reads the values of at most TOP_K keys: there
                // the value cache keeps the normalized rows instead, and
                // only the chosen ones become values (below).
                match (last, mixes) {
                    (false, true) => matvec_q_multi_checked(accel, &mut [wk, wv, wr, wq], h, d, 1, nc10),
                    (false, false) => matvec_q_multi_checked(accel, &mut [wk, wv], h, d, 1, nc10),
                    (true, true) => matvec_q_multi_checked(accel, &mut [wk, wr, wq], h, d, 1, nc10),
                    (true, false) if ents => matvec_q_multi_checked(accel, &mut [wk, wr], h, d, 1, nc10),
                    (true, false) => matvec_q_multi_checked(accel, &mut [wk], h, d, 1, nc10),
                }
            }
            let e = quant::quant_into(accel, b.mv.get(..dh)?, eh, b.k.get_mut(t * dh..(t + 1) * dh)?);
            *b.ek.get_mut(t)? = e as i16;
            if last {
                b.v.get_mut(t * d..(t + 1) * d)?.copy_from_slice(b.ring.get(slot * d..(slot + 1) * d)?);
                *b.ev.get_mut(t)? = eh as i16;
            } else {
                let e = quant::quant_into(accel, b.mv.get(dh..dh + d)?, eh, b.v.get_mut(t * d..(t + 1) * d)?);
                *b.ev.get_mut(t)? = e as i16;
            }
            if !mixes && !ents {
                continue;
            }
            let r = mix::router(s_router, b.mv.get(dh + d..dh + d + 3)?, eh);
            if let Some(o) = all.get_mut(t * l_n + l) {
                *o = f32::from_bits(mix::entropy(r) as u32);
            }
            if !mixes {
                continue;
            }
            if t + 1 == n {
                *b.ent.get_mut(l)? = mix::entropy(r);
            }
            let eq = quant::quant_into(accel, b.mv.get(dh + d + 3..2 * dh + d + 3)?, eh, b.q.get_mut(..dh)?);
            let keff = attention::attention_top(accel, dh, &cq, t, eq, dims.top_k, b)?;
            if last {
                // The chosen keys' values from their normalized rows, in
                // place (the same v_j = quant15(Wv h_j) as the other layers').
                for i in 0..keff {
                    let j = usize::try_from(*b.slots.get(i)?).ok()?;
                    let row = b.v.get_mut(j * d..(j + 1) * d)?;
                    let out = b.mv.get_mut(..d)?;
                    #[cfg(atome_small)]
                    matvec_q_accel(accel, &bl.wv(), row, d, 1, out, d);
                    #[cfg(not(atome_small))]
                    matvec_q_multi_checked(accel, &mut [MvJobQ { w: &bl.wv(), out, ostride: d }], row, d, 1, nc10);
                    let e = quant::quant_into(accel, b.mv.get(..d)?, i32::from(*b.ev.get(j)?), row);
                    *b.ev.get_mut(j)? = e as i16;
                }
            }
            let esp = attention::attention_sum(accel, dims.top_k, keff, b)?;
            let (mxl, et) = conv::conv_sums(accel, accel.avx2(), clean, &bl.conv(), b.ring, b.ering, t, d, b.mv.get_mut(..d)?);
            let ex = i32::from(*b.ex.get(t)?);
            let st = mix::State { hs: b.hs.get(..d)?, ehs };
            let e = mix::mix(accel, &s_conv, &s_wv, st, b.mv.get_mut(..d)?, (mxl, et), (b.sparse.get_mut(..d)?, esp), r, b.x.get_mut(t * d..(t + 1) * d)?, ex);
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
    let emm = em.m;
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
    let e = quant::quant_into_impl(tmp, em.e, b.x.get_mut(t * d..(t + 1) * d)?);
    *b.ex.get_mut(t)? = e as i16;
    Some(())
}

/// Final LayerNorm of residual row n-1 into the ring's first row; its
/// exponent. Then [`head_logits`] reads it.
pub fn final_row(model: &Model, n: usize, b: &mut Bufs) -> Option<i32> {
    let d = model.dims.d_model;
    let g = PSrc::new(PVec::new(model.final_norm().gamma, d, QA), None);
    let be = PSrc::new(PVec::new(model.final_norm().beta, d, QA), None);
    final_norm(model, n, b, &g, &be)
}

/// [`final_row`] with gamma's and beta's block exponents known
/// ([`final_exps`]), and their mantissas too where `kept` holds them (as
/// [`PVec::fill`] wrote them: the same integers).
pub fn final_row_at(model: &Model, n: usize, b: &mut Bufs, [eg, eb]: [i32; 2], kept: Option<(&[i32], &[i32])>) -> Option<i32> {
    let (g, be) = (PVec::with_exp(model.final_norm().gamma, QA, eg), PVec::with_exp(model.final_norm().beta, QA, eb));
    let (g, be) = match kept {
        Some((wg, wb)) => (PSrc::stored(g, wg), PSrc::stored(be, wb)),
        None => (PSrc::new(g, None), PSrc::new(be, None)),
    };
    final_norm(model, n, b, &g, &be)
}

/// The final LayerNorm of row n-1 with these gamma and beta.
#[inline(always)]
fn final_norm(model: &Model, n: usize, b: &mut Bufs, g: &PSrc, be: &PSrc) -> Option<i32> {
    let d = model.dims.d_model;
    let xr = b.x.get((n - 1) * d..n * d)?;
    let ex = i32::from(*b.ex.get(n - 1)?);
    norm::layer_norm(Accel::detect(), xr, ex, g, be, b.mv.get_mut(..d)?, b.ring.get_mut(..d)?)
        .into()
}

/// The block exponents of the final LayerNorm's gamma and beta.
pub fn final_exps(model: &Model) -> [i32; 2] {
    let d = model.dims.d_model;
    [PVec::new(model.final_norm().gamma, d, QA).e, PVec::new(model.final_norm().beta, d, QA).e]
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
        let sub = head::rows_of(w, j0, nb);
        if let Some(t) = &sub {
            matvec_q(t, h, w.cols, 1, mv, nb);
        }
        for i in 0..nb {
            let j = j0 + i;
            let acc = match sub {
                Some(_) => i64::from(mv.get(i).copied().unwrap_or(0)),
                None => head::row_dot(w, j, h),
            };
            let v = to_f32_prod(acc, sc.m, e);
            if j == 0 || gt_num(v, best_v) {
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

/// [`head_logits`]' id without its logits, for a greedy step whose logits
/// nobody reads: the V exact sums into `acc` (the logits area's words),
/// the largest of them rounded once, and only the rows whose sums lie
/// within that float's rounding distance rounded too (the first of equal
/// floats wins, as in [`head_logits`]). Rounding is monotonic, so the
/// float maximum is the rounded largest product; two sums that round to
/// the same normal float differ by at most 2^-22 of the larger. The sums
/// come by byte tables in `mv` and `more` where those lend 256 words and
/// more ([`matvec_q_bytes`], `clean` as there; BYTES false: never, and no
/// code for them). Outside that case (a zero scale, a non-normal maximum)
/// [`head_logits`] gives the id.
pub fn head_argmax<const BYTES: bool>(w: &Tensor, h: &[i16], eh: i32, acc: &mut [i32], mv: &mut [i32], more: &mut [i32], clean: bool) -> usize {
    // (Size-first: the code of head_logits alone.)
    if cfg!(atome_small) {
        return head_logits(w, h, eh, mv, None);
    }
    let sc = Scale::of(w);
    let m = sc.m;
    let e = ecomb_plain(sc.e, eh);
    let (Some(t), Some(acc)) = (head::rows_of(w, 0, w.rows), acc.get_mut(..w.rows)) else {
        return head_logits(w, h, eh, mv, None);
    };
    if m == 0 || acc.is_empty() {
        return head_logits(w, h, eh, mv, None);
    }
    // Byte tables in `mv` and `more` where they pay (see bytes_pay).
    let bytes = match mv.first_chunk_mut::<256>() {
        Some(t0) if BYTES && bytes_pay(Accel::detect(), w.rows, more.len(), clean) => matvec_q_bytes(&mut [crate::kernels::q15::MvJobQ { w: &t, out: &mut *acc, ostride: w.rows }], h, t0, more, clean),
        _ => false,
    };
    if !bytes {
        matvec_q(&t, h, w.cols, 1, acc, w.rows);
    }
    // The product's order: the sum's for a positive scale, reversed else.
    let key = |a: i32| if m > 0 { i64::from(a) } else { -i64::from(a) };
    let mut jb = 0;
    let mut kb = i64::MIN;
    for (j, &a) in acc.iter().enumerate() {
        if key(a) > kb {
            kb = key(a);
            jb = j;
        }
    }
    let ab = acc.get(jb).copied().unwrap_or(0);
    let vb = logit(ab, m, e);
    if !vb.is_normal() {
        return head_logits(w, h, eh, mv, None);
    }
    let near = i64::from(ab.unsigned_abs() >> 22) + 1;
    for (j, &a) in acc.iter().enumerate().take(jb) {
        if kb - key(a) <= near && !gt_num(vb, logit(a, m, e)) {
            return j;
        }
    }
    jb
}

/// One logit from its exact sum (out of line: one copy for
/// [`head_argmax`]'s two uses).
#[inline(never)]
fn logit(a: i32, m: i32, e: i32) -> f32 {
    to_f32_prod(i64::from(a), m, e)
}

/// The logits area as the words of [`head_argmax`]'s sums.
pub fn logit_words(logits: &mut [f32]) -> &mut [i32] {
    // SAFETY: f32 and i32 have the same size and alignment and every bit
    // pattern is valid for both, so align_to yields the whole area as
    // words (empty prefix and suffix), borrowed from it.
    let (_, words, _) = unsafe { logits.align_to_mut::<i32>() };
    words
}
