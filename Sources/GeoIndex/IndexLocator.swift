/// Where the index is installed, and the variable that names another one to geoattrctl.
///
/// The daemon reads the index it is configured with, else the installed one, and nothing else: a
/// service must not depend on its working directory. No path here depends on the working
/// directory: geoattrctl's search, which also looks where a development set-up builds the index,
/// is geoattrctl's own.
public enum IndexLocator {
    /// Where the geodata package installs the world index.
    public static let installedIndex = "/usr/share/geoattrd/world.gidx"
    /// geoattrctl's variable for the index.
    public static let environmentVariable = "GEOATTRD_INDEX"
}
