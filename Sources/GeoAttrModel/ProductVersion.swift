/// geoattrd's release, as `--version` prints it and the packages are numbered
/// (scripts/make-deb.sh reads it from here).
public enum ProductVersion {
    public static let number = "0.5.0"
}
