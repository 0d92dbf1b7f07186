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
///     carried from step to step) against the plain float loop; n rows;
/// 3 = the q15 engine's device kernels (src/kernels/q15: the conv, the
///     quantization passes, LayerNorm's statistics, q.k; the split SSM
///     products) against plain integer loops; n cases ([`q15_case`]).
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
            2 => row(&mut r, &mut f),
            _ => q15_case(&mut r, &mut f),
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

impl Found {
    /// An integer result against its plain loop's (`what` names the
    /// kernel, `case` the draw).
    fn see_int(&mut self, what: u32, case: u32, got: i64, want: i64) {
        if got != want {
            if self.mismatches == 0 {
                (self.a, self.b, self.got, self.want) = (what, case, got as u32, want as u32);
            }
            self.mismatches += 1;
        }
    }
}

/// A q15 activation: any int16 but -32768 (the engine's range), often at
/// its edges.
fn act(r: &mut Rng) -> i16 {
    match r.next() % 8 {
        0 => [32767, -32767, 0, 1, -1][(r.next() % 5) as usize],
        1 => (r.next() % 256) as i16 - 128,
        _ => (r.next() as i16).max(-32767),
    }
}

/// rshr(v, s) in int64, the contract's rounding (half up).
fn rshr64(v: i64, s: u32) -> i64 {
    if s == 0 {
        v
    } else {
        (v + (1i64 << (s - 1))) >> s
    }
}

