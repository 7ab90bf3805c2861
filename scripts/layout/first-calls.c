// first-calls ENTRIES OUT UID GID -- PROGRAM ARGS...
//
// Runs PROGRAM as UID:GID under ptrace with a one-shot breakpoint on each address in ENTRIES
// (hex, one per line, sorted ascending: the function entries of a position-dependent
// executable) and writes the entries it executed to OUT, in the order of their first call.
// Each breakpoint is removed at its first hit, so the program runs at nearly full speed after
// warming up: this is a profile of which functions run, not of how often.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t *entries;
static unsigned char *original;
static size_t *firstCalls;
static size_t count, called;

static long indexOf(uint64_t address) {
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (entries[middle] < address) low = middle + 1; else high = middle;
    }
    return low < count && entries[low] == address ? (long)low : -1;
}

static int readEntries(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) { perror(path); return -1; }
    size_t capacity = 1 << 16;
    entries = malloc(capacity * sizeof *entries);
    char line[64];
    while (entries && fgets(line, sizeof line, file)) {
        if (count == capacity) entries = realloc(entries, (capacity *= 2) * sizeof *entries);
        if (entries) entries[count++] = strtoull(line, NULL, 16);
    }
    fclose(file);
    for (size_t i = 1; entries && i < count; i++) {
        if (entries[i] <= entries[i - 1]) { fprintf(stderr, "first-calls: %s is not sorted\n", path); return -1; }
    }
    original = calloc(count ? count : 1, 1);
    firstCalls = calloc(count ? count : 1, sizeof *firstCalls);
    return entries && original && firstCalls ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 7 || strcmp(argv[5], "--") != 0) {
        fprintf(stderr, "usage: first-calls ENTRIES OUT UID GID -- PROGRAM ARGS...\n");
        return 2;
    }
    if (readEntries(argv[1]) != 0) return 1;
    uid_t uid = (uid_t)strtoul(argv[3], NULL, 10);
    gid_t gid = (gid_t)strtoul(argv[4], NULL, 10);
    pid_t child = fork();
    if (child < 0) { perror("fork"); return 1; }
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0) { perror("first-calls: dropping privileges"); _exit(127); }
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execv(argv[6], argv + 6);
        perror(argv[6]);
        _exit(127);
    }
    int status;
    if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) { fprintf(stderr, "first-calls: %s did not start\n", argv[6]); return 1; }
    // Threads the program starts are traced too; the program dies with the tracer.
    ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL));
    char memoryPath[64];
    snprintf(memoryPath, sizeof memoryPath, "/proc/%d/mem", child);
    int memory = open(memoryPath, O_RDWR | O_CLOEXEC);
    if (memory < 0) { perror(memoryPath); return 1; }
    const unsigned char breakpoint = 0xCC;
    for (size_t i = 0; i < count; i++) {
        if (pread(memory, &original[i], 1, (off_t)entries[i]) != 1 || pwrite(memory, &breakpoint, 1, (off_t)entries[i]) != 1) {
            fprintf(stderr, "first-calls: cannot set a breakpoint at %llx: %s\n", (unsigned long long)entries[i], strerror(errno));
            return 1;
        }
    }
    ptrace(PTRACE_CONT, child, NULL, NULL);
    for (;;) {
        pid_t thread = waitpid(-1, &status, __WALL);
        if (thread < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            if (thread == child) break;
            continue;
        }
        if (!WIFSTOPPED(status)) continue;
        int signal = WSTOPSIG(status);
        if (status >> 16 != 0 || signal == SIGSTOP) {  // a clone event, or a new thread's first stop
            ptrace(PTRACE_CONT, thread, NULL, NULL);
            continue;
        }
        if (signal == SIGTRAP) {
            struct user_regs_struct registers;
            ptrace(PTRACE_GETREGS, thread, NULL, &registers);
            long i = indexOf(registers.rip - 1);
            if (i >= 0) {
                // Another thread may have hit the same entry before this one was handled.
                unsigned char current = 0;
                if (pread(memory, &current, 1, (off_t)entries[i]) == 1 && current == breakpoint) {
                    if (pwrite(memory, &original[i], 1, (off_t)entries[i]) != 1) { perror("first-calls: restoring an entry"); return 1; }
                    firstCalls[called++] = (size_t)i;
                }
                registers.rip -= 1;
                ptrace(PTRACE_SETREGS, thread, NULL, &registers);
                ptrace(PTRACE_CONT, thread, NULL, NULL);
                continue;
            }
        }
        ptrace(PTRACE_CONT, thread, NULL, (void *)(long)signal);
    }
    // A new file only: the caller names a path in a directory of its own.
    int outFile = open(argv[2], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    FILE *out = outFile < 0 ? NULL : fdopen(outFile, "w");
    if (!out) { perror(argv[2]); return 1; }
    for (size_t i = 0; i < called; i++) fprintf(out, "%016llx\n", (unsigned long long)entries[firstCalls[i]]);
    if (fclose(out) != 0) { perror(argv[2]); return 1; }
    fprintf(stderr, "first-calls: %zu of %zu functions called\n", called, count);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
