//! Synthetic, valid Atome blobs for any build configuration (SPEC section 2),
//! written independently of the library's parser: ATOME01, ATOME02, ATOMEP3,
//! ATOMECL01 and ATOMECL02.
//!
//! Shared by the fuzz targets (fuzz/src/lib.rs) and by the integration tests
//! tests/nonfinite.rs and tests/ffi_miri.rs (included with `#[path]`), so it
//! depends on nothing but `atome::format::Dims`, the library's splitmix64
//! and std.
#![allow(dead_code)]

use atome::format::Dims;
use atome::forward::sample::SplitMix64;

/// splitmix64 (the library's generator, so there is one copy of it).
pub struct Rng(pub SplitMix64);

impl Rng {
    /// Next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in 0..n (0 for n == 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
    /// Uniform f32 in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.0.uniform()
    }
}

/// A blob format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fmt {
    /// "ATOME01", 2 bits a trit.
    Lm01,
    /// "ATOME02", base 3.
    Lm02,
    /// "ATOMEP3", 3-bit codes.
    LmP3,
    /// "ATOMECL01".
    Cl01,
    /// "ATOMECL02".
    Cl02,
}

impl Fmt {
    /// Every format.
    pub const ALL: [Fmt; 5] = [Fmt::Lm01, Fmt::Lm02, Fmt::LmP3, Fmt::Cl01, Fmt::Cl02];

    /// The magic bytes.
    pub fn magic(self) -> &'static [u8] {
        match self {
            Fmt::Lm01 => b"ATOME01",
            Fmt::Lm02 => b"ATOME02",
            Fmt::LmP3 => b"ATOMEP3",
            Fmt::Cl01 => b"ATOMECL01",
            Fmt::Cl02 => b"ATOMECL02",
        }
    }
    /// Classifier format?
    pub fn is_classifier(self) -> bool {
        matches!(self, Fmt::Cl01 | Fmt::Cl02)
    }
    /// 0 two bits a trit, 1 base 3, 2 P3.
    pub fn packing(self) -> u8 {
        match self {
            Fmt::Lm01 | Fmt::Cl01 => 0,
            Fmt::Lm02 | Fmt::Cl02 => 1,
            Fmt::LmP3 => 2,
        }
    }
    /// The format a blob's first bytes name, as atome_load (LM) or
    /// atome_classifier_load (classifier) reads them.
    pub fn from_magic(b: &[u8], classifier: bool) -> Option<Fmt> {
        if classifier {
            match b.get(..9)? {
                b"ATOMECL01" => Some(Fmt::Cl01),
                b"ATOMECL02" => Some(Fmt::Cl02),
                _ => None,
            }
        } else {
            match b.get(..7)? {
                b"ATOME01" => Some(Fmt::Lm01),
                b"ATOME02" => Some(Fmt::Lm02),
                b"ATOMEP3" => Some(Fmt::LmP3),
                _ => None,
            }
        }
    }
}

/// Payload bytes (after the scale) of n weights in a packing.
pub fn payload_len(packing: u8, n: usize) -> usize {
    match packing {
        0 => n.div_ceil(4),
        1 => n.div_ceil(5),
        _ => 3 * n.div_ceil(8),
    }
}

/// What a float (or a tensor's scale) in a blob is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Embedding scale.
    EmbedScale,
    /// Block norm gamma.
    Gamma,
    /// Block norm beta.
    Beta,
    /// Conv scale.
    ConvScale,
    /// SSM a (before tanh).
    SsmA,
    /// SSM b.
    SsmB,
    /// SSM c_out.
    SsmC,
    /// Wq scale.
    WqScale,
    /// Wk scale.
    WkScale,
    /// Wv scale.
    WvScale,
    /// Router scale.
    RouterScale,
    /// Final norm gamma.
    FinalGamma,
    /// Final norm beta.
    FinalBeta,
    /// Unembedding scale.
    UnembedScale,
    /// Classifier head scale.
    HeadScale,
}

/// One item of a blob, in file order.
#[derive(Clone, Debug)]
pub enum Item {
    /// A float array.
    Floats(Field, Vec<f32>),
    /// A packed tensor: scale, then weights (rows*cols, row-major).
    Tensor(Field, f32, Vec<i8>),
}

/// A model's content, independent of its packing.
#[derive(Clone, Debug)]
pub struct Desc {
    /// Classes of a classifier (None: language model).
    pub n_classes: Option<i32>,
    /// Items after the magic (and n_classes).
    pub items: Vec<Item>,
}