/// One draw of every q15 device kernel against its plain loop.
fn q15_case(r: &mut Rng, f: &mut Found) {
    use atome::kernels::q15::{dot, norm, quant};
    use atome::q15::arith;
    let case = r.next();
    let n = (r.next() % 70) as usize;
    let mut a = [0i16; 70];
    let mut b = [0i16; 70];
    for (x, y) in a.iter_mut().zip(b.iter_mut()) {
        (*x, *y) = (act(r), act(r));
    }
    // q.k (SMLALD / SMLAL / the plain loop), the shorter length counting.
    let nb = if r.next().is_multiple_of(4) { (r.next() % 70) as usize } else { n };
    let want: i64 = a[..n].iter().zip(&b[..nb]).map(|(&x, &y)| i64::from(x) * i64::from(y)).sum();
    f.see_int(0, case, dot::dot_q(&a[..n], &b[..nb]), want);
    // LayerNorm's statistics.
    let (s, q, lo, hi) = norm::row_stats(&a[..n]);
    let w = |v: &[i16]| -> (i64, i64, i64, i64) {
        let it = || v.iter().map(|&x| i64::from(x));
        (it().sum(), it().map(|x| x * x).sum(), it().min().unwrap_or(i64::from(i32::MAX)), it().max().unwrap_or(i64::from(i32::MIN)))
    };
    let (ws, wq, wlo, whi) = w(&a[..n]);
    f.see_int(1, case, i64::from(s), ws);
    f.see_int(2, case, q, wq);
    f.see_int(3, case, i64::from(lo), wlo);
    f.see_int(4, case, i64::from(hi), whi);
    // The quantization passes on int32 sums of any size.
    let mut v = [0i32; 70];
    let bits = r.next() % 32;
    for x in v.iter_mut() {
        *x = (r.next() as i32) >> bits;
        if r.next().is_multiple_of(16) {
            *x = [i32::MIN + 1, i32::MAX, -(1 << 30), 1 << 30, 0][(r.next() % 5) as usize];
        }
    }
    let mx = v[..n].iter().fold(0u32, |m, x| m | x.unsigned_abs());
    f.see_int(5, case, i64::from(quant::or_abs(&v[..n])), i64::from(mx));
    // The rounding shift's precondition (quant_at's): |v| < 2^(16 + sh).
    let sh = r.next() % 32;
    if sh < 15 {
        for x in v.iter_mut() {
            *x %= 1 << (16 + sh);
        }
    }
    let mut o = [0i16; 70];
    quant::rshr_sat(&v[..n], sh, &mut o[..n]);
    for (k, (&x, &g)) in v[..n].iter().zip(&o[..n]).enumerate() {
        let want = rshr64(i64::from(x), sh + 1).clamp(-32767, 32767);
        f.see_int(6 + ((k as u32) << 8), case, i64::from(g), want);
    }
    // The SSM's split products (Cortex-M0's path), at their bounds.
    let t = ((r.next() as i32) >> (r.next() % 31)).clamp(-(1 << 30), 1 << 30);
    let hs = ((r.next() as i32) >> (r.next() % 31)).clamp(-(1 << 30), 1 << 30);
    // (The result fits an int32, the engine's case: for k < 14, hs is
    // scaled down to keep |t hs| >> (16 + k) below 2^30.)
    let k = 1 + r.next() % 16;
    let hs = if k < 14 { hs >> (14 - k) } else { hs };
    f.see_int(7, case, i64::from(arith::rshr_mul_split(t, hs, k)), rshr64(i64::from(t) * i64::from(hs), 16 + k));
    // (Its precondition, the engine's: the result fits an int32; here
    // |g| < 2^(15 + s2), so |g h| >> s2 < 2^30.)
    let s2 = 1 + r.next() % 15;
    let (g, h) = ((r.next() as i32) >> (16 - s2), i32::from(act(r)));
    f.see_int(8, case, i64::from(arith::rshr_mul16_split(g, h, s2)), rshr64(i64::from(g) * i64::from(h), s2));
    conv_case(r, f, case);
    ln_case(r, f, case);
    ssm_case(r, f, case);
    mix_case(r, f, case);
    affine_case(r, f, case);
    att_case(r, f, case);
    ln_first_case(r, f, case);
    // The 64 / 32-bit division of the softmax and tanh (restoring
    // division in asm on M0): any divisor, quotients near 2^32, the
    // boundary n = q d + (d - 1), and d >= 2^32 (another path).
    let d = match r.next() % 4 {
        0 => u64::from(r.next() | 1 << 31),
        1 => u64::from(r.next() >> (r.next() % 32)).max(1),
        2 => u64::from(r.next()) << (1 + r.next() % 8) | 1,
        _ => u64::from(r.next()).max(1),
    };
    let q = u64::from(r.next()) >> (r.next() % 33);
    let rem = if r.next().is_multiple_of(4) { d - 1 } else { u64::from(r.next()) % d };
    if let Some(n) = q.checked_mul(d).and_then(|v| v.checked_add(rem)) {
        f.see_int(14, case, arith::div_q32(n, d) as i64, (n / d) as i64);
    }
    // tanh_q30 (32-bit words; its 2^61 / u by div61's loop on M0) against
    // the contract's steps, on floats of every class and the exponents
    // where the quotient is not saturated; div61 on its whole range.
    for _ in 0..8 {
        let bits = match r.next() % 3 {
            0 => r.next(),
            _ => (r.next() & 0x807F_FFFF) | ((96 + r.next() % 40) << 23),
        };
        let a = f32::from_bits(bits);
        f.see_int(16, case, i64::from(arith::tanh_q30(a)), i64::from(arith::tanh_q30_steps(a)));
        let u = match r.next() % 8 {
            0 => [1 << 30, (1 << 30) + 1, 1 << 31, (1 << 31) - 1][(r.next() % 4) as usize],
            _ => (1u32 << 30) + r.next() % ((1 << 30) + 1),
        };
        f.see_int(17, case, i64::from(arith::div61(u)), ((1u64 << 61) / u64::from(u)) as i64);
    }
    // to_f32_prod (the FPU's product where there is one) against one
    // rounding of the exact binary64 product.
    for _ in 0..8 {
        let a = r.next() as i32 >> (r.next() % 32);
        let m = r.next() as i32 >> (17 + r.next() % 15);
        let e = (r.next() % 220) as i32 - 150;
        // (A zero product is +0.0, as to_f32 of 0.)
        let p = f64::from(a) * f64::from(m);
        let want = if p == 0.0 { 0.0 } else { (p * f64::from_bits(((e + 1023) as u64) << 52)) as f32 };
        f.see_int(18, case, i64::from(arith::to_f32_prod(i64::from(a), m, e).to_bits()), i64::from(want.to_bits()));
    }
    // exp2q (its Horner steps in asm on M0) against docs/Q15.md#exp2q's
    // definition in int64: C0..C5 are the contract's integers.
    const C: [i64; 6] = [1073741824, -744258021, 257897342, -59392531, 9905124, -1022888];
    matvec_case(r, f, case);
    // (One draw in eight: a case builds up to four 256-entry tables.)
    if r.next().is_multiple_of(8) {
        bytes_case(r, f, case);
    }
    for _ in 0..8 {
        let v = i64::from(r.next()) << (r.next() % 8) >> (r.next() % 8);
        let (ip, fr) = (v >> 24, v & ((1 << 24) - 1));
        let mut acc = C[5];
        for &c in C[..5].iter().rev() {
            acc = c + rshr64(acc * fr, 24);
        }
        let want = if ip >= 63 { 0 } else { rshr64(acc.clamp(0, 1 << 30), ip as u32) };
        f.see_int(15, case, arith::exp2q(v), want);
    }
}

