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

/// The differential test of a soft-float module: `{var}_PAIRS` pairs
/// (default 10^7, 10^6 in debug builds), seed `{var}_SEED` (default
/// `seed`), `{var}_THREADS` threads; prints the figures as `label: N pairs
/// (checks), ...` and fails on any mismatch.
pub fn differential(var: &str, seed: u64, label: &str, checks: &str, pair: fn(&mut SplitMix64) -> (f32, f32), check: fn(f32, f32) -> Option<String>) {
    let n = env_u64(&format!("{var}_PAIRS")).unwrap_or(if cfg!(debug_assertions) { 1_000_000 } else { 10_000_000 });
    let seed = env_u64(&format!("{var}_SEED")).unwrap_or(seed);
    let threads = env_u64(&format!("{var}_THREADS")).unwrap_or(1).max(1);
    let t0 = std::time::Instant::now();
    let (total, bad) = run_pairs(n, seed, threads, pair, check);
    eprintln!(
        "{label}: {total} pairs ({checks}), seed {seed:#x}, {threads} thread(s), {:.1} s, {} mismatch(es)",
        t0.elapsed().as_secs_f64(),
        bad.len()
    );
    assert_eq!(total, n);
    assert!(bad.is_empty(), "mismatches: {bad:#?}");
}
