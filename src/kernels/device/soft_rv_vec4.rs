//! The four-vector and Trit2-direct forms of the RV32 accumulate loop
//! (soft_rv.rs holds the one-vector loop whose step these repeat): a full
//! pass of four soft vectors decodes each entry once for all four sums,
//! and the Trit2 forms read a row block's bytes through
//! [`super::soft::TRIT2_V4`] without building entries.

/// The four sums (t0, t1), (s0, s1), (s2, s3), (s4, s5) packed into their
/// floats at o + i * ostride (o and ostride from the frame, a0 and a3).
#[cfg(atome_rv32)]
macro_rules! pack4 {
    () => {
        concat!(
            "lw a0, 0(sp)\n", "lw a3, 4(sp)\n",
            "atome_v4_pack t0, t1\n", "atome_v4_pack s0, s1\n", "atome_v4_pack s2, s3\n", "atome_v4_pack s4, s5",
        )
    };
}

/// The next Trit2 byte of the Trit2 loops (a1 = the next byte, advanced;
/// a3 = its words, advanced by four columns): its entries' word from the
/// table at s7 into s6 (zero: no nonzero weight).
#[cfg(atome_rv32)]
macro_rules! trit2_byte {
    () => {
        concat!(
            "lbu a4, 0(a1)\n", "addi a1, a1, 1\n", "addi a3, a3, 16\n",
            "slli a4, a4, 2\n", "add a4, a4, s7\n", "lw s6, 0(a4)",
        )
    };
}

/// `$op` (sw: save, lw: restore) of s0-s5 at 8(sp) .. 28(sp): the frame
/// slots of the four-vector loops' callee-saved registers.
#[cfg(atome_rv32)]
macro_rules! s_regs {
    ($op:literal) => {
        concat!(
            $op, " s0, 8(sp)\n", $op, " s1, 12(sp)\n", $op, " s2, 16(sp)\n",
            $op, " s3, 20(sp)\n", $op, " s4, 24(sp)\n", $op, " s5, 28(sp)",
        )
    };
}

/// [`super::soft_rv::run_vecs`] for the four vectors of a full pass at once, all of them
/// soft: each entry is loaded and decoded once and its term added to the
/// four sums in turn (the per-entry load, sign branch and loop control
/// shared by four steps). Vector i has its sum at byte offset i *
/// `ostride` from `o` and its words at `words`.add(i * SB). Returns 0 when
/// every entry was added to every sum (packed back into the floats); 1
/// when a sum is not one of the loop's accumulators (all four floats as
/// they were); else left << 2 | i: entry n - left (n = -`neg_rem`) is left
/// to the Rust step for vector i, vectors below i took it already and the
/// others did not; all four sums are packed back into their floats.
///
/// # Safety
/// As [`super::soft_rv::run_vecs`] with four vectors, all of them soft.
#[cfg(atome_rv32)]
pub(super) unsafe fn run_vec4(o: *mut f32, ostride: usize, ents_end: *const u8, words: *const i32, neg_rem: i32) -> u32 {
    // SAFETY: as in `soft::step::asm_run_vecs`; the routine saves the callee-saved
    // registers it uses (s0-s5) in its own 32-byte frame.
    unsafe { atome_soft_vec4_rv(o, ostride, ents_end, words, neg_rem) }
}

/// [`run_vec4`] straight from a row block's Trit2 bytes (`nbytes` whole
/// bytes, four columns each, from a byte boundary), with `tab` =
/// [`super::soft::TRIT2_V4`]: no entries are built. Returns 0 or 1 as
/// [`run_vec4`]; else (col + 1) << 2 | i: the entry of column col is left
/// to the Rust step for vector i (vectors below i took it already, the
/// others did not); all four sums are packed back into their floats.
/// `zero`: the four sums are +0.0 (they are not read).
///
/// # Safety
/// As [`run_vec4`], with `bytes` readable for `nbytes` >= 0 bytes
/// (nbytes * 4 <= SB) in place of the entries.
#[cfg(atome_rv32)]
pub(super) unsafe fn run_vec4_t2(o: *mut f32, ostride: usize, bytes: *const u8, words: *const i32, nbytes: usize, tab: &[u32; 256], zero: bool) -> u32 {
    // SAFETY: as in `run_vec4`; the routine reads the bytes, their
    // table entries and the words they name, saves s0-s7 in its own
    // 48-byte frame.
    unsafe { atome_soft_vt2_rv(o, ostride, bytes, words, nbytes, tab.as_ptr(), zero as u32) }
}

