//! Differential test of the software f32 add (src/kernels/device/soft.rs)
//! against the host's hardware f32 add, bit for bit. NaN results compare by
//! NaN-ness only (payloads are the platform's; the matvec never lets a NaN
//! into the software path).
//!
//! Each pair is checked three ways: `add_f32(a, b)` (the general add),
//! `add_step(a, b, false)` = a + b and `add_step(a, b, true)` = a - b (the
//! matvec's inner step with its fast path).
//!
//! SOFT_ADD_PAIRS sets the number of pairs (default 10^7 in release, 10^6 in
//! debug builds); SOFT_ADD_SEED the seed. scripts/soft_add_long.sh runs
//! 10^9+ pairs over several threads.
use atome::forward::sample::SplitMix64;
use atome::kernels::device::soft::{add, add_f32, add_step, add_step_words, pack, unpack};
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

/// One pair from one of the edge-case classes (or plain random bits).
fn pair(r: &mut SplitMix64) -> (f32, f32) {
    let class = r.next_u64() % 12;
    let x = r.next_u64();
    let y = r.next_u64();
    let z = r.next_u64();
    let (a, b) = match class {
        // Any bits: every class, NaNs and infinities included.
        0 => (x as u32, y as u32),
        // Finite, exponent difference 0..=40 (alignment, sticky bits, ties).
        1 | 2 => {
            let ea = 1 + x % 254;
            let d = (z >> 8) % 41;
            let eb = ea.saturating_sub(d).max(if z & 1 == 0 { 0 } else { 1 });
            (mk(x >> 40, ea, x >> 8), mk(y >> 40, eb, y >> 8))
        }
        // Exact cancellation and near-cancellation: b = -a + a few ulps.
        3 => {
            let a = (x as u32) & 0x7f7f_ffff | ((x >> 40) as u32 & 1) << 31;
            let delta = (y % 9) as i64 - 4;
            let nb = ((a ^ 0x8000_0000) as i64 + delta) as u32;
            (a, nb)
        }
        // Ties: b has few significant bits, 23..=26 binades below a.
        4 => {
            let ea = 27 + x % 227;
            let d = 23 + (z >> 8) % 4;
            let frac = match (z >> 16) % 4 {
                0 => 0,
                1 => 1 << 22,
                2 => 1,
                _ => y >> 8,
            };
            let a_frac = match (z >> 24) % 3 {
                0 => x >> 8,
                1 => 0x7f_ffff,
                _ => 0,
            };
            (mk(x >> 40, ea, a_frac), mk(y >> 40, ea - d, frac))
        }
        // Subnormals and the smallest normals.
        5 => (mk(x >> 40, x % 3, x >> 8), mk(y >> 40, y % 3, y >> 8)),
        // Near overflow: the largest binades, often the same sign.
        6 => (mk(x >> 40, 250 + x % 5, x >> 8), mk(if z & 1 == 0 { x >> 40 } else { y >> 40 }, 250 + y % 5, y >> 8)),
        // A special value against anything.
        7 => (SPECIAL[(x % 16) as usize], if z & 1 == 0 { y as u32 } else { SPECIAL[(y % 16) as usize] }),
        // Same or adjacent exponent, opposite signs: massive cancellation.
        8 => {
            let ea = 1 + x % 254;
            let eb = (ea + z % 3).saturating_sub(1).min(254);
            (mk(0, ea, x >> 8), mk(1, eb, y >> 8))
        }
        // Accumulator-like: moderate exponents near each other, short mantissas.
        9 => {
            let ea = 120 + x % 16;
            let eb = 120 + y % 16;
            (mk(x >> 40, ea, (x >> 8) & !((1 << (z % 24)) - 1)), mk(y >> 40, eb, y >> 8))
        }
        // Sums landing exactly on binade edges: a = 2^k +- small.
        10 => {
            let ea = 2 + x % 250;
            let a = mk(x >> 40, ea, if z & 1 == 0 { 0 } else { 0x7f_ffff });
            let eb = ea.saturating_sub((y >> 8) % 30).max(1);
            (a, mk(y >> 40, eb, y >> 16))
        }
        // Random finite floats.
        _ => (mk(x >> 40, x % 255, x >> 8), mk(y >> 40, y % 255, y >> 8)),
    };
    let (a, b) = if z >> 63 == 1 { (b, a) } else { (a, b) };
    (f32::from_bits(a), f32::from_bits(b))
}

