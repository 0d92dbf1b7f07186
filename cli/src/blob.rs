//! Blob layouts (SPEC section 2), configuration search, weight statistics and
//! lossless conversion between packings.
use atome::format::{self, Dims, Packing, Tensor, P3_WEIGHTS};

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
        if let Some(p) = format::classifier_packing(blob) {
            let nb = blob.get(9..13).ok_or("classifier blob too short for n_classes")?;
            let n = i32::from_le_bytes([nb[0], nb[1], nb[2], nb[3]]);
            if n < 1 {
                return Err(format!("classifier n_classes = {n} (must be >= 1)"));
            }
            return Ok(Format { kind: Kind::Classifier(n as usize), packing: p });
        }
        if let Some(p) = format::lm_packing(blob) {
            return Ok(Format { kind: Kind::Lm, packing: p });
        }
        let shown: String = blob.iter().take(9).map(|&b| if b.is_ascii_graphic() { b as char } else { '.' }).collect();
        Err(format!("unknown magic {shown:?} (expected ATOME01, ATOME02, ATOMEP3, ATOMECL01 or ATOMECL02)"))
    }

    /// The magic string.
    pub fn magic(&self) -> &'static str {
        magic(self.kind, self.packing).unwrap_or("?")
    }
}

/// Magic of a kind and packing (None: no such format, e.g. a P3 classifier).
pub fn magic(kind: Kind, p: Packing) -> Option<&'static str> {
    match (kind, p) {
        (Kind::Lm, Packing::Trit2) => Some("ATOME01"),
        (Kind::Lm, Packing::Base3) => Some("ATOME02"),
        (Kind::Lm, Packing::P3) => Some("ATOMEP3"),
        (Kind::Classifier(_), Packing::Trit2) => Some("ATOMECL01"),
        (Kind::Classifier(_), Packing::Base3) => Some("ATOMECL02"),
        (Kind::Classifier(_), Packing::P3) => None,
    }
}

