/*
 * Audit firmware (scripts/cross.sh): calls every function libatome.a exports
 * so that, linked with --gc-sections, the final ELF holds everything a real
 * firmware could use; cross.sh then checks that no panic machinery
 * (core::panicking, rust_begin_unwind, core::fmt) survived. Under QEMU it
 * also checks each call's result and prints "ok <function>" per call.
 * Built at the default configuration with default.atome.
 */
#include "atome.h"
#include "fw.h"

extern const uint8_t audit_blob[];
extern const uint8_t audit_blob_end[];

static atome_state_t st;
static atome_model_t model;
static atome_classifier_t clf;
static float xs[ATOME_MAX_SEQ][ATOME_D_MODEL];
static float ys[ATOME_MAX_SEQ][ATOME_D_MODEL];
static float vec[ATOME_D_MODEL];
static float outv[ATOME_D_MODEL];
static float hs[ATOME_D_MODEL];
static float ent[ATOME_MAX_SEQ * ATOME_N_LAYERS];
static int gen_out[ATOME_MAX_SEQ];
static int fails;
/* The runtime API's buffer for this configuration, cached plan. */
#define RT_BYTES ATOME_RT_WORK_SIZE(ATOME_VOCAB_SIZE, ATOME_D_MODEL, ATOME_N_LAYERS, ATOME_D_HEAD, \
                                    ATOME_KERNEL_SIZE, ATOME_TOP_K, ATOME_MAX_SEQ, 1)
static uint32_t rt_work[(RT_BYTES + 3) / 4];

static void check(const char *name, int ok, int32_t value)
{
    fw_puts(ok ? "ok " : "FAIL ");
    fw_puts(name);
    fw_putc(' ');
    fw_put_int(value);
    fw_putc('\n');
    if (!ok) fails++;
}

static int finite_bits(float f)
{
    uint32_t b;
    __builtin_memcpy(&b, &f, 4);
    return ((b >> 23) & 0xFF) != 0xFF;
}

int main(void)
{
    static const int toks[12] = { 'O', 'n', 'c', 'e', ' ', 'u', 'p', 'o', 'n', ' ', 'a', ' ' };
    atome_build_config_t cfg;

    atome_init(&st);
    check("atome_init", 1, 0);
    int rc = atome_get_build_config(&cfg);
    check("atome_get_build_config", rc == 0 && cfg.d_model == ATOME_D_MODEL
          && cfg.state_size == sizeof(atome_state_t), (int32_t)cfg.state_size);
    rc = atome_load(&model, audit_blob, (size_t)(audit_blob_end - audit_blob));
    check("atome_load", rc == 0, rc);
    int id = atome_predict_next(&model, &st, toks, 12);
    check("atome_predict_next", id >= 0 && id < ATOME_VOCAB_SIZE, id);
    const float *lg = atome_get_logits(&st);
    check("atome_get_logits", lg != 0 && finite_bits(lg[id]), 0);
    rc = atome_router_entropy(&st, ent);
    check("atome_router_entropy", rc == ATOME_N_LAYERS, rc);
    rc = atome_router_entropy_all(&model, &st, toks, 12, ent, ATOME_MAX_SEQ * ATOME_N_LAYERS);
    check("atome_router_entropy_all", rc == 12, rc);
    rc = atome_generate(&model, &st, toks, 12, gen_out, 3);
    check("atome_generate", rc == 3 && gen_out[0] == id, rc);
    atome_sampling_t sp = { 0.8f, 20, 0.9f, 0, 42u };
    rc = atome_generate_sampled(&model, &st, toks, 12, gen_out, 3, &sp);
    check("atome_generate_sampled", rc == 3, rc);
    /* The language-model blob is not a classifier: both must refuse it. */
    rc = atome_classifier_load(&clf, audit_blob, (size_t)(audit_blob_end - audit_blob));
    check("atome_classifier_load", rc < 0, rc);
    rc = atome_classify(&clf, &st, toks, 12, vec);
    check("atome_classify", rc == -1, rc);

    /* Kernels, on the first block's weights. */
    for (int t = 0; t < ATOME_MAX_SEQ; t++)
        for (int i = 0; i < ATOME_D_MODEL; i++)
            xs[t][i] = (float)((t * 7 + i * 3) % 11) * 0.125f - 0.5f;
    for (int i = 0; i < ATOME_D_MODEL; i++) vec[i] = xs[1][i];
    atome_layer_norm(vec, ATOME_D_MODEL, &model.blocks[0].norm);
    check("atome_layer_norm", finite_bits(vec[0]), 0);
    atome_ternary_matvec(&model.blocks[0].attn.Wv, vec, outv);
    check("atome_ternary_matvec", finite_bits(outv[ATOME_D_MODEL - 1]), 0);
    atome_causal_conv((const float (*)[ATOME_D_MODEL])xs, 8, &model.blocks[0].local_conv, ys);
    check("atome_causal_conv", finite_bits(ys[7][0]), 0);
    for (int i = 0; i < ATOME_D_MODEL; i++) hs[i] = 0.0f;
    atome_ssm_forward((const float (*)[ATOME_D_MODEL])xs, 8, &model.blocks[0].ssm, hs, ys);
    check("atome_ssm_forward", finite_bits(ys[7][1]), 0);
    atome_sparse_attn((const float (*)[ATOME_D_MODEL])xs, 8, &model.blocks[0].attn, &st, ys);
    check("atome_sparse_attn", finite_bits(ys[7][2]), 0);

    /* The runtime-dimension API on the same blob: the same results. */
    atome_dims_t dims = { ATOME_VOCAB_SIZE, ATOME_D_MODEL, ATOME_N_LAYERS, ATOME_D_HEAD,
                          ATOME_KERNEL_SIZE, ATOME_TOP_K, ATOME_MAX_SEQ, 0 };
    atome_dims_t got;
    atome_rt_t rt;
    size_t need = atome_rt_work_size(&dims, 1);
    check("atome_rt_work_size", need == RT_BYTES, (int32_t)need);
    rc = atome_rt_open(&rt, audit_blob, (size_t)(audit_blob_end - audit_blob), &dims, 1, rt_work, sizeof rt_work);
    check("atome_rt_open", rc == 0, rc);
    rc = atome_rt_dims(&rt, &got);
    check("atome_rt_dims", rc == 0 && got.d_model == ATOME_D_MODEL && got.n_classes == 0, rc);
    int id2 = atome_rt_predict_next(&rt, toks, 12);
    check("atome_rt_predict_next", id2 == id, id2);
    const float *lg2 = atome_rt_logits(&rt);
    check("atome_rt_logits", lg2 != 0 && finite_bits(lg2[id2]), 0);
    rc = atome_rt_router_entropy(&rt, ent);
    check("atome_rt_router_entropy", rc == ATOME_N_LAYERS, rc);
    rc = atome_rt_generate(&rt, toks, 12, gen_out, 3);
    check("atome_rt_generate", rc == 3 && gen_out[0] == id, rc);
    rc = atome_rt_generate_sampled(&rt, toks, 12, gen_out, 3, &sp);
    check("atome_rt_generate_sampled", rc == 3, rc);
    rc = atome_rt_classify(&rt, toks, 12, vec);
    check("atome_rt_classify", rc == -1, rc);

    fw_puts(fails ? "AUDIT FAILED\n" : "AUDIT OK\n");
    return fails ? 1 : 0;
}