fn check(a: f32, b: f32) -> Option<String> {
    let want = a + b;
    let got = add_f32(a, b);
    if !same(want, got) {
        return Some(format!("add_f32({a:e} {:#010x}, {b:e} {:#010x}) = {:#010x}, hardware {:#010x}", a.to_bits(), b.to_bits(), got.to_bits(), want.to_bits()));
    }
    let got = add_step(a, b, false);
    if !same(want, got) {
        return Some(format!("add_step({:#010x} + {:#010x}) = {:#010x}, hardware {:#010x}", a.to_bits(), b.to_bits(), got.to_bits(), want.to_bits()));
    }
    let want = a - b;
    let got = add_step(a, b, true);
    if !same(want, got) {
        return Some(format!("add_step({:#010x} - {:#010x}) = {:#010x}, hardware {:#010x}", a.to_bits(), b.to_bits(), got.to_bits(), want.to_bits()));
    }
    // The matvec's word path (the Rust twin of the Thumb-1 loop), with the
    // exponents folded into its window so most pairs take it: the
    // accumulator's into [96, 251], the term's into [96, 159].
    let (fa, fb) = (fold(a, 156), fold(b, 64));
    for neg in [false, true] {
        let want = if neg { fa - fb } else { fa + fb };
        let got = add_step_words(fa, fb, neg);
        if !same(want, got) {
            let op = if neg { '-' } else { '+' };
            return Some(format!("add_step_words({:#010x} {op} {:#010x}) = {:#010x}, hardware {:#010x}", fa.to_bits(), fb.to_bits(), got.to_bits(), want.to_bits()));
        }
    }
    None
}

/// A normal x with its exponent moved to 96 + (e mod span); other values
/// as they are.
fn fold(x: f32, span: u32) -> f32 {
    let b = x.to_bits();
    let e = (b >> 23) & 0xff;
    if e == 0 || e == 0xff {
        return x;
    }
    f32::from_bits((b & 0x807f_ffff) | ((96 + e % span) << 23))
}

#[test]
fn differential_against_hardware() {
    differential("SOFT_ADD", 0x50f7_add5, "soft_add", "x5 checks: add_f32, a+b and a-b steps, word path a+b and a-b", pair, check);
}

/// Every pair of a small exhaustive grid of edge values, both orders.
#[test]
fn edge_grid() {
    let mut vals: Vec<u32> = SPECIAL.to_vec();
    for e in [0u64, 1, 2, 23, 24, 25, 126, 127, 128, 151, 152, 253, 254] {
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

#[test]
fn unpack_pack_round_trip() {
    let mut r = SplitMix64(7);
    for _ in 0..1_000_000 {
        let x = f32::from_bits(r.next_u64() as u32);
        match unpack(x) {
            None => assert!(!x.is_finite()),
            Some(u) if x == 0.0 => assert_eq!(pack(u).to_bits(), 0),
            Some(u) => assert_eq!(pack(u).to_bits(), x.to_bits()),
        }
    }
}

fn finite() -> impl Strategy<Value = f32> {
    any::<u32>().prop_map(f32::from_bits).prop_filter("finite", |x| x.is_finite())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    /// The software sum equals the hardware sum for any bits.
    #[test]
    fn equals_hardware(a in any::<u32>(), b in any::<u32>()) {
        let (a, b) = (f32::from_bits(a), f32::from_bits(b));
        prop_assert!(check(a, b).is_none(), "{}", check(a, b).unwrap());
    }

    /// Commutative, and x + (-x) is +0.0.
    #[test]
    fn commutes_and_cancels(a in finite(), b in finite()) {
        prop_assert_eq!(add_f32(a, b).to_bits(), add_f32(b, a).to_bits());
        prop_assert_eq!(add_f32(a, -a).to_bits(), 0);
        prop_assert_eq!(add_step(a, a, true).to_bits(), 0);
    }

    /// Adding zero changes nothing (except -0 + +0 = +0).
    #[test]
    fn zero_is_identity(a in finite()) {
        prop_assume!(a != 0.0);
        prop_assert_eq!(add_f32(a, 0.0).to_bits(), a.to_bits());
        prop_assert_eq!(add_f32(-0.0, a).to_bits(), a.to_bits());
    }

    /// The unpacked add agrees with packing the hardware sum (None = overflow).
    #[test]
    fn unpacked_add(a in finite(), b in finite()) {
        let (ua, ub) = (unpack(a).unwrap(), unpack(b).unwrap());
        let want = a + b;
        match add(ua, ub) {
            Some(s) => prop_assert_eq!(pack(s).to_bits(), if want == 0.0 { 0 } else { want.to_bits() }),
            None => prop_assert!(want.is_infinite()),
        }
    }
}
