//! Random, valid Atome blobs for any configuration, in the five formats,
//! written with the library's encoder (`atome::format::write_blob`) from a
//! packing-independent description of the model ([`Desc`]).
//!
//! The one test blob generator: used by the fuzz targets (fuzz/src/lib.rs)
//! and by the integration tests (tests/common, tests/nonfinite.rs and
//! tests/ffi_miri.rs include this file with `#[path]`), so it depends on
//! nothing but the library and std. Its randomness is the library's
//! splitmix64 ([`SplitMix64`], with the [`Draw`] helpers).
#![allow(dead_code)]

use atome::format::{self, Content, Dims, Part, Shape};
pub use atome::format::{Field, Format, Packing};
pub use atome::forward::sample::SplitMix64;

/// Draws from the library's generator.
pub trait Draw {
    /// Uniform in 0..n (0 for n == 0).
    fn below(&mut self, n: u64) -> u64;
    /// Uniform f32 in [lo, hi).
    fn range(&mut self, lo: f32, hi: f32) -> f32;
}

impl Draw for SplitMix64 {
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.uniform()
    }
}

/// Weights drawn from: {0, +-1} (every packing), or {0, +-1, +-3, +-9} (P3 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alphabet {
    /// {0, +-1}.
    Ternary,
    /// {0, +-1, +-3, +-9}.
    P3Wide,
}

impl Alphabet {
    /// The widest alphabet a packing holds.
    pub fn of(p: Packing) -> Alphabet {
        if p == Packing::P3 {
            Alphabet::P3Wide
        } else {
            Alphabet::Ternary
        }
    }
}

/// One part's content.
#[derive(Clone, Debug)]
pub enum Item {
    /// A float array.
    Floats(Vec<f32>),
    /// A packed tensor: scale, then weights (rows*cols, row-major).
    Tensor(f32, Vec<i8>),
}

/// A model's content, independent of its packing: one item per part of the
/// library's layout, in blob order.
#[derive(Clone, Debug)]
pub struct Desc {
    /// Dimensions.
    pub dims: Dims,
    /// Classes of a classifier (None: language model).
    pub n_classes: Option<i32>,
    /// (field, layer, content) in blob order.
    pub items: Vec<(Field, usize, Item)>,
}

impl Desc {
    /// A random, well-behaved model for `dims` (plausible scales and norms).
    pub fn random(dims: &Dims, n_classes: Option<i32>, seed: u64, w: Alphabet) -> Desc {
        let mut rng = SplitMix64(seed);
        let density = 30 + rng.below(50);
        let layout = match n_classes {
            Some(_) => Format::AtomeCl01,
            None => Format::Atome01,
        };
        let mut items = Vec::new();
        for part in format::parts(dims, layout, n_classes.unwrap_or(0).max(0) as usize) {
            let f = part.field;
            let item = match part.shape {
                Shape::Tensor { rows, cols } => {
                    let scale = match f {
                        Field::Embed => rng.range(0.5, 1.5),
                        Field::Conv | Field::Wv => rng.range(0.05, 0.3),
                        _ => rng.range(0.05, 0.5),
                    };
                    Item::Tensor(scale, draw_weights(&mut rng, rows * cols, w, density))
                }
                Shape::Floats(n) => Item::Floats(
                    (0..n)
                        .map(|_| match f {
                            Field::NormGamma | Field::FinalGamma => rng.range(0.5, 1.5),
                            Field::NormBeta | Field::FinalBeta => rng.range(-0.1, 0.1),
                            Field::SsmA => rng.range(-2.0, 2.0),
                            _ => rng.range(-1.0, 1.0),
                        })
                        .collect(),
                ),
            };
            items.push((f, part.layer, item));
        }
        Desc { dims: *dims, n_classes, items }
    }

    fn item(&self, f: Field, layer: usize) -> &Item {
        match self.items.iter().find(|x| x.0 == f && x.1 == layer) {
            Some(x) => &x.2,
            None => panic!("no {f:?} in layer {layer}"),
        }
    }

    /// A tensor's scale and weights.
    pub fn tensor(&self, f: Field, layer: usize) -> (f32, &[i8]) {
        match self.item(f, layer) {
            Item::Tensor(s, w) => (*s, w),
            Item::Floats(_) => panic!("{f:?} is a float array"),
        }
    }

    /// A float array.
    pub fn floats(&self, f: Field, layer: usize) -> &[f32] {
        match self.item(f, layer) {
            Item::Floats(v) => v,
            Item::Tensor(..) => panic!("{f:?} is a tensor"),
        }
    }

    /// The blob in packing `p` (a classifier's format when n_classes is set).
    pub fn blob(&self, p: Packing) -> Vec<u8> {
        let f = Format::new(self.n_classes.is_some(), p).expect("no P3 classifier format");
        encode(self, f).bytes
    }
}

/// A random, well-behaved model for `dims` (see [`Desc::random`]).
pub fn describe(dims: &Dims, n_classes: Option<i32>, seed: u64, w: Alphabet) -> Desc {
    Desc::random(dims, n_classes, seed, w)
}

fn draw_weights(rng: &mut SplitMix64, n: usize, w: Alphabet, density: u64) -> Vec<i8> {
    const WIDE: [i8; 6] = [1, -1, 3, -3, 9, -9];
    (0..n)
        .map(|_| {
            if rng.below(100) >= density {
                0
            } else {
                match w {
                    Alphabet::Ternary => {
                        if rng.below(2) == 0 {
                            1
                        } else {
                            -1
                        }
                    }
                    Alphabet::P3Wide => WIDE[rng.below(6) as usize],
                }
            }
        })
        .collect()
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
    /// Sets every float of a field (a tensor field: its scale) to v; returns how many.
    pub fn set_field(&mut self, f: Field, v: f32) -> usize {
        let offs: Vec<usize> = self.floats.iter().filter(|x| x.1 == f).map(|x| x.0).collect();
        for &o in &offs {
            self.set_f32(o, v);
        }
        offs.len()
    }
}

