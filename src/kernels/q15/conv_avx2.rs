//! The q15 engine's depthwise conv for K = 5 Trit2 (the models' shape) on
//! x86-64 with AVX2, eight channels a step: the exact sums
//! L_c = sum_k w(c, k) rshr(x_k[c], s_k) of one position, where channel c's
//! five 2-bit codes are bits 10c..10c+9 of the payload (tap k at 10c + 2k;
//! 01: +1, 11: -1, 00 and 10: 0). The engine's own loop (`conv_sums`) does
//! the same sums one channel at a time everywhere else; integer sums, so
//! the same bits by construction (and the q15 parity tests compare).
use core::arch::x86_64::*;

/// One position's inputs: the five tap rows (x_k, k = 0 the newest), each
/// tap's rounding (x + a_k) >> s_k (a_k = 2^(s_k - 1) or 0), and `mask`,
/// whose code bits 2k..2k+1 are set for the taps that count.
pub struct Taps<'a> {
    /// Tap rows.
    pub rows: [&'a [i16]; 5],
    /// Rounding addends.
    pub a: [i32; 5],
    /// Shifts (0..=16).
    pub s: [u32; 5],
    /// Enabled code bits (3 << 2k for tap k).
    pub mask: u32,
}

/// The sums of every channel into `out` (out.len() channels); OR of their
/// magnitudes. None (nothing written) when a row is shorter than `out`.
/// Missing payload bytes read as 0.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn conv5_avx2(data: &[u8], t: &Taps, out: &mut [i32]) -> Option<u32> {
    let n = out.len();
    if t.rows.iter().any(|r| r.len() < n) {
        return None;
    }
    // Lane i (channel c0 + i) wants payload bytes 10i/8 and the next, its
    // codes at bit 10i % 8 of them.
    let pick = _mm256_setr_epi8(
        0, 1, -1, -1, 1, 2, -1, -1, 2, 3, -1, -1, 3, 4, -1, -1, //
        5, 6, -1, -1, 6, 7, -1, -1, 7, 8, -1, -1, 8, 9, -1, -1,
    );
    let bitsh = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    // Code -> weight (vpermd reads the low three bits; the third is the
    // next tap's, so the table repeats).
    let lut = _mm256_setr_epi32(0, 1, 0, -1, 0, 1, 0, -1);
    let mask = _mm256_set1_epi32(t.mask as i32);
    let a: [__m256i; 5] = core::array::from_fn(|k| _mm256_set1_epi32(t.a[k]));
    let s: [__m128i; 5] = core::array::from_fn(|k| _mm_cvtsi32_si128(t.s[k] as i32));
    let shifted = t.s.iter().any(|&s| s > 0);
    // Eight channels from 16 payload bytes and five rows of eight.
    let step = |src: &[u8; 16], xs: [&[i16; 8]; 5]| -> __m256i {
        // SAFETY: each pointer reads the 16 bytes of its array.
        unsafe {
            let b = _mm256_broadcastsi128_si256(_mm_loadu_si128(src.as_ptr().cast()));
            let v = _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(b, pick), bitsh), mask);
            let mut acc = _mm256_setzero_si256();
            macro_rules! tap {
                ($k:literal) => {{
                    let x = _mm256_cvtepi16_epi32(_mm_loadu_si128(xs[$k].as_ptr().cast()));
                    let x = if shifted { _mm256_sra_epi32(_mm256_add_epi32(x, a[$k]), s[$k]) } else { x };
                    let w = _mm256_permutevar8x32_epi32(lut, _mm256_srli_epi32::<{ 2 * $k }>(v));
                    acc = _mm256_add_epi32(acc, _mm256_sign_epi32(x, w));
                }};
            }
            tap!(0);
            tap!(1);
            tap!(2);
            tap!(3);
            tap!(4);
            acc
        }
    };
    let mut mxv = _mm256_setzero_si256();
    let mut c0 = 0;
    while c0 < n {
        let at = 10 * c0 / 8;
        let m = (n - c0).min(8);
        let acc = match (data.get(at..at + 16), m == 8) {
            (Some(src), true) => {
                let src: &[u8; 16] = src.try_into().ok()?;
                let xs: [&[i16; 8]; 5] = core::array::from_fn(|k| t.rows[k][c0..c0 + 8].try_into().unwrap_or(&[0; 8]));
                step(src, xs)
            }
            _ => {
                // The last channels (or payload): zero-padded copies.
                let mut src = [0u8; 16];
                for (d, &b) in src.iter_mut().zip(data.get(at..).unwrap_or(&[])) {
                    *d = b;
                }
                let mut rows = [[0i16; 8]; 5];
                for (r, row) in rows.iter_mut().zip(t.rows) {
                    r[..m].copy_from_slice(&row[c0..c0 + m]);
                }
                step(&src, [&rows[0], &rows[1], &rows[2], &rows[3], &rows[4]])
            }
        };
        match out.get_mut(c0..c0 + 8) {
            // SAFETY: 8 writable int32.
            Some(o) => unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), acc) },
            None => {
                let mut lanes = [0i32; 8];
                // SAFETY: 32 writable bytes.
                unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), acc) };
                out[c0..c0 + m].copy_from_slice(&lanes[..m]);
            }
        }
        mxv = _mm256_or_si256(mxv, _mm256_abs_epi32(acc));
        c0 += 8;
    }
    let mut lanes = [0u32; 8];
    // SAFETY: 32 writable bytes.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), mxv) };
    Some(lanes.iter().fold(0, |m, &l| m | l))
}
