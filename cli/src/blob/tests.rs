//! The configuration search and conversion on blobs the library writes.
use super::*;
use atome::format::{Content, Part};

/// Plausible content: scales, norms and weights from a formula.
struct Formula;
impl Content for Formula {
    fn float(&mut self, part: &Part, i: usize) -> f32 {
        0.5 + ((part.offset + i) % 7) as f32 * 0.1
    }
    fn scale(&mut self, part: &Part) -> f32 {
        0.01 * (1 + part.offset % 9) as f32
    }
    fn weight(&mut self, part: &Part, n: usize) -> i8 {
        ((n * 5 + part.offset) % 3) as i8 - 1
    }
}

fn blob(f: BlobFormat, dims: &Dims, n_classes: usize) -> Vec<u8> {
    let mut b = vec![0u8; format::blob_bytes(dims, f, n_classes)];
    format::write_blob(&mut b, dims, f, n_classes, &mut Formula).unwrap();
    b
}

#[test]
fn size_search_finds_the_configuration() {
    let dims = Dims { vocab: 40, d_model: 22, n_layers: 3, d_head: 6, kernel_size: 3, top_k: DEFAULT_TOPK };
    for f in BlobFormat::ALL {
        let b = blob(f, &dims, 5);
        let fmt = Format::detect(&b).unwrap();
        assert_eq!((fmt.lib(), fmt.magic()), (Some(f), f.name()));
        assert!(size_matches(fmt.kind, fmt.packing, b.len()).contains(&(dims, 0)), "{f:?}");
        let an = analyze(&b, &fmt, &dims).unwrap();
        assert_eq!((an.anomalies(), an.trailing), (0, 0), "{f:?}");
        assert_eq!(an.tensors.len(), 2 + 5 * 3 + usize::from(f.is_classifier()));
        assert_eq!(an.tensors[2].name, "block0.Wq");
    }
}

#[test]
fn convert_round_trips() {
    let dims = Dims { vocab: 32, d_model: 13, n_layers: 2, d_head: 3, kernel_size: 7, top_k: 1 };
    for f in BlobFormat::ALL {
        let mut b = blob(f, &dims, 3);
        b.extend_from_slice(&[9, 9, 9]);
        let fmt = Format::detect(&b).unwrap();
        for to in Packing::ALL {
            let Ok((out, rep)) = convert(&b, &fmt, &dims, to) else {
                assert!(f.is_classifier() && to == Packing::P3);
                continue;
            };
            assert_eq!((rep.trailing, rep.code10 + rep.code111 + rep.dirty_padding), (3, 0));
            assert_eq!(out.len(), blob_bytes(fmt.kind, &dims, to) + 3);
            let n = same_weights(&b[..b.len() - 3], &out[..out.len() - 3], fmt.kind, &dims).unwrap();
            assert_eq!(n, rep.weights);
            let (back, _) = convert(&out, &Format { kind: fmt.kind, packing: to }, &dims, fmt.packing).unwrap();
            assert_eq!(back, b, "{f:?} -> {to:?} -> back");
        }
    }
}
