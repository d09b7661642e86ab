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
///    `dlopen(RTLD_NOW | RTLD_LOCAL)` that copy (never `dlclose`d): in the
///    host, or, under `"isolation": "process"`, in a `gateway-runner` process
///    that checks the copy's sha256 again through the descriptor it maps;
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
    /// The `gateway-runner` executable for `"isolation": "process"`; nil: found
    /// by ``RunnerLocator`` (`$GATEWAY_RUNNER`, then beside the running executable).
    public var runnerExecutable: String? = nil
    /// Sandbox layers whose refusal by the kernel every runner simulates
    /// (comma-separated layer names, or `user` for every namespace): to see
    /// what an adapter does where a kernel refuses them. From
    /// `$GATEWAY_SANDBOX_SIMULATE_REFUSAL` by default. It can only take layers
    /// away, and an adapter without a layer its manifest does not except is
    /// not started.
    public var simulatedSandboxRefusals: String? = ProcessInfo.processInfo.environment["GATEWAY_SANDBOX_SIMULATE_REFUSAL"]
    /// What the `wallet_decrypt` service trusts (Apple Root CA - G3 unless a test says otherwise).
    public var wallets = WalletSettings()

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

        // 3. The checked bytes, as a content-addressed copy: what is mapped.
        let copy: URL
        do { copy = try store.copy(bytes, digest: digest) }
        catch { throw LoadFailure.libraryUnreadable(path: store.directory.path, detail: "cannot write the content-addressed copy: \(error)") }

        // The same bytes, sealed in memory: what is mapped, in process or in a runner.
        let sealed = try SealedLibrary.sealing(bytes, sha256: digest)

        let context = HostContext(manifest: manifest, manifestDirectory: manifestDirectory, egressClient: egressClient, wallets: wallets, logger: logger)
        if let problem = context.egressSetupProblem { throw LoadFailure.tlsUnusable(problem.message) }
        // A load that fails from here on gives its share of the egress pool back.
        var loaded = false
        defer { if !loaded { Task { await context.closeEgress() } } }

        // 4-7, in this process or in a runner.
        let connection: any AdapterConnection
        let description: AdapterDescription
        let abi: (major: UInt32, minor: UInt32)
        let expected = AdapterBinding.Expectation(manifest)
        switch manifest.isolation {
        case .inProcess:
            let binding = try AdapterBinding.bind(path: sealed.path, sourcePath: source.path, expected: expected)
            let hostTable = HostServiceTable(backend: context, abiMajor: binding.abiMajor, abiMinor: binding.abiMinor)
            let (instance, described) = try binding.instantiate(hostTable: hostTable, config: manifest.configJSON)
            if let refusal = Self.crossCheck(described, manifest) {
                binding.destroy(instance)
                throw refusal
            }
            connection = InProcessConnection(binding: binding, instance: instance, hostTable: hostTable, context: context)
            description = described
            abi = (binding.abiMajor, binding.abiMinor)
        case .process:
            let runner = try RunnerConnection.launch(
                RunnerConnection.Launch(
                    expected: expected, libraryCopy: copy.path, sourcePath: source.path, sha256: digest,
                    config: manifest.configJSON, limits: manifest.limits, network: manifest.isolationNetwork,
                    exceptions: manifest.sandboxExceptions, library: sealed, simulatedRefusals: simulatedSandboxRefusals),
                context: context, runner: runnerExecutable)
            if let refusal = Self.crossCheck(runner.description, manifest) {
                runner.abandon(reason: "refused at load")
                throw refusal
            }
            connection = runner
            description = runner.description
            abi = (runner.abiMajor, runner.abiMinor)
        }
        logger.info("loaded adapter \(manifest.id) \(manifest.version) (ABI \(abi.major).\(abi.minor), sha256 \(digest.prefix(12)), \(manifest.isolation.rawValue))")
        loaded = true
        return AdapterInstance(
            manifest: manifest, description: description, abiMajor: abi.major, abiMinor: abi.minor,
            libraryPath: copy.path, librarySHA256: digest, connection: connection, context: context)
    }

    /// Why the host refuses an adapter whose description does not back its
    /// manifest's claims, or nil. Runs in the host under either isolation.
    static func crossCheck(_ description: AdapterDescription, _ manifest: Manifest) -> LoadFailure? {
        let missingMethods = manifest.methods.filter { !description.methods.contains($0) }
        let missingOperations = manifest.operations.filter { !description.operations.contains($0) }.map(\.rawValue)
        if !missingMethods.isEmpty || !missingOperations.isEmpty {
            return .claimsUnimplemented(methods: missingMethods, operations: missingOperations)
        }
        if description.id != manifest.id || description.version != manifest.version {
            return .describeFailed(detail: "describe() reports \(description.id) \(description.version), the manifest \(manifest.id) \(manifest.version)")
        }
        return nil
    }
}
