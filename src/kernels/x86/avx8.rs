//! Eight f32 lanes in one AVX register, for code generic over
//! [`Lanes`](crate::kernels::lanes::Lanes).
//!
//! [`Avx8`] is private to this module and only [`with_avx8`], which takes
//! the [`Avx2`] proof token, hands it out (as a type parameter of the job):
//! safe code cannot make an `Avx8` on a CPU without AVX2.
use core::arch::x86_64::*;

use super::Avx2;
use crate::kernels::lanes::{LaneJob, Lanes};

/// Runs `job` with `Avx8` lanes (AVX registers), compiled with AVX2 enabled (the 8-lane
/// loops become one vector instruction each; lane-wise IEEE operations, no
/// FMA: the portable lanes' bits).
#[inline(always)]
pub fn with_avx8<J: LaneJob>(cpu: Avx2, job: J) -> J::Out {
    let _ = cpu;
    // SAFETY: the token proves the CPU has AVX2 and the OS saves its state.
    unsafe { run_avx2(job) }
}

/// # Safety
/// AVX2 must be available.
#[target_feature(enable = "avx2")]
unsafe fn run_avx2<J: LaneJob>(job: J) -> J::Out {
    job.run::<Avx8, 8>()
}

/// Lanes in one AVX register. Values exist only inside a job run by
/// [`with_avx8`], so every method runs with AVX present.
#[derive(Clone, Copy)]
struct Avx8(__m256);

impl Lanes<8> for Avx8 {
    #[inline(always)]
    fn zero() -> Self {
        // SAFETY: AVX available (see the type).
        Avx8(unsafe { _mm256_setzero_ps() })
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        // SAFETY: AVX available (see the type).
        Avx8(unsafe { _mm256_set1_ps(v) })
    }
    #[inline(always)]
    fn load(a: &[f32; 8]) -> Self {
        // SAFETY: AVX available (see the type); reads the 8 floats of `a`.
        Avx8(unsafe { _mm256_loadu_ps(a.as_ptr()) })
    }
    #[inline(always)]
    fn store(self, a: &mut [f32; 8]) {
        // SAFETY: AVX available (see the type); writes the 8 floats of `a`.
        unsafe { _mm256_storeu_ps(a.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        // SAFETY: AVX available (see the type).
        Avx8(unsafe { _mm256_add_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        // SAFETY: AVX available (see the type).
        Avx8(unsafe { _mm256_mul_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn mul_nz(self, h: Self) -> Self {
        // NEQ_UQ is Rust's `!=` (true for NaN too).
        // SAFETY: AVX available (see the type).
        Avx8(unsafe {
            let nz = _mm256_cmp_ps::<_CMP_NEQ_UQ>(self.0, _mm256_setzero_ps());
            _mm256_and_ps(nz, _mm256_mul_ps(self.0, h.0))
        })
    }
}
