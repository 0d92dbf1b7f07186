//! Helpers shared by the fuzz targets: an input reader, allocation of the C
//! structs, the blob generator, and naive reference kernels written straight
//! from docs/ARITHMETIC.md (the kernels target compares the library against them
//! bit for bit).
#![allow(clippy::missing_safety_doc)]

#[path = "blobgen.rs"]
pub mod blobgen;

use atome::config::*;

/// Reads fuzz input as a stream of values; zeros once exhausted.
pub struct Src<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Src<'a> {
    /// Over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Src { data, pos: 0 }
    }
    /// Bytes left.
    pub fn left(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }
    /// One byte.
    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    /// Little-endian u16.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    /// Little-endian u32.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    /// Little-endian u64.
    pub fn u64(&mut self) -> u64 {
        self.u32() as u64 | (self.u32() as u64) << 32
    }
    /// Little-endian i32.
    pub fn i32(&mut self) -> i32 {
        self.u32() as i32
    }
    /// Up to n bytes (fewer at the end).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let s = self.pos.min(self.data.len());
        let e = (s + n).min(self.data.len());
        self.pos = e;
        &self.data[s..e]
    }
    /// The rest.
    pub fn rest(&mut self) -> &'a [u8] {
        let n = self.left();
        self.bytes(n)
    }
    /// A float: often special (NaN, inf, huge, tiny, signed zeros), often plain.
    pub fn f32(&mut self) -> f32 {
        let sel = self.u8();
        special_f32(sel, self)
    }
}

/// Special values and plain ones.
pub fn special_f32(sel: u8, s: &mut Src) -> f32 {
    match sel % 32 {
        0 => f32::NAN,
        1 => -f32::NAN,
        2 => f32::INFINITY,
        3 => f32::NEG_INFINITY,
        4 => 0.0,
        5 => -0.0,
        6 => 1e30,
        7 => -1e30,
        8 => f32::MAX,
        9 => f32::MIN,
        10 => f32::MIN_POSITIVE,
        11 => f32::from_bits(1),
        12 => 1.0,
        13 => -1.0,
        14 => 1e-30,
        15 => f32::from_bits(0x7fc0_0001 | (s.u8() as u32) << 8),
        16..=23 => f32::from_bits(s.u32()),
        _ => (s.u16() as i16) as f32 / 256.0,
    }
}

/// A zero-initialised box of a C struct (all three are valid when zeroed).
pub fn zeroed<T>() -> Box<T> {
    // SAFETY: the library's C structs are integers, floats and raw pointers:
    // all-zero bytes are a valid value (null pointers, an unloaded model).
    unsafe { Box::<T>::new_zeroed().assume_init() }
}

/// Fills a struct's bytes from the input (a "garbage" state).
pub fn scribble<T>(b: &mut T, s: &mut Src) {
    let n = core::mem::size_of::<T>();
    // SAFETY: only used on atome_state_t, whose every bit pattern is valid
    // (floats, and u32/i32 metadata in the cached plan).
    let bytes = unsafe { core::slice::from_raw_parts_mut(b as *mut T as *mut u8, n) };
    let src = s.bytes(64);
    if src.is_empty() {
        bytes.fill(0xA5);
    } else {
        for (i, x) in bytes.iter_mut().enumerate() {
            *x = src[i % src.len()] ^ (i as u8).wrapping_mul(31);
        }
    }
}

/// A copy of `bytes` starting at an address `shift` bytes past 8-aligned.
pub struct Shifted {
    buf: Vec<u64>,
    shift: usize,
    len: usize,
}

impl Shifted {
    /// Copies.
    pub fn new(bytes: &[u8], shift: usize) -> Self {
        let shift = shift % 8;
        let mut buf = vec![0u64; (bytes.len() + shift).div_ceil(8) + 1];
        // SAFETY: buf holds at least bytes.len() + shift bytes.
        let dst = unsafe { core::slice::from_raw_parts_mut((buf.as_mut_ptr() as *mut u8).add(shift), bytes.len()) };
        dst.copy_from_slice(bytes);
        Shifted { buf, shift, len: bytes.len() }
    }
    /// The copy.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: as in new.
        unsafe { core::slice::from_raw_parts((self.buf.as_ptr() as *const u8).add(self.shift), self.len) }
    }
    /// Mutable copy.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in new.
        unsafe { core::slice::from_raw_parts_mut((self.buf.as_mut_ptr() as *mut u8).add(self.shift), self.len) }
    }
}

