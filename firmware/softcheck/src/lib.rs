//! The soft-float routines against the platform's float operations, run on
//! the device (firmware/src/softcheck_main.c, scripts/soft_device_check.sh).
//!
//! On a core without an FPU the platform's `+`, `-` and `*` are the
//! compiler-builtins routines, an independent IEEE binary32
//! implementation; the library's own routines there are assembly (the
//! matvec accumulate loop) or integer code (src/kernels/device/sf.rs). Each
//! check draws operand pairs that reach every case of those routines:
//! equal and nearby exponents (cancellation, carries into the next binade),
//! far ones (the term below the accumulator's last bit), sparse mantissas
//! (exact halves, ties), opposite values (exact zeros), values at the edges
//! of the word window and of the float range, zeros, subnormals,
//! infinities and NaN.
#![no_std]
use atome::format::{Packing, Tensor};
use atome::kernels::device::{sf, soft};

/// xorshift32.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    /// A float of biased exponent `e` (clamped to 0..=255) and a random or
    /// sparse mantissa, either sign.
    fn with_exp(&mut self, e: i32) -> f32 {
        let r = self.next();
        let frac = match r % 4 {
            0 => self.next() & 0x7f_ffff,
            // Few bits set: sums land exactly on halves and ties.
            1 => (1 << (self.next() % 23)) | (1 << (self.next() % 23)),
            2 => 0x7f_ffff ^ (1 << (self.next() % 23)),
            _ => self.next() & 0x7f_ffc0,
        };
        let sign = (r >> 31) << 31;
        f32::from_bits(sign | ((e.clamp(0, 255) as u32) << 23) | frac)
    }

    /// An operand pair (a, b) from the classes above.
    fn pair(&mut self) -> (f32, f32) {
        let k = self.next() % 16;
        // Mostly inside the matvec's word window (exponents 96..159).
        let ea = match k {
            0 => (self.next() % 256) as i32,
            1 => [0, 1, 2, 95, 96, 97, 158, 159, 160, 253, 254, 255][(self.next() % 12) as usize],
            _ => 90 + (self.next() % 76) as i32,
        };
        let a = self.with_exp(ea);
        let d = match self.next() % 8 {
            0 | 1 => 0,
            2 => 1,
            3 => (self.next() % 8) as i32,
            4 => 20 + (self.next() % 16) as i32,
            5 => (self.next() % 40) as i32 - 20,
            _ => (self.next() % 64) as i32 - 32,
        };
        let b = match self.next() % 16 {
            // Exactly opposite, or a few units away from it.
            0 => -a,
            1 => f32::from_bits((-a).to_bits().wrapping_add(self.next() % 5).wrapping_sub(2)),
            2 => [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MIN_POSITIVE, f32::MAX][(self.next() % 7) as usize],
            _ => self.with_exp(ea - d),
        };
        if self.next().is_multiple_of(2) {
            (a, b)
        } else {
            (b, a)
        }
    }
}

/// Same bits, or both NaN (NaN payloads differ between implementations).
fn same(x: f32, y: f32) -> bool {
    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
}

/// What one check found: the count of mismatches and the first one.
#[repr(C)]
pub struct Found {
    pub mismatches: u32,
    pub a: u32,
    pub b: u32,
    pub got: u32,
    pub want: u32,
}

impl Found {
    fn see(&mut self, a: f32, b: f32, got: f32, want: f32) {
        if !same(got, want) {
            if self.mismatches == 0 {
                (self.a, self.b, self.got, self.want) = (a.to_bits(), b.to_bits(), got.to_bits(), want.to_bits());
            }
            self.mismatches += 1;
        }
    }
}

