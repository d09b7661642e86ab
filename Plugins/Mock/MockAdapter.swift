import Crypto
import Foundation
import GatewayAdapterSDK
import Synchronization

/// The mock gateway: a provider that keeps its payments in memory and behaves,
/// on request, like every failure a real one has. The scenario is chosen per
/// payment by `instrument.scenario` (see ``MockScenario``, and the README).
final class MockAdapter: PaymentAdapter {
    static let id = "mock"
    /// The same sources built as `MockAdapterNext` (tests only) are the next
    /// version, for upgrade tests of the mock itself.
    #if MOCK_NEXT_VERSION
    static let version = "1.1.0"
    #else
    static let version = "1.0.0"
    #endif

    let host: AdapterHost
    let ledger = Mutex(MockLedger.sized())
    /// Set when the books outlive the process (``MockLedgerFile``; config
    /// `ledger_folder`).
    let ledgerFile: MockLedgerFile?
    /// The code the `otp` scenario expects (config `otp`, default 123456).
    let expectedOTP: String
    /// Milliseconds the `pending_then_success` payment stays pending before a
    /// verify sees it settle (config `settle_after_ms`, default 0: the first verify).
    let settleAfterMilliseconds: Int

    init(host: AdapterHost, configuration: AdapterConfiguration) throws {
        self.host = host
        expectedOTP = try configuration.string("otp", default: "123456")
        guard expectedOTP.count >= 4, expectedOTP.allSatisfy(\.isNumber) else {
            throw AdapterError.invalidConfiguration("config.otp must be 4 or more digits")
        }
        settleAfterMilliseconds = try configuration.integer("settle_after_ms", default: 0)
        let folder = try configuration.string("ledger_folder", default: "")
        ledgerFile = MockLedgerFile(configured: folder.isEmpty ? nil : folder)
    }

    /// Runs `body` on the books: in memory, or in the shared file.
    func withLedger<T: Sendable>(_ body: (inout MockLedger) throws -> T) throws -> T {
        if let ledgerFile {
            return try ledger.withLock { _ in try ledgerFile.update(body) }
        }
        return try ledger.withLock { ledger in try body(&ledger) }
    }

    var description: AdapterDescription {
        AdapterDescription(
            id: Self.id, version: Self.version, methods: KnownMethod.allCases.map(\.rawValue),
            operations: PaymentOperation.paymentOperations + [.instruments])
    }

    /// Everything but the scenarios that must not answer at once is answered
    /// inline: the mock's state is in memory.
    func handleImmediately(_ call: AdapterCall) throws -> AdapterReply? {
        if case .authorize(let request) = call {
            try Self.checkSelection(request)
            let scenario = try MockScenario(request)
            let delayed = try Self.delay(request) != nil
            if scenario == .timeout || scenario == .networkDrop || delayed || Self.walletToken(request) != nil { return nil }
        }
        return try reply(to: call)
    }

    func handle(_ call: AdapterCall) async throws -> AdapterReply {
        if case .authorize(let request) = call {
            if let delay = try Self.delay(request) {
                try await Task.sleep(for: .milliseconds(delay))
            }
            if let refusal = try await walletRefusal(request) {
                return .payment(try authorize(request, scenario: MockScenario(request), declinedWith: refusal))
            }
            switch try MockScenario(request) {
            case .timeout:
                // The provider charges, and never answers: only the host's
                // deadline (and its cancel) ends this call.
                _ = try authorize(request, scenario: .success)
                try await Task.sleep(for: .seconds(86_400))
                throw AdapterError.outcomeUnknown("unreachable")
            case .networkDrop:
                // The provider charges; the connection drops before the answer.
                _ = try authorize(request, scenario: .success)
                throw AdapterError.outcomeUnknown("connection reset after the request was sent")
            default:
                break
            }
        }
        return try reply(to: call)
    }

    /// `instrument.delay_ms`, an integer from 0 to 60000, if present and not 0.
    static func delay(_ request: AuthorizeRequest) throws -> Int? {
        guard let value = request.instrument?["delay_ms"] else { return nil }
        guard let n = value.integerValue, n >= 0, n <= 60_000 else {
            throw AdapterError.invalidRequest("instrument.delay_ms must be an integer from 0 to 60000")
        }
        return n > 0 ? Int(n) : nil
    }

    private func reply(to call: AdapterCall) throws -> AdapterReply {
        switch call {
        case .authorize(let request): .payment(try authorize(request, scenario: MockScenario(request)))
        case .continue(let request): .payment(try proceed(request))
        case .verify(let request): .payment(try verify(request))
        case .capture(let request): .payment(try capture(request))
        case .refund(let request): .payment(try refund(request))
        case .void(let request): .payment(try void(request))
        case .webhook(let request): .webhook(try webhook(request))
        }
    }
}
