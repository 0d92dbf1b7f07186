//! Matvec kernels for particular kinds of microcontroller core.

pub mod soft;
