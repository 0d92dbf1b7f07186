//! The order and shape of every part of a blob (docs/FORMATS.md):
//!
//! ```text
//! magic | n_classes (classifiers, i32) | embed V x D
//! L x [ norm gamma D | norm beta D | conv D x K | ssm a D | ssm b D | ssm c_out D
//!       | Wq DH x D | Wk DH x D | Wv D x D | router 3 x D ]
//! final norm gamma D | final norm beta D | unembed V x D | head n_classes x D (classifiers)
//! ```
//!
//! Floats are little-endian binary32; a tensor is its scale (binary32) then
//! its payload ([`Packing::payload_len`] bytes). Nothing is aligned.
use super::{Dims, Floats, Format, Packing, Tensor};
use core::fmt;

/// What a part of a blob holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Embedding, V x D.
    Embed,
    /// A block's norm gains, D.
    NormGamma,
    /// A block's norm offsets, D.
    NormBeta,
    /// A block's causal conv, D x K.
    Conv,
    /// A block's SSM decays (before tanh), D.
    SsmA,
    /// A block's SSM input gains, D.
    SsmB,
    /// A block's SSM output gains, D.
    SsmC,
    /// A block's query projection, DH x D.
    Wq,
    /// A block's key projection, DH x D.
    Wk,
    /// A block's value projection, D x D.
    Wv,
    /// A block's router, 3 x D.
    Router,
    /// Final norm gains, D.
    FinalGamma,
    /// Final norm offsets, D.
    FinalBeta,
    /// Unembedding, V x D.
    Unembed,
    /// Classifier head, n_classes x D.
    Head,
}

impl Field {
    /// Every field, in blob order (the block's ten, once).
    pub const ALL: [Field; 15] = [
        Field::Embed,
        Field::NormGamma,
        Field::NormBeta,
        Field::Conv,
        Field::SsmA,
        Field::SsmB,
        Field::SsmC,
        Field::Wq,
        Field::Wk,
        Field::Wv,
        Field::Router,
        Field::FinalGamma,
        Field::FinalBeta,
        Field::Unembed,
        Field::Head,
    ];
}

/// The parts of one block, in blob order.
const BLOCK: &[Field] = Field::ALL.split_at(1).1.split_at(10).0;

impl Field {
    /// Short name ("Wq", "norm.gamma", ...).
    pub fn name(self) -> &'static str {
        match self {
            Field::Embed => "embed",
            Field::NormGamma => "norm.gamma",
            Field::NormBeta => "norm.beta",
            Field::Conv => "conv",
            Field::SsmA => "ssm.a",
            Field::SsmB => "ssm.b",
            Field::SsmC => "ssm.c_out",
            Field::Wq => "Wq",
            Field::Wk => "Wk",
            Field::Wv => "Wv",
            Field::Router => "router",
            Field::FinalGamma => "final_norm.gamma",
            Field::FinalBeta => "final_norm.beta",
            Field::Unembed => "unembed",
            Field::Head => "head",
        }
    }

    /// Part of every block?
    pub fn in_block(self) -> bool {
        BLOCK.contains(&self)
    }

    /// Its shape for these dims (n_classes: a classifier head's rows).
    pub fn shape(self, dims: &Dims, n_classes: usize) -> Shape {
        let (v, d) = (dims.vocab, dims.d_model);
        let t = |rows, cols| Shape::Tensor { rows, cols };
        match self {
            Field::Embed | Field::Unembed => t(v, d),
            Field::Conv => t(d, dims.kernel_size),
            Field::Wq | Field::Wk => t(dims.d_head, d),
            Field::Wv => t(d, d),
            Field::Router => t(3, d),
            Field::Head => t(n_classes, d),
            Field::NormGamma | Field::NormBeta | Field::SsmA | Field::SsmB | Field::SsmC | Field::FinalGamma | Field::FinalBeta => {
                Shape::Floats(d)
            }
        }
    }
}

/// A float array or a packed tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// That many binary32 values.
    Floats(usize),
    /// A scale, then rows x cols packed weights.
    Tensor {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
}

impl Shape {
    /// Values (floats) or weights (tensor).
    pub fn count(self) -> usize {
        match self {
            Shape::Floats(n) => n,
            Shape::Tensor { rows, cols } => rows * cols,
        }
    }

