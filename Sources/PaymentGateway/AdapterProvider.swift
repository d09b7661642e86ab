import PaymentFields
import CheckoutEngine
import GatewayPayloads
import PluginHost

/// A loaded adapter as the engine's ``PaymentProvider``: each operation goes
/// through the libffi bridge, and every way a call can end is reduced to
/// answered, not sent (provably not charged), or unknown.
struct AdapterProvider: PaymentProvider {
    let adapter: AdapterInstance
    var observer: AdapterCallObserver?
    /// The instance that now serves this provider, when a reload replaced
    /// this one: a call that reaches this instance after it closed (the
    /// engine picked the provider just before the upgrade) was refused
    /// before anything was sent, and goes to that one instead.
    var successor: (@Sendable () -> AdapterInstance?)?

    var id: String { adapter.manifest.id }

    func perform(_ call: ProviderCall) async -> ProviderReply {
        guard let observer else { return await send(call).reply }
        let started = ContinuousClock.now
        let (reply, served) = await send(call)
        let outcome = switch reply {
        case .answered(let result): result.status.rawValue
        case .notSent: "not_sent"
        case .invalidRequest: "invalid_request"
        case .unknown: "unknown"
        }
        observer(AdapterCall(provider: id, version: served.manifest.version, operation: call.operation.rawValue,
                             duration: ContinuousClock.now - started, outcome: outcome))
        return reply
    }

    /// The reply, and the instance that gave it.
    private func send(_ call: ProviderCall) async -> (reply: ProviderReply, served: AdapterInstance) {
        var adapter = self.adapter
        var hops = 0
        while true {
            do {
                return (try await send(call, to: adapter), adapter)
            } catch AdapterCallError.refused(.busy, _) where adapter.isClosed && hops < 3 {
                // Only to an instance of the same mode: test and live never mix.
                guard let next = successor?(), next !== adapter, next.manifest.mode == adapter.manifest.mode else {
                    return (ProviderReply(failed: AdapterCallError.refused(.busy, message: "\(id) is shutting down"), operation: call.operation), adapter)
                }
                adapter = next
                hops += 1
            } catch {
                return (ProviderReply(failed: error, operation: call.operation), adapter)
            }
        }
    }

    private func send(_ call: ProviderCall, to adapter: AdapterInstance) async throws(AdapterCallError) -> ProviderReply {
        do {
            let result: AdapterResult = switch call {
            case .authorize(let request): try await adapter.call(.authorize, request)
            case .proceed(let request): try await adapter.call(.continue, request)
            case .verify(let request): try await adapter.call(.verify, request)
            case .capture(let request): try await adapter.call(.capture, request)
            case .refund(let request): try await adapter.call(.refund, request)
            case .void(let request): try await adapter.call(.void, request)
            }
            return .answered(Self.masked(result))
        }
    }

    func webhook(_ request: WebhookRequest) async -> WebhookResult? {
        guard var result = try? await adapter.call(.webhook, request, as: WebhookResult.self) else { return nil }
        result.problem = result.problem.map(Self.masked)
        return result
    }

    /// ABI 1.1: the payer's instruments, when the adapter describes the
    /// operation (its negotiated minor allows it). Any failure, a timeout or
    /// an answer that breaks ``InstrumentsValidation``'s rules offers
    /// nothing; an answer holding a card number is refused whole.
    func instruments(_ request: InstrumentsRequest, timeout: Duration) async -> InstrumentsResult? {
        guard adapter.adapterDescription.operations.contains(.instruments) else { return nil }
        let started = ContinuousClock.now
        let outcome = await adapter.invoke(.instruments, payload: request.jsonBytes(), timeout: timeout)
        var result: InstrumentsResult?
        let label: String
        switch outcome {
        case .completed(let status, let document) where status == 0:
            if let parsed = try? InstrumentsResult(jsonData: document) {
                let checked = InstrumentsValidation.validate(parsed, methods: request.methods, documentBytes: document.count)
                result = checked.rejected ? nil : checked.result
                label = checked.rejected ? "rejected" : "answered"
            } else {
                label = "malformed"
            }
        case .completed(let status, _): label = "failed_\(status)"
        case .refused: label = "refused"
        case .timedOut: label = "timed_out"
        case .cancelled: label = "cancelled"
        case .lost: label = "lost"
        }
        observer?(AdapterCall(provider: id, version: adapter.manifest.version, operation: PaymentOperation.instruments.rawValue,
                              duration: ContinuousClock.now - started, outcome: label))
        return result
    }

    /// Adapter text is stored in attempts and events: a card number an
    /// adapter echoes (in a message or a provider status) is masked first.
    static func masked(_ result: AdapterResult) -> AdapterResult {
        var result = result
        result.problem = result.problem.map(masked)
        result.providerStatus = result.providerStatus.map(Redaction.maskingCardNumbers(in:))
        return result
    }

    static func masked(_ problem: AdapterProblem) -> AdapterProblem {
        var problem = problem
        problem.message = Redaction.maskingCardNumbers(in: problem.message)
        problem.providerCode = problem.providerCode.map(Redaction.maskingCardNumbers(in:))
        return problem
    }
}

/// One adapter call as metrics see it.
public struct AdapterCall: Sendable {
    public var provider: String
    /// The version of the adapter instance that answered (two during an upgrade).
    public var version: String
    public var operation: String
    public var duration: Duration
    /// The result's status (`succeeded`, `pending`, ...), or `not_sent`,
    /// `invalid_request`, `unknown` when no result came.
    public var outcome: String
}

public typealias AdapterCallObserver = @Sendable (AdapterCall) -> Void

extension ProviderProfile {
    /// What routing needs of a manifest. Only routing decides eligibility: the
    /// manifest's claims become this profile, and nothing else reads them.
    public init(manifest: Manifest) {
        var limits: [String: ClosedRange<Int64>] = [:]
        for (currency, limit) in manifest.amountLimits {
            limits[currency] = (limit.min ?? 1)...(limit.max ?? Int64.max)
        }
        self.init(
            id: manifest.id, mode: manifest.mode, enabled: manifest.enabled, priority: manifest.priority, methods: Set(manifest.methods),
            currencies: Set(manifest.currencies), countries: Set(manifest.countries), limits: limits,
            supportsManualCapture: manifest.operations.contains(.capture),
            callTimeout: .milliseconds(manifest.timeoutMilliseconds), supportsInstruments: manifest.operations.contains(.instruments),
            fields: manifest.fields, methodCurrencies: manifest.methodCurrencies.mapValues(Set.init))
        absenceWindow = Double(manifest.absenceWindowSeconds)
    }
}
