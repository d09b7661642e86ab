import GatewayPayloads

/// What the engine asks of a provider: one operation.
public enum ProviderCall: Sendable {
    case authorize(AuthorizeRequest)
    case proceed(ContinueRequest)
    case verify(VerifyRequest)
    case capture(AmountRequest)
    case refund(AmountRequest)
    case void(VoidRequest)

    public var operation: PaymentOperation {
        switch self {
        case .authorize: .authorize
        case .proceed: .continue
        case .verify: .verify
        case .capture: .capture
        case .refund: .refund
        case .void: .void
        }
    }
}

/// How a provider call ended, in the only terms that matter for money.
public enum ProviderReply: Sendable, Equatable {
    /// The provider answered.
    case answered(AdapterResult)
    /// Nothing reached the provider (refused before sending, an unsupported
    /// operation, the adapter or its provider unreachable): provably not
    /// charged, and another provider may be tried.
    case notSent(String)
    /// The adapter refused the request itself as invalid (a malformed
    /// instrument, a field its provider requires): nothing was sent, and the
    /// request has to change. The merchant's fault, not the provider's: it
    /// neither counts against the provider's circuit nor moves to another.
    case invalidRequest(String)
    /// It may have reached the provider, but no answer came (timeout, dropped
    /// connection, adapter crash or a result that cannot be read). Only a
    /// verify can tell; never retried elsewhere.
    case unknown(String)
}

/// One provider, as the engine sees it. The host implements this over a
/// loaded adapter (the libffi bridge); tests implement it in Swift.
public protocol PaymentProvider: Sendable {
    var id: String { get }
    func perform(_ call: ProviderCall) async -> ProviderReply
    /// Hands a notification to the provider's `webhook` operation; nil when
    /// the call itself failed (treated as unverified).
    func webhook(_ request: WebhookRequest) async -> WebhookResult?
    /// What the session's payer can use (ABI 1.1 `instruments`), answered
    /// within `timeout` (and abandoned when the task is cancelled); nil when
    /// it has nothing to offer, failed or took too long. Moves no money.
    func instruments(_ request: InstrumentsRequest, timeout: Duration) async -> InstrumentsResult?
}

extension PaymentProvider {
    public func instruments(_ request: InstrumentsRequest, timeout: Duration) async -> InstrumentsResult? { nil }
}

/// The providers the engine may route to right now: their routing profiles
/// and a way to reach each. The host swaps what is behind it when manifests
/// change; the engine reads it on every call.
public protocol ProviderDirectory: Sendable {
    func profiles() -> [ProviderProfile]
    /// The provider `id`, enabled or not (an in-flight or pending attempt on a
    /// provider that was since disabled is still finished and reconciled).
    func provider(_ id: String) -> (any PaymentProvider)?
}

/// A fixed directory, for embedders and tests that do not reload.
public struct StaticProviderDirectory: ProviderDirectory {
    public var entries: [(profile: ProviderProfile, provider: any PaymentProvider)]

    public init(_ entries: [(profile: ProviderProfile, provider: any PaymentProvider)]) {
        self.entries = entries
    }

    public func profiles() -> [ProviderProfile] { entries.map(\.profile) }
    public func provider(_ id: String) -> (any PaymentProvider)? { entries.first { $0.profile.id == id }?.provider }
}
