//! ATOMEF, the self-describing container (docs/CONTAINER.md): a short
//! header giving the model's dimensions, its packing and a CRC-32 of the
//! payload, an optional UTF-8 metadata block, then a bare ATOME01/02/P3 or
//! classifier blob, unchanged.
//!
//! Parsing borrows the input (no copy); writing goes into a caller's buffer.
use crate::format::{Dims, Packing};

/// The first six bytes of a container.
pub const MAGIC: [u8; 6] = *b"ATOMEF";
/// The format version this library reads and writes.
pub const VERSION: u16 = 1;
/// Bytes of the fixed header (the metadata block follows it).
pub const HEADER_LEN: usize = 60;

/// What the payload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A language model (ATOME01, ATOME02 or ATOMEP3 payload).
    Model = 1,
    /// A classifier (ATOMECL01 or ATOMECL02 payload).
    Classifier = 2,
}

/// The header's description of the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    /// Language model or classifier.
    pub kind: Kind,
    /// How the payload's weights are packed.
    pub packing: Packing,
    /// Model dimensions.
    pub dims: Dims,
    /// The window the model is meant to run with (0: not given).
    pub max_seq: usize,
    /// Classes of a classifier head (0 for a language model).
    pub n_classes: usize,
}

/// A parsed container: the header, the metadata block and the payload.
#[derive(Clone, Copy, Debug)]
pub struct Container<'a> {
    /// What the header says.
    pub info: Info,
    /// UTF-8 metadata (name, tokenizer, licence...), possibly empty. The
    /// library does not interpret it; it is covered by the header CRC.
    pub metadata: &'a [u8],
    /// The bare blob (with its own magic), checked against the CRC.
    pub payload: &'a [u8],
}

/// Why a container was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerError {
    /// Not a container of a version this library reads, or a header that
    /// contradicts itself or its payload's magic.
    BadHeader,
    /// Shorter than its header says.
    Truncated,
    /// More than [`crate::format::MAX_TRAILING`] bytes after the payload.
    Trailing,
    /// A CRC does not match: the bytes changed after they were written.
    Corrupted,
    /// The header's dimensions or class count do not describe the payload:
    /// its length is not exactly the layout of those dimensions, or its
    /// class count differs.
    Mismatch,
}

/// True when `data` starts like a container (the magic only).
pub fn is_container(data: &[u8]) -> bool {
    data.starts_with(&MAGIC)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

/// Parses a container, checking both CRCs.
pub fn parse(data: &[u8]) -> Result<Container<'_>, ContainerError> {
    if !is_container(data) {
        return Err(ContainerError::BadHeader);
    }
    let Some(h) = data.get(..HEADER_LEN) else { return Err(ContainerError::Truncated) };
    // Bytes 8..10 are flags, none defined yet: a reader must not guess.
    if u16::from_le_bytes([h[6], h[7]]) != VERSION || h[8] != 0 || h[9] != 0 {
        return Err(ContainerError::BadHeader);
    }
    let field = |i: usize| u32_at(h, 12 + 4 * i) as usize;
    let meta_len = field(8);
    let payload_len = field(9);
    let payload_at = HEADER_LEN.checked_add(meta_len).ok_or(ContainerError::Truncated)?;
    let end = payload_at.checked_add(payload_len).ok_or(ContainerError::Truncated)?;
    // The header CRC first: a flipped length must read as corruption, not
    // as a truncation of a blob that is all there.
    let Some(meta) = data.get(HEADER_LEN..payload_at) else { return Err(ContainerError::Truncated) };
    let hcrc = crc32_update(crc32_update(0, &h[..HEADER_LEN - 4]), meta);
    if hcrc != u32_at(h, HEADER_LEN - 4) {
        return Err(ContainerError::Corrupted);
    }
    let Some(payload) = data.get(payload_at..end) else { return Err(ContainerError::Truncated) };
    if data.len() - end > crate::format::MAX_TRAILING {
        return Err(ContainerError::Trailing);
    }
    if crc32(payload) != u32_at(h, 52) {
        return Err(ContainerError::Corrupted);
    }
    let kind = match h[10] {
        1 => Kind::Model,
        2 => Kind::Classifier,
        _ => return Err(ContainerError::BadHeader),
    };
    let packing = Packing::from_tag(h[11]).ok_or(ContainerError::BadHeader)?;
    let dims = Dims {
        vocab: field(0),
        d_model: field(1),
        n_layers: field(2),
        d_head: field(3),
        kernel_size: field(4),
        top_k: field(5),
    };
    let info = Info { kind, packing, dims, max_seq: field(6), n_classes: field(7) };
    // The payload's own magic must agree with the header.
    let magic_packing = match kind {
        Kind::Model => crate::format::lm_packing(payload),
        Kind::Classifier => crate::format::classifier_packing(payload),
    };
    if magic_packing != Some(packing) || (kind == Kind::Model) != (info.n_classes == 0) {
        return Err(ContainerError::BadHeader);
    }
    // The header must describe the payload exactly: a bare blob's 0..15
    // padding bytes would let dims a few bytes off (K=4 around a K=5 model)
    // read the weights at wrong offsets.
    if layout_len(&info) != Some(payload.len() as u64) || payload_classes(payload, kind) != info.n_classes as u64 {
        return Err(ContainerError::Mismatch);
    }
    Ok(Container { info, metadata: meta, payload })
}

