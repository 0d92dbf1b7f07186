/* Helpers shared by the examples: reading a file whole, parsing ids. */
#ifndef ATOME_EXAMPLES_COMMON_H
#define ATOME_EXAMPLES_COMMON_H
#include <stdio.h>
#include <stdlib.h>

/* Reads a whole file into a malloc'd buffer (the example's, not the library's). */
static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long n;
    if (!f) {
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = (unsigned char *)malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}
#endif
