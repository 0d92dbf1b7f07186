//! Differential test of the integer binary32 add and multiply
//! (src/kernels/device/sf.rs: `add_int`, `mul_int`, used outside the matvec
//! on cores without an FPU) against the host's hardware f32, bit for bit.
//! NaN results compare by NaN-ness only (the routines hand every NaN case
//! to the platform's own operation, whose payload rules differ between
//! architectures).
//!
//! Each pair is checked as a + b, a - b (the add with b negated), a * b,
//! a > b and b > a (`gt_int`), and c * a for c = -1, 0, +1 (`trit_times_int`).
//! SOFT_OPS_PAIRS sets the number of pairs (default 10^7 in release, 10^6
//! in debug builds); SOFT_OPS_SEED the seed; SOFT_OPS_THREADS the threads.
//! scripts/soft_add_long.sh runs 10^9 pairs.
use atome::forward::sample::SplitMix64;
use atome::kernels::device::sf::{add_int, gt_int, mul_int, trit_times_int};
use proptest::prelude::*;

#[path = "common/pairs.rs"]
mod pairs;
use pairs::differential;

fn same(want: f32, got: f32) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else {
        want.to_bits() == got.to_bits()
    }
}

const SPECIAL: [u32; 16] = [
    0x0000_0000, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0x7fa0_0001, 0x7f7f_ffff, 0xff7f_ffff,
    0x0080_0000, 0x8080_0000, 0x0000_0001, 0x8000_0001, 0x007f_ffff, 0x3f80_0000, 0xbf80_0000, 0x4b80_0000,
];

/// A float of sign s, biased exponent e (0..=255) and 23-bit fraction f.
fn mk(s: u64, e: u64, f: u64) -> u32 {
    ((s as u32 & 1) << 31) | ((e as u32 & 0xff) << 23) | (f as u32 & 0x7f_ffff)
}

/// A fraction with few significant bits (exact products and sums, ties).
fn short(x: u64, z: u64) -> u64 {
    (x >> 8) & !((1u64 << (z % 24)) - 1)
}

/// One pair from one of the edge-case classes (or plain random bits).
fn pair(r: &mut SplitMix64) -> (f32, f32) {
    let class = r.next_u64() % 14;
    let x = r.next_u64();
    let y = r.next_u64();
    let z = r.next_u64();
    let (a, b) = match class {
        // Any bits: every class, NaNs and infinities included.
        0 => (x as u32, y as u32),
        // Finite, exponent difference 0..=40 (alignment, sticky bits, ties).
        1 => {
            let ea = 1 + x % 254;
            let d = (z >> 8) % 41;
            let eb = ea.saturating_sub(d).max(if z & 1 == 0 { 0 } else { 1 });
            (mk(x >> 40, ea, x >> 8), mk(y >> 40, eb, y >> 8))
        }
        // Exact cancellation and near-cancellation: b = -a + a few ulps.
        2 => {
            let a = (x as u32) & 0x7f7f_ffff | ((x >> 40) as u32 & 1) << 31;
            let delta = (y % 9) as i64 - 4;
            (a, ((a ^ 0x8000_0000) as i64 + delta) as u32)
        }
        // Add ties: b has few significant bits, 23..=26 binades below a.
        3 => {
            let ea = 27 + x % 227;
            let d = 23 + (z >> 8) % 4;
            let frac = [0, 1 << 22, 1, y >> 8][((z >> 16) % 4) as usize];
            let a_frac = [x >> 8, 0x7f_ffff, 0][((z >> 24) % 3) as usize];
            (mk(x >> 40, ea, a_frac), mk(y >> 40, ea - d, frac))
        }
        // Subnormals and the smallest normals.
        4 => (mk(x >> 40, x % 3, x >> 8), mk(y >> 40, y % 3, y >> 8)),
        // Near overflow: the largest binades.
        5 => (mk(x >> 40, 250 + x % 5, x >> 8), mk(if z & 1 == 0 { x >> 40 } else { y >> 40 }, 250 + y % 5, y >> 8)),
        // A special value against anything.
        6 => (SPECIAL[(x % 16) as usize], if z & 1 == 0 { y as u32 } else { SPECIAL[(y % 16) as usize] }),
        // Same or adjacent exponent, opposite signs: massive cancellation.
        7 => {
            let ea = 1 + x % 254;
            let eb = (ea + z % 3).saturating_sub(1).min(254);
            (mk(0, ea, x >> 8), mk(1, eb, y >> 8))
        }
        // The forward pass's magnitudes: exponents near 127, short mantissas.
        8 => (mk(x >> 40, 112 + x % 24, short(x, z)), mk(y >> 40, 112 + y % 24, short(y, z >> 8))),
        // Sums landing on binade edges: a = 2^k +- small.
        9 => {
            let ea = 2 + x % 250;
            let a = mk(x >> 40, ea, if z & 1 == 0 { 0 } else { 0x7f_ffff });
            let eb = ea.saturating_sub((y >> 8) % 30).max(1);
            (a, mk(y >> 40, eb, y >> 16))
        }
        // Products near the overflow threshold (exponent sum ~ 254 + 127).
        10 => {
            let ea = 127 + x % 128;
            let eb = (381 - ea + (z % 5)).saturating_sub(2).min(254);
            (mk(x >> 40, ea, x >> 8), mk(y >> 40, eb, y >> 8))
        }
        // Products near and below the smallest normal (exponent sum ~ 127).
        11 => {
            let ea = 1 + x % 126;
            let eb = (127 + 30 - ea).saturating_sub((z >> 8) % 34).max(1);
            (mk(x >> 40, ea, x >> 8), mk(y >> 40, eb, y >> 8))
        }
        // Product rounding ties and round-ups into the next binade: all-ones
        // and short mantissas.
        12 => {
            let fa = [0x7f_ffff, 0x7f_fffe, 1 << 22, short(x, z)][(z % 4) as usize];
            let fb = [0x7f_ffff, 1, (1 << 22) | 1, short(y, z >> 8)][((z >> 4) % 4) as usize];
            (mk(x >> 40, 100 + x % 56, fa), mk(y >> 40, 100 + y % 56, fb))
        }
        // Random finite floats.
        _ => (mk(x >> 40, x % 255, x >> 8), mk(y >> 40, y % 255, y >> 8)),
    };
    let (a, b) = if z >> 63 == 1 { (b, a) } else { (a, b) };
    (f32::from_bits(a), f32::from_bits(b))
}

