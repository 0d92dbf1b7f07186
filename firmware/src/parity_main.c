/* Parity firmware: runs the generated golden cases and prints every logit's
 * bit pattern (see firmware/common/runner.c). Exit status 0 = all loads
 * succeeded and the stack never reached .bss. */
#include "cases.h"

int main(void)
{
    return fw_run_cases();
}
