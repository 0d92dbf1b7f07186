//! LayerNorm in the reference's order.
use super::device::sf::{add, mul, mul_add, sub};
use crate::format::Norm;
use crate::math::sqrtf;

/// (mean, 1/sqrt(var + 1e-5)) of x, sequential sums (docs/ARITHMETIC.md).
fn stats(x: &[f32]) -> (f32, f32) {
    let d = x.len() as f32;
    let mut mean = 0.0f32;
    // add/mul: `+`/`*`, or the integer routines on cores without an FPU.
    for &v in x {
        mean = add(mean, v);
    }
    mean /= d;
    let mut var = 0.0f32;
    for &v in x {
        let c = sub(v, mean);
        var = mul_add(var, c, c);
    }
    var /= d;
    (mean, 1.0 / sqrtf(var + 1e-5))
}

/// out = LayerNorm(x) over min(x.len(), out.len()) values.
pub fn layer_norm(x: &[f32], norm: &Norm, out: &mut [f32]) {
    let n = x.len().min(out.len());
    let (x, out) = (&x[..n], &mut out[..n]);
    let (mean, inv) = stats(x);
    let (g, b) = (norm.gamma.bytes(), norm.beta.bytes());
    // The straight path is for speed; microcontrollers take the short one.
    if !cfg!(atome_portable) && g.len() >= 4 * n && b.len() >= 4 * n {
        // Every gain and offset present: read them straight from the bytes.
        let (ga, bb) = (g.as_chunks::<4>().0, b.as_chunks::<4>().0);
        for ((o, &v), (&gc, &bc)) in out.iter_mut().zip(x).zip(ga.iter().zip(bb)) {
            let gv = f32::from_le_bytes(gc);
            let bv = f32::from_le_bytes(bc);
            *o = gv * (v - mean) * inv + bv;
        }
        return;
    }
    for (i, (o, &v)) in out.iter_mut().zip(x).enumerate() {
        *o = add(mul(mul(norm.gamma.get(i), sub(v, mean)), inv), norm.beta.get(i));
    }
}

/// LayerNorm in place.
pub fn layer_norm_in_place(x: &mut [f32], norm: &Norm) {
    let (mean, inv) = stats(x);
    for (i, v) in x.iter_mut().enumerate() {
        *v = add(mul(mul(norm.gamma.get(i), sub(*v, mean)), inv), norm.beta.get(i));
    }
}
