/// One thing wrong with a manifest, at a JSON path such as `$.amount.SAR.min`.
public struct ManifestProblem: Sendable, Hashable, Codable, CustomStringConvertible {
    public var path: String
    public var message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}
