//! Armv7E-M (Cortex-M4/M7) Trit2 kernel: each payload byte becomes two
//! words of packed int16 weights by one table load (`LDRD`), and `SMLAD`
//! multiplies them by two packed activations each and adds both products
//! (wrapping: the same sum mod 2^32 as any order). Seven instructions per
//! byte (four weights) and one word load of codes per four bytes, no tables
//! to build per position. Written in asm:
//! LLVM spills the same loop's registers at opt-level "s" (about 11 per
//! byte, scripts/q15_kernel_bench.sh), and stable Rust has no SMLAD
//! intrinsic.
use crate::format::Tensor;

/// Byte of four Trit2 codes -> w0 | w1 << 16 | w2 << 32 | w3 << 48 (int16
/// fields; code `10` reads as 0). 8-byte aligned (u64), as `LDRD` needs.
static PAIRS16: [u64; 256] = super::TRIT2_I16X4;

/// One code byte of a row in [`row_dot`]: `$ext` puts the byte in `{t0}`,
/// its four weights come from PAIRS16, two `SMLAD`s add their products with
/// the next four activations (two word loads) into `{acc}`.
macro_rules! byte_words {
    ($ext:literal) => {
        concat!(
            $ext, "\n",
            "add {t0}, {tab}, {t0}, lsl #3\n",
            "ldrd {t0}, {t1}, [{t0}]\n",
            "ldr {t2}, [{xp}], #4\n",
            "smlad {acc}, {t0}, {t2}, {acc}\n",
            "ldr {t2}, [{xp}], #4\n",
            "smlad {acc}, {t1}, {t2}, {acc}",
        )
    };
}

/// [`byte_words`] with the four activations by one `LDRD` (a 4-byte
/// aligned address: [`row_dot_a4w`]).
macro_rules! byte_dwords {
    ($ext:literal) => {
        concat!(
            $ext, "\n",
            "add {t0}, {tab}, {t0}, lsl #3\n",
            "ldrd {t0}, {t1}, [{t0}]\n",
            "ldrd {x0}, {x1}, [{xp}], #8\n",
            "smlad {acc}, {t0}, {x0}, {acc}\n",
            "smlad {acc}, {t1}, {x1}, {acc}",
        )
    };
}

/// The loop over the `{n4}` >= 1 words of codes at `{wp}` of [`row_dot`]
/// and [`row_dot_a4w`]: each word's four bytes, low first, by `$byte`
/// (`byte_words` or `byte_dwords`).
macro_rules! word_loop {
    ($byte:ident) => {
        concat!(
            "2:\n",
            "ldr {c}, [{wp}], #4\n",
            $byte!("uxtb {t0}, {c}"), "\n",
            $byte!("ubfx {t0}, {c}, #8, #8"), "\n",
            $byte!("ubfx {t0}, {c}, #16, #8"), "\n",
            $byte!("lsrs {t0}, {c}, #24"), "\n",
            "subs {n4}, {n4}, #1\n",
            "bne 2b",
        )
    };
}

/// sum over the `row` bytes of PAIRS16[byte] . x[4k..4k+4], wrapping.
#[inline(always)]
fn row_dot(row: &[u8], x: &[i16]) -> i32 {
    let nb = row.len().min(x.len() / 4);
    if nb == 0 {
        return 0;
    }
    let mut acc = 0i32;
    // SAFETY: the loops read nb bytes from row (nb / 4 unaligned words,
    // then nb % 4 bytes) and 4 * nb int16 (as 2 * nb unaligned words;
    // Armv7E-M allows unaligned LDR from normal memory) from x, both within
    // the slices (nb <= row.len(), 4 * nb <= x.len()), and 8-byte table
    // entries at PAIRS16 + 8 * byte (byte < 256). LDRD needs a word-aligned
    // address: the u64 table is. SMLAD may set the Q flag, which nothing
    // reads. Only the named registers and the flags change.
    unsafe {
        core::arch::asm!(
            "lsrs {n4}, {nb}, #2",
            "beq 3f",
            // Four bytes (sixteen weights) a step: one word of codes.
            word_loop!(byte_words),
            "3:",
            // The last nb % 4 bytes one at a time.
            "ands {nb}, {nb}, #3",
            "beq 5f",
            "4:",
            byte_words!("ldrb {t0}, [{wp}], #1"),
            "subs {nb}, {nb}, #1",
            "bne 4b",
            "5:",
            wp = inout(reg) row.as_ptr() => _,
            xp = inout(reg) x.as_ptr() => _,
            nb = inout(reg) nb => _,
            n4 = out(reg) _,
            tab = in(reg) PAIRS16.as_ptr(),
            acc = inout(reg) acc,
            c = out(reg) _,
            t0 = out(reg) _,
            t1 = out(reg) _,
            t2 = out(reg) _,
            options(readonly, nostack),
        );
    }
    acc
}