fn check(a: f32, b: f32) -> Option<String> {
    let got = add_int(a, b);
    if !same(a + b, got) {
        return Some(format!("add_int({:#010x}, {:#010x}) = {:#010x}, hardware {:#010x}", a.to_bits(), b.to_bits(), got.to_bits(), (a + b).to_bits()));
    }
    let got = add_int(a, -b);
    if !same(a - b, got) {
        return Some(format!("add_int({:#010x}, -{:#010x}) = {:#010x}, hardware {:#010x}", a.to_bits(), b.to_bits(), got.to_bits(), (a - b).to_bits()));
    }
    let got = mul_int(a, b);
    if !same(a * b, got) {
        return Some(format!("mul_int({:#010x}, {:#010x}) = {:#010x}, hardware {:#010x}", a.to_bits(), b.to_bits(), got.to_bits(), (a * b).to_bits()));
    }
    if gt_int(a, b) != (a > b) || gt_int(b, a) != (b > a) {
        return Some(format!("gt_int({:#010x}, {:#010x}) differs from the hardware compare", a.to_bits(), b.to_bits()));
    }
    for c in [-1i8, 0, 1] {
        let (got, want) = (trit_times_int(c, a), c as f32 * a);
        if !same(want, got) {
            return Some(format!("trit_times_int({c}, {:#010x}) = {:#010x}, hardware {:#010x}", a.to_bits(), got.to_bits(), want.to_bits()));
        }
    }
    None
}

#[test]
fn differential_against_hardware() {
    differential("SOFT_OPS", 0x50f7_0b5e, "soft_ops", "x8 checks: a+b, a-b, a*b, a>b, b>a, {-1,0,1}*a", pair, check);
}

/// Every pair of a small exhaustive grid of edge values, both orders.
#[test]
fn edge_grid() {
    let mut vals: Vec<u32> = SPECIAL.to_vec();
    for e in [0u64, 1, 2, 3, 23, 24, 25, 63, 64, 126, 127, 128, 151, 152, 190, 191, 253, 254] {
        for f in [0u64, 1, 2, 0x40_0000, 0x40_0001, 0x3f_ffff, 0x7f_fffe, 0x7f_ffff] {
            vals.push(mk(0, e, f));
            vals.push(mk(1, e, f));
        }
    }
    let mut bad = Vec::new();
    for &a in &vals {
        for &b in &vals {
            if let Some(m) = check(f32::from_bits(a), f32::from_bits(b)) {
                bad.push(m);
            }
        }
    }
    assert!(bad.is_empty(), "{} mismatches, first: {:#?}", bad.len(), &bad[..bad.len().min(10)]);
}

fn finite() -> impl Strategy<Value = f32> {
    any::<u32>().prop_map(f32::from_bits).prop_filter("finite", |x| x.is_finite())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    /// Both routines equal the hardware for any bits.
    #[test]
    fn equals_hardware(a in any::<u32>(), b in any::<u32>()) {
        let (a, b) = (f32::from_bits(a), f32::from_bits(b));
        prop_assert!(check(a, b).is_none(), "{}", check(a, b).unwrap());
    }

    /// Commutative, x + (-x) = +0.0, x * 1 = x, x * -1 = -x.
    #[test]
    fn algebra(a in finite(), b in finite()) {
        prop_assert_eq!(add_int(a, b).to_bits(), add_int(b, a).to_bits());
        prop_assert_eq!(mul_int(a, b).to_bits(), mul_int(b, a).to_bits());
        prop_assert_eq!(add_int(a, -a).to_bits(), 0);
        prop_assert_eq!(mul_int(a, 1.0).to_bits(), a.to_bits());
        prop_assert_eq!(mul_int(a, -1.0).to_bits(), (-a).to_bits());
    }
}