/// First index of the maximum, strict `>` from index 0 (docs/ARITHMETIC.md#head).
pub fn argmax(v: &[f32]) -> usize {
    let mut best = 0;
    for i in 1..v.len() {
        if v[i] > v[best] {
            best = i;
        }
    }
    best
}

/// Same bits, or both NaN.
pub fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Asserts two float slices are the same bits (NaN matches NaN).
pub fn assert_same(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(same(*g, *w), "{what}[{i}]: library {g:e} ({:08x}) vs reference {w:e} ({:08x})", g.to_bits(), w.to_bits());
    }
}

/// Reference kernels from docs/ARITHMETIC.md and docs/CONTRACT.md (P3), written
/// independently of the library (only its expf/tanhf are shared, since
/// their bits are the library's own definition).
// Reference kernels written as the contract states each value (`acc = acc +
// x`, index loops, the C kernels' argument lists).
#[allow(clippy::assign_op_pattern, clippy::needless_range_loop, clippy::too_many_arguments)]
pub mod refk {
    use atome::math::{expf, tanhf};

    /// Weight n of a payload (0 past its end; packing as the C tag).
    pub fn weight(p: &[u8], packing: u8, n: usize) -> i8 {
        match packing {
            0 => match p.get(n / 4).map(|b| (b >> (2 * (n % 4))) & 3) {
                Some(1) => 1,
                Some(3) => -1,
                _ => 0,
            },
            1 => match p.get(n / 5) {
                Some(&b) => ((b as u32 / 3u32.pow((n % 5) as u32)) % 3) as i8 - 1,
                None => 0,
            },
            _ => {
                let g = 3 * (n / 8);
                match p.get(g..g + 3) {
                    Some(s) => {
                        let w = s[0] as u32 | (s[1] as u32) << 8 | (s[2] as u32) << 16;
                        [0, 1, -1, 3, -3, 9, -9, 0][((w >> (3 * (n % 8))) & 7) as usize]
                    }
                    None => 0,
                }
            }
        }
    }

    fn step(acc: f32, w: i8, x: f32) -> f32 {
        match w {
            0 => acc,
            1 => acc + x,
            -1 => acc - x,
            w => acc + (w as f32) * x,
        }
    }

    /// y = W x.
    pub fn matvec(p: &[u8], packing: u8, scale: f32, rows: usize, cols: usize, x: &[f32]) -> Vec<f32> {
        (0..rows)
            .map(|j| {
                let mut acc = 0.0f32;
                for i in 0..cols {
                    acc = step(acc, weight(p, packing, j * cols + i), x[i]);
                }
                acc * scale
            })
            .collect()
    }

    /// Little-endian float i of a byte array.
    pub fn f(b: &[u8], i: usize) -> f32 {
        f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    }

    /// LayerNorm.
    pub fn layer_norm(x: &[f32], gamma: &[u8], beta: &[u8]) -> Vec<f32> {
        let d = x.len() as f32;
        let mut mean = 0.0f32;
        for &v in x {
            mean = mean + v;
        }
        mean = mean / d;
        let mut var = 0.0f32;
        for &v in x {
            var = var + (v - mean) * (v - mean);
        }
        var = var / d;
        let inv = 1.0 / (var + 1e-5).sqrt();
        x.iter().enumerate().map(|(i, &v)| f(gamma, i) * (v - mean) * inv + f(beta, i)).collect()
    }

