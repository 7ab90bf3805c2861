#include "CProgramArguments.h"

#include <stddef.h>
#include <stdlib.h> // __GLIBC__, by way of <features.h>

static int captured_count = -1;
static char **captured_vector = NULL;

// glibc calls the functions of the executable's .init_array with the arguments main gets. Other C
// libraries (musl) call them with none: there nothing is captured, and the count reads -1.
#if defined(__GLIBC__)
static void capture(int argc, char **argv, char **envp) {
    (void)envp;
    captured_count = argc;
    captured_vector = argv;
}

// `used`: nothing calls it by name; the section is what the loader reads (and the linker keeps
// .init_array whatever --gc-sections drops).
__attribute__((section(".init_array"), used)) static void (*const capture_entry)(int, char **, char **) = capture;
#endif

int CProgramArguments_count(void) {
    return captured_vector == NULL ? -1 : captured_count;
}

const char *CProgramArguments_argument(int index) {
    if (captured_vector == NULL || index < 0 || index >= captured_count) return NULL;
    return captured_vector[index];
}
