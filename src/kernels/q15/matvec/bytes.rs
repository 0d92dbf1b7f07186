//! Byte tables for one position (the cached plan's single-row
//! projections): for each group of four columns, a 256-entry table holds
//! the sum of the four weighted activations for every byte of Trit2
//! codes, so that a row adds one table entry per byte: four weights per
//! load and add. Four tables (16 columns) are built at a time, or two (8
//! columns) where the memory the caller lends (the logits and parameter
//! areas, free while the projections run) holds only two. Building costs
//! 256 entries per four columns, so the tables pay where many rows share
//! them (the 944K model's 387 rows a layer); [`tables_pay`] has the bars.
use super::MvJobQ;
use crate::format::Packing;

/// Whether byte tables pay for `rows` rows on this core with `more`
/// words of table memory beside the first table and the payloads
/// `clean` ([`tables_pay`]): on Cortex-M0, Thumb-2 (M3, M4, M7, M33) and
/// RV32, where they can beat the pair tables and SMLAD, and on hosts
/// without AVX2, so that the tests run them.
pub fn bytes_pay(acc: crate::kernels::isa::Accel, rows: usize, more: usize, clean: bool) -> bool {
    BYTES_HERE && more >= 256 && !acc.avx2() && tables_pay(rows, more >= 3 * 256, clean)
}

/// Whether byte tables beat this core's other kernel for `rows` rows (all
/// jobs together), four tables a pass (`four`) or two, with the 81-entry
/// build (`clean`) or the whole one. Per column the build costs about 58
/// instructions clean and 160 whole on Cortex-M0, 34 and 80 on Thumb-2,
/// 40 and 112 on RV32; per weight the rows save, against the pair tables,
/// about 1.5 (four tables) and 1.2 (two) on Cortex-M0, 0.06 and none on
/// Armv7-M, 1.1 and 0.8 on RV32, and against SMLAD on Armv7E-M 0.44 and
/// 0.25.
pub fn tables_pay(rows: usize, four: bool, clean: bool) -> bool {
    let bar = if cfg!(atome_armv6m) {
        if clean {
            64
        } else {
            192
        }
    } else if cfg!(atome_dsp) {
        match (four, clean) {
            (true, true) => 128,
            (true, false) => 64,
            (false, true) => 160,
            (false, false) => 320,
        }
    } else if cfg!(atome_thumb2) {
        if four {
            64
        } else {
            usize::MAX
        }
    } else if four || clean {
        64
    } else {
        160
    };
    rows >= bar
}

/// Whether this build runs byte tables at all ([`bytes_pay`]).
pub const BYTES_HERE: bool = cfg!(any(all(atome_armv6m, not(atome_small)), all(atome_thumb2, not(atome_small)), all(atome_rv32, not(atome_small)), target_pointer_width = "64"));

/// The 16 sums of two activations for every nibble of two Trit2 codes
/// (nibble c0 + 4 c1; code 0 and code 2: weight 0, 1: +1, 3: -1).
#[inline(always)]
fn pair16(x0: i32, x1: i32) -> [i32; 16] {
    let (n0, n1) = (x0.wrapping_neg(), x1.wrapping_neg());
    let (a, b, c, d) = (x0.wrapping_add(x1), n0.wrapping_add(x1), x0.wrapping_add(n1), n0.wrapping_add(n1));
    [0, x0, 0, n0, x1, a, x1, b, 0, x0, 0, n0, n1, c, n1, d]
}

/// The nibbles without the code 10 (0, 1 and 3 in each half): the only
/// ones a payload without code 10 holds (the ARMv6-M asm spells them out).
#[cfg_attr(any(all(atome_armv6m, not(atome_small)), all(atome_thumb2, not(atome_small)), all(atome_rv32, not(atome_small))), allow(dead_code))]
const CLEAN_NIBBLES: [usize; 9] = [0, 1, 3, 4, 5, 7, 12, 13, 15];

