#include "CMappingGuard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// A slot is free (0), being filled (1) or guarding (2). The handler reads it without a lock: a
// slot's bounds are written before it becomes guarding and read only when it is.
enum { slot_free = 0, slot_filling = 1, slot_guarding = 2 };

struct guarded {
    atomic_int state;
    _Atomic uintptr_t start;
    _Atomic uintptr_t end;
    atomic_bool damaged;
};

static struct guarded slots[CMAPPINGGUARD_CAPACITY];
static struct sigaction previous;
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t page_mask = 0;

// Where a SIGBUS that is not ours goes: the handler installed before this one, else the default
// action (the process ends, with a core dump where that is enabled).
static void pass_on(int signo, siginfo_t *info, void *context) {
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction != NULL) {
            previous.sa_sigaction(signo, info, context);
            return;
        }
    } else if (previous.sa_handler == SIG_IGN && (info == NULL || info->si_code <= 0)) {
        // A SIGBUS sent by kill() to a process that ignored it stays ignored.
        return;
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(signo);
        return;
    }
    // A fault runs its instruction again on return and faults again, now to the default action;
    // a SIGBUS sent by kill() or raise() would not come back, so it is raised again.
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signo, &fallback, NULL);
    if (info == NULL || info->si_code <= 0) raise(signo);
}

static void on_sigbus(int signo, siginfo_t *info, void *context) {
    int saved_errno = errno;
    if (info != NULL && info->si_code == BUS_ADRERR) {
        uintptr_t address = (uintptr_t)info->si_addr;
        for (int index = 0; index < CMAPPINGGUARD_CAPACITY; index++) {
            struct guarded *slot = &slots[index];
            if (atomic_load_explicit(&slot->state, memory_order_acquire) != slot_guarding) continue;
            uintptr_t start = atomic_load_explicit(&slot->start, memory_order_relaxed);
            uintptr_t end = atomic_load_explicit(&slot->end, memory_order_relaxed);
            if (address < start || address >= end) continue;
            // The damage is marked before the zeros are there, so no read can see zeros while the
            // mapping still reads as intact.
            atomic_store_explicit(&slot->damaged, true, memory_order_seq_cst);
            // Zeros from the faulting page to the mapping's end, in one mapping: every page above
            // the file's new end is past it too, and a zero page per fault could split the mapping
            // into more areas than the kernel allows (vm.max_map_count).
            uintptr_t page = address & page_mask;
            size_t length = (size_t)(((end - page) + ~page_mask) & page_mask);
            void *mapped = mmap((void *)page, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            if (mapped != MAP_FAILED) {
                errno = saved_errno;
                return;
            }
            break;
        }
    }
    errno = saved_errno;
    pass_on(signo, info, context);
}

// Installs the handler, unless it is the one in place: at the first registration, and again
// at a later one when someone has put another handler in its place since (Python's
// faulthandler.disable() restores the handler it found, which may predate this one). 0, or an
// errno.
static int install(void) {
    pthread_mutex_lock(&install_lock);
    int error = 0;
    if (page_mask == 0) {
        long size = sysconf(_SC_PAGESIZE);
        if (size <= 0 || (size & (size - 1)) != 0) error = EINVAL;
        else page_mask = ~((uintptr_t)size - 1);
    }
    struct sigaction current;
    if (error == 0 && sigaction(SIGBUS, NULL, &current) != 0) error = errno;
    if (error == 0 && !((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_sigbus)) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = on_sigbus;
        // SA_ONSTACK: on an alternate signal stack where the thread has one (a fault near the end
        // of a thread's stack still gets handled).
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        // What was there is what a SIGBUS that is not ours goes to.
        previous = current;
        if (sigaction(SIGBUS, &action, NULL) != 0) error = errno;
    }
    pthread_mutex_unlock(&install_lock);
    return error;
}

int CMappingGuard_register(const void *start, size_t length) {
    int install_error = install();
    if (install_error != 0) {
        errno = install_error;
        return -1;
    }
    uintptr_t first = (uintptr_t)start;
    if (length == 0 || first > UINTPTR_MAX - length) {
        errno = EINVAL;
        return -1;
    }
    for (int index = 0; index < CMAPPINGGUARD_CAPACITY; index++) {
        struct guarded *slot = &slots[index];
        int expected = slot_free;
        if (!atomic_compare_exchange_strong(&slot->state, &expected, slot_filling)) continue;
        atomic_store_explicit(&slot->start, first, memory_order_relaxed);
        atomic_store_explicit(&slot->end, first + length, memory_order_relaxed);
        atomic_store_explicit(&slot->damaged, false, memory_order_relaxed);
        atomic_store_explicit(&slot->state, slot_guarding, memory_order_release);
        return index;
    }
    errno = EMFILE;
    return -1;
}

void CMappingGuard_unregister(int slot) {
    if (slot < 0 || slot >= CMAPPINGGUARD_CAPACITY) return;
    atomic_store_explicit(&slots[slot].state, slot_free, memory_order_release);
}

bool CMappingGuard_damaged(int slot) {
    if (slot < 0 || slot >= CMAPPINGGUARD_CAPACITY) return false;
    // The caller's reads of the mapping come before this load, on every architecture: a read that
    // saw another thread's zero page also sees the mark made before that page was mapped.
    atomic_thread_fence(memory_order_seq_cst);
    return atomic_load_explicit(&slots[slot].damaged, memory_order_seq_cst);
}
