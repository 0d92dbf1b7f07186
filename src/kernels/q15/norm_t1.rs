//! LayerNorm's per-element passes on ARMv6-M (Cortex-M0, M0+) in asm: the
//! three passes of [`super::norm::layer_norm_impl`]'s fast path.

/// Thumb-1 asm text: the word at `[$base, #$off]` into the high register
/// `$hi` through the low scratch `$tmp` (Thumb-1 loads only into low
/// registers; asm operands may name high ones only as clobbers).
#[cfg(all(atome_armv6m, not(atome_small)))]
macro_rules! to_high {
    ($tmp:literal, $base:literal, $off:literal, $hi:literal) => {
        concat!("ldr ", $tmp, ", [", $base, ", #", $off, "]\n", "mov ", $hi, ", ", $tmp, "\n")
    };
}

/// LayerNorm's per-element passes on ARMv6-M (Cortex-M0), in asm: the
/// same integers as the engine's loop (`ln_sums`), wrapping,
/// cm = (m dm + c) >> t0, zm = (cm im + r2) >> t1,
/// W = ((g zm + r3) >> t2) + ((b m4 + r4) >> t3) into `w`; OR of |W|.
/// Three passes, each with few enough values for Thumb-1's six low
/// registers (the others wait in high ones, loaded from a small array,
/// and a `MOV` brings a shift count down): about 37 instructions an
/// element where LLVM's one pass takes 47 with its spills. None (nothing
/// written) unless `xm.len() == w.len()` is even and at least 2 and every
/// shift is at most 31.
///
/// # Safety
/// `g` and `b` must be readable for `w.len()` int32 each.
#[cfg(all(atome_armv6m, not(atome_small)))]
pub unsafe fn ln_passes_t1(xm: &[i16], g: *const i32, b: *const i32, k: [i32; 7], t: [u32; 4], w: &mut [i32]) -> Option<u32> {
    let n = w.len();
    if xm.len() != n || n < 2 || !n.is_multiple_of(2) || t.iter().any(|&s| s > 31) {
        return None;
    }
    let [dm, c, im, r2, r3, m4, r4] = k;
    let [t0, t1, t2, t3] = t;
    let wp = w.as_mut_ptr();
    let end = wp.wrapping_add(n) as usize as u32;
    // The values each pass keeps in high registers: (c, r2, t0, t1, end),
    // (r3, t2, end), (m4, r4, t3, end).
    let ka = [c as u32, r2 as u32, t0, t1, end];
    let kb = [r3 as u32, t2, end];
    let kc = [m4 as u32, r4 as u32, t3, end];
    // Pass A: w = zm.
    // SAFETY: reads the five words of ka; n / 2 steps of two elements:
    // reads xm[i] (halfword aligned: an i16 slice, n long), writes w[i]
    // (word aligned, n long), stopping when the w pointer reaches its end
    // (n even, >= 2). Only the named registers and the flags change; no
    // stack use.
    unsafe {
        core::arch::asm!(
            to_high!("r5", "r4", "0", "r8"),
            to_high!("r5", "r4", "4", "r10"),
            to_high!("r5", "r4", "8", "r11"),
            to_high!("r5", "r4", "12", "r12"),
            to_high!("r5", "r4", "16", "lr"),
            "2:",
            ".irp k, 0, 1",
            "ldrh r4, [r0, #2*\\k]",
            "sxth r4, r4",
            "muls r4, r2, r4",
            "add r4, r8",
            "mov r5, r11",
            "asrs r4, r5",
            "muls r4, r3, r4",
            "add r4, r10",
            "mov r5, r12",
            "asrs r4, r5",
            "str r4, [r1, #4*\\k]",
            ".endr",
            "adds r0, #4",
            "adds r1, #8",
            "cmp r1, lr",
            "bne 2b",
            inout("r0") xm.as_ptr() => _,
            inout("r1") wp => _,
            in("r2") dm,
            in("r3") im,
            inout("r4") ka.as_ptr() => _,
            out("r5") _,
            out("r8") _,
            out("r10") _,
            out("r11") _,
            out("r12") _,
            out("lr") _,
            options(nostack),
        );
    }
    // Pass B1: w = (g zm + r3) >> t2.
    // SAFETY: as pass A's, reading kb, g[i] (the caller's n int32) and
    // reading then writing w[i].
    unsafe {
        core::arch::asm!(
            to_high!("r5", "r4", "0", "r8"),
            to_high!("r5", "r4", "4", "r10"),
            to_high!("r5", "r4", "8", "lr"),
            "2:",
            ".irp k, 0, 1",
            "ldr r2, [r0, #4*\\k]",
            "ldr r3, [r1, #4*\\k]",
            "muls r2, r3, r2",
            "add r2, r8",
            "mov r5, r10",
            "asrs r2, r5",
            "str r2, [r1, #4*\\k]",
            ".endr",
            "adds r0, #8",
            "adds r1, #8",
            "cmp r1, lr",
            "bne 2b",
            inout("r0") g => _,
            inout("r1") wp => _,
            out("r2") _,
            out("r3") _,
            inout("r4") kb.as_ptr() => _,
            out("r5") _,
            out("r8") _,
            out("r10") _,
            out("lr") _,
            options(nostack),
        );
    }
    // Pass B2: w += (b m4 + r4) >> t3, and the OR of |w|.
    let mut mx = 0u32;
    // SAFETY: as pass B1's, with kc and b.
    unsafe {
        core::arch::asm!(
            to_high!("r2", "r3", "0", "r8"),
            to_high!("r2", "r3", "4", "r10"),
            to_high!("r2", "r3", "8", "r11"),
            to_high!("r2", "r3", "12", "lr"),
            "2:",
            ".irp k, 0, 1",
            "ldr r2, [r0, #4*\\k]",
            "mov r5, r8",
            "muls r2, r5, r2",
            "add r2, r10",
            "mov r5, r11",
            "asrs r2, r5",
            "ldr r3, [r1, #4*\\k]",
            "adds r2, r2, r3",
            "str r2, [r1, #4*\\k]",
            "asrs r3, r2, #31",
            "eors r2, r3",
            "subs r2, r2, r3",
            "orrs r4, r2",
            ".endr",
            "adds r0, #8",
            "adds r1, #8",
            "cmp r1, lr",
            "bne 2b",
            inout("r0") b => _,
            inout("r1") wp => _,
            out("r2") _,
            inout("r3") kc.as_ptr() => _,
            inout("r4") mx,
            out("r5") _,
            out("r8") _,
            out("r10") _,
            out("r11") _,
            out("lr") _,
            options(nostack),
        );
    }
    Some(mx)
}
