//! Integer kernels of the q15 mode (docs/Q15.md). Integer sums are exact and
//! associative, so these kernels may add in any order and at any width: the
//! result is the same on every target by construction.

/// Asm text of a loop that runs `$body` (a macro's name and arguments,
/// giving one step's text) once per unit of the count register `$n`
/// (at least 1): an odd step first, then two a step. `lsrs` halves the
/// count, leaving C set for the odd step and Z for no pair, so no step's
/// instructions may set N, Z or C. Labels 2, 3 and 4 are its own.
#[cfg(all(atome_thumb2, not(atome_small)))]
macro_rules! odd_then_pairs {
    ($n:literal, $body:ident $args:tt) => {
        concat!(
            "lsrs {", $n, "}, {", $n, "}, #1\n",
            "bcc 3f\n",
            $body!$args,
            "3:\n",
            "beq 4f\n",
            "2:\n",
            $body!$args,
            $body!$args,
            "subs {", $n, "}, {", $n, "}, #1\n",
            "bne 2b\n",
            "4:\n",
        )
    };
}

/// Whether any Trit2 code of `d` is `10` (hi bit set, lo bit clear): the
/// code no encoder writes, which the kernels that decode a code's two
/// bits as lo - 2 hi (AVX2 matvec, Cortex-M0 conv) would read as -2.
/// (Four bytes a step, no early exit: payloads are nearly always clean,
/// and the scan runs over whole models when a cache starts.)
pub fn has_code10(d: &[u8]) -> bool {
    let (words, rest) = d.as_chunks::<4>();
    // Bit 2k + 1 of w & !(w << 1): field k's hi bit set and lo bit clear
    // (the even bits mix neighbouring fields and are masked off).
    let hits = |w: u32| w & !(w << 1);
    let acc = words.iter().fold(0, |a, w| a | hits(u32::from_le_bytes(*w)));
    let acc = rest.iter().fold(acc, |a, &b| a | hits(u32::from(b)));
    acc & 0xAAAA_AAAA != 0
}

/// Mantissa i of a parameter vector ([`PSrc::m`]) out of line: the blob's
/// conversion compiled once for every kernel that reads a vector without
/// its per-layer copy (the final LayerNorm, vectors that do not fit the
/// engine's areas), off the per-layer paths.
#[cfg_attr(not(atome_small), inline(never))]
#[cfg_attr(atome_small, inline(always))]
pub(crate) fn pm(p: &crate::q15::params::PSrc, i: usize) -> i32 {
    p.m(i)
}

/// One operation's dispatch: its kernel as an out-of-line function,
/// compiled twice on x86-64: once for the baseline and once with AVX2,
/// where LLVM turns the integer loops into 8-lane ones (integer results:
/// the same bits by construction). The public function `$name(accel, ..)`
/// picks the copy; elsewhere there is one copy. (The per-core fast paths
/// of Arm and RV32 are chosen at build time inside the kernel.)
macro_rules! kernel {
    ($(#[$m:meta])* $name:ident = $body:ident $(::<$g:literal>)? ($($a:ident : $t:ty),* $(,)?) -> $r:ty) => {
        #[allow(clippy::too_many_arguments)]
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[inline(never)]
            pub(super) fn port($($a: $t),*) -> $r {
                $body$(::<$g>)?($($a),*)
            }
            /// # Safety
            /// The CPU must have AVX2.
            #[cfg(atome_x86)]
            #[target_feature(enable = "avx2")]
            #[inline(never)]
            pub(super) unsafe fn avx2($($a: $t),*) -> $r {
                $body$(::<$g>)?($($a),*)
            }
        }
        $(#[$m])*
        #[allow(clippy::too_many_arguments)]
        #[inline(always)]
        pub(crate) fn $name(acc: crate::kernels::isa::Accel, $($a: $t),*) -> $r {
            #[cfg(atome_x86)]
            if acc.avx2() {
                // SAFETY: `Accel::avx2` is true only when cpuid and
                // xgetbv showed AVX2 and the OS saving the YMM state.
                return unsafe { $name::avx2($($a),*) };
            }
            let _ = acc;
            $name::port($($a),*)
        }
    };
}

pub mod attention;
#[cfg(all(atome_dsp, not(atome_small)))]
pub mod attention_dsp;
pub mod conv;
#[cfg(atome_x86)]
pub mod conv_avx2;
#[cfg(all(atome_armv6m, not(atome_small)))]
pub mod conv_t1;
#[cfg(all(atome_thumb2, not(atome_small)))]
pub mod conv_t2;
pub mod dot;
pub mod head;
pub mod matvec;
pub mod mix;
#[cfg(all(atome_dsp, not(atome_small)))]
pub mod mix_dsp;
pub mod norm;
#[cfg(all(atome_dsp, not(atome_small)))]
pub mod norm_dsp;
#[cfg(all(atome_armv6m, not(atome_small)))]
pub mod norm_t1;
#[cfg(all(atome_thumb2, not(atome_small)))]
pub mod norm_t2;
pub mod quant;
pub mod ssm;
#[cfg(all(atome_thumb2, not(atome_small)))]
pub mod ssm_t2;
#[cfg(test)]
mod tests;

pub use dot::dot_q;
pub use matvec::{matvec_q, matvec_q_multi, matvec_q_multi_checked, matvec_q_naive, trit2_no_code10, MvJobQ};
