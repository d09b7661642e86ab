import Foundation
import PluginHost
import Synchronization

/// The runner's frame reader: the only thread that reads the socket. Invokes
/// and cancels run on dispatch threads, so an adapter that blocks in one
/// never stops the reader from delivering cancels, secrets and HTTP results.
/// End of file (the host is gone) ends the process at once: there is no one
/// left to report to.
final class RunnerLoop: @unchecked Sendable {
    let channel: FrameChannel
    let services: RunnerServices
    let binding: AdapterBinding
    private let instance = Mutex<SendableInstance?>(nil)
    /// Invokes running in the adapter now (destroy waits for them).
    private let running = Atomic<Int>(0)
    private let calls = DispatchQueue(label: "adapter-calls", attributes: .concurrent)

    init(channel: FrameChannel, services: RunnerServices, binding: AdapterBinding) {
        self.channel = channel
        self.services = services
        self.binding = binding
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "runner-frames"
        thread.start()
    }

    /// The created instance: invokes are served from now on.
    func serve(_ pointer: UnsafeMutableRawPointer) {
        instance.withLock { $0 = SendableInstance(pointer: pointer) }
    }

    private func run() {
        while true {
            let frame: Frame
            do {
                guard let next = try channel.next() else { _exit(0) }
                frame = next
            } catch {
                FileHandle.standardError.write(Data("gateway-runner: \(error)\n".utf8))
                _exit(4)
            }
            handle(frame)
        }
    }

    private func handle(_ frame: Frame) {
        switch frame.kind {
        case .invoke:
            guard let pointer = instance.withLock({ $0 }) else {
                refuse(frame.id, status: 7 /* GW_E_BUSY */)
                return
            }
            let callID = frame.id
            let operation = frame.int32(at: 0)
            let request = Data(frame.rest(from: 8))
            running.add(1, ordering: .acquiringAndReleasing)
            calls.async { [self] in
                let status = request.withUnsafeBytes { binding.invoke(pointer.pointer, callID, operation, $0) }
                running.subtract(1, ordering: .acquiringAndReleasing)
                if status != 0 { refuse(callID, status: status) }
            }
        case .cancel:
            guard let pointer = instance.withLock({ $0 }) else { return }
            let callID = frame.id
            calls.async { [self] in binding.cancel(pointer.pointer, callID) }
        case .secretValue:
            services.deliverSecret(id: frame.id, status: frame.int32(at: 0), fullLength: frame.uint64(at: 4), value: frame.rest(from: 12))
        case .httpResult:
            services.deliverHTTPResult(id: frame.id, status: frame.int32(at: 0), document: Data(frame.rest(from: 4)))
        case .destroy:
            let pointer = instance.withLock { current -> SendableInstance? in
                defer { current = nil }
                return current
            }
            calls.async(flags: .barrier) { [self] in
                while running.load(ordering: .acquiring) > 0 { usleep(1_000) }
                if let pointer { binding.destroy(pointer.pointer) }
                try? channel.send(.destroyed, id: 0)
                _exit(0)
            }
        default:
            FileHandle.standardError.write(Data("gateway-runner: the host sent a \(frame.kind) frame, which only a runner sends\n".utf8))
            _exit(4)
        }
    }

    private func refuse(_ callID: UInt64, status: Int32) {
        do { try channel.send(.refused, id: callID, prefix: .int32(status)) } catch { _exit(0) }
    }
}

/// The adapter's instance pointer, carried to a dispatch thread.
struct SendableInstance: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}
