import Foundation
import HTTPTypes
import Hummingbird

/// Worldline's idempotent POSTs (`X-GCS-Idempotence-Key`), kept per
/// merchant, path and key for 24 hours:
///
/// - the first request runs, and its answer is kept;
/// - a replay gets that answer again (same HTTP status, same body), plus
///   `X-GCS-Idempotence-Request-Timestamp`, the first request's time in
///   epoch milliseconds; the key decides, whatever the replay's body
///   (documented: the first answer is returned);
/// - a replay while the first still runs gets 409 with errorCode `30001002`
///   (the code the SDKs know for it);
/// - a key longer than 40 characters is refused, 400 `21000020`.
struct WorldlineIdempotence: Sendable {
    struct Record: Sendable {
        /// Nil while the first request runs.
        var answer: WorldlineAnswer?
        var timestamp: Int64
        var created: Date
    }

    enum Start: Sendable {
        case fresh
        case replay(WorldlineAnswer, timestamp: Int64)
        case refused(WorldlineWire.Refusal)
    }

    static let lifetime: TimeInterval = 24 * 3600
    static let maxRecords = 20_000
    static let timestampHeader = HTTPField.Name("X-GCS-Idempotence-Request-Timestamp")!
    static let keyHeader = HTTPField.Name("X-GCS-Idempotence-Key")!
    /// The longest `X-GCS-Idempotence-Key` Worldline takes.
    static let maximumKeyLength = 40

    private var records: [String: Record] = [:]

    init() {}

    /// Starts a request under `scope` (merchant, path and key).
    mutating func start(_ scope: String, now: Date = Date()) -> Start {
        if let record = records[scope], now.timeIntervalSince(record.created) < Self.lifetime {
            guard let answer = record.answer else { return .refused(.idempotenceInFlight) }
            return .replay(answer, timestamp: record.timestamp)
        }
        if records.count >= Self.maxRecords {
            records = records.filter { now.timeIntervalSince($0.value.created) < Self.lifetime }
            if records.count >= Self.maxRecords, let oldest = records.min(by: { $0.value.created < $1.value.created }) {
                records[oldest.key] = nil
            }
        }
        records[scope] = Record(answer: nil, timestamp: Int64((now.timeIntervalSince1970 * 1000).rounded()),
                                created: now)
        return .fresh
    }

    /// Keeps the first request's answer.
    mutating func finish(_ scope: String, with answer: WorldlineAnswer) {
        records[scope]?.answer = answer
    }

    /// Forgets a request that ended without an answer.
    mutating func abandon(_ scope: String) {
        records[scope] = nil
    }
}

extension WorldlineSimulator {
    /// Runs `work` for a POST under its idempotence key, if it has one.
    func idempotent(_ request: Request, merchant: String, body: Data,
                    _ work: () async throws -> WorldlineAnswer) async throws -> Response {
        guard let key = request.headers[WorldlineIdempotence.keyHeader], !key.isEmpty else { return try await work().response }
        // Worldline documents at most 40 characters for the key.
        guard key.count <= WorldlineIdempotence.maximumKeyLength else {
            return WorldlineWire.Refusal.idempotenceKeyTooLong(key.count).response
        }
        let scope = merchant + "\n" + request.uri.path + "\n" + key
        let start = state.withLock { $0.idempotence.start(scope) }
        switch start {
        case .refused(let refusal):
            return refusal.response
        case .replay(let answer, let timestamp):
            var response = answer.response
            response.headers[WorldlineIdempotence.timestampHeader] = String(timestamp)
            return response
        case .fresh:
            do {
                let answer = try await work()
                state.withLock { $0.idempotence.finish(scope, with: answer) }
                return answer.response
            } catch {
                state.withLock { $0.idempotence.abandon(scope) }
                throw error
            }
        }
    }
}
