//! The one decoder and the one encoder of each packing (docs/FORMATS.md).
//!
//! A payload is a run of units (see [`Packing::unit`]): Trit2 one byte of
//! four 2-bit codes, Base3 one byte of five base-3 digits, P3 three bytes
//! (a 24-bit little-endian word) of eight 3-bit codes; codes lowest first.
//! Codes -> weights: Trit2 `00 0, 01 +1, 11 -1, 10 0`, Base3 `digit - 1`,
//! P3 [`P3_WEIGHTS`]. Padding after the last weight holds the zero code.
//!
//! The x86-64 AVX2 matvec (kernels/x86.rs) and the conv weights of the
//! forward pass read ATOME01/02/P3 payloads with SIMD or word tricks of
//! their own, for speed; they are tested against this decoder.
use super::{Packing, Tensor, P3_WEIGHTS};

/// The largest valid ATOME02 byte (3^5 - 1); larger ones are refused at load.
pub const BASE3_MAX_BYTE: u8 = 242;

impl Packing {
    /// The code of weight w (None: the packing cannot hold it).
    pub fn code_of(self, w: i8) -> Option<u8> {
        match self {
            Packing::Trit2 => match w {
                0 => Some(0),
                1 => Some(1),
                -1 => Some(3),
                _ => None,
            },
            Packing::Base3 => (-1..=1).contains(&w).then_some((w + 1) as u8),
            // Code 7 also reads as 0; encoders write 0 with code 0.
            Packing::P3 => P3_WEIGHTS.iter().take(7).position(|&v| v == w).map(|c| c as u8),
        }
    }

    /// The code of weight 0, written in padding.
    pub fn zero_code(self) -> u8 {
        match self {
            Packing::Base3 => 1,
            Packing::Trit2 | Packing::P3 => 0,
        }
    }

    /// A code no encoder writes that readers take as 0 (Trit2 `10`, P3 `111`).
    /// Base3 has none: its invalid values are whole bytes above
    /// [`BASE3_MAX_BYTE`].
    pub fn unused_code(self) -> Option<u8> {
        match self {
            Packing::Trit2 => Some(2),
            Packing::Base3 => None,
            Packing::P3 => Some(7),
        }
    }

    /// Codes that `bytes` payload bytes hold (whole units).
    pub fn capacity(self, bytes: usize) -> usize {
        let (per, unit, _) = self.unit();
        per * (bytes / unit)
    }
}

/// Why weights could not be packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// Weight number `index` is `value`, which the packing cannot hold.
    Weight {
        /// Weight number.
        index: usize,
        /// Its value.
        value: i8,
    },
    /// The output is shorter than [`Packing::payload_len`].
    Short,
}

/// Packs weights 0..n (weight(i) gives weight i, asked once each, in order)
/// into `out[..p.payload_len(n)]`, padding with the zero code.
pub fn pack(p: Packing, n: usize, mut weight: impl FnMut(usize) -> i8, out: &mut [u8]) -> Result<(), EncodeError> {
    let (per, unit, radix) = p.unit();
    let out = out.get_mut(..p.payload_len(n)).ok_or(EncodeError::Short)?;
    for (u, bytes) in out.chunks_exact_mut(unit).enumerate() {
        let mut word = 0u32;
        let mut place = 1u32;
        for i in u * per..(u + 1) * per {
            let code = if i < n {
                let w = weight(i);
                p.code_of(w).ok_or(EncodeError::Weight { index: i, value: w })?
            } else {
                p.zero_code()
            };
            word += code as u32 * place;
            place *= radix;
        }
        bytes.copy_from_slice(&word.to_le_bytes()[..unit]);
    }
    Ok(())
}

