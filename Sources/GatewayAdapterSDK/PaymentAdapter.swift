@_exported import GatewayPayloads

/// What a Swift adapter implements. The SDK turns it into the C ABI: pointers,
/// JSON framing, exactly-once completion and error capture are its business.
///
/// ```swift
/// final class MyAdapter: PaymentAdapter {
///     static let id = "my-psp"
///     static let version = "1.0.0"
///     init(host: AdapterHost, configuration: AdapterConfiguration) throws { ... }
///     var description: AdapterDescription { ... }
///     func handle(_ call: AdapterCall) async throws -> AdapterReply { ... }
/// }
///
/// @_cdecl("gw_adapter_entry")
/// public func entry(_ n: UnsafeMutableRawPointer?) -> Int32 { AdapterExport.negotiate(n, MyAdapter.self) }
/// ```
public protocol PaymentAdapter: AnyObject, Sendable {
    /// Must equal the manifest's `id`.
    static var id: String { get }
    /// Must equal the manifest's `version`.
    static var version: String { get }

    /// Creates an instance. Throw ``AdapterError/invalidConfiguration(_:)`` with a
    /// message for the operator when the configuration is unusable.
    init(host: AdapterHost, configuration: AdapterConfiguration) throws

    /// What this instance implements; the host refuses a manifest claiming more.
    var description: AdapterDescription { get }

    /// Performs one call. Runs in its own task; cancelled when the host gives up
    /// on the call. Throwing maps to a non-OK completion (see ``AdapterError``).
    func handle(_ call: AdapterCall) async throws -> AdapterReply

    /// Optionally answers at once, on the invoking thread, when no I/O is needed
    /// (validation failures, in-memory state). Return nil to go through
    /// ``handle(_:)``. The default returns nil.
    func handleImmediately(_ call: AdapterCall) throws -> AdapterReply?

    /// ABI 1.1: what the session's payer can use (docs/payloads.md §5.8).
    /// Called only when ``description`` lists ``PaymentOperation/instruments``;
    /// runs in its own task, cancelled when the host stops waiting. The
    /// default offers nothing.
    func instruments(_ request: InstrumentsRequest) async throws -> InstrumentsResult
}

extension PaymentAdapter {
    public func handleImmediately(_ call: AdapterCall) throws -> AdapterReply? { nil }
    public func instruments(_ request: InstrumentsRequest) async throws -> InstrumentsResult { InstrumentsResult() }
}

/// One operation with its decoded request.
public enum AdapterCall: Sendable {
    case authorize(AuthorizeRequest)
    case `continue`(ContinueRequest)
    case verify(VerifyRequest)
    case capture(AmountRequest)
    case refund(AmountRequest)
    case void(VoidRequest)
    case webhook(WebhookRequest)

    public var operation: PaymentOperation {
        switch self {
        case .authorize: .authorize
        case .continue: .continue
        case .verify: .verify
        case .capture: .capture
        case .refund: .refund
        case .void: .void
        case .webhook: .webhook
        }
    }
}

/// The answer to a call.
public enum AdapterReply: Sendable {
    /// The result of a payment operation.
    case payment(AdapterResult)
    /// The result of `webhook`.
    case webhook(WebhookResult)
}

/// Errors an adapter throws, and the `gw_status` each completes with. Any other
/// error completes with `GW_E_INTERNAL`, or with `GW_E_OUTCOME_UNKNOWN` when
/// the call had already sent an HTTP request through the host.
public enum AdapterError: Error, Sendable {
    /// The request lacks something the provider needs. `GW_E_INVALID_REQUEST`.
    case invalidRequest(String)
    /// `GW_E_UNSUPPORTED`.
    case unsupported(String)
    /// The configuration given to `init` is unusable (refuses `create`).
    case invalidConfiguration(String)
    /// The provider may have acted but the answer was lost. `GW_E_OUTCOME_UNKNOWN`.
    case outcomeUnknown(String)
    /// A failure before anything was sent. `GW_E_INTERNAL`.
    case `internal`(String)
}

/// The manifest's `config` object, as JSON.
public struct AdapterConfiguration: Sendable {
    public let json: [String: JSONValue]
    public init(json: [String: JSONValue]) { self.json = json }

    public subscript(key: String) -> JSONValue? { json[key] }

    /// An integer member, or `defaultValue` when absent.
    public func integer(_ key: String, default defaultValue: Int) throws -> Int {
        guard let value = json[key] else { return defaultValue }
        guard case .number(let n) = value, n.rounded() == n else {
            throw AdapterError.invalidConfiguration("config.\(key) must be an integer")
        }
        return Int(n)
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
}
