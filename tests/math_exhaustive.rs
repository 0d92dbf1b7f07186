//! The integer fast path of expf/tanhf (src/math/fixed.rs) against the
//! binary64 routine it replaces on microcontrollers: identical bits
//! whenever the fast path answers. `fast_path_sampled` runs in the suite
//! (every 4099th bit pattern plus the edge classes);
//! `fast_path_all_inputs` (ignored, scripts/math_exhaustive.sh) runs all
//! 2^32 patterns on every hardware thread.

use atome::math::{expf_b64, expf_fast, tanhf_b64, tanhf_fast};

#[derive(Default, Debug, Clone, Copy)]
struct Counts {
    checked: u64,
    fast: u64,
    fallback: u64,
    /// Inputs the fast path covers (expf: |x| <= 87; tanhf: not NaN) and
    /// the fallbacks among them (results near a rounding boundary).
    in_range: u64,
    in_range_fallback: u64,
    mismatches: u64,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.checked += o.checked;
        self.fast += o.fast;
        self.fallback += o.fallback;
        self.in_range += o.in_range;
        self.in_range_fallback += o.in_range_fallback;
        self.mismatches += o.mismatches;
    }
}

/// Checks one bit pattern for both functions; prints the first mismatches.
fn check(bits: u32, ce: &mut Counts, ct: &mut Counts) {
    let x = f32::from_bits(bits);
    for (c, fast, slow, name, covered) in [
        (&mut *ce, expf_fast(x), expf_b64(x), "expf", x.abs() <= 87.0),
        (&mut *ct, tanhf_fast(x), tanhf_b64(x), "tanhf", !x.is_nan()),
    ] {
        c.checked += 1;
        c.in_range += covered as u64;
        match fast {
            None => {
                c.fallback += 1;
                c.in_range_fallback += covered as u64;
            }
            Some(f) => {
                c.fast += 1;
                if f.to_bits() != slow.to_bits() {
                    if c.mismatches < 8 {
                        eprintln!("{name}({x:e} = {bits:#010x}): fast {:#010x}, binary64 {:#010x}", f.to_bits(), slow.to_bits());
                    }
                    c.mismatches += 1;
                }
            }
        }
    }
}

/// Bit patterns of the edge classes, both signs: zeros, subnormals, the
/// normal extremes, infinities, NaNs, and a window of patterns around each
/// threshold of the two functions (expf's fast-path limit 87 and tiny
/// limit 2^-27, its overflow (88.72) and underflow (-87.34 normal limit,
/// -103.97 to zero) points and clamps (89, -104); tanhf's 1/4096, 1/16,
/// 20 and the point where it rounds to 1 (about 9.01)).
fn edge_patterns() -> Vec<u32> {
    let mut v = Vec::new();
    let around = |v: &mut Vec<u32>, x: f32| {
        let b = x.abs().to_bits() as i64;
        for d in -3000i64..=3000 {
            let p = (b + d).clamp(0, 0x7fff_ffff) as u32;
            v.push(p);
            v.push(p | 0x8000_0000);
        }
    };
    for p in 0..5000u32 {
        v.push(p); // zero and the smallest subnormals
        v.push(0x0080_0000 - p); // the largest subnormals
        v.push(0x7f80_0000 + p); // inf, then NaNs
        v.push(0x7fff_ffff - p); // NaNs
    }
    for x in [
        87.0f32, 1.0 / 134_217_728.0, 88.722_83, 87.336_55, 103.972_08, 89.0, 104.0, 1.0 / 4096.0, 1.0 / 16.0, 20.0,
        9.010_913, 1.0, 0.5, f32::MAX, f32::MIN_POSITIVE,
    ] {
        around(&mut v, x);
    }
    let n = v.len();
    for i in 0..n {
        v.push(v[i] ^ 0x8000_0000);
    }
    v
}

#[test]
fn fast_path_sampled() {
    let (mut ce, mut ct) = (Counts::default(), Counts::default());
    let mut bits = 0u32;
    loop {
        check(bits, &mut ce, &mut ct);
        match bits.checked_add(4099) {
            Some(b) => bits = b,
            None => break,
        }
    }
    for p in edge_patterns() {
        check(p, &mut ce, &mut ct);
    }
    eprintln!("expf {ce:?}\ntanhf {ct:?}");
    assert_eq!(ce.mismatches + ct.mismatches, 0);
    // The fast path must actually serve: a guard too wide (or a fast path
    // that always declines) would pass the bit check above vacuously.
    for c in [ce, ct] {
        assert!(c.in_range_fallback * 1000 < c.in_range, "{c:?}");
    }
    // Known values through the public functions.
    assert_eq!(atome::math::expf(0.0), 1.0);
    assert_eq!(expf_fast(1.0), Some(expf_b64(1.0)));
    assert_eq!(tanhf_fast(0.5), Some(tanhf_b64(0.5)));
}

