/* The model blob, straight from the file (path from CMake). */
    .section .rodata.atome_blob,"a"
    .balign 4
    .global atome_blob
atome_blob:
    .incbin ATOME_TEST_BLOB
    .global atome_blob_end
atome_blob_end:
