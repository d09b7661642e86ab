import CGatewayABI
import Foundation
import Synchronization

/// Builds the C ABI for a ``PaymentAdapter`` type. One line exports an adapter:
///
/// ```swift
/// @_cdecl("gw_adapter_entry")
/// public func entry(_ n: UnsafeMutableRawPointer?) -> Int32 { AdapterExport.negotiate(n, MyAdapter.self) }
/// ```
public enum AdapterExport {
    private struct Registration: @unchecked Sendable {
        var type: any PaymentAdapter.Type
        var table: UnsafeMutablePointer<gw_adapter_api>
    }

    private static let registration = Mutex<Registration?>(nil)

    /// The entry point's body: negotiates ABI v1 for `adapter`.
    public static func negotiate(_ negotiation: UnsafeMutableRawPointer?, _ adapter: any PaymentAdapter.Type) -> Int32 {
        guard let negotiation = negotiation?.assumingMemoryBound(to: gw_negotiation.self),
              negotiation.pointee.struct_size >= UInt32(MemoryLayout<gw_negotiation>.size)
        else { return GW_E_VERSION }
        let table = registration.withLock { registration in
            if let registration { return registration.table }
            let table = makeTable(for: adapter)
            registration = Registration(type: adapter, table: table)
            return table
        }
        negotiation.pointee.adapter_abi_major = UInt32(GW_ABI_VERSION_MAJOR)
        negotiation.pointee.adapter_abi_minor = UInt32(GW_ABI_VERSION_MINOR)
        negotiation.pointee.adapter_api = UnsafePointer(table)
        return negotiation.pointee.host_abi_major == UInt32(GW_ABI_VERSION_MAJOR) ? GW_OK : GW_E_VERSION
    }

    static var adapterType: (any PaymentAdapter.Type)? { registration.withLock { $0?.type } }

    private static func makeTable(for adapter: any PaymentAdapter.Type) -> UnsafeMutablePointer<gw_adapter_api> {
        let table = UnsafeMutablePointer<gw_adapter_api>.allocate(capacity: 1)
        table.initialize(to: gw_adapter_api())
        table.pointee.struct_size = UInt32(MemoryLayout<gw_adapter_api>.size)
        table.pointee.id = UnsafePointer(strdup(adapter.id))
        table.pointee.version = UnsafePointer(strdup(adapter.version))
        table.pointee.create = createThunk
        table.pointee.describe = describeThunk
        table.pointee.invoke = invokeThunk
        table.pointee.cancel = cancelThunk
        table.pointee.destroy = destroyThunk
        table.pointee.free = freeThunk
        return table
    }
}

/// What `gw_instance *` points to for a Swift adapter.
final class InstanceBox: Sendable {
    let adapter: any PaymentAdapter
    let host: AdapterHost
    let operations: Set<PaymentOperation>
    let tasks = Mutex<[UInt64: Task<Void, Never>]>([:])

    init(adapter: any PaymentAdapter, host: AdapterHost) {
        self.adapter = adapter
        self.host = host
        self.operations = Set(adapter.description.operations)
    }

    static func from(_ pointer: OpaquePointer?) -> InstanceBox {
        Unmanaged<InstanceBox>.fromOpaque(UnsafeRawPointer(pointer!)).takeUnretainedValue()
    }
}

// MARK: - Thunks: the C functions of the table

/// Copies `bytes` into a buffer the host releases with the table's `free`.
private func handOver(_ bytes: Data, _ out: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, _ length: UnsafeMutablePointer<Int>?) {
    let buffer = malloc(max(bytes.count, 1))!.assumingMemoryBound(to: UInt8.self)
    bytes.copyBytes(to: buffer, count: bytes.count)
    out?.pointee = buffer
    length?.pointee = bytes.count
}

private let createThunk: @convention(c) (
    UnsafePointer<gw_host_api>?, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<OpaquePointer?>?,
    UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, UnsafeMutablePointer<Int>?
) -> Int32 = { host, config, configLength, outInstance, outError, outErrorLength in
    func fail(_ status: Int32, _ message: String) -> Int32 {
        handOver(Data(message.utf8), outError, outErrorLength)
        return status
    }
    guard let host, let outInstance, let type = AdapterExport.adapterType else {
        return fail(GW_E_INVALID_REQUEST, "create called without a host table or before negotiation")
    }
    let configData = config.map { Data(bytes: $0, count: configLength) } ?? Data("{}".utf8)
    let json: [String: JSONValue]
    switch try? JSONValue(jsonData: configData) {
    case .object(let members)?: json = members
    default: return fail(GW_E_INVALID_REQUEST, "\(type.id): config is not a JSON object")
    }
    do {
        let adapterHost = AdapterHost(table: host)
        let adapter = try type.init(host: adapterHost, configuration: AdapterConfiguration(json: json))
        let box = InstanceBox(adapter: adapter, host: adapterHost)
        outInstance.pointee = OpaquePointer(Unmanaged.passRetained(box).toOpaque())
        return GW_OK
    } catch AdapterError.invalidConfiguration(let message) {
        return fail(GW_E_INVALID_REQUEST, "\(type.id): \(message)")
    } catch {
        return fail(GW_E_INTERNAL, "\(type.id): create failed: \(error)")
    }
}

private let describeThunk: @convention(c) (
    OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, UnsafeMutablePointer<Int>?
) -> Int32 = { instance, out, length in
    guard instance != nil else { return GW_E_INTERNAL }
    handOver(Data(InstanceBox.from(instance).adapter.description.jsonBytes()), out, length)
    return GW_OK
}

private let invokeThunk: @convention(c) (OpaquePointer?, UInt64, Int32, UnsafePointer<UInt8>?, Int) -> Int32 = {
    instance, callID, operationCode, request, length in
    guard instance != nil else { return GW_E_INVALID_REQUEST }
    let box = InstanceBox.from(instance)
    // A code this SDK does not know (a later minor's), or one the adapter does not describe.
    guard let operation = PaymentOperation(code: operationCode), box.operations.contains(operation) else { return GW_E_UNSUPPORTED }
    let payload = UnsafeRawBufferPointer(start: request, count: request == nil ? 0 : length)
    if operation == .instruments {
        guard let instrumentsRequest = try? InstrumentsRequest(jsonBytes: payload) else { return GW_E_INVALID_REQUEST }
        spawn(box, callID) { try await box.adapter.instruments(instrumentsRequest).jsonBytes() }
        return GW_OK
    }
    guard let call = RequestDecoding.decode(operation, payload) else {
        return GW_E_INVALID_REQUEST
    }

    // Fast path: the adapter can answer without suspending.
    do {
        if let reply = try box.adapter.handleImmediately(call) {
            box.host.complete(callID, status: GW_OK, document: ReplyEncoding.encode(reply))
            return GW_OK
        }
    } catch {
        let (status, document) = ReplyEncoding.failure(error, requests: 0)
        // Refusals the adapter reports synchronously are refusals: nothing was sent.
        if status == GW_E_INVALID_REQUEST || status == GW_E_UNSUPPORTED { return status }
        box.host.complete(callID, status: status, document: document)
        return GW_OK
    }

    // Asynchronous path: one task per call, cancellable by the host.
    spawn(box, callID) { ReplyEncoding.encode(try await box.adapter.handle(call)) }
    return GW_OK
}

/// Runs one call in its own task, which the host's `cancel` cancels, and
/// completes it exactly once with what `body` answers or throws.
private func spawn(_ box: InstanceBox, _ callID: UInt64, _ body: @escaping @Sendable () async throws -> [UInt8]) {
    box.tasks.withLock { tasks in
        tasks[callID] = Task {
            let scope = CallScope()
            let status: Int32
            let document: [UInt8]
            do {
                (status, document) = (GW_OK, try await CallScope.$current.withValue(scope) { try await body() })
            } catch {
                (status, document) = ReplyEncoding.failure(error, requests: scope.requestCount)
            }
            _ = box.tasks.withLock { $0.removeValue(forKey: callID) }
            box.host.complete(callID, status: status, document: document)
        }
    }
}

private let cancelThunk: @convention(c) (OpaquePointer?, UInt64) -> Void = { instance, callID in
    guard instance != nil else { return }
    InstanceBox.from(instance).tasks.withLock { $0[callID] }?.cancel()
}

private let destroyThunk: @convention(c) (OpaquePointer?) -> Void = { instance in
    guard let instance else { return }
    let box = Unmanaged<InstanceBox>.fromOpaque(UnsafeRawPointer(instance)).takeRetainedValue()
    for task in box.tasks.withLock({ Array($0.values) }) { task.cancel() }
}

private let freeThunk: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
    free(pointer)
}
