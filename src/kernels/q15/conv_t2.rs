//! The q15 engine's depthwise conv for K = 5 Trit2 on the Thumb-2 cores
//! (Cortex-M3, M4, M7, M33), four channels a step in asm: the same exact
//! sums L_c = sum_k w(c, k) rshr(x_k[c], s_k) as the engine's own loop
//! (`conv_sums`) when each tap's shift is 0 or 1 (the only shifts the
//! models' runs show: adjacent LayerNorm rows differ by at most one
//! exponent); missing taps (the first K - 1 positions, zero rows) have
//! their codes masked to 0. LLVM's loop kept the five taps'
//! pointers, addends and shifts live and spilled: 51 to 75 instructions a
//! channel; this one takes about 36.
//!
//! rshr(x, 1) = (x + 1) >> 1 = x - (x >> 1), so
//! L_c = sum_k w_k x_k - sum_k u_k (x_k >> 1), with u_k = w_k for a
//! shifted tap and 0 otherwise: two weights per tap read by `SBFX` from
//! the channel's code bits and from the same bits masked to the shifted
//! taps. Code `10` (weight 0) is cleared first, so that `SBFX` of a code
//! is its weight (01: +1, 11: -1, 00: 0).

/// Clears code `10` in r9 (hi bit without lo bit: weight 0), so that each
/// 2-bit field is its weight as a signed number. lr is scratch.
macro_rules! fix_codes {
    () => {
        concat!("mvn lr, r9\n", "and lr, lr, #0x55555555\n", "bic r9, r9, lr, lsl #1\n")
    };
}

/// One tap of one channel: x from the tap's row pointer `p` (advanced),
/// its weight from r9 and its shifted-tap weight from r10 at bit `b`;
/// r11 += w x - u (x >> 1) (`first`: r11 = w x - u (x >> 1)).
macro_rules! tap {
    ($p:literal, $b:literal, $acc:literal) => {
        concat!(
            "ldrsh r12, [", $p, "], #2\n",
            "sbfx lr, r9, #", $b, ", #2\n",
            $acc, "\n",
            "asr r12, r12, #1\n",
            "sbfx lr, r10, #", $b, ", #2\n",
            "mls r11, lr, r12, r11\n",
        )
    };
}

/// [`tap!`] when no tap is shifted: r11 += w x.
macro_rules! tap_plain {
    ($p:literal, $b:literal, $acc:literal) => {
        concat!("ldrsh r12, [", $p, "], #2\n", "sbfx lr, r9, #", $b, ", #2\n", $acc, "\n")
    };
}

/// One channel whose tap k codes are at bits b_k of r9/r10, each tap by
/// the macro `tap`: its sum to the out pointer r5 (advanced).
macro_rules! chan {
    ($tap:ident, $b0:literal, $b1:literal, $b2:literal, $b3:literal, $b4:literal) => {
        concat!(
            $tap!("r0", $b0, "mul r11, lr, r12"),
            $tap!("r1", $b1, "mla r11, lr, r12, r11"),
            $tap!("r2", $b2, "mla r11, lr, r12, r11"),
            $tap!("r3", $b3, "mla r11, lr, r12, r11"),
            $tap!("r4", $b4, "mla r11, lr, r12, r11"),
            "str r11, [r5], #4\n",
        )
    };
}

/// The whole loop, each tap by the macro `tap` (see [`conv5_t2`]).
macro_rules! conv_loop {
    ($tap:ident, $t:ident, $o:ident, $n:ident, $data:ident, $m3:ident, $v3:ident) => {
        core::arch::asm!(
            "str r12, [sp, #-16]!",
            "str lr, [sp, #4]",
            "str r11, [sp, #8]",
            "2:",
            "ldr r9, [r8]",
            fix_codes!(),
            "ldr lr, [sp, #8]",
            "and r9, r9, lr",
            "ldr lr, [sp, #4]",
            "and r10, r9, lr",
            chan!($tap, "0", "2", "4", "6", "8"),
            chan!($tap, "10", "12", "14", "16", "18"),
            chan!($tap, "20", "22", "24", "26", "28"),
            // The fourth channel: bits 30..39 of the five bytes.
            "ldrb lr, [r8, #4]",
            "lsr r9, r9, #30",
            "orr r9, r9, lr, lsl #2",
            fix_codes!(),
            "ldr lr, [sp, #8]",
            "and r9, r9, lr",
            "ldr lr, [sp, #4]",
            "and r10, r9, lr",
            chan!($tap, "0", "2", "4", "6", "8"),
            "add r8, r8, #5",
            "ldr lr, [sp]",
            "cmp r5, lr",
            "bne 2b",
            "add sp, sp, #16",
            inout("r0") $t.rows[0].as_ptr() => _,
            inout("r1") $t.rows[1].as_ptr() => _,
            inout("r2") $t.rows[2].as_ptr() => _,
            inout("r3") $t.rows[3].as_ptr() => _,
            inout("r4") $t.rows[4].as_ptr() => _,
            inout("r5") $o => _,
            inout("r8") $data.as_ptr() => _,
            out("r9") _,
            out("r10") _,
            inout("r11") $v3 => _,
            inout("r12") $o.wrapping_add($n) => _,
            inout("lr") $m3 => _,
        )
    };
}

pub use super::Taps5;

/// The sums of every channel into `out`; None (nothing written) unless
/// out.len() is a multiple of 4, every row is at least that long and the
/// payload holds the channels' 10 out.len() bits.
pub fn conv5_t2(data: &[u8], t: &Taps5, out: &mut [i32]) -> Option<()> {
    let n = out.len();
    if n == 0 || !n.is_multiple_of(4) || t.rows.iter().any(|r| r.len() < n) || data.len() < n / 4 * 5 {
        return None;
    }
    // Code bits of the shifted taps and of the taps that count, for the
    // three channels of a word.
    let (mut m, mut v) = (0u32, 0u32);
    for k in 0..5 {
        if t.valid >> k & 1 == 1 {
            v |= 3 << (2 * k);
            if t.shifted >> k & 1 == 1 {
                m |= 3 << (2 * k);
            }
        }
    }
    // (Bits 30 and 31 are the fourth channel's first code: kept by the
    // first mask, masked after the shift that brings them down.)
    let (m3, v3) = (m | m << 10 | m << 20, v | v << 10 | v << 20 | 0xC000_0000);
    let o = out.as_mut_ptr();
    // SAFETY: four channels a step, n / 4 steps: each step reads bytes
    // 5g..5g+5 of data (an unaligned word and a byte; Armv7-M and later
    // allow unaligned LDR from normal memory), which the check above keeps
    // inside; four int16 from each row (post-incremented pointers, rows at
    // least n long) and writes four int32 to out (n long), stopping when
    // the out pointer reaches o + n. The end and the two masks live in 16
    // bytes pushed below sp and released before the asm ends; only the
    // named registers and the flags change.
    unsafe {
        if m == 0 {
            conv_loop!(tap_plain, t, o, n, data, m3, v3);
        } else {
            conv_loop!(tap, t, o, n, data, m3, v3);
        }
    }
    Some(())
}
