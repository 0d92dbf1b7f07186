//! The C ABI: the reference's functions and structs, a thin layer over the
//! safe core. Every pointer is checked for null; outputs are written only on
//! success; return codes are plain `int`.
#![allow(non_camel_case_types, non_snake_case)]

pub(crate) mod engine;
pub mod extra;
pub mod kernels;
pub mod model;
pub mod run;
pub mod runtime;
pub mod types;

pub use types::*;
