//! The build-time configuration (docs/API.md#build-configuration), from build.rs.
#![allow(non_upper_case_globals)]

include!(concat!(env!("OUT_DIR"), "/config.rs"));

use crate::format::Dims;

/// The model dimensions this library was built for.
pub const DIMS: Dims = Dims {
    vocab: ATOME_VOCAB_SIZE,
    d_model: ATOME_D_MODEL,
    n_layers: ATOME_N_LAYERS,
    d_head: ATOME_D_HEAD,
    kernel_size: ATOME_KERNEL_SIZE,
    top_k: ATOME_TOP_K,
};
