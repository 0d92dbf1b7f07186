/*
 * The parity runner: the same source runs on the boards (output through
 * semihosting) and on the host (stdio), so both print byte-identical text
 * for a correct library. Lines:
 *
 *   L <blob> <rc>                       load / classifier_load result
 *   P <case> <id> <V hex bit patterns>  predict_next + get_logits
 *   C <case> <class> <n hex patterns>   classify + class logits
 *   G <case> <count> <tokens...>        generate
 *   END <n>
 *
 * Lines starting with '#' (addresses, stack figures) are informational and
 * differ between host and board; the comparison ignores them.
 */
#include "atome.h"
#include "fw.h"
#include "cases.h"

static atome_state_t fw_state;
static atome_model_t fw_model;
static atome_classifier_t fw_clf;

static void put_bits(const float *v, int n)
{
    for (int i = 0; i < n; i++) {
        uint32_t b;
        __builtin_memcpy(&b, &v[i], sizeof b);
        fw_putc(' ');
        fw_put_hex32(b);
    }
}

int fw_run_cases(void)
{
    int failures = 0;
    uint32_t peak = 0;
    int loaded = -1;

    fw_puts("# atome parity: ");
    fw_put_uint(fw_n_cases);
    fw_puts(" cases, state ");
    fw_put_uint((uint32_t)sizeof(atome_state_t));
    fw_puts(" bytes, stack region ");
    fw_put_uint(fw_stack_size());
    fw_puts(" bytes\n");
    for (uint32_t b = 0; b < fw_n_blobs; b++) {
        uintptr_t a = (uintptr_t)fw_blobs[b].data;
        fw_puts("# blob ");
        fw_put_uint(b);
        fw_puts(" at 0x");
        fw_put_hex32((uint32_t)a);
        fw_puts(" len ");
        fw_put_uint(fw_blobs[b].len);
        fw_puts("\n");
        if ((a & 3u) != (fw_blob_offset & 3u)) {
            fw_puts("BADALIGN blob not at the requested misalignment\n");
            failures++;
        }
    }

    for (uint32_t i = 0; i < fw_n_cases; i++) {
        const fw_case_t *c = &fw_cases[i];
        const fw_blob_t *blob = &fw_blobs[c->blob];
        if ((int)c->blob != loaded) {
            int rc = blob->classifier
                ? atome_classifier_load(&fw_clf, blob->data, blob->len)
                : atome_load(&fw_model, blob->data, blob->len);
            fw_puts("L ");
            fw_put_uint(c->blob);
            fw_putc(' ');
            fw_put_int(rc);
            fw_putc('\n');
            if (rc != 0) failures++;
            loaded = c->blob;
        }
        uintptr_t ref = fw_stack_paint();
        if (c->kind == FW_PREDICT) {
            int id = atome_predict_next(&fw_model, &fw_state, c->tokens, c->n);
            uint32_t p = fw_stack_peak(ref);
            if (p > peak) peak = p;
            fw_puts("P ");
            fw_put_uint(i);
            fw_putc(' ');
            fw_put_int(id);
            put_bits(atome_get_logits(&fw_state), ATOME_VOCAB_SIZE);
        } else if (c->kind == FW_CLASSIFY) {
            float cl[ATOME_MAX_CLASSES];
            int k = atome_classify(&fw_clf, &fw_state, c->tokens, c->n, cl);
            uint32_t p = fw_stack_peak(ref);
            if (p > peak) peak = p;
            fw_puts("C ");
            fw_put_uint(i);
            fw_putc(' ');
            fw_put_int(k);
            put_bits(cl, fw_clf.n_classes);
        } else {
            int cnt = atome_generate(&fw_model, &fw_state, c->tokens, c->n, fw_gen_buf, c->max_tokens);
            uint32_t p = fw_stack_peak(ref);
            if (p > peak) peak = p;
            fw_puts("G ");
            fw_put_uint(i);
            fw_putc(' ');
            fw_put_int(cnt);
            for (int t = 0; t < cnt; t++) {
                fw_putc(' ');
                fw_put_int(fw_gen_buf[t]);
            }
        }
        fw_putc('\n');
    }
    fw_puts("# stack_peak ");
    fw_put_uint(peak);
    fw_puts("\n");
    if (fw_stack_overflowed()) {
        fw_puts("STACK OVERFLOW (the stack reached .bss)\n");
        failures++;
    }
    fw_puts("END ");
    fw_put_uint(fw_n_cases);
    fw_puts("\n");
    fw_flush();
    return failures ? 1 : 0;
}
