//! Kernels: the float arithmetic of docs/ARITHMETIC.md, each in its exact
//! order, and in [`q15`] the integer kernels of docs/Q15.md.
//!
//! All of them are safe Rust on slices and work for any dimensions; they
//! never panic (short inputs are read as far as they go).
//!
//! The build's choices (size profile, key-cache layout, instruction set)
//! are named in [`choice`]; how to add an instruction set: [`isa`].
//!
//! # Operation by core
//!
//! The function each core runs (files under `src/kernels/` unless named
//! from `src/`; "portable" is
//! the form every other core and the host run, and the fallback for shapes
//! a fast path does not take). Cores by their `build.rs` names: M0 =
//! `atome_armv6m`, M3 = `atome_thumb2` without `atome_dsp`, DSP =
//! `atome_dsp` (M4, M7), FPU = `atome_fpu` (M4F, M7, M33: its q15 paths
//! are the DSP column's on M4F and M7, the M3 column's on M33), RV32 = `atome_rv32`, AVX2 = `atome_x86`.
//!
//! | operation | portable | M0 | M3 | DSP | FPU | RV32 | AVX2 |
//! |---|---|---|---|---|---|---|---|
//! | float matvec | `matvec.rs::matvec_portable` | `device/soft.rs::matvec_soft` (loop `device/soft_t1.rs::run`) | `device/soft.rs::matvec_soft` (`device/soft_t2.rs::run_vecs`) | as M3 | `device/fpu.rs::matvec` (`device/fpu_asm.rs`) | `device/soft.rs::matvec_soft` (`device/soft_rv_vec4.rs::run_vec4`) | `x86/mod.rs::matvec_batch_with` |
//! | float add, multiply-add (outside the matvec, no FPU) | `device/sf.rs::add`, `device/sf.rs::mul_add` | `device/sf_asm.rs::add` | `device/sf_asm.rs::add`, `device/sf_asm.rs::mul_add` | as M3 | `f32` operators | `device/sf_rv.rs::add`, `device/sf_rv.rs::mul_add` | `f32` operators |
//! | q15 matvec | `q15/matvec.rs::matvec_q_portable` (tables: `q15/matvec.rs::build_tables`, `add_rows`) | `q15/matvec/t1.rs::build_tables_t1`, `rows_thumb` | `q15/matvec/thumb2.rs::rows_jobs` | `q15/matvec/dsp.rs::trit2` | as DSP or M3 | tables | `q15/matvec/avx2.rs` |
//! | q15 LayerNorm | `q15/norm.rs::layer_norm` (`ln_sums`, `ln_affine`) | `q15/norm_t1.rs::ln_passes_t1` | `q15/norm_t2.rs::ln_first_t2` | `q15/norm_t2.rs::ln_first_t2`, `q15/norm_dsp.rs::ln_affine_dsp` | as M3 | portable | `kernel!` AVX2 copy |
//! | q15 conv | `q15/conv.rs::conv_sums` (`conv_tap_trit2`) | `q15/conv_t1.rs::conv5_t1` | `q15/conv_t2.rs::conv5_t2` | `q15/conv_t2.rs::conv5_t2` (`conv_dsp`) | as M3 | portable | `q15/conv_avx2.rs::conv5_avx2` |
//! | q15 SSM | `q15/ssm.rs::ssm_step` (`ssm_sums`) | `q15/ssm.rs::ssm_sums_m0` | `q15/ssm_t2.rs::ssm_sums_s` | as M3 (`SMMULR` steps) | as M3 | portable | `kernel!` AVX2 copy |
//! | q15 q.k (top-k) | `q15/dot.rs::dot_q` | portable | `q15/dot.rs::dot_smlal` | `q15/dot.rs::dot_pairs` | as DSP or M3 | `q15/dot.rs::dot_by_pairs` | `kernel!` AVX2 copy |
//! | q15 weighted sum | `q15/attention.rs::attention_sum` | portable | portable | `q15/attention_dsp.rs::att_sum4_dsp` | as DSP or M3 | portable | `kernel!` AVX2 copy |
//! | q15 mix | `q15/mix.rs::mix` (`mix_sums`) | portable | portable | `q15/mix_dsp.rs::mix_sums_dsp` | as DSP or M3 | portable | `kernel!` AVX2 copy |
//! | q15 block quantization | `q15/quant.rs::quant_into` (`or_abs`, `rshr_sat`) | portable | `q15/quant.rs::or_abs` (asm) | `q15/quant.rs::rshr_sat` (asm) | as DSP or M3 | portable | `kernel!` AVX2 copy |
//! | q15 exp2q, 2^61 / Z | `src/q15/arith/exp.rs::exp2q`, `src/q15/arith/div.rs::div_q32` | `src/q15/arith/exp.rs::exp2_horner_t1`, `src/q15/arith/div.rs::div_bits_t1` | `src/q15/arith/div.rs::div_q32_long` | as M3 | as M3 | as M3 | `src/q15/arith/div.rs::div_q32` (64-bit division) |

pub mod attention;
pub mod choice;
pub mod conv;
pub mod isa;
pub mod job;
pub mod keys;
pub mod lanes;
pub mod matvec;
pub mod norm;
pub mod q15;
pub mod softmax;

#[cfg(atome_x86)]
pub mod x86;

/// Device matvec kernels (compiled everywhere, so host tests check them).
pub mod device;

pub use attention::{attend_channel, score_topk};
pub use matvec::{embed_row, matvec, matvec_batch};
pub use norm::{layer_norm, layer_norm_in_place};
pub use softmax::softmax;

/// Index of the first maximum (strict `>` from index 0); 0 for an empty slice.
pub fn argmax(v: &[f32]) -> usize {
    let mut best = 0;
    let mut m = match v.first() {
        Some(&f) => f,
        None => return 0,
    };
    // From the first again (it never beats itself): a plain loop.
    for (i, &f) in v.iter().enumerate() {
        if device::sf::gt(f, m) {
            m = f;
            best = i;
        }
    }
    best
}

/// `dst[i] = src[i]` for the common length (copy_from_slice would link a
/// panic path for a length mismatch that cannot happen here).
#[inline]
pub fn copy(dst: &mut [f32], src: &[f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s;
    }
}
