//! The unit tests' random numbers: xorshift, in 64 and 32 bits.

/// The next xorshift64 value of `s` (its shifts 13, 7, 17), also left in `s`.
pub(crate) fn xorshift64(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// The next xorshift32 value of `s` (its shifts 13, 17, 5), also left in `s`.
pub(crate) fn xorshift32(s: &mut u32) -> u32 {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    *s
}
