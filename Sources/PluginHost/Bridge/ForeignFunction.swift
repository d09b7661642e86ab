import CFFI

/// A C function pointer paired with its prepared cif: the one way the host
/// calls into an adapter. Arity-specific `call` methods keep the hot path free
/// of heap allocation (arguments live on the stack for the call's duration).
struct ForeignFunction: @unchecked Sendable {
    let address: UnsafeRawPointer
    let cif: PreparedCIF

    init(address: UnsafeRawPointer, signature: CallSignature) {
        self.address = address
        self.cif = PreparedCIF.forSignature(signature)
    }

    private var function: @convention(c) () -> Void {
        unsafeBitCast(address, to: (@convention(c) () -> Void).self)
    }

    /// Calls with arguments already laid out as libffi wants them (pointers to
    /// each argument's storage). `ret` must hold at least 8 bytes.
    @inline(__always)
    private func raw(_ ret: UnsafeMutableRawPointer?, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        ffi_call(cif.cif, function, ret, args)
    }

    /// Widens libffi's return register (`ffi_arg`) back to a `gw_status`.
    @inline(__always)
    private static func status(_ ret: UInt64) -> Int32 { Int32(truncatingIfNeeded: ret) }

    func callStatus(_ a0: UnsafeMutableRawPointer?) -> Int32 {
        var a0 = a0
        var ret: UInt64 = 0
        return withUnsafeMutablePointer(to: &a0) { p0 in
            var args: (UnsafeMutableRawPointer?) = (UnsafeMutableRawPointer(p0))
            withUnsafeMutablePointer(to: &args) { a in
                a.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 1) { raw(&ret, $0) }
            }
            return Self.status(ret)
        }
    }

    func callVoid(_ a0: UnsafeMutableRawPointer?) {
        var a0 = a0
        var ret: UInt64 = 0
        withUnsafeMutablePointer(to: &a0) { p0 in
            var args: (UnsafeMutableRawPointer?) = (UnsafeMutableRawPointer(p0))
            withUnsafeMutablePointer(to: &args) { a in
                a.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 1) { raw(&ret, $0) }
            }
        }
    }

    func callVoid(_ a0: UnsafeMutableRawPointer?, _ a1: UInt64) {
        var a0 = a0, a1 = a1
        var ret: UInt64 = 0
        withUnsafeMutablePointer(to: &a0) { p0 in
            withUnsafeMutablePointer(to: &a1) { p1 in
                var args: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) = (UnsafeMutableRawPointer(p0), UnsafeMutableRawPointer(p1))
                withUnsafeMutablePointer(to: &args) { a in
                    a.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 2) { raw(&ret, $0) }
                }
            }
        }
    }

    func callStatus(_ a0: UnsafeMutableRawPointer?, _ a1: UnsafeMutableRawPointer?, _ a2: UnsafeMutableRawPointer?) -> Int32 {
        var a0 = a0, a1 = a1, a2 = a2
        var ret: UInt64 = 0
        withUnsafeMutablePointer(to: &a0) { p0 in
            withUnsafeMutablePointer(to: &a1) { p1 in
                withUnsafeMutablePointer(to: &a2) { p2 in
                    var args = (UnsafeMutableRawPointer(p0), UnsafeMutableRawPointer(p1), UnsafeMutableRawPointer(p2))
                    withUnsafeMutablePointer(to: &args) { a in
                        a.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 3) { raw(&ret, $0) }
                    }
                }
            }
        }
        return Self.status(ret)
    }

    /// `gw_status invoke(gw_instance *, uint64_t, gw_operation, const uint8_t *, size_t)`.
    func callInvoke(_ instance: UnsafeMutableRawPointer?, _ callID: UInt64, _ operation: Int32, _ request: UnsafeRawPointer?, _ length: Int) -> Int32 {
        var a0 = instance, a1 = callID, a2 = operation, a3 = request, a4 = UInt64(length)
        var ret: UInt64 = 0
        withUnsafeMutablePointer(to: &a0) { p0 in
            withUnsafeMutablePointer(to: &a1) { p1 in
                withUnsafeMutablePointer(to: &a2) { p2 in
                    withUnsafeMutablePointer(to: &a3) { p3 in
                        withUnsafeMutablePointer(to: &a4) { p4 in
                            var args = (UnsafeMutableRawPointer(p0), UnsafeMutableRawPointer(p1), UnsafeMutableRawPointer(p2),
                                        UnsafeMutableRawPointer(p3), UnsafeMutableRawPointer(p4))
                            withUnsafeMutablePointer(to: &args) { a in
                                a.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 5) { raw(&ret, $0) }
                            }
                        }
                    }
                }
            }
        }
        return Self.status(ret)
    }

    /// `gw_status create(const gw_host_api *, const uint8_t *, size_t, gw_instance **, uint8_t **, size_t *)`.
    func callCreate(_ host: UnsafeRawPointer, _ config: UnsafeRawPointer?, _ configLength: Int,
                    _ outInstance: UnsafeMutableRawPointer, _ outError: UnsafeMutableRawPointer, _ outErrorLength: UnsafeMutableRawPointer) -> Int32 {
        var a0: UnsafeRawPointer? = host, a1 = config, a2 = UInt64(configLength)
        var a3: UnsafeMutableRawPointer? = outInstance, a4: UnsafeMutableRawPointer? = outError, a5: UnsafeMutableRawPointer? = outErrorLength
        var ret: UInt64 = 0
        withUnsafeMutablePointer(to: &a0) { p0 in
            withUnsafeMutablePointer(to: &a1) { p1 in
                withUnsafeMutablePointer(to: &a2) { p2 in
                    withUnsafeMutablePointer(to: &a3) { p3 in
                        withUnsafeMutablePointer(to: &a4) { p4 in
                            withUnsafeMutablePointer(to: &a5) { p5 in
                                var args = (UnsafeMutableRawPointer(p0), UnsafeMutableRawPointer(p1), UnsafeMutableRawPointer(p2),
                                            UnsafeMutableRawPointer(p3), UnsafeMutableRawPointer(p4), UnsafeMutableRawPointer(p5))
                                withUnsafeMutablePointer(to: &args) { a in
                                    a.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 6) { raw(&ret, $0) }
                                }
                            }
                        }
                    }
                }
            }
        }
        return Self.status(ret)
    }

    /// `void gw_http_callback(void *user_data, gw_status, const uint8_t *, size_t)`.
    func callHTTPCallback(_ userData: UnsafeMutableRawPointer?, _ status: Int32, _ body: UnsafeRawPointer?, _ length: Int) {
        var a0 = userData, a1 = status, a2 = body, a3 = UInt64(length)
        var ret: UInt64 = 0
        withUnsafeMutablePointer(to: &a0) { p0 in
            withUnsafeMutablePointer(to: &a1) { p1 in
                withUnsafeMutablePointer(to: &a2) { p2 in
                    withUnsafeMutablePointer(to: &a3) { p3 in
                        var args = (UnsafeMutableRawPointer(p0), UnsafeMutableRawPointer(p1), UnsafeMutableRawPointer(p2), UnsafeMutableRawPointer(p3))
                        withUnsafeMutablePointer(to: &args) { a in
                            a.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 4) { raw(&ret, $0) }
                        }
                    }
                }
            }
        }
    }
}
