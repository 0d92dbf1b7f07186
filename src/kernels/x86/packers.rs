//! The packings' ways to turn payload bytes into one 32-bit word of
//! weight codes per row lane, and the per-column tables the codes index.
use core::arch::x86_64::*;

/// One packing's way to get a word of codes per row lane.
pub(super) trait Packer {
    /// Columns per word (a step); STEP * BITS / 8 whole bytes for Trit2/P3.
    const STEP: usize;
    /// Bits per code in a word (2 or 3).
    const BITS: u32;
    /// Payload bytes per step.
    const STRIDE: i32;
    /// Lane state from the weight numbers `t` of each lane's next column.
    unsafe fn lanes(t: __m256i) -> Offsets;
    /// The word of codes from the 4 payload bytes read at the lane offsets
    /// (by default: shifted right by each lane's s1).
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn word(raw: __m256i, l: &Offsets) -> __m256i {
        _mm256_srlv_epi32(raw, l.s1)
    }
    /// The 8-float table for input value x (by default: 2-bit codes).
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn table(x: f32) -> __m256 {
        // SAFETY: AVX2 available (caller).
        unsafe { table2(x) }
    }
}

/// Per-group state: byte offsets of the next step's 4 bytes and shifts.
#[derive(Clone, Copy)]
pub(super) struct Offsets {
    pub(super) offs: __m256i,
    pub(super) s1: __m256i,
    pub(super) s2: __m256i,
}

/// Trit2 with cols % 4 == 0: every row starts on a byte, 16 codes a word.
pub(super) struct Trit2Aligned;
/// Trit2, any cols: 12 codes a word, shifted per lane by 0..6 bits.
pub(super) struct Trit2Any;
/// Base3: 15 codes from 4 bytes (phase 0..4), expanded to 2-bit codes.
pub(super) struct Base3;
/// P3: one continuous little-endian stream of 3-bit codes; 8 a word.
pub(super) struct P3;

impl Packer for Trit2Aligned {
    const STEP: usize = 16;
    const BITS: u32 = 2;
    const STRIDE: i32 = 4;
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lanes(t: __m256i) -> Offsets {
        let z = _mm256_setzero_si256();
        Offsets {
            offs: _mm256_srli_epi32::<2>(t),
            s1: z,
            s2: z,
        }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn word(raw: __m256i, _l: &Offsets) -> __m256i {
        raw
    }
}

impl Packer for Trit2Any {
    const STEP: usize = 12;
    const BITS: u32 = 2;
    const STRIDE: i32 = 3;
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lanes(t: __m256i) -> Offsets {
        let bit = _mm256_slli_epi32::<1>(t);
        Offsets {
            offs: _mm256_srli_epi32::<3>(bit),
            s1: _mm256_and_si256(bit, _mm256_set1_epi32(7)),
            s2: _mm256_setzero_si256(),
        }
    }
}

impl Packer for P3 {
    const STEP: usize = 8;
    const BITS: u32 = 3;
    const STRIDE: i32 = 3;
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lanes(t: __m256i) -> Offsets {
        let bit = _mm256_add_epi32(t, _mm256_slli_epi32::<1>(t));
        Offsets {
            offs: _mm256_srli_epi32::<3>(bit),
            s1: _mm256_and_si256(bit, _mm256_set1_epi32(7)),
            s2: _mm256_setzero_si256(),
        }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn table(x: f32) -> __m256 {
        // Index = P3 code: [0, 1, -1, 3, -3, 9, -9, 0]. -(3x) == (-3.0) * x.
        let v = _mm256_mul_ps(_mm256_set1_ps(x), _mm256_setr_ps(1.0, 1.0, 1.0, 3.0, 3.0, 9.0, 9.0, 1.0));
        let v = _mm256_xor_ps(v, _mm256_setr_ps(0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0));
        _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_setr_epi32(0, -1, -1, -1, -1, -1, -1, 0)))
    }
}