/// The class count a classifier payload stores (0 for a language model or a
/// negative count, which never equals a header's nonzero n_classes).
fn payload_classes(payload: &[u8], kind: Kind) -> u64 {
    match (kind, payload.get(9..13)) {
        (Kind::Classifier, Some(n)) => u64::try_from(i32::from_le_bytes([n[0], n[1], n[2], n[3]])).unwrap_or(u64::MAX),
        (Kind::Classifier, None) => u64::MAX,
        (Kind::Model, _) => 0,
    }
}

/// Exact bytes of the payload the header describes (docs/FORMATS.md), in
/// 64-bit arithmetic with overflow checked, so that on a 32-bit target no
/// header can wrap to a payload's length; None on overflow or a zero
/// dimension.
pub fn layout_len(info: &Info) -> Option<u64> {
    let d = &info.dims;
    let num = |v: usize| u64::try_from(v).ok().filter(|&v| v > 0);
    let (v, dm, l, dh, k) = (num(d.vocab)?, num(d.d_model)?, num(d.n_layers)?, num(d.d_head)?, num(d.kernel_size)?);
    let p = info.packing;
    // One serialized tensor of n weights: a 4-byte scale, then whole units.
    let t = |n: u64| -> Option<u64> {
        let (per, bytes, _) = p.unit();
        n.checked_add(per as u64 - 1)?.checked_div(per as u64)?.checked_mul(bytes as u64)?.checked_add(4)
    };
    let m = |a: u64, b: u64| a.checked_mul(b);
    let block = [m(8, dm)?, t(m(dm, k)?)?, m(12, dm)?, m(2, t(m(dh, dm)?)?)?, t(m(dm, dm)?)?, t(m(3, dm)?)?];
    let block = block.iter().try_fold(0u64, |a, &x| a.checked_add(x))?;
    let body = [m(2, t(m(v, dm)?)?)?, m(l, block)?, m(8, dm)?];
    let body = body.iter().try_fold(0u64, |a, &x| a.checked_add(x))?;
    match info.kind {
        Kind::Model => body.checked_add(crate::format::LM_MAGIC_LEN as u64),
        Kind::Classifier => {
            let head = t(m(num(info.n_classes)?, dm)?)?;
            body.checked_add(head)?.checked_add(crate::format::CL_MAGIC_LEN as u64 + 4)
        }
    }
}

/// Bytes of a container around a payload of `payload_len` bytes.
pub fn container_len(metadata_len: usize, payload_len: usize) -> usize {
    HEADER_LEN + metadata_len + payload_len
}

