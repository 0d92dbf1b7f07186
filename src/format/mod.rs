//! The blob formats, described once (docs/FORMATS.md).
//!
//! - this file: the five formats and their magic strings, the packings, and
//!   the borrowed views a parsed blob is made of;
//! - [`codec`]: the one decoder and the one encoder of each packing;
//! - [`layout`]: the order and shape of every part of a blob;
//! - [`parse`]: reading a blob in place, at any alignment, on any host byte
//!   order (nothing copies weights; every view borrows the blob);
//! - [`write`]: building a blob, or re-packing one, into a caller's buffer
//!   (no allocation).

pub mod codec;
pub mod layout;
pub mod parse;
pub mod write;

pub use codec::{pack, EncodeError, BASE3_MAX_BYTE};
pub use layout::{blob_bytes, parts, Field, Part, Parts, Shape};
pub use parse::{
    block_bytes, classifier_packing, lm_packing, loaded_classifier, loaded_model, model_bytes, parse_classifier, parse_model,
    tensor_bytes, LoadError, MAX_TRAILING,
};
pub use write::{repack, write_blob, Content, WriteError, Writer};

/// How the weights of a tensor are packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Packing {
    /// ATOME01: 2 bits a trit, 00 0, 01 +1, 11 -1, 10 read as 0.
    Trit2 = 0,
    /// ATOME02: five trits a byte in base 3 (bytes above 242 are rejected at load).
    Base3 = 1,
    /// ATOMEP3: 3-bit codes for {0, +-1, +-3, +-9}, 8 codes in 3 bytes.
    P3 = 2,
}

impl Packing {
    /// Every packing.
    pub const ALL: [Packing; 3] = [Packing::Trit2, Packing::Base3, Packing::P3];

    /// From the tag stored in the C structs.
    pub fn from_tag(t: u8) -> Option<Packing> {
        match t {
            0 => Some(Packing::Trit2),
            1 => Some(Packing::Base3),
            2 => Some(Packing::P3),
            _ => None,
        }
    }

    /// The unit of a payload: (codes per unit, bytes per unit, radix). A unit
    /// is a little-endian integer whose base-`radix` digits, lowest first,
    /// are the codes of consecutive weights.
    pub const fn unit(self) -> (usize, usize, u32) {
        match self {
            Packing::Trit2 => (4, 1, 4),
            Packing::Base3 => (5, 1, 3),
            Packing::P3 => (8, 3, 8),
        }
    }

    /// Payload bytes (after the scale) for n weights: whole units of
    /// [`Packing::unit`] (spelled out: constant divisors, no division
    /// routine on microcontrollers). (q15 size-first: out of line.)
    #[cfg_attr(atome_lazy_block, inline(never))]
    pub fn payload_len(self, n: usize) -> usize {
        match self {
            Packing::Trit2 => n.div_ceil(4),
            Packing::Base3 => n.div_ceil(5),
            Packing::P3 => 3 * n.div_ceil(8),
        }
    }
}

/// P3 code -> weight.
pub const P3_WEIGHTS: [i8; 8] = [0, 1, -1, 3, -3, 9, -9, 0];

