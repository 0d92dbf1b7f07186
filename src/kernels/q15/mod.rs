//! Integer kernels of the q15 mode (docs/Q15.md). Integer sums are exact and
//! associative, so these kernels may add in any order and at any width: the
//! result is the same on every target by construction.

/// Asm text of a loop that runs `$body` (a macro's name and arguments,
/// giving one step's text) once per unit of the count register `$n`
/// (at least 1): an odd step first, then two a step. `lsrs` halves the
/// count, leaving C set for the odd step and Z for no pair, so no step's
/// instructions may set N, Z or C. Labels 2, 3 and 4 are its own.
#[cfg(atome_thumb2)]
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
pub fn has_code10(d: &[u8]) -> bool {
    d.iter().any(|&b| b & !(b << 1) & 0xAA != 0)
}

#[cfg(atome_x86)]
pub mod conv;
#[cfg(atome_armv6m)]
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

#[cfg(any(atome_thumb2, atome_armv6m))]
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
