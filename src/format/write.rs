//! Writing blobs into a caller's buffer (no allocation): a byte writer, a
//! whole blob from weights the caller supplies, and re-packing a blob into
//! another packing.
use super::codec::{pack, EncodeError};
use super::layout::{blob_bytes, parts, Field, Part, Shape};
use super::{Dims, Format, LoadError, Packing, Tensor};

/// Why a blob could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// The output buffer is too short: `need` bytes in all.
    Short {
        /// Bytes the whole blob takes.
        need: usize,
    },
    /// A weight the packing cannot hold.
    Weight {
        /// The tensor.
        field: Field,
        /// Its block (0 outside the blocks).
        layer: usize,
        /// Weight number in the tensor.
        index: usize,
        /// Its value.
        value: i8,
    },
    /// No format of that kind and packing (there is no P3 classifier).
    NoFormat,
    /// The blob to re-pack is not valid for these dims.
    Source(LoadError),
}

/// Appends to a byte buffer; every write checks the room left.
pub struct Writer<'a> {
    out: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    /// At the start of `out`.
    pub fn new(out: &'a mut [u8]) -> Self {
        Writer { out, pos: 0 }
    }

    /// Bytes written.
    pub fn len(&self) -> usize {
        self.pos
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.pos == 0
    }

    /// The next n bytes of the buffer (None: no room; nothing is written).
    fn room(&mut self, n: usize) -> Option<&mut [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.out.get_mut(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    /// Copies bytes (false: no room).
    pub fn bytes(&mut self, b: &[u8]) -> bool {
        self.room(b.len()).map(|s| s.copy_from_slice(b)).is_some()
    }

    /// A little-endian binary32 (false: no room).
    pub fn f32(&mut self, v: f32) -> bool {
        self.bytes(&v.to_le_bytes())
    }

    /// A tensor: its scale, then weights 0..n packed (weight(i) is asked once
    /// for each i, in order).
    pub fn tensor(&mut self, p: Packing, scale: f32, n: usize, weight: impl FnMut(usize) -> i8) -> Result<(), EncodeError> {
        let len = p.payload_len(n);
        if self.out.len().saturating_sub(self.pos) < 4 + len {
            return Err(EncodeError::Short);
        }
        self.f32(scale);
        let s = self.room(len).ok_or(EncodeError::Short)?;
        pack(p, n, weight, s)
    }
}

/// The content of a blob being written, part by part (see
/// [`super::layout`]); each method is asked in blob order.
pub trait Content {
    /// Value i of a float array.
    fn float(&mut self, part: &Part, i: usize) -> f32;
    /// The scale of a tensor.
    fn scale(&mut self, part: &Part) -> f32;
    /// Weight n (row-major) of a tensor.
    fn weight(&mut self, part: &Part, n: usize) -> i8;
}

/// Writes a whole blob of `format` for `dims` into `out` (n_classes: a
/// classifier's class count, written as is; ignored for language models).
/// Returns its length, [`blob_bytes`].
pub fn write_blob(out: &mut [u8], dims: &Dims, format: Format, n_classes: usize, content: &mut impl Content) -> Result<usize, WriteError> {
    let need = blob_bytes(dims, format, n_classes);
    let out = out.get_mut(..need).ok_or(WriteError::Short { need })?;
    // `out` is exactly the blob's size: no write below runs out of room.
    let mut w = Writer::new(out);
    w.bytes(format.magic());
    if format.is_classifier() {
        w.bytes(&(n_classes as i32).to_le_bytes());
    }
    for part in parts(dims, format, n_classes) {
        match part.shape {
            Shape::Floats(n) => {
                for i in 0..n {
                    w.f32(content.float(&part, i));
                }
            }
            Shape::Tensor { rows, cols } => {
                let scale = content.scale(&part);
                w.tensor(format.packing(), scale, rows * cols, |i| content.weight(&part, i)).map_err(|e| match e {
                    EncodeError::Weight { index, value } => WriteError::Weight { field: part.field, layer: part.layer, index, value },
                    EncodeError::Short => WriteError::Short { need },
                })?;
            }
        }
    }
    Ok(w.len())
}

/// Re-packs a blob (any format, exactly its layout for `dims` or longer:
/// trailing bytes are left out) into packing `to`, into `out`: same magic
/// kind and class count, same floats and scales (their bytes, as they are),
/// same weights. Returns the length written. Trit2 code `10` and P3 code
/// `111` read as 0 and are written as 0; weights the new packing cannot hold
/// (P3's +-3, +-9 in a ternary packing) and ATOME02 bytes above 242 are
/// refused.
pub fn repack(src: &[u8], dims: &Dims, to: Packing, out: &mut [u8]) -> Result<usize, WriteError> {
    let from = Format::detect(src).ok_or(WriteError::Source(LoadError::BadMagic))?;
    let target = Format::new(from.is_classifier(), to).ok_or(WriteError::NoFormat)?;
    let nc = match from.n_classes(src) {
        Some(n) if n < 1 => return Err(WriteError::Source(LoadError::BadClasses)),
        Some(n) => n as usize,
        None if from.is_classifier() => return Err(WriteError::Source(LoadError::Truncated)),
        None => 0,
    };
    if src.len() < blob_bytes(dims, from, nc) {
        return Err(WriteError::Source(LoadError::Truncated));
    }
    let need = blob_bytes(dims, target, nc);
    let out = out.get_mut(..need).ok_or(WriteError::Short { need })?;
    // `out` is exactly the new blob's size: no write below runs out of room.
    let mut w = Writer::new(out);
    w.bytes(target.magic());
    w.bytes(src.get(from.magic().len()..from.header_len()).unwrap_or(&[]));
    for (a, b) in parts(dims, from, nc).zip(parts(dims, target, nc)) {
        let bytes = a.slice(src).unwrap_or(&[]);
        let Some(t) = a.tensor(src) else {
            w.bytes(bytes);
            continue;
        };
        if t.packing == Packing::Base3 && t.unused_codes() > 0 {
            return Err(WriteError::Source(LoadError::BadPayload));
        }
        w.bytes(&bytes[..4]);
        let room = w.room(b.bytes() - 4).ok_or(WriteError::Short { need })?;
        pack(to, t.rows * t.cols, chunked(&t), room).map_err(|e| match e {
            EncodeError::Weight { index, value } => WriteError::Weight { field: a.field, layer: a.layer, index, value },
            EncodeError::Short => WriteError::Short { need },
        })?;
    }
    Ok(w.len())
}

/// Weight i of a tensor, for i asked in order: decoded a block at a time.
fn chunked<'t>(t: &'t Tensor<'_>) -> impl FnMut(usize) -> i8 + 't {
    let mut buf = [0i8; 64];
    let mut start = usize::MAX;
    move |i| {
        if !(start..start.saturating_add(buf.len())).contains(&i) {
            start = i;
            t.decode(i, &mut buf);
        }
        buf[i - start]
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_classifier, parse_model};
    use super::*;

    /// Content from a formula: weights (P3-wide or ternary) and floats.
    struct Formula(bool);
    impl Content for Formula {
        fn float(&mut self, part: &Part, i: usize) -> f32 {
            (part.offset + i) as f32 * 0.25 - 3.0
        }
        fn scale(&mut self, part: &Part) -> f32 {
            1.0 / (1 + part.offset) as f32
        }
        fn weight(&mut self, part: &Part, n: usize) -> i8 {
            let x = (n * 3 + part.offset) % 7;
            if self.0 {
                [0, 1, -1, 3, -3, 9, -9][x]
            } else {
                [0, 1, -1, 0, 1, -1, 0][x]
            }
        }
    }

    #[test]
    fn written_blobs_parse_and_repack_losslessly() {
        let dims = Dims { vocab: 11, d_model: 9, n_layers: 2, d_head: 3, kernel_size: 4, top_k: 2 };
        let mut a = [0u8; 4096];
        let mut b = [0u8; 4096];
        let mut c = [0u8; 4096];
        for f in Format::ALL {
            let len = write_blob(&mut a, &dims, f, 4, &mut Formula(false)).unwrap();
            assert_eq!(len, blob_bytes(&dims, f, 4));
            if f.is_classifier() {
                parse_classifier(&a[..len], &dims, 16).unwrap();
            } else {
                parse_model(&a[..len], &dims).unwrap();
            }
            for to in Packing::ALL {
                let Ok(lb) = repack(&a[..len], &dims, to, &mut b) else {
                    assert!(f.is_classifier() && to == Packing::P3);
                    continue;
                };
                let g = Format::new(f.is_classifier(), to).unwrap();
                assert_eq!(lb, blob_bytes(&dims, g, 4));
                for (p, q) in parts(&dims, f, 4).zip(parts(&dims, g, 4)) {
                    match (p.tensor(&a), q.tensor(&b[..lb])) {
                        (Some(x), Some(y)) => {
                            assert_eq!(x.scale.to_bits(), y.scale.to_bits());
                            assert!((0..x.rows * x.cols).all(|i| x.weight(i) == y.weight(i)), "{p}");
                        }
                        _ => assert_eq!(p.slice(&a), q.slice(&b[..lb])),
                    }
                }
                // And back: the same bytes.
                let lc = repack(&b[..lb], &dims, f.packing(), &mut c).unwrap();
                assert_eq!(&c[..lc], &a[..len], "{f:?} -> {to:?} -> back");
            }
        }
        // Wide P3 weights do not fit a ternary packing; short outputs are refused.
        let len = write_blob(&mut a, &dims, Format::AtomeP3, 0, &mut Formula(true)).unwrap();
        assert!(matches!(repack(&a[..len], &dims, Packing::Base3, &mut b), Err(WriteError::Weight { field: Field::Embed, .. })));
        assert_eq!(repack(&a[..len - 1], &dims, Packing::Trit2, &mut b), Err(WriteError::Source(LoadError::Truncated)));
        assert_eq!(write_blob(&mut a[..100], &dims, Format::Atome01, 0, &mut Formula(false)), Err(WriteError::Short { need: len_of(&dims) }));
        assert!(matches!(write_blob(&mut a, &dims, Format::Atome02, 0, &mut Formula(true)), Err(WriteError::Weight { .. })));
    }

    fn len_of(dims: &Dims) -> usize {
        blob_bytes(dims, Format::Atome01, 0)
    }
}