/// The five blob formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// "ATOME01": language model, [`Packing::Trit2`].
    Atome01,
    /// "ATOME02": language model, [`Packing::Base3`].
    Atome02,
    /// "ATOMEP3": language model, [`Packing::P3`].
    AtomeP3,
    /// "ATOMECL01": classifier, [`Packing::Trit2`].
    AtomeCl01,
    /// "ATOMECL02": classifier, [`Packing::Base3`].
    AtomeCl02,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 5] = [Format::Atome01, Format::Atome02, Format::AtomeP3, Format::AtomeCl01, Format::AtomeCl02];

    /// The magic bytes the blob starts with.
    pub const fn magic(self) -> &'static [u8] {
        match self {
            Format::Atome01 => M01,
            Format::Atome02 => M02,
            Format::AtomeP3 => MP3,
            Format::AtomeCl01 => MCL01,
            Format::AtomeCl02 => MCL02,
        }
    }

    /// The magic as text.
    pub fn name(self) -> &'static str {
        match core::str::from_utf8(self.magic()) {
            Ok(s) => s,
            Err(_) => "?",
        }
    }

    /// Packing of every tensor.
    pub const fn packing(self) -> Packing {
        match self {
            Format::Atome01 | Format::AtomeCl01 => Packing::Trit2,
            Format::Atome02 | Format::AtomeCl02 => Packing::Base3,
            Format::AtomeP3 => Packing::P3,
        }
    }

    /// A classifier (a class count after the magic, a head at the end)?
    pub const fn is_classifier(self) -> bool {
        matches!(self, Format::AtomeCl01 | Format::AtomeCl02)
    }

    /// Bytes before the embedding: the magic, and a classifier's class count
    /// (little-endian i32).
    pub const fn header_len(self) -> usize {
        self.magic().len() + if self.is_classifier() { 4 } else { 0 }
    }

    /// The format of a kind and packing (None: there is no P3 classifier).
    pub fn new(classifier: bool, p: Packing) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.is_classifier() == classifier && f.packing() == p)
    }

    /// The format a blob's magic names, if any.
    pub fn detect(blob: &[u8]) -> Option<Format> {
        Format::of_kind(blob, false).or_else(|| Format::of_kind(blob, true))
    }

    /// The format a blob's magic names if it is a classifier's (or a
    /// language model's, for `classifier` false).
    #[inline]
    pub fn of_kind(blob: &[u8], classifier: bool) -> Option<Format> {
        // Matches on fixed-size arrays: plain compares, no memcmp call on
        // microcontrollers.
        if classifier {
            match blob.split_first_chunk::<CL_MAGIC_LEN>()?.0 {
                MCL01 => Some(Format::AtomeCl01),
                MCL02 => Some(Format::AtomeCl02),
                _ => None,
            }
        } else {
            match blob.split_first_chunk::<LM_MAGIC_LEN>()?.0 {
                M01 => Some(Format::Atome01),
                M02 => Some(Format::Atome02),
                MP3 => Some(Format::AtomeP3),
                _ => None,
            }
        }
    }

    /// A classifier blob's class count as stored (None: not a classifier
    /// format, or too short).
    pub fn n_classes(self, blob: &[u8]) -> Option<i32> {
        if !self.is_classifier() {
            return None;
        }
        let m = self.magic().len();
        Some(i32::from_le_bytes(blob.get(m..m + 4)?.try_into().ok()?))
    }
}

/// Length of every language-model magic.
pub const LM_MAGIC_LEN: usize = 7;
/// Length of every classifier magic.
pub const CL_MAGIC_LEN: usize = 9;
const M01: &[u8; LM_MAGIC_LEN] = b"ATOME01";
const M02: &[u8; LM_MAGIC_LEN] = b"ATOME02";
const MP3: &[u8; LM_MAGIC_LEN] = b"ATOMEP3";
const MCL01: &[u8; CL_MAGIC_LEN] = b"ATOMECL01";
const MCL02: &[u8; CL_MAGIC_LEN] = b"ATOMECL02";

/// A packed weight matrix (rows x cols, row-major weight numbering).
#[derive(Clone, Copy, Debug)]
pub struct Tensor<'a> {
    /// Packed payload, exactly `packing.payload_len(rows * cols)` bytes or more.
    pub data: &'a [u8],
    /// Per-tensor scale.
    pub scale: f32,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Packing of `data`.
    pub packing: Packing,
}

/// Little-endian binary32 array at any alignment.
#[derive(Clone, Copy, Debug)]
pub struct Floats<'a> {
    bytes: &'a [u8],
}

impl<'a> Floats<'a> {
    /// View of `bytes` (4 bytes a value).
    pub fn new(bytes: &'a [u8]) -> Self {
        Floats { bytes }
    }
    /// Number of values.
    pub fn len(&self) -> usize {
        self.bytes.len() / 4
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Value i (0.0 past the end).
    #[inline]
    pub fn get(&self, i: usize) -> f32 {
        match self.bytes.get(4 * i..4 * i + 4) {
            Some(b) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            None => 0.0,
        }
    }
    /// The raw bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// LayerNorm parameters.
#[derive(Clone, Copy, Debug)]
pub struct Norm<'a> {
    /// D gains.
    pub gamma: Floats<'a>,
    /// D offsets.
    pub beta: Floats<'a>,
}

/// Diagonal state-space parameters.
#[derive(Clone, Copy, Debug)]
pub struct Ssm<'a> {
    /// D decays before tanh.
    pub a: Floats<'a>,
    /// D input gains.
    pub b: Floats<'a>,
    /// D output gains.
    pub c_out: Floats<'a>,
}