/// The q15 matvec as the engine calls it (matvec_q_multi: the table
/// kernels with their asm row loops on M0/M3/M33/RV32, SMLAD on M4) against
/// the naive loop on the same core: one to three matrices of one width
/// (rows loops over several jobs, odd and even row counts), Trit2 payloads
/// of random bytes (code 10 included), 1 to 40 rows each, 4 to 80 columns
/// (whole and partial chunks) or 256, one to three positions, activations of any
/// size.
fn matvec_case(r: &mut Rng, f: &mut Found, case: u32) {
    use atome::format::{Packing, Tensor};
    use atome::kernels::isa::Accel;
    use atome::kernels::q15::matvec::{matvec_q_multi, matvec_q_naive, MvJobQ};
    // (One case in eight 256 columns, D = 256's rows, at most 12 of them.)
    let wide = r.next().is_multiple_of(8);
    let cols = if wide { 256 } else { 4 * (1 + (r.next() % 20) as usize) };
    let jobs = 1 + (r.next() % 3) as usize;
    let n = 1 + (r.next() % 3) as usize;
    let mut data = [[0u8; 40 * 20]; 3];
    for b in data.iter_mut().flatten() {
        *b = r.next() as u8;
    }
    let mut rows = [0usize; 3];
    for v in rows.iter_mut() {
        *v = 1 + (r.next() % if wide { 12 } else { 40 }) as usize;
    }
    let w: [Tensor; 3] = core::array::from_fn(|k| Tensor { data: &data[k][..rows[k] * cols / 4], scale: 1.0, rows: rows[k], cols, packing: Packing::Trit2 });
    // (Activations at a 4-byte aligned address, as the engine's rows, or
    // two bytes past one: the SMLAD kernel's two paths.)
    #[repr(align(4))]
    struct Aligned([i16; 3 * 256 + 1]);
    let mut x = Aligned([0i16; 3 * 256 + 1]);
    for v in x.0.iter_mut() {
        *v = act(r);
    }
    let off = (r.next() % 2) as usize;
    let xs = &x.0[off..off + n * cols];
    let (mut got, mut want) = ([[0i32; 3 * 40]; 3], [[0i32; 3 * 40]; 3]);
    {
        let [g0, g1, g2] = &mut got;
        let mut all = [
            MvJobQ { w: &w[0], out: &mut g0[..n * rows[0]], ostride: rows[0] },
            MvJobQ { w: &w[1], out: &mut g1[..n * rows[1]], ostride: rows[1] },
            MvJobQ { w: &w[2], out: &mut g2[..n * rows[2]], ostride: rows[2] },
        ];
        matvec_q_multi(Accel::detect(), &mut all[..jobs], xs, cols, n);
    }
    for k in 0..jobs {
        matvec_q_naive(&w[k], xs, cols, n, &mut want[k][..n * rows[k]], rows[k]);
        for j in 0..n * rows[k] {
            f.see_int(16 + ((j as u32) << 8) + ((k as u32) << 16), case, i64::from(got[k][j]), i64::from(want[k][j]));
        }
    }
}

