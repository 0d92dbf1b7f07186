//! N f32 lanes, the unit of the forward pass's mixing and key scoring.
//!
//! A lane type is a plain array ([`Scalar`], any target; the compiler may
//! vectorize it) or a vector register (`x86::avx8`, reachable only through
//! the AVX2 proof token). Every operation is lane-wise IEEE binary32 with no
//! fused multiply-add, so every lane type gives the same bits.
//!
//! Code generic over the lane type implements [`LaneJob`]; the instruction
//! set's [`super::isa::Accel::with_lanes`] runs it with the best type the
//! CPU allows, compiled for that instruction set.
use super::device::sf;

/// N lanes of f32.
pub trait Lanes<const N: usize>: Copy {
    /// All lanes +0.0.
    fn zero() -> Self;
    /// All lanes v.
    fn splat(v: f32) -> Self;
    /// The lanes a[0..N].
    fn load(a: &[f32; N]) -> Self;
    /// Writes the lanes to a.
    fn store(self, a: &mut [f32; N]);
    /// self + o per lane.
    fn add(self, o: Self) -> Self;
    /// self * o per lane.
    fn mul(self, o: Self) -> Self;
    /// self * h in lanes where self != 0.0, +0.0 elsewhere.
    fn mul_nz(self, h: Self) -> Self;
    /// self + a * b per lane, the product rounded first (no fused
    /// multiply-add): the bits of `self.add(a.mul(b))`.
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        self.add(a.mul(b))
    }
    /// self + w.mul_nz(h): a conv tap added to a sum that is never -0.0
    /// (it starts at +0.0), so a lane where w is zero may keep self.
    #[inline(always)]
    fn add_mul_nz(self, w: Self, h: Self) -> Self {
        self.add(w.mul_nz(h))
    }

    /// buf[at..at + N] (lanes past nb may hold whatever follows; zeros
    /// past the end of buf).
    #[inline(always)]
    fn ld(buf: &[f32], at: usize, nb: usize) -> Self {
        match buf.get(at..at.wrapping_add(N)).map(<&[f32; N]>::try_from) {
            Some(Ok(a)) => Self::load(a),
            _ => Self::load(&load(buf, at, nb)),
        }
    }

    /// Lanes 0..nb into buf[at..].
    #[inline(always)]
    fn st(self, buf: &mut [f32], at: usize, nb: usize) {
        if nb == N {
            if let Some(Ok(a)) = buf.get_mut(at..at.wrapping_add(N)).map(<&mut [f32; N]>::try_from) {
                self.store(a);
                return;
            }
        }
        let mut a = [0.0f32; N];
        self.store(&mut a);
        store(buf, at, nb, &a);
    }

    /// Little-endian floats ch0..ch0 + nb of a byte array (zeros past its end).
    #[inline(always)]
    fn ld_bytes(b: &[u8], ch0: usize, nb: usize) -> Self {
        let mut a = [0.0f32; N];
        if let Some(raw) = b.get(4 * ch0..4 * ch0 + 4 * N) {
            for (v, &c) in a.iter_mut().zip(raw.as_chunks::<4>().0) {
                *v = f32::from_le_bytes(c);
            }
            return Self::load(&a);
        }
        for (j, v) in a.iter_mut().enumerate().take(nb) {
            let at = 4 * (ch0 + j);
            if let Some(c) = b.get(at..at + 4) {
                *v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        Self::load(&a)
    }
}

/// Code run with the lane type an instruction set provides.
pub trait LaneJob {
    /// What the job returns.
    type Out;
    /// Runs the job with lane type S of N lanes.
    fn run<S: Lanes<N>, const N: usize>(self) -> Self::Out;
}

/// Lanes as an array (the compiler may vectorize it).
#[derive(Clone, Copy)]
pub struct Scalar<const N: usize>([f32; N]);

impl<const N: usize> Scalar<N> {
    /// w * h for a nonzero w on cores without an FPU: +-1 * h (the Trit2
    /// conv weights) as h with its sign flipped or not, exactly the
    /// product without a software multiply; any other w, and NaN h (whose
    /// bits are the platform's), through the multiply.
    #[inline(always)]
    fn tap(w: f32, h: f32) -> f32 {
        let (wb, hb) = (w.to_bits(), h.to_bits());
        if wb << 1 == 0x7f00_0000 && hb << 1 <= 0xff00_0000 {
            f32::from_bits(hb ^ (wb & 0x8000_0000))
        } else {
            sf::mul(w, h)
        }
    }
}

impl<const N: usize> Lanes<N> for Scalar<N> {
    #[inline(always)]
    fn zero() -> Self {
        Scalar([0.0; N])
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        // Not `[v; N]`: for a generic N that is a loop that opt-level "s"
        // keeps even for one lane (measured on thumbv7em).
        let mut r = [0.0f32; N];
        for x in r.iter_mut() {
            *x = v;
        }
        Scalar(r)
    }
    #[inline(always)]
    fn load(a: &[f32; N]) -> Self {
        Scalar(*a)
    }
    #[inline(always)]
    fn store(self, a: &mut [f32; N]) {
        *a = self.0;
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        let mut r = self.0;
        for (r, o) in r.iter_mut().zip(o.0) {
            // (The integer add on cores without an FPU; `+` elsewhere.)
            *r = sf::add(*r, o);
        }
        Scalar(r)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let mut r = self.0;
        for (r, o) in r.iter_mut().zip(o.0) {
            *r = sf::mul(*r, o);
        }
        Scalar(r)
    }
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        let mut r = self.0;
        for ((r, a), b) in r.iter_mut().zip(a.0).zip(b.0) {
            // (One routine on Armv7-M without an FPU.)
            *r = sf::mul_add(*r, a, b);
        }
        Scalar(r)
    }
    #[inline(always)]
    fn add_mul_nz(self, w: Self, h: Self) -> Self {
        if !sf::ACTIVE {
            return self.add(w.mul_nz(h));
        }
        // Cores without an FPU: a zero weight adds nothing (the spec's
        // "0: nothing"; adding +0.0 to a sum that is not -0.0 gives the
        // same bits), so its software add is skipped.
        let mut r = self.0;
        for ((r, w), h) in r.iter_mut().zip(w.0).zip(h.0) {
            if w.to_bits() << 1 != 0 {
                *r = sf::add(*r, Self::tap(w, h));
            }
        }
        Scalar(r)
    }
    #[inline(always)]
    fn mul_nz(self, h: Self) -> Self {
        let mut r = [0.0f32; N];
        for ((r, w), h) in r.iter_mut().zip(self.0).zip(h.0) {
            // (The conv, the one user, calls add_mul_nz, which on cores
            // without an FPU does not come here.)
            let v = sf::mul(w, h);
            // On cores without an FPU a bit test (the same truth as
            // w != 0.0) instead of a float compare call.
            let nz = if sf::ACTIVE { w.to_bits() << 1 != 0 } else { w != 0.0 };
            *r = if nz { v } else { 0.0 };
        }
        Scalar(r)
    }
}

/// buf[at..at + nb] into lanes (zeros beyond nb or past the end).
#[inline(always)]
fn load<const N: usize>(buf: &[f32], at: usize, nb: usize) -> [f32; N] {
    let mut r = [0.0f32; N];
    // Lanes past nb may hold whatever follows: callers never use them.
    if let Some(s) = buf.get(at..at + N) {
        super::copy(&mut r, s);
        return r;
    }
    for (j, v) in r.iter_mut().enumerate().take(nb) {
        *v = buf.get(at + j).copied().unwrap_or(0.0);
    }
    r
}

/// Lanes 0..nb into buf[at..].
#[inline(always)]
fn store<const N: usize>(buf: &mut [f32], at: usize, nb: usize, v: &[f32; N]) {
    if nb == N {
        if let Some(s) = buf.get_mut(at..at + N) {
            super::copy(s, v);
            return;
        }
    }
    for (j, &x) in v.iter().enumerate().take(nb) {
        if let Some(o) = buf.get_mut(at + j) {
            *o = x;
        }
    }
}
