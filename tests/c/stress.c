/* Stress test of the C API against the host library, for AddressSanitizer,
 * UBSan and valgrind (scripts/sanitize.sh):
 *   stress [iterations] [seed]          random blobs and calls; exit 0 when every check held
 *   stress --write <lm|cl> <path>       writes a valid blob for this configuration
 *
 * Blobs: valid ones from a small generator of its own (ATOME01, ATOME02,
 * ATOMEP3, ATOMECL01, ATOMECL02 for the configuration this file is compiled
 * with), then mutated (bytes, NaN/inf floats, magic, n_classes), truncated
 * or extended, each in a malloc'd buffer of exactly its length at a random
 * misalignment, so any read past it is reported. Calls: random pointers
 * (null or valid), lengths (negative, zero, > S), ids (negative, huge),
 * garbage states, every output buffer exactly as large as the API says it
 * may be written. Results are checked against docs/API.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "atome.h"

#define V ATOME_VOCAB_SIZE
#define D ATOME_D_MODEL
#define S ATOME_MAX_SEQ
#define L ATOME_N_LAYERS

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }
static float frange(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() >> 40) / 16777216.0f; }

static float special(void) {
    union { uint32_t u; float f; } c;
    switch (below(10)) {
    case 0: c.u = 0x7fc00000u; return c.f;                 /* NaN */
    case 1: c.u = 0xffc00001u; return c.f;                 /* -NaN */
    case 2: c.u = 0x7f800000u; return c.f;                 /* +inf */
    case 3: c.u = 0xff800000u; return c.f;                 /* -inf */
    case 4: return 3.0e38f;
    case 5: return -0.0f;
    case 6: c.u = 1; return c.f;                           /* denormal */
    case 7: return 1e30f;
    default: c.u = (uint32_t)rnd(); return c.f;
    }
}

static int failures;
#define CHECK(cond, ...)                                              \
    do {                                                              \
        if (!(cond)) {                                                \
            fprintf(stderr, "stress: check failed at line %d: ", __LINE__); \
            fprintf(stderr, __VA_ARGS__);                             \
            fprintf(stderr, "\n");                                    \
            failures++;                                               \
            if (failures > 20) exit(1);                               \
        }                                                             \
    } while (0)