    /// Bytes in a blob of this packing.
    pub fn bytes(self, p: Packing) -> usize {
        match self {
            Shape::Floats(n) => 4 * n,
            Shape::Tensor { rows, cols } => 4 + p.payload_len(rows * cols),
        }
    }
}

/// One part of a blob, where it sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// What it holds.
    pub field: Field,
    /// Its block (0 outside the blocks).
    pub layer: usize,
    /// Its shape.
    pub shape: Shape,
    /// Byte offset in the blob.
    pub offset: usize,
    /// Packing of the blob.
    pub packing: Packing,
}

impl Part {
    /// Bytes it takes.
    pub fn bytes(&self) -> usize {
        self.shape.bytes(self.packing)
    }

    /// Its bytes in `blob` (None when the blob is too short).
    pub fn slice<'a>(&self, blob: &'a [u8]) -> Option<&'a [u8]> {
        blob.get(self.offset..self.offset.checked_add(self.bytes())?)
    }

    /// The tensor view (None: not a tensor, or the blob is too short).
    pub fn tensor<'a>(&self, blob: &'a [u8]) -> Option<Tensor<'a>> {
        let Shape::Tensor { rows, cols } = self.shape else { return None };
        let (scale, data) = self.slice(blob)?.split_at(4);
        Some(Tensor { data, scale: Floats::new(scale).get(0), rows, cols, packing: self.packing })
    }

    /// The float view (None: not a float array, or the blob is too short).
    pub fn floats<'a>(&self, blob: &'a [u8]) -> Option<Floats<'a>> {
        match self.shape {
            Shape::Floats(_) => Some(Floats::new(self.slice(blob)?)),
            Shape::Tensor { .. } => None,
        }
    }
}

impl fmt::Display for Part {
    /// "embed", "block3.Wq", "final_norm.gamma", ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.in_block() {
            write!(f, "block{}.{}", self.layer, self.field.name())
        } else {
            f.write_str(self.field.name())
        }
    }
}

/// The parts of a blob in order (see [`parts`]).
#[derive(Clone, Debug)]
pub struct Parts {
    dims: Dims,
    n_classes: usize,
    classifier: bool,
    packing: Packing,
    /// Index of the next part.
    i: usize,
    offset: usize,
}

impl Iterator for Parts {
    type Item = Part;

    fn next(&mut self) -> Option<Part> {
        let nb = BLOCK.len() * self.dims.n_layers;
        let (field, layer) = match self.i {
            0 => (Field::Embed, 0),
            i if i <= nb => (BLOCK[(i - 1) % BLOCK.len()], (i - 1) / BLOCK.len()),
            i => match i - nb {
                1 => (Field::FinalGamma, 0),
                2 => (Field::FinalBeta, 0),
                3 => (Field::Unembed, 0),
                4 if self.classifier => (Field::Head, 0),
                _ => return None,
            },
        };
        let shape = field.shape(&self.dims, self.n_classes);
        let part = Part { field, layer, shape, offset: self.offset, packing: self.packing };
        self.i += 1;
        self.offset += part.bytes();
        Some(part)
    }
}

/// Every part of a blob of this format, in order, with its offset
/// (n_classes: a classifier's class count; ignored for language models).
pub fn parts(dims: &Dims, format: Format, n_classes: usize) -> Parts {
    Parts {
        dims: *dims,
        n_classes,
        classifier: format.is_classifier(),
        packing: format.packing(),
        i: 0,
        offset: format.header_len(),
    }
}

/// Exact size of a blob (no trailing bytes).
pub fn blob_bytes(dims: &Dims, format: Format, n_classes: usize) -> usize {
    parts(dims, format, n_classes).last().map_or(format.header_len(), |p| p.offset + p.bytes())
}

#[cfg(test)]
mod tests {
    use super::super::{block_bytes, model_bytes, parse_classifier, parse_model, tensor_bytes, Block};
    use super::*;

    const DIMS: [Dims; 3] = [
        Dims { vocab: 256, d_model: 256, n_layers: 8, d_head: 64, kernel_size: 5, top_k: 4 },
        Dims { vocab: 40, d_model: 22, n_layers: 3, d_head: 6, kernel_size: 3, top_k: 2 },
        Dims { vocab: 7, d_model: 13, n_layers: 1, d_head: 3, kernel_size: 7, top_k: 1 },
    ];