/// The one-position byte-table matvec (matvec_q_bytes: its asm table
/// builds and row loops on M0, Thumb-2 and RV32) against the naive loop on
/// the same core: one to three matrices of 8 to 128 columns (multiples of
/// 8: two tables a pass, or four where the width is a multiple of 16 and
/// 768 words are lent), 1 to 40 rows (odd and even), random payloads
/// (code 10 included) or, for the clean build, payloads without code 10
/// over tables holding junk.
fn bytes_case(r: &mut Rng, f: &mut Found, case: u32) {
    use atome::format::{Packing, Tensor};
    use atome::kernels::q15::matvec::{matvec_q_bytes, matvec_q_naive, MvJobQ};
    let cols = 8 * (1 + (r.next() % 16) as usize);
    let jobs = 1 + (r.next() % 3) as usize;
    let clean = r.next().is_multiple_of(2);
    let mut data = [[0u8; 40 * 32]; 3];
    for b in data.iter_mut().flatten() {
        let mut v = r.next() as u8;
        if clean {
            // Every code 10 to 00.
            for k in 0..4 {
                if (v >> (2 * k)) & 3 == 2 {
                    v &= !(3 << (2 * k));
                }
            }
        }
        *b = v;
    }
    let mut rows = [0usize; 3];
    for v in rows.iter_mut() {
        *v = 1 + (r.next() % 40) as usize;
    }
    let w: [Tensor; 3] = core::array::from_fn(|k| Tensor { data: &data[k][..rows[k] * cols / 4], scale: 1.0, rows: rows[k], cols, packing: Packing::Trit2 });
    let mut x = [0i16; 128];
    for v in x.iter_mut() {
        *v = act(r);
    }
    // Tables over junk (the clean build leaves the other entries as they
    // are); 256, 512 or 768 words lent beside the first.
    let mut t0 = [0i32; 256];
    let mut more = [0i32; 768];
    for v in t0.iter_mut().chain(more.iter_mut()) {
        *v = r.next() as i32;
    }
    let lent = 256 * (1 + (r.next() % 3) as usize);
    let (mut got, mut want) = ([[0i32; 40]; 3], [[0i32; 40]; 3]);
    let ok = {
        let [g0, g1, g2] = &mut got;
        let mut all = [
            MvJobQ { w: &w[0], out: &mut g0[..rows[0]], ostride: rows[0] },
            MvJobQ { w: &w[1], out: &mut g1[..rows[1]], ostride: rows[1] },
            MvJobQ { w: &w[2], out: &mut g2[..rows[2]], ostride: rows[2] },
        ];
        matvec_q_bytes(&mut all[..jobs], &x[..cols], &mut t0, &mut more[..lent], clean)
    };
    f.see_int(28, case, i64::from(ok), 1);
    for k in 0..jobs {
        matvec_q_naive(&w[k], &x[..cols], cols, 1, &mut want[k][..rows[k]], rows[k]);
        for j in 0..rows[k] {
            f.see_int(29 + ((j as u32) << 8) + ((k as u32) << 16), case, i64::from(got[k][j]), i64::from(want[k][j]));
        }
    }
}

