import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's working directory, against which a path given on the command line is taken,
/// as every Unix tool takes it. (The configuration file and the environment keep their own rule:
/// absolute paths only, since neither says where it is read from.)
package enum WorkingDirectory {
    /// `path` made absolute against the working directory; as it is when it is absolute already,
    /// or when the working directory cannot be read (the configuration then refuses it, naming
    /// its key).
    package static func resolve(_ path: String) -> String {
        guard !path.isEmpty, !path.hasPrefix("/"), let directory = current() else { return path }
        // "." components go ("./run/g.sock" is "run/g.sock"); ".." stays, since only the
        // file system knows where it leads through a symbolic link.
        var relative = FilePath(path)
        relative.components.removeAll { $0.kind == .currentDirectory }
        return FilePath(directory).pushing(relative).string
    }

    static func current() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
