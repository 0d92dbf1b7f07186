//! LayerNorm's first per-element pass on the Thumb-2 cores, two elements
//! a step.

/// LayerNorm's first per-element pass on the Thumb-2 cores: w[i] = ((((m
/// dm + c) >> t0) im + r2) >> t1) for m = xm[i] (wrapping products, as
/// the engine's loop), two elements a step from one word of `xm`: 7
/// instructions an element against LLVM's 8. Returns false (nothing
/// written) unless both hold the same even, non-zero number of elements.
#[cfg(all(atome_thumb2, not(atome_small)))]
#[inline(always)]
pub fn ln_first_t2(xm: &[i16], [dm, c, im, r2]: [i32; 4], [t0, t1]: [u32; 2], w: &mut [i32]) -> bool {
    let n = xm.len();
    if n == 0 || !n.is_multiple_of(2) || w.len() != n {
        return false;
    }
    // SAFETY: n / 2 steps, each reading one word (two int16) of xm
    // (unaligned LDR is allowed on Armv7-M and later) and writing two
    // int32 to w (word aligned: an i32 slice). Only the named registers
    // and the flags change.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldr {x}, [{xp}], #4",
            "sxth {a}, {x}",
            "asr {x}, {x}, #16",
            "mla {a}, {a}, {dm}, {c}",
            "mla {x}, {x}, {dm}, {c}",
            "asr {a}, {a}, {t0}",
            "asr {x}, {x}, {t0}",
            "mla {a}, {a}, {im}, {r2}",
            "mla {x}, {x}, {im}, {r2}",
            "asr {a}, {a}, {t1}",
            "asr {x}, {x}, {t1}",
            "strd {a}, {x}, [{wp}], #8",
            "subs {n}, {n}, #1",
            "bne 2b",
            xp = inout(reg) xm.as_ptr() => _,
            wp = inout(reg) w.as_mut_ptr() => _,
            n = inout(reg) n / 2 => _,
            dm = in(reg) dm,
            c = in(reg) c,
            im = in(reg) im,
            r2 = in(reg) r2,
            t0 = in(reg) t0,
            t1 = in(reg) t1,
            x = out(reg) _,
            a = out(reg) _,
            options(nostack),
        );
    }
    true
}
