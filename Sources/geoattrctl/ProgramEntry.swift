import ArgumentParser
import Dispatch
import ProgramArguments

/// geoattrctl's entry point. The commands that need neither the daemon nor gpsd (`lookup`,
/// `index`), and whatever ends at parsing (help, the version, a usage error), run here on the main
/// thread, without Swift concurrency: the Dispatch worker pool that concurrency starts sizes itself
/// by reading /proc/TID/stat, and stops the process where /proc is not mounted, as in an image
/// being built in a chroot. The other commands run as a task while the main thread waits.
@main
enum ProgramEntry {
    static func main() {
        // As glibc passed them, not as Swift finds them through /proc (ProgramArguments).
        let arguments = ProgramArguments.orExit(tool: "geoattrctl")
        var command: any ParsableCommand
        do {
            command = try GeoAttrCtl.parseAsRoot(arguments)
        } catch {
            GeoAttrCtl.exit(withError: error)
        }
        guard command is any AsyncParsableCommand else {
            do {
                try command.run()
            } catch {
                GeoAttrCtl.exit(withError: error)
            }
            return
        }
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            await GeoAttrCtl.main(arguments)
            finished.signal()
        }
        finished.wait()
    }
}
