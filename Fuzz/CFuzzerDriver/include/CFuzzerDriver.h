#ifndef CFUZZERDRIVER_H
#define CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for a program with its own main (LLVM 12 and later): parses the
/// libFuzzer flags in argv and runs `callback` on each input. Only linked with
/// `-sanitize=fuzzer`; geoattr-fuzz calls it only when built with `-DFUZZING`.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