/// Writes a container holding `payload` into `out`; returns the bytes
/// written, or None when `out` is too small or a field does not fit 32 bits.
pub fn write(out: &mut [u8], info: &Info, metadata: &[u8], payload: &[u8]) -> Option<usize> {
    let total = container_len(metadata.len(), payload.len());
    let out = out.get_mut(..total)?;
    let fields = [
        info.dims.vocab,
        info.dims.d_model,
        info.dims.n_layers,
        info.dims.d_head,
        info.dims.kernel_size,
        info.dims.top_k,
        info.max_seq,
        info.n_classes,
        metadata.len(),
        payload.len(),
    ];
    let (h, rest) = out.split_at_mut(HEADER_LEN);
    h[..6].copy_from_slice(&MAGIC);
    h[6..8].copy_from_slice(&VERSION.to_le_bytes());
    h[8..10].copy_from_slice(&0u16.to_le_bytes());
    h[10] = info.kind as u8;
    h[11] = info.packing as u8;
    for (i, &v) in fields.iter().enumerate() {
        let v = u32::try_from(v).ok()?;
        h[12 + 4 * i..16 + 4 * i].copy_from_slice(&v.to_le_bytes());
    }
    h[52..56].copy_from_slice(&crc32(payload).to_le_bytes());
    let hcrc = crc32_update(crc32_update(0, &h[..HEADER_LEN - 4]), metadata);
    h[56..60].copy_from_slice(&hcrc.to_le_bytes());
    let (m, p) = rest.split_at_mut(metadata.len());
    m.copy_from_slice(metadata);
    p.copy_from_slice(payload);
    Some(total)
}

/// CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320, initial and final
/// value all ones) of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    crc32_update(0, data)
}

