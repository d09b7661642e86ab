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
    public static func setIsolation(_ url: URL, to isolation: String, extraMembers: String = "") throws {
        try edit(url, [(#""isolation": "(in-)?process""#, "\"isolation\": \"\(isolation)\"" + extraMembers)])
    }
}
