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
//!
//! On Armv7E-M (M4, M7) two channels a step instead, one word of each
//! row and `SMLABB`/`SMLATB` ([`plain_dsp`]), with each shifted tap's
//! values rounded first into a copy on the stack (`SHADD16`), 32 channels
//! at a time: 256 more bytes of stack, about 17.5 instructions a channel
//! where the loop above takes 21.5 without shifted taps and 36 with.

/// Clears code `10` in r9 (hi bit without lo bit: weight 0), so that each
/// 2-bit field is its weight as a signed number. lr is scratch.
#[cfg(not(all(atome_dsp, not(atome_small))))]
macro_rules! fix_codes {
    () => {
        concat!("mvn lr, r9\n", "and lr, lr, #0x55555555\n", "bic r9, r9, lr, lsl #1\n")
    };
}

/// A channel group's codes in r9 made ready for `chan`: code `10` read as
/// 0 ([`fix_codes`]), then r9 masked by the word at [sp, #8] and r10 =
/// r9 masked by the word at [sp, #4] (the weights and the shifted-tap
/// weights that [`tap`] reads).
#[cfg(not(all(atome_dsp, not(atome_small))))]
macro_rules! chan_codes {
    () => {
        concat!(fix_codes!(), "ldr lr, [sp, #8]\n", "and r9, r9, lr\n", "ldr lr, [sp, #4]\n", "and r10, r9, lr\n")
    };
}

/// One tap of one channel: x from the tap's row pointer `p` (advanced),
/// its weight from r9 and its shifted-tap weight from r10 at bit `b`;
/// r11 += w x - u (x >> 1) (`first`: r11 = w x - u (x >> 1)).
#[cfg(not(all(atome_dsp, not(atome_small))))]
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
#[cfg(not(all(atome_dsp, not(atome_small))))]
macro_rules! tap_plain {
    ($p:literal, $b:literal, $acc:literal) => {
        concat!("ldrsh r12, [", $p, "], #2\n", "sbfx lr, r9, #", $b, ", #2\n", $acc, "\n")
    };
}

