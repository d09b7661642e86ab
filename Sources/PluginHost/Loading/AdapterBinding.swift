import PaymentFields
import CGatewayABI
import Foundation
import GatewayPayloads

/// One adapter library mapped and negotiated: its function table, the ABI
/// version both sides agreed on, and the identity it reports. The steps the
/// host runs in process and `gateway-runner` runs in its own process, the same
/// code on both sides.
package struct AdapterBinding: Sendable {
    /// What a manifest says the library must be.
    package struct Expectation: Sendable {
        package var id: String
        package var version: String
        package var entry: String
        package var abiMajor: UInt32
        package var abiMinor: UInt32

        package init(_ manifest: Manifest) {
            self.init(id: manifest.id, version: manifest.version, entry: manifest.entry, abiMajor: manifest.abiMajor, abiMinor: manifest.abiMinor)
        }

        package init(id: String, version: String, entry: String, abiMajor: UInt32, abiMinor: UInt32) {
            self.id = id
            self.version = version
            self.entry = entry
            self.abiMajor = abiMajor
            self.abiMinor = abiMinor
        }
    }

    let functions: AdapterFunctions
    package let abiMajor: UInt32
    package let abiMinor: UInt32

    /// Maps `path` (`RTLD_NOW | RTLD_LOCAL`, never `dlclose`d), finds the entry
    /// symbol, negotiates the ABI version and checks the adapter's id and
    /// version against `expected`. `sourcePath` names the library in errors.
    package static func bind(path: String, sourcePath: String, expected: Expectation) throws(LoadFailure) -> AdapterBinding {
        _ = dlerror()
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw .openFailed(path: sourcePath, detail: dlerror().map { String(cString: $0) } ?? "unknown error")
        }
        guard let entry = dlsym(handle, expected.entry) else {
            throw .missingSymbol(symbol: expected.entry, library: sourcePath)
        }
        var negotiation = gw_negotiation()
        negotiation.struct_size = UInt32(MemoryLayout<gw_negotiation>.size)
        negotiation.host_abi_major = SignatureTable.hostMajor
        negotiation.host_abi_minor = SignatureTable.hostMinor
        let status = withUnsafeMutablePointer(to: &negotiation) { pointer in
            ForeignFunction(address: entry, signature: SignatureTable.entry).callStatus(UnsafeMutableRawPointer(pointer))
        }
        let adapterVersion = "\(negotiation.adapter_abi_major).\(negotiation.adapter_abi_minor)"
        let hostVersion = "\(SignatureTable.hostMajor).\(SignatureTable.hostMinor)"
        let manifestVersion = "\(expected.abiMajor).\(expected.abiMinor)"
        if negotiation.adapter_abi_major != SignatureTable.hostMajor || expected.abiMajor != negotiation.adapter_abi_major {
            throw .abiMismatch(host: hostVersion, adapter: adapterVersion, manifest: manifestVersion)
        }
        guard status == 0 else { throw .negotiationFailed(status: ABIStatus(rawValue: status)) }
        guard let table = negotiation.adapter_api.map(UnsafeRawPointer.init) else {
            throw .malformedTable(detail: "negotiation succeeded but returned no function table")
        }

        let tableSize = Int(table.load(as: UInt32.self))
        let idOffset = MemoryLayout<gw_adapter_api>.offset(of: \gw_adapter_api.id)!
        let versionOffset = MemoryLayout<gw_adapter_api>.offset(of: \gw_adapter_api.version)!
        guard tableSize >= versionOffset + 8 else {
            throw .malformedTable(detail: "struct_size \(tableSize) is too small to hold id and version")
        }
        guard let idPointer = table.load(fromByteOffset: idOffset, as: UnsafePointer<CChar>?.self),
              let versionPointer = table.load(fromByteOffset: versionOffset, as: UnsafePointer<CChar>?.self)
        else { throw .malformedTable(detail: "id or version is NULL") }
        let adapterID = String(cString: idPointer)
        let adapterVersionString = String(cString: versionPointer)
        guard adapterID == expected.id else { throw .idMismatch(manifest: expected.id, adapter: adapterID) }
        guard adapterVersionString == expected.version else {
            throw .versionMismatch(manifest: expected.version, adapter: adapterVersionString)
        }
        return AdapterBinding(
            functions: try functions(in: table, size: tableSize, major: negotiation.adapter_abi_major),
            abiMajor: negotiation.adapter_abi_major, abiMinor: negotiation.adapter_abi_minor)
    }

    /// `create`s an instance bound to `hostTable` with the manifest's `config`
    /// document, and `describe`s it. A failed describe destroys the instance.
    package func instantiate(hostTable: HostServiceTable, config: String) throws(LoadFailure) -> (UnsafeMutableRawPointer, AdapterDescription) {
        var instance: UnsafeMutableRawPointer?
        var errorBuffer: UnsafeMutableRawPointer?
        var errorLength = 0
        let config = Array(config.utf8)
        let createStatus = config.withUnsafeBytes { configBytes in
            functions.create.callCreate(hostTable.pointer, configBytes.baseAddress, configBytes.count, &instance, &errorBuffer, &errorLength)
        }
        var createMessage = "(no message)"
        if let errorBuffer {
            // Capped, and card numbers masked: it goes to logs and to ops.
            // The JSON error document {"message": ...} or plain text (the header's two forms).
            let whole = Data(UnsafeRawBufferPointer(start: errorBuffer, count: max(0, errorLength)))
            let text = (try? ErrorDocument(jsonData: whole))?.message ?? String(decoding: whole, as: UTF8.self)
            createMessage = Redaction.shown(text.utf8, limit: 4096)
            functions.free.callVoid(errorBuffer)
        }
        guard createStatus == 0 else { throw .createFailed(status: ABIStatus(rawValue: createStatus), message: createMessage) }
        guard let instance else { throw .createFailed(status: .ok, message: "create returned GW_OK but no instance") }
        do {
            return (instance, try describe(instance))
        } catch {
            functions.destroy.callVoid(instance)
            throw error
        }
    }

    /// The adapter's `invoke`: `GW_OK` when it accepted the call.
    package func invoke(_ instance: UnsafeMutableRawPointer, _ callID: UInt64, _ operation: Int32, _ request: UnsafeRawBufferPointer) -> Int32 {
        functions.invoke.callInvoke(instance, callID, operation, request.baseAddress, request.count)
    }

    /// The adapter's `cancel`, when it has one.
    package func cancel(_ instance: UnsafeMutableRawPointer, _ callID: UInt64) {
        functions.cancel?.callVoid(instance, callID)
    }

    /// Has the adapter release `instance` (every completion it owed has arrived).
    package func destroy(_ instance: UnsafeMutableRawPointer) {
        functions.destroy.callVoid(instance)
    }

    /// Reads the adapter table of ABI `major` by its signature table; members
    /// beyond `size` count as NULL.
    static func functions(in table: UnsafeRawPointer, size: Int, major: UInt32) throws(LoadFailure) -> AdapterFunctions {
        guard let slots = SignatureTable.adapterTable(major: major) else {
            throw .negotiationFailed(status: .version)
        }
        var found: [AdapterFunction: ForeignFunction] = [:]
        for (function, slot) in slots {
            let pointer = slot.offset + 8 <= size ? table.load(fromByteOffset: slot.offset, as: UnsafeRawPointer?.self) : nil
            if let pointer {
                found[function] = ForeignFunction(address: pointer, signature: slot.signature)
            } else if slot.required {
                throw .missingFunction(name: slot.name)
            }
        }
        return AdapterFunctions(
            create: found[.create]!, describe: found[.describe]!, invoke: found[.invoke]!,
            cancel: found[.cancel], destroy: found[.destroy]!, free: found[.free]!)
    }

    /// The instance's description document, read through `describe` and released with `free`.
    func describe(_ instance: UnsafeMutableRawPointer) throws(LoadFailure) -> AdapterDescription {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = withUnsafeMutablePointer(to: &buffer) { b in
            withUnsafeMutablePointer(to: &length) { l in
                functions.describe.callStatus(instance, UnsafeMutableRawPointer(b), UnsafeMutableRawPointer(l))
            }
        }
        guard status == 0, let buffer else {
            throw .describeFailed(detail: "returned \(ABIStatus(rawValue: status))\(buffer == nil ? " and no document" : "")")
        }
        let document = Data(bytes: buffer, count: length)
        functions.free.callVoid(buffer)
        return try Self.description(from: document, negotiatedMinor: min(abiMinor, SignatureTable.hostMinor))
    }

    /// Decodes a description document. Operation names this host does not
    /// know (a newer minor version's) are ignored, and so are operations of a
    /// minor version later than `negotiatedMinor` (the lower of the host's and
    /// the adapter's): the host never invokes those.
    package static func description(from document: Data, negotiatedMinor: UInt32 = SignatureTable.hostMinor) throws(LoadFailure) -> AdapterDescription {
        // The codec drops the operation names it does not know; other members it does not know are skipped.
        let description: AdapterDescription
        do { description = try AdapterDescription(jsonData: document) } catch {
            throw .describeFailed(detail: "the document is not a valid description: \(error)")
        }
        return description.limited(toMinor: negotiatedMinor)
    }
}