/// One block's parameters. The q15 size-first build: a view of its bytes,
/// each piece read where it is used (a whole block of views is 160 bytes
/// of the layer loop's frame on a 32-bit core; this one is 24). Otherwise:
/// every piece's view, read once (the hot loops read them at every
/// position; the float size-first build keeps the shorter code).
#[cfg(atome_lazy_block)]
#[derive(Clone, Copy, Debug)]
pub struct Block<'a> {
    /// The block's bytes (empty past the blocks region).
    bytes: &'a [u8],
    /// D
    d: usize,
    /// DH
    dh: usize,
    /// K
    k: usize,
    /// Packing of its tensors.
    packing: Packing,
}

/// One block's parameters (see the definition above).
#[cfg(not(atome_lazy_block))]
#[derive(Clone, Copy, Debug)]
pub struct Block<'a> {
    norm: Norm<'a>,
    conv: Tensor<'a>,
    ssm: Ssm<'a>,
    wq: Tensor<'a>,
    wk: Tensor<'a>,
    wv: Tensor<'a>,
    router: Tensor<'a>,
}

#[cfg(not(atome_lazy_block))]
impl<'a> Block<'a> {
    /// The block in `bytes` (as the blob lays it out for these dims).
    pub fn new(bytes: &'a [u8], dims: &Dims, packing: Packing) -> Block<'a> {
        Self::of_layer(bytes, 0, dims, packing)
    }
    /// Block l of the blocks region `blocks` (empty views past its end):
    /// each piece's length once, no cursor.
    pub(crate) fn of_layer(blocks: &'a [u8], l: usize, dims: &Dims, p: Packing) -> Block<'a> {
        let (d, dh) = (dims.d_model, dims.d_head);
        let fl = 4 * d;
        let (lc, lq, lv, lr) = (p.payload_len(d * dims.kernel_size), p.payload_len(dh * d), p.payload_len(d * d), p.payload_len(3 * d));
        let len = 5 * fl + 5 * 4 + lc + 2 * lq + lv + lr;
        let b = l.checked_mul(len).and_then(|s| blocks.get(s..s.checked_add(len)?)).unwrap_or(&[]);
        let mut at = 0;
        let norm = Norm { gamma: Floats::new(piece(b, &mut at, fl)), beta: Floats::new(piece(b, &mut at, fl)) };
        let conv = record(b, &mut at, d, dims.kernel_size, lc, p);
        let ssm = Ssm { a: Floats::new(piece(b, &mut at, fl)), b: Floats::new(piece(b, &mut at, fl)), c_out: Floats::new(piece(b, &mut at, fl)) };
        let wq = record(b, &mut at, dh, d, lq, p);
        let wk = record(b, &mut at, dh, d, lq, p);
        let wv = record(b, &mut at, d, d, lv, p);
        let router = record(b, &mut at, 3, d, lr, p);
        Block { norm, conv, ssm, wq, wk, wv, router }
    }
    /// Pieces of a block, in blob order.
    pub const PIECES: usize = 10;
    /// Pre-norm.
    #[inline(always)]
    pub fn norm(&self) -> &Norm<'a> {
        &self.norm
    }
    /// Causal conv, D x K (tap 0 = current position).
    #[inline(always)]
    pub fn conv(&self) -> &Tensor<'a> {
        &self.conv
    }
    /// State pathway.
    #[inline(always)]
    pub fn ssm(&self) -> &Ssm<'a> {
        &self.ssm
    }
    /// Query projection DH x D.
    #[inline(always)]
    pub fn wq(&self) -> &Tensor<'a> {
        &self.wq
    }
    /// Key projection DH x D.
    #[inline(always)]
    pub fn wk(&self) -> &Tensor<'a> {
        &self.wk
    }
    /// Value projection D x D.
    #[inline(always)]
    pub fn wv(&self) -> &Tensor<'a> {
        &self.wv
    }
    /// Router 3 x D.
    #[inline(always)]
    pub fn router(&self) -> &Tensor<'a> {
        &self.router
    }
}

