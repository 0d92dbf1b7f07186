/* Hostile inputs to the runtime API and the container reader, run on the
 * host (x86-64) and on a 32-bit core under QEMU (tests/c_api.sh): the same
 * program, the same expected codes on both.
 *  - buffer sizes that pass a size_t: atome_rt_work_size and
 *    ATOME_RT_WORK_SIZE give 0 for them in every mode (flags 0..3) and
 *    agree on every input, and atome_rt_open refuses a buffer claimed to be
 *    the wrapped size (-7); a flag bit outside the two refused (-1);
 *  - a container header whose dimensions or class count do not describe
 *    its payload exactly (-8, from atome_rt_open and atome_load);
 *  - missing dimensions (-9) and inputs shorter than any magic (-1).
 * Freestanding (no C library: fw.h prints); prints one line per failed
 * check and "rt_hostile: N checks, F failed", exits 1 on a failure.
 * The reference API's checks assume the library's default configuration. */
#include "atome.h"
#include "fw.h"


static int checks, failed;

static void expect(const char *what, long long got, long long want) {
    checks++;
    if (got == want) return;
    failed++;
    fw_puts("FAIL ");
    fw_puts(what);
    fw_puts(": got ");
    fw_put_int((int32_t)got);
    fw_puts(" (low 32 bits), want ");
    fw_put_int((int32_t)want);
    fw_puts("\n");
}

/* Bytes of a tensor of n weights, ATOME01 / ATOMECL01 (2 bits a weight). */
static unsigned long long tensor(unsigned long long n) { return 4 + (n + 3) / 4; }

/* Bytes of an ATOME01 body (after the magic) for V, D, L, DH, K. */
static unsigned long long body(unsigned long long v, unsigned long long d, unsigned long long l, unsigned long long dh,
                               unsigned long long k) {
    unsigned long long block = 8 * d + tensor(d * k) + 12 * d + 2 * tensor(dh * d) + tensor(d * d) + tensor(3 * d);
    return 2 * tensor(v * d) + l * block + 8 * d;
}

