//! The q15 head's id without its logits (`head_argmax`, the greedy steps
//! of generation before the last) against the id of the written logits
//! (`head_logits`): random heads of every sign and size of scale (zero,
//! results that overflow to infinity or underflow), and sums built to lie
//! closer together than a float's rounding step, where the largest integer
//! sum is not the first largest logit. With and without the byte tables'
//! memory lent (they run where `bytes_pay` says: `--features portable` on
//! the host).
use atome::format::{Packing, Tensor};
use atome::q15::engine::{head_argmax, head_logits};
use proptest::prelude::*;

/// Trit2 bytes of a row-major weight matrix (-1, 0, +1; four a byte,
/// lowest bits first; code 3 is -1).
fn trit2(w: &[i8]) -> Vec<u8> {
    w.chunks(4)
        .map(|c| {
            c.iter().enumerate().fold(0u8, |b, (i, &t)| {
                b | (match t {
                    1 => 1u8,
                    -1 => 3,
                    _ => 0,
                } << (2 * i))
            })
        })
        .collect()
}

/// (argmax without logits, argmax of head_logits, the written logits).
fn both(
    w: &[i8],
    rows: usize,
    cols: usize,
    scale: f32,
    h: &[i16],
    eh: i32,
    mvlen: usize,
) -> (usize, usize, Vec<f32>) {
    let data = trit2(w);
    let t = Tensor {
        data: &data,
        scale,
        rows,
        cols,
        packing: Packing::Trit2,
    };
    let mut mv = vec![0i32; mvlen];
    let mut acc = vec![0x5a5a_5a5ai32; rows + 3];
    let fast = head_argmax::<false>(&t, h, eh, &mut acc, &mut mv, &mut [], false);
    // With the byte tables' memory lent too (they run on hosts without
    // AVX2 and on Cortex-M0, from 192 rows): the same id.
    let (mut mv2, mut more) = (vec![7i32; mvlen.max(256)], vec![-3i32; 768]);
    let lent = head_argmax::<true>(&t, h, eh, &mut acc, &mut mv2, &mut more, false);
    assert_eq!(fast, lent, "with byte tables");
    // The payload holds no code 10 (trit2 writes 0, 1, 3): the clean tables
    // too, over junk in the entries they do not build.
    let (mut mv3, mut more3) = (vec![0x2bad_f00d; mvlen.max(256)], vec![-0x1bad_cafe; 768]);
    let clean = head_argmax::<true>(&t, h, eh, &mut acc, &mut mv3, &mut more3, true);
    assert_eq!(fast, clean, "with clean byte tables");
    let mut lg = vec![f32::NAN; rows];
    let full = head_logits(&t, h, eh, &mut mv, Some(&mut lg));
    (fast, full, lg)
}

/// The first index of the largest value (the contract's argmax).
fn first_max(v: &[f32]) -> usize {
    let mut b = 0;
    for (j, &x) in v.iter().enumerate() {
        if x > v[b] {
            b = j;
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn the_id_is_the_first_largest_logit(
        rows in 1usize..300,
        cb in 1usize..24,
        seed in any::<u64>(),
        scale_exp in -140i32..130,
        neg in any::<bool>(),
        zero in 0u8..20,
        eh in -40i32..20,
        mvlen in 1usize..80,
        amp in 0u32..16,
    ) {
        let cols = 4 * cb;
        let mut x = seed | 1;
        let mut next = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
        let w: Vec<i8> = (0..rows * cols).map(|_| (next() % 3) as i8 - 1).collect();
        let h: Vec<i16> = (0..cols).map(|_| (next() as i64 as i16) >> amp).collect();
        let mut scale = 2f32.powi(scale_exp.clamp(-126, 127)) * (1.0 + (next() % 1000) as f32 / 1000.0);
        if neg { scale = -scale; }
        if zero == 0 { scale = 0.0; }
        let (fast, full, lg) = both(&w, rows, cols, scale, &h, eh, mvlen);
        prop_assert_eq!(fast, full);
        prop_assert_eq!(full, first_max(&lg));
    }
}

#[test]
fn sums_closer_than_a_rounding_step() {
    // 512 columns, h[0] = 1 and the rest near 32767: a row of +1 weights
    // sums to about 2^24; without column 0, one less. Where both round to
    // the same float (h[1] is moved until they do), the first of them is
    // the id, although the other holds the larger product. The same for
    // every sign of weights and scale (a negative scale: the smaller sum
    // is the larger logit), with activations of the sign that makes the
    // pair the largest logits.
    let cols = 512;
    let rows = 6;
    let mut cases = 0;
    for (sign, scale) in [(1i8, 0.75f32), (-1, 0.75), (1, -0.75), (-1, -0.75)] {
        for (lo_first, mvlen) in [(true, 3usize), (true, 64), (false, 64)] {
            let mut w = vec![0i8; rows * cols];
            // Rows 0 and 5: every other column; rows 2 and 3: the near pair.
            for j in [0, 5] {
                for i in (0..cols).step_by(2) {
                    w[j * cols + i] = sign;
                }
            }
            let (a, b) = if lo_first { (2, 3) } else { (3, 2) };
            for i in 0..cols {
                w[b * cols + i] = sign;
                w[a * cols + i] = if i == 0 { 0 } else { sign };
            }
            // Activations of the sign that makes the pair's logits positive.
            let hs: i16 = if (sign < 0) == (scale < 0.0) { 1 } else { -1 };
            let mut h = vec![hs * 32767; cols];
            h[0] = hs;
            let found = (0..64).find_map(|k| {
                h[1] = hs * (32767 - k);
                let r = both(&w, rows, cols, scale, &h, -10, mvlen);
                (r.2[2].to_bits() == r.2[3].to_bits()).then_some(r)
            });
            let (fast, full, _) = found.expect("a pair that rounds to one float");
            assert_eq!(fast, full, "sign {sign} scale {scale} lo_first {lo_first}");
            assert_eq!(full, 2, "the first of the equal pair");
            cases += 1;
        }
    }
    assert_eq!(cases, 12);
}