/// The n bytes of `b` at `*at` (empty past its end); `*at` moves past them.
#[cfg(not(atome_lazy_block))]
#[inline(always)]
fn piece<'a>(b: &'a [u8], at: &mut usize, n: usize) -> &'a [u8] {
    let s = b.get(*at..at.saturating_add(n)).unwrap_or(&[]);
    *at = at.saturating_add(n);
    s
}

/// The weight record at `*at` of `b` (scale, then n payload bytes).
#[cfg(not(atome_lazy_block))]
#[inline(always)]
fn record<'a>(b: &'a [u8], at: &mut usize, rows: usize, cols: usize, n: usize, packing: Packing) -> Tensor<'a> {
    let scale = Floats::new(piece(b, at, 4)).get(0);
    Tensor { data: piece(b, at, n), scale, rows, cols, packing }
}

/// The q15 size-first build's block view (tested against the whole block
/// in the other builds).
#[cfg(not(atome_lazy_block))]
#[derive(Clone, Copy)]
#[allow(dead_code)]
struct Lazy<'a> {
    bytes: &'a [u8],
    d: usize,
    dh: usize,
    k: usize,
    packing: Packing,
}

#[cfg(atome_lazy_block)]
type Lazy<'a> = Block<'a>;

#[cfg(atome_lazy_block)]
impl<'a> Block<'a> {
    /// The block in `bytes` (as the blob lays it out for these dims).
    pub fn new(bytes: &'a [u8], dims: &Dims, packing: Packing) -> Block<'a> {
        Block { bytes, d: dims.d_model, dh: dims.d_head, k: dims.kernel_size, packing }
    }
    /// Rows and columns of piece j (see [`Lazy::shape`]).
    pub(crate) fn shape_of(dims: &Dims, j: usize) -> Option<(usize, usize)> {
        Block::new(&[], dims, Packing::Trit2).shape(j)
    }
    /// Pieces of a block, in blob order.
    pub const PIECES: usize = 10;
    /// Bytes of a block of these dims.
    pub(crate) fn bytes_of(dims: &Dims, packing: Packing) -> usize {
        Block::new(&[], dims, packing).at(Self::PIECES)
    }
}

#[cfg_attr(not(atome_lazy_block), allow(dead_code))]
impl<'a> Lazy<'a> {
    /// Rows and columns of piece j when it is a weight record (2 the conv,
    /// 6 Wq, 7 Wk, 8 Wv, 9 the router); the others are D floats (0, 1 the
    /// norm's gamma and beta, 3, 4, 5 the SSM's a, b and c_out).
    #[inline(always)]
    pub(crate) fn shape(&self, j: usize) -> Option<(usize, usize)> {
        let (d, dh) = (self.d, self.dh);
        match j {
            2 => Some((d, self.k)),
            6 | 7 => Some((dh, d)),
            8 => Some((d, d)),
            9 => Some((3, d)),
            _ => None,
        }
    }
    /// n bytes at `at` (empty past the end).
    #[inline(always)]
    fn piece(&self, at: usize, n: usize) -> &'a [u8] {
        self.bytes.get(at..at.saturating_add(n)).unwrap_or(&[])
    }
    /// Byte offset of piece j (the sum of the lengths before it; of j =
    /// [`Block::PIECES`]: the block's length).
    /// (q15 size-first: out of line, one copy for every use.)
    #[cfg_attr(atome_lazy_block, inline(never))]
    #[cfg_attr(not(atome_lazy_block), inline(always))]
    pub(crate) fn at(&self, j: usize) -> usize {
        let mut at = 0;
        for i in 0..j {
            at += match self.shape(i) {
                Some((r, c)) => 4 + self.packing.payload_len(r * c),
                None => 4 * self.d,
            };
        }
        at
    }
    /// Weight record j (a scale, then its payload).
    #[cfg_attr(atome_lazy_block, inline(never))]
    #[cfg_attr(not(atome_lazy_block), inline(always))]
    fn record(&self, j: usize) -> Tensor<'a> {
        let (rows, cols) = self.shape(j).unwrap_or((0, 0));
        parse::record_at(self.bytes, self.at(j), rows, cols, self.packing)
    }
    /// The D floats of piece j.
    #[cfg_attr(atome_lazy_block, inline(never))]
    #[cfg_attr(not(atome_lazy_block), inline(always))]
    fn floats(&self, j: usize) -> Floats<'a> {
        Floats::new(self.piece(self.at(j), 4 * self.d))
    }
    /// Pre-norm.
    #[inline(always)]
    pub fn norm(&self) -> Norm<'a> {
        Norm { gamma: self.floats(0), beta: self.floats(1) }
    }
    /// Causal conv, D x K (tap 0 = current position).
    #[inline(always)]
    pub fn conv(&self) -> Tensor<'a> {
        self.record(2)
    }
    /// State pathway.
    #[inline(always)]
    pub fn ssm(&self) -> Ssm<'a> {
        Ssm { a: self.floats(3), b: self.floats(4), c_out: self.floats(5) }
    }
    /// Query projection DH x D.
    #[inline(always)]
    pub fn wq(&self) -> Tensor<'a> {
        self.record(6)
    }
    /// Key projection DH x D.
    #[inline(always)]
    pub fn wk(&self) -> Tensor<'a> {
        self.record(7)
    }
    /// Value projection D x D.
    #[inline(always)]
    pub fn wv(&self) -> Tensor<'a> {
        self.record(8)
    }
    /// Router 3 x D.
    #[inline(always)]
    pub fn router(&self) -> Tensor<'a> {
        self.record(9)
    }
}

