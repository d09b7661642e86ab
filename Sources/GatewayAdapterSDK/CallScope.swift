import Synchronization

/// Per-call bookkeeping visible to the adapter's task: whether the call has
/// reached the network, which decides how an unexpected error is reported.
final class CallScope: Sendable {
    @TaskLocal static var current: CallScope?

    private let sent = Atomic<Bool>(false)

    func markSent() { sent.store(true, ordering: .relaxed) }
    var hasSent: Bool { sent.load(ordering: .relaxed) }
}
