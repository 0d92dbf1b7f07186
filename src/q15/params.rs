//! A blob's parameters in the contract's integer forms
//! (docs/Q15.md#parameters): scales as 15-bit blocks of one, parameter
//! vectors as 15- or 23-bit blocks, converted once per layer into caller
//! memory when the engine has room for them ([`PSrc`]), else at each use.
use super::arith::{f32_prod_parts, fq, fquant_exp, fquant_scalar, mul64, pq, pquant_exp, quant_scalar, rshr_hl, QA, QP};
use crate::format::{Block, Floats, Tensor};

/// A 15-bit scale: mantissa and exponent.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    /// Mantissa, |m| <= 32767. (An i32: four scales live in the window
    /// run's frame.)
    pub m: i32,
    /// Exponent (E_ZERO for a zero scale).
    pub e: i32,
}

impl Scale {
    /// fquant15 of a tensor's scale.
    pub fn of(t: &Tensor) -> Scale {
        let (m, e) = fquant_scalar(t.scale);
        Scale { m: m as i32, e }
    }

    /// The scale stored at words i (mantissa) and i + 1 (exponent) of a
    /// layer's [`LayerQ::words`].
    pub fn at(w: &[i32; LAYER_WORDS], i: usize) -> Scale {
        Scale { m: w.get(i).copied().unwrap_or(0), e: w.get(i + 1).copied().unwrap_or(0) }
    }
}

/// A parameter vector as a block (15 bits: LayerNorm gamma and beta; 23:
/// the SSM gain): the floats and their exponent.
#[derive(Clone, Copy, Debug)]
pub struct PVec<'a> {
    f: Floats<'a>,
    /// A second factor: the vector is the elementwise exact product.
    g: Option<Floats<'a>>,
    /// Mantissa bits.
    bits: u32,
    /// Block exponent.
    pub e: i32,
}