/// The table of four columns with activations x[0..4]: entry b is the sum
/// of the four weighted activations for the codes of byte b (low nibble:
/// x[0], x[1]; high nibble: x[2], x[3]). `clean`: only the 81 entries of
/// bytes without the code 10 (the others keep what they held).
#[inline(never)]
fn build(t: &mut [i32; 256], x: &[i16; 4], clean: bool) {
    let lo = pair16(i32::from(x[0]), i32::from(x[1]));
    let hi = pair16(i32::from(x[2]), i32::from(x[3]));
    // The eight distinct non-zero low sums, in the order the asm stores them.
    #[cfg(all(atome_armv6m, not(atome_small)))]
    let v: [i32; 8] = [lo[1], lo[3], lo[4], lo[5], lo[7], lo[12], lo[13], lo[15]];
    // Thumb-2 needs only x0, x1, their sum and x1 - x0 (the other low
    // sums are their negations: SUB instead of ADD).
    #[cfg(any(all(atome_thumb2, not(atome_small)), all(atome_rv32, not(atome_small))))]
    let v: [i32; 4] = [lo[1], lo[4], lo[5], lo[7]];
    if clean {
        #[cfg(all(atome_armv6m, not(atome_small)))]
        build_clean_t1(t, &v, &hi);
        #[cfg(all(atome_thumb2, not(atome_small)))]
        build_clean_t2(t, &v, &hi);
        #[cfg(all(atome_rv32, not(atome_small)))]
        build_clean_rv(t, &v, &hi);
        #[cfg(not(any(all(atome_armv6m, not(atome_small)), all(atome_thumb2, not(atome_small)), all(atome_rv32, not(atome_small)))))]
        for h in CLEAN_NIBBLES {
            for l in CLEAN_NIBBLES {
                if let (Some(o), Some(&a), Some(&b)) = (t.get_mut(16 * h + l), lo.get(l), hi.get(h)) {
                    *o = a.wrapping_add(b);
                }
            }
        }
        return;
    }
    #[cfg(all(atome_armv6m, not(atome_small)))]
    build_t1(t, &v, &hi);
    #[cfg(all(atome_thumb2, not(atome_small)))]
    build_t2(t, &v, &hi);
    #[cfg(all(atome_rv32, not(atome_small)))]
    build_rv(t, &v, &hi);
    #[cfg(not(any(all(atome_armv6m, not(atome_small)), all(atome_thumb2, not(atome_small)), all(atome_rv32, not(atome_small)))))]
    for (row, &h) in t.chunks_exact_mut(16).zip(hi.iter()) {
        for (o, &l) in row.iter_mut().zip(lo.iter()) {
            *o = l.wrapping_add(h);
        }
    }
}

/// [`build`]'s rows on ARMv6-M, in asm: per high nibble, its sum h stored
/// at the four zero low nibbles (0, 2, 8, 10) and the eight distinct low
/// sums plus h each stored where they occur (1 and 9, 3 and 11, 4 and 6,
/// 5, 7, 12 and 14, 13, 15): 37 instructions per 16 entries.
#[cfg(all(atome_armv6m, not(atome_small)))]
#[inline(always)]
fn build_t1(t: &mut [i32; 256], v: &[i32; 8], hi: &[i32; 16]) {
    // SAFETY: 16 steps (r2 runs from hi to hi + 16 words); step i reads
    // hi[i] and v[0..8] and writes t[16 i .. 16 i + 16] (r0 advances 64
    // bytes a step: inside the 256-word table). All word accesses are
    // aligned (i32 arrays). Only the named registers and the flags change;
    // no stack use.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldr r4, [r2]",
            "str r4, [r0, #0]",
            "str r4, [r0, #8]",
            "str r4, [r0, #32]",
            "str r4, [r0, #40]",
            "ldr r5, [r1, #0]",
            "adds r5, r5, r4",
            "str r5, [r0, #4]",
            "str r5, [r0, #36]",
            "ldr r5, [r1, #4]",
            "adds r5, r5, r4",
            "str r5, [r0, #12]",
            "str r5, [r0, #44]",
            "ldr r5, [r1, #8]",
            "adds r5, r5, r4",
            "str r5, [r0, #16]",
            "str r5, [r0, #24]",
            "ldr r5, [r1, #12]",
            "adds r5, r5, r4",
            "str r5, [r0, #20]",
            "ldr r5, [r1, #16]",
            "adds r5, r5, r4",
            "str r5, [r0, #28]",
            "ldr r5, [r1, #20]",
            "adds r5, r5, r4",
            "str r5, [r0, #48]",
            "str r5, [r0, #56]",
            "ldr r5, [r1, #24]",
            "adds r5, r5, r4",
            "str r5, [r0, #52]",
            "ldr r5, [r1, #28]",
            "adds r5, r5, r4",
            "str r5, [r0, #60]",
            "adds r0, #64",
            "adds r2, #4",
            "cmp r2, r3",
            "bne 2b",
            inout("r0") t.as_mut_ptr() => _,
            in("r1") v.as_ptr(),
            inout("r2") hi.as_ptr() => _,
            in("r3") hi.as_ptr().wrapping_add(16),
            out("r4") _,
            out("r5") _,
            options(nostack),
        );
    }
}

