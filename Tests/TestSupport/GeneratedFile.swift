import Foundation
import Testing

/// A file the tests generate (a document, a manual page) against its committed copy: with
/// GEOATTR_WRITE_DOCS=1 the generated text replaces the copy; otherwise a difference is an issue
/// naming its first line and the command that regenerates it.
public enum GeneratedFile {
    public static func compare(_ rendered: String, withFile path: String, regenerate: String) throws {
        if ProcessInfo.processInfo.environment["GEOATTR_WRITE_DOCS"] == "1" {
            try rendered.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let committed = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        guard committed != rendered else { return }
        let old = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let new = rendered.split(separator: "\n", omittingEmptySubsequences: false)
        let line = zip(old, new).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(old.count, new.count)
        Issue.record("""
            \(path) is out of date with what generates it (first difference at line \(line + 1)):
              committed: \(line < old.count ? String(old[line]) : "(end of file)")
              generated: \(line < new.count ? String(new[line]) : "(end of file)")
            Regenerate it: \(regenerate)
            """)
    }
}
