//! Softmax in the reference's order.
use super::device::sf;
use crate::math::expf;

/// In-place softmax (docs/ARITHMETIC.md): max by strict `>`, expf, sequential sum,
/// one reciprocal of (sum + 1e-10).
// Inlined into the vectorized forward pass (fewer instructions); one copy
// on microcontrollers.
#[cfg_attr(not(atome_portable), inline(always))]
pub fn softmax(v: &mut [f32]) {
    let mut max = match v.first() {
        Some(&f) => f,
        None => return,
    };
    // From the first again (it never beats itself): a plain loop.
    for &f in v.iter() {
        if sf::gt(f, max) {
            max = f;
        }
    }
    let mut sum = 0.0f32;
    // (sf: the integer routines on cores without an FPU, the operators
    // elsewhere.)
    for f in v.iter_mut() {
        *f = expf(sf::sub(*f, max));
        sum = sf::add(sum, *f);
    }
    let inv = 1.0 / sf::add(sum, 1e-10);
    for f in v.iter_mut() {
        *f = sf::mul(*f, inv);
    }
}