impl Tensor<'_> {
    /// Decodes weights start..start+out.len() into out (0 past the end of
    /// the payload).
    #[inline(always)]
    pub fn decode(&self, start: usize, out: &mut [i8]) {
        unpack::<false>(self, start, out)
    }

    /// The raw codes of weights start..start+out.len() (Trit2 2-bit code,
    /// Base3 digit, P3 3-bit code; the zero code past the end).
    pub fn codes(&self, start: usize, out: &mut [i8]) {
        unpack::<true>(self, start, out)
    }

    /// Weight number n (= r * cols + c); 0 past the end of `data`.
    pub fn weight(&self, n: usize) -> i8 {
        let mut w = [0i8; 1];
        self.decode(n, &mut w);
        w[0]
    }

    /// Values among the weights that no encoder writes: Trit2 code `10` and
    /// P3 code `111` (both read as 0), Base3 bytes above [`BASE3_MAX_BYTE`]
    /// (refused at load).
    pub fn unused_codes(&self) -> usize {
        let n = self.rows * self.cols;
        match self.packing.unused_code() {
            None => {
                let bytes = self.data.get(..self.packing.payload_len(n)).unwrap_or(self.data);
                bytes.iter().filter(|&&b| b > BASE3_MAX_BYTE).count()
            }
            Some(u) => self.count_codes(0, n, |c| c == u as i8),
        }
    }

    /// Padding positions (after the last weight, to the end of the last
    /// whole unit of `data`) that do not hold the zero code.
    pub fn dirty_padding(&self) -> usize {
        let n = self.rows * self.cols;
        let zero = self.packing.zero_code() as i8;
        self.count_codes(n, self.packing.capacity(self.data.len()), |c| c != zero)
    }

    /// Codes in start..end for which `hit` holds.
    fn count_codes(&self, start: usize, end: usize, hit: impl Fn(i8) -> bool) -> usize {
        let mut buf = [0i8; 64];
        let mut count = 0;
        let mut at = start;
        while at < end {
            let len = (end - at).min(buf.len());
            self.codes(at, &mut buf[..len]);
            count += buf[..len].iter().filter(|&&c| hit(c)).count();
            at += len;
        }
        count
    }
}