/// A description's items handed to the library's writer, part by part.
struct Feed<'a> {
    desc: &'a Desc,
    /// Index of the item of the last part asked for.
    at: usize,
}

impl Feed<'_> {
    fn item(&mut self, part: &Part) -> Option<&Item> {
        let items = &self.desc.items;
        let hit = |x: &(Field, usize, Item)| x.0 == part.field && x.1 == part.layer;
        if !items.get(self.at).is_some_and(hit) {
            self.at = items.iter().position(hit)?;
        }
        Some(&items[self.at].2)
    }
}

impl Content for Feed<'_> {
    fn float(&mut self, part: &Part, i: usize) -> f32 {
        match self.item(part) {
            Some(Item::Floats(v)) => v.get(i).copied().unwrap_or(0.0),
            _ => 0.0,
        }
    }
    fn scale(&mut self, part: &Part) -> f32 {
        match self.item(part) {
            Some(Item::Tensor(s, _)) => *s,
            _ => 0.0,
        }
    }
    fn weight(&mut self, part: &Part, n: usize) -> i8 {
        match self.item(part) {
            Some(Item::Tensor(_, w)) => w.get(n).copied().unwrap_or(0),
            _ => 0,
        }
    }
}

/// Serializes a model in a format (the classifier formats need n_classes,
/// 1 when the description has none; the language-model formats leave out a
/// classifier head). Weights the format cannot hold panic.
pub fn encode(desc: &Desc, fmt: Format) -> Blob {
    let nc = if fmt.is_classifier() { desc.n_classes.unwrap_or(1) } else { 0 };
    let ncu = nc.max(0) as usize;
    let mut bytes = vec![0u8; format::blob_bytes(&desc.dims, fmt, ncu)];
    let len = format::write_blob(&mut bytes, &desc.dims, fmt, ncu, &mut Feed { desc, at: 0 })
        .unwrap_or_else(|e| panic!("{fmt:?}: {e:?}"));
    bytes.truncate(len);
    if fmt.is_classifier() {
        // The class count as given, even when out of range.
        bytes[fmt.magic().len()..fmt.header_len()].copy_from_slice(&nc.to_le_bytes());
    }
    let mut floats = Vec::new();
    for part in format::parts(&desc.dims, fmt, ncu) {
        match part.shape {
            Shape::Floats(n) => floats.extend((0..n).map(|i| (part.offset + 4 * i, part.field))),
            Shape::Tensor { .. } => floats.push((part.offset, part.field)),
        }
    }
    Blob { bytes, floats }
}

/// A random valid blob of a format for `dims` (n_classes for classifiers).
pub fn generate(dims: &Dims, fmt: Format, n_classes: i32, seed: u64) -> Blob {
    let w = if fmt == Format::AtomeP3 && seed & 1 == 1 { Alphabet::P3Wide } else { Alphabet::Ternary };
    let nc = if fmt.is_classifier() { Some(n_classes) } else { None };
    encode(&describe(dims, nc, seed, w), fmt)
}

/// The code atome_load (classifier == false) or atome_classifier_load
/// (classifier == true) must return for these bytes, derived from docs/API.md#loading and
/// docs/FORMATS.md and the library's documented extras: -1 null/short/unknown
/// magic or bad n_classes, -2 truncated, -3 more than 15 trailing bytes,
/// -4 an ATOME02/ATOMECL02 payload byte above 242 (checked tensor by tensor
/// in file order, so a bad byte before the point of truncation wins).
pub fn expected_load_code(dims: &Dims, max_classes: usize, b: &[u8], classifier: bool) -> i32 {
    // An ATOMEF container: its header's own checks (tested bit by bit in
    // tests/container.rs), then the payload's codes as for a bare blob.
    // Shorter than any magic of the kind (the reference's rule) comes first.
    if b.len() < if classifier { 9 } else { 7 } {
        return -1;
    }
    if b.starts_with(&atome::container::MAGIC) {
        use atome::container::{parse, ContainerError, Kind};
        let c = match parse(b) {
            Ok(c) => c,
            Err(ContainerError::BadHeader) => return -1,
            Err(ContainerError::Truncated) => return -2,
            Err(ContainerError::Trailing) => return -3,
            Err(ContainerError::Corrupted) => return -6,
            Err(ContainerError::Mismatch) => return -8,
        };
        if (c.info.kind == Kind::Classifier) != classifier {
            return -1;
        }
        if c.info.dims != *dims {
            return -5;
        }
        return expected_load_code(dims, max_classes, c.payload, classifier);
    }
    let Some(fmt) = Format::detect(b).filter(|f| f.is_classifier() == classifier) else { return -1 };
    let mut nc = 0;
    if classifier {
        let Some(n) = fmt.n_classes(b) else { return -2 };
        if n < 1 || n as i64 > max_classes as i64 {
            return -1;
        }
        nc = n as usize;
    }
    let mut end = fmt.header_len();
    for part in format::parts(dims, fmt, nc) {
        end = part.offset + part.bytes();
        let Some(bytes) = part.slice(b) else { return -2 };
        if matches!(part.shape, Shape::Tensor { .. })
            && fmt.packing() == Packing::Base3
            && bytes[4..].iter().any(|&x| x > format::BASE3_MAX_BYTE)
        {
            return -4;
        }
    }
    if b.len() - end > format::MAX_TRAILING {
        -3
    } else {
        0
    }
}
