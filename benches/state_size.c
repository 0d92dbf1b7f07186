/* Prints sizeof(atome_state_t) for the configuration given by the -D flags
 * (scripts/state_sizes.sh). Linked against the matching libatome.a, so the
 * header's link-time configuration check passes, and cross-checked against
 * the library's own figure (atome_get_build_config). */
#include <stdio.h>
#include "atome.h"

int main(void) {
    atome_build_config_t c;
    if (atome_get_build_config(&c) != 0) {
        fprintf(stderr, "atome_get_build_config failed\n");
        return 1;
    }
    if (c.state_size != (uint32_t)sizeof(atome_state_t)) {
        fprintf(stderr, "header says %u bytes, library says %u\n", (unsigned)sizeof(atome_state_t),
                (unsigned)c.state_size);
        return 1;
    }
    printf("%u\n", (unsigned)sizeof(atome_state_t));
    return 0;
}