#[test]
#[ignore = "all 2^32 inputs: scripts/math_exhaustive.sh"]
fn fast_path_all_inputs() {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let t0 = std::time::Instant::now();
    let chunk = (1u64 << 32) / threads + 1;
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            std::thread::spawn(move || {
                let (mut ce, mut ct) = (Counts::default(), Counts::default());
                let lo = i * chunk;
                let hi = ((i + 1) * chunk).min(1 << 32);
                for b in lo..hi {
                    check(b as u32, &mut ce, &mut ct);
                }
                (ce, ct)
            })
        })
        .collect();
    let (mut ce, mut ct) = (Counts::default(), Counts::default());
    for h in handles {
        let (e, t) = h.join().unwrap();
        ce.add(e);
        ct.add(t);
    }
    let secs = t0.elapsed().as_secs_f64();
    println!("math_exhaustive: {threads} threads, {secs:.1} s");
    for (name, c) in [("expf", ce), ("tanhf", ct)] {
        println!(
            "math_exhaustive: {name}: inputs checked {}, fast path {}, fallbacks {} (of which {} of the {} inputs the fast path covers), mismatches {}",
            c.checked, c.fast, c.fallback, c.in_range_fallback, c.in_range, c.mismatches
        );
    }
    assert_eq!(ce.checked, 1 << 32);
    assert_eq!(ct.checked, 1 << 32);
    assert_eq!(ce.mismatches + ct.mismatches, 0);
}

/// The q15 tanh_q30's 32-bit form against the contract's steps
/// (tanh_q30_steps) over all 2^32 patterns, one std thread per hardware
/// thread; mismatches found.
fn q15_tanh_mismatches(step: u64) -> u64 {
    use atome::q15::arith::{tanh_q30, tanh_q30_steps};
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let chunk = (1u64 << 32) / threads + 1;
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            std::thread::spawn(move || {
                let mut bad = 0u64;
                let lo = i * chunk;
                let hi = ((i + 1) * chunk).min(1 << 32);
                let mut b = lo.next_multiple_of(step);
                while b < hi {
                    let a = f32::from_bits(b as u32);
                    let (f, s) = (tanh_q30(a), tanh_q30_steps(a));
                    if f != s {
                        if bad < 8 {
                            eprintln!("tanh_q30({b:#010x}): {f}, steps {s}");
                        }
                        bad += 1;
                    }
                    b += step;
                }
                bad
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).sum()
}

#[test]
fn q15_tanh_sampled() {
    assert_eq!(q15_tanh_mismatches(4099), 0);
}

#[test]
#[ignore = "all 2^32 inputs: scripts/math_exhaustive.sh"]
fn q15_tanh_all_inputs() {
    let t0 = std::time::Instant::now();
    let bad = q15_tanh_mismatches(1);
    println!("math_exhaustive: q15 tanh_q30: inputs checked {}, mismatches {bad}, {:.1} s", 1u64 << 32, t0.elapsed().as_secs_f64());
    assert_eq!(bad, 0);
}

/// div61's two-division form against the 64-bit division, for u = lo,
/// lo + step, ... below 2^31; the mismatch count.
fn q15_div61_mismatches(step: u64) -> u64 {
    use atome::q15::arith::div61_words;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let chunk = (1u64 << 30) / threads + 1;
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            std::thread::spawn(move || {
                let mut bad = 0u64;
                let lo = (1u64 << 30) + i * chunk;
                let hi = ((1u64 << 30) + (i + 1) * chunk).min(1 << 31);
                let mut u = lo.next_multiple_of(step);
                while u < hi {
                    let (f, want) = (u64::from(div61_words(u as u32)), (1u64 << 61) / u);
                    if f != want {
                        if bad < 8 {
                            eprintln!("div61_words({u:#010x}): {f}, want {want}");
                        }
                        bad += 1;
                    }
                    u += step;
                }
                bad
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).sum()
}

#[test]
fn q15_div61_sampled() {
    // (Both ends of the range, then a stride.)
    assert_eq!(atome::q15::arith::div61_words(1 << 30), 1 << 31);
    assert_eq!(u64::from(atome::q15::arith::div61_words((1 << 31) - 1)), (1u64 << 61) / ((1 << 31) - 1));
    assert_eq!(q15_div61_mismatches(1021), 0);
}

#[test]
#[ignore = "every u in [2^30, 2^31): scripts/math_exhaustive.sh"]
fn q15_div61_all_inputs() {
    let t0 = std::time::Instant::now();
    let bad = q15_div61_mismatches(1);
    println!("math_exhaustive: q15 div61_words: inputs checked {}, mismatches {bad}, {:.1} s", 1u64 << 30, t0.elapsed().as_secs_f64());
    assert_eq!(bad, 0);
}
