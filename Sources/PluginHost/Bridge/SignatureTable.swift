import CGatewayABI

/// Where a function pointer sits in an ABI table and what it looks like: the
/// data the bridge needs to call it (adapter table) or to build it (host table).
struct FunctionSlot: Sendable {
    var name: String
    var offset: Int
    var signature: CallSignature
    /// Whether a table without it is refused.
    var required: Bool
}

/// The functions of the adapter table (`gw_adapter_api`) the host calls.
enum AdapterFunction: String, CaseIterable, Sendable {
    case create, describe, invoke, cancel, destroy, free
}

/// The services of the host table (`gw_host_api`) the host builds as closures.
enum HostService: String, CaseIterable, Sendable {
    case log
    case httpSend = "http_send"
    case secretGet = "secret_get"
    case clockUnixNs = "clock_unix_ns"
    case clockMonotonicNs = "clock_monotonic_ns"
    case randomBytes = "random_bytes"
    case complete
    case walletDecrypt = "wallet_decrypt"
}

/// The ABI as data: for each major version the host speaks, the layout and the
/// signatures of both tables. A new ABI version is a new entry here, not new glue.
enum SignatureTable {
    /// The ABI versions this host speaks, newest first.
    static let hostMajor: UInt32 = UInt32(GW_ABI_VERSION_MAJOR)
    static let hostMinor: UInt32 = UInt32(GW_ABI_VERSION_MINOR)

    /// `gw_status gw_adapter_entry(gw_negotiation *)`.
    static let entry = CallSignature(.sint32, [.pointer])
    /// `void gw_http_callback(void *user_data, gw_status, const uint8_t *, size_t)`.
    static let httpCallback = CallSignature(.void, [.pointer, .sint32, .pointer, .size])

    /// The adapter table of ABI `major`, or nil when the host does not speak it.
    static func adapterTable(major: UInt32) -> [AdapterFunction: FunctionSlot]? {
        guard major == 1 else { return nil }
        typealias T = gw_adapter_api
        func slot(_ f: AdapterFunction, _ key: PartialKeyPath<T>, _ s: CallSignature, required: Bool = true) -> (AdapterFunction, FunctionSlot) {
            (f, FunctionSlot(name: f.rawValue, offset: MemoryLayout<T>.offset(of: key)!, signature: s, required: required))
        }
        return Dictionary(uniqueKeysWithValues: [
            // gw_status create(const gw_host_api *, const uint8_t *, size_t, gw_instance **, uint8_t **, size_t *)
            slot(.create, \T.create, CallSignature(.sint32, [.pointer, .pointer, .size, .pointer, .pointer, .pointer])),
            // gw_status describe(gw_instance *, uint8_t **, size_t *)
            slot(.describe, \T.describe, CallSignature(.sint32, [.pointer, .pointer, .pointer])),
            // gw_status invoke(gw_instance *, uint64_t call_id, gw_operation, const uint8_t *, size_t)
            slot(.invoke, \T.invoke, CallSignature(.sint32, [.pointer, .uint64, .sint32, .pointer, .size])),
            // void cancel(gw_instance *, uint64_t call_id)   (NULL: not supported)
            slot(.cancel, \T.cancel, CallSignature(.void, [.pointer, .uint64]), required: false),
            // void destroy(gw_instance *)
            slot(.destroy, \T.destroy, CallSignature(.void, [.pointer])),
            // void free(void *)
            slot(.free, \T.free, CallSignature(.void, [.pointer])),
        ])
    }

    /// The host services table of ABI `major` and its size in bytes.
    static func hostTable(major: UInt32) -> (size: Int, slots: [HostService: FunctionSlot])? {
        guard major == 1 else { return nil }
        typealias T = gw_host_api
        func slot(_ s: HostService, _ key: PartialKeyPath<T>, _ sig: CallSignature) -> (HostService, FunctionSlot) {
            (s, FunctionSlot(name: s.rawValue, offset: MemoryLayout<T>.offset(of: key)!, signature: sig, required: true))
        }
        return (MemoryLayout<T>.size, Dictionary(uniqueKeysWithValues: [
            slot(.log, \T.log, CallSignature(.void, [.sint32, .pointer, .size])),
            slot(.httpSend, \T.http_send, CallSignature(.void, [.pointer, .size, .pointer, .pointer])),
            slot(.secretGet, \T.secret_get, CallSignature(.sint32, [.pointer, .size, .pointer, .size, .pointer])),
            slot(.clockUnixNs, \T.clock_unix_ns, CallSignature(.sint64, [])),
            slot(.clockMonotonicNs, \T.clock_monotonic_ns, CallSignature(.uint64, [])),
            slot(.randomBytes, \T.random_bytes, CallSignature(.sint32, [.pointer, .size])),
            slot(.complete, \T.complete, CallSignature(.void, [.uint64, .sint32, .pointer, .size])),
            // ABI 1.1, appended.
            slot(.walletDecrypt, \T.wallet_decrypt, CallSignature(.void, [.pointer, .size, .pointer, .pointer])),
        ]))
    }
}
