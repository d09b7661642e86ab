import Foundation
import GatewayAdapterSDK

/// One payment as the mock gateway remembers it.
struct MockPayment: Sendable {
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
///
/// Bounded: it remembers the last ``capacity`` payments and answers and
/// forgets the oldest first (a verify of a forgotten one answers "unknown
/// payment"). A host serving for days would otherwise grow without end, and
/// each doubling of the tables, done under the ledger's lock, stalled every
/// mock call for a fifth of a second (seen as the HTTP benchmark's p99 after
/// 130,000 payments). In memory the tables are sized for the bound up front,
/// so they never grow under load.
struct MockLedger: Sendable {
    static let capacity = 50_000

    /// Payments by provider reference. Assign only to a reference already
    /// present; a new payment goes through ``add(_:)``.
    var payments: [String: MockPayment] = [:]
    private(set) var answers: [String: AdapterResult] = [:]
    /// The request each answer was given to (SHA-256 of its canonical JSON),
    /// by the same key: another request under a key already answered is
    /// refused, as a real PSP refuses it (``replay(_:request:)``).
    private var fingerprints: [String: String] = [:]
    /// The payment (our reference) of each host payment id, for verify by id.
    private var references: [String: String] = [:]
    /// Insertion order, for forgetting the oldest; `…Head` is the oldest live index.
    private var paymentOrder: [String] = []
    private var paymentHead = 0
    private var answerOrder: [String] = []
    private var answerHead = 0

    init() {}

    /// An empty ledger sized for ``capacity`` (memory mode).
    static func sized() -> MockLedger {
        var ledger = MockLedger()
        ledger.payments.reserveCapacity(capacity)
        ledger.answers.reserveCapacity(capacity)
        ledger.fingerprints.reserveCapacity(capacity)
        ledger.references.reserveCapacity(capacity)
        return ledger
    }

    /// The ledger as read back from its file: the order of payments is their creation order.
    init(payments: [String: MockPayment], answers: [String: AdapterResult], fingerprints: [String: String]) {
        self.payments = payments
        self.answers = answers
        self.fingerprints = fingerprints
        let oldestFirst = payments.values.sorted { $0.createdAtNanoseconds < $1.createdAtNanoseconds }
        for payment in oldestFirst { references[payment.paymentId] = payment.reference }
        paymentOrder = oldestFirst.map(\.reference)
        answerOrder = Array(answers.keys)
    }

    /// The answer already given under `key` to this same request; nil when
    /// the key is new; ``AdapterError/invalidRequest(_:)`` (nothing done)
    /// when it answered another request.
    func replay(_ key: String, request fingerprint: String) throws -> AdapterResult? {
        guard let answer = answers[key] else { return nil }
        if let first = fingerprints[key], first != fingerprint {
            let shown = key.split(separator: ":", maxSplits: 1).last.map(String.init) ?? key
            throw AdapterError.invalidRequest("idempotency key \"\(shown.prefix(80))\" was already used with a different request; nothing was done")
        }
        return answer
    }

    mutating func add(_ payment: MockPayment) {
        if payments.updateValue(payment, forKey: payment.reference) == nil { paymentOrder.append(payment.reference) }
        references[payment.paymentId] = payment.reference
        while payments.count > Self.capacity, paymentHead < paymentOrder.count {
            if let gone = payments.removeValue(forKey: paymentOrder[paymentHead]), references[gone.paymentId] == gone.reference {
                references[gone.paymentId] = nil
            }
            paymentHead += 1
        }
        Self.compact(&paymentOrder, &paymentHead)
    }

    mutating func remember(_ answer: AdapterResult, for key: String, request fingerprint: String) {
        if answers.updateValue(answer, forKey: key) == nil { answerOrder.append(key) }
        fingerprints[key] = fingerprint
        while answers.count > Self.capacity, answerHead < answerOrder.count {
            answers[answerOrder[answerHead]] = nil
            fingerprints[answerOrder[answerHead]] = nil
            answerHead += 1
        }
        Self.compact(&answerOrder, &answerHead)
    }

    func payment(withID paymentID: String) -> MockPayment? {
        references[paymentID].flatMap { payments[$0] }
    }