/// The Cortex-M0 LayerNorm passes (kernels/q15/norm.rs) against the same
/// wrapping integer steps: random constants and shifts, even lengths.
#[cfg(all(target_arch = "arm", not(target_has_atomic = "32")))]
fn ln_case(r: &mut Rng, f: &mut Found, case: u32) {
    use atome::kernels::q15::norm_t1::ln_passes_t1;
    let n = 2 * (1 + (r.next() % 32) as usize);
    let mut xm = [0i16; 64];
    let (mut g, mut b) = ([0i32; 64], [0i32; 64]);
    for i in 0..n {
        xm[i] = act(r);
        g[i] = (r.next() as i32) >> (r.next() % 32);
        b[i] = (r.next() as i32) >> (r.next() % 32);
    }
    let k: [i32; 7] = core::array::from_fn(|_| (r.next() as i32) >> (r.next() % 32));
    let t: [u32; 4] = core::array::from_fn(|_| r.next() % 32);
    let mut w = [0i32; 64];
    // SAFETY: g and b hold 64 >= n int32.
    let Some(mx) = (unsafe { ln_passes_t1(&xm[..n], g.as_ptr(), b.as_ptr(), k, t, &mut w[..n]) }) else {
        f.see_int(11, case, 1, 0);
        return;
    };
    let [dm, c, im, r2, r3, m4, r4] = k;
    let mut want_mx = 0u32;
    for i in 0..n {
        let cm = i32::from(xm[i]).wrapping_mul(dm).wrapping_add(c) >> t[0];
        let zm = cm.wrapping_mul(im).wrapping_add(r2) >> t[1];
        let v = (g[i].wrapping_mul(zm).wrapping_add(r3) >> t[2]).wrapping_add(b[i].wrapping_mul(m4).wrapping_add(r4) >> t[3]);
        want_mx |= v.unsigned_abs();
        f.see_int(12 + ((i as u32) << 8), case, i64::from(w[i]), i64::from(v));
    }
    f.see_int(13, case, i64::from(mx), i64::from(want_mx));
}

/// The SSM sums of the Thumb-2 cores (kernels/q15/ssm.rs: SMULL, and
/// SMMULR on Armv7E-M) against the contract's int64 sums: decay shifts 30
/// to 32, input shifts 1 to 32, factors at their bounds (T = +-2^30, |hs|
/// = 2^30 - 1, |b| = 2^23 - 1, h = +-32767) and anywhere below.
#[cfg(all(target_arch = "arm", target_has_atomic = "32"))]
fn ssm_case(r: &mut Rng, f: &mut Found, case: u32) {
    use atome::kernels::q15::ssm_t2::ssm_sums_s;
    let n = 1 + (r.next() % 64) as usize;
    let s1 = 30 + r.next() % 3;
    let s2 = 1 + r.next() % 32;
    let mut pick = |lim: i32| -> i32 {
        match r.next() % 6 {
            0 => lim,
            1 => -lim,
            _ => ((r.next() as i32) >> (r.next() % 31)).clamp(-lim, lim),
        }
    };
    let (mut t, mut b, mut hs, mut h) = ([0i32; 64], [0i32; 64], [0i32; 64], [0i16; 64]);
    for c in 0..n {
        t[c] = pick(1 << 30);
        hs[c] = pick((1 << 30) - 1);
        // (The engine's bound: |b h| >> s2 below 2^30.)
        b[c] = pick((1 << 23) - 1) >> 8u32.saturating_sub(s2);
        h[c] = pick(32767) as i16;
    }
    let mut want = [0i64; 64];
    let mut want_mx = 0u64;
    for c in 0..n {
        want[c] = rshr64(i64::from(t[c]) * i64::from(hs[c]), s1) + rshr64(i64::from(b[c]) * i64::from(h[c]), s2);
        want_mx |= want[c].unsigned_abs();
    }
    // SAFETY: t and b hold n int32 each; hs and h are n long; s1 in
    // 30..=32, s2 in 1..=32.
    let mx = unsafe { ssm_sums_s(t.as_ptr(), b.as_ptr(), &mut hs[..n], &h[..n], s1, s2) };
    for c in 0..n {
        f.see_int(17 + ((c as u32) << 8), case, i64::from(hs[c]), want[c]);
    }
    f.see_int(18, case, i64::from(mx), want_mx as i64);
}

