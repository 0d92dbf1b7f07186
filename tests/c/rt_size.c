/* ATOME_RT_WORK_SIZE (the header's constant-expression formula) equals
 * atome_rt_work_size() (the library's) over a grid of dimensions and both
 * plans; prints "rt_size: N ok" or the first difference and exits 1. */
#include <stdio.h>
#include "atome.h"

/* A static buffer sized by the macro: it must be a constant expression. */
static unsigned char probe[ATOME_RT_WORK_SIZE(256, 64, 4, 16, 5, 4, 32, 0)];

int main(void) {
    static const int vs[] = {1, 40, 256}, ds[] = {1, 22, 64, 256}, ls[] = {1, 3, 8}, dhs[] = {1, 6, 16, 64},
                     ks[] = {1, 3, 5, 17}, tks[] = {1, 2, 4, 9}, ss[] = {1, 16, 64, 128};
    long n = 0;
    for (unsigned a = 0; a < 3; a++) for (unsigned b = 0; b < 4; b++) for (unsigned c = 0; c < 3; c++)
    for (unsigned d = 0; d < 4; d++) for (unsigned e = 0; e < 4; e++) for (unsigned f = 0; f < 4; f++)
    for (unsigned g = 0; g < 4; g++) for (int cached = 0; cached < 2; cached++) {
        atome_dims_t dm = {vs[a], ds[b], ls[c], dhs[d], ks[e], tks[f], ss[g], 0};
        size_t lib = atome_rt_work_size(&dm, cached);
        size_t mac = ATOME_RT_WORK_SIZE(vs[a], ds[b], ls[c], dhs[d], ks[e], tks[f], ss[g], cached);
        if (lib != mac || lib == 0) {
            printf("differ: V=%d D=%d L=%d DH=%d K=%d TOPK=%d S=%d cached=%d: library %lu, macro %lu\n", vs[a], ds[b],
                   ls[c], dhs[d], ks[e], tks[f], ss[g], cached, (unsigned long)lib, (unsigned long)mac);
            return 1;
        }
        n++;
    }
    if (sizeof probe != atome_rt_work_size(&(atome_dims_t){256, 64, 4, 16, 5, 4, 32, 0}, 0)) return 1;
    printf("rt_size: %ld ok\n", n);
    return 0;
}
