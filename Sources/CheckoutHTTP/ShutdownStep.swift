import GatewayPayloads
import Logging
import ServiceLifecycle
import Synchronization

/// One step of `gateway serve`'s graceful shutdown, named in the log: when
/// shutdown reaches it, when it is done, and, every `every` while it is
/// not, what it still waits for (``pending``). A host that is slow to stop
/// says why, in its own log, instead of going quiet.
public struct ShutdownStep: Sendable {
    public let name: String
    /// What stopping it does, said as it starts ("finishing the requests in flight").
    public let doing: String
    public let logger: Logger
    public let every: Duration
    /// What the step still waits for (requests in flight, a store's queues).
    public let pending: @Sendable () -> String

    public init(_ name: String, doing: String = "", logger: Logger, every: Duration = .seconds(5),
                pending: @escaping @Sendable () -> String = { "" }) {
        self.name = name
        self.doing = doing
        self.logger = logger
        self.every = every
        self.pending = pending
    }

    /// Runs `body` as this step: logged as it starts and ends, and while it lasts.
    public func run<T>(_ body: () async throws -> T) async rethrows -> T {
        let watch = Watch(self)
        watch.start()
        defer { watch.finish() }
        return try await body()
    }

    /// A service whose run ends once graceful shutdown reaches it, logged as
    /// this step from then on.
    func service(_ inner: some Service) -> some Service { LoggedService(step: self, inner: inner) }

    private struct LoggedService<Inner: Service>: Service {
        let step: ShutdownStep
        let inner: Inner

        func run() async throws {
            let watch = Watch(step)
            defer { watch.finish() }
            try await withGracefulShutdownHandler {
                try await inner.run()
            } onGracefulShutdown: {
                watch.start()
            }
        }
    }

    /// The log lines of one step.
    private final class Watch: Sendable {
        let step: ShutdownStep
        private let state = Mutex<(started: ContinuousClock.Instant?, reminder: Task<Void, Never>?, finished: Bool)>((nil, nil, false))

        init(_ step: ShutdownStep) { self.step = step }

        func start() {
            let step = self.step
            let began = ContinuousClock.now
            state.withLock { state in
                guard state.started == nil, !state.finished else { return }
                state.started = began
                // Said before its reminder can run (under the same lock).
                step.logger.info("shutdown: stopping \(step.name)\(step.doing.isEmpty ? "" : ": " + step.doing)")
                state.reminder = Task {
                    while (try? await Task.sleep(for: step.every)) != nil {
                        let pending = step.pending()
                        // Said under the lock that finish() takes to end the
                        // step: never after the step's "stopped" line.
                        self.state.withLock { state in
                            guard !state.finished else { return }
                            step.logger.warning("shutdown: \(step.name) has not stopped after \(Self.milliseconds(ContinuousClock.now - began)) ms\(pending.isEmpty ? "" : ": " + pending)")
                        }
                    }
                }
            }
        }

        func finish() {
            let (started, reminder) = state.withLock { state in
                state.finished = true
                return (state.started, state.reminder)
            }
            reminder?.cancel()
            // Cancelled: the shutdown bound passed, and the step was cut short.
            if let started {
                step.logger.log(level: Task.isCancelled ? .error : .info,
                                "shutdown: \(step.name) \(Task.isCancelled ? "cut short (cancelled)" : "stopped") (\(Self.milliseconds(ContinuousClock.now - started)) ms)")
            }
        }

        static func milliseconds(_ duration: Duration) -> Int64 { duration.nanoseconds / 1_000_000 }
    }
}