/// [`build`]'s clean rows on ARMv6-M, in asm: for each high nibble without
/// the code 10, its sum h and the eight distinct low sums plus h at the
/// low nibbles without it (26 instructions a row, 9 rows; between rows
/// the base advances by one or two adds).
// (Out of line: LLVM sizes the `.irp` block as a few instructions, so a
// branch across it in the caller could not be relaxed.)
#[cfg(all(atome_armv6m, not(atome_small)))]
#[inline(never)]
fn build_clean_t1(t: &mut [i32; 256], v: &[i32; 8], hi: &[i32; 16]) {
    // SAFETY: for each high nibble h of CLEAN_NIBBLES (all < 16), reads
    // hi[h] and v[0..8] and writes t[16 h + l] for the low nibbles l of
    // CLEAN_NIBBLES (16 h + l < 256: inside the table; r3 = t + 64 h,
    // advanced from the previous row's base). All word accesses are
    // aligned (i32 arrays). Only the named registers and the flags change;
    // no stack use.
    unsafe {
        core::arch::asm!(
            "movs r3, r0",
            ".set prev_h, 0",
            ".irp h, 0, 1, 3, 4, 5, 7, 12, 13, 15",
            // (An add takes at most 255: a step of five rows is two.)
            ".if (\\h - prev_h) * 64 > 255",
            "adds r3, #192",
            "adds r3, #((\\h - prev_h) * 64 - 192)",
            ".elseif \\h - prev_h",
            "adds r3, #((\\h - prev_h) * 64)",
            ".endif",
            ".set prev_h, \\h",
            "ldr r4, [r2, #4*\\h]",
            "str r4, [r3, #0]",
            "ldr r5, [r1, #0]",
            "adds r5, r5, r4",
            "str r5, [r3, #4]",
            "ldr r5, [r1, #4]",
            "adds r5, r5, r4",
            "str r5, [r3, #12]",
            "ldr r5, [r1, #8]",
            "adds r5, r5, r4",
            "str r5, [r3, #16]",
            "ldr r5, [r1, #12]",
            "adds r5, r5, r4",
            "str r5, [r3, #20]",
            "ldr r5, [r1, #16]",
            "adds r5, r5, r4",
            "str r5, [r3, #28]",
            "ldr r5, [r1, #20]",
            "adds r5, r5, r4",
            "str r5, [r3, #48]",
            "ldr r5, [r1, #24]",
            "adds r5, r5, r4",
            "str r5, [r3, #52]",
            "ldr r5, [r1, #28]",
            "adds r5, r5, r4",
            "str r5, [r3, #60]",
            ".endr",
            in("r0") t.as_mut_ptr(),
            in("r1") v.as_ptr(),
            in("r2") hi.as_ptr(),
            out("r3") _,
            out("r4") _,
            out("r5") _,
            options(nostack),
        );
    }
}

/// [`build`]'s rows on Thumb-2, in asm: per high nibble, its sum h and
/// the sums h +- x0, h +- x1, h +- (x0 + x1), h +- (x1 - x0) (`v`: x0, x1,
/// x0 + x1, x1 - x0), stored in pairs by `STRD` where they occur: 20
/// instructions per 16 entries.
#[cfg(all(atome_thumb2, not(atome_small)))]
#[inline(always)]
fn build_t2(t: &mut [i32; 256], v: &[i32; 4], hi: &[i32; 16]) {
    // SAFETY: 16 steps ({hp} runs from hi to hi + 16 words); step i reads
    // hi[i] and writes t[16 i .. 16 i + 16] ({tp} advances 64 bytes a
    // step: inside the 256-word table). All word accesses are aligned (i32
    // arrays; STRD needs 4). Only the named registers and the flags
    // change; no stack use.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldr {h}, [{hp}], #4",
            "add {s0}, {h}, {x0}",
            "sub {s1}, {h}, {x0}",
            "strd {h}, {s0}, [{tp}, #0]",
            "strd {h}, {s1}, [{tp}, #8]",
            "strd {h}, {s0}, [{tp}, #32]",
            "strd {h}, {s1}, [{tp}, #40]",
            "add {s0}, {h}, {x1}",
            "add {s1}, {h}, {a}",
            "strd {s0}, {s1}, [{tp}, #16]",
            "add {s1}, {h}, {b}",
            "strd {s0}, {s1}, [{tp}, #24]",
            "sub {s0}, {h}, {x1}",
            "sub {s1}, {h}, {b}",
            "strd {s0}, {s1}, [{tp}, #48]",
            "sub {s1}, {h}, {a}",
            "strd {s0}, {s1}, [{tp}, #56]",
            "add {tp}, {tp}, #64",
            "cmp {hp}, {he}",
            "bne 2b",
            tp = inout(reg) t.as_mut_ptr() => _,
            hp = inout(reg) hi.as_ptr() => _,
            he = in(reg) hi.as_ptr().wrapping_add(16),
            x0 = in(reg) v[0],
            x1 = in(reg) v[1],
            a = in(reg) v[2],
            b = in(reg) v[3],
            h = out(reg) _,
            s0 = out(reg) _,
            s1 = out(reg) _,
            options(nostack),
        );
    }
}

