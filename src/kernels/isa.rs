//! The instruction-set choice: which vector units the kernels may use,
//! asked once per API call (cpuid can trap to a hypervisor: tens of
//! microseconds) and kept in an [`Accel`].
//!
//! Today: AVX2 on x86-64 (the `x86` module; not in the size-first profile,
//! so a host built with the `portable` feature runs the device's code), and
//! everywhere the portable kernels with [`Scalar`] lanes
//! ([`SCALAR_LANES`] wide, a size-profile choice).
//!
//! Adding an instruction set (say a device float path):
//! 1. a module under `kernels/` with a proof token type that only a CPU
//!    check (or the target's cfg) can make, a lane type implementing
//!    [`Lanes`](super::lanes::Lanes) that is private to that module, and a safe
//!    `with_<lanes>(token, job)` that runs `job.run::<ThatLanes, N>()`
//!    (compiled with the instruction set enabled where that needs a
//!    `#[target_feature]` function); N at most `conv::CONV_LANES`;
//! 2. a field for the token in [`Accel`] (under the target's cfg), set in
//!    [`Accel::detect`];
//! 3. a branch in [`Accel::with_lanes`] (the forward pass's lanes) and, for
//!    a faster matvec, in [`Accel::matvec_batch`] / [`Accel::matvec_multi`]
//!    (return false to leave a shape to the portable kernels).
//!
//! Nothing else changes: the forward pass is generic over the lane type,
//! and the size profile and key-cache layout are separate choices
//! ([`super::choice`]). Every lane type must give the portable lanes' bits.
#[cfg(atome_x86)]
use super::x86;
use super::choice::SCALAR_LANES;
use super::job::MvJob;
use super::lanes::{LaneJob, Scalar};
use crate::format::Tensor;

/// The vector units this CPU lets the kernels use.
#[derive(Clone, Copy, Debug, Default)]
pub struct Accel {
    #[cfg(atome_x86)]
    avx2: Option<x86::Avx2>,
}

impl Accel {
    /// Asks the CPU.
    pub fn detect() -> Accel {
        Accel {
            #[cfg(atome_x86)]
            avx2: x86::Avx2::detect(),
        }
    }

    /// True when AVX2 may be used (x86-64 only).
    #[inline]
    pub fn avx2(&self) -> bool {
        #[cfg(atome_x86)]
        return self.avx2.is_some();
        #[cfg(not(atome_x86))]
        false
    }

    /// Runs `job` with the widest lane type available (each compiled for its
    /// instruction set).
    #[inline(always)]
    pub fn with_lanes<J: LaneJob>(self, job: J) -> J::Out {
        #[cfg(atome_x86)]
        if let Some(cpu) = self.avx2 {
            return x86::with_avx8(cpu, job);
        }
        job.run::<Scalar<SCALAR_LANES>, SCALAR_LANES>()
    }

    /// A faster [`super::matvec::matvec_batch_accel`] where this CPU has
    /// one for the shape; false (nothing done) otherwise.
    #[inline(always)]
    pub fn matvec_batch(self, w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) -> bool {
        #[cfg(atome_x86)]
        if let Some(cpu) = self.avx2 {
            return x86::matvec_batch_with(cpu, w, xs, xstride, n, out, ostride);
        }
        let _ = (w, xs, xstride, n, out, ostride);
        false
    }

    /// A faster [`super::matvec::matvec_multi_accel`] where this CPU has
    /// one for the shapes; false (nothing done) otherwise.
    #[inline(always)]
    pub fn matvec_multi(self, jobs: &mut [MvJob], xs: &[f32], xstride: usize, n: usize) -> bool {
        #[cfg(atome_x86)]
        if let Some(cpu) = self.avx2 {
            return x86::matvec_multi_with(cpu, jobs, xs, xstride, n);
        }
        let _ = (jobs, xs, xstride, n);
        false
    }
}
