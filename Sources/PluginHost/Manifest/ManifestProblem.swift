import GatewayPayloads

/// One thing wrong with a manifest, at a JSON path such as `$.amount.SAR.min`.
public struct ManifestProblem: Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}

/// A runner's LOAD_FAILED carries the problems of ``LoadFailure/schemaViolation(_:)``.
extension ManifestProblem: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("path", path)
        w.member("message", message)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var path: String?, message: String?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "path": path = try p.string()
            case "message": message = try p.string()
            default: try p.skipValue()
            }
        }
        self.init(path: try required(path, "path", p), message: try required(message, "message", p))
    }
}