/// Check `which` on `n` operand pairs from `seed`:
/// 0 = the matvec accumulate step through its word path (the assembly loop
///     on these cores), a + b and a - b;
/// 1 = sf::add, sf::sub, sf::mul and sf::mul_add (c + a * b);
/// 2 = whole matvec rows (up to 64 terms, +-1 weights: the loop's state
///     carried from step to step) against the plain float loop; n rows.
///
/// # Safety
/// `out` must be valid for writing one [`Found`].
#[no_mangle]
pub unsafe extern "C" fn softcheck_run(which: u32, seed: u32, n: u32, out: *mut Found) {
    let mut f = Found { mismatches: 0, a: 0, b: 0, got: 0, want: 0 };
    let mut r = Rng(seed | 1);
    for _ in 0..n {
        match which {
            0 => {
                let (a, b) = r.pair();
                // The matvec never holds -0.0 (it starts from +0.0).
                let a = if a.to_bits() == 0x8000_0000 { 0.0 } else { a };
                f.see(a, b, soft::add_step_words(a, b, false), a + b);
                f.see(a, b, soft::add_step_words(a, b, true), a - b);
            }
            1 => {
                let (a, b) = r.pair();
                f.see(a, b, sf::add(a, b), a + b);
                f.see(a, b, sf::sub(a, b), a - b);
                f.see(a, b, sf::mul(a, b), a * b);
                // c + a * b for c = a, b, c near -(a * b), the zeros,
                // infinities and a NaN (with a normal product too), and b's
                // bits rotated (an unrelated c of any class).
                let near = f32::from_bits(((a * b).to_bits() ^ 0x8000_0000).wrapping_add(a.to_bits() & 3).wrapping_sub(b.to_bits() & 1));
                let other = f32::from_bits(b.to_bits().rotate_left(13));
                for c in [a, b, near, 0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, other] {
                    f.see(a, b, sf::mul_add(c, a, b), c + a * b);
                }
            }
            _ => row(&mut r, &mut f),
        }
    }
    // SAFETY: the caller's contract.
    unsafe { out.write(f) };
}

/// One random Trit2 row of up to 64 columns through the library's matvec
/// (matvec_device: the soft accumulate on these cores) and through the
/// plain float loop: nonzero terms in column order from +0.0, then times
/// the scale. One input vector, or four (a full pass of the soft matvec:
/// the loop over a row block's vectors, their inputs then kept inside the
/// word window so that every vector takes it).
fn row(r: &mut Rng, f: &mut Found) {
    let nv = if r.next().is_multiple_of(2) { 1 } else { 4 };
    // Any width: a last block of whole Trit2 bytes or not (the RV32 loop
    // on the bytes, or on entries).
    let cols = 1 + (r.next() % 64) as usize;
    let mut data = [0u8; 16];
    let mut x = [0.0f32; 256];
    for b in 0..nv {
        let e0 = 100 + (r.next() % 50) as i32;
        let mut prev = 0.0f32;
        for v in x[b * cols..].iter_mut().take(cols) {
            // Mostly near one exponent (so sums cancel and carry), some far,
            // some the previous input negated.
            let far = if nv == 1 { 90 + (r.next() % 76) as i32 } else { 96 + (r.next() % 64) as i32 };
            let e = if r.next().is_multiple_of(8) { far } else { e0 + (r.next() % 5) as i32 - 2 };
            // (And some zeros of either sign.)
            *v = match r.next() % 24 {
                0..=3 => -prev,
                4 => [0.0, -0.0][(r.next() % 2) as usize],
                _ => r.with_exp(e),
            };
            prev = *v;
        }
    }
    let mut codes = [0i8; 64];
    for (k, c) in codes.iter_mut().enumerate().take(cols) {
        let t = r.next() % 3;
        // Trit2 codes: 00 = 0, 01 = +1, 11 = -1.
        data[k / 4] |= ([0u8, 1, 3][t as usize]) << (2 * (k % 4));
        *c = [0i8, 1, -1][t as usize];
    }
    let w = Tensor { data: &data[..cols.div_ceil(4)], scale: 1.0, rows: 1, cols, packing: Packing::Trit2 };
    let mut got = [0.0f32; 4];
    atome::kernels::device::matvec_device(&w, &x[..nv * cols], cols, nv, &mut got[..nv], 1);
    for b in 0..nv {
        let mut want = 0.0f32;
        for (&c, &v) in codes.iter().zip(&x[b * cols..]).take(cols) {
            if c > 0 {
                want += v;
            } else if c < 0 {
                want -= v;
            }
        }
        // (The first input and the column count stand for the operands.)
        f.see(x[b * cols], cols as f32, got[b], want * w.scale);
    }
}
