//! Configuration search, weight statistics and lossless conversion between
//! packings, on the library's description of the formats (atome::format).
// The library's block and model accessors return references here (its
// whole-view builds) and values in its q15 size-first build: `&m.embed()`
// reads the same in both.
#![allow(clippy::needless_borrow)]
use atome::format::{self, Dims, Format as BlobFormat, Packing, Tensor};

/// Vocabulary sizes tried when inferring a configuration.
pub const VOCABS: [usize; 6] = [256, 32, 40, 64, 128, 512];
/// Search limits.
pub const MAX_D: usize = 1024;
/// Layers tried.
pub const MAX_L: usize = 32;
/// Conv taps tried.
pub const MAX_K: usize = 9;
/// Attention top-k assumed when not given (it does not change the size).
pub const DEFAULT_TOPK: usize = 4;

/// Language model or classifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// ATOME01 / ATOME02 / ATOMEP3.
    Lm,
    /// ATOMECL01 / ATOMECL02, with its class count.
    Classifier(usize),
}

/// What the magic says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// Kind.
    pub kind: Kind,
    /// Packing of every tensor.
    pub packing: Packing,
}

impl Format {
    /// Reads the magic (and a classifier's n_classes).
    pub fn detect(blob: &[u8]) -> Result<Format, String> {
        let Some(f) = BlobFormat::detect(blob) else {
            let shown: String = blob.iter().take(9).map(|&b| if b.is_ascii_graphic() { b as char } else { '.' }).collect();
            let names: Vec<&str> = BlobFormat::ALL.iter().map(|f| f.name()).collect();
            return Err(format!("unknown magic {shown:?} (expected {})", names.join(", ")));
        };
        let kind = match f.n_classes(blob) {
            None if f.is_classifier() => return Err("classifier blob too short for n_classes".into()),
            None => Kind::Lm,
            Some(n) if n < 1 => return Err(format!("classifier n_classes = {n} (must be >= 1)")),
            Some(n) => Kind::Classifier(n as usize),
        };
        Ok(Format { kind, packing: f.packing() })
    }

    /// The library's format (None: no such format, e.g. a P3 classifier).
    pub fn lib(&self) -> Option<BlobFormat> {
        BlobFormat::new(matches!(self.kind, Kind::Classifier(_)), self.packing)
    }

    /// The magic string.
    pub fn magic(&self) -> &'static str {
        magic(self.kind, self.packing).unwrap_or("?")
    }
}

/// Class count of a kind (0 for a language model).
fn n_classes(kind: Kind) -> usize {
    match kind {
        Kind::Lm => 0,
        Kind::Classifier(n) => n,
    }
}

/// Magic of a kind and packing (None: no such format, e.g. a P3 classifier).
pub fn magic(kind: Kind, p: Packing) -> Option<&'static str> {
    Format { kind, packing: p }.lib().map(BlobFormat::name)
}

/// Exact size of a blob (no trailing bytes; 0 when there is no such format).
pub fn blob_bytes(kind: Kind, dims: &Dims, p: Packing) -> usize {
    (Format { kind, packing: p }).lib().map_or(0, |f| format::blob_bytes(dims, f, n_classes(kind)))
}

/// A configuration consistent with a blob's size.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    /// Dimensions (top_k = DEFAULT_TOPK).
    pub dims: Dims,
    /// Bytes after the end of the layout (0..=15).
    pub trailing: usize,
    /// Things a real blob would not hold (bad floats, unused codes, padding).
    pub anomalies: usize,
}

