//! The matvec's accumulate loop ([`super::soft::run_words`]) in RV32
//! assembly for riscv32imc/imac (no FPU). The Rust twin (`fast_words`)
//! compiles to about 60 instructions per step there; this loop keeps the
//! accumulator, the constants and the loop state in the 15 caller-saved
//! registers and takes a common step in 20 (21 for a negated term). It
//! takes the cases `fast_words` takes (see its comment for the cases and
//! their rounding; here also a in [2^30 - 32, 2^30), below), and hands
//! every other case back to the Rust step, one entry at a time, with the
//! same contract as the Thumb-1 loop (soft_t1.rs).

/// Runs entries `ents[len-rem ..]` (rem = -neg_rem) on the accumulator
/// `st` = [m6, e - WB] with the input words `words` (see `soft::word`);
/// returns 0 when all are done, else minus the count left, the first of
/// which needs the Rust step. `st` is updated to the sum before it.
///
/// # Safety
/// `ents_end` - rem .. `ents_end` are readable entries (k << 3 | neg, k <
/// SB), `words` has SB readable words, `st` two writable words, rem >= 1;
/// the accumulator holds the invariant of `soft::run_words` (zero, or a
/// normal m6 with e - WB >= 0).
#[cfg(atome_rv32)]
pub(super) unsafe fn run(st: &mut [i32; 2], neg_rem: i32, ents_end: *const u8, words: &[i32; super::soft::SB]) -> i32 {
    // SAFETY: the caller's contract above; the routine reads only those
    // bytes and words, writes only `st`, uses no stack and only
    // caller-saved registers (the RISC-V calling convention).
    unsafe { atome_soft_run_rv(st.as_mut_ptr(), neg_rem, ents_end, words.as_ptr()) }
}

/// [`run`] on a running sum held as a float: unpacks `*o` (as
/// `soft::acc_words`), runs the entries and packs the sum back into `*o`,
/// so the glue per row block and vector stays small. Returns 0 when all
/// entries were added; 1 << 32 when `*o` is not one of the loop's
/// accumulators (left as it was: the float add takes the block); else
/// (e - WB) << 32 | m6 | (count left), the sum before the first entry left
/// to the Rust step (m6's low six bits are zero), `*o` untouched. The
/// contract of the Thumb-2 `run_acc` (soft_t2.rs).
///
/// # Safety
/// As [`run`], with `o` in place of `st`.
#[cfg(atome_rv32)]
pub(super) unsafe fn run_acc(o: &mut f32, neg_rem: i32, ents_end: *const u8, words: &[i32; super::soft::SB]) -> u64 {
    // SAFETY: as in `run`; the routine writes only `*o`.
    unsafe { atome_soft_acc_rv(o, neg_rem, ents_end, words.as_ptr()) }
}

/// [`run_acc`] for consecutive vectors of one row block: vector i (i <
/// `nv`) has its sum at byte offset i * `ostride` from `o` and its words
/// at `words`.add(i * SB), and is taken while bit i of `soft` is set.
/// Returns hi << 32 | lo with hi = k << 16 | (e - WB) as u16: k vectors
/// were done; lo = 0 when vector k (if k < nv) was not started (its bit
/// is clear, or its sum is not one of the loop's accumulators: `*o` as it
/// was), else lo = m6 | (count left), the sum of vector k before the
/// first entry left to the Rust step. The Thumb-2 `run_vecs` contract.
///
/// # Safety
/// As [`run_acc`] for each of the `nv` >= 1 vectors (all the sums are
/// writable floats, all the words readable).
#[cfg(atome_rv32)]
pub(super) unsafe fn run_vecs(o: *mut f32, nv: usize, ents_end: *const u8, words: *const i32, soft: u32, ostride: usize, neg_rem: i32) -> u64 {
    // SAFETY: as in `run_acc`, for each vector; the routine's 16-byte
    // frame is its own.
    unsafe { atome_soft_vec_rv(o, nv, ents_end, words, soft, ostride, neg_rem) }
}