/// The decoder: weights (or raw codes, RAW) start..start+out.len().
fn unpack<const RAW: bool>(w: &Tensor, start: usize, out: &mut [i8]) {
    let data = w.data;
    match w.packing {
        // One loop: four weights a byte where aligned, else one at a time.
        Packing::Trit2 => {
            let trit: [i8; 4] = if RAW { [0, 1, 2, 3] } else { [0, 1, 0, -1] };
            let mut n = start;
            let mut k = 0;
            while k < out.len() {
                let b = data.get(n >> 2).copied().unwrap_or(0);
                match out.get_mut(k..k + 4) {
                    Some([o0, o1, o2, o3]) if n & 3 == 0 => {
                        *o0 = trit[(b & 3) as usize];
                        *o1 = trit[((b >> 2) & 3) as usize];
                        *o2 = trit[((b >> 4) & 3) as usize];
                        *o3 = trit[(b >> 6) as usize];
                        k += 4;
                        n += 4;
                    }
                    _ => {
                        out[k] = trit[((b >> (2 * (n & 3))) & 3) as usize];
                        k += 1;
                        n += 1;
                    }
                }
            }
        }
        Packing::Base3 => {
            // Past the end: 121, five zero digits (1).
            let off = if RAW { 0 } else { 1 };
            let mut n = start;
            let mut k = 0;
            while k < out.len() {
                let mut b = data.get(n / 5).copied().unwrap_or(121);
                let phase = n % 5;
                for _ in 0..phase {
                    b /= 3;
                }
                for _ in phase..5 {
                    if let Some(o) = out.get_mut(k) {
                        *o = (b % 3) as i8 - off;
                    }
                    b /= 3;
                    k += 1;
                    n += 1;
                }
            }
        }
        Packing::P3 => {
            for (k, o) in out.iter_mut().enumerate() {
                let n = start + k;
                let g = 3 * (n >> 3);
                let word = match data.get(g..g + 3) {
                    Some(s) => s[0] as u32 | (s[1] as u32) << 8 | (s[2] as u32) << 16,
                    None => 0,
                };
                let code = ((word >> (3 * (n & 7))) & 7) as usize;
                *o = if RAW { code as i8 } else { P3_WEIGHTS[code] };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(data: &[u8], n: usize, p: Packing) -> Tensor<'_> {
        Tensor { data, scale: 1.0, rows: 1, cols: n, packing: p }
    }

    /// Every weight a packing holds, at every phase of a unit, packs and
    /// decodes back (one at a time and in runs from every start).
    #[test]
    fn pack_then_decode_round_trips() {
        for p in Packing::ALL {
            let alphabet: &[i8] = if p == Packing::P3 { &[0, 1, -1, 3, -3, 9, -9] } else { &[0, 1, -1] };
            for n in [1usize, 4, 5, 7, 8, 9, 23, 40, 121] {
                let w: [i8; 121] = core::array::from_fn(|i| alphabet[(i * 5 + i / 3) % alphabet.len()]);
                let mut buf = [0xAAu8; 80];
                pack(p, n, |i| w[i], &mut buf).unwrap();
                let len = p.payload_len(n);
                assert!(buf[len..].iter().all(|&b| b == 0xAA), "{p:?} wrote past the payload");
                let t = tensor(&buf[..len], n, p);
                for (i, &x) in w.iter().enumerate().take(n) {
                    assert_eq!(t.weight(i), x, "{p:?} n={n} i={i}");
                }
                for start in 0..n {
                    let mut out = [7i8; 121];
                    t.decode(start, &mut out[..n - start]);
                    assert_eq!(&out[..n - start], &w[start..n], "{p:?} n={n} start={start}");
                }
                assert_eq!((t.unused_codes(), t.dirty_padding()), (0, 0), "{p:?} n={n}");
                // Past the end of the payload: weight 0.
                assert_eq!(t.weight(p.capacity(len) + 3), 0);
            }
        }
    }

    /// The layouts of docs/FORMATS.md, byte for byte.
    #[test]
    fn known_bytes() {
        let mut b = [0u8; 3];
        pack(Packing::Trit2, 4, |i| [1, -1, 0, 1][i], &mut b).unwrap();
        assert_eq!(b[0], 0b01_00_11_01);
        pack(Packing::Base3, 5, |i| [1, -1, 0, 1, -1][i], &mut b).unwrap();
        assert_eq!(b[0], 2 + 9 + 2 * 27);
        pack(Packing::Base3, 0, |_| 0, &mut b).unwrap();
        pack(Packing::Base3, 1, |_| 0, &mut b).unwrap();
        assert_eq!(b[0], 121);
        pack(Packing::P3, 8, |i| [0, 1, -1, 3, -3, 9, -9, 0][i], &mut b).unwrap();
        let word = b[0] as u32 | (b[1] as u32) << 8 | (b[2] as u32) << 16;
        assert_eq!(word, (1 << 3) | (2 << 6) | (3 << 9) | (4 << 12) | (5 << 15) | (6 << 18));
    }

    #[test]
    fn refuses_what_a_packing_cannot_hold() {
        let mut b = [0u8; 8];
        assert_eq!(pack(Packing::Base3, 3, |i| [0, 3, 0][i], &mut b), Err(EncodeError::Weight { index: 1, value: 3 }));
        assert_eq!(pack(Packing::Trit2, 2, |_| -9, &mut b), Err(EncodeError::Weight { index: 0, value: -9 }));
        assert_eq!(pack(Packing::P3, 9, |_| 0, &mut b[..5]), Err(EncodeError::Short));
    }

    /// Unused codes and dirty padding are seen.
    #[test]
    fn audits_unused_codes_and_padding() {
        // Trit2: weights 0..3 = codes 01 10 00 11; 2 weights, so 00 11 is padding (one dirty).
        let t = tensor(&[0b11_00_10_01], 2, Packing::Trit2);
        assert_eq!((t.weight(1), t.unused_codes(), t.dirty_padding()), (0, 1, 1));
        let t = tensor(&[243, 121], 6, Packing::Base3);
        assert_eq!(t.unused_codes(), 1);
        assert_eq!(t.dirty_padding(), 0);
        let t = tensor(&[121, 124], 6, Packing::Base3);
        assert_eq!(t.dirty_padding(), 1);
        let t = tensor(&[0b0011_1000, 0, 0xE0], 2, Packing::P3);
        assert_eq!((t.weight(1), t.unused_codes(), t.dirty_padding()), (0, 1, 1));
    }
}
