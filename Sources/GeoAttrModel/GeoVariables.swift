/// The `env` format: one `GEO_COUNTRY_ISO_CODE="US"` line per attribute, for a shell's `.` or
/// systemd's EnvironmentFile=.
public enum GeoVariables {
    /// Values double-quoted with `\`, `"`, `$` and backquote escaped, which bash, dash and
    /// systemd's EnvironmentFile= read back unchanged. Escaping goes scalar by scalar: a quote
    /// followed by a combining mark is still a quote to a shell. Control characters (U+0000 to
    /// U+001F and U+007F) cannot be carried through an environment and are removed. Unicode's
    /// noncharacters (U+FDD0 to U+FDEF, U+FFFE, U+FFFF and the last two of every plane) become
    /// U+FFFD: systemd takes them for invalid UTF-8 and refuses the whole file, every other
    /// variable in it with them.
    public static func text(_ attributes: [String: AttributeValue]) -> String {
        attributes.sorted { $0.key < $1.key }.map { key, value in
            let name = key.uppercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
            var quoted = String.UnicodeScalarView()
            quoted.append("\"")
            for scalar in value.description.unicodeScalars {
                if scalar.value < 0x20 || scalar.value == 0x7F { continue }
                if scalar.properties.isNoncharacterCodePoint {
                    quoted.append("\u{FFFD}")
                    continue
                }
                if scalar == "\\" || scalar == "\"" || scalar == "$" || scalar == "`" { quoted.append("\\") }
                quoted.append(scalar)
            }
            quoted.append("\"")
            return "\(name)=\(String(quoted))\n"
        }.joined()
    }
}