/// The Armv7E-M mix sums (kernels/q15/mix.rs: SMMULR, SMMLAR, SHADD16)
/// against the engine's wrapping int32 steps: every shift mode (0, 1, 2 to
/// 31; the residual's -20 to 40), any coefficients (k2 below 2^15), sums
/// and states at their bounds, even lengths.
#[cfg(softcheck_dsp)]
fn mix_case(r: &mut Rng, f: &mut Found, case: u32) {
    use atome::kernels::q15::mix_dsp::mix_sums_dsp;
    let n = 2 * (1 + (r.next() % 32) as usize);
    let mut pick = |lim: i32| -> i32 {
        match r.next() % 6 {
            0 => lim,
            1 => -lim,
            _ => ((r.next() as i32) >> (r.next() % 31)).clamp(-lim, lim),
        }
    };
    let (mut lm, mut hs, mut sp, mut xr) = ([0i32; 64], [0i32; 64], [0i16; 64], [0i16; 64]);
    for c in 0..n {
        lm[c] = pick((1 << 18) - 1);
        hs[c] = pick((1 << 30) - 1);
        sp[c] = pick(32767) as i16;
        xr[c] = pick(32767) as i16;
    }
    let k2 = pick(32767);
    let shift = |v: u32| -> u32 {
        match v % 6 {
            0 => 0,
            1 => 1,
            2 => 2,
            3 => 31,
            _ => (v >> 8) % 32,
        }
    };
    let (tl, ts) = (shift(r.next()), shift(r.next()));
    let sx = (r.next() % 61) as i32 - 20;
    let ks = [r.next() as i32, r.next() as i32, k2];
    let rs = |v: i32, t: u32| if t == 0 { v } else { rshr64(i64::from(v), t) as i32 };
    let xf = |x: i32| if sx <= 0 { x * (1 << (-sx).min(14)) } else { rshr64(i64::from(x), sx.min(31) as u32) as i32 };
    let mut want = [0i32; 64];
    let mut want_mx = 0u32;
    for c in 0..n {
        let v = xf(i32::from(xr[c])).wrapping_add(ks[0].wrapping_mul(rs(lm[c], tl))).wrapping_add(ks[1].wrapping_mul(rs(hs[c], ts))).wrapping_add(ks[2] * i32::from(sp[c]));
        want[c] = v;
        want_mx |= v.unsigned_abs();
    }
    let mx = mix_sums_dsp(&mut lm[..n], &hs[..n], &sp[..n], &xr[..n], (tl, ts, sx), ks);
    f.see_int(19, case, i64::from(mx.unwrap_or(0)), i64::from(want_mx));
    for c in 0..n {
        f.see_int(20 + ((c as u32) << 8), case, i64::from(lm[c]), i64::from(want[c]));
    }
}

/// The Armv7E-M LayerNorm affine pass (kernels/q15/norm.rs: SMMULR,
/// SMMLAR) against the engine's int32 steps: every shift 1 to 31 of the
/// gamma term, 0 (a left shift as a factor) to 31 of the beta term,
/// products and mantissas at their bounds.
#[cfg(softcheck_dsp)]
fn affine_case(r: &mut Rng, f: &mut Found, case: u32) {
    use atome::kernels::q15::norm_dsp::ln_affine_dsp;
    let n = 2 * (1 + (r.next() % 32) as usize);
    let t2 = 1 + r.next() % 31;
    let t3 = if r.next().is_multiple_of(3) { 0 } else { r.next() % 32 };
    let m4 = if t3 == 0 { 1i32 << (r.next() % 8) } else { 1 };
    let mut pick = |lim: i32| -> i32 {
        match r.next() % 6 {
            0 => lim,
            1 => -lim,
            _ => ((r.next() as i32) >> (r.next() % 31)).clamp(-lim, lim),
        }
    };
    let (mut g, mut b, mut w) = ([0i32; 64], [0i32; 64], [0i32; 64]);
    for c in 0..n {
        // (|g zm| < 2^30, |b m4| < 2^30: the engine's bounds.)
        g[c] = pick(32767);
        w[c] = pick(32767);
        b[c] = pick((1 << 23) - 1) / m4;
    }
    let mut want = [0i32; 64];
    let mut want_mx = 0u32;
    for c in 0..n {
        let gt = rshr64(i64::from(g[c]) * i64::from(w[c]), t2);
        let bt = if t3 == 0 { i64::from(b[c]) * i64::from(m4) } else { rshr64(i64::from(b[c]), t3) };
        want[c] = (gt + bt) as i32;
        want_mx |= want[c].unsigned_abs();
    }
    // SAFETY: g and b hold n int32 each, word aligned.
    let mx = unsafe { ln_affine_dsp(&mut w[..n], g.as_ptr(), b.as_ptr(), t2, t3, m4) };
    f.see_int(21, case, i64::from(mx.unwrap_or(0)), i64::from(want_mx));
    for c in 0..n {
        f.see_int(22 + ((c as u32) << 8), case, i64::from(w[c]), i64::from(want[c]));
    }
}