/// Continues a CRC-32: `crc32_update(crc32(a), b) == crc32(a ++ b)`.
pub fn crc32_update(crc: u32, data: &[u8]) -> u32 {
    // A 16-entry table (64 bytes of flash): two lookups a byte. A 1 KB
    // table would be faster, but a CRC runs once per load.
    const fn entry(n: u32) -> u32 {
        let mut c = n;
        let mut k = 0;
        while k < 4 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
            k += 1;
        }
        c
    }
    const TABLE: [u32; 16] = {
        let mut t = [0u32; 16];
        let mut i = 0;
        while i < 16 {
            t[i] = entry(i as u32);
            i += 1;
        }
        t
    };
    let mut c = !crc;
    for &b in data {
        c ^= b as u32;
        c = (c >> 4) ^ TABLE[(c & 15) as usize];
        c = (c >> 4) ^ TABLE[(c & 15) as usize];
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_known_answers() {
        // The standard check value of CRC-32/ISO-HDLC, and the empty input.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32_update(crc32(b"12345"), b"6789"), 0xCBF4_3926);
    }

    const SAMPLE_DIMS: Dims = Dims { vocab: 6, d_model: 4, n_layers: 1, d_head: 2, kernel_size: 3, top_k: 2 };

    fn sample_info() -> Info {
        Info { kind: Kind::Model, packing: Packing::Base3, dims: SAMPLE_DIMS, max_seq: 32, n_classes: 0 }
    }

    fn sample(meta: &[u8]) -> ([u8; 512], usize) {
        let info = sample_info();
        let mut payload = [0u8; 256];
        let len = layout_len(&info).unwrap() as usize;
        let payload = &mut payload[..len];
        payload[..7].copy_from_slice(b"ATOME02");
        for (i, b) in payload.iter_mut().enumerate().skip(7) {
            *b = (i * 7 % 243) as u8;
        }
        let mut out = [0u8; 512];
        let n = write(&mut out, &info, meta, payload).unwrap();
        (out, n)
    }

    /// The container's own layout arithmetic equals the format's, for
    /// every kind and packing over a spread of dimensions.
    #[test]
    fn layout_len_is_the_format_layout() {
        use crate::format::{blob_bytes, Format};
        for v in [1, 7, 40, 256] {
            for d in [1, 3, 22, 64] {
                for (l, dh, k) in [(1, 1, 1), (3, 6, 3), (2, 9, 7)] {
                    let dims = Dims { vocab: v, d_model: d, n_layers: l, d_head: dh, kernel_size: k, top_k: 1 };
                    for f in Format::ALL {
                        let (kind, nc) = if f.is_classifier() { (Kind::Classifier, 5) } else { (Kind::Model, 0) };
                        let info = Info { kind, packing: f.packing(), dims, max_seq: 0, n_classes: nc };
                        assert_eq!(layout_len(&info), Some(blob_bytes(&dims, f, nc) as u64), "{dims:?} {f:?}");
                    }
                }
            }
        }
        // Dimensions whose layout passes 2^64 bytes, and a zero one.
        let huge = Dims { vocab: usize::MAX, d_model: usize::MAX, n_layers: 1, d_head: 1, kernel_size: 1, top_k: 1 };
        assert_eq!(layout_len(&Info { dims: huge, ..sample_info() }), None);
        assert_eq!(layout_len(&Info { dims: Dims { n_layers: 0, ..SAMPLE_DIMS }, ..sample_info() }), None);
    }

    /// A header whose dimensions or class count do not give the payload's
    /// exact length is refused, even where the payload parses for them as a
    /// bare blob with a few padding bytes.
    #[test]
    fn header_must_describe_the_payload() {
        let (buf, n) = sample(b"");
        let c = parse(&buf[..n]).unwrap();
        let payload = c.payload;
        let mut out = [0u8; 512];
        for dims in [
            Dims { kernel_size: 2, ..SAMPLE_DIMS },
            Dims { vocab: 5, ..SAMPLE_DIMS },
            Dims { d_head: 1, ..SAMPLE_DIMS },
            Dims { kernel_size: 4, ..SAMPLE_DIMS },
        ] {
            let info = Info { dims, ..sample_info() };
            let m = write(&mut out, &info, b"", payload).unwrap();
            assert_eq!(parse(&out[..m]).unwrap_err(), ContainerError::Mismatch, "{dims:?}");
        }
        // A classifier payload with 5 classes under other class counts.
        let cl = Info { kind: Kind::Classifier, n_classes: 5, ..sample_info() };
        let len = layout_len(&cl).unwrap() as usize;
        let mut p = [0u8; 256];
        p[..9].copy_from_slice(b"ATOMECL02");
        p[9..13].copy_from_slice(&5i32.to_le_bytes());
        let m = write(&mut out, &cl, b"", &p[..len]).unwrap();
        assert!(parse(&out[..m]).is_ok());
        for nc in [4, 16, 99, u32::MAX as usize] {
            let m = write(&mut out, &Info { n_classes: nc, ..cl }, b"", &p[..len]).unwrap();
            assert_eq!(parse(&out[..m]).unwrap_err(), ContainerError::Mismatch, "n_classes {nc}");
        }
    }

    #[test]
    fn round_trip() {
        let (buf, n) = sample(b"name=x");
        let len = layout_len(&sample_info()).unwrap() as usize;
        assert_eq!(n, HEADER_LEN + 6 + len);
        let c = parse(&buf[..n]).unwrap();
        assert_eq!(c.metadata, b"name=x");
        assert_eq!(c.payload.len(), len);
        assert_eq!(c.info.dims.d_model, 4);
        assert_eq!(c.info.max_seq, 32);
        assert_eq!(c.info.packing, Packing::Base3);
        // Up to 15 bytes of padding, as for bare blobs.
        assert!(parse(&buf[..n + 15]).is_ok());
        assert_eq!(parse(&buf[..n + 16]).unwrap_err(), ContainerError::Trailing);
        let mut small = [0u8; 60];
        assert!(write(&mut small, &c.info, b"", c.payload).is_none());
    }

    #[test]
    fn every_flip_and_cut_is_caught() {
        let (buf, n) = sample(b"meta");
        for bit in 0..n * 8 {
            let mut b = buf;
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(parse(&b[..n]).is_err(), "bit {bit}");
        }
        for len in 0..n {
            assert!(parse(&buf[..len]).is_err(), "length {len}");
        }
    }
}