/// Every (V, D, L, DH, K) in the search space whose layout is `len - t`
/// bytes long for some t in 0..=15 (the trailing bytes the library accepts),
/// with that t.
pub fn size_matches(kind: Kind, p: Packing, len: usize) -> Vec<(Dims, usize)> {
    let mut out = Vec::new();
    let Some(f) = (Format { kind, packing: p }).lib() else { return out };
    let nclass = n_classes(kind);
    for &v in VOCABS.iter() {
        for d in 1..=MAX_D {
            // Everything but the blocks: a blob with no layer.
            let outside = Dims { vocab: v, d_model: d, n_layers: 0, d_head: 1, kernel_size: 1, top_k: DEFAULT_TOPK };
            let fixed = format::blob_bytes(&outside, f, nclass);
            if fixed >= len {
                break; // grows with D
            }
            let rem = len - fixed;
            for k in 1..=MAX_K {
                for dh in 1..=d {
                    let dims = Dims { vocab: v, d_model: d, n_layers: 1, d_head: dh, kernel_size: k, top_k: DEFAULT_TOPK };
                    let blk = format::block_bytes(&dims, p);
                    if blk > rem {
                        break; // grows with DH
                    }
                    // rem - t = L * blk: t = rem % blk, then + blk, ... while t <= 15.
                    let mut t = rem % blk;
                    while t <= format::MAX_TRAILING {
                        let l = (rem - t) / blk;
                        if l == 0 {
                            break;
                        }
                        if l <= MAX_L {
                            out.push((Dims { n_layers: l, ..dims }, t));
                        }
                        t += blk;
                    }
                }
            }
        }
    }
    out
}

/// Candidates for a blob: every size match (up to 15 trailing bytes), each
/// scored for plausibility; most plausible first, exact sizes first.
pub fn candidates(blob: &[u8], f: &Format) -> Vec<Candidate> {
    let mut c: Vec<Candidate> = size_matches(f.kind, f.packing, blob.len())
        .into_iter()
        .map(|(dims, trailing)| Candidate { dims, trailing, anomalies: 0 })
        .collect();
    // Cheap checks first (scales, floats, padding); the weight walk (unused
    // codes) only for the candidates those leave clean.
    for cand in c.iter_mut() {
        cand.anomalies = analyze_with(blob, f, &cand.dims, false).map(|a| a.anomalies()).unwrap_or(usize::MAX);
        if cand.anomalies == 0 {
            cand.anomalies = analyze(blob, f, &cand.dims).map(|a| a.anomalies()).unwrap_or(usize::MAX);
        }
    }
    c.sort_by_key(|c| (c.anomalies, c.trailing));
    c
}

/// Picks the configuration: the given one, or the only plausible candidate.
pub fn resolve(blob: &[u8], f: &Format, given: Option<Dims>) -> Result<(Dims, String), String> {
    if let Some(d) = given {
        let need = blob_bytes(f.kind, &d, f.packing);
        if blob.len() < need || blob.len() - need > format::MAX_TRAILING {
            return Err(format!(
                "--config {} needs {} bytes ({}), the blob has {}",
                dims_str(&d),
                need,
                f.magic(),
                blob.len()
            ));
        }
        return Ok((d, "given".into()));
    }
    let c = candidates(blob, f);
    let exact: Vec<&Candidate> = c.iter().filter(|c| c.anomalies == 0 && c.trailing == 0).collect();
    let padded: Vec<&Candidate> = c.iter().filter(|c| c.anomalies == 0 && c.trailing > 0).collect();
    let n = c.len();
    if exact.len() == 1 {
        let how = if n == 1 {
            "inferred: the only configuration of this size".to_string()
        } else {
            format!("inferred: the only plausible one of {n} configurations of this size")
        };
        return Ok((exact[0].dims, how));
    }
    if exact.is_empty() && padded.len() == 1 {
        return Ok((
            padded[0].dims,
            format!(
                "inferred: the only plausible one of {n} configurations, with {} trailing bytes",
                padded[0].trailing
            ),
        ));
    }
    if exact.is_empty() && padded.is_empty() && n == 1 {
        return Ok((c[0].dims, "inferred: the only configuration of this size (its values look odd)".into()));
    }
    if n == 0 {
        return Err(format!(
            "no configuration (V in {VOCABS:?}, D <= {MAX_D}, L <= {MAX_L}, DH <= D, K <= {MAX_K}) gives {} bytes (up to 15 trailing); pass --config V,D,L,DH,K",
            blob.len()
        ));
    }
    let np = exact.len() + padded.len();
    let list: Vec<String> = c.iter().take(8).map(|c| dims_str(&c.dims)).collect();
    Err(format!(
        "{n} configurations fit this size ({np} plausible), e.g. {}; pass --config V,D,L,DH,K",
        list.join(" | ")
    ))
}