/// [`build`]'s clean rows on Thumb-2, in asm: the 9 entries of each of the
/// 9 high nibbles without the code 10, as [`build_t2`] (15 instructions a
/// row).
#[cfg(all(atome_thumb2, not(atome_small)))]
#[inline(never)]
fn build_clean_t2(t: &mut [i32; 256], v: &[i32; 4], hi: &[i32; 16]) {
    // SAFETY: for each high nibble h of CLEAN_NIBBLES (all < 16), reads
    // hi[h] and writes t[16 h + l] for the low nibbles l of CLEAN_NIBBLES
    // (16 h + l < 256: inside the table; offsets up to 1020, STRD's
    // reach). All word accesses are aligned (i32 arrays). Only the named
    // registers and the flags change; no stack use.
    unsafe {
        core::arch::asm!(
            ".irp n, 0, 1, 3, 4, 5, 7, 12, 13, 15",
            "ldr {h}, [{hp}, #4*\\n]",
            "add {s0}, {h}, {x0}",
            "strd {h}, {s0}, [{tp}, #64*\\n]",
            "sub {s0}, {h}, {x0}",
            "str {s0}, [{tp}, #64*\\n+12]",
            "add {s0}, {h}, {x1}",
            "add {s1}, {h}, {a}",
            "strd {s0}, {s1}, [{tp}, #64*\\n+16]",
            "add {s0}, {h}, {b}",
            "str {s0}, [{tp}, #64*\\n+28]",
            "sub {s0}, {h}, {x1}",
            "sub {s1}, {h}, {b}",
            "strd {s0}, {s1}, [{tp}, #64*\\n+48]",
            "sub {s0}, {h}, {a}",
            "str {s0}, [{tp}, #64*\\n+60]",
            ".endr",
            tp = in(reg) t.as_mut_ptr(),
            hp = in(reg) hi.as_ptr(),
            x0 = in(reg) v[0],
            x1 = in(reg) v[1],
            a = in(reg) v[2],
            b = in(reg) v[3],
            h = out(reg) _,
            s0 = out(reg) _,
            s1 = out(reg) _,
            options(nostack),
        );
    }
}

/// [`build`]'s rows on RV32, in asm: per high nibble, its sum h and the
/// sums h +- x0, h +- x1, h +- (x0 + x1), h +- (x1 - x0) (`v`: x0, x1,
/// x0 + x1, x1 - x0), each stored where it occurs: 28 instructions per 16
/// entries.
#[cfg(all(atome_rv32, not(atome_small)))]
#[inline(always)]
fn build_rv(t: &mut [i32; 256], v: &[i32; 4], hi: &[i32; 16]) {
    // SAFETY: 16 steps ({hp} runs from hi to hi + 16 words); step i reads
    // hi[i] and writes t[16 i .. 16 i + 16] ({tp} advances 64 bytes a
    // step: inside the 256-word table). All word accesses are aligned
    // (i32 arrays). Only the named registers change; no stack use.
    unsafe {
        core::arch::asm!(
            "2:",
            "lw {h}, 0({hp})",
            "sw {h}, 0({tp})",
            "sw {h}, 8({tp})",
            "sw {h}, 32({tp})",
            "sw {h}, 40({tp})",
            "add {s}, {h}, {x0}",
            "sw {s}, 4({tp})",
            "sw {s}, 36({tp})",
            "sub {s}, {h}, {x0}",
            "sw {s}, 12({tp})",
            "sw {s}, 44({tp})",
            "add {s}, {h}, {x1}",
            "sw {s}, 16({tp})",
            "sw {s}, 24({tp})",
            "add {s}, {h}, {a}",
            "sw {s}, 20({tp})",
            "add {s}, {h}, {b}",
            "sw {s}, 28({tp})",
            "sub {s}, {h}, {x1}",
            "sw {s}, 48({tp})",
            "sw {s}, 56({tp})",
            "sub {s}, {h}, {b}",
            "sw {s}, 52({tp})",
            "sub {s}, {h}, {a}",
            "sw {s}, 60({tp})",
            "addi {hp}, {hp}, 4",
            "addi {tp}, {tp}, 64",
            "bne {hp}, {he}, 2b",
            tp = inout(reg) t.as_mut_ptr() => _,
            hp = inout(reg) hi.as_ptr() => _,
            he = in(reg) hi.as_ptr().wrapping_add(16),
            x0 = in(reg) v[0],
            x1 = in(reg) v[1],
            a = in(reg) v[2],
            b = in(reg) v[3],
            h = out(reg) _,
            s = out(reg) _,
            options(nostack),
        );
    }
}