impl<'a> PVec<'a> {
    /// fquant_b of the first n floats.
    pub fn new(f: Floats<'a>, n: usize, bits: u32) -> PVec<'a> {
        let e = fquant_exp(n, &(|i| f.get(i)) as &dyn Fn(usize) -> f32, bits);
        PVec { f, g: None, bits, e }
    }
    /// The first floats of `f` on a block exponent found before (the same
    /// vector as [`PVec::new`] gave it).
    pub fn with_exp(f: Floats<'a>, bits: u32, e: i32) -> PVec<'a> {
        PVec { f, g: None, bits, e }
    }
    /// The 23-bit block of the exact products f_i g_i (i < n).
    pub fn prod(f: Floats<'a>, g: Floats<'a>, n: usize) -> PVec<'a> {
        PVec { f, g: Some(g), bits: QP, e: pquant_exp(n, |i| f32_prod_parts(f.get(i), g.get(i)), QP) }
    }
    /// Mantissas 0..out.len() into `out`, as [`PVec::m`] gives them: the
    /// floats read in order from their 4-byte chunks, without `m`'s
    /// dispatch (the cached build, which converts a layer's vectors at
    /// every new position, with the conversions inlined, products too);
    /// the size-first build, the lean builds' products and elements past
    /// the floats by `m`.
    pub fn fill(&self, out: &mut [i32]) {
        #[cfg(not(atome_small))]
        let n = {
            let f4 = |c: &[u8]| match *c {
                [a, b, c, d] => f32::from_le_bytes([a, b, c, d]),
                _ => 0.0,
            };
            let conv = |f: f32| {
                if cfg!(atome_cached) {
                    super::arith::fq_inline(f, self.e, self.bits)
                } else {
                    fq(f, self.e, self.bits)
                }
            };
            let mut n = 0;
            match self.g {
                None => {
                    for (o, c) in out.iter_mut().zip(self.f.bytes().chunks_exact(4)) {
                        *o = conv(f4(c)) as i32;
                        n += 1;
                    }
                }
                Some(g) if cfg!(atome_cached) => {
                    for ((o, c), cg) in out.iter_mut().zip(self.f.bytes().chunks_exact(4)).zip(g.bytes().chunks_exact(4)) {
                        *o = prod_q(f4(c), f4(cg), self.e, self.bits) as i32;
                        n += 1;
                    }
                }
                Some(_) => {}
            }
            n
        };
        #[cfg(atome_small)]
        let n = 0;
        for (i, o) in out.iter_mut().enumerate().skip(n) {
            *o = self.m(i) as i32;
        }
    }
    /// Mantissa i. (Out of line on the microcontrollers, one copy for
    /// every use.)
    #[cfg_attr(atome_portable, inline(never))]
    pub fn m(&self, i: usize) -> i64 {
        match self.g {
            None => fq(self.f.get(i), self.e, self.bits),
            Some(g) => prod_q(self.f.get(i), g.get(i), self.e, self.bits),
        }
    }
}

/// One mantissa of the exact product a b on block exponent e: by
/// [`prod_fast`] where it applies, else pq of the product's parts.
#[cfg_attr(not(atome_small), inline(always))]
fn prod_q(a: f32, b: f32, e: i32, bits: u32) -> i64 {
    match prod_fast(a, b, e, bits) {
        Some(m) => m,
        None => {
            let (m, ex) = f32_prod_parts(a, b);
            pq(m, ex, e, bits)
        }
    }
}

/// pq of the exact product a b on block exponent e, when both are normal
/// floats and the shift is 24 to 63 (always so inside a block of such
/// products: |a b| >= 2^46 on its grid, s >= 47 - bits): rshr_hl on the
/// product's two words, no 64-bit shift (a library call on Cortex-M0).
#[cfg_attr(not(atome_small), inline(always))]
fn prod_fast(a: f32, b: f32, e: i32, bits: u32) -> Option<i64> {
    let (x, y) = (a.to_bits(), b.to_bits());
    let (bx, by) = (((x >> 23) & 0xFF) as i32, ((y >> 23) & 0xFF) as i32);
    let s = e - (bx - 150) - (by - 150);
    if bx == 0 || bx == 0xFF || by == 0 || by == 0xFF || !(24..=63).contains(&s) || bits > 30 {
        return None;
    }
    let sm = |w: u32| {
        let m = ((w & 0x7F_FFFF) | 0x80_0000) as i32;
        if w >> 31 != 0 {
            -m
        } else {
            m
        }
    };
    // |a b| < 2^48 and s >= 24: the quotient by 2^(s-1) is below 2^31.
    let p = mul64(sm(x), sm(y));
    let lim = (1i32 << bits) - 1;
    Some(i64::from(rshr_hl((p >> 32) as i32, p as u32, s as u32).clamp(-lim, lim)))
}

/// A D-vector of int32 values held in caller memory (the logits area,
/// unused until the head, or the int32 area).
#[derive(Clone, Copy)]
pub struct Vals<'a>(pub &'a [i32]);

impl<'a> Vals<'a> {
    /// Its first element's address and its length (int32 words).
    pub fn words(&self) -> (*const i32, usize) {
        (self.0.as_ptr(), self.0.len())
    }

    /// The values.
    pub fn ints(&self) -> &'a [i32] {
        self.0
    }
}

/// Where a [`Vals`] is written.
pub enum Area<'a> {
    /// Binary32 slots (the logits area).
    Bits(&'a mut [f32]),
    /// The int32 area.
    Ints(&'a mut [i32]),
}

impl<'a> Area<'a> {
    /// The area as int32 words.
    pub fn words(self) -> &'a mut [i32] {
        match self {
            // SAFETY: f32 and i32 have the same size and alignment, and
            // every bit pattern is valid for both; the exclusive borrow
            // moves into the result, with its lifetime.
            Area::Bits(a) => unsafe { core::slice::from_raw_parts_mut(a.as_mut_ptr().cast::<i32>(), a.len()) },
            Area::Ints(a) => a,
        }
    }

    /// Fills the area with `f(i)` and makes it read-only.
    #[inline(always)]
    pub fn fill(self, f: impl Fn(usize) -> i32) -> Vals<'a> {
        let w = self.words();
        for (i, o) in w.iter_mut().enumerate() {
            *o = f(i);
        }
        Vals(w)
    }
}