/// "V,D,L,DH,K,TOPK".
pub fn dims_str(d: &Dims) -> String {
    format!("{},{},{},{},{},{}", d.vocab, d.d_model, d.n_layers, d.d_head, d.kernel_size, d.top_k)
}

/// Readable dims.
pub fn dims_long(d: &Dims) -> String {
    format!("V={} D={} L={} DH={} K={} TOPK={}", d.vocab, d.d_model, d.n_layers, d.d_head, d.kernel_size, d.top_k)
}

/// Parses "V,D,L,DH,K[,TOPK]".
pub fn parse_dims(s: &str) -> Result<Dims, String> {
    let v: Vec<usize> = s
        .split(',')
        .map(|x| x.trim().parse::<usize>().map_err(|_| format!("--config {s:?}: {x:?} is not a number")))
        .collect::<Result<_, _>>()?;
    if !(v.len() == 5 || v.len() == 6) || v.contains(&0) {
        return Err(format!("--config {s:?}: expected V,D,L,DH,K or V,D,L,DH,K,TOPK, all >= 1"));
    }
    Ok(Dims {
        vocab: v[0],
        d_model: v[1],
        n_layers: v[2],
        d_head: v[3],
        kernel_size: v[4],
        top_k: v.get(5).copied().unwrap_or(DEFAULT_TOPK),
    })
}

/// Statistics of one tensor.
#[derive(Clone, Debug, Default)]
pub struct TensorStats {
    /// Name.
    pub name: String,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Scale.
    pub scale: f32,
    /// Counts of weights -9, -3, -1, 0, +1, +3, +9.
    pub counts: [usize; 7],
    /// Codes no encoder writes: ATOME01 code 10 and P3 code 111 (read as 0),
    /// ATOME02 bytes above 242 (refused at load).
    pub unused_codes: usize,
    /// Padding trits/bits after the last weight that are not the zero code.
    pub dirty_padding: usize,
}

impl TensorStats {
    /// Weights.
    pub fn n(&self) -> usize {
        self.rows * self.cols
    }
    /// Non-zero weights.
    pub fn nonzero(&self) -> usize {
        self.n() - self.counts[3]
    }
}

/// Index into TensorStats::counts.
pub fn count_index(w: i8) -> usize {
    match w {
        -9 => 0,
        -3 => 1,
        -1 => 2,
        0 => 3,
        1 => 4,
        3 => 5,
        _ => 6,
    }
}

/// Statistics of a float array.
#[derive(Clone, Debug)]
pub struct FloatStats {
    /// Name.
    pub name: String,
    /// Values.
    pub n: usize,
    /// Values that are not finite, huge (> 1e6) or tiny non-zero (< 1e-30).
    pub odd: usize,
    /// Smallest finite value.
    pub min: f32,
    /// Largest finite value.
    pub max: f32,
}

/// A blob walked with a configuration.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Every tensor.
    pub tensors: Vec<TensorStats>,
    /// Every float array.
    pub floats: Vec<FloatStats>,
    /// Bytes after the layout.
    pub trailing: usize,
}

impl Analysis {
    /// Scales that are not finite positive in [1e-12, 1e6], odd floats,
    /// unused codes and dirty padding: zero for any blob a trainer wrote.
    pub fn anomalies(&self) -> usize {
        let bad_scale = self
            .tensors
            .iter()
            .filter(|t| !(t.scale.is_finite() && t.scale.abs() >= 1e-12 && t.scale.abs() <= 1e6))
            .count();
        bad_scale
            + self.floats.iter().map(|f| f.odd).sum::<usize>()
            + self.tensors.iter().map(|t| t.unused_codes + t.dirty_padding).sum::<usize>()
    }
}