/// LOAD's `expected` (``RunnerLoad``).
extension AdapterBinding.Expectation: JSONPayload {
    package func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("id", id)
        w.member("version", version)
        w.member("entry", entry)
        w.member("abiMajor", Int64(abiMajor))
        w.member("abiMinor", Int64(abiMinor))
        w.endObject()
    }

    package init(parsing p: inout JSONParser) throws(JSONParseError) {
        var id: String?, version: String?, entry: String?, major: UInt32?, minor: UInt32?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "id": id = try p.string()
            case "version": version = try p.string()
            case "entry": entry = try p.string()
            case "abiMajor": major = try HandshakeJSON.integer(&p, as: UInt32.self)
            case "abiMinor": minor = try HandshakeJSON.integer(&p, as: UInt32.self)
            default: try p.skipValue()
            }
        }
        self.init(
            id: try required(id, "id", p), version: try required(version, "version", p), entry: try required(entry, "entry", p),
            abiMajor: try required(major, "abiMajor", p), abiMinor: try required(minor, "abiMinor", p))
    }
}

extension AdapterDescription {
    /// The description without operations of a minor version later than
    /// `minor` (the negotiated one): the host never invokes those. Applied in
    /// process, and again by the host to what a runner reports.
    package func limited(toMinor minor: UInt32) -> AdapterDescription {
        var limited = self
        limited.operations = operations.filter { $0.introducedInMinor <= minor }
        return limited
    }
}