/// [`row_dot`] for activations at a 4-byte aligned address (the state's
/// rows) and a row of a whole number n4 >= 1 of code words (the caller
/// checked 4 * n4 bytes of row and 16 * n4 activations): `LDRD` loads four
/// activations at once (27 instructions per four code bytes against 31),
/// and there is no length arithmetic or tail per row.
#[inline(always)]
fn row_dot_a4w(row: *const u8, x: *const i16, n4: usize) -> i32 {
    let mut acc = 0i32;
    // SAFETY: the caller's contract above (row: 4 * n4 readable bytes, x:
    // 16 * n4 readable int16 at a 4-byte aligned address, n4 >= 1); the
    // table entries as row_dot's. Only the named registers and the flags
    // change.
    unsafe {
        core::arch::asm!(
            word_loop!(byte_dwords),
            wp = inout(reg) row => _,
            xp = inout(reg) x => _,
            n4 = inout(reg) n4 => _,
            tab = in(reg) PAIRS16.as_ptr(),
            acc = inout(reg) acc,
            c = out(reg) _,
            t0 = out(reg) _,
            t1 = out(reg) _,
            x0 = out(reg) _,
            x1 = out(reg) _,
            options(readonly, nostack),
        );
    }
    acc
}

/// One code byte of each row of a pair in [`rows2_all_a4w`]: four
/// activations, each row's four weights, two `SMLAD`s a row (`$f0`,
/// `$f1`: the first of each row's two, SMUAD to start a sum).
macro_rules! pair_byte {
    ($f0:literal, $f1:literal) => {
        concat!(
            "ldrd {x0}, {x1}, [{xp}], #8\n",
            "ldrb {t0}, [{w0}], #1\n",
            "add {t0}, {tab}, {t0}, lsl #3\n",
            "ldrd {t0}, {t1}, [{t0}]\n",
            $f0, "\n",
            "smlad {a0}, {t1}, {x1}, {a0}\n",
            "ldrb {t0}, [{w1}], #1\n",
            "add {t0}, {tab}, {t0}, lsl #3\n",
            "ldrd {t0}, {t1}, [{t0}]\n",
            $f1, "\n",
            "smlad {a1}, {t1}, {x1}, {a1}\n",
        )
    };
}

/// [`row_dot_a4w`] for `pairs` >= 1 consecutive row pairs (rows of 4 * n4
/// bytes from `row0`, n4 >= 1), their sums stored at `out` (2 * pairs
/// int32). Two rows at once: each activation load serves both rows, and
/// one code byte is loaded at a time (`LDRB` with post-increment; the word
/// and its three extractions would need two more registers): 23
/// instructions per row and four code bytes against 27. The pair loop is
/// in the same asm, the next pair's pointers from the row length (row 1's
/// end minus row 0's): about 8 instructions per pair where a Rust loop
/// around a one-pair asm took 27.
#[inline(always)]
fn rows2_all_a4w(row0: *const u8, x: *const i16, n4: usize, out: *mut i32, pairs: usize) {
    // SAFETY: the caller's contract above (2 * pairs rows of 4 * n4
    // readable bytes from row0, 16 * n4 readable int16 at the 4-byte
    // aligned x, 2 * pairs writable int32 at the word-aligned out); per
    // pair row_dot_a4w's reads for each row, then one STRD. Only the
    // named registers and the flags change.
    unsafe {
        core::arch::asm!(
            // A pair's first code byte starts its sums (SMUAD: no zeroing),
            // then the rest of its first word, then whole words.
            "1:",
            pair_byte!("smuad {a0}, {t0}, {x0}", "smuad {a1}, {t0}, {x0}"),
            ".rept 3",
            pair_byte!("smlad {a0}, {t0}, {x0}, {a0}", "smlad {a1}, {t0}, {x0}, {a1}"),
            ".endr",
            "subs {n}, {n}, #1",
            "beq 3f",
            "2:",
            ".rept 4",
            pair_byte!("smlad {a0}, {t0}, {x0}, {a0}", "smlad {a1}, {t0}, {x0}, {a1}"),
            ".endr",
            "subs {n}, {n}, #1",
            "bne 2b",
            "3:",
            "strd {a0}, {a1}, [{o}], #8",
            // w0 ends at row 1, w1 at the next pair: t0 = the row length.
            "sub {t0}, {w1}, {w0}",
            "mov {w0}, {w1}",
            "add {w1}, {w1}, {t0}",
            "sub {xp}, {xp}, {t0}, lsl #3",
            "lsr {n}, {t0}, #2",
            "subs {np}, {np}, #1",
            "bne 1b",
            w0 = inout(reg) row0 => _,
            w1 = inout(reg) row0.wrapping_add(4 * n4) => _,
            xp = inout(reg) x => _,
            n = inout(reg) n4 => _,
            np = inout(reg) pairs => _,
            o = inout(reg) out => _,
            tab = in(reg) PAIRS16.as_ptr(),
            a0 = out(reg) _,
            a1 = out(reg) _,
            t0 = out(reg) _,
            t1 = out(reg) _,
            x0 = out(reg) _,
            x1 = out(reg) _,
            options(nostack),
        );
    }
}