static unsigned crc_table(unsigned c) {
    int k;
    for (k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    return c;
}

static unsigned crc32(unsigned crc, const unsigned char *p, unsigned long n) {
    unsigned long i;
    crc = ~crc;
    for (i = 0; i < n; i++) crc = (crc >> 8) ^ crc_table((crc ^ p[i]) & 0xFF);
    return ~crc;
}

static void put32(unsigned char *p, unsigned v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static void copy(unsigned char *dst, const void *src, unsigned long n) {
    const unsigned char *s = (const unsigned char *)src;
    unsigned long i;
    for (i = 0; i < n; i++) dst[i] = s[i];
}

static void zero(unsigned char *dst, unsigned long n) {
    unsigned long i;
    for (i = 0; i < n; i++) dst[i] = 0;
}

/* An all-zero ATOME01 blob (zero scales and norms parse) of n bytes. */
static unsigned long lm_blob(unsigned char *b, unsigned long n) {
    zero(b, n);
    copy(b, "ATOME01", 7);
    return n;
}

/* An ATOMEF container around payload[0..plen] with the header's fields
 * f[0..8] (V D L DH K TOPK S n_classes); returns its length. */
static unsigned long container(unsigned char *out, int kind, const unsigned *f, const unsigned char *payload, unsigned long plen) {
    int i;
    zero(out, 60);
    copy(out, "ATOMEF", 6);
    out[6] = 1;
    out[10] = (unsigned char)kind;
    out[11] = 0; /* 2-bit packing */
    for (i = 0; i < 8; i++) put32(out + 12 + 4 * i, f[i]);
    put32(out + 44, 0);
    put32(out + 48, (unsigned)plen);
    put32(out + 52, crc32(0, payload, plen));
    put32(out + 56, crc32(0, out, 56));
    copy(out + 60, payload, plen);
    return 60 + plen;
}

static unsigned char blob_wrap[40000];
static unsigned char payload[32000];
static unsigned char box[33000];
static uint32_t work[16384];
static unsigned char def_payload[24000];
static unsigned char def_box[24100];
static atome_model_t model;

static int rt_open(const unsigned char *data, unsigned long len, const atome_dims_t *dims) {
    atome_rt_t rt;
    return atome_rt_open(&rt, data, len, dims, 0, work, sizeof work);
}

int main(void) {
    const int big = 2147483647;
    atome_dims_t wrap = {1, 1, 1, 65535, 1, 1, 65535, 0};
    int flags;
    unsigned long long true_size = 17180917852ULL, four_gib = 4294967296ULL;
    unsigned long n, plen, blen;
    unsigned f[8];
    atome_rt_t rt;

    /* 1. Sizes. The true float lean size of `wrap` is 17,180,917,852 bytes
     * (the q15 modes' are above 4 GiB too): a 32-bit size_t cannot hold
     * them. Flags 0..3: float lean, float cached, q15 lean, q15 cached. */
    for (flags = 0; flags < 4; flags++) {
        size_t lib = atome_rt_work_size(&wrap, flags);
        size_t mac = ATOME_RT_WORK_SIZE(1, 1, 1, 65535, 1, 1, 65535, flags);
        expect("function == macro, 17 GB dims", (long long)lib, (long long)mac);
        if (sizeof(size_t) < 8) expect("17 GB dims on a 32-bit size_t give 0", (long long)lib, 0);
        else expect("17 GB dims on a 64-bit size_t",
                    (long long)(flags == 0 ? (unsigned long long)lib == true_size
                                           : (unsigned long long)lib >= four_gib), 1);
    }
    {
        atome_dims_t k0 = {256, 64, 4, 16, 0, 4, 32, 0}, huge = {big, big, big, big, big, big, big, 0},
                     neg = {256, 64, 4, 16, 5, 4, -1, 0}, over = {256, 65536, 4, 16, 5, 4, 32, 0};
        expect("K=0: function", (long long)atome_rt_work_size(&k0, 0), 0);
        expect("K=0: macro", (long long)ATOME_RT_WORK_SIZE(256, 64, 4, 16, 0, 4, 32, 0), 0);
        expect("all INT_MAX: function", (long long)atome_rt_work_size(&huge, 1), 0);
        expect("all INT_MAX: macro", (long long)ATOME_RT_WORK_SIZE(big, big, big, big, big, big, big, 1), 0);
        expect("S=-1: function", (long long)atome_rt_work_size(&neg, 0), 0);
        expect("S=-1: macro", (long long)ATOME_RT_WORK_SIZE(256, 64, 4, 16, 5, 4, -1, 0), 0);
        expect("D=65536: function", (long long)atome_rt_work_size(&over, 0), 0);
        expect("D=65536: macro", (long long)ATOME_RT_WORK_SIZE(256, 65536, 4, 16, 5, 4, 32, 0), 0);
        /* The largest size that fits 32 bits still agrees. */
        expect("D=65535 S=8: function == macro", (long long)atome_rt_work_size(&(atome_dims_t){1, 65535, 1, 1, 1, 1, 8, 0}, 0),
               (long long)ATOME_RT_WORK_SIZE(1, 65535, 1, 1, 1, 1, 8, 0));
    }
    /* A valid blob of the 17 GB dims, opened with a buffer claimed to be
     * 1,048,668 bytes (the 32-bit wrap of the true size): refused. */
    blen = lm_blob(blob_wrap, (unsigned long)(7 + body(1, 1, 1, 65535, 1)));
    expect("open 17 GB dims in a 1,048,668-byte buffer", atome_rt_open(&rt, blob_wrap, blen, &wrap, 0, work, 1048668u), -7);
    /* A flag bit other than ATOME_RT_CACHED and ATOME_RT_Q15: refused (-1)
     * by atome_rt_open, 0 from the size. */
    {
        atome_dims_t d = {32, 16, 2, 8, 5, 4, 16, 0};
        plen = lm_blob(payload, (unsigned long)(7 + body(32, 16, 2, 8, 5)));
        expect("open with flags 4", atome_rt_open(&rt, payload, plen, &d, 4, work, sizeof work), -1);
        expect("size with flags 4", (long long)atome_rt_work_size(&d, 4), 0);
        expect("open with flags 3 (q15 cached)", atome_rt_open(&rt, payload, plen, &d, 3, work, sizeof work), 0);
    }

    /* 2. A header K=4 or V=31 around a K=5, V=32 payload; 3 bytes of
     * padding inside the payload. */
    plen = lm_blob(payload, (unsigned long)(7 + body(32, 16, 2, 8, 5)));
    {
        const unsigned good[8] = {32, 16, 2, 8, 5, 4, 16, 0};
        copy((unsigned char *)f, good, sizeof f);
        n = container(box, 1, f, payload, plen);
        expect("container with its own dims", rt_open(box, n, 0), 0);
        f[4] = 4;
        n = container(box, 1, f, payload, plen);
        expect("header K=4 around a K=5 payload", rt_open(box, n, 0), -8);
        copy((unsigned char *)f, good, sizeof f);
        f[0] = 31;
        n = container(box, 1, f, payload, plen);
        expect("header V=31 around a V=32 payload", rt_open(box, n, 0), -8);
        copy((unsigned char *)f, good, sizeof f);
        n = container(box, 1, f, payload, plen + 3);
        expect("3 padding bytes inside the payload", rt_open(box, n, 0), -8);
    }
    /* atome_load (the default build: V=256 D=64 L=4 DH=16 K=5): the
     * build's dims in the header, 3 bytes of padding inside the payload. */
    {
        unsigned long dlen = lm_blob(def_payload, (unsigned long)(7 + body(256, 64, 4, 16, 5)));
        const unsigned d[8] = {256, 64, 4, 16, 5, 4, 32, 0};
        copy((unsigned char *)f, d, sizeof f);
        n = container(def_box, 1, f, def_payload, dlen);
        expect("atome_load: container of the build's dims", atome_load(&model, def_box, n), 0);
        n = container(def_box, 1, f, def_payload, dlen + 3);
        expect("atome_load: 3 padding bytes inside the payload", atome_load(&model, def_box, n), -8);
    }

    /* 3. The header's n_classes against a 5-class payload. */
    {
        static const unsigned counts[4] = {4, 16, 99, 0xFFFFFFFFu};
        const unsigned good[8] = {32, 16, 2, 8, 5, 4, 16, 5};
        int i;
        plen = (unsigned long)(9 + 4 + body(32, 16, 2, 8, 5) + tensor(5 * 16));
        zero(payload, plen);
        copy(payload, "ATOMECL01", 9);
        put32(payload + 9, 5);
        copy((unsigned char *)f, good, sizeof f);
        n = container(box, 2, f, payload, plen);
        expect("classifier container with its own class count", rt_open(box, n, 0), 0);
        for (i = 0; i < 4; i++) {
            f[7] = counts[i];
            n = container(box, 2, f, payload, plen);
            expect("header n_classes around a 5-class payload", rt_open(box, n, 0), -8);
        }
    }

    /* 4. Missing dimensions; shorter than any magic. */
    {
        const unsigned nos[8] = {32, 16, 2, 8, 5, 4, 0, 0};
        atome_dims_t none = {0, 0, 0, 0, 0, 0, 0, 0}, s16 = {0, 0, 0, 0, 0, 0, 16, 0};
        plen = lm_blob(payload, (unsigned long)(7 + body(32, 16, 2, 8, 5)));
        copy((unsigned char *)f, nos, sizeof f);
        n = container(box, 1, f, payload, plen);
        expect("container without S, dims NULL", rt_open(box, n, 0), -9);
        expect("container without S, dims max_seq 0", rt_open(box, n, &none), -9);
        expect("container without S, dims max_seq 16", rt_open(box, n, &s16), 0);
        expect("bare blob, dims NULL", rt_open(payload, plen, 0), -9);
        expect("6-byte ATOMEF: atome_rt_open", rt_open((const unsigned char *)"ATOMEF", 6, 0), -1);
        expect("6-byte ATOMEF: atome_load", atome_load(&model, (const uint8_t *)"ATOMEF", 6), -1);
        expect("30-byte container start: atome_rt_open", rt_open(box, 30, 0), -2);
        expect("30-byte container start: atome_load", atome_load(&model, box, 30), -2);
    }

    fw_puts("rt_hostile: ");
    fw_put_int(checks);
    fw_puts(" checks, ");
    fw_put_int(failed);
    fw_puts(" failed\n");
    return failed ? 1 : 0;
}