    /// Each magic names its own format, and only that one.
    #[test]
    fn magics_round_trip() {
        for f in Format::ALL {
            let mut b = [b'x'; 16];
            b[..f.magic().len()].copy_from_slice(f.magic());
            assert_eq!(Format::detect(&b), Some(f));
            assert_eq!(Format::of_kind(&b, f.is_classifier()), Some(f));
            assert_eq!(Format::of_kind(&b, !f.is_classifier()), None);
            assert_eq!(Format::new(f.is_classifier(), f.packing()), Some(f));
            assert_eq!(Format::detect(&b[..f.magic().len() - 1]), None);
        }
        assert_eq!(Format::new(true, Packing::P3), None);
    }

    /// The closed-form sizes, the layout and the 944K model's known sizes agree.
    #[test]
    fn sizes_agree() {
        for dims in &DIMS {
            for f in Format::ALL {
                let p = f.packing();
                let lm = model_bytes(dims, p);
                let nc = 5;
                let want = if f.is_classifier() { lm + 6 + tensor_bytes(p, nc * dims.d_model) } else { lm };
                assert_eq!(blob_bytes(dims, f, nc), want, "{f:?} {dims:?}");
                let blk: usize = parts(dims, f, nc).filter(|q| q.layer == 0 && q.field.in_block()).map(|q| q.bytes()).sum();
                assert_eq!(blk, block_bytes(dims, p));
            }
        }
        assert_eq!(blob_bytes(&DIMS[0], Format::Atome01, 0), 276_655);
        assert_eq!(blob_bytes(&DIMS[0], Format::Atome02, 0), 229_975);
    }

    /// The parser's views sit where the layout says (same order, same shapes).
    #[test]
    fn parser_reads_what_the_layout_describes() {
        for dims in &DIMS {
            for f in Format::ALL {
                let nc = 3usize;
                let mut blob = std::vec![0u8; blob_bytes(dims, f, nc)];
                let blob = &mut blob[..];
                blob[..f.magic().len()].copy_from_slice(f.magic());
                if f.is_classifier() {
                    blob[f.magic().len()..f.header_len()].copy_from_slice(&(nc as i32).to_le_bytes());
                }
                let at = |s: &[u8]| s.as_ptr() as usize - blob.as_ptr() as usize;
                let blob = &*blob;
                let (m, head) = if f.is_classifier() {
                    let c = parse_classifier(blob, dims, 16).unwrap();
                    (c.base, Some(c.head))
                } else {
                    (parse_model(blob, dims).unwrap(), None)
                };
                // A block piece's view by value, from either build's Block.
                fn own<T: Copy>(t: impl core::borrow::Borrow<T>) -> T {
                    *t.borrow()
                }
                for part in parts(dims, f, nc) {
                    let b: Block = m.block(part.layer);
                    let (t, fl) = match part.field {
                        Field::Embed => (Some(own::<Tensor>(m.embed())), None),
                        Field::Unembed => (Some(own::<Tensor>(m.unembed())), None),
                        Field::Head => (head, None),
                        Field::Conv => (Some(own::<Tensor>(b.conv())), None),
                        Field::Wq => (Some(own::<Tensor>(b.wq())), None),
                        Field::Wk => (Some(own::<Tensor>(b.wk())), None),
                        Field::Wv => (Some(own::<Tensor>(b.wv())), None),
                        Field::Router => (Some(own::<Tensor>(b.router())), None),
                        Field::NormGamma => (None, Some(b.norm().gamma)),
                        Field::NormBeta => (None, Some(b.norm().beta)),
                        Field::SsmA => (None, Some(b.ssm().a)),
                        Field::SsmB => (None, Some(b.ssm().b)),
                        Field::SsmC => (None, Some(b.ssm().c_out)),
                        Field::FinalGamma => (None, Some(m.final_norm().gamma)),
                        Field::FinalBeta => (None, Some(m.final_norm().beta)),
                    };
                    match (t, fl, part.shape) {
                        (Some(t), None, Shape::Tensor { rows, cols }) => {
                            assert_eq!((at(t.data) - 4, t.rows, t.cols, t.data.len()), (part.offset, rows, cols, part.bytes() - 4), "{part}");
                        }
                        (None, Some(x), Shape::Floats(n)) => assert_eq!((at(x.bytes()), x.len()), (part.offset, n), "{part}"),
                        _ => panic!("{part}: kind differs"),
                    }
                }
            }
        }
    }
}
