//! The key cache and key scoring: one scoring routine for every layout and
//! lane type.
//!
//! A position's key (DH floats) is stored in one of two layouts:
//! [`Rows`] (S rows of DH: projections write it in place, scoring reads it
//! with plain dots) or [`Transposed`] (DH rows of S: N consecutive keys'
//! components are N consecutive floats, so scoring vectorizes across keys).
//! [`score_keys`] is the one scoring routine: it walks the keys N at a
//! time, asks the layout for their dot products with the query
//! ([`KeyLayout::dots`]: each key's own sequential sum over its components,
//! whatever the order the layout reads them in, so the same bits) and keeps
//! the top slots.
use super::attention::{clear_slots, insert};
use super::device::sf;
use super::lanes::Lanes;

/// A key cache's shape: floats per key and keys held.
#[derive(Clone, Copy)]
pub struct Shape {
    dh: usize,
    count: usize,
}

/// A cache of keys in one of the two layouts (`TRANSPOSED`: [`Transposed`],
/// else [`Rows`]).
#[derive(Clone, Copy)]
pub struct Keys<const TRANSPOSED: bool>(Shape);

/// What both layouts are: a shape.
pub trait Shaped: Copy {
    /// The layout of a cache of this shape.
    fn of(shape: Shape) -> Self;
    /// Its shape.
    fn shape(self) -> Shape;
}

impl<const T: bool> Shaped for Keys<T> {
    #[inline(always)]
    fn of(shape: Shape) -> Self {
        Keys(shape)
    }
    #[inline(always)]
    fn shape(self) -> Shape {
        self.0
    }
}

/// How keys are laid out in a cache, and how a group of them is read.
pub trait KeyLayout: Shaped {
    /// The layout of a cache of `len` floats holding keys of `dh` floats.
    #[inline(always)]
    fn new(len: usize, dh: usize) -> Self {
        Self::of(Shape { dh, count: len.checked_div(dh).unwrap_or(0) })
    }
    /// Floats per key.
    #[inline(always)]
    fn dh(self) -> usize {
        self.shape().dh
    }
    /// Keys the cache holds.
    #[inline(always)]
    fn count(self) -> usize {
        self.shape().count
    }
    /// Lane j (< nb) holds key j0+j's dot product with q (the first DH
    /// floats of it): `+0.0 + q[0] k[0] + q[1] k[1] + ...` in that order.
    fn dots<S: Lanes<N>, const N: usize>(self, q: &[f32], keys: &[f32], j0: usize, nb: usize) -> S;
    /// The cache from key c0 on when its keys are DH-float rows (a
    /// projection can write there), else None.
    fn rows_from(self, keys: &mut [f32], c0: usize) -> Option<&mut [f32]>;
    /// Stores keys c0..c0+m, given as DH-float rows in `rows`.
    fn store(self, keys: &mut [f32], c0: usize, m: usize, rows: &[f32]);
}

/// S rows of DH floats: key j at j * DH.
pub type Rows = Keys<false>;

impl KeyLayout for Rows {
    #[inline(always)]
    fn dots<S: Lanes<N>, const N: usize>(self, q: &[f32], keys: &[f32], j0: usize, nb: usize) -> S {
        // Key by key: each one's row is contiguous.
        let mut a = [0.0f32; N];
        for (j, v) in a.iter_mut().enumerate().take(nb) {
            let at = (j0 + j) * self.0.dh;
            let Some(key) = keys.get(at..at + self.0.dh) else { continue };
            if !SIZE_FIRST_FEATURE {
                // DH = 16 (the shipped configurations): spelled out, so the
                // loop's counter and loads go (same terms, same order).
                if let (Ok(q), Ok(k)) = (<&[f32; 16]>::try_from(q), <&[f32; 16]>::try_from(key)) {
                    *v = dot16(q, k);
                    continue;
                }
            }
            let mut s = 0.0f32;
            for (&x, &k) in q.iter().zip(key) {
                // (Integer add and multiply on cores without an FPU.)
                s = sf::mul_add(s, x, k);
            }
            *v = s;
        }
        S::load(&a)
    }
    #[inline(always)]
    fn rows_from(self, keys: &mut [f32], c0: usize) -> Option<&mut [f32]> {
        Some(keys.get_mut(c0 * self.0.dh..).unwrap_or(&mut []))
    }
    #[inline(always)]
    fn store(self, keys: &mut [f32], c0: usize, m: usize, rows: &[f32]) {
        if let (Some(dst), Some(src)) = (keys.get_mut(c0 * self.0.dh..(c0 + m) * self.0.dh), rows.get(..m * self.0.dh)) {
            super::copy(dst, src);
        }
    }
}

