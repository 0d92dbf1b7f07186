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
    /// routine on microcontrollers).
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

/// One block's parameters.
#[derive(Clone, Copy, Debug)]
pub struct Block<'a> {
    /// Pre-norm.
    pub norm: Norm<'a>,
    /// Causal conv, D x K (tap 0 = current position).
    pub conv: Tensor<'a>,
    /// State pathway.
    pub ssm: Ssm<'a>,
    /// Query projection DH x D.
    pub wq: Tensor<'a>,
    /// Key projection DH x D.
    pub wk: Tensor<'a>,
    /// Value projection D x D.
    pub wv: Tensor<'a>,
    /// Router 3 x D.
    pub router: Tensor<'a>,
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

/// A language model: views into the blob.
#[derive(Clone, Copy, Debug)]
pub struct Model<'a> {
    /// Dimensions it was parsed with.
    pub dims: Dims,
    /// Packing of every tensor.
    pub packing: Packing,
    /// V x D embedding.
    pub embed: Tensor<'a>,
    /// The L blocks, back to back.
    pub(crate) blocks: &'a [u8],
    /// Final norm.
    pub final_norm: Norm<'a>,
    /// V x D unembedding.
    pub unembed: Tensor<'a>,
}

/// A classifier: a model plus a head.
#[derive(Clone, Copy, Debug)]
pub struct Classifier<'a> {
    /// The body.
    pub base: Model<'a>,
    /// n_classes x D head.
    pub head: Tensor<'a>,
}
