//! Parsing a blob in place (docs/FORMATS.md), at any alignment, on any host
//! byte order. The order of the reads below is the one [`super::layout`]
//! describes (a test checks that the two agree).
#[cfg(not(atome_lazy_block))]
use super::Ssm;
use super::{Block, Classifier, Dims, Floats, Format, Model, Norm, Packing, Tensor, BASE3_MAX_BYTE, CL_MAGIC_LEN, LM_MAGIC_LEN};

/// Why a blob was refused (values are the C return codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// Null argument, too short for the magic, or unknown magic.
    BadMagic = -1,
    /// Shorter than the configuration needs.
    Truncated = -2,
    /// More than 15 bytes after the end.
    Trailing = -3,
    /// A payload byte no encoder writes (ATOME02 byte > 242).
    BadPayload = -4,
    /// n_classes outside 1..=max_classes.
    BadClasses = -5,
}

/// Up to this many bytes of padding after a blob are accepted.
pub const MAX_TRAILING: usize = 15;

/// Reads a blob front to back. A read past the end yields an empty slice
/// and records Truncated; the first error recorded is the one reported, so
/// the parsers need no early returns (smaller code on microcontrollers).
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Check every ATOME02 byte (at load; views of a loaded blob skip it).
    validate: bool,
    /// First error met.
    err: Option<LoadError>,
}

impl<'a> Cursor<'a> {
    fn new(buf: &'a [u8], pos: usize, validate: bool) -> Self {
        Cursor { buf, pos, validate, err: None }
    }
    fn fail(&mut self, e: LoadError) {
        if self.err.is_none() {
            self.err = Some(e);
        }
    }
    // Out of line on microcontrollers: a dozen call sites.
    #[cfg_attr(atome_portable, inline(never))]
    fn take(&mut self, n: usize) -> &'a [u8] {
        let end = self.pos.saturating_add(n);
        match self.buf.get(self.pos..end) {
            Some(s) => {
                self.pos = end;
                s
            }
            None => {
                self.fail(LoadError::Truncated);
                &[]
            }
        }
    }
    fn tensor(&mut self, rows: usize, cols: usize, packing: Packing) -> Tensor<'a> {
        let scale = Floats::new(self.take(4)).get(0);
        let data = self.take(packing.payload_len(rows * cols));
        if self.validate && packing == Packing::Base3 && data.iter().any(|&b| b > BASE3_MAX_BYTE) {
            self.fail(LoadError::BadPayload);
        }
        Tensor { data, scale, rows, cols, packing }
    }
    fn floats(&mut self, n: usize) -> Floats<'a> {
        Floats::new(self.take(4 * n))
    }
    fn norm(&mut self, d: usize) -> Norm<'a> {
        Norm { gamma: self.floats(d), beta: self.floats(d) }
    }
    /// Reads (and at load checks) one block's records; its views.
    #[cfg(not(atome_lazy_block))]
    fn block(&mut self, dims: &Dims, p: Packing) -> Block<'a> {
        let d = dims.d_model;
        Block {
            norm: self.norm(d),
            conv: self.tensor(d, dims.kernel_size, p),
            ssm: Ssm { a: self.floats(d), b: self.floats(d), c_out: self.floats(d) },
            wq: self.tensor(dims.d_head, d, p),
            wk: self.tensor(dims.d_head, d, p),
            wv: self.tensor(d, d, p),
            router: self.tensor(3, d, p),
        }
    }
    /// Reads (and at load checks) one block's records; its view.
    #[cfg(atome_lazy_block)]
    fn block(&mut self, dims: &Dims, p: Packing) -> Block<'a> {
        let start = self.pos;
        for j in 0..Block::PIECES {
            match Block::shape_of(dims, j) {
                Some((r, c)) => {
                    self.tensor(r, c, p);
                }
                None => {
                    self.floats(dims.d_model);
                }
            }
        }
        Block::new(self.buf.get(start..self.pos).unwrap_or(&[]), dims, p)
    }
    /// Ok(v) when nothing failed and at most MAX_TRAILING bytes remain
    /// (`end`: the blob must end here).
    fn finish<T>(&self, v: T, end: bool) -> Result<T, LoadError> {
        match self.err {
            Some(e) => Err(e),
            None if end && self.buf.len() - self.pos > MAX_TRAILING => Err(LoadError::Trailing),
            None => Ok(v),
        }
    }
}

/// The weight record at byte `at` of `bytes` (the loader's read, shared).
#[cfg_attr(not(atome_lazy_block), allow(dead_code))]
pub(super) fn record_at(bytes: &[u8], at: usize, rows: usize, cols: usize, p: Packing) -> Tensor<'_> {
    Cursor::new(bytes, at, false).tensor(rows, cols, p)
}

