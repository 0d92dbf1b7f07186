//! Integer kernels of the q15 mode (docs/Q15.md). Integer sums are exact and
//! associative, so these kernels may add in any order and at any width: the
//! result is the same on every target by construction.

#[cfg(all(target_arch = "x86_64", not(atome_portable)))]
pub mod conv;
#[cfg(atome_thumb2)]
pub mod conv_t2;
pub mod dot;
pub mod ssm;
pub mod matvec;
pub mod norm;
pub mod quant;

pub use dot::dot_q;
pub use matvec::{matvec_q, matvec_q_multi, matvec_q_naive, MvJobQ};
