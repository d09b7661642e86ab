import Foundation
import GatewayAdapterSDK

/// One payment as the mock gateway remembers it.
struct MockPayment: Sendable, Codable {
    var paymentId: String
    var reference: String
    var scenario: MockScenario
    var status: PaymentStatus
    /// What was approved (may be less than asked: partial approval).
    var approved: Money
    var captured: Int64 = 0
    var refunded: Int64 = 0
    var otpMisses = 0
    var createdAtNanoseconds: UInt64
    var problem: AdapterProblem?
    var action: PaymentAction?
}

/// The mock gateway's memory: payments by reference, and the answer already
/// given to each idempotency key (a replay gets the same answer, as at a real
/// PSP). Webhook de-duplication is the host's job, by `eventId`.
struct MockLedger: Sendable, Codable {
    var payments: [String: MockPayment] = [:]
    var answers: [String: AdapterResult] = [:]
}

/// Where the mock keeps its books across processes, as a real provider's
/// database outlives a host restart: `$GATEWAY_SANDBOX_STATE/mock-ledger.json`
/// when that variable names a folder (`gateway pay` sets it to its data
/// folder), else nowhere (memory only). Every operation reads and writes the
/// file under an exclusive `flock`, so several processes share one ledger.
struct MockLedgerFile: Sendable {
    let path: String

    init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let folder = environment["GATEWAY_SANDBOX_STATE"], !folder.isEmpty else { return nil }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        path = (folder as NSString).appendingPathComponent("mock-ledger.json")
    }

    /// Runs `body` on the ledger as stored, and stores the result.
    func update<T>(_ body: (inout MockLedger) throws -> T) throws -> T {
        let lock = open(path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw AdapterError.internal("cannot open the mock ledger lock \(path).lock") }
        defer { close(lock) }
        guard flock(lock, LOCK_EX) == 0 else { throw AdapterError.internal("cannot lock the mock ledger") }
        defer { flock(lock, LOCK_UN) }
        var ledger = MockLedger()
        if let data = FileManager.default.contents(atPath: path), !data.isEmpty {
            ledger = try JSONDecoder().decode(MockLedger.self, from: data)
        }
        let result = try body(&ledger)
        let temporary = path + ".tmp"
        try JSONEncoder().encode(ledger).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else { throw AdapterError.internal("cannot replace the mock ledger") }
        return result
    }
}