/// Counts weights, unused codes and non-zero padding of one tensor.
/// `full` false: padding only (cheap), no weight or unused-code counts.
fn tensor_stats(name: String, t: &Tensor, full: bool) -> TensorStats {
    let mut st = TensorStats { name, rows: t.rows, cols: t.cols, scale: t.scale, ..Default::default() };
    if full {
        let mut buf = [0i8; 256];
        let n = t.rows * t.cols;
        let mut at = 0;
        while at < n {
            let len = (n - at).min(buf.len());
            t.decode(at, &mut buf[..len]);
            for &w in &buf[..len] {
                st.counts[count_index(w)] += 1;
            }
            at += len;
        }
        st.unused_codes = t.unused_codes();
    }
    st.dirty_padding = t.dirty_padding();
    st
}

/// Walks the blob with a configuration (None when it does not fit).
pub fn analyze(blob: &[u8], f: &Format, dims: &Dims) -> Option<Analysis> {
    analyze_with(blob, f, dims, true)
}

/// As analyze; `full` false skips the weight counts (scales, floats and
/// padding only).
pub fn analyze_with(blob: &[u8], f: &Format, dims: &Dims, full: bool) -> Option<Analysis> {
    let total = blob_bytes(f.kind, dims, f.packing);
    if total == 0 || blob.len() < total {
        return None;
    }
    let mut a = Analysis { tensors: Vec::new(), floats: Vec::new(), trailing: blob.len() - total };
    for part in format::parts(dims, f.lib()?, n_classes(f.kind)) {
        if let Some(t) = part.tensor(blob) {
            a.tensors.push(tensor_stats(part.to_string(), &t, full));
            continue;
        }
        let x = part.floats(blob)?;
        let mut fs = FloatStats { name: part.to_string(), n: x.len(), odd: 0, min: f32::INFINITY, max: f32::NEG_INFINITY };
        for i in 0..x.len() {
            let v = x.get(i);
            if !v.is_finite() || v.abs() > 1e6 || (v != 0.0 && v.abs() < 1e-30) {
                fs.odd += 1;
            }
            if v.is_finite() {
                fs.min = fs.min.min(v);
                fs.max = fs.max.max(v);
            }
        }
        a.floats.push(fs);
    }
    Some(a)
}

/// What a conversion changed or could not keep.
#[derive(Clone, Debug, Default)]
pub struct ConvertReport {
    /// Tensors converted.
    pub tensors: usize,
    /// Weights converted.
    pub weights: usize,
    /// ATOME01 code 10 (read as 0) written as 0.
    pub code10: usize,
    /// ATOMEP3 code 111 (read as 0) written as 0.
    pub code111: usize,
    /// Padding after a tensor's last weight that was not the zero code (dropped).
    pub dirty_padding: usize,
    /// Bytes after the layout, copied as they are.
    pub trailing: usize,
}