/// [`build`]'s clean rows on RV32, in asm: the 9 entries of each of the 9
/// high nibbles without the code 10, as [`build_rv`] (18 instructions a
/// row).
#[cfg(all(atome_rv32, not(atome_small)))]
#[inline(never)]
fn build_clean_rv(t: &mut [i32; 256], v: &[i32; 4], hi: &[i32; 16]) {
    // SAFETY: for each high nibble h of CLEAN_NIBBLES (all < 16), reads
    // hi[h] and writes t[16 h + l] for the low nibbles l of CLEAN_NIBBLES
    // (16 h + l < 256: inside the table; offsets up to 1020, inside a
    // 12-bit immediate). All word accesses are aligned (i32 arrays). Only
    // the named registers change; no stack use.
    unsafe {
        core::arch::asm!(
            ".irp n, 0, 1, 3, 4, 5, 7, 12, 13, 15",
            "lw {h}, 4*\\n({hp})",
            "sw {h}, 64*\\n({tp})",
            "add {s}, {h}, {x0}",
            "sw {s}, 64*\\n+4({tp})",
            "sub {s}, {h}, {x0}",
            "sw {s}, 64*\\n+12({tp})",
            "add {s}, {h}, {x1}",
            "sw {s}, 64*\\n+16({tp})",
            "add {s}, {h}, {a}",
            "sw {s}, 64*\\n+20({tp})",
            "add {s}, {h}, {b}",
            "sw {s}, 64*\\n+28({tp})",
            "sub {s}, {h}, {x1}",
            "sw {s}, 64*\\n+48({tp})",
            "sub {s}, {h}, {b}",
            "sw {s}, 64*\\n+52({tp})",
            "sub {s}, {h}, {a}",
            "sw {s}, 64*\\n+60({tp})",
            ".endr",
            tp = in(reg) t.as_mut_ptr(),
            hp = in(reg) hi.as_ptr(),
            x0 = in(reg) v[0],
            x1 = in(reg) v[1],
            a = in(reg) v[2],
            b = in(reg) v[3],
            h = out(reg) _,
            s = out(reg) _,
            options(nostack),
        );
    }
}

/// Adds (or, for the first chunk, stores) each row's N table entries
/// (N = 2 or 4): bytes `at .. at + N` of row j (rows `step` bytes apart)
/// into out[j]. With four tables, t[2] and t[3] start 1024 and 2048 bytes
/// after t[1] (the caller cuts them from one slice, in order).
#[inline(never)]
fn rows<const N: usize>(t: [&[i32; 256]; N], data: &[u8], at: usize, step: usize, out: &mut [i32], first: bool) {
    // (A zero step: no rows to read; `chunks` would panic.)
    let (Some(d), true) = (data.get(at..), step > 0) else { return };
    // The asm row loops' contract: N is 2 or 4, out is not empty, and row
    // j < out.len() reads d[j step .. j step + N], inside d.
    #[cfg(any(all(atome_armv6m, not(atome_small)), all(atome_thumb2, not(atome_small)), all(atome_rv32, not(atome_small))))]
    let whole = (N == 2 || N == 4) && !out.is_empty() && step >= N && super::mul_small(out.len() - 1, step).and_then(|v| v.checked_add(N)).is_some_and(|e| e <= d.len());
    #[cfg(all(atome_armv6m, not(atome_small)))]
    if whole {
        // SAFETY: as rows_t1 asks: `whole` (checked above), and four
        // tables lie as this function's contract says.
        unsafe {
            if first {
                rows_t1::<true, N>(t, d, step, out);
            } else {
                rows_t1::<false, N>(t, d, step, out);
            }
        }
        return;
    }
    #[cfg(all(atome_thumb2, not(atome_small)))]
    if whole {
        // Rows two at a time, then an odd last one.
        let (pairs, last) = out.split_at_mut(out.len() & !1);
        // SAFETY: as rows_t2 asks: `whole` (checked above); each part is
        // not empty where called (pairs: of even length, run two rows a
        // pass; the last row's bytes start at pairs.len() step).
        unsafe {
            match (first, pairs.is_empty()) {
                (true, false) => rows_t2::<1, N, 2>(t, d, step, pairs),
                (false, false) => rows_t2::<0, N, 2>(t, d, step, pairs),
                _ => {}
            }
            if let (false, Some(dl)) = (last.is_empty(), d.get(pairs.len() * step..)) {
                if first {
                    rows_t2::<1, N, 1>(t, dl, step, last);
                } else {
                    rows_t2::<0, N, 1>(t, dl, step, last);
                }
            }
        }
        return;
    }
    #[cfg(all(atome_rv32, not(atome_small)))]
    if whole {
        // SAFETY: as rows_rv asks: `whole` (checked above).
        unsafe {
            if first {
                rows_rv::<1, N>(t, d, step, out);
            } else {
                rows_rv::<0, N>(t, d, step, out);
            }
        }
        return;
    }
    for (o, r) in out.iter_mut().zip(d.chunks(step)) {
        let Some(b) = r.first_chunk::<N>() else { return };
        let v = t.iter().zip(b).fold(0i32, |a, (tk, &bk)| a.wrapping_add(tk[usize::from(bk)]));
        *o = if first { v } else { o.wrapping_add(v) };
    }
}

