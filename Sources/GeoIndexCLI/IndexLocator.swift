#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where commands look for the index when no `--index` is given, in this order:
/// the explicit path, `$GEOATTRD_INDEX`, the index the repo's set-up built
/// (`cache/geodata/world.gidx` under the current directory), then `/usr/share/geoattrd/world.gidx`.
public enum IndexLocator {
    public static let environmentVariable = "GEOATTRD_INDEX"
    public static let setupIndex = "cache/geodata/world.gidx"
    public static let installedIndex = "/usr/share/geoattrd/world.gidx"

    public static func candidates(explicit: String?) -> [String] {
        var paths: [String] = []
        if let explicit { return [explicit] }
        if let value = getenv(environmentVariable), let text = String(validatingCString: value), !text.isEmpty { paths.append(text) }
        paths.append(setupIndex)
        paths.append(installedIndex)
        return paths
    }

    /// The first candidate that exists (or the explicit path, so the open error names it).
    public static func locate(explicit: String?) -> String {
        let paths = candidates(explicit: explicit)
        return paths.first { access($0, R_OK) == 0 } ?? paths[0]
    }
}
