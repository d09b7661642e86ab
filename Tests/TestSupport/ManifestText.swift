import Foundation

/// Edits a manifest file's text in place, keeping every other byte (tests
/// that edit the same file later find the layout they expect).
public enum ManifestText {
    public struct NoMatch: Error, CustomStringConvertible {
        public var file: String
        public var pattern: String
        public var description: String { "\(file): nothing matches \(pattern)" }
    }

    /// Replaces every match of each regular expression; each must match.
    public static func edit(_ url: URL, _ edits: [(pattern: String, replacement: String)]) throws {
        var text = try String(contentsOf: url, encoding: .utf8)
        for (pattern, replacement) in edits {
            guard text.range(of: pattern, options: .regularExpression) != nil else { throw NoMatch(file: url.path, pattern: pattern) }
            text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        try Data(text.utf8).write(to: url)
    }

    /// Sets `"isolation"` (whatever it was), followed by `extraMembers`
    /// (such as `, "limits": {...}`).
    /// Moving a manifest in process drops its `sandbox_exceptions` (which
    /// apply with process isolation only, and which the copy of the shipped
    /// manifests under `GATEWAY_TEST_ISOLATION=process` carries).
    public static func setIsolation(_ url: URL, to isolation: String, extraMembers: String = "") throws {
        var edits = [(pattern: #""isolation": "(in-)?process""#, replacement: "\"isolation\": \"\(isolation)\"" + extraMembers)]
        let exceptions = #",\s*"sandbox_exceptions": \[[^\]]*\]"#
        if isolation != "process", (try String(contentsOf: url, encoding: .utf8)).range(of: exceptions, options: .regularExpression) != nil {
            edits.append((pattern: exceptions, replacement: ""))
        }
        try edit(url, edits)
    }
}
