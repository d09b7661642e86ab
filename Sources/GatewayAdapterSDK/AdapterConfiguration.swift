import Foundation

/// The manifest's `config` object, as JSON.
public struct AdapterConfiguration: Sendable {
    public let json: [String: JSONValue]
    public init(json: [String: JSONValue]) { self.json = json }

    public subscript(key: String) -> JSONValue? { json[key] }

    /// An integer member, or `defaultValue` when absent.
    public func integer(_ key: String, default defaultValue: Int) throws -> Int {
        guard let value = json[key] else { return defaultValue }
        guard let n = value.integerValue, let whole = Int(exactly: n) else {
            throw AdapterError.invalidConfiguration("config.\(key) must be an integer")
        }
        return whole
    }

    /// A boolean member, or `defaultValue` when absent.
    public func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        guard let value = json[key] else { return defaultValue }
        guard case .bool(let b) = value else {
            throw AdapterError.invalidConfiguration("config.\(key) must be true or false")
        }
        return b
    }

    /// A string member, or `defaultValue` when absent.
    public func string(_ key: String, default defaultValue: String) throws -> String {
        guard let value = json[key] else { return defaultValue }
        guard case .string(let s) = value else {
            throw AdapterError.invalidConfiguration("config.\(key) must be a string")
        }
        return s
    }

    /// The range every adapter's `request_timeout_ms` is held to.
    public static let requestTimeoutRange = 100...120_000

    /// `request_timeout_ms`: how long one request to the provider may take
    /// (10 000 when absent), from 100 to 120 000.
    public func requestTimeoutMilliseconds(default defaultValue: Int = 10_000) throws -> Int {
        let timeout = try integer("request_timeout_ms", default: defaultValue)
        guard Self.requestTimeoutRange.contains(timeout) else {
            throw AdapterError.invalidConfiguration("config.request_timeout_ms must be from \(Self.requestTimeoutRange.lowerBound) to \(Self.requestTimeoutRange.upperBound)")
        }
        return timeout
    }

    /// An http(s) base URL member (`base_url`), without a trailing `/`:
    /// required, with `example` in the message when it is missing or not
    /// an http(s) URL with a host.
    public func providerURL(_ key: String = "base_url", provider: String, example: String) throws -> String {
        let base = try string(key, default: "")
        guard !base.isEmpty else {
            throw AdapterError.invalidConfiguration("config.\(key) is required for \(provider) (\(example)) and is missing or empty")
        }
        guard let url = URL(string: base), let scheme = url.scheme, scheme == "https" || scheme == "http", url.host != nil else {
            throw AdapterError.invalidConfiguration("config.\(key) must be an http(s) URL such as \(example) (got \(base.prefix(80)))")
        }
        return base.hasSuffix("/") ? String(base.dropLast()) : base
    }
}
