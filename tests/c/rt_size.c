/* ATOME_RT_WORK_SIZE (the header's constant-expression formula) equals
 * atome_rt_work_size() (the library's, from the float runner's and the q15
 * layouts) for the four modes (flags 0..3): over a grid of dimensions, over
 * random dimensions anywhere in 1..65535, and for flags with another bit
 * (0 from both). Prints "rt_size: N ok" or the first difference and exits 1. */
#include <stdio.h>
#include "atome.h"

/* Static buffers sized by the macro: it must be a constant expression. */
static unsigned char probe[ATOME_RT_WORK_SIZE(256, 64, 4, 16, 5, 4, 32, 0)];
static unsigned char probe_q15[ATOME_RT_WORK_SIZE(256, 64, 4, 16, 5, 4, 32, ATOME_RT_Q15)];
static unsigned char probe_q15c[ATOME_RT_WORK_SIZE(256, 64, 4, 16, 5, 4, 32, ATOME_RT_Q15 | ATOME_RT_CACHED)];

static long n;

static int same(int v, int d, int l, int dh, int k, int tk, int s, int flags, int nonzero) {
    atome_dims_t dm = {v, d, l, dh, k, tk, s, 0};
    size_t lib = atome_rt_work_size(&dm, flags);
    size_t mac = ATOME_RT_WORK_SIZE(v, d, l, dh, k, tk, s, flags);
    n++;
    if (lib == mac && (lib != 0 || !nonzero)) return 1;
    printf("differ: V=%d D=%d L=%d DH=%d K=%d TOPK=%d S=%d flags=%d: library %lu, macro %lu\n", v, d, l, dh, k, tk, s,
           flags, (unsigned long)lib, (unsigned long)mac);
    return 0;
}

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;

/* xorshift64: a dimension, small (1..64) half of the time, else anywhere. */
static int dim(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (rng >> 40) & 1 ? 1 + (int)((rng >> 8) % 64) : 1 + (int)((rng >> 8) % 65535);
}

int main(void) {
    static const int vs[] = {1, 40, 256}, ds[] = {1, 22, 64, 256}, ls[] = {1, 3, 8}, dhs[] = {1, 6, 16, 64},
                     ks[] = {1, 3, 5, 17}, tks[] = {1, 2, 4, 9}, ss[] = {1, 16, 64, 128};
    static const int bad_flags[] = {4, 5, 8, 16, 0x100, -1, -4, (int)0x80000000u};
    for (unsigned a = 0; a < 3; a++) for (unsigned b = 0; b < 4; b++) for (unsigned c = 0; c < 3; c++)
    for (unsigned d = 0; d < 4; d++) for (unsigned e = 0; e < 4; e++) for (unsigned f = 0; f < 4; f++)
    for (unsigned g = 0; g < 4; g++) for (int flags = 0; flags < 4; flags++) {
        if (!same(vs[a], ds[b], ls[c], dhs[d], ks[e], tks[f], ss[g], flags, 1)) return 1;
    }
    for (int i = 0; i < 20000; i++) {
        int v = dim(), d = dim(), l = dim(), dh = dim(), k = dim(), tk = dim(), s = dim();
        for (int flags = 0; flags < 4; flags++)
            if (!same(v, d, l, dh, k, tk, s, flags, sizeof(size_t) >= 8)) return 1;
    }
    for (unsigned i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
        atome_dims_t dm = {256, 64, 4, 16, 5, 4, 32, 0};
        if (atome_rt_work_size(&dm, bad_flags[i]) != 0 || ATOME_RT_WORK_SIZE(256, 64, 4, 16, 5, 4, 32, bad_flags[i]) != 0) {
            printf("flags %d: not refused\n", bad_flags[i]);
            return 1;
        }
        n++;
    }
    if (sizeof probe != atome_rt_work_size(&(atome_dims_t){256, 64, 4, 16, 5, 4, 32, 0}, 0)) return 1;
    if (sizeof probe_q15 != atome_rt_work_size(&(atome_dims_t){256, 64, 4, 16, 5, 4, 32, 0}, ATOME_RT_Q15)) return 1;
    if (sizeof probe_q15c != atome_rt_work_size(&(atome_dims_t){256, 64, 4, 16, 5, 4, 32, 0}, 3)) return 1;
    printf("rt_size: %ld ok\n", n);
    return 0;
}