    private static func compact(_ order: inout [String], _ head: inout Int) {
        if head > capacity {
            order.removeFirst(head)
            head = 0
        }
    }
}

/// Where the mock keeps its books across processes, as a real provider's
/// database outlives a host restart: `<folder>/mock-ledger.json`, the folder
/// being the manifest's `config.ledger_folder` when set, else
/// `$GATEWAY_SANDBOX_STATE` when that variable names one (`gateway pay` and
/// `gateway serve --sandbox` set it to their data folder), else nowhere
/// (memory only). Every operation reads and writes the file under an
/// exclusive `flock` on a descriptor of its own, so several processes, and
/// several mock instances in one process, share one ledger.
struct MockLedgerFile: Sendable {
    let path: String

    init?(configured: String?, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let folder = configured ?? environment["GATEWAY_SANDBOX_STATE"], !folder.isEmpty else { return nil }
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
            ledger = try MockLedger(jsonData: data)
        }
        let result = try body(&ledger)
        let temporary = path + ".tmp"
        try Data(ledger.jsonBytes()).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else { throw AdapterError.internal("cannot replace the mock ledger") }
        return result
    }
}

/// The ledger file: `{"payments": {reference: payment}, "answers": {key: result}, "fingerprints": {key: sha256}}`.
extension MockLedger: JSONPayload {
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("payments")
        w.beginObject()
        for (reference, payment) in payments.sorted(by: { $0.key < $1.key }) {
            w.key(reference)
            payment.write(to: &w)
        }
        w.endObject()
        w.key("answers")
        w.beginObject()
        for (key, answer) in answers.sorted(by: { $0.key < $1.key }) {
            w.key(key)
            answer.write(to: &w)
        }
        w.endObject()
        w.member("fingerprints", fingerprints)
        w.endObject()
    }

    init(parsing p: inout JSONParser) throws(JSONParseError) {
        var payments: [String: MockPayment] = [:], answers: [String: AdapterResult] = [:], fingerprints: [String: String] = [:]
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "payments": try p.object { reference, p throws(JSONParseError) in payments[reference] = try MockPayment(parsing: &p) }
            case "answers": try p.object { key, p throws(JSONParseError) in answers[key] = try AdapterResult(parsing: &p) }
            // A ledger written before fingerprints replays its answers to any request.
            case "fingerprints": fingerprints = try p.stringMap() ?? [:]
            default: try p.skipValue()
            }
        }
        self.init(payments: payments, answers: answers, fingerprints: fingerprints)
    }
}

extension MockPayment: JSONPayload {
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("paymentId", paymentId)
        w.member("reference", reference)
        w.member("scenario", scenario.rawValue)
        w.member("status", status.rawValue)
        w.member("approved", approved)
        w.member("captured", captured)
        w.member("refunded", refunded)
        w.member("otpMisses", otpMisses)
        w.member("createdAtNanoseconds", Int64(bitPattern: createdAtNanoseconds))
        w.member("problem", problem)
        w.member("action", action)
        w.endObject()
    }

    init(parsing p: inout JSONParser) throws(JSONParseError) {
        var paymentId: String?, reference: String?, scenario: MockScenario?, status: PaymentStatus?, approved: Money?
        var captured: Int64 = 0, refunded: Int64 = 0, otpMisses = 0, created: Int64 = 0
        var problem: AdapterProblem?, action: PaymentAction?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "paymentId": paymentId = try p.string()
            case "reference": reference = try p.string()
            case "scenario": scenario = MockScenario(rawValue: try p.string())
            case "status": status = PaymentStatus(rawValue: try p.string())
            case "approved": approved = try Money(parsing: &p)
            case "captured": captured = try p.integer()
            case "refunded": refunded = try p.integer()
            case "otpMisses": otpMisses = Int(clamping: try p.integer())
            case "createdAtNanoseconds": created = try p.integer()
            case "problem": problem = try p.nested(AdapterProblem.self)
            case "action": action = try p.nested(PaymentAction.self)
            default: try p.skipValue()
            }
        }
        guard let paymentId, let reference, let scenario, let status, let approved else {
            throw p.error("a payment in the mock ledger lacks its id, reference, scenario, status or approved amount")
        }
        self.init(paymentId: paymentId, reference: reference, scenario: scenario, status: status, approved: approved,
                  captured: captured, refunded: refunded, otpMisses: otpMisses,
                  createdAtNanoseconds: UInt64(bitPattern: created), problem: problem, action: action)
    }
}
