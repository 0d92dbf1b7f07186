/*
 * The parity runner on the host: the same runner (firmware/common/runner.c)
 * and generated cases as the firmware, over host/host_platform.c, built
 * against the host (x86-64) libatome.a.
 */
#include "cases.h"

int main(void)
{
    return fw_run_cases();
}
