@_exported import GatewayPayloads

/// What a Swift adapter implements. The SDK turns it into the C ABI: pointers,
/// JSON framing, exactly-once completion and error capture are its business.
///
/// An adapter implements the operations its ``description`` lists, one
/// method each (``authorize(_:)``, ``proceed(_:)``, ``verify(_:)``,
/// ``capture(_:)``, ``refund(_:)``, ``void(_:)``, ``webhook(_:)``); the
/// others answer `GW_E_UNSUPPORTED` (the SDK refuses an operation the
/// description does not list before any adapter code runs). ``handle(_:)``
/// dispatches to them; an adapter overrides it only to act on every call
/// (the mock's injected delays). Its provider's API is a
/// ``ProviderHTTPClient``: base URL, authorization from a named secret
/// (wiped after each request), JSON or form bodies, `request_timeout_ms`.
///
/// ```swift
/// final class MyAdapter: PaymentAdapter {
///     static let id = "my-psp"
///     static let version = "1.0.0"
///     let client: ProviderHTTPClient
///     init(host: AdapterHost, configuration: AdapterConfiguration) throws {
///         client = try ProviderHTTPClient(host: host, provider: "My PSP", configuration: configuration,
///                                         example: "https://api.my-psp.example", authorization: .bearer(secret: "api_key"))
///     }
///     var description: AdapterDescription { ... }
///     func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult { ... }
///     func verify(_ request: VerifyRequest) async throws -> AdapterResult { ... }
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
    /// The default calls the operation's method.
    func handle(_ call: AdapterCall) async throws -> AdapterReply

    /// Optionally answers at once, on the invoking thread, when no I/O is needed
    /// (validation failures, in-memory state). Return nil to go through
    /// ``handle(_:)``. The default returns nil.
    func handleImmediately(_ call: AdapterCall) throws -> AdapterReply?

    /// `authorize`: start a payment (docs/payloads.md §5.1).
    func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult
    /// `continue`: what the payer did about a pending payment (§5.2).
    func proceed(_ request: ContinueRequest) async throws -> AdapterResult
    /// `verify`: where a payment stands at the provider (§5.3).
    func verify(_ request: VerifyRequest) async throws -> AdapterResult
    /// `capture` (§5.4).
    func capture(_ request: AmountRequest) async throws -> AdapterResult
    /// `refund` (§5.5).
    func refund(_ request: AmountRequest) async throws -> AdapterResult
    /// `void` (§5.6).
    func void(_ request: VoidRequest) async throws -> AdapterResult
    /// `webhook`: authenticate and read a provider's notification (§5.7).
    func webhook(_ request: WebhookRequest) async throws -> WebhookResult

    /// ABI 1.1: what the session's payer can use (docs/payloads.md §5.8).
    /// Called only when ``description`` lists ``PaymentOperation/instruments``;
    /// runs in its own task, cancelled when the host stops waiting. The
    /// default offers nothing.
    func instruments(_ request: InstrumentsRequest) async throws -> InstrumentsResult
}

extension PaymentAdapter {
    public func handle(_ call: AdapterCall) async throws -> AdapterReply {
        switch call {
        case .authorize(let request): .payment(try await authorize(request))
        case .continue(let request): .payment(try await proceed(request))
        case .verify(let request): .payment(try await verify(request))
        case .capture(let request): .payment(try await capture(request))
        case .refund(let request): .payment(try await refund(request))
        case .void(let request): .payment(try await void(request))
        case .webhook(let request): .webhook(try await webhook(request))
        }
    }

    public func handleImmediately(_ call: AdapterCall) throws -> AdapterReply? { nil }
    public func instruments(_ request: InstrumentsRequest) async throws -> InstrumentsResult { InstrumentsResult() }

    public func authorize(_ request: AuthorizeRequest) async throws -> AdapterResult { throw Self.unsupported(.authorize) }
    public func proceed(_ request: ContinueRequest) async throws -> AdapterResult { throw Self.unsupported(.continue) }
    public func verify(_ request: VerifyRequest) async throws -> AdapterResult { throw Self.unsupported(.verify) }
    public func capture(_ request: AmountRequest) async throws -> AdapterResult { throw Self.unsupported(.capture) }
    public func refund(_ request: AmountRequest) async throws -> AdapterResult { throw Self.unsupported(.refund) }
    public func void(_ request: VoidRequest) async throws -> AdapterResult { throw Self.unsupported(.void) }
    public func webhook(_ request: WebhookRequest) async throws -> WebhookResult { throw Self.unsupported(.webhook) }

    /// What an operation the adapter does not implement completes with
    /// (`GW_E_UNSUPPORTED`, which proves nothing was sent). `plugin check`
    /// fails an operation the description lists that answers this.
    static func unsupported(_ operation: PaymentOperation) -> AdapterError {
        .unsupported("\(id) does not implement \(operation.rawValue)")
    }
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
/// error (but ``SecretUnavailable``, `GW_E_NOT_FOUND`) completes with
/// `GW_E_INTERNAL`, or with `GW_E_OUTCOME_UNKNOWN` when the call had already
/// sent an HTTP request through the host.
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
    /// The provider answered that this request reuses an idempotency key
    /// with other content, and that it acted on nothing. `GW_E_INVALID_REQUEST`,
    /// even after a request left: the provider's answer proves this call
    /// changed nothing (the header's one exception). Throw it only on that
    /// documented answer; any other is ``outcomeUnknown(_:)``.
    case idempotencyConflict(String)
}

/// A secret the call needs has no value now (a rotated file left empty, an
/// unset variable): nothing was sent. `GW_E_NOT_FOUND`, the header's status
/// for a secret without a value (as `secret_get` and `create()` report it),
/// or `GW_E_OUTCOME_UNKNOWN` once an earlier request of the call may have
/// left. Not `GW_E_INTERNAL`: that says the adapter is broken, and
/// `plugin check` fails it; this is the operator's configuration.
/// (A type of its own, not an ``AdapterError`` case, so that an adapter's
/// exhaustive `switch` over ``AdapterError`` keeps compiling.)
public struct SecretUnavailable: Error, Sendable, CustomStringConvertible {
    /// The secrets named, as the manifest declares them.
    public var names: [String]
    public var message: String

    public init(names: [String], message: String) {
        self.names = names
        self.message = message
    }

    public var description: String { message }
}