/// [`run_vec4_t2`] for a pass of one vector (its sum at `o`, its words
/// at `words`); the same returns, with i = 0.
///
/// # Safety
/// As [`run_vec4_t2`], for one vector.
#[cfg(atome_rv32)]
pub(super) unsafe fn run_vec1_t2(o: *mut f32, bytes: *const u8, nbytes: usize, words: *const i32, tab: &[u32; 256], zero: bool) -> u32 {
    // SAFETY: as in `run_vec4_t2`; a 16-byte frame for s6, s7.
    unsafe { atome_soft_vt1_rv(o, bytes, nbytes, words, tab.as_ptr(), zero as u32) }
}

#[cfg(atome_rv32)]
extern "C" {
    fn atome_soft_vt1_rv(o: *mut f32, bytes: *const u8, nbytes: usize, words: *const i32, tab: *const u32, zero: u32) -> u32;
    fn atome_soft_vt2_rv(o: *mut f32, ostride: usize, bytes: *const u8, words: *const i32, nbytes: usize, tab: *const u32, zero: u32) -> u32;
    fn atome_soft_vec4_rv(o: *mut f32, ostride: usize, ents_end: *const u8, words: *const i32, neg_rem: i32) -> u32;
}

// The four-vector loop: a0 = the entry's word address for vector 0 (the
// words + its sign-extended entry), a1 = the next entry, a2 = the end of
// the entries, a3 = the words; the sums (m6, e - WB) of vectors 0-3 in
// (t0, t1), (s0, s1), (s2, s3), (s4, s5); t3-t6 the constants of the loop
// above; a4-a7 and t2 scratch as there. Each vector's step is the step
// above with its registers; its common case falls through to the next
// vector's step, the other cases come back to it (.Lv4n<sfx>).
#[cfg(atome_rv32)]
core::arch::global_asm!(
    // The common line of one vector's step: the word at \OFF from a0.
    ".macro atome_v4_main M, E, OFF, neg, sfx",
    "lw a5, \\OFF(a0)",
    "andi a7, a5, 63",
    "andi a5, a5, -64",
    "sub a6, \\E, a7",
    "bgeu a6, t4, .Lv4f\\sfx",
    ".if \\neg",
    "neg a5, a5",
    ".endif",
    "sra t2, a5, a6",
    "add t2, \\M, t2",
    round6!("\\M", ".Lv4ao\\sfx", ".Lv4h\\sfx"),
    ".Lv4n\\sfx:",
    ".endm",
    // a4 = the bits shifted out of small (d in a6, 6 < d < 32; nonzero
    // when the exact sum is above t): small is the term (src 0: its word
    // at \OFF from a0) or the accumulator (src 1: \M).
    ".macro atome_v4_lost M, OFF, src",
    "neg a5, a6",
    ".if \\src",
    "sll a4, \\M, a5",
    ".else",
    "lw a4, \\OFF(a0)",
    "andi a4, a4, -64",
    "sll a4, a4, a5",
    ".endif",
    ".endm",
    // t off big's binade (as atome_rv_off), big's exponent in \eb; at a
    // half, bits shifted out (atome_v4_lost) round away from it.
    ".macro atome_v4_off M, E, eb, sfx, out, next, OFF, src",
    "bltz a5, .Lv4dn\\sfx",
    "addi a5, t2, 64",
    "andi a4, a5, 127",
    "beqz a4, .Lv4uh\\sfx",
    "srai a5, a5, 1",
    "andi \\M, a5, -64",
    "addi \\E, \\eb, 1",
    "j \\next",
    // At a half: above it when bits were shifted out (d > 6 and a nonzero
    // remainder), else a tie.
    ".Lv4uh\\sfx:",
    "bge t3, a6, .Lv4ue\\sfx",
    "atome_v4_lost \\M, \\OFF, \\src",
    "beqz a4, .Lv4ue\\sfx",
    "addi a5, t2, 64",
    "srai \\M, a5, 1",
    "addi \\E, \\eb, 1",
    "j \\next",
    ".Lv4ue\\sfx:",
    "andi a4, t2, 128",
    "add a5, t2, a4",
    "addi a5, a5, -64",
    "srai \\M, a5, 1",
    "addi \\E, \\eb, 1",
    "j \\next",
    ".Lv4dn\\sfx:",
    "bgeu a4, t6, \\out",
    "srli a5, a4, 28",
    "beqz a5, .Lv4c\\sfx",
    "beqz \\eb, \\out",
    "addi a5, t2, 16",
    "andi a4, a5, 31",
    "beqz a4, .Lv4dh\\sfx",
    "slli a5, a5, 1",
    "andi \\M, a5, -64",
    "addi \\E, \\eb, -1",
    "j \\next",
    ".Lv4dh\\sfx:",
    "bge t3, a6, .Lv4de\\sfx",
    "atome_v4_lost \\M, \\OFF, \\src",
    "beqz a4, .Lv4de\\sfx",
    "addi a5, t2, 16",
    "slli \\M, a5, 1",
    "addi \\E, \\eb, -1",
    "j \\next",
    ".Lv4de\\sfx:",
    "andi a4, t2, 32",
    "add a5, t2, a4",
    "addi a5, a5, -16",
    "slli \\M, a5, 1",
    "addi \\E, \\eb, -1",
    "j \\next",
    ".Lv4c\\sfx:",
    "beqz t2, .Lv4zr\\sfx",
    "mv a4, \\eb",
    "srai a7, t2, 31",
    "xor a5, t2, a7",
    "sub a5, a5, a7",
    ".Lv4cl\\sfx:",
    "slli a5, a5, 1",
    "addi a4, a4, -1",
    "srli a6, a5, 29",
    "beqz a6, .Lv4cl\\sfx",
    "bltz a4, \\out",
    "xor a5, a5, a7",
    "sub \\M, a5, a7",
    "mv \\E, a4",
    "j \\next",
    ".Lv4zr\\sfx:",
    "li \\M, 0",
    "li \\E, -96",
    "j \\next",
    ".endm",
    // The other cases of one vector's step (out of line), back to its
    // .Lv4n<sfx>, or to \out for the Rust step.
    ".macro atome_v4_rare M, E, OFF, neg, sfx, out",
    // At a half: above it when bits were shifted out, else a tie.
    ".Lv4h\\sfx:",
    "bge t3, a6, .Lv4he\\sfx",
    "atome_v4_lost \\M, \\OFF, 0",
    "beqz a4, .Lv4he\\sfx",
    "addi \\M, t2, 32",
    "j .Lv4n\\sfx",
    ".Lv4he\\sfx:",
    "andi a4, t2, 64",
    "add \\M, t2, a4",
    "addi \\M, \\M, -32",
    "j .Lv4n\\sfx",
    ".Lv4ao\\sfx:",
    "atome_v4_off \\M, \\E, \\E, a\\sfx, \\out, .Lv4n\\sfx, \\OFF, 0",
    ".Lv4f\\sfx:",
    "bgez a6, .Lv4n\\sfx",
    "neg a6, a6",
    "bgeu a6, t4, .Lv4t\\sfx",
    "sra t2, \\M, a6",
    ".if \\neg",
    "sub t2, t2, a5",
    ".else",
    "add t2, t2, a5",
    ".endif",
    round6!("\\M", ".Lv4bo\\sfx", ".Lv4bh\\sfx"),
    "mv \\E, a7",
    "j .Lv4n\\sfx",
    ".Lv4bh\\sfx:",
    "bge t3, a6, .Lv4be\\sfx",
    "atome_v4_lost \\M, \\OFF, 1",
    "beqz a4, .Lv4be\\sfx",
    "addi \\M, t2, 32",
    "mv \\E, a7",
    "j .Lv4n\\sfx",
    ".Lv4be\\sfx:",
    "andi a4, t2, 64",
    "add \\M, t2, a4",
    "addi \\M, \\M, -32",
    "mv \\E, a7",
    "j .Lv4n\\sfx",
    ".Lv4t\\sfx:",
    ".if \\neg",
    "neg \\M, a5",
    ".else",
    "mv \\M, a5",
    ".endif",
    "mv \\E, a7",
    "j .Lv4n\\sfx",
    ".Lv4bo\\sfx:",
    "atome_v4_off \\M, \\E, a7, b\\sfx, \\out, .Lv4n\\sfx, \\OFF, 1",
    ".endm",
    // The float at a0 as the accumulator (\M, \E), as atome_rv_unpack.
    ".macro atome_v4_unpack M, E, bad",
    "lw a4, 0(a0)",
    "li \\M, 0",
    "li \\E, -96",
    "slli a5, a4, 1",
    "beqz a5, 1f",
    "srli a5, a5, 24",
    "addi \\E, a5, -96",
    "li a6, 159",
    "bgeu \\E, a6, \\bad",
    "slli \\M, a4, 8",
    "lui a6, 0x80000",
    "or \\M, \\M, a6",
    "srli \\M, \\M, 2",
    "bgez a4, 1f",
    "neg \\M, \\M",
    "1:",
    "add a0, a0, a1",
    ".endm",
    // The sum (\M, \E) packed into the float at a0, as atome_rv_pack.
    ".macro atome_v4_pack M, E",
    "li a5, 0",
    "beqz \\M, 1f",
    "srai a4, \\M, 31",
    "xor a5, \\M, a4",
    "sub a5, a5, a4",
    "srli a5, a5, 6",
    "addi a6, \\E, 95",
    "slli a6, a6, 23",
    "add a5, a5, a6",
    "slli a4, a4, 31",
    "or a5, a5, a4",
    "1:",
    "sw a5, 0(a0)",
    "add a0, a0, a3",
    ".endm",
    ".section .text.atome_soft_vec4_rv,\"ax\",@progbits",
    ".global atome_soft_vec4_rv",
    ".hidden atome_soft_vec4_rv",
    ".type atome_soft_vec4_rv,@function",
    ".p2align 2",
    // a0 = o, a1 = ostride, a2 = end of the entries, a3 = the words, a4 =
    // minus the entry count. Frame: [sp] o, [sp, 4] ostride, s0-s5.
    "atome_soft_vec4_rv:",
    "addi sp, sp, -32",
    s_regs!("sw"),
    "sw a0, 0(sp)",
    "sw a1, 4(sp)",
    "add t2, a2, a4",
    "atome_v4_unpack t0, t1, .Lv4_bad",
    "atome_v4_unpack s0, s1, .Lv4_bad",
    "atome_v4_unpack s2, s3, .Lv4_bad",
    "atome_v4_unpack s4, s5, .Lv4_bad",
    "mv a1, t2",
    rv_consts!(),
    ".Lv4_top:",
    "lb a4, 0(a1)",
    "add a0, a3, a4",
    "bltz a4, .Lv4_neg",
    "atome_v4_main t0, t1, 0, 0, p0",
    "atome_v4_main s0, s1, 128, 0, p1",
    "atome_v4_main s2, s3, 256, 0, p2",
    "atome_v4_main s4, s5, 384, 0, p3",
    "addi a1, a1, 1",
    "bne a1, a2, .Lv4_top",
    "j .Lv4_done",
    ".Lv4_neg:",
    "atome_v4_main t0, t1, 128, 1, n0",
    "atome_v4_main s0, s1, 256, 1, n1",
    "atome_v4_main s2, s3, 384, 1, n2",
    "atome_v4_main s4, s5, 512, 1, n3",
    "addi a1, a1, 1",
    "bne a1, a2, .Lv4_top",
    "j .Lv4_done",
    "atome_v4_rare t0, t1, 0, 0, p0, .Lv4_o0",
    "atome_v4_rare s0, s1, 128, 0, p1, .Lv4_o1",
    "atome_v4_rare s2, s3, 256, 0, p2, .Lv4_o2",
    "atome_v4_rare s4, s5, 384, 0, p3, .Lv4_o3",
    "atome_v4_rare t0, t1, 128, 1, n0, .Lv4_o0",
    "atome_v4_rare s0, s1, 256, 1, n1, .Lv4_o1",
    "atome_v4_rare s2, s3, 384, 1, n2, .Lv4_o2",
    "atome_v4_rare s4, s5, 512, 1, n3, .Lv4_o3",
    // Entry a1 left to Rust for vector i (a7).
    ".Lv4_o0:",
    "li a7, 0",
    "j .Lv4_stop",
    ".Lv4_o1:",
    "li a7, 1",
    "j .Lv4_stop",
    ".Lv4_o2:",
    "li a7, 2",
    "j .Lv4_stop",
    ".Lv4_o3:",
    "li a7, 3",
    "j .Lv4_stop",
    ".Lv4_done:",
    "li a7, 0",
    // The four sums into their floats; returns (a2 - a1) << 2 | i.
    ".Lv4_stop:",
    pack4!(),
    "sub a1, a2, a1",
    "slli a1, a1, 2",
    "or a0, a1, a7",
    "j .Lv4_ret",
    // A float that is not one of the loop's accumulators: nothing written.
    ".Lv4_bad:",
    "li a0, 1",
    ".Lv4_ret:",
    s_regs!("lw"),
    "addi sp, sp, 32",
    "ret",
    ".size atome_soft_vec4_rv, . - atome_soft_vec4_rv",
    // The same loop straight from a row block's Trit2 bytes (`run_vec4_t2`):
    // a1 = the next byte, a2 = the end of the bytes, a3 = the words of the
    // byte's first column - 2, s6 = the byte's entries (TRIT2_V4: first
    // in the top byte, column in the byte * 4 | 2 | negate << 7, zero
    // when none is left), s7 = that table. a0 = a3 + the entry, so its
    // words are at 128 i (negated: 128 i - 128) from a0.
    ".section .text.atome_soft_vt2_rv,\"ax\",@progbits",
    ".global atome_soft_vt2_rv",
    ".hidden atome_soft_vt2_rv",
    ".type atome_soft_vt2_rv,@function",
    ".p2align 2",
    // a0 = o, a1 = ostride, a2 = the bytes, a3 = the words, a4 = the byte
    // count, a5 = the table, a6 = nonzero when the sums are +0.0. Frame: [sp] o, [sp, 4] ostride, s0-s7, [sp,
    // 40] the words.
    "atome_soft_vt2_rv:",
    "addi sp, sp, -48",
    s_regs!("sw"),
    "sw s6, 32(sp)",
    "sw s7, 36(sp)",
    "sw a0, 0(sp)",
    "sw a1, 4(sp)",
    "sw a3, 40(sp)",
    "add t2, a2, a4",
    "mv s7, a5",
    "bnez a6, .Lt2_zero",
    "atome_v4_unpack t0, t1, .Lt2_bad",
    "atome_v4_unpack s0, s1, .Lt2_bad",
    "atome_v4_unpack s2, s3, .Lt2_bad",
    "atome_v4_unpack s4, s5, .Lt2_bad",
    ".Lt2_go:",
    "mv a1, a2",
    "mv a2, t2",
    "addi a3, a3, -18",
    rv_consts!(),
    "beq a1, a2, .Lt2_done",
    ".Lt2_byte:",
    trit2_byte!(),
    "beqz s6, .Lt2_next",
    ".Lt2_ent:",
    "srli a4, s6, 24",
    "add a0, a3, a4",
    "bltz s6, .Lt2_neg",
    "atome_v4_main t0, t1, 0, 0, Bp0",
    "atome_v4_main s0, s1, 128, 0, Bp1",
    "atome_v4_main s2, s3, 256, 0, Bp2",
    "atome_v4_main s4, s5, 384, 0, Bp3",
    "slli s6, s6, 8",
    "bnez s6, .Lt2_ent",
    // The next byte, if any.
    ".Lt2_next:",
    "bne a1, a2, .Lt2_byte",
    "j .Lt2_done",
    ".Lt2_neg:",
    "atome_v4_main t0, t1, -128, 1, Bn0",
    "atome_v4_main s0, s1, 0, 1, Bn1",
    "atome_v4_main s2, s3, 128, 1, Bn2",
    "atome_v4_main s4, s5, 256, 1, Bn3",
    "slli s6, s6, 8",
    "bnez s6, .Lt2_ent",
    "bne a1, a2, .Lt2_byte",
    "j .Lt2_done",
    "atome_v4_rare t0, t1, 0, 0, Bp0, .Lt2_o0",
    "atome_v4_rare s0, s1, 128, 0, Bp1, .Lt2_o1",
    "atome_v4_rare s2, s3, 256, 0, Bp2, .Lt2_o2",
    "atome_v4_rare s4, s5, 384, 0, Bp3, .Lt2_o3",
    "atome_v4_rare t0, t1, -128, 1, Bn0, .Lt2_o0",
    "atome_v4_rare s0, s1, 0, 1, Bn1, .Lt2_o1",
    "atome_v4_rare s2, s3, 128, 1, Bn2, .Lt2_o2",
    "atome_v4_rare s4, s5, 256, 1, Bn3, .Lt2_o3",
    // The entry at a0 left to Rust for vector i (a7): returns (its
    // column + 1) << 2 | i.
    ".Lt2_o0:",
    "li a7, 0",
    "j .Lt2_stop",
    ".Lt2_o1:",
    "li a7, 1",
    "j .Lt2_stop",
    ".Lt2_o2:",
    "li a7, 2",
    "j .Lt2_stop",
    ".Lt2_o3:",
    "li a7, 3",
    "j .Lt2_stop",
    ".Lt2_stop:",
    "lw a1, 40(sp)",
    "sub a1, a0, a1",
    "andi a1, a1, 127",
    "addi a1, a1, 4",
    "or a7, a7, a1",
    "j .Lt2_pack",
    ".Lt2_done:",
    "li a7, 0",
    ".Lt2_pack:",
    pack4!(),
    "mv a0, a7",
    "j .Lt2_ret",
    // Sums known to be +0.0 (not read).
    ".Lt2_zero:",
    "li t0, 0",
    "li t1, -96",
    "li s0, 0",
    "li s1, -96",
    "li s2, 0",
    "li s3, -96",
    "li s4, 0",
    "li s5, -96",
    "j .Lt2_go",
    ".Lt2_bad:",
    "li a0, 1",
    ".Lt2_ret:",
    s_regs!("lw"),
    "lw s6, 32(sp)",
    "lw s7, 36(sp)",
    "addi sp, sp, 48",
    "ret",
    ".size atome_soft_vt2_rv, . - atome_soft_vt2_rv",
    // The loop on Trit2 bytes for one vector (`run_vec1_t2`): registers
    // as in atome_soft_vt2_rv, the sum in (t0, t1). a0 = o, a1 = the
    // bytes, a2 = the byte count, a3 = the words, a4 = the table, a5 =
    // nonzero when the sum is +0.0. Frame: [sp] o, [sp, 4] the words, s6,
    // s7.
    ".section .text.atome_soft_vt1_rv,\"ax\",@progbits",
    ".global atome_soft_vt1_rv",
    ".hidden atome_soft_vt1_rv",
    ".type atome_soft_vt1_rv,@function",
    ".p2align 2",
    "atome_soft_vt1_rv:",
    "addi sp, sp, -16",
    "sw s6, 8(sp)",
    "sw s7, 12(sp)",
    "sw a0, 0(sp)",
    "sw a3, 4(sp)",
    "mv s7, a4",
    "add a2, a1, a2",
    "li t0, 0",
    "li t1, -96",
    "bnez a5, .Lt1_go",
    "mv t2, a1",
    "atome_v4_unpack t0, t1, .Lt1_bad",
    "mv a1, t2",
    ".Lt1_go:",
    "addi a3, a3, -18",
    rv_consts!(),
    "beq a1, a2, .Lt1_done",
    ".Lt1_byte:",
    trit2_byte!(),
    "beqz s6, .Lt1_next",
    ".Lt1_ent:",
    "srli a4, s6, 24",
    "add a0, a3, a4",
    "bltz s6, .Lt1_neg",
    "atome_v4_main t0, t1, 0, 0, Cp0",
    "slli s6, s6, 8",
    "bnez s6, .Lt1_ent",
    ".Lt1_next:",
    "bne a1, a2, .Lt1_byte",
    "j .Lt1_done",
    ".Lt1_neg:",
    "atome_v4_main t0, t1, -128, 1, Cn0",
    "slli s6, s6, 8",
    "bnez s6, .Lt1_ent",
    "bne a1, a2, .Lt1_byte",
    "j .Lt1_done",
    "atome_v4_rare t0, t1, 0, 0, Cp0, .Lt1_o",
    "atome_v4_rare t0, t1, -128, 1, Cn0, .Lt1_o",
    // The entry at a0 left to Rust: returns (its column + 1) << 2.
    ".Lt1_o:",
    "lw a1, 4(sp)",
    "sub a1, a0, a1",
    "andi a1, a1, 127",
    "addi a7, a1, 4",
    "j .Lt1_pack",
    ".Lt1_done:",
    "li a7, 0",
    ".Lt1_pack:",
    "lw a0, 0(sp)",
    "atome_v4_pack t0, t1",
    "mv a0, a7",
    "j .Lt1_ret",
    ".Lt1_bad:",
    "li a0, 1",
    ".Lt1_ret:",
    "lw s6, 8(sp)",
    "lw s7, 12(sp)",
    "addi sp, sp, 16",
    "ret",
    ".size atome_soft_vt1_rv, . - atome_soft_vt1_rv",
    ".purgem atome_v4_main",
    ".purgem atome_v4_off",
    ".purgem atome_v4_rare",
    ".purgem atome_v4_unpack",
    ".purgem atome_v4_pack",
    ".purgem atome_v4_lost",
);
