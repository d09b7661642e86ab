import Synchronization

/// Per-call bookkeeping visible to the adapter's task: whether the call has
/// reached the network, which decides how an unexpected error is reported.
final class CallScope: Sendable {
    @TaskLocal static var current: CallScope?

    private let requests = Atomic<Int>(0)

    /// Records that the call is handing a request to the host's egress.
    func markSent() { requests.add(1, ordering: .relaxed) }
    /// How many requests the call handed to the host.
    var requestCount: Int { requests.load(ordering: .relaxed) }
}
