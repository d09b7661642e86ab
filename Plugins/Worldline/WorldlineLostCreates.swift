import Foundation
import GatewayAdapterSDK
import Synchronization

/// What verify needs when an attempt has no Worldline payment id (the
/// create's answer never reached the host): Worldline cannot be searched by
/// merchant reference, so this process remembers, for a client session's
/// two hours,
///
/// - each create in flight or without a usable answer (its body, already
///   encrypted for Worldline, and its idempotence key; never logged), which
///   verify replays: Worldline answers the first try's result, or makes the
///   payment once;
/// - each payment id a create was answered with, so that a verify whose
///   attempt missed that answer (the host stopped waiting first) reads the
///   payment instead.
///
/// Both are bounded; past a bound the oldest entries go, with a warning, and
/// their attempts are settled by their webhooks (as after a restart).
final class WorldlineLostCreates: Sendable {
    struct Create: Sendable {
        var url: String
        var body: Data
        var key: String
        var until: Date
    }

    private struct State {
        var held: [String: Create] = [:]
        var made: [String: (id: String, until: Date)] = [:]
    }

    static let maxHeld = 4096
    static let maxMade = 100_000
    private let state = Mutex(State())

    /// Holds `create` of host payment `paymentId` until it is answered.
    /// Returns the payment id dropped to stay within bounds, if any.
    func hold(_ create: Create, for paymentId: String, now: Date) -> String? {
        state.withLock { state in
            state.held[paymentId] = create
            return Self.trim(&state.held, max: Self.maxHeld, now: now, until: \.until)
        }
    }

    /// `paymentId`'s create was answered with Worldline payment `id` (or
    /// refused for good, `id` nil): it is no longer held.
    func answered(_ paymentId: String, with id: String?, until: Date, now: Date) -> String? {
        state.withLock { state in
            state.held.removeValue(forKey: paymentId)
            guard let id else { return nil }
            state.made[paymentId] = (id, until)
            return Self.trim(&state.made, max: Self.maxMade, now: now, until: \.until)
        }
    }

    /// The payment id `paymentId`'s create was answered with, or the create to replay.
    func lookup(_ paymentId: String, now: Date) -> (id: String?, create: Create?) {
        state.withLock { state in
            let id = state.made[paymentId].flatMap { $0.until > now ? $0.id : nil }
            let create = state.held[paymentId].flatMap { $0.until > now ? $0 : nil }
            return (id, create)
        }
    }

    private static func trim<Value>(_ map: inout [String: Value], max: Int, now: Date, until: (Value) -> Date) -> String? {
        guard map.count > max else { return nil }
        map = map.filter { until($0.value) > now }
        guard map.count > max, let oldest = map.min(by: { until($0.value) < until($1.value) })?.key else { return nil }
        map.removeValue(forKey: oldest)
        return oldest
    }
}