/// Weights drawn from: {0, +-1} (every packing), or {0, +-1, +-3, +-9} (P3 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weights {
    /// {0, +-1}.
    Ternary,
    /// {0, +-1, +-3, +-9}.
    P3Wide,
}

/// The shapes of every item for a configuration, in file order:
/// (field, is_tensor, element count).
pub fn shapes(dims: &Dims, n_classes: Option<i32>) -> Vec<(Field, bool, usize)> {
    let (v, d, l, dh, k) = (dims.vocab, dims.d_model, dims.n_layers, dims.d_head, dims.kernel_size);
    let mut s = vec![(Field::EmbedScale, true, v * d)];
    for _ in 0..l {
        s.push((Field::Gamma, false, d));
        s.push((Field::Beta, false, d));
        s.push((Field::ConvScale, true, d * k));
        s.push((Field::SsmA, false, d));
        s.push((Field::SsmB, false, d));
        s.push((Field::SsmC, false, d));
        s.push((Field::WqScale, true, dh * d));
        s.push((Field::WkScale, true, dh * d));
        s.push((Field::WvScale, true, d * d));
        s.push((Field::RouterScale, true, 3 * d));
    }
    s.push((Field::FinalGamma, false, d));
    s.push((Field::FinalBeta, false, d));
    s.push((Field::UnembedScale, true, v * d));
    if let Some(nc) = n_classes {
        s.push((Field::HeadScale, true, nc.max(0) as usize * d));
    }
    s
}

/// Exact size of a blob of this format (SPEC section 2 formula).
pub fn blob_len(dims: &Dims, fmt: Fmt, n_classes: i32) -> usize {
    let p = fmt.packing();
    let mut n = fmt.magic().len() + if fmt.is_classifier() { 4 } else { 0 };
    let nc = if fmt.is_classifier() { Some(n_classes) } else { None };
    for (_, t, c) in shapes(dims, nc) {
        n += if t { 4 + payload_len(p, c) } else { 4 * c };
    }
    n
}

fn draw_weights(rng: &mut Rng, n: usize, w: Weights, density: u64) -> Vec<i8> {
    const WIDE: [i8; 6] = [1, -1, 3, -3, 9, -9];
    (0..n)
        .map(|_| {
            if rng.below(100) >= density {
                0
            } else {
                match w {
                    Weights::Ternary => {
                        if rng.below(2) == 0 {
                            1
                        } else {
                            -1
                        }
                    }
                    Weights::P3Wide => WIDE[rng.below(6) as usize],
                }
            }
        })
        .collect()
}

/// A random, well-behaved model for `dims` (plausible scales and norms).
pub fn describe(dims: &Dims, n_classes: Option<i32>, seed: u64, w: Weights) -> Desc {
    let mut rng = Rng(SplitMix64(seed));
    let density = 30 + rng.below(50);
    let mut items = Vec::new();
    for (f, t, n) in shapes(dims, n_classes) {
        if t {
            let scale = match f {
                Field::EmbedScale => rng.range(0.5, 1.5),
                Field::ConvScale | Field::WvScale => rng.range(0.05, 0.3),
                _ => rng.range(0.05, 0.5),
            };
            items.push(Item::Tensor(f, scale, draw_weights(&mut rng, n, w, density)));
        } else {
            let vals = (0..n)
                .map(|_| match f {
                    Field::Gamma | Field::FinalGamma => rng.range(0.5, 1.5),
                    Field::Beta | Field::FinalBeta => rng.range(-0.1, 0.1),
                    Field::SsmA => rng.range(-2.0, 2.0),
                    _ => rng.range(-1.0, 1.0),
                })
                .collect();
            items.push(Item::Floats(f, vals));
        }
    }
    Desc { n_classes, items }
}

/// A serialized blob and where each float sits in it.
#[derive(Clone, Debug)]
pub struct Blob {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// (byte offset, field) of every float: scales and array elements.
    pub floats: Vec<(usize, Field)>,
}

impl Blob {
    /// Overwrites the float at a byte offset (any alignment); nothing when
    /// the bytes were cut short before it (the run target truncates blobs).
    pub fn set_f32(&mut self, off: usize, v: f32) {
        if let Some(b) = self.bytes.get_mut(off..off + 4) {
            b.copy_from_slice(&v.to_le_bytes());
        }
    }
    /// Sets every float of a field to v; returns how many.
    pub fn set_field(&mut self, f: Field, v: f32) -> usize {
        let offs: Vec<usize> = self.floats.iter().filter(|x| x.1 == f).map(|x| x.0).collect();
        for &o in &offs {
            self.set_f32(o, v);
        }
        offs.len()
    }
}