impl Packer for Base3 {
    const STEP: usize = 15;
    const BITS: u32 = 2;
    const STRIDE: i32 = 3;
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lanes(t: __m256i) -> Offsets {
        // m = t / 5 (exact for t < 2^32: (t * 0xCCCCCCCD) >> 34), p = t - 5m.
        let magic = _mm256_set1_epi32(0xCCCC_CCCDu32 as i32);
        let even = _mm256_srli_epi64::<34>(_mm256_mul_epu32(t, magic));
        let odd = _mm256_srli_epi64::<34>(_mm256_mul_epu32(_mm256_srli_epi64::<32>(t), magic));
        let m = _mm256_or_si256(even, _mm256_slli_epi64::<32>(odd));
        let p = _mm256_sub_epi32(t, _mm256_mullo_epi32(m, _mm256_set1_epi32(5)));
        let s1 = _mm256_add_epi32(p, p);
        Offsets {
            offs: m,
            s1,
            s2: _mm256_sub_epi32(_mm256_set1_epi32(30), s1),
        }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn word(raw: __m256i, l: &Offsets) -> __m256i {
        // vpshufb control: byte k of each dword to the dword's low byte, the
        // other three bytes zero (index with the top bit set).
        let sel = _mm256_setr_epi32(-256, -252, -248, -244, -256, -252, -248, -244);
        let e0 = _mm256_shuffle_epi8(raw, sel);
        let e1 = _mm256_shuffle_epi8(raw, _mm256_add_epi32(sel, _mm256_set1_epi32(1)));
        let e2 = _mm256_shuffle_epi8(raw, _mm256_add_epi32(sel, _mm256_set1_epi32(2)));
        let e3 = _mm256_shuffle_epi8(raw, _mm256_add_epi32(sel, _mm256_set1_epi32(3)));
        // SAFETY: every index is a byte (0..=255); each table has 256 entries.
        let (c0, c1, c2, c3) = unsafe {
            (
                _mm256_i32gather_epi32::<4>(B3_CODES.as_ptr() as *const i32, e0),
                _mm256_i32gather_epi32::<4>(B3_CODES_10.as_ptr() as *const i32, e1),
                _mm256_i32gather_epi32::<4>(B3_CODES_20.as_ptr() as *const i32, e2),
                _mm256_i32gather_epi32::<4>(B3_CODES.as_ptr() as *const i32, e3),
            )
        };
        // 30 bits of codes of bytes 0-2 (digits from the lane's phase on),
        // then byte 3's codes above them.
        let lo = _mm256_or_si256(_mm256_or_si256(c0, c1), c2);
        _mm256_or_si256(_mm256_srlv_epi32(lo, l.s1), _mm256_sllv_epi32(c3, l.s2))
    }
}

/// Table for 2-bit codes: 00 -> +0, 01 -> x, 10 -> +0, 11 -> -x (twice).
///
/// # Safety
/// AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn table2(x: f32) -> __m256 {
    let v = _mm256_xor_ps(_mm256_set1_ps(x), _mm256_setr_ps(0.0, 0.0, 0.0, -0.0, 0.0, 0.0, 0.0, -0.0));
    _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_setr_epi32(0, -1, 0, -1, 0, -1, 0, -1)))
}

/// Base-3 byte -> its five digits as 2-bit codes (digit 0 -> 11 (-1),
/// 1 -> 00, 2 -> 01), digit k at bits 2k, shifted left by `shift`. Bytes
/// above 242 decode digit by digit exactly like `matvec::decode`.
const fn base3_codes(shift: u32) -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let mut v = b as u32;
        let mut w = 0u32;
        let mut k = 0;
        while k < 5 {
            let code = match v % 3 {
                0 => 3,
                1 => 0,
                _ => 1,
            };
            w |= code << (2 * k);
            v /= 3;
            k += 1;
        }
        t[b] = w << shift;
        b += 1;
    }
    t
}

static B3_CODES: [u32; 256] = base3_codes(0);
static B3_CODES_10: [u32; 256] = base3_codes(10);
static B3_CODES_20: [u32; 256] = base3_codes(20);

/// Shift every lane right by BITS (2 or 3).
///
/// # Safety
/// AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn shift<const BITS: u32>(v: __m256i) -> __m256i {
    if BITS == 3 {
        _mm256_srli_epi32::<3>(v)
    } else {
        _mm256_srli_epi32::<2>(v)
    }
}
