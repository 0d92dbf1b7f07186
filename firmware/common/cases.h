/* Case tables produced by firmware/tools/gen_cases.py (cases.c + blobs.S). */
#ifndef ATOME_FW_CASES_H
#define ATOME_FW_CASES_H

#include <stdint.h>

typedef struct {
    const uint8_t *data;     /* the blob, placed at the requested misalignment */
    uint32_t len;
    uint32_t classifier;     /* 1 for ATOMECL blobs */
} fw_blob_t;

enum { FW_PREDICT = 'P', FW_CLASSIFY = 'C', FW_GENERATE = 'G' };

typedef struct {
    const int *tokens;
    int32_t n;
    int32_t max_tokens;      /* generate only */
    uint16_t blob;
    uint8_t kind;            /* FW_PREDICT / FW_CLASSIFY / FW_GENERATE */
    uint8_t golden_index;    /* index in the golden case (or generate) list */
} fw_case_t;

extern const fw_blob_t fw_blobs[];
extern const uint32_t fw_n_blobs;
extern const fw_case_t fw_cases[];
extern const uint32_t fw_n_cases;
extern const uint32_t fw_blob_offset;   /* ATOME_FW_BLOB_OFFSET the blobs were placed at */
extern int fw_gen_buf[];                /* room for the longest generate output */

int fw_run_cases(void);

#endif
