//! `atome convert`: repack a blob, wrap it in an ATOMEF container or unwrap one.
use crate::args::ConvertArgs;
use crate::blob::{self, Format, Kind};
use crate::clock::secs;
use crate::container_io::{config_or, read_model};
use crate::sep;
use atome::container;
use atome::format::Packing;
use std::time::Instant;

/// The largest dimension or window the library opens (the runtime API's
/// bound, docs/API.md).
const DIM_MAX: usize = 65535;

/// True when `out` names the same file as `inp` (the same inode, through
/// any path or hard link).
fn same_file(inp: &std::path::Path, out: &std::path::Path) -> bool {
    match (std::fs::metadata(inp), std::fs::metadata(out)) {
        #[cfg(unix)]
        (Ok(a), Ok(b)) => {
            use std::os::unix::fs::MetadataExt;
            a.dev() == b.dev() && a.ino() == b.ino()
        }
        #[cfg(not(unix))]
        (Ok(_), Ok(_)) => std::fs::canonicalize(inp).ok() == std::fs::canonicalize(out).ok(),
        _ => false,
    }
}

pub fn cmd_convert(a: &ConvertArgs) -> Result<(), String> {
    let out_path = a.output.display().to_string();
    if same_file(&a.input, &a.output) {
        return Err(format!("{out_path} is the input file: write the output to another path"));
    }
    let (inp, b, boxed) = read_model(&a.input)?;
    let f = Format::detect(&b)?;
    let to = match a.to {
        Some(t) => t.packing(),
        // Wrapping or unwrapping alone keeps the packing.
        None if a.container || a.bare => f.packing,
        None => match f.packing {
            Packing::Trit2 => Packing::Base3,
            Packing::Base3 | Packing::P3 => Packing::Trit2,
        },
    };
    let out_magic = blob::magic(f.kind, to).ok_or("ATOMEP3 has no classifier format")?;
    let (mut dims, how) = blob::resolve(&b, &f, config_or(a.config.config, &boxed))?;
    dims.top_k = dims.top_k.max(1);
    // Nothing the library cannot open is written.
    let fields = [("V", dims.vocab), ("D", dims.d_model), ("L", dims.n_layers), ("DH", dims.d_head), ("K", dims.kernel_size), ("TOPK", dims.top_k)];
    if let Some((n, v)) = fields.iter().find(|(_, v)| *v > DIM_MAX) {
        return Err(format!("--config: {n}={v} is above {DIM_MAX}, the largest dimension the library opens"));
    }
    if let Some(s) = a.seq.filter(|&s| s == 0 || s > DIM_MAX) {
        return Err(format!("--seq {s}: the window must be in 1..={DIM_MAX}"));
    }
    let t0 = Instant::now();
    let (out, rep) = if to == f.packing { (b.clone(), blob::ConvertReport::default()) } else { blob::convert(&b, &f, &dims, to)? };
    // Check: the library reads the same weights, scales and floats from both.
    let n = blob::same_weights(&b, &out, f.kind, &dims).map_err(|e| format!("verification failed: {e}"))?;
    // Same packing: nothing was converted, so there is nothing to convert back.
    let back = if to == f.packing { b.clone() } else { blob::convert(&out, &Format { kind: f.kind, packing: to }, &dims, f.packing)?.0 };
    let took = t0.elapsed();
    // A container in, a container out, unless --bare; --container wraps.
    let wrap = a.container || (boxed.is_some() && !a.bare);
    let file = if wrap {
        let info = container::Info {
            kind: if matches!(f.kind, Kind::Lm) { container::Kind::Model } else { container::Kind::Classifier },
            packing: to,
            dims,
            max_seq: a.seq.or(boxed.as_ref().map(|x| x.info.max_seq)).unwrap_or(0),
            n_classes: match f.kind {
                Kind::Lm => 0,
                Kind::Classifier(n) => n,
            },
        };
        if info.max_seq > DIM_MAX {
            return Err(format!("the window S={} is above {DIM_MAX}: give --seq", info.max_seq));
        }
        let meta = a.metadata.clone().or(boxed.as_ref().map(|x| x.metadata.clone())).unwrap_or_default();
        let mut buf = vec![0u8; container::container_len(meta.len(), out.len())];
        container::write(&mut buf, &info, meta.as_bytes(), &out).ok_or("container: a field does not fit 32 bits")?;
        // What the library's reader says of it, before anything is written.
        container::parse(&buf).map_err(|e| format!("container refused by the library's reader ({}): not written", crate::container_io::why(e)))?;
        buf
    } else {
        out.clone()
    };
    std::fs::write(&a.output, &file).map_err(|e| format!("{out_path}: {e}"))?;
    outln!("{inp}: {} {} bytes, config {} ({how})", f.magic(), sep(b.len()), blob::dims_str(&dims));
    if wrap {
        outln!("{out_path}: ATOMEF container, {} bytes (60-byte header, CRC-32 of payload and header)", sep(file.len()));
    }
    if to == f.packing {
        outln!("{out_path}: {out_magic} {} bytes, payload unchanged", sep(out.len()));
    } else {
        outln!(
            "{out_path}: {out_magic} {} bytes ({:+.1}%), {} tensors, {} weights",
            sep(out.len()),
            100.0 * (out.len() as f64 - b.len() as f64) / b.len() as f64,
            rep.tensors,
            sep(rep.weights)
        );
    }
    let notes = rep.code10 > 0 || rep.code111 > 0 || rep.dirty_padding > 0 || rep.trailing > 0;
    if rep.code10 > 0 {
        outln!("note: {} trits had code 10, which ATOME01 reads as 0: written as 0 (not reversible to the same bytes)", rep.code10);
    }
    if rep.code111 > 0 {
        outln!("note: {} codes 111, which ATOMEP3 reads as 0: written as 0", rep.code111);
    }
    if rep.dirty_padding > 0 {
        outln!(
            "note: {} padding positions after tensors' last weights were not the zero code: dropped (readers ignore them)",
            rep.dirty_padding
        );
    }
    if rep.trailing > 0 {
        outln!("note: {} trailing bytes after the blob copied as they are", rep.trailing);
    }
    outln!(
        "verified: the library reads identical weights, scales and floats from both ({} weights); converting back gives {} [{}]",
        sep(n),
        if back == b {
            "the input's exact bytes".to_string()
        } else if notes {
            "different bytes (see notes above)".to_string()
        } else {
            format!("different bytes ({} of {} differ)", back.iter().zip(&b).filter(|(x, y)| x != y).count() + back.len().abs_diff(b.len()), sep(b.len()))
        },
        secs(took)
    );
    Ok(())
}
