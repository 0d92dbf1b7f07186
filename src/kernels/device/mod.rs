//! Matrix-vector kernels for microcontroller builds that spend code size on
//! speed: `fpu` for cores with a single-precision FPU, `soft` (a bit-exact
//! software accumulate) for cores without one (every `atome_portable` build without the `size-first` feature).
//!
//! [`matvec_device`] has exactly the semantics of the portable loop in
//! `super::matvec`; shapes a device kernel does not cover go to that loop.

/// Text of the RV32 accumulate loops' common rounding (soft_rv.rs,
/// soft_rv_vec4.rs): the sum t in t2 with a = |t| (one's complement) in
/// [2^29, 2^30 - 32) and its low six bits not a half rounds at bit 6 into
/// `$m`; a outside that range goes to `$out`, a half to `$half`. a4 and
/// a5 are scratch; t4 = 32, t5 = 2^29, t6 = 2^29 - 32.
#[cfg(atome_rv32)]
macro_rules! round6 {
    ($m:literal, $out:literal, $half:literal) => {
        concat!(
            "srai a4, t2, 31\n", "xor a4, t2, a4\n", "sub a5, a4, t5\n", "bgeu a5, t6, ", $out, "\n",
            "andi a4, t2, 63\n", "beq a4, t4, ", $half, "\n", "addi a5, t2, 32\n", "andi ", $m, ", a5, -64",
        )
    };
}

/// The RV32 accumulate loops' constants: t3 = 6, t4 = 32, t5 = 2^29, t6 =
/// 2^29 - 32 (the bounds of [`round6`]'s common case).
#[cfg(atome_rv32)]
macro_rules! rv_consts {
    () => {
        "li t3, 6\nli t4, 32\nlui t5, 0x20000\naddi t6, t5, -32"
    };
}

#[cfg_attr(not(atome_fpu), allow(dead_code))]
pub mod fpu;
#[cfg(atome_fpu)]
mod fpu_asm;
pub mod sf;
mod sf_asm;
mod sf_rv;
pub mod soft;
// Thumb-1 (Cortex-M0) and Thumb-2 (M3, soft-float M4/M7) accumulate loops.
#[cfg(not(atome_thumb2))]
mod soft_t1;
#[cfg(atome_thumb2)]
mod soft_t2;
mod soft_rv;
mod soft_rv_vec4;

use crate::format::Tensor;

/// For b < n: out[b*ostride + j] = (W x_b)[j] for j < W.rows, with
/// x_b = xs[b*xstride ..][.. W.cols]; outputs past `out` are dropped. The
/// same bits as [`super::matvec::matvec_portable`], which it falls back to.
pub fn matvec_device(w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) {
    // FPU cores: per-byte code selection, accumulators in FPU registers.
    #[cfg(atome_fpu)]
    if fast_shape(w, xs, xstride, n, ostride) {
        fpu::matvec(w, xs, xstride, n, out, ostride);
        return;
    }
    // Cores without an FPU: the bit-exact software accumulate.
    #[cfg(not(any(target_abi = "eabihf", target_arch = "x86_64", target_arch = "aarch64", target_feature = "f")))]
    {
        soft::matvec_soft(w, xs, xstride, n, out, ostride);
        return;
    }
    #[allow(unreachable_code)]
    super::matvec::matvec_portable(w, xs, xstride, n, out, ostride)
}

/// True when the device kernels give the portable loop's results: a packing
/// they decode, every input row in range (the portable loop skips a short
/// row block by block) and no output slot shared by two (row, vector) pairs
/// (the kernels keep running sums there and write in another order).
#[cfg_attr(not(atome_fpu), allow(dead_code))]
pub(crate) fn fast_shape(w: &Tensor, xs: &[f32], xstride: usize, n: usize, ostride: usize) -> bool {
    if n == 0 || w.rows == 0 || w.cols == 0 || !fpu::supports(w) {
        return false;
    }
    if n > 1 && ostride < w.rows {
        return false;
    }
    match (n - 1).checked_mul(xstride).and_then(|v| v.checked_add(w.cols)) {
        Some(end) => end <= xs.len(),
        None => false,
    }
}
