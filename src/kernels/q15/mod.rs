//! Integer kernels of the q15 mode (docs/Q15.md). Integer sums are exact and
//! associative, so these kernels may add in any order and at any width: the
//! result is the same on every target by construction.

#[cfg(all(target_arch = "x86_64", not(atome_portable)))]
pub mod conv;
#[cfg(all(target_arch = "arm", not(target_has_atomic = "32")))]
pub mod conv_t1;
#[cfg(atome_thumb2)]
pub mod conv_t2;
pub mod dot;
pub mod ssm;
pub mod matvec;
#[cfg(atome_dsp)]
pub mod mix;
pub mod norm;
pub mod quant;

pub use dot::dot_q;
pub use matvec::{matvec_q, matvec_q_multi, matvec_q_multi_checked, matvec_q_naive, trit2_no_code10, MvJobQ};

#[cfg(any(atome_thumb2, all(target_arch = "arm", not(target_has_atomic = "32"))))]
/// The five taps' inputs: rows (k = 0 the newest) and which shift by one.
pub struct Taps5<'a> {
    /// Tap rows, at least `out.len()` long.
    pub rows: [&'a [i16]; 5],
    /// Bit k set: tap k is rounded by one bit (rshr(x, 1)), else taken as is.
    pub shifted: u32,
    /// Bit k set: tap k counts (else its weight is 0 and its row, which
    /// must still be readable, is not used).
    pub valid: u32,
}