/// One row of [`bytes_rows_asm`]: the row's N bytes at r1 against the
/// tables (r2, r5; with four, r6 and r7) summed in r3 (`$first` "1": the
/// first entry stored there, "0": added to out's word at r0), stored at
/// r0, both pointers advanced (r8: the step).
#[cfg(all(atome_armv6m, not(atome_small)))]
macro_rules! t1_row {
    ($first:literal, $four:literal) => {
        concat!(
            "ldrb r4, [r1]\n",
            "lsls r4, r4, #2\n",
            ".if ", $first, "\n",
            "ldr r3, [r2, r4]\n",
            ".else\n",
            "ldr r3, [r0]\n",
            "ldr r4, [r2, r4]\n",
            "adds r3, r3, r4\n",
            ".endif\n",
            "ldrb r4, [r1, #1]\n",
            "lsls r4, r4, #2\n",
            "ldr r4, [r5, r4]\n",
            "adds r3, r3, r4\n",
            ".if ", $four, "\n",
            "ldrb r4, [r1, #2]\n",
            "lsls r4, r4, #2\n",
            "ldr r4, [r6, r4]\n",
            "adds r3, r3, r4\n",
            "ldrb r4, [r1, #3]\n",
            "lsls r4, r4, #2\n",
            "ldr r4, [r7, r4]\n",
            "adds r3, r3, r4\n",
            ".endif\n",
            "stmia r0!, {{r3}}\n",
            "add r1, r8\n",
        )
    };
}

/// The byte tables' row loop of [`rows_t1`]; `$first`
/// "1": the sums are stored (the first chunk), "0": loaded and added to;
/// `$four` "1": four tables (bytes 0-3 of each row; the third's and
/// fourth's bases 1024 and 2048 bytes after the second's), "0": two.
#[cfg(all(atome_armv6m, not(atome_small)))]
macro_rules! bytes_rows_asm {
    ($first:literal, $four:literal, $o:ident, $d:ident, $t0:expr, $t1:expr, $n:expr, $step:ident) => {
        core::arch::asm!(
            // Step and end to high registers (Thumb-1 passes only low
            // ones), the second table's base to r5; with four tables, the
            // third's and fourth's to r6 and r7 (low, so that a load takes
            // them as its base; LLVM reserves them, so they are kept in
            // r12 and lr and given back after the loop).
            "mov r8, r5",
            "mov r10, r4",
            "mov r5, r3",
            concat!(".if ", $four),
            "mov r12, r6",
            "mov lr, r7",
            "movs r4, #1",
            "lsls r4, r4, #10",
            "adds r6, r3, r4",
            "adds r7, r6, r4",
            ".endif",
            // An odd count of rows enters at the second row of the pass.
            "mov r3, r10",
            "subs r3, r3, r0",
            "lsls r3, r3, #29",
            "bmi 3f",
            "2:",
            t1_row!($first, $four),
            "3:",
            t1_row!($first, $four),
            "cmp r0, r10",
            "bne 2b",
            concat!(".if ", $four),
            "mov r6, r12",
            "mov r7, lr",
            ".endif",
            inout("r0") $o => _,
            inout("r1") $d.as_ptr() => _,
            in("r2") $t0,
            inout("r3") $t1 => _,
            inout("r4") $o.wrapping_add($n) => _,
            inout("r5") $step => _,
            out("r8") _,
            out("r10") _,
            out("r12") _,
            out("lr") _,
            options(nostack),
        )
    };
}

/// [`rows`] on ARMv6-M, in asm, two rows a pass: 12 instructions per row
/// of 8 weights with two tables, 20 per row of 16 with four (one less for
/// the first chunk, whose sums are stored).
///
/// # Safety
/// N is 2 or 4, `out` is not empty, `(out.len() - 1) * step + N <=
/// d.len()`, and with four tables t[2] and t[3] start 1024 and 2048 bytes
/// after t[1].
#[cfg(all(atome_armv6m, not(atome_small)))]
#[inline(always)]
unsafe fn rows_t1<const FIRST: bool, const N: usize>(t: [&[i32; 256]; N], d: &[u8], step: usize, out: &mut [i32]) {
    let o = out.as_mut_ptr();
    let n = out.len();
    let (Some(t0), Some(t1)) = (t.first().map(|t| t.as_ptr()), t.get(1).map(|t| t.as_ptr())) else { return };
    // SAFETY: row j (two a pass, an odd count entering at the second; the
    // loop stops when the output pointer reaches out's end; out is not
    // empty) reads d[j step .. j step + N] (inside d: the
    // caller's contract), the words t[k][b] for bytes b (< 256: inside
    // each table; with four, t[2] and t[3] reached at t[1] + 1024 and +
    // 2048 bytes, as the caller guarantees), and (unless FIRST) out[j],
    // then writes out[j]. Word accesses are aligned (i32 arrays). Only the
    // named registers and the flags change (r6 and r7, used with four
    // tables, hold their values again at the end); no stack use.
    unsafe {
        match (FIRST, N == 4) {
            (true, false) => bytes_rows_asm!("1", "0", o, d, t0, t1, n, step),
            (false, false) => bytes_rows_asm!("0", "0", o, d, t0, t1, n, step),
            (true, true) => bytes_rows_asm!("1", "1", o, d, t0, t1, n, step),
            (false, true) => bytes_rows_asm!("0", "1", o, d, t0, t1, n, step),
        }
    }
}

