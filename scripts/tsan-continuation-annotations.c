/* Lets ThreadSanitizer see a continuation resumed before its task suspended (Linux, Swift 6.x).
 *
 * A task awaiting a continuation (withCheckedContinuation, and everything built on it: NIO's
 * async sequences, EventLoopFuture.get()) calls swift_continuation_await. If the resuming thread
 * got there first, the runtime sees the status Resumed (on entry, or when its compare-exchange
 * to Awaited fails) and goes on at once, in the same job, by calling the context's ResumeParent.
 * The resumer told TSan `release(task)` before it set Resumed; the slow path (the task enqueued
 * and run again) has the matching acquire, the fast paths have none. So everything the resuming
 * thread wrote before resuming (the element an event loop hands to an async iterator, an
 * HTTPResponseHead's storage) is reported as racing with the task's first read of it, and the
 * resumer's own writes into the task's context as racing with its next frames
 * (swiftlang/swift#57803; toolchain 6.3.1's runtime still has both fast paths unannotated).
 *
 * So this interposes swift_continuation_await, for ThreadSanitizer runs only (scripts/sanitize.sh
 * preloads it): unless the continuation forces an executor switch, it swaps the context's
 * ResumeParent for acquireThenResume, which only the fast paths call; the slow path resumes
 * through the task's ResumeTask, copied from ResumeParent by swift_continuation_init before the
 * await. That function tells TSan `acquire(task)`, the address the runtime released, puts the original
 * ResumeParent back and goes on to it. It suppresses nothing: a write after the resume is still
 * reported (scripts/tsan-handoff-check.swift shows both; scripts/sanitize.sh runs it first).
 * A forced switch is left unannotated: the runtime hands ResumeParent to swift_task_switch,
 * which may run it later on another thread, where the one awaited last is another's. Its
 * enqueue is annotated; a switch it can make at once is not (no such continuation has been
 * reported).
 *
 * The layout is the runtime's ContinuationAsyncContext: Parent, ResumeParent, Flags (bit 1:
 * executor switch forced). The runtime's swift_continuation_await takes the
 * context as its first ordinary argument and calls ResumeParent with it in the async-context
 * register. If a toolchain changes either, that check fails before any test runs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

extern void __tsan_acquire(void *address) __attribute__((weak));

typedef __attribute__((swiftasynccall)) void ResumeFunction(void *context __attribute__((swift_async_context)));
typedef __attribute__((swiftasynccall)) void AwaitFunction(void *context);

struct ContinuationAsyncContext {
    void *parent;
    ResumeFunction *resumeParent;
    size_t flags;
};
enum { IsExecutorSwitchForced = 1u << 1 };

__attribute__((swiftcall)) extern void *swift_task_getCurrent(void);

static AwaitFunction *realAwait;

/* The fast paths call ResumeParent on the awaiting thread before swift_continuation_await
 * returns, so the one awaited last on this thread is the one to go back to. */
static __thread ResumeFunction *awaitedResumeParent;

__attribute__((constructor)) static void findTheRealAwait(void) {
    realAwait = (AwaitFunction *)dlsym(RTLD_NEXT, "swift_continuation_await");
}

__attribute__((swiftasynccall)) static void acquireThenResume(void *context __attribute__((swift_async_context))) {
    if (__tsan_acquire) __tsan_acquire(swift_task_getCurrent());
    ResumeFunction *resumeParent = awaitedResumeParent;
    ((struct ContinuationAsyncContext *)context)->resumeParent = resumeParent;
    __attribute__((musttail)) return resumeParent(context);
}

__attribute__((swiftasynccall)) void swift_continuation_await(void *context) {
    struct ContinuationAsyncContext *continuation = context;
    if (__tsan_acquire && !(continuation->flags & IsExecutorSwitchForced)) {
        awaitedResumeParent = continuation->resumeParent;
        continuation->resumeParent = acquireThenResume;
    }
    __attribute__((musttail)) return realAwait(context);
}