/// Model dimensions (the build-time knobs that shape a blob).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// V
    pub vocab: usize,
    /// D
    pub d_model: usize,
    /// L
    pub n_layers: usize,
    /// DH
    pub d_head: usize,
    /// K
    pub kernel_size: usize,
    /// keys kept per query
    pub top_k: usize,
}

/// A language model: views into the blob. (The q15 size-first build: the
/// body's bytes, each part read where it is used, as its [`Block`]s.)
#[cfg(not(atome_lazy_block))]
#[derive(Clone, Copy, Debug)]
pub struct Model<'a> {
    /// Dimensions it was parsed with.
    pub dims: Dims,
    /// Packing of every tensor.
    pub packing: Packing,
    /// V x D embedding.
    embed: Tensor<'a>,
    /// The L blocks, back to back.
    blocks: &'a [u8],
    /// Final norm.
    final_norm: Norm<'a>,
    /// V x D unembedding.
    unembed: Tensor<'a>,
}

/// A language model (see the definition above).
#[cfg(atome_lazy_block)]
#[derive(Clone, Copy, Debug)]
pub struct Model<'a> {
    /// Dimensions it was parsed with.
    pub dims: Dims,
    /// Packing of every tensor.
    pub packing: Packing,
    /// The body: the embedding, the blocks, the final norm, the unembedding.
    body: &'a [u8],
}

#[cfg(not(atome_lazy_block))]
impl<'a> Model<'a> {
    /// V x D embedding.
    #[inline(always)]
    pub fn embed(&self) -> &Tensor<'a> {
        &self.embed
    }
    /// Final norm.
    #[inline(always)]
    pub fn final_norm(&self) -> &Norm<'a> {
        &self.final_norm
    }
    /// V x D unembedding.
    #[inline(always)]
    pub fn unembed(&self) -> &Tensor<'a> {
        &self.unembed
    }
    /// The whole blob region holding the blocks.
    #[inline(always)]
    pub fn blocks_bytes(&self) -> &'a [u8] {
        self.blocks
    }
}

