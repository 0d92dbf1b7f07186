//! atome: a `no_std`, no-alloc engine for the Atome ternary language model,
//! exporting the reference C API (include/atome.h).
//!
//! Layers (docs/ARCHITECTURE.md): [`format`] and [`container`] (blob and
//! container parsing) -> [`kernels`] (the arithmetic, one operation at a
//! time with its per-core fast paths; [`math`] for the exact functions) ->
//! the forward passes, [`forward`] (float) and [`q15`] (the integer mode) ->
//! their runners, [`runner::Runner`] and [`q15::Q15Runner`] (memory and
//! calls), both behind one [`engine::Engine`] trait that writes predict,
//! classify and generation once, and [`modes::AnyRunner`], any of the four
//! modes (float or q15, lean or cached) chosen at run time -> [`ffi`] (the C
//! ABI over the build's engine, sized by the build-time configuration in
//! [`config`]; its runtime API runs any mode, sized by the model).
#![no_std]
#![warn(missing_docs)]
// A block's and the model's pieces come from accessors that return
// references to the whole views, or values in the q15 size-first build
// (format::Block): `&blk.wq()` is the borrow the latter needs.
#![cfg_attr(not(atome_lazy_block), allow(clippy::needless_borrow))]

#[cfg(any(panic = "unwind", feature = "std"))]
extern crate std;

pub mod config;
pub mod container;
pub mod engine;
pub mod ffi;
pub mod format;
pub mod forward;
pub mod kernels;
pub mod math;
pub mod modes;
pub mod q15;
pub mod runner;
#[cfg(test)]
mod test_rng;

#[cfg(all(not(feature = "std"), panic = "abort", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // No code path of the library panics (the firmware check proves none is
    // linked); this handler exists only because a no_std artifact needs one.
    loop {}
}

/// The host's precompiled `core` was built with unwinding and refers to this
/// symbol; with panic = "abort" nothing ever unwinds, so it is never called.
#[cfg(all(not(feature = "std"), panic = "abort", not(test), target_os = "linux"))]
#[no_mangle]
pub extern "C" fn rust_eh_personality() {}
