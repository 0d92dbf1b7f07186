//! Sampled decoding (docs/CONTRACT.md): temperature, top-k, top-p, splitmix64.
//! Works on the logits in place order without any buffer: the descending
//! order (value, then lower index first) is walked by repeated scans.
// `!(a > b)` is meant: it is true when either side is NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
use crate::kernels::argmax;
use crate::math::expf;

/// splitmix64: small, fast, and the same sequence on every target.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform f32 in [0, 1) with 24 random bits.
    pub fn uniform(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / 16_777_216.0)
    }
}

/// Sampling parameters.
#[derive(Clone, Copy, Debug)]
pub struct Sampling {
    /// <= 0 or NaN: greedy.
    pub temperature: f32,
    /// Keep the top_k most likely when 1 <= top_k < V.
    pub top_k: i32,
    /// Nucleus mass in (0, 1); otherwise off.
    pub top_p: f32,
}

/// The entry after `prev` in descending order (z desc, index asc); NaN never comes.
fn next_in_order(z: &impl Fn(usize) -> f32, v: usize, prev: Option<(f32, usize)>) -> Option<(f32, usize)> {
    let mut best: Option<(f32, usize)> = None;
    for i in 0..v {
        let zi = z(i);
        if zi.is_nan() {
            continue;
        }
        if let Some((pz, pi)) = prev {
            if !(zi < pz || (zi == pz && i > pi)) {
                continue;
            }
        }
        match best {
            Some((bz, _)) if !(zi > bz) => {}
            _ => best = Some((zi, i)),
        }
    }
    best
}

/// Picks a token from `logits` with uniform draw `u` in [0, 1).
pub fn pick(logits: &[f32], p: &Sampling, u: f32) -> usize {
    let v = logits.len();
    if !(p.temperature > 0.0) {
        return argmax(logits);
    }
    let t = p.temperature;
    let z = |i: usize| logits.get(i).map_or(f32::NAN, |&l| l / t);
    let kcount = if p.top_k >= 1 && (p.top_k as usize) < v { p.top_k as usize } else { v };
    let Some((m, _)) = next_in_order(&z, v, None) else { return argmax(logits) };
    // Z over the top-k set, in order.
    let mut sum = 0.0f32;
    let mut kept = 0;
    let mut cur = None;
    while kept < kcount {
        let Some(e) = next_in_order(&z, v, cur) else { break };
        sum += expf(e.0 - m);
        cur = Some(e);
        kept += 1;
    }
    // Nucleus.
    let mut nset = kept;
    if p.top_p > 0.0 && p.top_p < 1.0 {
        let lim = p.top_p * sum;
        let mut c = 0.0f32;
        let mut cur = None;
        nset = 0;
        while nset < kept {
            let Some(e) = next_in_order(&z, v, cur) else { break };
            if nset > 0 && !(c < lim) {
                break;
            }
            c += expf(e.0 - m);
            cur = Some(e);
            nset += 1;
        }
    }
    let mut zp = 0.0f32;
    let mut cur = None;
    for _ in 0..nset {
        let Some(e) = next_in_order(&z, v, cur) else { break };
        zp += expf(e.0 - m);
        cur = Some(e);
    }
    if !(zp > 0.0) || !zp.is_finite() {
        return argmax(logits);
    }
    let target = u * zp;
    let mut c = 0.0f32;
    let mut cur = None;
    let mut last = 0;
    for _ in 0..nset {
        let Some(e) = next_in_order(&z, v, cur) else { break };
        c += expf(e.0 - m);
        last = e.1;
        if target < c {
            return e.1;
        }
        cur = Some(e);
    }
    last
}

/// The token choice of atome_generate_sampled, for a generation loop: one
/// splitmix64 draw from `seed` per token, or exactly the greedy token when
/// the temperature is not above 0.
pub fn sampled_pick(p: &Sampling, seed: u64) -> impl FnMut(usize, &[f32]) -> usize + '_ {
    let mut rng = SplitMix64(seed);
    move |greedy, logits| if p.temperature > 0.0 { pick(logits, p, rng.uniform()) } else { greedy }
}