#[cfg(atome_lazy_block)]
impl<'a> Model<'a> {
    /// Bytes of the embedding's record.
    fn embed_len(&self) -> usize {
        4 + self.packing.payload_len(self.dims.vocab * self.dims.d_model)
    }
    /// Offset of the final norm.
    #[inline(never)]
    fn norm_at(&self) -> usize {
        self.embed_len() + self.dims.n_layers * Block::bytes_of(&self.dims, self.packing)
    }
    /// V x D embedding.
    #[inline(never)]
    pub fn embed(&self) -> Tensor<'a> {
        parse::record_at(self.body, 0, self.dims.vocab, self.dims.d_model, self.packing)
    }
    /// Final norm.
    #[inline(never)]
    pub fn final_norm(&self) -> Norm<'a> {
        let (at, fl) = (self.norm_at(), 4 * self.dims.d_model);
        let f = |at: usize| Floats::new(self.body.get(at..at.saturating_add(fl)).unwrap_or(&[]));
        Norm { gamma: f(at), beta: f(at + fl) }
    }
    /// V x D unembedding.
    #[inline(never)]
    pub fn unembed(&self) -> Tensor<'a> {
        parse::record_at(self.body, self.norm_at() + 8 * self.dims.d_model, self.dims.vocab, self.dims.d_model, self.packing)
    }
    /// The whole blob region holding the blocks.
    #[inline(never)]
    pub fn blocks_bytes(&self) -> &'a [u8] {
        let e = self.embed_len();
        self.body.get(e..self.norm_at()).unwrap_or(&[])
    }
}

/// A classifier: a model plus a head.
#[derive(Clone, Copy, Debug)]
pub struct Classifier<'a> {
    /// The body.
    pub base: Model<'a>,
    /// n_classes x D head.
    pub head: Tensor<'a>,
}

#[cfg(all(test, not(atome_lazy_block)))]
mod tests {
    use super::*;

    /// The q15 size-first build's view reads the same pieces as the
    /// eager block (itself checked against the loader's cursor in
    /// `parse`), for every layer of blobs of odd shapes and every packing.
    #[test]
    fn lazy_view_is_the_eager_block() {
        for dims in [
            Dims { vocab: 32, d_model: 16, n_layers: 2, d_head: 8, kernel_size: 5, top_k: 4 },
            Dims { vocab: 40, d_model: 22, n_layers: 3, d_head: 6, kernel_size: 3, top_k: 2 },
            Dims { vocab: 7, d_model: 5, n_layers: 4, d_head: 3, kernel_size: 1, top_k: 1 },
        ] {
            for f in [Format::Atome01, Format::Atome02, Format::AtomeP3] {
                let p = f.packing();
                let len = block_bytes(&dims, p);
                // Distinct bytes everywhere, one block past the end (empty views there).
                let bytes: [u8; 4096] = core::array::from_fn(|i| (i * 7 + 3) as u8);
                let region = &bytes[..dims.n_layers * len];
                for l in 0..=dims.n_layers {
                    let own = region.get(l * len..(l + 1) * len).unwrap_or(&[]);
                    let (e, z) = (Block::new(own, &dims, p), Lazy { bytes: own, d: dims.d_model, dh: dims.d_head, k: dims.kernel_size, packing: p });
                    let same_t = |a: Tensor, b: Tensor| a.data == b.data && a.scale.to_bits() == b.scale.to_bits() && (a.rows, a.cols, a.packing) == (b.rows, b.cols, b.packing);
                    let (en, zn, es, zs) = (e.norm(), z.norm(), e.ssm(), z.ssm());
                    assert!(en.gamma.bytes() == zn.gamma.bytes() && en.beta.bytes() == zn.beta.bytes());
                    assert!(es.a.bytes() == zs.a.bytes() && es.b.bytes() == zs.b.bytes() && es.c_out.bytes() == zs.c_out.bytes());
                    for (x, y) in [(*e.conv(), z.conv()), (*e.wq(), z.wq()), (*e.wk(), z.wk()), (*e.wv(), z.wv()), (*e.router(), z.router())] {
                        assert!(same_t(x, y), "layer {l}, {f:?}");
                    }
                    assert_eq!(z.at(Block::PIECES), if own.is_empty() { len } else { own.len() });
                }
            }
        }
    }
}