/// One channel whose tap k codes are at bits b_k of r9/r10, each tap by
/// the macro `tap`: its sum to the out pointer r5 (advanced).
#[cfg(not(all(atome_dsp, not(atome_small))))]
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
#[cfg(not(all(atome_dsp, not(atome_small))))]
macro_rules! conv_loop {
    ($tap:ident, $t:ident, $o:ident, $n:ident, $data:ident, $m3:ident, $v3:ident) => {
        core::arch::asm!(
            "str r12, [sp, #-16]!",
            "str lr, [sp, #4]",
            "str r11, [sp, #8]",
            "2:",
            "ldr r9, [r8]",
            chan_codes!(),
            chan!($tap, "0", "2", "4", "6", "8"),
            chan!($tap, "10", "12", "14", "16", "18"),
            chan!($tap, "20", "22", "24", "26", "28"),
            // The fourth channel: bits 30..39 of the five bytes.
            "ldrb lr, [r8, #4]",
            "lsr r9, r9, #30",
            "orr r9, r9, lr, lsl #2",
            chan_codes!(),
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

pub use super::conv::Taps5;

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
    #[cfg(all(atome_dsp, not(atome_small)))]
    {
        let _ = m3;
        conv_dsp(data, t, out, v3)
    }
    #[cfg(not(all(atome_dsp, not(atome_small))))]
    {
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
}

/// One tap of two channels on Armv7E-M: a word of the tap's row (both
/// channels' values) from the pointer `p` (advanced), each channel's
/// weight by SBFX from r9 (bits `b` and `b` + 10), multiplied with its
/// half by SMLABB/SMLATB into r12/lr (`$first`: SMULBB/SMULTB).
#[cfg(all(atome_dsp, not(atome_small)))]
macro_rules! tap2 {
    ($p:literal, $b:literal, $b2:literal, $mul0:literal, $mul1:literal) => {
        concat!(
            "ldr r10, [", $p, "], #4\n",
            "sbfx r11, r9, #", $b, ", #2\n",
            $mul0, "\n",
            "sbfx r11, r9, #", $b2, ", #2\n",
            $mul1, "\n",
        )
    };
}

/// Two channels (codes at bits 0-9 and 10-19 of r9): their sums stored
/// at r5 (advanced).
#[cfg(all(atome_dsp, not(atome_small)))]
macro_rules! chan2 {
    () => {
        concat!(
            tap2!("r0", "0", "10", "smulbb r12, r10, r11", "smultb lr, r10, r11"),
            tap2!("r1", "2", "12", "smlabb r12, r10, r11, r12", "smlatb lr, r10, r11, lr"),
            tap2!("r2", "4", "14", "smlabb r12, r10, r11, r12", "smlatb lr, r10, r11, lr"),
            tap2!("r3", "6", "16", "smlabb r12, r10, r11, r12", "smlatb lr, r10, r11, lr"),
            tap2!("r4", "8", "18", "smlabb r12, r10, r11, r12", "smlatb lr, r10, r11, lr"),
            "strd r12, lr, [r5], #8\n",
        )
    };
}

/// The codes in r9 of a [`plain_dsp`] step made ready for [`tap2`]: code
/// `10` cleared (weight 0), the missing taps masked by the word at
/// [sp, #8]. r10 and r11 are scratch.
#[cfg(all(atome_dsp, not(atome_small)))]
macro_rules! codes2 {
    () => {
        concat!("mvn r11, r9\n", "and r11, r11, #0x55555555\n", "bic r9, r9, r11, lsl #1\n", "ldr r10, [sp, #8]\n", "and r9, r9, r10")
    };
}

/// The plain sums (no tap shifted) of `n` channels (a multiple of 4,
/// n >= 4) on Armv7E-M, two channels a step: one word of each tap's row,
/// the weights by SBFX, SMLABB/SMLATB: about 17.5 instructions a channel
/// against 21.5 with one channel a step.
///
/// # Safety
/// Every row at least n long; out writable for n int32 (word aligned);
/// data readable for n / 4 * 5 bytes.
#[cfg(all(atome_dsp, not(atome_small)))]
#[inline(always)]
unsafe fn plain_dsp(rows: [&[i16]; 5], out: *mut i32, n: usize, data: *const u8, v3: u32) {
    // SAFETY: the caller's contract: n / 4 steps of four channels, each
    // reading two words of every row (unaligned LDR allowed on Armv7E-M),
    // five payload bytes (a word and a byte) and writing four int32,
    // stopping when the out pointer reaches out + n. The end and the mask
    // live in 16 bytes below sp, released before the asm ends; only the
    // named registers and the flags change.
    unsafe {
        core::arch::asm!(
            "sub sp, sp, #16",
            "str r12, [sp]",
            "str r11, [sp, #8]",
            "2:",
            "ldr r9, [r8]",
            codes2!(),
            chan2!(),
            // Channels 2 and 3: bits 20..39 of the five bytes.
            "ldrb r10, [r8, #4]",
            "lsr r9, r9, #20",
            "orr r9, r9, r10, lsl #12",
            codes2!(),
            chan2!(),
            "add r8, r8, #5",
            "ldr r10, [sp]",
            "cmp r5, r10",
            "bne 2b",
            "add sp, sp, #16",
            inout("r0") rows[0].as_ptr() => _,
            inout("r1") rows[1].as_ptr() => _,
            inout("r2") rows[2].as_ptr() => _,
            inout("r3") rows[3].as_ptr() => _,
            inout("r4") rows[4].as_ptr() => _,
            inout("r5") out => _,
            inout("r8") data => _,
            out("r9") _,
            out("r10") _,
            inout("r11") v3 => _,
            inout("r12") out.wrapping_add(n) => _,
            out("lr") _,
        );
    }
}

/// [`conv5_t2`] on Armv7E-M: without shifted taps [`plain_dsp`] over all
/// channels; with them, CH channels at a time, each shifted tap's values
/// rounded once into a copy (`SHADD16` with 1: rshr(x, 1) of two int16 in
/// one instruction), then [`plain_dsp`] (about 17.5 instructions a
/// channel and 2 per shifted value, where the loop with shifted taps
/// takes 36 a channel). The checks are conv5_t2's.
#[cfg(all(atome_dsp, not(atome_small)))]
fn conv_dsp(data: &[u8], t: &Taps5, out: &mut [i32], v3: u32) -> Option<()> {
    const CH: usize = 32;
    let n = out.len();
    let shifted = t.shifted & t.valid;
    if shifted == 0 {
        // SAFETY: conv5_t2's checks (n a multiple of 4 and at least 4,
        // rows at least n long, n / 4 * 5 payload bytes).
        unsafe { plain_dsp(t.rows, out.as_mut_ptr(), n, data.as_ptr(), v3) };
        return Some(());
    }
    // Four copies of CH values: the engine shifts at most four taps (not
    // the one with the largest exponent); five take chunks of 24.
    let mut buf = core::mem::MaybeUninit::<[i16; 4 * CH]>::uninit();
    let bp = buf.as_mut_ptr().cast::<i16>();
    let ch = if shifted.count_ones() <= 4 { CH } else { 24 };
    let mut c0 = 0;
    while c0 < n {
        let m = ch.min(n - c0);
        let mut rows = [core::ptr::null::<i16>(); 5];
        let mut dst = bp;
        for (k, r) in rows.iter_mut().enumerate() {
            let src = t.rows[k].get(c0..c0 + m)?;
            *r = src.as_ptr();
            if shifted >> k & 1 == 1 {
                // SAFETY: reads m / 2 words (m int16, m a multiple of 4)
                // from src and writes as many at dst, inside buf (at most
                // five copies of ch values each: 4 CH or 5 * 24 <= 4 CH
                // int16); unaligned word access is allowed on Armv7E-M.
                // Only the named registers and the flags change.
                unsafe {
                    core::arch::asm!(
                        "2:",
                        "ldr {a}, [{s}], #4",
                        "shadd16 {a}, {a}, {one}",
                        "str {a}, [{d}], #4",
                        "subs {c}, {c}, #1",
                        "bne 2b",
                        s = inout(reg) src.as_ptr() => _,
                        d = inout(reg) dst => _,
                        c = inout(reg) m / 2 => _,
                        one = in(reg) 0x0001_0001u32,
                        a = out(reg) _,
                        options(nostack),
                    );
                }
                *r = dst;
                dst = dst.wrapping_add(ch);
            }
        }
        // SAFETY: each row pointer addresses m readable int16 (the row's
        // chunk, or a buf row written just above); plain_dsp reads them
        // through slices of that length.
        let rs: [&[i16]; 5] = core::array::from_fn(|k| unsafe { core::slice::from_raw_parts(rows[k], m) });
        let o = out.get_mut(c0..c0 + m)?.as_mut_ptr();
        let p = data.get(c0 / 4 * 5..)?.as_ptr();
        // SAFETY: m is a multiple of 4 (n, CH and 24 are), at least 4; every
        // row holds m values, out m from c0, and the payload from byte
        // c0 / 4 * 5 the chunk's 10 m bits (inside by conv5_t2's check).
        unsafe { plain_dsp(rs, o, m, p, v3) };
        c0 += m;
    }
    Some(())
}
