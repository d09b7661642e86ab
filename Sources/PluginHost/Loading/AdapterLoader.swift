import CGatewayABI
import Foundation
import GatewayPayloads
import Logging

/// Loads one adapter from one validated manifest, step by step, refusing it
/// with a typed ``LoadFailure`` at the first step that fails:
///
/// 1. resolve `library` on the search path;
/// 2. read its bytes, check them against `sha256` when pinned;
/// 3. write those same bytes to the content-addressed store and
///    `dlopen(RTLD_NOW | RTLD_LOCAL)` that copy (never `dlclose`d);
/// 4. find the entry symbol and negotiate the ABI version;
/// 5. compare the adapter's id and version with the manifest's;
/// 6. `create` an instance with a host services table bound to it;
/// 7. `describe` it, and refuse a manifest that claims a method or operation
///    the adapter does not implement.
public struct AdapterLoader: Sendable {
    public var searchPath: PluginSearchPath
    public var store: LibraryStore
    public var egressClient: any HTTPEgressClient
    public var logger: Logger

    public init(searchPath: PluginSearchPath = PluginSearchPath(), store: LibraryStore,
                egressClient: any HTTPEgressClient = AsyncHTTPEgressClient.shared,
                logger: Logger = Logger(label: "gateway.plugin-host")) {
        self.searchPath = searchPath
        self.store = store
        self.egressClient = egressClient
        self.logger = logger
    }

    /// Loads the adapter of `manifest`, read from the file at `manifestURL`.
    public func load(_ manifest: Manifest, from manifestURL: URL) -> Result<AdapterInstance, LoadFailure> {
        do {
            return .success(try loadThrowing(manifest, from: manifestURL))
        } catch let failure as LoadFailure {
            return .failure(failure)
        } catch {
            return .failure(.libraryUnreadable(path: manifest.library, detail: "\(error)"))
        }
    }

