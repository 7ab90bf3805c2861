/// Where the packaged daemon keeps its files, as systemd/geoattrd.service, the tmpfiles entry and
/// the documents name them. The defaults of the daemon's keys and of the tools' options.
public enum ProductPaths {
    /// RuntimeDirectory=: the socket and the state file.
    public static let runtimeDirectory = "/run/geoattrd"
    public static let socket = runtimeDirectory + "/geoattrd.sock"
    /// Where a device supervisor writes `foreground` or `background`.
    public static let stateFile = runtimeDirectory + "/state"
    /// StateDirectory=: the cache and the reload records.
    public static let stateDirectory = "/var/lib/geoattrd"
    public static let configurationFile = "/etc/geoattrd/geoattrd.yaml"
}
