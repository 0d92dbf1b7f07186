//! `atome convert`: repack a blob, wrap it in an ATOMEF container or unwrap one.
use crate::args::ConvertArgs;
use crate::blob::{self, Format, Kind};
use crate::clock::secs;
use crate::container_io::{config_or, read_model};
use crate::sep;
use atome::container;
use atome::format::Packing;
use std::time::Instant;

pub fn cmd_convert(a: &ConvertArgs) -> Result<(), String> {
    let (inp, b, boxed) = read_model(&a.input)?;
    let out_path = a.output.display().to_string();
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
    let t0 = Instant::now();
    let (out, rep) = if to == f.packing { (b.clone(), blob::ConvertReport::default()) } else { blob::convert(&b, &f, &dims, to)? };
    // Check: the library reads the same weights, scales and floats from both.
    let n = blob::same_weights(&b, &out, f.kind, &dims).map_err(|e| format!("verification failed: {e}"))?;
    let (back, _) = blob::convert(&out, &Format { kind: f.kind, packing: to }, &dims, f.packing)?;
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
        let meta = a.metadata.clone().or(boxed.as_ref().map(|x| x.metadata.clone())).unwrap_or_default();
        let mut buf = vec![0u8; container::container_len(meta.len(), out.len())];
        container::write(&mut buf, &info, meta.as_bytes(), &out).ok_or("container: a field does not fit 32 bits")?;
        buf
    } else {
        out.clone()
    };
    std::fs::write(&a.output, &file).map_err(|e| format!("{out_path}: {e}"))?;
    println!("{inp}: {} {} bytes, config {} ({how})", f.magic(), sep(b.len()), blob::dims_str(&dims));
    if wrap {
        println!("{out_path}: ATOMEF container, {} bytes (60-byte header, CRC-32 of payload and header)", sep(file.len()));
    }
    if to == f.packing {
        println!("{out_path}: {out_magic} {} bytes, payload unchanged", sep(out.len()));
    } else {
        println!(
            "{out_path}: {out_magic} {} bytes ({:+.1}%), {} tensors, {} weights",
            sep(out.len()),
            100.0 * (out.len() as f64 - b.len() as f64) / b.len() as f64,
            rep.tensors,
            sep(rep.weights)
        );
    }
    if rep.code10 > 0 {
        println!("note: {} trits had code 10, which ATOME01 reads as 0: written as 0 (not reversible to the same bytes)", rep.code10);
    }
    if rep.code111 > 0 {
        println!("note: {} codes 111, which ATOMEP3 reads as 0: written as 0", rep.code111);
    }
    if rep.dirty_padding > 0 {
        println!(
            "note: {} padding positions after tensors' last weights were not the zero code: dropped (readers ignore them)",
            rep.dirty_padding
        );
    }
    if rep.trailing > 0 {
        println!("note: {} trailing bytes after the blob copied as they are", rep.trailing);
    }
    println!(
        "verified: the library reads identical weights, scales and floats from both ({} weights); converting back gives {} [{}]",
        sep(n),
        if back == b { "the input's exact bytes" } else { "different bytes (see notes above)" },
        secs(took)
    );
    Ok(())
}