/// Bytes of one serialized tensor.
pub fn tensor_bytes(p: Packing, n: usize) -> usize {
    4 + p.payload_len(n)
}

/// Bytes of one serialized block.
pub fn block_bytes(dims: &Dims, p: Packing) -> usize {
    let d = dims.d_model;
    8 * d
        + tensor_bytes(p, d * dims.kernel_size)
        + 12 * d
        + 2 * tensor_bytes(p, dims.d_head * d)
        + tensor_bytes(p, d * d)
        + tensor_bytes(p, 3 * d)
}

/// Bytes of a language-model blob (magic included).
pub fn model_bytes(dims: &Dims, p: Packing) -> usize {
    Format::Atome01.header_len()
        + 2 * tensor_bytes(p, dims.vocab * dims.d_model)
        + dims.n_layers * block_bytes(dims, p)
        + 8 * dims.d_model
}

impl<'a> Model<'a> {
    /// Block l (l < n_layers; empty views past the blocks region, which was
    /// sized at load).
    ///
    /// The q15 cached build, which reads a block at every position, takes
    /// it by offset arithmetic ([`Block::of_layer`]); the other default builds
    /// (a lean plan reads each block once a call) through the loader's
    /// cursor (code shared with the load); the q15 size-first build makes
    /// the view of its bytes.
    pub fn block(&self, l: usize) -> Block<'a> {
        #[cfg(atome_lazy_block)]
        return {
            let len = Block::bytes_of(&self.dims, self.packing);
            Block::new(Cursor::new(self.blocks_bytes(), l.saturating_mul(len), false).take(len), &self.dims, self.packing)
        };
        #[cfg(all(atome_q15, atome_cached, not(atome_small)))]
        return Block::of_layer(self.blocks_bytes(), l, &self.dims, self.packing);
        #[cfg(not(any(atome_lazy_block, all(atome_q15, atome_cached, not(atome_small)))))]
        return Cursor::new(self.blocks_bytes(), l.saturating_mul(block_bytes(&self.dims, self.packing)), false).block(&self.dims, self.packing);
    }

    /// [`Model::block`] through the loader's cursor (the test of the
    /// view's offsets).
    #[cfg(test)]
    fn block_cursor(&self, l: usize) -> Block<'a> {
        let len = block_bytes(&self.dims, self.packing);
        Cursor::new(self.blocks_bytes(), l.saturating_mul(len), false).block(&self.dims, self.packing)
    }

}

/// The model body after the header (and the class count).
fn body<'a>(c: &mut Cursor<'a>, dims: &Dims, p: Packing) -> Model<'a> {
    if dims.vocab == 0 || dims.d_model == 0 || dims.n_layers == 0 || dims.d_head == 0 || dims.kernel_size == 0 {
        c.fail(LoadError::BadMagic);
    }
    let start0 = c.pos;
    let embed = c.tensor(dims.vocab, dims.d_model, p);
    let start = c.pos;
    for _ in 0..dims.n_layers {
        c.block(dims, p);
    }
    let blocks = c.buf.get(start..c.pos).unwrap_or(&[]);
    let final_norm = c.norm(dims.d_model);
    let unembed = c.tensor(dims.vocab, dims.d_model, p);
    #[cfg(not(atome_lazy_block))]
    let _ = start0;
    #[cfg(not(atome_lazy_block))]
    return Model { dims: *dims, packing: p, embed, blocks, final_norm, unembed };
    #[cfg(atome_lazy_block)]
    return {
        let _ = (embed, blocks, final_norm, unembed);
        Model { dims: *dims, packing: p, body: c.buf.get(start0..c.pos).unwrap_or(&[]) }
    };
}

/// Magic -> packing of a language-model blob.
pub fn lm_packing(blob: &[u8]) -> Option<Packing> {
    Format::of_kind(blob, false).map(Format::packing)
}

/// Magic -> packing of a classifier blob.
pub fn classifier_packing(blob: &[u8]) -> Option<Packing> {
    Format::of_kind(blob, true).map(Format::packing)
}

/// Parses a language-model blob (ATOME01, ATOME02 or ATOMEP3) for `dims`.
pub fn parse_model<'a>(blob: &'a [u8], dims: &Dims) -> Result<Model<'a>, LoadError> {
    let p = lm_packing(blob).ok_or(LoadError::BadMagic)?;
    let mut c = Cursor::new(blob, LM_MAGIC_LEN, true);
    let m = body(&mut c, dims, p);
    c.finish(m, true)
}