#[cfg(atome_rv32)]
extern "C" {
    fn atome_soft_vec_rv(o: *mut f32, nv: usize, ents_end: *const u8, words: *const i32, soft: u32, ostride: usize, neg_rem: i32) -> u64;
    fn atome_soft_run_rv(st: *mut i32, neg_rem: i32, ents_end: *const u8, words: *const i32) -> i32;
    fn atome_soft_acc_rv(o: *mut f32, neg_rem: i32, ents_end: *const u8, words: *const i32) -> u64;
}

// Registers: a0 = st, a1 = the next entry, a2 = end of the entries,
// a3 = the words, t0 = m6 (accumulator mantissa << 6, signed), t1 = its
// exponent - WB, t2 = t, t3 = 6, t4 = 32, t5 = 2^29, t6 = 2^29 - 32,
// a4-a7 scratch (a7 = the term's exponent - WB, a6 = |d| through a step).
// An entry is column * 4 | negate << 7 (soft::ent): a sign-extending
// load gives the word's offset, minus 128 for a negated term, and its
// sign picks one of two copies of the steps (`atome_rv_side`), so the
// common step takes 20 instructions (21 negated). The cases, with a = |t|
// (one's complement for negative t), as in `fast_words`:
//   a in [2^29, 2^30 - 32): round at bit 6, big's exponent;
//   a >= 2^30 - 32:         round at bit 7, exponent + 1;
//   a in [2^28, 2^29 - 32): round at bit 5, exponent - 1;
//   a < 2^28: d <= 1, t exact: shifted up into [2^29, 2^30);
// each unless the rounding bits are exactly a half and d > 6 (bits were
// shifted out, so the exact sum is above the half: Rust decides), or the
// exponent leaves [0, 155]. At a half with d <= 6 (nothing shifted out:
// the words' low six bits are zero) the tie goes to even. m6 and the
// exponent change only when a step is taken, so a case handed back to
// Rust leaves the sum before it in place.
#[cfg(atome_rv32)]
core::arch::global_asm!(
    // Next entry, or done.
    ".macro atome_rv_next k",
    "addi a1, a1, 1",
    "bne a1, a2, .Lrv_top\\k",
    "j .Lrv_out\\k",
    ".endm",
    // The exit when d (a6) > 6: the half's tie is not exact.
    ".macro atome_rv_d6 k",
    "bgt a6, t3, .Lrv_out\\k",
    ".endm",
    // t (t2) off big's binade, big's exponent in \eb (t1 or a7); a4 = a,
    // a5 = a - 2^29.
    ".macro atome_rv_off eb, sfx, k",
    "bltz a5, .Lrv_dn\\sfx",
    // a >= 2^30 - 32. Round at bit 7, exponent + 1 (<= 95: d <= 31
    // here, so big's exponent - WB is at most 63 + 31); off a half, m6 =
    // ((t + 64) >> 1) & -64. (a in [2^30 - 32, 2^30), which rounds at bit
    // 6 to 2^30, gets the same m6 = +-2^29 this way: t's low seven bits
    // are never a half there.)
    "addi a5, t2, 64",
    "andi a4, a5, 127",
    "beqz a4, .Lrv_uh\\sfx",
    "srai a5, a5, 1",
    "andi t0, a5, -64",
    "addi t1, \\eb, 1",
    "atome_rv_next \\k",
    // At a half: to even (t + 64 when bit 7 is set, else t - 64).
    ".Lrv_uh\\sfx:",
    "atome_rv_d6 \\k",
    "andi a4, t2, 128",
    "add a5, t2, a4",
    "addi a5, a5, -64",
    "srai t0, a5, 1",
    "addi t1, \\eb, 1",
    "atome_rv_next \\k",
    // a < 2^29; only [2^28, 2^29 - 32) rounds at bit 5, exponent - 1
    // (>= 0); off a half, m6 = ((t + 16) << 1) & -64.
    ".Lrv_dn\\sfx:",
    "bgeu a4, t6, .Lrv_out\\k",
    "srli a5, a4, 28",
    "beqz a5, .Lrv_c\\sfx",
    "beqz \\eb, .Lrv_out\\k",
    "addi a5, t2, 16",
    "andi a4, a5, 31",
    "beqz a4, .Lrv_dh\\sfx",
    "slli a5, a5, 1",
    "andi t0, a5, -64",
    "addi t1, \\eb, -1",
    "atome_rv_next \\k",
    ".Lrv_dh\\sfx:",
    "atome_rv_d6 \\k",
    "andi a4, t2, 32",
    "add a5, t2, a4",
    "addi a5, a5, -16",
    "slli t0, a5, 1",
    "addi t1, \\eb, -1",
    "atome_rv_next \\k",
    // a < 2^28: more than one leading bit cancelled, so d <= 1 and t is
    // exact: |t| shifted up into [2^29, 2^30) (it is below 2^28, so at
    // least two shifts); x + (-x) = +0.0.
    ".Lrv_c\\sfx:",
    "beqz t2, .Lrv_zero\\k",
    "mv a4, \\eb",
    "srai a7, t2, 31",
    "xor a5, t2, a7",
    "sub a5, a5, a7",
    ".Lrv_cl\\sfx:",
    "slli a5, a5, 1",
    "addi a4, a4, -1",
    "srli a6, a5, 29",
    "beqz a6, .Lrv_cl\\sfx",
    "bltz a4, .Lrv_out\\k",
    "xor a5, a5, a7",
    "sub t0, a5, a7",
    "mv t1, a4",
    "atome_rv_next \\k",
    ".endm",
    // The steps of one sign (neg 1: the term is subtracted), after the
    // term's word was loaded into a5.
    ".macro atome_rv_side neg, sfx, k",
    "andi a7, a5, 63",
    "andi a5, a5, -64",
    "sub a6, t1, a7",
    // d < 0 or d > 31: 2f.
    "bgeu a6, t4, 2f",
    // d in [0, 31]: the accumulator is big; t = m6 + floor(+-x / 2^d).
    ".if \\neg",
    "neg a5, a5",
    ".endif",
    "sra t2, a5, a6",
    "add t2, t0, t2",
    "srai a4, t2, 31",
    "xor a4, t2, a4",
    "sub a5, a4, t5",
    "bgeu a5, t6, .Lrv_ao\\sfx",
    // a in [2^29, 2^30 - 32): below or above an exact half (t's low six
    // bits not 32) nearest is (t + 32) & -64 (the shifted-out bits, below
    // t's bit 0, cannot move the sum across the half).
    "andi a4, t2, 63",
    "beq a4, t4, 1f",
    "addi a5, t2, 32",
    "andi t0, a5, -64",
    "atome_rv_next \\k",
    // At a half: to even (t + 32 when bit 6 is set, else t - 32).
    "1:",
    "atome_rv_d6 \\k",
    "andi a4, t2, 64",
    "add t0, t2, a4",
    "addi t0, t0, -32",
    "atome_rv_next \\k",
    ".Lrv_ao\\sfx:",
    "atome_rv_off t1, a\\sfx, \\k",
    // d > 31: the term is below a quarter of the accumulator's bit 0, the
    // sum rounds to it.
    "2:",
    "bgez a6, .Lrv_skip\\k",
    // d < 0: the term is big (its negation is exact). d < -31: the
    // accumulator is zero, or below a quarter of the term's bit 0.
    "neg a6, a6",
    "bgeu a6, t4, 3f",
    "sra t2, t0, a6",
    ".if \\neg",
    "sub t2, t2, a5",
    ".else",
    "add t2, t2, a5",
    ".endif",
    "srai a4, t2, 31",
    "xor a4, t2, a4",
    "sub a5, a4, t5",
    "bgeu a5, t6, .Lrv_bo\\sfx",
    "andi a4, t2, 63",
    "beq a4, t4, 4f",
    "addi a5, t2, 32",
    "andi t0, a5, -64",
    "mv t1, a7",
    "atome_rv_next \\k",
    "4:",
    "atome_rv_d6 \\k",
    "andi a4, t2, 64",
    "add t0, t2, a4",
    "addi t0, t0, -32",
    "mv t1, a7",
    "atome_rv_next \\k",
    "3:",
    ".if \\neg",
    "neg t0, a5",
    ".else",
    "mv t0, a5",
    ".endif",
    "mv t1, a7",
    "atome_rv_next \\k",
    ".Lrv_bo\\sfx:",
    "atome_rv_off a7, b\\sfx, \\k",
    ".endm",
    // The float in a4 as the accumulator (t0, t1), as soft::acc_words:
    // +-0 is (0, -96); biased exponents 96 to 254 give e - WB in [0, 158],
    // m6 = +-(1 << 23 | fraction) << 6; anything else goes to \bad.
    ".macro atome_rv_unpack bad",
    "li t0, 0",
    "li t1, -96",
    "slli a5, a4, 1",
    "beqz a5, 1f",
    "srli a5, a5, 24",
    "addi t1, a5, -96",
    "li a6, 159",
    "bgeu t1, a6, \\bad",
    "slli t0, a4, 8",
    "lui a6, 0x80000",
    "or t0, t0, a6",
    "srli t0, t0, 2",
    "bgez a4, 1f",
    "neg t0, t0",
    "1:",
    ".endm",
    // The sum (t0, t1) packed into a5 (exact; zero is +0.0).
    ".macro atome_rv_pack",
    "li a5, 0",
    "beqz t0, 1f",
    "srai a4, t0, 31",
    "xor a5, t0, a4",
    "sub a5, a5, a4",
    "srli a5, a5, 6",
    "addi a6, t1, 95",
    "slli a6, a6, 23",
    "add a5, a5, a6",
    "slli a4, a4, 31",
    "or a5, a5, a4",
    "1:",
    ".endm",
    // The loop of the entry points: from the first entry (a1) on, to
    // .Lrv_out\k when done (a1 = a2) or at an entry left to Rust (a1).
    ".macro atome_rv_body k",
    ".Lrv_top\\k:",
    "lb a4, 0(a1)",
    "add a5, a3, a4",
    "bltz a4, .Lrv_neg\\k",
    "lw a5, 0(a5)",
    "atome_rv_side 0, p\\k, \\k",
    ".Lrv_neg\\k:",
    "lw a5, 128(a5)",
    "atome_rv_side 1, n\\k, \\k",
    ".Lrv_zero\\k:",
    "li t0, 0",
    "li t1, -96",
    ".Lrv_skip\\k:",
    "atome_rv_next \\k",
    ".endm",
    ".section .text.atome_soft_run_rv,\"ax\",@progbits",
    ".global atome_soft_run_rv",
    ".hidden atome_soft_run_rv",
    ".type atome_soft_run_rv,@function",
    ".p2align 2",
    "atome_soft_run_rv:",
    "lw t0, 0(a0)",
    "lw t1, 4(a0)",
    "add a1, a2, a1",
    "li t3, 6",
    "li t4, 32",
    "lui t5, 0x20000",
    "addi t6, t5, -32",
    "atome_rv_body s",
    // Done (a1 = a2) or handing the entry at a1 to Rust: minus the count
    // left.
    ".Lrv_outs:",
    "sw t0, 0(a0)",
    "sw t1, 4(a0)",
    "sub a0, a1, a2",
    "ret",
    ".size atome_soft_run_rv, . - atome_soft_run_rv",
    ".section .text.atome_soft_acc_rv,\"ax\",@progbits",
    ".global atome_soft_acc_rv",
    ".hidden atome_soft_acc_rv",
    ".type atome_soft_acc_rv,@function",
    ".p2align 2",
    "atome_soft_acc_rv:",
    // *o as the accumulator; not one: returns 1 << 32.
    "lw a4, 0(a0)",
    "atome_rv_unpack .Lrv_bad",
    "add a1, a2, a1",
    "li t3, 6",
    "li t4, 32",
    "lui t5, 0x20000",
    "addi t6, t5, -32",
    "atome_rv_body a",
    ".Lrv_outa:",
    "bne a1, a2, 2f",
    // Done: the sum packed back into *o, returns 0.
    "atome_rv_pack",
    "sw a5, 0(a0)",
    "li a0, 0",
    "li a1, 0",
    "ret",
    // An entry left to Rust: (e - WB) << 32 | m6 | (count left), *o
    // untouched.
    "2:",
    "sub a1, a2, a1",
    "or a0, t0, a1",
    "mv a1, t1",
    "ret",
    ".Lrv_bad:",
    "li a0, 0",
    "li a1, 1",
    "ret",
    ".size atome_soft_acc_rv, . - atome_soft_acc_rv",
    // The vectors of a row block (`run_vecs`). Frame: [sp] the soft bits
    // of the vectors left (the current one's at bit 0; none past nv, so
    // a clear bit also ends the row block), [sp, 4] ostride, [sp, 8] the
    // first entry, [sp, 12] the first vector's words (k = the words'
    // advance / 128).
    ".section .text.atome_soft_vec_rv,\"ax\",@progbits",
    ".global atome_soft_vec_rv",
    ".hidden atome_soft_vec_rv",
    ".type atome_soft_vec_rv,@function",
    ".p2align 2",
    "atome_soft_vec_rv:",
    "addi sp, sp, -16",
    "li a7, 1",
    "sll a7, a7, a1",
    "addi a7, a7, -1",
    "and a4, a4, a7",
    "sw a4, 0(sp)",
    "sw a5, 4(sp)",
    "add a6, a2, a6",
    "sw a6, 8(sp)",
    "sw a3, 12(sp)",
    "li t3, 6",
    "li t4, 32",
    "lui t5, 0x20000",
    "addi t6, t5, -32",
    "andi a4, a4, 1",
    "beqz a4, .Lrv_vstop",
    ".Lrv_vacc:",
    "lw a4, 0(a0)",
    "atome_rv_unpack .Lrv_vstop",
    "lw a1, 8(sp)",
    "atome_rv_body v",
    ".Lrv_outv:",
    "bne a1, a2, .Lrv_vleft",
    // The vector's sum into its float, then the next vector, if taken.
    "atome_rv_pack",
    "sw a5, 0(a0)",
    "lw a4, 0(sp)",
    "srli a4, a4, 1",
    "sw a4, 0(sp)",
    "lw a6, 4(sp)",
    "add a0, a0, a6",
    "addi a3, a3, 128",
    "andi a4, a4, 1",
    "bnez a4, .Lrv_vacc",
    // Stop before vector k: 0, k << 16.
    ".Lrv_vstop:",
    "lw a1, 12(sp)",
    "sub a1, a3, a1",
    "slli a1, a1, 9",
    "li a0, 0",
    "addi sp, sp, 16",
    "ret",
    // Entries of vector k left: m6 | count, k << 16 | (e - WB) as u16.
    ".Lrv_vleft:",
    "sub a4, a2, a1",
    "or a0, t0, a4",
    "lw a1, 12(sp)",
    "sub a1, a3, a1",
    "slli a1, a1, 9",
    "slli t1, t1, 16",
    "srli t1, t1, 16",
    "or a1, a1, t1",
    "addi sp, sp, 16",
    "ret",
    ".size atome_soft_vec_rv, . - atome_soft_vec_rv",
    ".purgem atome_rv_next",
    ".purgem atome_rv_d6",
    ".purgem atome_rv_off",
    ".purgem atome_rv_side",
    ".purgem atome_rv_body",
    ".purgem atome_rv_unpack",
    ".purgem atome_rv_pack",
);