/// Trit2 with `cols % 4 == 0`, outputs not overlapping (the caller
/// checks). False (nothing written) when `xs` or the payload is short:
/// the other kernels handle that.
pub(super) fn trit2(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) -> bool {
    let cols = w.cols;
    let bpr = cols / 4;
    // The engine's call: one position, every row's outputs there, the
    // activations word aligned, whole code words: the row loops without
    // the per-position slicing below (about 100 instructions a call).
    if n == 1 && bpr.is_multiple_of(4) && bpr > 0 && (xs.as_ptr() as usize).is_multiple_of(4) && xs.len() >= cols && out.len() >= w.rows {
        if let Some(data) = w.rows.checked_mul(bpr).and_then(|nw| w.data.get(..nw)) {
            let np = w.rows / 2;
            if np > 0 {
                // (data holds 2 np rows of bpr = 4 (bpr / 4) bytes, out 2 np
                // outputs, xs 4 bpr activations at a 4-byte aligned address.)
                rows2_all_a4w(data.as_ptr(), xs.as_ptr(), bpr / 4, out.as_mut_ptr(), np);
            }
            if let (Some(o), Some(row)) = (out.get_mut(2 * np), data.get(2 * np * bpr..(2 * np + 1) * bpr)) {
                if w.rows % 2 == 1 {
                    *o = row_dot_a4w(row.as_ptr(), xs.as_ptr(), bpr / 4);
                }
            }
            return true;
        }
    }
    let need_x = (n - 1).checked_mul(xstride).and_then(|v| v.checked_add(cols));
    let need_w = w.rows.checked_mul(bpr);
    match (need_x, need_w) {
        (Some(nx), Some(nw)) if nx <= xs.len() && nw <= w.data.len() && bpr > 0 => {}
        _ => return false,
    }
    let on = super::inside(n, ostride, out.len());
    for b in 0..on {
        let ob = super::out_row(out, b, ostride, w.rows, on);
        let x = super::x_row(xs, b, xstride, cols, n);
        let aligned = (x.as_ptr() as usize).is_multiple_of(4);
        if aligned && bpr.is_multiple_of(4) && x.len() >= 4 * bpr {
            // (x has the 4 * bpr activations; each chunk is bpr bytes.)
            // (The payload may run past this tensor's rows: cut to them, so
            // that the odd last row is the remainder's.)
            let data = w.data.get(..ob.len() * bpr).unwrap_or(&[]);
            let np = (data.len() / (2 * bpr)).min(ob.len() / 2);
            if np > 0 {
                // (data holds 2 np rows of bpr = 4 (bpr / 4) bytes, ob 2 np
                // outputs.)
                rows2_all_a4w(data.as_ptr(), x.as_ptr(), bpr / 4, ob.as_mut_ptr(), np);
            }
            if let (Some(o), Some(row)) = (ob.get_mut(2 * np), data.get(2 * np * bpr..(2 * np + 1) * bpr)) {
                *o = row_dot_a4w(row.as_ptr(), x.as_ptr(), bpr / 4);
            }
        } else {
            for (o, row) in ob.iter_mut().zip(w.data.chunks_exact(bpr)) {
                *o = row_dot(row, x);
            }
        }
    }
    true
}