/// True in the size-first build (cargo feature): no spelled-out dot or
/// inlined insert test there (code size).
const SIZE_FIRST_FEATURE: bool = cfg!(feature = "size-first");

/// +0.0 + q[0] k[0] + ... + q[15] k[15], in that order.
#[inline(always)]
fn dot16(q: &[f32; 16], k: &[f32; 16]) -> f32 {
    macro_rules! terms {
        ($($i:literal)*) => {{
            let mut s = 0.0f32;
            // (Integer add and multiply on cores without an FPU.)
            $(s = sf::mul_add(s, q[$i], k[$i]);)*
            s
        }};
    }
    terms!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
}

/// DH rows of S floats: component d of key j at d * S + j.
pub type Transposed = Keys<true>;

impl KeyLayout for Transposed {
    #[inline(always)]
    fn dots<S: Lanes<N>, const N: usize>(self, q: &[f32], keys: &[f32], j0: usize, nb: usize) -> S {
        // Component by component across N keys: row d holds their d-th
        // components side by side.
        let mut acc = S::zero();
        for (d, &qd) in q.iter().enumerate() {
            acc = acc.mul_add(S::splat(qd), S::ld(keys, d * self.0.count + j0, nb));
        }
        acc
    }
    #[inline(always)]
    fn rows_from(self, _keys: &mut [f32], _c0: usize) -> Option<&mut [f32]> {
        None
    }
    #[inline(always)]
    fn store(self, keys: &mut [f32], c0: usize, m: usize, rows: &[f32]) {
        let (s_max, dh) = (self.0.count, self.0.dh);
        if s_max > 0 && dh > 0 {
            for (dd, krow) in keys.chunks_exact_mut(s_max).take(dh).enumerate() {
                let Some(dst) = krow.get_mut(c0..c0 + m) else { continue };
                for (i, o) in dst.iter_mut().enumerate() {
                    if let Some(&v) = rows.get(i * dh + dd) {
                        *o = v;
                    }
                }
            }
        }
    }
}

/// Scores keys 0..=t of the cache (those it holds) against q and keeps the
/// best score.len() of them (the caller passes k_eff slots): key j's score
/// is `(+0.0 + q[0] k_j[0] + ... + q[DH-1] k_j[DH-1]) * inv_sqrt_dh`, summed
/// in that order, N keys at a time.
#[cfg_attr(not(atome_portable), inline(always))]
#[allow(clippy::too_many_arguments)]
pub fn score_keys<K: KeyLayout, S: Lanes<N>, const N: usize>(
    q: &[f32],
    keys: &[f32],
    layout: K,
    t: usize,
    inv_sqrt_dh: f32,
    score: &mut [f32],
    idx: &mut [f32],
) {
    clear_slots(score, idx);
    let end = layout.count().min(t.saturating_add(1));
    let q = q.get(..layout.dh()).unwrap_or(q);
    let mut j0 = 0;
    while j0 < end {
        let nb = (end - j0).min(N);
        let acc = layout.dots::<S, N>(q, keys, j0, nb);
        let mut a = [0.0f32; N];
        acc.store(&mut a);
        for (j, &a) in a.iter().enumerate().take(nb) {
            let s = sf::mul(a, inv_sqrt_dh);
            // insert's own first test, here: most keys fail it, so the
            // call is skipped (same slots); not in the size-first build.
            let n = score.len().min(idx.len());
            if SIZE_FIRST_FEATURE || n > 0 && score.get(n - 1).is_some_and(|&last| sf::gt(s, last)) {
                insert(score, idx, s, j0 + j);
            }
        }
        j0 += nb;
    }
}
