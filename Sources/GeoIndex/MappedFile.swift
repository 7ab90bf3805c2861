#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CMappingGuard

/// A whole file mapped read-only; unmapped when the last reference goes away.
///
/// The mapping is guarded (CMappingGuard): when the file shrinks under it (a copy in place, a
/// truncate), a read past the new end sees zeros instead of killing the process with SIGBUS.
/// `isIntact` turns false once that has happened, or once the file's size or modification time
/// differ from the open's (a copy in place that finished between two reads); callers ask it after
/// their reads and discard what they read.
final class MappedFile: @unchecked Sendable {
    // Immutable after init; the mapping is PROT_READ so concurrent readers are safe.
    let bytes: ByteView
    private let mappedLength: Int
    private let guardSlot: Int32
    /// Kept open to compare the file with what was mapped (fstat).
    private let descriptor: Int32
    private let modified: timespec

    init(path: String) throws(GeoIndexError) {
        // Not through a symbolic link, and never blocking on a FIFO planted at the path: only a
        // regular file is mapped.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ELOOP { throw .notRegularFile(path: path, kind: "a symbolic link") }
            throw .cannotOpen(path: path, errno: errno)
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let code = errno
            close(fd)
            throw .cannotOpen(path: path, errno: code)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .notRegularFile(path: path, kind: "not a regular file")
        }
        let size = Int(status.st_size)
        guard size >= IndexFormat.headerSize else {
            close(fd)
            if size >= IndexFormat.magic.count || size == 0 {
                throw .truncated(path: path, expectedSize: UInt64(IndexFormat.headerSize), actualSize: UInt64(size))
            }
            throw .notAnIndex(path: path)
        }
        guard let address = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), address != MAP_FAILED else {
            let code = errno
            close(fd)
            throw .cannotOpen(path: path, errno: code)
        }
        // Lookups touch a few scattered pages; without this, each fault reads ahead and maps
        // neighbouring pages too, and most of the index ends up resident on a small device.
        _ = madvise(address, size, Int32(MADV_RANDOM))
        let slot = CMappingGuard_register(address, size)
        guard slot >= 0 else {
            let code = errno
            munmap(address, size)
            close(fd)
            throw .cannotGuard(path: path, errno: code)
        }
        guardSlot = slot
        descriptor = fd
        modified = status.st_mtim
        mappedLength = size
        bytes = ByteView(base: UnsafeRawPointer(address), count: size)
    }

    /// Unmaps every page this process has touched; the file stays mapped, and the next read maps
    /// its page again from the page cache (or the disk, when the kernel has reclaimed it).
    func releaseResidentPages() {
        _ = madvise(UnsafeMutableRawPointer(mutating: bytes.base), mappedLength, Int32(MADV_DONTNEED))
    }

    /// False once a read has found the file shorter than when it was mapped, or the file's size or
    /// modification time has changed since (one fstat).
    var isIntact: Bool {
        guard !CMappingGuard_damaged(guardSlot) else { return false }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        return Int(status.st_size) == mappedLength && status.st_mtim.tv_sec == modified.tv_sec
            && status.st_mtim.tv_nsec == modified.tv_nsec
    }

    deinit {
        CMappingGuard_unregister(guardSlot)
        munmap(UnsafeMutableRawPointer(mutating: bytes.base), mappedLength)
        close(descriptor)
    }
}