/* ---- blob generator ---- */
typedef struct { uint8_t *p; size_t n, cap; } buf_t;
static void put(buf_t *b, const void *src, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = (uint8_t *)realloc(b->p, b->cap);
        if (!b->p) { fprintf(stderr, "out of memory\n"); exit(2); }
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void put_f32(buf_t *b, float v) {
    uint8_t x[4];
    uint32_t u;
    memcpy(&u, &v, 4);
    x[0] = (uint8_t)u; x[1] = (uint8_t)(u >> 8); x[2] = (uint8_t)(u >> 16); x[3] = (uint8_t)(u >> 24);
    put(b, x, 4);
}
static size_t payload_len(int packing, size_t n) {
    return packing == 0 ? (n + 3) / 4 : packing == 1 ? (n + 4) / 5 : 3 * ((n + 7) / 8);
}
/* A tensor of n weights: scale, then valid codes (density ~40%). */
static void put_tensor(buf_t *b, int packing, size_t n, float scale) {
    size_t len = payload_len(packing, n), i;
    uint8_t *p = (uint8_t *)calloc(len ? len : 1, 1);
    if (!p) exit(2);
    put_f32(b, scale);
    for (i = 0; i < n; i++) {
        int w = below(10) < 4 ? (below(2) ? 1 : -1) : 0;
        if (packing == 2 && w && below(4) == 0) w *= below(2) ? 3 : 9;
        if (packing == 0) {
            p[i >> 2] |= (uint8_t)((w == 1 ? 1 : w == -1 ? 3 : 0) << (2 * (i & 3)));
        } else if (packing == 1) {
            static const int pw[5] = {1, 3, 9, 27, 81};
            p[i / 5] = (uint8_t)(p[i / 5] + (w + 1) * pw[i % 5]);
        } else {
            static const int code[19] = {6, 0, 0, 0, 0, 0, 4, 0, 2, 0, 1, 0, 3, 0, 0, 0, 0, 0, 5};
            uint32_t c = (uint32_t)code[w + 9];
            size_t g = 3 * (i / 8), sh = 3 * (i % 8);
            uint32_t word = (uint32_t)p[g] | (uint32_t)p[g + 1] << 8 | (uint32_t)p[g + 2] << 16;
            word |= c << sh;
            p[g] = (uint8_t)word; p[g + 1] = (uint8_t)(word >> 8); p[g + 2] = (uint8_t)(word >> 16);
        }
    }
    if (packing == 1) { /* padding trits are 0 (digit 1) */
        for (i = n; i < 5 * len; i++) {
            static const int pw[5] = {1, 3, 9, 27, 81};
            p[i / 5] = (uint8_t)(p[i / 5] + pw[i % 5]);
        }
    }
    put(b, p, len);
    free(p);
}
static void put_floats(buf_t *b, size_t n, float lo, float hi) {
    size_t i;
    for (i = 0; i < n; i++) put_f32(b, frange(lo, hi));
}
/* fmt: 0 ATOME01, 1 ATOME02, 2 ATOMEP3, 3 ATOMECL01, 4 ATOMECL02 */
static buf_t make_blob(int fmt, int n_classes) {
    static const char *magic[5] = {"ATOME01", "ATOME02", "ATOMEP3", "ATOMECL01", "ATOMECL02"};
    static const int packing[5] = {0, 1, 2, 0, 1};
    buf_t b = {NULL, 0, 0};
    int pk = packing[fmt], l;
    put(&b, magic[fmt], strlen(magic[fmt]));
    if (fmt >= 3) {
        uint8_t x[4];
        uint32_t u = (uint32_t)n_classes;
        x[0] = (uint8_t)u; x[1] = (uint8_t)(u >> 8); x[2] = (uint8_t)(u >> 16); x[3] = (uint8_t)(u >> 24);
        put(&b, x, 4);
    }
    put_tensor(&b, pk, (size_t)V * D, frange(0.5f, 1.5f));
    for (l = 0; l < L; l++) {
        put_floats(&b, D, 0.5f, 1.5f);
        put_floats(&b, D, -0.1f, 0.1f);
        put_tensor(&b, pk, (size_t)D * ATOME_KERNEL_SIZE, frange(0.05f, 0.3f));
        put_floats(&b, D, -2.0f, 2.0f);
        put_floats(&b, D, -1.0f, 1.0f);
        put_floats(&b, D, -1.0f, 1.0f);
        put_tensor(&b, pk, (size_t)ATOME_D_HEAD * D, frange(0.05f, 0.5f));
        put_tensor(&b, pk, (size_t)ATOME_D_HEAD * D, frange(0.05f, 0.5f));
        put_tensor(&b, pk, (size_t)D * D, frange(0.05f, 0.3f));
        put_tensor(&b, pk, (size_t)3 * D, frange(0.05f, 0.5f));
    }
    put_floats(&b, D, 0.5f, 1.5f);
    put_floats(&b, D, -0.1f, 0.1f);
    put_tensor(&b, pk, (size_t)V * D, frange(0.05f, 0.5f));
    if (fmt >= 3) put_tensor(&b, pk, (size_t)n_classes * D, frange(0.05f, 0.5f));
    return b;
}

/* A copy in a malloc'd block of exactly len (+ misalignment) bytes. */
static uint8_t *place(const uint8_t *src, size_t len, size_t shift, uint8_t **base) {
    *base = (uint8_t *)malloc(len + shift ? len + shift : 1);
    if (!*base) exit(2);
    if (len) memcpy(*base + shift, src, len);
    return *base + shift;
}

static int argmax(const float *v, int n) {
    int b = 0, i;
    for (i = 1; i < n; i++) if (v[i] > v[b]) b = i;
    return b;
}

static int *make_tokens(int len) {
    int *t = (int *)malloc(sizeof(int) * (size_t)(len > 0 ? len : 1)), i;
    if (!t) exit(2);
    for (i = 0; i < len; i++) {
        switch (below(8)) {
        case 0: t[i] = (int)(int32_t)rnd(); break;
        case 1: t[i] = -1 - (int)below(100); break;
        case 2: t[i] = V + (int)below(100); break;
        default: t[i] = (int)below(V);
        }
    }
    return t;
}

static int n_for(int len) {
    switch (below(12)) {
    case 0: return 0;
    case 1: return -1 - (int)below(5);
    case 2: return len / 2;
    default: return len;
    }
}

static void scribble(void *p, size_t n) {
    size_t i;
    uint8_t *b = (uint8_t *)p;
    for (i = 0; i < n; i++) b[i] = (uint8_t)rnd();
}

static atome_model_t *model;
static atome_classifier_t *clf;
static atome_state_t *state;

static void api_calls(int lm_ok, int cl_ok) {
    int k, calls = 1 + (int)below(4);
    for (k = 0; k < calls; k++) {
        int len = below(6) == 0 ? (int)below(3 * S + 3) : 1 + (int)below(S);
        int *toks = make_tokens(len);
        int n = n_for(len);
        const int *tp = below(16) == 0 ? NULL : toks;
        int which = (int)below(4);
        const atome_model_t *m = which == 0 ? NULL : which == 1 ? &clf->base : model;
        int loaded = which == 0 ? 0 : which == 1 ? cl_ok : lm_ok;
        int ok = loaded && tp && n >= 1;
        if (below(6) == 0) scribble(state, sizeof *state);
        switch (below(6)) {
        case 0: {
            int id = atome_predict_next(m, state, tp, n);
            if (!ok) {
                CHECK(id == -1, "predict_next must refuse, got %d", id);
            } else {
                const float *lg = atome_get_logits(state);
                CHECK(id >= 0 && id < V, "predict_next id %d", id);
                CHECK(id == argmax(lg, V), "id %d is not the argmax of the logits", id);
            }
            break;
        }
        case 1:
        case 2: {
            int max = below(5) == 0 ? -(int)below(3) : (int)below(S + 3);
            int cap = max > 0 ? max : 0, cnt, i;
            int *out = (int *)malloc(sizeof(int) * (size_t)(cap ? cap : 1));
            atome_sampling_t prm;
            int want;
            if (!out) exit(2);
            prm.temperature = below(3) ? frange(0.1f, 2.0f) : special();
            prm.top_k = below(3) ? (int)below(V + 2) : (int)(int32_t)rnd();
            prm.top_p = below(3) ? frange(0.0f, 1.2f) : special();
            prm.reserved = 0;
            prm.seed = rnd();
            if (below(2)) {
                cnt = atome_generate(m, state, tp, n, below(16) ? out : NULL, max);
            } else {
                cnt = atome_generate_sampled(m, state, tp, n, below(16) ? out : NULL, max, below(16) ? &prm : NULL);
            }
            want = (!ok || max < 1) ? 0 : (n >= S ? 0 : (max < S - n ? max : S - n));
            CHECK(cnt == 0 || cnt == want, "generate count %d (want %d or 0 for a null output/params)", cnt, want);
            for (i = 0; i < cnt; i++) CHECK(out[i] >= 0 && out[i] < V, "generated id %d", out[i]);
            free(out);
            break;
        }
        case 3: {
            int nc = cl_ok ? clf->n_classes : ATOME_MAX_CLASSES;
            float *out = (float *)malloc(sizeof(float) * (size_t)nc);
            int c;
            if (!out) exit(2);
            c = atome_classify(below(8) ? clf : NULL, state, tp, n, below(4) ? out : NULL);
            if (cl_ok && tp && n >= 1) CHECK(c == -1 || (c >= 0 && c < nc), "class %d of %d", c, nc);
            else CHECK(c == -1, "classify must refuse, got %d", c);
            free(out);
            break;
        }
        case 4: {
            int cap = below(3) ? S * L : (int)below(S * L + 2);
            float *out = (float *)malloc(sizeof(float) * (size_t)(cap ? cap : 1));
            float last[L];
            int r, w = n < S ? n : S;
            if (!out) exit(2);
            r = atome_router_entropy_all(m, state, tp, n, out, cap);
            if (ok && w * L <= cap) CHECK(r == w, "router_entropy_all %d (want %d)", r, w);
            else CHECK(r == -1, "router_entropy_all must refuse, got %d", r);
            r = atome_router_entropy(below(8) ? state : NULL, last);
            CHECK(r == -1 || r == L, "router_entropy %d", r);
            free(out);
            break;
        }
        default: {
            atome_build_config_t cfg;
            CHECK(atome_get_build_config(&cfg) == 0 && cfg.state_size == sizeof(atome_state_t), "build config");
            CHECK(atome_get_build_config(NULL) == -1, "build config null");
            CHECK(atome_get_logits(NULL) == NULL, "get_logits null");
            atome_init(NULL);
            atome_init(state);
        }
        }
        free(toks);
    }
}

static void kernel_calls(void) {
    int pk = below(8) == 0 ? (int)below(256) : (int)below(3);
    int rows = (int)below(70), cols = (int)below(200), seq = below(8) == 0 ? -(int)below(3) : (int)below(S + 4);
    int nrows = seq > 0 ? seq : 0, i;
    size_t plen = payload_len(pk < 3 ? pk : 0, (size_t)rows * (size_t)cols);
    uint8_t *pay = (uint8_t *)malloc(plen ? plen : 1);
    float *x = (float *)malloc(sizeof(float) * (size_t)(cols ? cols : 1));
    float *y = (float *)malloc(sizeof(float) * (size_t)(rows ? rows : 1));
    float (*xs)[D] = (float (*)[D])malloc(sizeof(float) * D * (size_t)(nrows ? nrows : 1));
    float (*os)[D] = (float (*)[D])malloc(sizeof(float) * D * (size_t)(nrows ? nrows : 1));
    uint8_t *fb = (uint8_t *)malloc(4 * 3 * D + 3);
    atome_ternary_t w;
    if (!pay || !x || !y || !xs || !os || !fb) exit(2);
    scribble(pay, plen);
    if (pk == 1) for (i = 0; i < (int)plen; i++) pay[i] = (uint8_t)(pay[i] % 243);
    for (i = 0; i < cols; i++) x[i] = below(10) ? frange(-2, 2) : special();
    for (i = 0; i < nrows * D; i++) xs[i / D][i % D] = below(20) ? frange(-2, 2) : special();
    for (i = 0; i < 3 * D; i++) {
        float v = below(20) ? frange(-1, 1) : special();
        memcpy(fb + 1 + 4 * i, &v, 4); /* misaligned, little-endian host */
    }
    w.packed = below(16) ? pay : NULL;
    w.scale = below(8) ? frange(-1, 1) : special();
    w.rows = (uint16_t)rows;
    w.cols = (uint16_t)cols;
    w.packing = (uint8_t)pk;
    atome_ternary_matvec(below(16) ? &w : NULL, x, y);
    {
        atome_norm_t nm;
        int dim = cols < D ? cols : D;
        nm.gamma = (const float *)(const void *)(fb + 1);
        nm.beta = (const float *)(const void *)(fb + 1 + 4 * D);
        atome_layer_norm(x, below(10) ? dim : -dim, below(16) ? &nm : NULL);
    }
    if (nrows > 0 || below(2)) {
        /* conv: channels x K payload (channels <= D here), rows of D */
        int ch = below(4) ? D : (int)below(D + 1), kk = (int)below(9);
        size_t cl = payload_len(pk < 3 ? pk : 0, (size_t)ch * (size_t)kk);
        uint8_t *cp = (uint8_t *)malloc(cl ? cl : 1);
        atome_conv_t cv;
        atome_ssm_t sm;
        float *h = (float *)malloc(sizeof(float) * D);
        if (!cp || !h) exit(2);
        scribble(cp, cl);
        if (pk == 1) for (i = 0; i < (int)cl; i++) cp[i] = (uint8_t)(cp[i] % 243);
        cv.packed = cp; cv.scale = frange(-1, 1); cv.channels = (uint16_t)ch; cv.kernel_size = (uint16_t)kk; cv.packing = (uint8_t)pk;
        atome_causal_conv((const float (*)[D])xs, seq, &cv, os);
        sm.a = (const float *)(const void *)(fb + 1);
        sm.b = (const float *)(const void *)(fb + 1 + 4 * D);
        sm.c_out = (const float *)(const void *)(fb + 1 + 8 * D);
        sm.channels = (uint16_t)ch;
        for (i = 0; i < D; i++) h[i] = below(10) ? 0.0f : special();
        atome_ssm_forward((const float (*)[D])xs, seq, &sm, h, os);
        free(cp);
        free(h);
    }
    {
        /* attention: DH x D and D x D payloads */
        int dh = below(4) ? ATOME_D_HEAD : (int)below(ATOME_D_HEAD + 1);
        int p2 = pk < 3 ? pk : 0;
        size_t ql = payload_len(p2, (size_t)dh * D), vl = payload_len(p2, (size_t)D * D);
        uint8_t *q = (uint8_t *)malloc(ql ? ql : 1), *kq = (uint8_t *)malloc(ql ? ql : 1), *vv = (uint8_t *)malloc(vl);
        atome_attn_t at;
        if (!q || !kq || !vv) exit(2);
        scribble(q, ql); scribble(kq, ql); scribble(vv, vl);
        if (p2 == 1) {
            for (i = 0; i < (int)ql; i++) { q[i] = (uint8_t)(q[i] % 243); kq[i] = (uint8_t)(kq[i] % 243); }
            for (i = 0; i < (int)vl; i++) vv[i] = (uint8_t)(vv[i] % 243);
        }
        at.Wq.packed = q; at.Wq.scale = below(8) ? frange(-1, 1) : special(); at.Wq.rows = (uint16_t)dh; at.Wq.cols = D; at.Wq.packing = (uint8_t)p2;
        at.Wk = at.Wq; at.Wk.packed = kq;
        at.Wv = at.Wq; at.Wv.packed = vv; at.Wv.rows = D;
        at.d_head = (uint16_t)dh;
        at.top_k = (uint16_t)(below(4) ? ATOME_TOP_K : below(ATOME_TOP_K + 2));
        if (below(4) == 0) scribble(state, sizeof *state);
        atome_sparse_attn((const float (*)[D])xs, seq, &at, below(16) ? state : NULL, os);
        free(q); free(kq); free(vv);
    }
    free(pay); free(x); free(y); free(xs); free(os); free(fb);
}

static int expected_classes(void) { return 1 + (int)below(ATOME_MAX_CLASSES); }

int main(int argc, char **argv) {
    long iters = 2000, it;
    buf_t cache[5][2];
    int cache_nc[5][2];
    int f, j;
    if (argc == 4 && strcmp(argv[1], "--write") == 0) {
        int cl = strcmp(argv[2], "cl") == 0;
        buf_t b = make_blob(cl ? 3 : 0, 4);
        FILE *out = fopen(argv[3], "wb");
        if (!out || fwrite(b.p, 1, b.n, out) != b.n) return 1;
        fclose(out);
        free(b.p);
        return 0;
    }
    if (argc > 1) iters = atol(argv[1]);
    if (argc > 2) rng_state = (uint64_t)strtoull(argv[2], NULL, 0);
    model = (atome_model_t *)calloc(1, sizeof *model);
    clf = (atome_classifier_t *)calloc(1, sizeof *clf);
    state = (atome_state_t *)malloc(sizeof *state);
    if (!model || !clf || !state) return 2;
    scribble(state, sizeof *state);
    for (f = 0; f < 5; f++)
        for (j = 0; j < 2; j++) {
            cache_nc[f][j] = expected_classes();
            cache[f][j] = make_blob(f, cache_nc[f][j]);
        }
    for (it = 0; it < iters; it++) {
        int fmt = (int)below(5), slot = (int)below(2);
        buf_t *src = &cache[fmt][slot];
        size_t len = src->n, i;
        uint8_t *tmp = (uint8_t *)malloc(len + 64), *base, *blob;
        int rl, rc, mut = (int)below(10), lm_ok, cl_ok;
        if (!tmp) return 2;
        memcpy(tmp, src->p, len);
        if (below(50) == 0) { /* refresh the cached blob now and then */
            free(src->p);
            cache_nc[fmt][slot] = expected_classes();
            *src = make_blob(fmt, cache_nc[fmt][slot]);
            free(tmp);
            continue;
        }
        switch (mut) {
        case 0: /* random bytes */
            for (i = 0; i < 1 + below(8); i++) tmp[below(len)] = (uint8_t)rnd();
            break;
        case 1: /* NaN/inf floats at random offsets */
            for (i = 0; i < 1 + below(4); i++) {
                float v = special();
                size_t o = below(len - 4);
                memcpy(tmp + o, &v, 4);
            }
            break;
        case 2: len = below(len); break;                                  /* truncated */
        case 3: for (i = 0; i < 64; i++) tmp[len + i] = (uint8_t)rnd();   /* trailing */
            len += below(40);
            break;
        case 4: tmp[below(9)] = (uint8_t)rnd(); break;                    /* magic */
        case 5: if (fmt >= 3) { int32_t nc = (int32_t)(below(3) ? (int)below(ATOME_MAX_CLASSES + 3) - 1 : (int)(int32_t)rnd()); memcpy(tmp + 9, &nc, 4); } break;
        default: break;                                                   /* valid */
        }
        blob = place(tmp, len, below(8), &base);
        free(tmp);
        rl = atome_load(below(32) ? model : NULL, below(32) ? blob : NULL, len);
        rc = atome_classifier_load(below(32) ? clf : NULL, below(32) ? blob : NULL, len);
        CHECK(rl <= 0 && rl >= -4, "atome_load %d", rl);
        CHECK(rc <= 0 && rc >= -4, "atome_classifier_load %d", rc);
        if (mut >= 6) {
            if (fmt < 3) CHECK(rl == 0 || rl == -1, "valid LM blob: load %d", rl);
            else CHECK(rc == 0 || rc == -1, "valid classifier blob: load %d", rc);
        }
        if (mut == 2 && len >= 13) CHECK(rl != 0 && rc != 0, "a truncated blob loaded");
        lm_ok = rl == 0;
        cl_ok = rc == 0;
        api_calls(lm_ok, cl_ok);
        if (below(2)) kernel_calls();
        free(base); /* the blob is gone: forget the models (as an application must) */
        memset(model, 0, sizeof *model);
        memset(clf, 0, sizeof *clf);
    }
    for (f = 0; f < 5; f++)
        for (j = 0; j < 2; j++) free(cache[f][j].p);
    free(model); free(clf); free(state);
    if (failures) {
        fprintf(stderr, "stress: %d check(s) failed\n", failures);
        return 1;
    }
    printf("stress: %ld iterations, 0 failures\n", iters);
    return 0;
}
