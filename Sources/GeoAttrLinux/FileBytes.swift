#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

/// Whole-file reads with plain system calls, safe in directories that someone else can write to:
/// no path is followed through a symbolic link and nothing but a regular file is read.
package enum FileBytes {
    package enum ReadError: Error, CustomStringConvertible {
        case tooLarge
        /// A symbolic link, FIFO, socket or device where a regular file belongs.
        case notRegular(kind: String)
        case system(String)

        package var description: String {
            switch self {
            case .tooLarge: "too large"
            case .notRegular(let kind): "refused: \(kind), not a regular file"
            case .system(let reason): reason
            }
        }
    }

    /// The file's bytes, `nil` if it does not exist.
    ///
    /// Opened with `O_NOFOLLOW | O_NONBLOCK` and checked with `fstat` before a byte is read: a
    /// symbolic link is refused rather than followed, and a FIFO planted at the path cannot
    /// block the caller in `open` or `read`.
    package static func read(_ path: String, limit: Int) throws(ReadError) -> [UInt8]? {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .noFollow, .nonBlocking])
        } catch let error as Errno where error == .noSuchFileOrDirectory {
            return nil
        } catch let error as Errno where error == .tooManySymbolicLinkLevels {
            throw .notRegular(kind: "a symbolic link")
        } catch {
            throw .system("\(error)")
        }
        defer { try? file.close() }
        let status: Stat
        do {
            status = try file.stat()
        } catch {
            throw .system("\(error)")
        }
        guard status.type == .regular else { throw .notRegular(kind: FileKind.name(of: UInt32(status.mode.rawValue))) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try file.read(into: $0) }
            } catch {
                throw .system("\(error)")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { throw .tooLarge }
        }
    }
}
