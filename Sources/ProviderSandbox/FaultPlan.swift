import Foundation
import Synchronization

/// Faults the sandbox injects into a simulator's answers, per request: what a
/// real provider's network does on a bad day.
///
/// - ``Fault/latency(milliseconds:)``: the request is processed at once (the
///   charge happens), the answer is held back. Longer than the adapter's
///   timeout, it is a timeout with the outcome unknown to the host.
/// - ``Fault/status(_:)``: answered with that HTTP status and the provider's
///   error shape *before* processing (nothing is charged).
/// - ``Fault/drop``: the request is processed, then the connection is cut in
///   the middle of the answer (the host sees a dropped connection: the outcome
///   is unknown, and a verify must find the charge).
///
/// Rules are matched in the order added; a rule with a `count` is used up
/// after that many requests. ``baseLatency`` delays every answer (the slow
/// provider of the benchmark).
public final class FaultPlan: Sendable {
    public enum Fault: Sendable, Equatable {
        case latency(milliseconds: Int)
        case status(Int)
        case drop
    }

    public struct Rule: Sendable {
        /// The simulator's id (`hyperpay`), or nil for every simulator.
        public var provider: String?
        /// A path prefix relative to the simulator (`/v1/checkouts`), or nil for any path.
        public var path: String?
        /// An HTTP method (`POST`), or nil for any.
        public var method: String?
        public var fault: Fault
        /// How many requests it applies to; nil: every matching request.
        public var count: Int?

        public init(provider: String? = nil, path: String? = nil, method: String? = nil, fault: Fault, count: Int? = 1) {
            self.provider = provider
            self.path = path
            self.method = method
            self.fault = fault
            self.count = count
        }

        func matches(provider: String, path: String, method: String) -> Bool {
            (self.provider == nil || self.provider == provider)
                && (self.path.map { path.hasPrefix($0) } ?? true)
                && (self.method.map { $0.uppercased() == method.uppercased() } ?? true)
        }
    }

    private struct State {
        var rules: [Rule] = []
        var baseLatencyMilliseconds = 0
    }

    private let state = Mutex(State())

    public init(baseLatencyMilliseconds: Int = 0) {
        state.withLock { $0.baseLatencyMilliseconds = baseLatencyMilliseconds }
    }

    /// Every answer is delayed by this much (after processing).
    public var baseLatencyMilliseconds: Int {
        get { state.withLock { $0.baseLatencyMilliseconds } }
        set { state.withLock { $0.baseLatencyMilliseconds = max(0, newValue) } }
    }

    public func add(_ rule: Rule) {
        state.withLock { $0.rules.append(rule) }
    }

    public func removeAll() {
        state.withLock { $0.rules.removeAll() }
    }

    /// The rules still in force.
    public var rules: [Rule] { state.withLock { $0.rules } }

    /// The fault for one request, using up a counted rule.
    public func take(provider: String, path: String, method: String) -> Fault? {
        state.withLock { state in
            guard let index = state.rules.firstIndex(where: { $0.matches(provider: provider, path: path, method: method) }) else {
                return nil
            }
            let fault = state.rules[index].fault
            if let count = state.rules[index].count {
                if count <= 1 { state.rules.remove(at: index) } else { state.rules[index].count = count - 1 }
            }
            return fault
        }
    }
}