/// Parses a classifier blob (ATOMECL01 or ATOMECL02) for `dims`.
pub fn parse_classifier<'a>(blob: &'a [u8], dims: &Dims, max_classes: usize) -> Result<Classifier<'a>, LoadError> {
    classifier_at(blob, dims, max_classes, true)
}

fn classifier_at<'a>(blob: &'a [u8], dims: &Dims, max_classes: usize, validate: bool) -> Result<Classifier<'a>, LoadError> {
    let p = classifier_packing(blob).ok_or(LoadError::BadMagic)?;
    let mut c = Cursor::new(blob, CL_MAGIC_LEN, validate);
    let n = i32::from_le_bytes(c.take(4).try_into().map_err(|_| LoadError::Truncated)?);
    if n < 1 || n as i64 > max_classes as i64 {
        return Err(LoadError::BadClasses);
    }
    let base = body(&mut c, dims, p);
    let head = c.tensor(n as usize, dims.d_model, p);
    c.finish(Classifier { base, head }, true)
}

/// The model of a blob that `parse_model` or `parse_classifier` accepted
/// for these dims (a classifier's body), without checking it again.
pub fn loaded_model<'a>(blob: &'a [u8], dims: &Dims) -> Option<Model<'a>> {
    let (p, at) = match lm_packing(blob) {
        Some(p) => (p, LM_MAGIC_LEN),
        None => (classifier_packing(blob)?, CL_MAGIC_LEN + 4),
    };
    let mut c = Cursor::new(blob, at, false);
    let m = body(&mut c, dims, p);
    c.finish(m, false).ok()
}

/// The classifier of a blob that `parse_classifier` accepted for these
/// dims and class limit, without checking the payload again.
pub fn loaded_classifier<'a>(blob: &'a [u8], dims: &Dims, max_classes: usize) -> Option<Classifier<'a>> {
    classifier_at(blob, dims, max_classes, false).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::layout::Part;
    use crate::format::write::{write_blob, Content};

    /// Distinct floats, scales and ternary weights in every part.
    struct Fill;
    impl Content for Fill {
        fn float(&mut self, part: &Part, i: usize) -> f32 {
            (part.offset + i) as f32 * 0.25 - 3.0
        }
        fn scale(&mut self, part: &Part) -> f32 {
            1.0 / (1 + part.offset) as f32
        }
        fn weight(&mut self, part: &Part, n: usize) -> i8 {
            ((n * 3 + part.offset) % 3) as i8 - 1
        }
    }

    /// A block's views (bytes, scales, shapes) are the records the loader's
    /// cursor reads, for every layer, and empty past the last.
    #[test]
    fn block_views_are_the_cursor_records() {
        let same_t = |a: &Tensor, b: &Tensor| a.data == b.data && a.scale.to_bits() == b.scale.to_bits() && (a.rows, a.cols, a.packing) == (b.rows, b.cols, b.packing);
        let same_f = |a: &Floats, b: &Floats| a.bytes() == b.bytes();
        for dims in [
            Dims { vocab: 32, d_model: 16, n_layers: 2, d_head: 8, kernel_size: 5, top_k: 4 },
            Dims { vocab: 40, d_model: 22, n_layers: 3, d_head: 6, kernel_size: 3, top_k: 2 },
            Dims { vocab: 7, d_model: 5, n_layers: 4, d_head: 3, kernel_size: 1, top_k: 1 },
        ] {
            for f in [Format::Atome01, Format::Atome02, Format::AtomeP3] {
                let mut buf = [0u8; 8192];
                let n = write_blob(&mut buf, &dims, f, 0, &mut Fill).expect("write");
                let m = parse_model(&buf[..n], &dims).expect("parse");
                for l in 0..=dims.n_layers {
                    let len = block_bytes(&dims, f.packing());
                    let own = m.blocks_bytes().get(l * len..(l + 1) * len).unwrap_or(&[]);
                    let (a, b) = (Block::new(own, &dims, f.packing()), m.block_cursor(l));
                    let (an, bn, as_, bs) = (a.norm(), b.norm(), a.ssm(), b.ssm());
                    assert!(same_f(&an.gamma, &bn.gamma) && same_f(&an.beta, &bn.beta));
                    assert!(same_f(&as_.a, &bs.a) && same_f(&as_.b, &bs.b) && same_f(&as_.c_out, &bs.c_out));
                    for (x, y) in [(a.conv(), b.conv()), (a.wq(), b.wq()), (a.wk(), b.wk()), (a.wv(), b.wv()), (a.router(), b.router())] {
                        assert!(same_t(&x, &y), "layer {l}, {f:?}");
                    }
                }
            }
        }
    }
}
