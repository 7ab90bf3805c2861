// glibc 2.38 gave the C23 forms of sscanf and strtol and its siblings names of their own
// (__isoc23_*: they also read a 0b/0B binary prefix), and sid's Swift runtime archives, built
// against a newer glibc, call those names. Debian 12's glibc (2.36) has only the older forms,
// which this object forwards them to, so that the binaries link against it and run on it. The
// forms differ only in base 0 or 2, on input with a binary prefix.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int __isoc23_sscanf(const char *restrict s, const char *restrict format, ...);
long __isoc23_strtol(const char *restrict s, char **restrict end, int base);
long long __isoc23_strtoll(const char *restrict s, char **restrict end, int base);
unsigned long __isoc23_strtoul(const char *restrict s, char **restrict end, int base);
unsigned long long __isoc23_strtoull(const char *restrict s, char **restrict end, int base);

int __isoc23_sscanf(const char *restrict s, const char *restrict format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int assigned = vsscanf(s, format, arguments);
    va_end(arguments);
    return assigned;
}

long __isoc23_strtol(const char *restrict s, char **restrict end, int base) { return strtol(s, end, base); }

long long __isoc23_strtoll(const char *restrict s, char **restrict end, int base) { return strtoll(s, end, base); }

unsigned long __isoc23_strtoul(const char *restrict s, char **restrict end, int base) { return strtoul(s, end, base); }

unsigned long long __isoc23_strtoull(const char *restrict s, char **restrict end, int base) { return strtoull(s, end, base); }