fn p3_code(w: i8) -> u32 {
    match w {
        1 => 1,
        -1 => 2,
        3 => 3,
        -3 => 4,
        9 => 5,
        -9 => 6,
        _ => 0,
    }
}

/// Packs weights (SPEC section 2).
pub fn pack(packing: u8, w: &[i8]) -> Vec<u8> {
    let mut out = vec![0u8; payload_len(packing, w.len())];
    match packing {
        0 => {
            for (n, &t) in w.iter().enumerate() {
                let c = match t {
                    1 => 1u8,
                    -1 => 3,
                    _ => 0,
                };
                out[n >> 2] |= c << (2 * (n & 3));
            }
        }
        1 => {
            for (m, o) in out.iter_mut().enumerate() {
                let mut b = 0u32;
                let mut p = 1u32;
                for k in 0..5 {
                    let t = w.get(5 * m + k).copied().unwrap_or(0).clamp(-1, 1);
                    b += (t as i32 + 1) as u32 * p;
                    p *= 3;
                }
                *o = b as u8;
            }
        }
        _ => {
            for g in 0..out.len() / 3 {
                let mut word = 0u32;
                for i in 0..8 {
                    word |= p3_code(w.get(8 * g + i).copied().unwrap_or(0)) << (3 * i);
                }
                out[3 * g..3 * g + 3].copy_from_slice(&word.to_le_bytes()[..3]);
            }
        }
    }
    out
}

/// Serializes a model in a format (the classifier formats need n_classes;
/// the language-model formats leave out a classifier head).
pub fn encode(desc: &Desc, fmt: Fmt) -> Blob {
    let p = fmt.packing();
    let mut bytes = fmt.magic().to_vec();
    if fmt.is_classifier() {
        bytes.extend_from_slice(&desc.n_classes.unwrap_or(1).to_le_bytes());
    }
    let mut floats = Vec::new();
    for it in &desc.items {
        match it {
            Item::Floats(f, v) => {
                for x in v {
                    floats.push((bytes.len(), *f));
                    bytes.extend_from_slice(&x.to_le_bytes());
                }
            }
            Item::Tensor(Field::HeadScale, ..) if !fmt.is_classifier() => {}
            Item::Tensor(f, s, w) => {
                floats.push((bytes.len(), *f));
                bytes.extend_from_slice(&s.to_le_bytes());
                bytes.extend_from_slice(&pack(p, w));
            }
        }
    }
    Blob { bytes, floats }
}

/// A random valid blob of a format for `dims` (n_classes for classifiers).
pub fn generate(dims: &Dims, fmt: Fmt, n_classes: i32, seed: u64) -> Blob {
    let w = if fmt == Fmt::LmP3 && seed & 1 == 1 { Weights::P3Wide } else { Weights::Ternary };
    let nc = if fmt.is_classifier() { Some(n_classes) } else { None };
    encode(&describe(dims, nc, seed, w), fmt)
}

/// The code atome_load (classifier == false) or atome_classifier_load
/// (classifier == true) must return for these bytes, derived from SPEC
/// sections 2-3 and the library's documented extras: -1 null/short/unknown
/// magic or bad n_classes, -2 truncated, -3 more than 15 trailing bytes,
/// -4 an ATOME02/ATOMECL02 payload byte above 242 (checked tensor by tensor
/// in file order, so a bad byte before the point of truncation wins).
pub fn expected_load_code(dims: &Dims, max_classes: usize, b: &[u8], classifier: bool) -> i32 {
    let min = if classifier { 9 } else { 7 };
    if b.len() < min {
        return -1;
    }
    let Some(fmt) = Fmt::from_magic(b, classifier) else { return -1 };
    let mut pos = fmt.magic().len();
    let mut nc = None;
    if classifier {
        let Some(x) = b.get(pos..pos + 4) else { return -2 };
        let n = i32::from_le_bytes([x[0], x[1], x[2], x[3]]);
        if n < 1 || n as i64 > max_classes as i64 {
            return -1;
        }
        nc = Some(n);
        pos += 4;
    }
    let p = fmt.packing();
    for (_, t, c) in shapes(dims, nc) {
        if t {
            let end = pos + 4 + payload_len(p, c);
            let Some(payload) = b.get(pos + 4..end) else { return -2 };
            if p == 1 && payload.iter().any(|&x| x > 242) {
                return -4;
            }
            pos = end;
        } else {
            pos += 4 * c;
            if pos > b.len() {
                return -2;
            }
        }
    }
    if b.len() - pos > 15 {
        -3
    } else {
        0
    }
}