/// One row's N bytes at `{dp}` against the tables `{t0}` .. `{t3}`, added
/// to the sum register `$acc` (`{first}` 1: the first byte's entry is
/// stored in it); `{b}` scratch. ([`rows_t2`]'s rows.)
#[cfg(all(atome_thumb2, not(atome_small)))]
macro_rules! t2_row {
    ($acc:literal) => {
        concat!(
            ".if {first}\n",
            "ldrb {b}, [{dp}]\n",
            "ldr ", $acc, ", [{t0}, {b}, lsl #2]\n",
            ".else\n",
            "ldrb {b}, [{dp}]\n",
            "ldr {b}, [{t0}, {b}, lsl #2]\n",
            "add ", $acc, ", {b}\n",
            ".endif\n",
            "ldrb {b}, [{dp}, #1]\n",
            "ldr {b}, [{t1}, {b}, lsl #2]\n",
            "add ", $acc, ", {b}\n",
            ".if {four}\n",
            "ldrb {b}, [{dp}, #2]\n",
            "ldr {b}, [{t2}, {b}, lsl #2]\n",
            "add ", $acc, ", {b}\n",
            "ldrb {b}, [{dp}, #3]\n",
            "ldr {b}, [{t3}, {b}, lsl #2]\n",
            "add ", $acc, ", {b}\n",
            ".endif\n",
        )
    };
}

/// [`rows`] on Thumb-2, in asm, R (1 or 2) rows a pass: 15 instructions
/// per row of 16 weights with four tables and two rows a pass (17 with
/// one), 9 per row of 8 with two tables (11); one less a row for the
/// first chunk, whose sums are stored (two with one row a pass).
///
/// # Safety
/// N is 2 or 4, R is 1 or 2, `out` is not empty and its length a multiple
/// of R, and `(out.len() - 1) * step + N <= d.len()`.
#[cfg(all(atome_thumb2, not(atome_small)))]
#[inline(always)]
unsafe fn rows_t2<const FIRST: usize, const N: usize, const R: usize>(t: [&[i32; 256]; N], d: &[u8], step: usize, out: &mut [i32]) {
    let o = out.as_mut_ptr();
    let n = out.len();
    let tb = |k: usize| t.get(k).or(t.first()).map_or(core::ptr::null(), |t| t.as_ptr());
    // SAFETY: row j (R rows a pass; the loop stops when the output pointer
    // reaches out's end; out is not empty and its length a multiple of R)
    // reads d[j step .. j step + N] (inside d: the caller's contract), the
    // words t[k][b] for bytes b (< 256: inside each table; tables 2 and 3
    // only when N is 4), and (unless FIRST) out[j] (LDRD: word aligned),
    // then writes out[j]. Only the named registers and the flags change;
    // no stack use.
    unsafe {
        core::arch::asm!(
            "2:",
            ".if {first} == 0",
            ".if {two}",
            "ldrd {s0}, {s1}, [{op}]",
            ".else",
            "ldr {s0}, [{op}]",
            ".endif",
            ".endif",
            t2_row!("{s0}"),
            "add {dp}, {dp}, {st}",
            ".if {two}",
            t2_row!("{s1}"),
            "add {dp}, {dp}, {st}",
            "strd {s0}, {s1}, [{op}], #8",
            ".else",
            "str {s0}, [{op}], #4",
            ".endif",
            "cmp {op}, {oe}",
            "bne 2b",
            first = const FIRST,
            four = const N / 4,
            two = const R / 2,
            op = inout(reg) o => _,
            dp = inout(reg) d.as_ptr() => _,
            oe = in(reg) o.wrapping_add(n),
            st = in(reg) step,
            t0 = in(reg) tb(0),
            t1 = in(reg) tb(1),
            t2 = in(reg) tb(2),
            t3 = in(reg) tb(3),
            s0 = out(reg) _,
            s1 = out(reg) _,
            b = out(reg) _,
            options(nostack),
        );
    }
}