    private func loadThrowing(_ manifest: Manifest, from manifestURL: URL) throws -> AdapterInstance {
        guard manifest.isolation == .inProcess else { throw LoadFailure.isolationUnsupported(manifest.isolation.rawValue) }
        let manifestDirectory = manifestURL.deletingLastPathComponent()

        // 1-2. Find the library, read it, check the pin.
        let source = try searchPath.resolve(manifest.library, manifestDirectory: manifestDirectory).get()
        let bytes: Data
        do { bytes = try Data(contentsOf: source) }
        catch { throw LoadFailure.libraryUnreadable(path: source.path, detail: error.localizedDescription) }
        let digest = LibraryStore.sha256Hex(bytes)
        if let pinned = manifest.sha256, pinned != digest {
            throw LoadFailure.digestMismatch(path: source.path, expected: pinned, actual: digest)
        }

        // 3. Map the checked bytes, from the content-addressed copy.
        let copy: URL
        do { copy = try store.copy(bytes, digest: digest) }
        catch { throw LoadFailure.libraryUnreadable(path: store.directory.path, detail: "cannot write the content-addressed copy: \(error)") }
        _ = dlerror()
        guard let handle = dlopen(copy.path, RTLD_NOW | RTLD_LOCAL) else {
            throw LoadFailure.openFailed(path: source.path, detail: dlerror().map { String(cString: $0) } ?? "unknown error")
        }

        // 4. Entry point and negotiation.
        guard let entry = dlsym(handle, manifest.entry) else {
            throw LoadFailure.missingSymbol(symbol: manifest.entry, library: source.path)
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
        let manifestVersion = "\(manifest.abiMajor).\(manifest.abiMinor)"
        if negotiation.adapter_abi_major != SignatureTable.hostMajor || manifest.abiMajor != negotiation.adapter_abi_major {
            throw LoadFailure.abiMismatch(host: hostVersion, adapter: adapterVersion, manifest: manifestVersion)
        }
        guard status == 0 else { throw LoadFailure.negotiationFailed(status: ABIStatus(rawValue: status)) }
        guard let table = negotiation.adapter_api.map(UnsafeRawPointer.init) else {
            throw LoadFailure.malformedTable(detail: "negotiation succeeded but returned no function table")
        }

        // 5. Identity.
        let tableSize = Int(table.load(as: UInt32.self))
        let idOffset = MemoryLayout<gw_adapter_api>.offset(of: \gw_adapter_api.id)!
        let versionOffset = MemoryLayout<gw_adapter_api>.offset(of: \gw_adapter_api.version)!
        guard tableSize >= versionOffset + 8 else {
            throw LoadFailure.malformedTable(detail: "struct_size \(tableSize) is too small to hold id and version")
        }
        guard let idPointer = table.load(fromByteOffset: idOffset, as: UnsafePointer<CChar>?.self),
              let versionPointer = table.load(fromByteOffset: versionOffset, as: UnsafePointer<CChar>?.self)
        else { throw LoadFailure.malformedTable(detail: "id or version is NULL") }
        let adapterID = String(cString: idPointer)
        let adapterVersionString = String(cString: versionPointer)
        guard adapterID == manifest.id else { throw LoadFailure.idMismatch(manifest: manifest.id, adapter: adapterID) }
        guard adapterVersionString == manifest.version else {
            throw LoadFailure.versionMismatch(manifest: manifest.version, adapter: adapterVersionString)
        }
        let functions = try Self.functions(in: table, size: tableSize, major: negotiation.adapter_abi_major)

        // 6. Create, with a host table bound to this instance.
        let context = HostContext(manifest: manifest, manifestDirectory: manifestDirectory, egressClient: egressClient, logger: logger)
        if let problem = context.egressSetupProblem { throw LoadFailure.tlsUnusable(problem.message) }
        // A load that fails from here on gives its share of the egress pool back.
        var loaded = false
        defer { if !loaded { Task { await context.closeEgress() } } }
        let hostTable = HostServiceTable(context: context, abiMajor: negotiation.adapter_abi_major, abiMinor: negotiation.adapter_abi_minor)
        var instance: UnsafeMutableRawPointer?
        var errorBuffer: UnsafeMutableRawPointer?
        var errorLength = 0
        let config = Array(manifest.configJSON.utf8)
        let createStatus = config.withUnsafeBytes { configBytes in
            functions.create.callCreate(hostTable.pointer, configBytes.baseAddress, configBytes.count, &instance, &errorBuffer, &errorLength)
        }
        var createMessage = "(no message)"
        if let errorBuffer {
            createMessage = String(decoding: UnsafeRawBufferPointer(start: errorBuffer, count: errorLength), as: UTF8.self)
            functions.free.callVoid(errorBuffer)
        }
        guard createStatus == 0 else { throw LoadFailure.createFailed(status: ABIStatus(rawValue: createStatus), message: createMessage) }
        guard let instance else { throw LoadFailure.createFailed(status: .ok, message: "create returned GW_OK but no instance") }

        // 7. Describe and cross-check.
        let description: AdapterDescription
        do {
            description = try Self.describe(instance, functions)
        } catch {
            functions.destroy.callVoid(instance)
            throw error
        }
        let missingMethods = manifest.methods.filter { !description.methods.contains($0) }
        let missingOperations = manifest.operations.filter { !description.operations.contains($0) }.map(\.rawValue)
        if !missingMethods.isEmpty || !missingOperations.isEmpty {
            functions.destroy.callVoid(instance)
            throw LoadFailure.claimsUnimplemented(methods: missingMethods, operations: missingOperations)
        }
        if description.id != manifest.id || description.version != manifest.version {
            functions.destroy.callVoid(instance)
            throw LoadFailure.describeFailed(detail: "describe() reports \(description.id) \(description.version), the table \(adapterID) \(adapterVersionString)")
        }
        logger.info("loaded adapter \(manifest.id) \(manifest.version) (ABI \(adapterVersion), sha256 \(digest.prefix(12)))")
        loaded = true
        return AdapterInstance(
            manifest: manifest, description: description, abiMajor: negotiation.adapter_abi_major,
            abiMinor: negotiation.adapter_abi_minor, libraryPath: copy.path, librarySHA256: digest,
            functions: functions, instance: instance, context: context, hostTable: hostTable)
    }

    /// Reads the adapter table of ABI `major` by its signature table; members
    /// beyond `size` count as NULL.
    static func functions(in table: UnsafeRawPointer, size: Int, major: UInt32) throws -> AdapterFunctions {
        guard let slots = SignatureTable.adapterTable(major: major) else {
            throw LoadFailure.negotiationFailed(status: .version)
        }
        var found: [AdapterFunction: ForeignFunction] = [:]
        for (function, slot) in slots {
            let pointer = slot.offset + 8 <= size ? table.load(fromByteOffset: slot.offset, as: UnsafeRawPointer?.self) : nil
            if let pointer {
                found[function] = ForeignFunction(address: pointer, signature: slot.signature)
            } else if slot.required {
                throw LoadFailure.missingFunction(name: slot.name)
            }
        }
        return AdapterFunctions(
            create: found[.create]!, describe: found[.describe]!, invoke: found[.invoke]!,
            cancel: found[.cancel], destroy: found[.destroy]!, free: found[.free]!)
    }

    static func describe(_ instance: UnsafeMutableRawPointer, _ functions: AdapterFunctions) throws -> AdapterDescription {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = withUnsafeMutablePointer(to: &buffer) { b in
            withUnsafeMutablePointer(to: &length) { l in
                functions.describe.callStatus(instance, UnsafeMutableRawPointer(b), UnsafeMutableRawPointer(l))
            }
        }
        guard status == 0, let buffer else {
            throw LoadFailure.describeFailed(detail: "returned \(ABIStatus(rawValue: status))\(buffer == nil ? " and no document" : "")")
        }
        let document = Data(bytes: buffer, count: length)
        functions.free.callVoid(buffer)
        // Operation names this host does not know (a newer minor version's) are ignored.
        struct Lenient: Decodable {
            var id: String
            var version: String
            var methods: [String]
            var operations: [String]
            var currencies: [String]?
        }
        do {
            let d = try JSONDecoder().decode(Lenient.self, from: document)
            return AdapterDescription(id: d.id, version: d.version, methods: d.methods,
                                      operations: d.operations.compactMap(PaymentOperation.init(rawValue:)), currencies: d.currencies)
        } catch {
            throw LoadFailure.describeFailed(detail: "the document is not a valid description: \(AdapterInstance.decodingSummary(error))")
        }
    }
}
