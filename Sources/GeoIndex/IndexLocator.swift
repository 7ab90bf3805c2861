#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the index is.
///
/// The daemon reads the index it is configured with, else the installed one, and nothing else: a
/// service must not depend on its working directory. The command-line tools, run by hand, also
/// look where a development set-up builds it.
public enum IndexLocator {
    /// Where the geodata package installs the world index.
    public static let installedIndex = "/usr/share/geoattrd/world.gidx"
    /// geoattrctl's variable for the index.
    public static let environmentVariable = "GEOATTRD_INDEX"
    /// What scripts/build-world-index.sh builds, relative to the repository.
    public static let setupIndex = "cache/geodata/world.gidx"

    /// The daemon's index: the configured path, else the installed one.
    public static func daemonIndex(configured: String?) -> String {
        guard let configured, !configured.isEmpty else { return installedIndex }
        return configured
    }

    /// geoattrctl's candidates, in order: the explicit path alone, else `$GEOATTRD_INDEX`, the
    /// set-up's index under the current directory, the installed index.
    public static func candidates(explicit: String?) -> [String] {
        if let explicit { return [explicit] }
        var paths: [String] = []
        if let value = getenv(environmentVariable), let text = String(validatingCString: value), !text.isEmpty { paths.append(text) }
        paths.append(setupIndex)
        paths.append(installedIndex)
        return paths
    }

    /// The first of geoattrctl's candidates that exists (or the first, so the open error names it).
    public static func locate(explicit: String?) -> String {
        let paths = candidates(explicit: explicit)
        return paths.first { access($0, R_OK) == 0 } ?? paths[0]
    }
}
