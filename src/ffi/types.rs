//! C-visible types. Field names are the reference's; fields after them are
//! this library's. Array sizes use the ATOME_* macros, so one header serves
//! every configuration.
use crate::config::*;
use core::ffi::c_int;

/// Packed ternary matrix (rows x cols) read in place.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct atome_ternary_t {
    /// Payload in the blob (any alignment).
    pub packed: *const u8,
    /// Per-tensor scale.
    pub scale: f32,
    /// Rows.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
    /// Packing: 0 ATOME01 (2 bits a trit; what zero-initialised structs get), 1 ATOME02, 2 ATOMEP3.
    pub packing: u8,
}

/// Depthwise causal conv weights, trit number c*K + k.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct atome_conv_t {
    /// Payload.
    pub packed: *const u8,
    /// Scale.
    pub scale: f32,
    /// D.
    pub channels: u16,
    /// K.
    pub kernel_size: u16,
    /// Packing, as in atome_ternary_t.
    pub packing: u8,
}

/// Diagonal SSM. The arrays are little-endian binary32 at any alignment (they
/// point into the blob); the library reads them byte-wise.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct atome_ssm_t {
    /// Decay before tanh.
    pub a: *const f32,
    /// Input gain.
    pub b: *const f32,
    /// Output gain.
    pub c_out: *const f32,
    /// D.
    pub channels: u16,
}

/// Sparse attention.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct atome_attn_t {
    /// DH x D.
    pub Wq: atome_ternary_t,
    /// DH x D.
    pub Wk: atome_ternary_t,
    /// D x D.
    pub Wv: atome_ternary_t,
    /// DH.
    pub d_head: u16,
    /// Keys kept per query.
    pub top_k: u16,
}

/// LayerNorm parameters (little-endian binary32, any alignment).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct atome_norm_t {
    /// D gains.
    pub gamma: *const f32,
    /// D offsets.
    pub beta: *const f32,
}

/// One block.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct atome_block_t {
    /// Pre-norm.
    pub norm: atome_norm_t,
    /// Local pathway.
    pub local_conv: atome_conv_t,
    /// State pathway.
    pub ssm: atome_ssm_t,
    /// Sparse pathway.
    pub attn: atome_attn_t,
    /// 3 x D router.
    pub router: atome_ternary_t,
}

/// A loaded language model: views into the caller's blob.
#[repr(C)]
pub struct atome_model_t {
    /// V x D.
    pub embed: atome_ternary_t,
    /// The blocks.
    pub blocks: [atome_block_t; ATOME_N_LAYERS],
    /// Final norm.
    pub final_norm: atome_norm_t,
    /// V x D.
    pub unembed: atome_ternary_t,
    /// The blob (private).
    pub blob: *const u8,
    /// Its length (private).
    pub blob_len: usize,
    /// MODEL_VALID after a successful load (private).
    pub valid: u32,
    /// Hash of the blob's bytes at load (private; keys cached states).
    pub blob_hash: u32,
}

/// A loaded classifier.
#[repr(C)]
pub struct atome_classifier_t {
    /// The body.
    pub base: atome_model_t,
    /// n_classes x D.
    pub head: atome_ternary_t,
    /// Classes.
    pub n_classes: c_int,
    /// CLASSIFIER_VALID after a successful load (private).
    pub valid: u32,
}

/// Inference state: the caller owns it (static, stack or heap); its size is
/// known to the C compiler. Only `logits` is public.
#[cfg(not(any(atome_cached, atome_q15)))]
#[repr(C)]
pub struct atome_state_t {
    /// Logits of the last predict_next.
    pub logits: [f32; ATOME_VOCAB_SIZE],
    /// Private work area.
    pub work: [f32; ATOME_STATE_WORK],
}

/// Inference state with per-layer caches kept across calls (ATOME_STATE=cached).
#[cfg(all(atome_cached, not(atome_q15)))]
#[repr(C)]
pub struct atome_state_t {
    /// Logits of the last predict_next.
    pub logits: [f32; ATOME_VOCAB_SIZE],
    /// Private work area.
    pub work: [f32; ATOME_STATE_WORK],
    /// Cache validity marker (private).
    pub cache_magic: u32,
    /// Model fingerprint (private).
    pub cache_model: u32,
    /// Positions cached (private).
    pub cache_len: u32,
    /// Ids of the cached positions (private).
    pub cache_tokens: [i32; ATOME_MAX_SEQ],
}

/// Inference state of the q15 integer mode (ATOME_DTYPE=q15, lean or
/// tiny): binary32 logits, then the engine's int32 and int16 areas
/// (docs/Q15.md).
#[cfg(all(atome_q15, not(atome_cached)))]
#[repr(C)]
pub struct atome_state_t {
    /// Logits of the last predict_next.
    pub logits: [f32; ATOME_VOCAB_SIZE],
    /// Private int32 area.
    pub work32: [i32; ATOME_Q15_I32],
    /// Private int16 area.
    pub work16: [i16; ATOME_Q15_I16],
}

/// Inference state of the q15 integer mode with every layer's caches kept
/// across calls (ATOME_DTYPE=q15, ATOME_STATE=cached): binary32 logits, the
/// cache header, then the engine's int32 and int16 areas (docs/Q15.md).
#[cfg(all(atome_q15, atome_cached))]
#[repr(C)]
pub struct atome_state_t {
    /// Logits of the last predict_next.
    pub logits: [f32; ATOME_VOCAB_SIZE],
    /// Cache validity marker (private).
    pub cache_magic: u32,
    /// Model fingerprint (private).
    pub cache_model: u32,
    /// Positions cached (private).
    pub cache_len: u32,
    /// Ids of the cached positions (private).
    pub cache_tokens: [i32; ATOME_MAX_SEQ],
    /// Private int32 area.
    pub work32: [i32; ATOME_Q15_I32],
    /// Private int16 area.
    pub work16: [i16; ATOME_Q15_I16],
}

/// The configuration the library was built with.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct atome_build_config_t {
    /// ATOME_VOCAB_SIZE
    pub vocab_size: i32,
    /// ATOME_D_MODEL
    pub d_model: i32,
    /// ATOME_MAX_SEQ
    pub max_seq: i32,
    /// ATOME_N_LAYERS
    pub n_layers: i32,
    /// ATOME_N_PATHWAYS
    pub n_pathways: i32,
    /// ATOME_D_HEAD
    pub d_head: i32,
    /// ATOME_KERNEL_SIZE
    pub kernel_size: i32,
    /// ATOME_TOP_K
    pub top_k: i32,
    /// ATOME_MAX_CLASSES
    pub max_classes: i32,
    /// 1 for ATOME_STATE=cached
    pub state_cached: i32,
    /// sizeof(atome_state_t)
    pub state_size: u32,
    /// sizeof(atome_model_t)
    pub model_size: u32,
    /// sizeof(atome_classifier_t)
    pub classifier_size: u32,
}

/// Sampling parameters for atome_generate_sampled (docs/CONTRACT.md).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct atome_sampling_t {
    /// <= 0: greedy.
    pub temperature: f32,
    /// Keep the top_k most likely (0: all).
    pub top_k: i32,
    /// Nucleus mass in (0, 1) (otherwise off).
    pub top_p: f32,
    /// Zero.
    pub reserved: u32,
    /// PRNG seed.
    pub seed: u64,
}

/// Marks a model whose load succeeded.
pub const MODEL_VALID: u32 = 0x41_54_4D_31;
/// Marks a classifier whose load succeeded.
pub const CLASSIFIER_VALID: u32 = 0x41_54_43_31;