/// [`run_vecs`] for the four vectors of a full pass at once, all of them
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
/// As [`run_vecs`] with four vectors, all of them soft.
#[cfg(atome_rv32)]
pub(super) unsafe fn run_vec4(o: *mut f32, ostride: usize, ents_end: *const u8, words: *const i32, neg_rem: i32) -> u32 {
    // SAFETY: as in `run_vecs`; the routine saves the callee-saved
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
    "srai a4, t2, 31",
    "xor a4, t2, a4",
    "sub a5, a4, t5",
    "bgeu a5, t6, .Lv4ao\\sfx",
    "andi a4, t2, 63",
    "beq a4, t4, .Lv4h\\sfx",
    "addi a5, t2, 32",
    "andi \\M, a5, -64",
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
    "srai a4, t2, 31",
    "xor a4, t2, a4",
    "sub a5, a4, t5",
    "bgeu a5, t6, .Lv4bo\\sfx",
    "andi a4, t2, 63",
    "beq a4, t4, .Lv4bh\\sfx",
    "addi a5, t2, 32",
    "andi \\M, a5, -64",
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
    "sw s0, 8(sp)",
    "sw s1, 12(sp)",
    "sw s2, 16(sp)",
    "sw s3, 20(sp)",
    "sw s4, 24(sp)",
    "sw s5, 28(sp)",
    "sw a0, 0(sp)",
    "sw a1, 4(sp)",
    "add t2, a2, a4",
    "atome_v4_unpack t0, t1, .Lv4_bad",
    "atome_v4_unpack s0, s1, .Lv4_bad",
    "atome_v4_unpack s2, s3, .Lv4_bad",
    "atome_v4_unpack s4, s5, .Lv4_bad",
    "mv a1, t2",
    "li t3, 6",
    "li t4, 32",
    "lui t5, 0x20000",
    "addi t6, t5, -32",
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
    "lw a0, 0(sp)",
    "lw a3, 4(sp)",
    "atome_v4_pack t0, t1",
    "atome_v4_pack s0, s1",
    "atome_v4_pack s2, s3",
    "atome_v4_pack s4, s5",
    "sub a1, a2, a1",
    "slli a1, a1, 2",
    "or a0, a1, a7",
    "j .Lv4_ret",
    // A float that is not one of the loop's accumulators: nothing written.
    ".Lv4_bad:",
    "li a0, 1",
    ".Lv4_ret:",
    "lw s0, 8(sp)",
    "lw s1, 12(sp)",
    "lw s2, 16(sp)",
    "lw s3, 20(sp)",
    "lw s4, 24(sp)",
    "lw s5, 28(sp)",
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
    "sw s0, 8(sp)",
    "sw s1, 12(sp)",
    "sw s2, 16(sp)",
    "sw s3, 20(sp)",
    "sw s4, 24(sp)",
    "sw s5, 28(sp)",
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
    "li t3, 6",
    "li t4, 32",
    "lui t5, 0x20000",
    "addi t6, t5, -32",
    "beq a1, a2, .Lt2_done",
    ".Lt2_byte:",
    "lbu a4, 0(a1)",
    "addi a1, a1, 1",
    "addi a3, a3, 16",
    "slli a4, a4, 2",
    "add a4, a4, s7",
    "lw s6, 0(a4)",
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
    "lw a0, 0(sp)",
    "lw a3, 4(sp)",
    "atome_v4_pack t0, t1",
    "atome_v4_pack s0, s1",
    "atome_v4_pack s2, s3",
    "atome_v4_pack s4, s5",
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
    "lw s0, 8(sp)",
    "lw s1, 12(sp)",
    "lw s2, 16(sp)",
    "lw s3, 20(sp)",
    "lw s4, 24(sp)",
    "lw s5, 28(sp)",
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
    "li t3, 6",
    "li t4, 32",
    "lui t5, 0x20000",
    "addi t6, t5, -32",
    "beq a1, a2, .Lt1_done",
    ".Lt1_byte:",
    "lbu a4, 0(a1)",
    "addi a1, a1, 1",
    "addi a3, a3, 16",
    "slli a4, a4, 2",
    "add a4, a4, s7",
    "lw s6, 0(a4)",
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

/// The words of a block's inputs (`soft::word`, the layout without
/// WORD_HI): out[k] = (signed mantissa << 6) | (e - WB) for the n <= SB
/// floats at `x`, 0 for a zero; returns false when one is outside the
/// words' window (its word not written), true otherwise.
///
/// # Safety
/// `x` readable for n floats, `out` writable for n words.
#[cfg(atome_rv32)]
pub(super) unsafe fn block_words(x: *const f32, n: usize, out: *mut i32) -> bool {
    // SAFETY: the caller's contract; the routine touches only those
    // floats and words and caller-saved registers.
    unsafe { atome_words_rv(x, n, out) != 0 }
}

#[cfg(atome_rv32)]
extern "C" {
    fn atome_words_rv(x: *const f32, n: usize, out: *mut i32) -> u32;
}

// a0 = the next float, a1 = the end, a2 = the next word, a3 = ok; a4 =
// 63, a5 = 2^31; two floats a round (t0-t2, a6, a7 scratch).
#[cfg(atome_rv32)]
core::arch::global_asm!(
    // The float in \F as its word into \W (\T scratch); outside the
    // window: \W = 0 when it is a zero, else a3 = 0 and \W unchanged.
    ".macro atome_word F, W, T, k",
    "slli \\T, \\F, 1",
    "srli \\T, \\T, 24",
    "addi \\T, \\T, -96",
    "bltu a4, \\T, .Lw_out\\k",
    "slli \\W, \\F, 8",
    "or \\W, \\W, a5",
    "srli \\W, \\W, 2",
    "bgez \\F, 1f",
    "neg \\W, \\W",
    "1:",
    "or \\W, \\W, \\T",
    ".Lw_done\\k:",
    ".endm",
    ".macro atome_word_out F, W, off, k",
    ".Lw_out\\k:",
    "slli \\W, \\F, 1",
    "beqz \\W, .Lw_done\\k",
    "li a3, 0",
    "lw \\W, \\off(a2)",
    "j .Lw_done\\k",
    ".endm",
    ".section .text.atome_words_rv,\"ax\",@progbits",
    ".global atome_words_rv",
    ".hidden atome_words_rv",
    ".type atome_words_rv,@function",
    ".p2align 2",
    "atome_words_rv:",
    "li a3, 1",
    "li a4, 63",
    "lui a5, 0x80000",
    "slli a1, a1, 2",
    "add a1, a0, a1",
    // An odd count: one float first.
    "andi t0, a1, 4",
    "andi t1, a0, 4",
    "beq t0, t1, 2f",
    "lw a6, 0(a0)",
    "atome_word a6, t0, t1, p",
    "sw t0, 0(a2)",
    "addi a0, a0, 4",
    "addi a2, a2, 4",
    "2:",
    "beq a0, a1, 3f",
    "4:",
    "lw a6, 0(a0)",
    "lw a7, 4(a0)",
    "atome_word a6, t0, t1, a",
    "atome_word a7, t2, t1, b",
    "sw t0, 0(a2)",
    "sw t2, 4(a2)",
    "addi a0, a0, 8",
    "addi a2, a2, 8",
    "bne a0, a1, 4b",
    "3:",
    "mv a0, a3",
    "ret",
    "atome_word_out a6, t0, 0, p",
    "atome_word_out a6, t0, 0, a",
    "atome_word_out a7, t2, 4, b",
    ".size atome_words_rv, . - atome_words_rv",
    ".purgem atome_word",
    ".purgem atome_word_out",
);
