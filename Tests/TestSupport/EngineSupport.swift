import CheckoutEngine
import Foundation
import GatewayPayloads
import SQLiteCheckoutStore
import Synchronization

/// The engine under test, shared by the engine's tests and the store's
/// (which drive each store through the real engine): scripted providers, a
/// clock moved by hand, an engine over an in-memory SQLite store.

/// A provider whose answers a test scripts, and which records every call.
public final class ScriptedProvider: PaymentProvider, Sendable {
    public let id: String
    private let script: @Sendable (ProviderCall) async -> ProviderReply
    private let log = Mutex<[ProviderCall]>([])
    private let webhookScript: @Sendable (WebhookRequest) -> WebhookResult?
    private let instrumentsScript: @Sendable (InstrumentsRequest) async -> InstrumentsResult?
    private let instrumentsLog = Mutex<[InstrumentsRequest]>([])

    public init(_ id: String, webhook: @escaping @Sendable (WebhookRequest) -> WebhookResult? = { _ in nil },
         instruments: @escaping @Sendable (InstrumentsRequest) async -> InstrumentsResult? = { _ in nil },
         _ script: @escaping @Sendable (ProviderCall) async -> ProviderReply) {
        self.id = id
        self.script = script
        self.webhookScript = webhook
        self.instrumentsScript = instruments
    }

    public func instruments(_ request: InstrumentsRequest, timeout: Duration) async -> InstrumentsResult? {
        instrumentsLog.withLock { $0.append(request) }
        return await instrumentsScript(request)
    }

    /// The `instruments` requests the provider was sent.
    public var instrumentsRequests: [InstrumentsRequest] { instrumentsLog.withLock { $0 } }

    /// A provider that approves every authorize and confirms every other operation.
    public static func approving(_ id: String) -> ScriptedProvider {
        ScriptedProvider(id) { call in .answered(Self.success(call)) }
    }

    public static func success(_ call: ProviderCall) -> AdapterResult {
        switch call {
        case .authorize(let r): AdapterResult(status: r.capture == .manual ? .authorized : .succeeded, providerReference: "ref-\(r.paymentId)", amount: r.amount)
        case .proceed(let r): AdapterResult(status: .succeeded, providerReference: r.providerReference)
        case .verify(let r): AdapterResult(status: .succeeded, providerReference: r.providerReference ?? "ref-\(r.paymentId)")
        case .capture(let r), .refund(let r): AdapterResult(status: .succeeded, providerReference: r.providerReference, amount: r.amount)
        case .void(let r): AdapterResult(status: .succeeded, providerReference: r.providerReference)
        }
    }

    public func perform(_ call: ProviderCall) async -> ProviderReply {
        log.withLock { $0.append(call) }
        return await script(call)
    }

    public func webhook(_ request: WebhookRequest) async -> WebhookResult? { webhookScript(request) }

    public var calls: [ProviderCall] { log.withLock { $0 } }
    public func count(_ operation: PaymentOperation) -> Int { calls.filter { $0.operation == operation }.count }
    /// The idempotency keys the provider was sent for `operation`.
    public func keys(_ operation: PaymentOperation) -> [String] {
        calls.compactMap { call in
            switch call {
            case .authorize(let r): operation == .authorize ? r.idempotencyKey : nil
            case .capture(let r): operation == .capture ? r.idempotencyKey : nil
            case .refund(let r): operation == .refund ? r.idempotencyKey : nil
            case .void(let r): operation == .void ? r.idempotencyKey : nil
            default: nil
            }
        }
    }
}

/// A clock a test moves by hand.
public final class TestClock: Sendable {
    public init() {}
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    public var now: Date { current.withLock { $0 } }
    public func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

public func profile(_ id: String, priority: Int, enabled: Bool = true, methods: Set<String> = ["mada", "visa"]) -> ProviderProfile {
    ProviderProfile(id: id, enabled: enabled, priority: priority, methods: methods, currencies: ["SAR", "KWD"], countries: ["SA", "KW"],
                    limits: ["SAR": 100...1_000_000], callTimeout: .seconds(5).scaled)
}

/// An engine over an in-memory SQLite store and scripted providers.
public struct EngineFixture: Sendable {
    public let store: SQLiteCheckoutStore
    public let clock = TestClock()
    public let checkout: Checkout

    public init(_ providers: [(ProviderProfile, ScriptedProvider)], store: SQLiteCheckoutStore? = nil,
         configure: (inout CheckoutConfiguration) -> Void = { _ in }) throws {
        try self.init(directory: StaticProviderDirectory(providers.map { ($0.0, $0.1 as any PaymentProvider) }), store: store, configure: configure)
    }

    public init(directory: any ProviderDirectory, store: SQLiteCheckoutStore? = nil, configure: (inout CheckoutConfiguration) -> Void = { _ in }) throws {
        self.store = try store ?? SQLiteCheckoutStore.inMemory()
        var configuration = CheckoutConfiguration()
        configuration.reconcileBackoff = [1, 2, 4]
        configure(&configuration)
        let clock = self.clock
        checkout = Checkout(store: self.store, providers: directory, fingerprintKey: testKey,
                            configuration: configuration, now: { clock.now })
    }

    public func session(_ value: Int64 = 1000, currency: String = "SAR", capture: CaptureMode = .automatic, key: String? = nil) async throws -> Session {
        try await checkout.createSession(
            NewSession(amount: Money(value: value, currency: currency), country: currency == "KWD" ? "KW" : "SA", orderId: "order-1", capture: capture),
            idempotencyKey: key).session
    }
}

/// A value shared with the closures of scripted providers.
public final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    public init(_ value: Value) { self.value = Mutex(value) }
    public func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
}

/// The fingerprint key of engines under test (stable, as in production).
public let testKey = Data(repeating: 7, count: 32)
