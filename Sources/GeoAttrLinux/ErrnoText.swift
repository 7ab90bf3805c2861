#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An errno as the C library words it, for messages.
package enum ErrnoText {
    package static func describe(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
