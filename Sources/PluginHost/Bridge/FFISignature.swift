import CFFI
import Synchronization

/// A C scalar type as libffi sees it.
enum FFIType: Hashable, Sendable {
    case void, pointer, sint32, uint32, sint64, uint64
    /// `size_t`.
    case size

    var ffiType: UnsafeMutablePointer<ffi_type> {
        switch self {
        case .void: gw_ffi_type_void()
        case .pointer: gw_ffi_type_pointer()
        case .sint32: gw_ffi_type_sint32()
        case .uint32: gw_ffi_type_uint32()
        case .sint64: gw_ffi_type_sint64()
        case .uint64, .size: gw_ffi_type_uint64()
        }
    }
}

/// The shape of a C function: what libffi needs to call it or to be called as it.
struct CallSignature: Hashable, Sendable {
    var result: FFIType
    var arguments: [FFIType]
    init(_ result: FFIType, _ arguments: [FFIType]) {
        self.result = result
        self.arguments = arguments
    }
}

/// A prepared `ffi_cif`: built once per signature, shared by every call of that
/// shape, never freed (signatures are few and live as long as the process).
final class PreparedCIF: @unchecked Sendable {
    let cif: UnsafeMutablePointer<ffi_cif>
    let signature: CallSignature

    fileprivate init(_ signature: CallSignature) {
        self.signature = signature
        let argumentTypes = UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>.allocate(capacity: max(1, signature.arguments.count))
        for (index, type) in signature.arguments.enumerated() { argumentTypes[index] = type.ffiType }
        cif = .allocate(capacity: 1)
        let status = ffi_prep_cif(cif, gw_ffi_default_abi(), UInt32(signature.arguments.count), signature.result.ffiType, argumentTypes)
        // A signature table entry that libffi cannot prepare is a programming
        // error in this file, found by the first test that loads an adapter.
        precondition(status == FFI_OK, "ffi_prep_cif failed (\(status)) for \(signature)")
    }

    /// The cif for `signature`, prepared on first use.
    static func forSignature(_ signature: CallSignature) -> PreparedCIF {
        cache.withLock { cache in
            if let cif = cache[signature] { return cif }
            let cif = PreparedCIF(signature)
            cache[signature] = cif
            return cif
        }
    }

    private static let cache = Mutex<[CallSignature: PreparedCIF]>([:])
}