/// [`rows`] on RV32, in asm: 25 instructions per row of 16 weights with
/// four tables, 15 per row of 8 with two (two less for the first chunk,
/// whose sums are stored).
///
/// # Safety
/// N is 2 or 4, `out` is not empty, and `(out.len() - 1) * step + N <=
/// d.len()`.
#[cfg(all(atome_rv32, not(atome_small)))]
#[inline(always)]
unsafe fn rows_rv<const FIRST: usize, const N: usize>(t: [&[i32; 256]; N], d: &[u8], step: usize, out: &mut [i32]) {
    let o = out.as_mut_ptr();
    let n = out.len();
    let tb = |k: usize| t.get(k).or(t.first()).map_or(core::ptr::null(), |t| t.as_ptr());
    // SAFETY: row j (the loop stops when the output pointer reaches out's
    // end; out is not empty) reads d[j step .. j step + N] (inside d: the
    // caller's contract), the words t[k][b] for bytes b (< 256: inside
    // each table; tables 2 and 3 only when N is 4), and (unless FIRST)
    // out[j], then writes out[j]. Word accesses are aligned (i32 arrays).
    // Only the named registers change; no stack use.
    unsafe {
        core::arch::asm!(
            "2:",
            "lbu {b}, 0({dp})",
            "slli {b}, {b}, 2",
            "add {b}, {b}, {t0}",
            ".if {first}",
            "lw {s}, 0({b})",
            ".else",
            "lw {b}, 0({b})",
            "lw {s}, 0({op})",
            "add {s}, {s}, {b}",
            ".endif",
            "lbu {b}, 1({dp})",
            "slli {b}, {b}, 2",
            "add {b}, {b}, {t1}",
            "lw {b}, 0({b})",
            "add {s}, {s}, {b}",
            ".if {four}",
            "lbu {b}, 2({dp})",
            "slli {b}, {b}, 2",
            "add {b}, {b}, {t2}",
            "lw {b}, 0({b})",
            "add {s}, {s}, {b}",
            "lbu {b}, 3({dp})",
            "slli {b}, {b}, 2",
            "add {b}, {b}, {t3}",
            "lw {b}, 0({b})",
            "add {s}, {s}, {b}",
            ".endif",
            "sw {s}, 0({op})",
            "addi {op}, {op}, 4",
            "add {dp}, {dp}, {st}",
            "bne {op}, {oe}, 2b",
            first = const FIRST,
            four = const N / 4,
            op = inout(reg) o => _,
            dp = inout(reg) d.as_ptr() => _,
            oe = in(reg) o.wrapping_add(n),
            st = in(reg) step,
            t0 = in(reg) tb(0),
            t1 = in(reg) tb(1),
            t2 = in(reg) tb(2),
            t3 = in(reg) tb(3),
            s = out(reg) _,
            b = out(reg) _,
            options(nostack),
        );
    }
}

/// For each job, out[j] = sum_i W[j][i] x[i] for its rows (one position),
/// by byte tables in `t0` and `more`: four at a time (16 columns) when
/// `more` holds three tables (768 words) and the width is a multiple of
/// 16, else two (8 columns) when it holds one. False (nothing written)
/// unless every job is Trit2 of the same width, a multiple of 8 columns no
/// wider than x, with whole rows in its payload and room for every output,
/// and `more` holds a table ([`bytes_pay`] says whether they pay).
/// `clean`: the caller knows that no payload holds the code 10
/// ([`super::trit2_no_code10`]), so that only the 81 entries of the other
/// bytes are built; when one does, its sums are wrong (never undefined).
pub fn matvec_q_bytes(jobs: &mut [MvJobQ], x: &[i16], t0: &mut [i32; 256], more: &mut [i32], clean: bool) -> bool {
    let Some(cols) = jobs.first().map(|j| j.w.cols) else { return false };
    let bpr = cols / 4;
    let fits = |j: &MvJobQ| {
        j.w.packing == Packing::Trit2
            && j.w.cols == cols
            && j.out.len() >= j.w.rows
            && super::mul_small(j.w.rows, bpr).is_some_and(|b| b <= j.w.data.len())
    };
    if cols == 0 || !cols.is_multiple_of(8) || x.len() < cols || !jobs.iter().all(fits) {
        return false;
    }
    let x = x.get(..cols).unwrap_or(&[]);
    let Some((t1, rest)) = more.split_first_chunk_mut::<256>() else { return false };
    match rest.split_first_chunk_mut::<256>() {
        Some((t2, r)) if cols.is_multiple_of(16) => match r.first_chunk_mut::<256>() {
            Some(t3) => passes(jobs, x, [t0, t1, t2, t3], bpr, clean),
            None => passes(jobs, x, [t0, t1], bpr, clean),
        },
        _ => passes(jobs, x, [t0, t1], bpr, clean),
    }
    true
}

/// [`matvec_q_bytes`]' passes with N tables (N = 2 or 4; four lie in one
/// slice, in order): per 4 N columns, the tables built, then every job's
/// rows.
fn passes<const N: usize>(jobs: &mut [MvJobQ], x: &[i16], mut t: [&mut [i32; 256]; N], bpr: usize, clean: bool) {
    for (k, xc) in x.chunks_exact(4 * N).enumerate() {
        for (tk, q) in t.iter_mut().zip(xc.as_chunks::<4>().0) {
            build(tk, q, clean);
        }
        let tr = t.each_ref().map(|tk| &**tk);
        for j in jobs.iter_mut() {
            if let Some(o) = j.out.get_mut(..j.w.rows) {
                rows(tr, j.w.data, N * k, bpr, o, k == 0);
            }
        }
    }
}