/// One piece of a blob, in order.
#[derive(Clone, Debug)]
pub enum Seg {
    /// Magic, n_classes: copied verbatim.
    Header(&'static str, usize),
    /// Float array (norm, SSM).
    Floats(String, usize),
    /// Packed tensor (scale + payload).
    Tensor(String, usize, usize),
}

/// The layout of a blob for a configuration.
pub fn layout(kind: Kind, dims: &Dims) -> Vec<Seg> {
    let (v, d, dh, k) = (dims.vocab, dims.d_model, dims.d_head, dims.kernel_size);
    let mut s = Vec::new();
    match kind {
        Kind::Lm => s.push(Seg::Header("magic", 7)),
        Kind::Classifier(_) => {
            s.push(Seg::Header("magic", 9));
            s.push(Seg::Header("n_classes", 4));
        }
    }
    s.push(Seg::Tensor("embed".into(), v, d));
    for l in 0..dims.n_layers {
        s.push(Seg::Floats(format!("block{l}.norm"), 2 * d));
        s.push(Seg::Tensor(format!("block{l}.conv"), d, k));
        s.push(Seg::Floats(format!("block{l}.ssm"), 3 * d));
        s.push(Seg::Tensor(format!("block{l}.Wq"), dh, d));
        s.push(Seg::Tensor(format!("block{l}.Wk"), dh, d));
        s.push(Seg::Tensor(format!("block{l}.Wv"), d, d));
        s.push(Seg::Tensor(format!("block{l}.router"), 3, d));
    }
    s.push(Seg::Floats("final_norm".into(), 2 * d));
    s.push(Seg::Tensor("unembed".into(), v, d));
    if let Kind::Classifier(n) = kind {
        s.push(Seg::Tensor("head".into(), n, d));
    }
    s
}

/// Bytes of a segment.
pub fn seg_bytes(s: &Seg, p: Packing) -> usize {
    match s {
        Seg::Header(_, n) => *n,
        Seg::Floats(_, n) => 4 * n,
        Seg::Tensor(_, r, c) => format::tensor_bytes(p, r * c),
    }
}

/// Exact size of a blob (no trailing bytes).
pub fn blob_bytes(kind: Kind, dims: &Dims, p: Packing) -> usize {
    let lm = format::model_bytes(dims, p);
    match kind {
        Kind::Lm => lm,
        Kind::Classifier(n) => lm + 2 + 4 + format::tensor_bytes(p, n * dims.d_model),
    }
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
    let (head_bytes, nclass) = match kind {
        Kind::Lm => (7, 0),
        Kind::Classifier(n) => (13, n),
    };
    for &v in VOCABS.iter() {
        for d in 1..=MAX_D {
            let fixed = head_bytes
                + 2 * format::tensor_bytes(p, v * d)
                + 8 * d
                + if nclass > 0 { format::tensor_bytes(p, nclass * d) } else { 0 };
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

fn f32_at(b: &[u8], off: usize) -> f32 {
    f32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// Counts weights, unused codes and non-zero padding of one payload.
/// `full` false: padding only (cheap), no weight or unused-code counts.
fn tensor_stats(name: &str, rows: usize, cols: usize, scale: f32, data: &[u8], p: Packing, full: bool) -> TensorStats {
    let n = rows * cols;
    let t = Tensor { data, scale, rows, cols, packing: p };
    let mut st = TensorStats { name: name.into(), rows, cols, scale, ..Default::default() };
    let nf = if full { n } else { 0 };
    for i in 0..nf {
        st.counts[count_index(t.weight(i))] += 1;
    }
    match p {
        Packing::Trit2 => {
            for i in 0..nf {
                if (data[i >> 2] >> (2 * (i & 3))) & 3 == 2 {
                    st.unused_codes += 1;
                }
            }
            for i in n..4 * data.len() {
                if (data[i >> 2] >> (2 * (i & 3))) & 3 != 0 {
                    st.dirty_padding += 1;
                }
            }
        }
        Packing::Base3 => {
            if full {
                st.unused_codes = data.iter().filter(|&&b| b > 242).count();
            }
            for i in n..5 * data.len() {
                let mut b = data[i / 5];
                for _ in 0..i % 5 {
                    b /= 3;
                }
                if b % 3 != 1 {
                    st.dirty_padding += 1;
                }
            }
        }
        Packing::P3 => {
            let code = |i: usize| {
                let g = 3 * (i >> 3);
                let w = data[g] as u32 | (data[g + 1] as u32) << 8 | (data[g + 2] as u32) << 16;
                (w >> (3 * (i & 7))) & 7
            };
            for i in 0..nf {
                if code(i) == 7 {
                    st.unused_codes += 1;
                }
            }
            for i in n..8 * (data.len() / 3) {
                if code(i) != 0 {
                    st.dirty_padding += 1;
                }
            }
        }
    }
    st
}

/// Walks the blob with a configuration (None when it does not fit).
pub fn analyze(blob: &[u8], f: &Format, dims: &Dims) -> Option<Analysis> {
    analyze_with(blob, f, dims, true)
}

/// As analyze; `full` false skips the weight counts (scales, floats and
/// padding only).
pub fn analyze_with(blob: &[u8], f: &Format, dims: &Dims, full: bool) -> Option<Analysis> {
    let segs = layout(f.kind, dims);
    let total: usize = segs.iter().map(|s| seg_bytes(s, f.packing)).sum();
    if blob.len() < total {
        return None;
    }
    let mut a = Analysis { tensors: Vec::new(), floats: Vec::new(), trailing: blob.len() - total };
    let mut off = 0;
    for s in &segs {
        let len = seg_bytes(s, f.packing);
        let b = &blob[off..off + len];
        match s {
            Seg::Header(..) => {}
            Seg::Floats(name, n) => {
                let mut fs = FloatStats { name: name.clone(), n: *n, odd: 0, min: f32::INFINITY, max: f32::NEG_INFINITY };
                for i in 0..*n {
                    let x = f32_at(b, 4 * i);
                    if !x.is_finite() || x.abs() > 1e6 || (x != 0.0 && x.abs() < 1e-30) {
                        fs.odd += 1;
                    }
                    if x.is_finite() {
                        fs.min = fs.min.min(x);
                        fs.max = fs.max.max(x);
                    }
                }
                a.floats.push(fs);
            }
            Seg::Tensor(name, r, c) => {
                a.tensors.push(tensor_stats(name, *r, *c, f32_at(b, 0), &b[4..], f.packing, full));
            }
        }
        off += len;
    }
    Some(a)
}

/// Packs weights (each in the target's range) into a payload.
pub fn encode(w: &[i8], p: Packing) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; p.payload_len(w.len())];
    match p {
        Packing::Trit2 => {
            for (i, &x) in w.iter().enumerate() {
                let code = match x {
                    0 => 0u8,
                    1 => 1,
                    -1 => 3,
                    _ => return Err(format!("weight {x} is not ternary")),
                };
                out[i >> 2] |= code << (2 * (i & 3));
            }
        }
        Packing::Base3 => {
            for (m, o) in out.iter_mut().enumerate() {
                let mut b = 0u8;
                for k in (0..5).rev() {
                    let x = w.get(5 * m + k).copied().unwrap_or(0);
                    if !(-1..=1).contains(&x) {
                        return Err(format!("weight {x} is not ternary"));
                    }
                    b = b * 3 + (x + 1) as u8;
                }
                *o = b;
            }
        }
        Packing::P3 => {
            for (i, &x) in w.iter().enumerate() {
                let code = P3_WEIGHTS
                    .iter()
                    .take(7)
                    .position(|&v| v == x)
                    .ok_or_else(|| format!("weight {x} has no ATOMEP3 code"))? as u32;
                let g = 3 * (i >> 3);
                let word = code << (3 * (i & 7));
                out[g] |= word as u8;
                out[g + 1] |= (word >> 8) as u8;
                out[g + 2] |= (word >> 16) as u8;
            }
        }
    }
    Ok(out)
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
    let out_magic = magic(f.kind, to).ok_or("ATOMEP3 has no classifier format")?;
    let segs = layout(f.kind, dims);
    let total: usize = segs.iter().map(|s| seg_bytes(s, f.packing)).sum();
    if blob.len() < total {
        return Err(format!("blob is {} bytes, configuration {} needs {}", blob.len(), dims_str(dims), total));
    }
    let mut rep = ConvertReport { trailing: blob.len() - total, ..Default::default() };
    let mut out = Vec::with_capacity(blob_bytes(f.kind, dims, to) + rep.trailing);
    let mut off = 0;
    for s in &segs {
        let len = seg_bytes(s, f.packing);
        let b = &blob[off..off + len];
        match s {
            Seg::Header("magic", _) => out.extend_from_slice(out_magic.as_bytes()),
            Seg::Header(..) | Seg::Floats(..) => out.extend_from_slice(b),
            Seg::Tensor(name, r, c) => {
                let n = r * c;
                let st = tensor_stats(name, *r, *c, f32_at(b, 0), &b[4..], f.packing, true);
                match f.packing {
                    Packing::P3 => rep.code111 += st.unused_codes,
                    Packing::Trit2 => rep.code10 += st.unused_codes,
                    Packing::Base3 if st.unused_codes > 0 => {
                        return Err(format!("{name}: {} ATOME02 bytes above 242 (invalid)", st.unused_codes))
                    }
                    Packing::Base3 => {}
                }
                rep.dirty_padding += st.dirty_padding;
                let t = Tensor { data: &b[4..], scale: 0.0, rows: *r, cols: *c, packing: f.packing };
                let w: Vec<i8> = (0..n).map(|i| t.weight(i)).collect();
                out.extend_from_slice(&b[..4]); // the scale's bytes, as they are
                out.extend_from_slice(&encode(&w, to).map_err(|e| format!("{name}: {e}"))?);
                rep.tensors += 1;
                rep.weights += n;
            }
        }
        off += len;
    }
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
    cmp(&ma.embed, &mb.embed, "embed")?;
    for l in 0..dims.n_layers {
        let (x, y) = (ma.block(l), mb.block(l));
        cmp(&x.conv, &y.conv, "conv")?;
        cmp(&x.wq, &y.wq, "Wq")?;
        cmp(&x.wk, &y.wk, "Wk")?;
        cmp(&x.wv, &y.wv, "Wv")?;
        cmp(&x.router, &y.router, "router")?;
        let fl = [
            (x.norm.gamma, y.norm.gamma),
            (x.norm.beta, y.norm.beta),
            (x.ssm.a, y.ssm.a),
            (x.ssm.b, y.ssm.b),
            (x.ssm.c_out, y.ssm.c_out),
        ];
        if fl.iter().any(|(p, q)| p.bytes() != q.bytes()) {
            return Err(format!("block {l}: floats differ"));
        }
    }
    if ma.final_norm.gamma.bytes() != mb.final_norm.gamma.bytes() || ma.final_norm.beta.bytes() != mb.final_norm.beta.bytes() {
        return Err("final norm differs".into());
    }
    cmp(&ma.unembed, &mb.unembed, "unembed")?;
    if let (Some(x), Some(y)) = (ha, hb) {
        cmp(&x, &y, "head")?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_library_sizes() {
        for p in [Packing::Trit2, Packing::Base3, Packing::P3] {
            for dims in [
                Dims { vocab: 256, d_model: 256, n_layers: 8, d_head: 64, kernel_size: 5, top_k: 4 },
                Dims { vocab: 40, d_model: 22, n_layers: 3, d_head: 6, kernel_size: 3, top_k: 2 },
                Dims { vocab: 32, d_model: 13, n_layers: 1, d_head: 3, kernel_size: 7, top_k: 1 },
            ] {
                let l: usize = layout(Kind::Lm, &dims).iter().map(|s| seg_bytes(s, p)).sum();
                assert_eq!(l, format::model_bytes(&dims, p));
                assert_eq!(l, blob_bytes(Kind::Lm, &dims, p));
                let c: usize = layout(Kind::Classifier(5), &dims).iter().map(|s| seg_bytes(s, p)).sum();
                assert_eq!(c, blob_bytes(Kind::Classifier(5), &dims, p));
            }
        }
        let m944 = Dims { vocab: 256, d_model: 256, n_layers: 8, d_head: 64, kernel_size: 5, top_k: 4 };
        assert_eq!(format::model_bytes(&m944, Packing::Trit2), 276_655);
        assert_eq!(format::model_bytes(&m944, Packing::Base3), 229_975);
    }

    #[test]
    fn encoders_round_trip() {
        let w: Vec<i8> = (0..1003).map(|i| ((i * 7 + i / 3) % 3) as i8 - 1).collect();
        for p in [Packing::Trit2, Packing::Base3, Packing::P3] {
            let data = encode(&w, p).unwrap();
            let t = Tensor { data: &data, scale: 1.0, rows: 1, cols: w.len(), packing: p };
            for (i, &x) in w.iter().enumerate() {
                assert_eq!(t.weight(i), x, "{p:?} {i}");
            }
            let st = tensor_stats("t", 1, w.len(), 1.0, &data, p, true);
            assert_eq!(st.dirty_padding + st.unused_codes, 0);
        }
        let w9: Vec<i8> = (0..77).map(|i| [0i8, 1, -1, 3, -3, 9, -9][i % 7]).collect();
        let data = encode(&w9, Packing::P3).unwrap();
        let t = Tensor { data: &data, scale: 1.0, rows: 7, cols: 11, packing: Packing::P3 };
        assert!((0..77).all(|i| t.weight(i) == w9[i]));
        assert!(encode(&w9, Packing::Base3).is_err());
    }
}