/// The Armv7E-M weighted sum of four value rows (kernels/q15/mix.rs
/// att_sum4_dsp) against plain int32 sums: weights anywhere in int16,
/// values at their bounds, even lengths; a weight of 2^15 must decline.
#[cfg(softcheck_dsp)]
fn att_case(r: &mut Rng, f: &mut Found, case: u32) {
    use atome::kernels::q15::attention_dsp::att_sum4_dsp;
    let n = 2 * (1 + (r.next() % 32) as usize);
    let mut v = [[0i16; 64]; 4];
    for x in v.iter_mut().flatten() {
        *x = act(r);
    }
    let mut ks = [0i32; 4];
    for k in ks.iter_mut() {
        *k = match r.next() % 5 {
            0 => 32767,
            1 => -32768,
            2 => 0,
            _ => (r.next() as i32) >> 17,
        };
    }
    let mut out = [0i32; 64];
    let mx = att_sum4_dsp(&mut out[..n], [&v[0][..n], &v[1][..n], &v[2][..n], &v[3][..n]], ks);
    let mut want_mx = 0u32;
    for c in 0..n {
        let want = (0..4).map(|i| ks[i] * i32::from(v[i][c])).sum::<i32>();
        want_mx |= want.unsigned_abs();
        f.see_int(23 + ((c as u32) << 8), case, i64::from(out[c]), i64::from(want));
    }
    f.see_int(24, case, i64::from(mx.unwrap_or(0)), i64::from(want_mx));
    let big = att_sum4_dsp(&mut out[..n], [&v[0][..n], &v[1][..n], &v[2][..n], &v[3][..n]], [1 << 15, 0, 0, 0]);
    f.see_int(25, case, i64::from(big.is_some()), 0);
}

/// (Only Armv7E-M has this loop.)
#[cfg(not(softcheck_dsp))]
fn att_case(_: &mut Rng, _: &mut Found, _: u32) {}

/// (Only Armv7E-M has this loop.)
#[cfg(not(softcheck_dsp))]
fn affine_case(_: &mut Rng, _: &mut Found, _: u32) {}

/// (Only Armv7E-M has this loop.)
#[cfg(not(softcheck_dsp))]
fn mix_case(_: &mut Rng, _: &mut Found, _: u32) {}

/// LayerNorm's first pass on the Thumb-2 cores (kernels/q15/norm.rs
/// ln_first_t2) against the engine's wrapping int32 steps: any constants,
/// shifts 0 to 31, even lengths.
#[cfg(all(target_arch = "arm", target_has_atomic = "32"))]
fn ln_first_case(r: &mut Rng, f: &mut Found, case: u32) {
    use atome::kernels::q15::norm_t2::ln_first_t2;
    let n = 2 * (1 + (r.next() % 32) as usize);
    let mut xm = [0i16; 64];
    for x in xm.iter_mut() {
        *x = act(r);
    }
    let k = [r.next() as i32, r.next() as i32, (r.next() as i32) >> (r.next() % 16), (r.next() as i32) >> (r.next() % 31)];
    let t = [r.next() % 32, r.next() % 32];
    let mut w = [0i32; 64];
    f.see_int(26, case, i64::from(ln_first_t2(&xm[..n], k, t, &mut w[..n])), 1);
    for c in 0..n {
        let cm = i32::from(xm[c]).wrapping_mul(k[0]).wrapping_add(k[1]) >> t[0];
        let want = cm.wrapping_mul(k[2]).wrapping_add(k[3]) >> t[1];
        f.see_int(27 + ((c as u32) << 8), case, i64::from(w[c]), i64::from(want));
    }
}

/// (Only the Thumb-2 cores have this loop.)
#[cfg(not(all(target_arch = "arm", target_has_atomic = "32")))]
fn ln_first_case(_: &mut Rng, _: &mut Found, _: u32) {}

