//! After the layers: the final norm and the language-model and classifier
//! heads.
use crate::format::{Classifier, Model, Tensor};
use crate::kernels::{argmax, layer_norm};

/// Final LayerNorm of one residual row into `h` (D floats).
pub fn final_norm(model: &Model, xrow: &[f32], h: &mut [f32]) {
    layer_norm(xrow, &model.final_norm(), h);
}

/// logits = unembed(h); returns the argmax.
pub fn head(w: &Tensor, h: &[f32], logits: &mut [f32]) -> usize {
    crate::kernels::matvec::matvec_batch(w, h, w.cols, 1, logits, w.rows);
    argmax(logits.get(..w.rows).unwrap_or(logits))
}

/// Classifier head on the final normalized row: writes n_classes logits into
/// `out` when given and returns the argmax (strict `>` from class 0),
/// computed a few rows at a time so no n_classes buffer is needed.
pub fn classify_head(clf: &Classifier, h: &[f32], mut out: Option<&mut [f32]>) -> usize {
    let w = &clf.head;
    let mut best = 0;
    let mut best_v = 0.0f32;
    let mut buf = [0.0f32; 8];
    let mut j0 = 0;
    while j0 < w.rows {
        let m = (w.rows - j0).min(buf.len());
        crate::kernels::matvec::matvec_rows_at(w, j0, h, &mut buf[..m]);
        for (i, &v) in buf[..m].iter().enumerate() {
            let j = j0 + i;
            if j == 0 || crate::kernels::device::sf::gt(v, best_v) {
                best = j;
                best_v = v;
            }
            if let Some(o) = out.as_deref_mut().and_then(|o| o.get_mut(j)) {
                *o = v;
            }
        }
        j0 += m;
    }
    best
}
