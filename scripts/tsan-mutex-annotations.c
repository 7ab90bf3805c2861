/* Lets ThreadSanitizer see Synchronization.Mutex hand a contended lock over (Linux, Swift 6.x).
 *
 * Mutex's fast paths (one compare-exchange to lock, one to unlock) are inlined into our code and
 * instrumented, so TSan sees their acquire and release. Under contention both ends go through
 * _MutexHandle._lockSlow / _unlockSlow in libswiftSynchronization.so: a spin on the lock word and
 * FUTEX_LOCK_PI / FUTEX_UNLOCK_PI, none of it instrumented. The thread that gets the lock that
 * way has no happens-before TSan can see with the one that released it, and every access to the
 * protected value is then reported as a race ("Swift access race" on a global Mutex, "data race"
 * on one in an object) although the lock holds. A short program, four threads taking one Mutex,
 * reproduces it; with this library preloaded it is silent, and an unlocked access beside the
 * Mutex is still reported. (Same cause as swiftlang/swift#66877, which taught the runtime's own
 * futex lock to annotate for TSan.)
 *
 * So this library, preloaded by scripts/sanitize.sh for ThreadSanitizer runs only, interposes
 * the two slow paths: it calls the real one and tells TSan what the futex did, release before
 * the unlock and acquire after the lock, on the lock word, the address the inlined fast paths'
 * atomics already synchronize on. It suppresses nothing. The symbols are private to the
 * toolchain's Synchronization module: if a toolchain renames them, nothing is interposed (and
 * such reports come back); `nm -D libswiftSynchronization.so | grep Slow` shows the current
 * names. Self (the lock word's address) arrives in the Swift self register: swift_context.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

/* Exported by TSan-instrumented executables; weak, so that an uninstrumented Swift process
 * that inherits the preload (swift-test itself) still loads it and just calls through. */
extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef void LockSlow(uint32_t selfID, void *handle __attribute__((swift_context))) __attribute__((swiftcall));
typedef void UnlockSlow(void *handle __attribute__((swift_context))) __attribute__((swiftcall));

static LockSlow *realLockSlow;
static UnlockSlow *realUnlockSlow;

__attribute__((constructor)) static void findTheRealOnes(void) {
    realLockSlow = (LockSlow *)dlsym(RTLD_NEXT, LOCK_SLOW);
    realUnlockSlow = (UnlockSlow *)dlsym(RTLD_NEXT, UNLOCK_SLOW);
}

__attribute__((swiftcall)) void lockSlow(uint32_t selfID, void *handle __attribute__((swift_context))) __asm__(LOCK_SLOW);
__attribute__((swiftcall)) void lockSlow(uint32_t selfID, void *handle __attribute__((swift_context))) {
    realLockSlow(selfID, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

__attribute__((swiftcall)) void unlockSlow(void *handle __attribute__((swift_context))) __asm__(UNLOCK_SLOW);
__attribute__((swiftcall)) void unlockSlow(void *handle __attribute__((swift_context))) {
    if (__tsan_release) __tsan_release(handle);
    realUnlockSlow(handle);
}