/// (Only the Thumb-2 cores have this loop.)
#[cfg(not(all(target_arch = "arm", target_has_atomic = "32")))]
fn ssm_case(_: &mut Rng, _: &mut Found, _: u32) {}

/// (Only Cortex-M0 has these passes.)
#[cfg(not(all(target_arch = "arm", not(target_has_atomic = "32"))))]
fn ln_case(_: &mut Rng, _: &mut Found, _: u32) {}

/// The Thumb-2 conv (kernels/q15/conv_t2.rs) against the contract's sum,
/// any payload bits (code 10 included), taps missing or shifted by one.
#[cfg(all(target_arch = "arm", target_has_atomic = "32"))]
fn conv_case(r: &mut Rng, f: &mut Found, case: u32) {
    use atome::kernels::q15::conv_t2::conv5_t2;
    conv_check(r, f, case, false, conv5_t2);
}

/// The Cortex-M0 conv (kernels/q15/conv_t1.rs) against the contract's sum:
/// payloads without code 10 (the engine checks once per layer; with one,
/// the kernel must decline), taps missing or shifted by one.
#[cfg(all(target_arch = "arm", not(target_has_atomic = "32")))]
fn conv_case(r: &mut Rng, f: &mut Found, case: u32) {
    use atome::kernels::q15::{conv_t1::conv5_t1, has_code10};
    conv_check(r, f, case, true, |data, taps, out| {
        let clean = !has_code10(data);
        let got = conv5_t1(data, taps, clean, out);
        // (Declining is right only for a payload with code 10.)
        if got.is_none() && !clean {
            return Some(());
        }
        got
    });
}

/// A random K = 5 case through `run`, each channel against the contract's
/// sum (`clear10`: code 10 cleared from the payload first).
#[cfg(target_arch = "arm")]
fn conv_check(r: &mut Rng, f: &mut Found, case: u32, clear10: bool, run: impl Fn(&[u8], &atome::kernels::q15::conv::Taps5, &mut [i32]) -> Option<()>) {
    use atome::kernels::q15::conv::Taps5;
    let d = 4 * (1 + (r.next() % 16) as usize);
    let mut rows = [[0i16; 64]; 5];
    for row in rows.iter_mut() {
        for x in row.iter_mut() {
            *x = act(r);
        }
    }
    let mut data = [0u8; 80];
    // Code 10 cleared in three cases of four (the fourth keeps any codes:
    // the M0 kernel must then decline).
    let clear = clear10 && !r.next().is_multiple_of(4);
    for x in data.iter_mut() {
        *x = r.next() as u8;
        if clear {
            *x &= !((!*x & 0x55) << 1);
        }
    }
    let valid = if r.next().is_multiple_of(2) { 31 } else { r.next() % 32 };
    let shifted = r.next() % 32;
    let taps = Taps5 { rows: [&rows[0][..d], &rows[1][..d], &rows[2][..d], &rows[3][..d], &rows[4][..d]], shifted, valid };
    let mut out = [i32::MIN; 64];
    if run(&data[..d / 4 * 5], &taps, &mut out[..d]).is_none() {
        f.see_int(9, case, 1, 0);
        return;
    }
    if out[0] == i32::MIN && clear10 {
        // Declined (a payload with code 10): nothing written, as it should.
        return;
    }
    for c in 0..d {
        let mut want = 0i64;
        for (k, row) in rows.iter().enumerate() {
            let bit = 10 * c + 2 * k;
            let code = (data[bit / 8] >> (bit % 8)) & 3;
            let wk = [0, 1, 0, -1][code as usize];
            if valid >> k & 1 == 1 {
                want += wk * rshr64(i64::from(row[c]), shifted >> k & 1);
            }
        }
        f.see_int(10 + ((c as u32) << 8), case, i64::from(out[c]), want);
    }
}

/// (RISC-V has no such conv.)
#[cfg(not(target_arch = "arm"))]
fn conv_case(_: &mut Rng, _: &mut Found, _: u32) {}
