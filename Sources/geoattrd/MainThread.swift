import ArgumentParser
import Dispatch
import ProgramArguments

/// The process's entry point. Swift's own entry for an async `main` hands the main thread to
/// `dispatch_main`, which ends it with `pthread_exit`; glibc then unwinds the thread's stack,
/// reading the binary's unwind tables, and the pages it reads (0.6 MB of them) stay mapped for
/// the life of the daemon. Instead, the main thread waits here while the command runs as a task
/// of its own. Nothing in the daemon runs on the main actor or the main queue.
@main
enum MainThread {
    static func main() {
        // Read before anything else runs: without them the daemon would start with its defaults.
        let arguments = ProgramArguments.orExit(tool: "geoattrd")
        // What ends at parsing (--help, --version, a usage error) ends here, on the main thread,
        // without Swift concurrency, whose Dispatch worker pool reads /proc (absent in an image
        // being built in a chroot) and stops the process without it.
        do {
            _ = try GeoAttrd.parseAsRoot(arguments)
        } catch {
            GeoAttrd.exit(withError: error)
        }
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            await GeoAttrd.main(arguments)
            finished.signal()
        }
        finished.wait()
    }
}
