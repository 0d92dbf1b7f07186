//! The differential harness of the soft-float tests (tests/soft_add.rs,
//! tests/soft_ops.rs): `n` operand pairs from a seeded generator, split over
//! threads, each checked; returns the count and up to 10 mismatch messages
//! per thread. Included with `#[path]` by the tests that use it.
use atome::forward::sample::SplitMix64;

/// A whole number from the environment variable `name`, if set.
pub fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.parse().ok())
}

/// Runs `check` on `n` pairs drawn by `pair` (thread t seeded with
/// `seed ^ t * golden ratio`), on `threads` threads.
pub fn run_pairs(
    n: u64,
    seed: u64,
    threads: u64,
    pair: fn(&mut SplitMix64) -> (f32, f32),
    check: fn(f32, f32) -> Option<String>,
) -> (u64, Vec<String>) {
    let threads = threads.max(1);
    let res: Vec<(u64, Vec<String>)> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                sc.spawn(move || {
                    let mut r = SplitMix64(seed ^ t.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                    let (mut count, mut bad) = (0u64, Vec::new());
                    for _ in (t..n).step_by(threads as usize) {
                        let (a, b) = pair(&mut r);
                        if let Some(m) = check(a, b) {
                            if bad.len() < 10 {
                                bad.push(m);
                            }
                        }
                        count += 1;
                    }
                    (count, bad)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total = res.iter().map(|f| f.0).sum();
    (total, res.into_iter().flat_map(|f| f.1).collect())
}
