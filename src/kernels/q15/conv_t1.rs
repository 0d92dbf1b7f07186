//! The q15 engine's depthwise conv for K = 5 Trit2 on ARMv6-M (Cortex-M0,
//! M0+, M1), one pass per tap, four channels a step in asm: the same exact
//! sums L_c = sum_k w(c, k) rshr(x_k[c], s_k) as the engine's own loop
//! (`conv_sums`) when each tap's shift is 0 or 1 (see conv_t2.rs: the only
//! shifts the models' runs show). Thumb-1 has six low registers for
//! operands here: the five taps' row pointers do not fit beside a channel's
//! sum, so each tap adds its products into the sums in memory. About 10
//! instructions per tap and channel (LLVM's one-pass loop: about 114 per
//! channel).
//!
//! A code's weight is its two bits as a signed number (`LSLS` then `ASRS`
//! by 30: 01 is +1, 11 is -1, 00 is 0), which is wrong only for the unused
//! code `10`: a payload with one goes to the engine's loop.

use super::conv::Taps5;

/// One pass of tap `$k` (a literal) over the channels: out[c] += w(c, k)
/// x[c], x rounded by one bit (x - (x >> 1) = rshr(x, 1)) when `$shift`
/// is 1. Registers: r0 codes (5 bytes a step), r1 the tap's row, r2 out,
/// r3 weight (the end of out on entry), r4 x, r5 sum, r8 the end.
macro_rules! tap_pass {
    ($k:literal, $shift:literal, $data:ident, $row:ident, $o:ident, $end:ident) => {
        core::arch::asm!(
            // The end to a high register (Thumb-1 takes those only as
            // clobbers); CMP reads it.
            "mov r8, r3",
            "2:",
            ".irp c, 0, 1, 2, 3",
            // Code bits 10c + 2k of the step's 40: in byte (10c + 2k) / 8
            // at bit (10c + 2k) % 8 (a code never straddles two bytes).
            concat!("ldrb r3, [r0, #((10 * \\c + 2 * ", $k, ") >> 3)]"),
            concat!("lsls r3, r3, #(30 - ((10 * \\c + 2 * ", $k, ") & 7))"),
            "asrs r3, r3, #30",
            "ldrh r4, [r1, #(2 * \\c)]",
            "sxth r4, r4",
            concat!(".if ", $shift),
            "asrs r5, r4, #1",
            "subs r4, r4, r5",
            ".endif",
            "muls r3, r4, r3",
            "ldr r5, [r2, #(4 * \\c)]",
            "adds r5, r5, r3",
            "str r5, [r2, #(4 * \\c)]",
            ".endr",
            "adds r0, #5",
            "adds r1, #8",
            "adds r2, #16",
            "cmp r2, r8",
            "bne 2b",
            inout("r0") $data => _,
            inout("r1") $row => _,
            inout("r2") $o => _,
            inout("r3") $end => _,
            out("r4") _,
            out("r5") _,
            out("r8") _,
            options(nostack),
        )
    };
}

/// The sums of every channel into `out`; None (nothing written) unless
/// out.len() is a non-zero multiple of 4, every valid tap's row is at
/// least that long, the payload holds the channels' 10 out.len() bits and
/// has no code `10`. `clean`: the caller's [`super::has_code10`] of the payload
/// was false (checked once per layer, not per position).
pub fn conv5_t1(data: &[u8], t: &Taps5, clean: bool, out: &mut [i32]) -> Option<()> {
    let n = out.len();
    let valid = |k: usize| t.valid >> k & 1 == 1;
    // (Rows by iteration, not index: no bounds check, no panic path.)
    if !clean || n == 0 || !n.is_multiple_of(4) || t.rows.iter().enumerate().any(|(k, r)| valid(k) && r.len() < n) || data.len() < n / 4 * 5 {
        return None;
    }
    out.fill(0);
    let o = out.as_mut_ptr();
    let end = o.wrapping_add(n);
    let data = data.as_ptr();
    for (k, row) in t.rows.iter().enumerate().filter(|&(k, _)| valid(k)) {
        let row = row.as_ptr();
        let shift = t.shifted >> k & 1;
        // SAFETY: n / 4 steps of four channels: each reads bytes
        // 5g..5g+5 of data (inside: data.len() >= n / 4 * 5), four int16
        // of the row (at least n long; LDRH at even addresses: an i16
        // slice) and reads then writes four int32 of out (n long, word
        // aligned), stopping when the out pointer reaches o + n (n > 0, a
        // multiple of 4). Only the named registers and the flags change;
        // no stack use.
        unsafe {
            match (k, shift) {
                (0, 0) => tap_pass!("0", "0", data, row, o, end),
                (0, _) => tap_pass!("0", "1", data, row, o, end),
                (1, 0) => tap_pass!("1", "0", data, row, o, end),
                (1, _) => tap_pass!("1", "1", data, row, o, end),
                (2, 0) => tap_pass!("2", "0", data, row, o, end),
                (2, _) => tap_pass!("2", "1", data, row, o, end),
                (3, 0) => tap_pass!("3", "0", data, row, o, end),
                (3, _) => tap_pass!("3", "1", data, row, o, end),
                (4, 0) => tap_pass!("4", "0", data, row, o, end),
                _ => tap_pass!("4", "1", data, row, o, end),
            }
        }
    }
    Some(())
}
