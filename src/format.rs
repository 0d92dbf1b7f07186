//! Blob formats (SPEC section 2): parsing in place, at any alignment, on any
//! host byte order. Nothing here copies weights; every view borrows the blob.

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
    /// From the tag stored in the C structs.
    pub fn from_tag(t: u8) -> Option<Packing> {
        match t {
            0 => Some(Packing::Trit2),
            1 => Some(Packing::Base3),
            2 => Some(Packing::P3),
            _ => None,
        }
    }

    /// Payload bytes (after the scale) for n weights.
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

impl<'a> Tensor<'a> {
    /// Weight number n (= r * cols + c); 0 past the end of `data`.
    #[inline]
    pub fn weight(&self, n: usize) -> i8 {
        match self.packing {
            Packing::Trit2 => {
                let b = self.data.get(n >> 2).copied().unwrap_or(0);
                match (b >> (2 * (n & 3))) & 3 {
                    1 => 1,
                    3 => -1,
                    _ => 0,
                }
            }
            Packing::Base3 => {
                let mut b = self.data.get(n / 5).copied().unwrap_or(121);
                for _ in 0..n % 5 {
                    b /= 3;
                }
                (b % 3) as i8 - 1
            }
            Packing::P3 => {
                let g = 3 * (n >> 3);
                let w = match self.data.get(g..g + 3) {
                    Some(s) => s[0] as u32 | (s[1] as u32) << 8 | (s[2] as u32) << 16,
                    None => 0,
                };
                P3_WEIGHTS[((w >> (3 * (n & 7))) & 7) as usize]
            }
        }
    }
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
    blocks: &'a [u8],
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
        if self.validate && packing == Packing::Base3 && data.iter().any(|&b| b > 242) {
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

/// Bytes of a language-model blob (magic included; 7-byte magics).
pub fn model_bytes(dims: &Dims, p: Packing) -> usize {
    7 + 2 * tensor_bytes(p, dims.vocab * dims.d_model)
        + dims.n_layers * block_bytes(dims, p)
        + 8 * dims.d_model
}

impl<'a> Model<'a> {
    /// Block l (l < n_layers; empty views past the blocks region, which was
    /// sized at load).
    pub fn block(&self, l: usize) -> Block<'a> {
        let len = block_bytes(&self.dims, self.packing);
        Cursor::new(self.blocks, l.saturating_mul(len), false).block(&self.dims, self.packing)
    }

    /// The whole blob region holding the blocks.
    pub fn blocks_bytes(&self) -> &'a [u8] {
        self.blocks
    }
}

/// The model body after the header (and the class count).
fn body<'a>(c: &mut Cursor<'a>, dims: &Dims, p: Packing) -> Model<'a> {
    if dims.vocab == 0 || dims.d_model == 0 || dims.n_layers == 0 || dims.d_head == 0 || dims.kernel_size == 0 {
        c.fail(LoadError::BadMagic);
    }
    let embed = c.tensor(dims.vocab, dims.d_model, p);
    let start = c.pos;
    for _ in 0..dims.n_layers {
        c.block(dims, p);
    }
    let blocks = c.buf.get(start..c.pos).unwrap_or(&[]);
    let final_norm = c.norm(dims.d_model);
    let unembed = c.tensor(dims.vocab, dims.d_model, p);
    Model { dims: *dims, packing: p, embed, blocks, final_norm, unembed }
}

/// Magic -> packing of a language-model blob.
pub fn lm_packing(blob: &[u8]) -> Option<Packing> {
    match blob.split_first_chunk::<7>()?.0 {
        b"ATOME01" => Some(Packing::Trit2),
        b"ATOME02" => Some(Packing::Base3),
        b"ATOMEP3" => Some(Packing::P3),
        _ => None,
    }
}

/// Magic -> packing of a classifier blob.
pub fn classifier_packing(blob: &[u8]) -> Option<Packing> {
    match blob.split_first_chunk::<9>()?.0 {
        b"ATOMECL01" => Some(Packing::Trit2),
        b"ATOMECL02" => Some(Packing::Base3),
        _ => None,
    }
}

/// Parses a language-model blob (ATOME01, ATOME02 or ATOMEP3) for `dims`.
pub fn parse_model<'a>(blob: &'a [u8], dims: &Dims) -> Result<Model<'a>, LoadError> {
    let p = lm_packing(blob).ok_or(LoadError::BadMagic)?;
    let mut c = Cursor::new(blob, 7, true);
    let m = body(&mut c, dims, p);
    c.finish(m, true)
}

/// Parses a classifier blob (ATOMECL01 or ATOMECL02) for `dims`.
pub fn parse_classifier<'a>(blob: &'a [u8], dims: &Dims, max_classes: usize) -> Result<Classifier<'a>, LoadError> {
    classifier_at(blob, dims, max_classes, true)
}

fn classifier_at<'a>(blob: &'a [u8], dims: &Dims, max_classes: usize, validate: bool) -> Result<Classifier<'a>, LoadError> {
    let p = classifier_packing(blob).ok_or(LoadError::BadMagic)?;
    let mut c = Cursor::new(blob, 9, validate);
    let n = i32::from_le_bytes(*c.take(4).as_array().ok_or(LoadError::Truncated)?);
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
        Some(p) => (p, 7),
        None => (classifier_packing(blob)?, 13),
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