/// A parameter vector's mantissas: converted from the blob at each use, or
/// read from a per-layer copy in caller memory.
#[derive(Clone, Copy)]
pub struct PSrc<'a> {
    /// Block exponent.
    pub e: i32,
    at: Src<'a>,
}

#[derive(Clone, Copy)]
enum Src<'a> {
    Blob(PVec<'a>),
    Copy(Vals<'a>),
}

impl<'a> PSrc<'a> {
    /// The vector, copied into `area` when it is given.
    pub fn new(p: PVec<'a>, area: Option<Area<'a>>) -> PSrc<'a> {
        let at = match area {
            // |m| < 2^23: an int32. (One loop for both kinds of area, the
            // conversion inlined once.)
            Some(a) => {
                let w = a.words();
                p.fill(w);
                Src::Copy(Vals(w))
            }
            None => Src::Blob(p),
        };
        PSrc { e: p.e, at }
    }
    /// [`PSrc::new`] of `PVec::new(f, n, bits)` (`g`: of `PVec::prod(f,
    /// g, n)`), built in place: no PVec temporary in the caller's frame.
    #[inline(never)]
    pub fn of(f: Floats<'a>, g: Option<Floats<'a>>, n: usize, bits: u32, area: Option<Area<'a>>) -> PSrc<'a> {
        let p = match g {
            Some(g) => PVec::prod(f, g, n),
            None => PVec::new(f, n, bits),
        };
        PSrc::new(p, area)
    }
    /// The vector from a copy [`PVec::fill`] made earlier (kept in caller
    /// memory between calls).
    pub fn stored(p: PVec<'a>, w: &'a [i32]) -> PSrc<'a> {
        PSrc { e: p.e, at: Src::Copy(Vals(w)) }
    }
    /// The per-layer copy, when there is one.
    #[inline(always)]
    pub fn vals(&self) -> Option<Vals<'a>> {
        match self.at {
            Src::Blob(_) => None,
            Src::Copy(v) => Some(v),
        }
    }
    /// Mantissa i (|m| < 2^23). (Size-first: out of line.)
    #[cfg_attr(atome_small, inline(never))]
    #[cfg_attr(not(atome_small), inline(always))]
    pub fn m(&self, i: usize) -> i32 {
        match self.at {
            Src::Blob(p) => p.m(i) as i32,
            Src::Copy(Vals(b)) => b.get(i).copied().unwrap_or(0),
        }
    }
}

/// int32 words of [`LayerQ::words`].
pub const LAYER_WORDS: usize = 11;

/// One block's parameters in integer form.
pub struct LayerQ<'a> {
    /// LayerNorm gamma.
    pub g: PVec<'a>,
    /// LayerNorm beta.
    pub b: PVec<'a>,
    /// SSM input gain times its output gain (the recurrence runs on
    /// c_out * hs, docs/Q15.md#ssm-state-pathway).
    pub sb: PVec<'a>,
    /// Scales.
    pub conv: Scale,
    /// Wv's scale (applied in the mix).
    pub wv: Scale,
    /// Router scale.
    pub router: Scale,
    /// Attention score factor (Wq, Wk scales and 1/sqrt(DH)).
    pub cq: Scale,
}

