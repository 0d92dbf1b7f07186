//! The naive matvec the differential tests compare the kernels against,
//! written from the format and arithmetic text (docs/ARITHMETIC.md, ATOMEP3 in
//! docs/CONTRACT.md), and the float strategies they draw inputs from.
// Written as the contract states it: `acc = acc + x`.
#![allow(clippy::assign_op_pattern)]
#![allow(dead_code)]
use atome::format::Packing;
use proptest::prelude::*;

/// Output filler that a kernel must leave alone outside its results.
pub const SENTINEL: u32 = 0x7fc0_dead;

/// The AVX2 proof token, when this CPU has AVX2. Without it the fast-path
/// tests have nothing to test: they skip outside CI and fail with CI=true
/// (CI runs on x86-64 machines with AVX2, where this path is the one used).
#[cfg(not(atome_portable))]
pub fn avx2_or_skip(test: &str) -> Option<atome::kernels::x86::Avx2> {
    let cpu = atome::kernels::x86::Avx2::detect();
    if cpu.is_none() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{test}: no AVX2 on this CPU, so the x86-64 fast path is untested (CI=true)");
        }
        eprintln!("SKIP {test}: no AVX2 on this CPU");
    }
    cpu
}

/// Weight number k of a packed payload, decoded from the format text.
/// Bytes missing from a short payload read as weight 0.
pub fn naive_weight(p: Packing, data: &[u8], k: usize) -> i32 {
    match p {
        // ATOME01: 4 trits a byte, trit k%4 in bits 2(k%4)..: 00 0, 01 +1, 11 -1, 10 0.
        Packing::Trit2 => match data.get(k / 4) {
            Some(&b) => match (b >> (2 * (k % 4))) & 3 {
                1 => 1,
                3 => -1,
                _ => 0,
            },
            None => 0,
        },
        // ATOME02: 5 trits a byte in base 3, trit k%5 is digit k%5; digit - 1.
        Packing::Base3 => match data.get(k / 5) {
            Some(&b) => {
                let digit = (b as u32 / 3u32.pow((k % 5) as u32)) % 3;
                digit as i32 - 1
            }
            None => 0,
        },
        // ATOMEP3: 8 3-bit codes in 3 bytes (little-endian 24-bit group),
        // code k%8 at bits 3(k%8); codes 0..7 -> 0, 1, -1, 3, -3, 9, -9, 0.
        Packing::P3 => {
            let g = 3 * (k / 8);
            match data.get(g..g + 3) {
                Some(s) => {
                    let word = s[0] as u32 | (s[1] as u32) << 8 | (s[2] as u32) << 16;
                    [0, 1, -1, 3, -3, 9, -9, 0][((word >> (3 * (k % 8))) & 7) as usize]
                }
                None => 0,
            }
        }
    }
}

/// y = W x for one vector, naively.
pub fn naive_row(p: Packing, data: &[u8], rows: usize, cols: usize, scale: f32, x: &[f32], j: usize) -> f32 {
    assert!(j < rows);
    let mut acc = 0.0f32;
    for (i, &xi) in x.iter().enumerate().take(cols) {
        match naive_weight(p, data, j * cols + i) {
            0 => {}
            1 => acc = acc + xi,
            -1 => acc = acc - xi,
            w => acc = acc + (w as f32) * xi,
        }
    }
    acc * scale
}

pub fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Floats that stress the arithmetic: zeros of both signs, subnormals,
/// infinities, NaNs with payloads, huge, tiny, ordinary, any bit pattern.
pub fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => -4.0f32..4.0,
        2 => -1.0e6f32..1.0e6,
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
        1 => (1u32..0x0080_0000, any::<bool>()).prop_map(|(m, s)| f32::from_bits(m | if s { 0x8000_0000 } else { 0 })),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => (0u32..0x0040_0000, any::<bool>(), any::<bool>())
            .prop_map(|(m, s, q)| f32::from_bits(0x7f80_0001 | m | if q { 0x0040_0000 } else { 0 } | if s { 0x8000_0000 } else { 0 })),
        1 => prop_oneof![Just(f32::MAX), Just(f32::MIN), Just(3.0e38f32), Just(-2.9e38f32), Just(1.7e38f32)],
        1 => -1.0e-30f32..1.0e-30,
        1 => any::<u32>().prop_map(f32::from_bits),
    ]
}

pub fn scale() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => -2.0f32..2.0,
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
        1 => Just(-1.0f32),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(f32::NAN),
        1 => Just(1.0e30f32),
        1 => Just(1.0e-30f32),
    ]
}

