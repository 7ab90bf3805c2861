import GeoIndex

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which index `lookup` and `index info` open without an explicit file.
///
/// Run by hand, geoattrctl also looks where a development set-up builds the index, relative to
/// the current directory; the daemon and the shipped libraries never do. On an installed system
/// that file is absent, and the order is `$GEOATTRD_INDEX`, then the installed index.
enum IndexSearch {
    /// What scripts/build-world-index.sh builds, relative to the repository.
    static let setupIndex = "cache/geodata/world.gidx"

    /// The candidates, in order: the explicit path alone, else `$GEOATTRD_INDEX`, the set-up's
    /// index under the current directory, the installed index.
    static func candidates(explicit: String?) -> [String] {
        if let explicit { return [explicit] }
        var paths: [String] = []
        if let value = getenv(IndexLocator.environmentVariable), let text = String(validatingCString: value), !text.isEmpty {
            paths.append(text)
        }
        paths.append(setupIndex)
        paths.append(IndexLocator.installedIndex)
        return paths
    }

    /// The first candidate that exists (or the first, so the open error names it).
    static func locate(explicit: String?) -> String {
        let paths = candidates(explicit: explicit)
        return paths.first { access($0, R_OK) == 0 } ?? paths[0]
    }
}
