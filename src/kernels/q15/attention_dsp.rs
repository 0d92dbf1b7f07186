//! The sparse pathway's weighted sum of four value rows on Armv7E-M
//! (Cortex-M4, M7) in asm.

/// The sparse pathway's weighted sum of four value rows on Armv7E-M:
/// out[c] = k0 v0[c] + k1 v1[c] + k2 v2[c] + k3 v3[c], two channels a
/// step (one word of each row, `SMULBB`/`SMLABB` on the low halves and
/// `SMULTB`/`SMLATB` on the high ones, the weights two to a register and
/// picked by the B/T of `SMLAxy`); the OR of
/// |out|. 10.5 instructions a channel against 18. None (nothing written)
/// for an odd length, short rows or a weight outside int16.
#[inline(always)]
pub fn att_sum4_dsp(out: &mut [i32], rows: [&[i16]; 4], ks: [i32; 4]) -> Option<u32> {
    let n = out.len();
    if n == 0 || !n.is_multiple_of(2) || rows.iter().any(|r| r.len() < n) || ks.iter().any(|k| !(-32768..32768).contains(k)) {
        return None;
    }
    let [k0, k1, k2, k3] = ks;
    let o = out.as_mut_ptr();
    let mut mx = 0u32;
    // SAFETY: n / 2 steps, each reading one word (two int16) of each row
    // (rows at least n long; unaligned LDR is allowed on Armv7E-M) and
    // writing two int32 at o (word aligned: an i32 slice), stopping when
    // the out pointer reaches o + n. Only the named registers and the
    // flags (Q included) change.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldr {a}, [{r0}], #4",
            "smulbb {s0}, {a}, {k01}",
            "smultb {s1}, {a}, {k01}",
            "ldr {a}, [{r1}], #4",
            "smlabt {s0}, {a}, {k01}, {s0}",
            "smlatt {s1}, {a}, {k01}, {s1}",
            "ldr {a}, [{r2}], #4",
            "smlabb {s0}, {a}, {k23}, {s0}",
            "smlatb {s1}, {a}, {k23}, {s1}",
            "ldr {a}, [{r3}], #4",
            "smlabt {s0}, {a}, {k23}, {s0}",
            "smlatt {s1}, {a}, {k23}, {s1}",
            "strd {s0}, {s1}, [{o}], #8",
            "eor {a}, {s0}, {s0}, asr #31",
            "sub {a}, {a}, {s0}, asr #31",
            "orr {mx}, {mx}, {a}",
            "eor {a}, {s1}, {s1}, asr #31",
            "sub {a}, {a}, {s1}, asr #31",
            "orr {mx}, {mx}, {a}",
            "cmp {o}, {end}",
            "bne 2b",
            r0 = inout(reg) rows[0].as_ptr() => _,
            r1 = inout(reg) rows[1].as_ptr() => _,
            r2 = inout(reg) rows[2].as_ptr() => _,
            r3 = inout(reg) rows[3].as_ptr() => _,
            o = inout(reg) o => _,
            end = in(reg) o.wrapping_add(n),
            k01 = in(reg) (k0 as u32 & 0xFFFF) | (k1 as u32) << 16,
            k23 = in(reg) (k2 as u32 & 0xFFFF) | (k3 as u32) << 16,
            mx = inout(reg) mx,
            a = out(reg) _,
            s0 = out(reg) _,
            s1 = out(reg) _,
            options(nostack),
        );
    }
    Some(mx)
}