impl<'a> LayerQ<'a> {
    /// The integer parameters of block `bl` (model width d, head width dh).
    pub fn new(bl: &Block<'a>, d: usize, dh: usize) -> LayerQ<'a> {
        let [conv, wv, router, cq] = Self::scales_of(bl, dh);
        let (nm, ssm) = (bl.norm(), bl.ssm());
        LayerQ {
            g: PVec::new(nm.gamma, d, QA),
            b: PVec::new(nm.beta, d, QA),
            sb: PVec::prod(ssm.b, ssm.c_out, d),
            conv,
            wv,
            router,
            cq,
        }
    }

    /// The scales of [`LayerQ::new`] alone: conv, wv, router, cq.
    pub fn scales_of(bl: &Block, dh: usize) -> [Scale; 4] {
        let (q, k) = (Scale::of(&bl.wq()), Scale::of(&bl.wk()));
        let (ism, ise) = fquant_scalar(1.0 / crate::math::sqrtf(dh as f32));
        let (cm, ce) = quant_scalar(i64::from(q.m) * i64::from(k.m) * ism, q.e + k.e + ise, QA);
        [Scale::of(&bl.conv()), Scale::of(&bl.wv()), Scale::of(&bl.router()), Scale { m: cm as i32, e: ce }]
    }

    /// Its scalars as words (the exponents of g, b and sb, then the four
    /// scales' mantissas and exponents): what a cached state stores per
    /// layer so that a new position need not rescan the blob.
    pub fn words(&self) -> [i32; LAYER_WORDS] {
        let s = |c: Scale| [c.m, c.e];
        let [cm, ce] = s(self.conv);
        let [wm, we] = s(self.wv);
        let [rm, re] = s(self.router);
        let [qm, qe] = s(self.cq);
        [self.g.e, self.b.e, self.sb.e, cm, ce, wm, we, rm, re, qm, qe]
    }

    /// The scales alone from stored [`LayerQ::words`], its vectors empty
    /// (reading as zeros): for the steps that read only scales (the
    /// attention's score factor, the mix's conv and Wv scales), with no
    /// walk of the blob.
    pub fn scales(w: &[i32; LAYER_WORDS]) -> LayerQ<'static> {
        let none = Floats::new(&[]);
        LayerQ {
            g: PVec::with_exp(none, QA, w[0]),
            b: PVec::with_exp(none, QA, w[1]),
            sb: PVec { f: none, g: None, bits: QP, e: w[2] },
            conv: Scale::at(w, 3),
            wv: Scale::at(w, 5),
            router: Scale::at(w, 7),
            cq: Scale::at(w, 9),
        }
    }

    /// The parameters of block `bl` from its stored [`LayerQ::words`]
    /// (the same values as [`LayerQ::new`], without its scans).
    pub fn from_words(bl: &Block<'a>, w: &[i32; LAYER_WORDS]) -> LayerQ<'a> {
        let (nm, ssm) = (bl.norm(), bl.ssm());
        LayerQ {
            g: PVec::with_exp(nm.gamma, QA, w[0]),
            b: PVec::with_exp(nm.beta, QA, w[1]),
            sb: PVec { f: ssm.b, g: Some(ssm.c_out), bits: QP, e: w[2] },
            conv: Scale::at(w, 3),
            wv: Scale::at(w, 5),
            router: Scale::at(w, 7),
            cq: Scale::at(w, 9),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::arith::bitlen;
    use super::*;
    use crate::test_rng::xorshift64 as xorshift;

    /// prod_fast against the exact product's pq: random floats of every
    /// class, block exponents around and beyond the fast path's shifts.
    #[test]
    fn prod_fast_is_pq_of_the_product() {
        let mut st = 0xD1B5_4A32_D192_ED03u64;
        let mut next = || xorshift(&mut st);
        let mut fast = 0;
        for i in 0..1_000_000 {
            let r = next();
            let pick = |w: u64| -> f32 {
                match w % 16 {
                    0 => f32::from_bits(w as u32 >> 9),                    // subnormal or zero
                    1 => [0.0, -0.0, f32::INFINITY, f32::NAN, f32::MAX][(w >> 8) as usize % 5],
                    _ => f32::from_bits(((w >> 4) as u32 & 0x807F_FFFF) | ((100 + (w >> 40) % 56) as u32) << 23),
                }
            };
            let (a, b) = (pick(r), pick(next()));
            let (m, ex) = f32_prod_parts(a, b);
            let base = if m == 0 { 0 } else { ex + bitlen(m.unsigned_abs()) };
            let e = base - 23 + (next() % 48) as i32 - 4 + if i % 50 == 0 { 40 } else { 0 };
            let bits = if i % 3 == 0 { QA } else { QP };
            let want = pq(m, ex, e, bits);
            if let Some(got) = prod_fast(a, b, e, bits) {
                fast += 1;
                assert_eq!(got, want, "{a:e} * {b:e} at e {e}, {bits} bits");
            }
        }
        assert!(fast > 500_000, "{fast}");
    }
}