    /// Depthwise causal conv: rows of `d` floats; channels c < ch.
    pub fn conv(x: &[f32], d: usize, n: usize, p: &[u8], packing: u8, scale: f32, ch: usize, k: usize, out: &mut [f32]) {
        for c in 0..ch {
            for t in 0..n {
                let mut acc = 0.0f32;
                for kk in 0..k {
                    if kk > t {
                        break;
                    }
                    acc = step(acc, weight(p, packing, c * k + kk), x[(t - kk) * d + c]);
                }
                out[t * d + c] = acc * scale;
            }
        }
    }

    /// Diagonal SSM continuing from h.
    pub fn ssm(x: &[f32], d: usize, n: usize, a: &[u8], b: &[u8], c: &[u8], ch: usize, h: &mut [f32], out: &mut [f32]) {
        for i in 0..ch {
            let th = tanhf(f(a, i));
            for t in 0..n {
                h[i] = th * h[i] + f(b, i) * x[t * d + i];
                out[t * d + i] = f(c, i) * h[i];
            }
        }
    }

    /// Softmax (docs/ARITHMETIC.md).
    pub fn softmax(v: &mut [f32]) {
        if v.is_empty() {
            return;
        }
        let mut m = v[0];
        for &x in &v[1..] {
            if x > m {
                m = x;
            }
        }
        let mut sum = 0.0f32;
        for x in v.iter_mut() {
            *x = expf(*x - m);
            sum = sum + *x;
        }
        let inv = 1.0 / (sum + 1e-10);
        for x in v.iter_mut() {
            *x = *x * inv;
        }
    }

    /// Sparse attention over n rows of d floats: out[t] for t < n.
    #[allow(clippy::too_many_arguments)]
    pub fn attn(
        x: &[f32],
        d: usize,
        n: usize,
        dh: usize,
        topk: usize,
        wq: (&[u8], u8, f32),
        wk: (&[u8], u8, f32),
        wv: (&[u8], u8, f32),
        out: &mut [f32],
    ) {
        let keys: Vec<Vec<f32>> = (0..n).map(|t| matvec(wk.0, wk.1, wk.2, dh, d, &x[t * d..t * d + d])).collect();
        let vals: Vec<Vec<f32>> = (0..n).map(|t| matvec(wv.0, wv.1, wv.2, d, d, &x[t * d..t * d + d])).collect();
        let inv = 1.0 / (dh as f32).sqrt();
        for t in 0..n {
            let q = matvec(wq.0, wq.1, wq.2, dh, d, &x[t * d..t * d + d]);
            let keff = topk.min(t + 1);
            let mut sc = vec![-1e30f32; keff];
            let mut ix: Vec<Option<usize>> = vec![None; keff];
            if keff > 0 {
                for j in 0..=t {
                    let mut s = 0.0f32;
                    for dd in 0..dh {
                        s = s + q[dd] * keys[j][dd];
                    }
                    let s = s * inv;
                    if s > sc[keff - 1] {
                        sc[keff - 1] = s;
                        ix[keff - 1] = Some(j);
                        let mut i = keff - 1;
                        while i > 0 && sc[i] > sc[i - 1] {
                            sc.swap(i, i - 1);
                            ix.swap(i, i - 1);
                            i -= 1;
                        }
                    }
                }
            }
            softmax(&mut sc);
            for c in 0..d {
                let mut o = 0.0f32;
                for i in 0..keff {
                    if let Some(j) = ix[i] {
                        o = o + sc[i] * vals[j][c];
                    }
                }
                out[t * d + c] = o;
            }
        }
    }
}

/// This build's dimensions, as plain numbers.
pub const D: usize = ATOME_D_MODEL;
/// Context.
pub const S: usize = ATOME_MAX_SEQ;
/// Vocabulary.
pub const V: usize = ATOME_VOCAB_SIZE;
/// Layers.
pub const L: usize = ATOME_N_LAYERS;

/// Every C entry point and type.
pub mod api {
    pub use atome::ffi::extra::*;
    pub use atome::ffi::kernels::*;
    pub use atome::ffi::model::{atome_classifier_load, atome_init, atome_load};
    pub use atome::ffi::run::*;
    pub use atome::ffi::types::*;
}