/// Converts a blob to another packing with the same weights, scales and floats.
pub fn convert(blob: &[u8], f: &Format, dims: &Dims, to: Packing) -> Result<(Vec<u8>, ConvertReport), String> {
    let total = blob_bytes(f.kind, dims, f.packing);
    if blob.len() < total {
        return Err(format!("blob is {} bytes, configuration {} needs {}", blob.len(), dims_str(dims), total));
    }
    let mut rep = ConvertReport { trailing: blob.len() - total, ..Default::default() };
    let from = f.lib().ok_or("no such format")?;
    for part in format::parts(dims, from, n_classes(f.kind)) {
        let Some(t) = part.tensor(blob) else { continue };
        let unused = t.unused_codes();
        match f.packing {
            Packing::P3 => rep.code111 += unused,
            Packing::Trit2 => rep.code10 += unused,
            Packing::Base3 if unused > 0 => return Err(format!("{part}: {unused} ATOME02 bytes above {} (invalid)", format::BASE3_MAX_BYTE)),
            Packing::Base3 => {}
        }
        rep.dirty_padding += t.dirty_padding();
        rep.tensors += 1;
        rep.weights += t.rows * t.cols;
    }
    let mut out = vec![0u8; blob_bytes(f.kind, dims, to)];
    if out.is_empty() {
        return Err(format!("{} has no classifier format", BlobFormat::AtomeP3.name()));
    }
    let len = format::repack(blob, dims, to, &mut out).map_err(|e| match e {
        format::WriteError::Weight { field, layer, index, value } => {
            let part = format::parts(dims, from, n_classes(f.kind)).find(|p| p.field == field && p.layer == layer);
            let name = part.map_or_else(|| field.name().to_string(), |p| p.to_string());
            format!("{name}: weight {index} is {value}, which {} cannot hold", magic(f.kind, to).unwrap_or("?"))
        }
        e => format!("repack: {e:?}"),
    })?;
    out.truncate(len);
    out.extend_from_slice(&blob[total..]);
    Ok((out, rep))
}

/// Checks that two blobs hold the same weights, scales and floats for `dims`
/// (parsed by the library); the number of weights compared.
pub fn same_weights(a: &[u8], b: &[u8], kind: Kind, dims: &Dims) -> Result<usize, String> {
    let (ma, mb, ha, hb) = match kind {
        Kind::Lm => {
            let ma = format::parse_model(a, dims).map_err(|e| format!("first blob: {e:?}"))?;
            let mb = format::parse_model(b, dims).map_err(|e| format!("second blob: {e:?}"))?;
            (ma, mb, None, None)
        }
        Kind::Classifier(_) => {
            let ca = format::parse_classifier(a, dims, 65535).map_err(|e| format!("first blob: {e:?}"))?;
            let cb = format::parse_classifier(b, dims, 65535).map_err(|e| format!("second blob: {e:?}"))?;
            (ca.base, cb.base, Some(ca.head), Some(cb.head))
        }
    };
    let mut n = 0;
    let mut cmp = |x: &Tensor, y: &Tensor, what: &str| -> Result<(), String> {
        if x.scale.to_bits() != y.scale.to_bits() || x.rows != y.rows || x.cols != y.cols {
            return Err(format!("{what}: scale or shape differs"));
        }
        for i in 0..x.rows * x.cols {
            if x.weight(i) != y.weight(i) {
                return Err(format!("{what}: weight {i} differs"));
            }
        }
        n += x.rows * x.cols;
        Ok(())
    };
    cmp(&ma.embed(), &mb.embed(), "embed")?;
    for l in 0..dims.n_layers {
        let (x, y) = (ma.block(l), mb.block(l));
        cmp(&x.conv(), &y.conv(), "conv")?;
        cmp(&x.wq(), &y.wq(), "Wq")?;
        cmp(&x.wk(), &y.wk(), "Wk")?;
        cmp(&x.wv(), &y.wv(), "Wv")?;
        cmp(&x.router(), &y.router(), "router")?;
        let fl = [
            (x.norm().gamma, y.norm().gamma),
            (x.norm().beta, y.norm().beta),
            (x.ssm().a, y.ssm().a),
            (x.ssm().b, y.ssm().b),
            (x.ssm().c_out, y.ssm().c_out),
        ];
        if fl.iter().any(|(p, q)| p.bytes() != q.bytes()) {
            return Err(format!("block {l}: floats differ"));
        }
    }
    if ma.final_norm().gamma.bytes() != mb.final_norm().gamma.bytes() || ma.final_norm().beta.bytes() != mb.final_norm().beta.bytes() {
        return Err("final norm differs".into());
    }
    cmp(&ma.unembed(), &mb.unembed(), "unembed")?;
    if let (Some(x), Some(y)) = (ha, hb) {
        cmp(&x, &y, "head")?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests;
