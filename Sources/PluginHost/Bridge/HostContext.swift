import PaymentFields
import Foundation
import GatewayPayloads
import Logging
import Synchronization

/// Everything the host services of one adapter instance are bound to: its
/// identity and logger, its secrets, its egress allowlist, its calls in flight.
final class HostContext: HostServiceBackend {
    let adapterID: String
    let logger: Logger
    let secrets: SecretResolver
    /// The secrets only host services use (the `tls` client key and
    /// certificates, the wallet merchant keys): never handed to a runner.
    let hostOnlySecrets: Set<String>
    let egressPolicy: EgressPolicy
    let egressClient: any HTTPEgressClient
    /// The `tls` settings read from the secrets when the instance was created,
    /// or why they cannot be used (then every https request is refused).
    let egressTLS: Result<EgressTLS, EgressSetupError>
    private let egressClosed = Atomic<Bool>(false)
    let calls: CallTable
    let wallets: WalletService
    /// `http_send` and `wallet_decrypt` requests in flight (destroy waits for them).
    let callbackRequests = CallbackRequests()

    /// Why this adapter must be refused at load: its `tls` secrets are
    /// missing or not valid PEM (the message names the secret, never its value).
    var egressSetupProblem: EgressSetupError? {
        if case .failure(let problem) = egressTLS { return problem }
        return nil
    }

    init(manifest: Manifest, manifestDirectory: URL, egressClient: any HTTPEgressClient, wallets: WalletSettings = WalletSettings(), logger: Logger) {
        adapterID = manifest.id
        var logger = logger
        logger[metadataKey: "adapter"] = "\(manifest.id)"
        self.logger = logger
        secrets = SecretResolver(references: manifest.secrets, manifestDirectory: manifestDirectory)
        hostOnlySecrets = Set([manifest.tls?.clientCertificate, manifest.tls?.clientKey, manifest.tls?.caCertificate].compactMap { $0 }
            + [WalletService.appleCertificate, WalletService.appleKey, WalletService.googleKey, WalletService.googleRecipient])
        egressPolicy = EgressPolicy(manifest.egress)
        self.egressClient = egressClient
        self.wallets = WalletService(settings: wallets, secrets: secrets, logger: logger)
        let resolver = secrets
        let named = EgressAddress.named(in: manifest.egress)
        let tls = Result { () throws(EgressSetupError) in
            var settings = try EgressTLS.load(manifest.tls, secrets: resolver)
            settings.namedAddresses = named
            return settings
        }
        egressTLS = tls
        switch tls {
        case .success(let tls): egressClient.retain(tls)
        case .failure(let problem): logger.error("adapter \(manifest.id) cannot use its tls settings: \(problem.message)")
        }
        let violationLogger = logger
        calls = CallTable { violation in
            violationLogger.error("adapter protocol violation: \(violation)")
        }
    }

    // MARK: log

    /// The longest log line an adapter writes (in either isolation): more is cut.
    static let maxLogLine = 8192

    func log(level: Int32, message: UnsafeRawBufferPointer) {
        // One line, at most maxLogLine bytes: a line break would let an
        // adapter forge host log lines.
        let text = Redaction.shown(message, limit: Self.maxLogLine)
        let swiftLevel: Logger.Level = switch level {
        case ...0: .trace
        case 1: .debug
        case 2: .info
        case 3: .warning
        default: .error
        }
        logger.log(level: swiftLevel, "\(text)")
    }

    // MARK: secret_get

    func secret(named name: String, into out: UnsafeMutableRawPointer?, capacity: Int, length: UnsafeMutablePointer<Int>?) -> Int32 {
        guard var value = secrets.value(of: name) else {
            logger.warning("adapter asked for secret \"\(name)\", which its manifest does not declare or which has no value")
            return ABIStatus.notFound.rawValue
        }
        defer { for i in value.indices { value[i] = 0 } }
        length?.pointee = value.count
        guard value.count <= capacity, let out else { return ABIStatus.bufferTooSmall.rawValue }
        value.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: value.count) }
        return 0
    }

    /// What an isolated adapter's runner holds, to answer `secret_get` from
    /// its own memory (no thread waits on the host): every secret the
    /// manifest declares that resolves to a value now, but those only host
    /// services use (``hostOnlySecrets``), which the runner asks the host for
    /// as before. Resolved each time a runner starts: a rotated value reaches
    /// a runner when it starts again (a restart, a reload, an upgrade).
    func runnerSecrets() -> [String: [UInt8]] {
        var held: [String: [UInt8]] = [:]
        for name in secrets.references.keys where !hostOnlySecrets.contains(name) {
            if let value = secrets.value(of: name) { held[name] = value }
        }
        return held
    }

    // MARK: complete

    func complete(callID: UInt64, status: Int32, result: UnsafeRawBufferPointer) {
        guard result.count <= Self.maxResultBytes else {
            calls.complete(callID: callID, status: ABIStatus.outcomeUnknown.rawValue, payload: Self.tooLarge(result.count))
            return
        }
        calls.complete(callID: callID, status: status, payload: Data(result))
    }

    static var maxResultBytes: Int { ResultLimit.maxBytes }

    /// The error document of a result over ``maxResultBytes``.
    static func tooLarge(_ size: Int?) -> Data {
        let size = size.map { "\($0) bytes" } ?? "more bytes"
        return Data(ErrorDocument(message: "the adapter's result of \(size) exceeds the host's limit of \(maxResultBytes) bytes; outcome unknown").jsonBytes())
    }

    // MARK: http_send, wallet_decrypt

    func httpSend(request: UnsafeRawBufferPointer, callback: UnsafeRawPointer?, userData: UnsafeMutableRawPointer?) {
        answerLater(request, callback: callback, userData: userData, service: "http_send") { await self.performEgress($0) }
    }

    func walletDecrypt(request: UnsafeRawBufferPointer, callback: UnsafeRawPointer?, userData: UnsafeMutableRawPointer?) {
        let wallets = self.wallets
        answerLater(request, callback: callback, userData: userData, service: "wallet_decrypt") { await wallets.decrypt($0) }
    }

    /// A callback-style service: `perform` runs in a task, and the callback
    /// fires once with its status and document, never inside the call itself.
    private func answerLater(_ request: UnsafeRawBufferPointer, callback: UnsafeRawPointer?, userData: UnsafeMutableRawPointer?, service: String,
                             perform: @escaping @Sendable (Data) async -> (Int32, Data)) {
        let request = Data(request)
        guard let callback else {
            logger.error("adapter called \(service) without a callback; request dropped")
            return
        }
        let reply = ForeignFunction(address: callback, signature: SignatureTable.httpCallback)
        let userData = SendablePointer(userData)
        serve(service) {
            let (status, document) = await perform(request)
            // On a dispatch thread, as in a runner: the adapter's callback may
            // block, and must not hold a thread of the host's small task pool.
            await withCheckedContinuation { (returned: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    document.withUnsafeBytes { bytes in
                        reply.callHTTPCallback(userData.pointer, status, bytes.baseAddress, bytes.count)
                    }
                    returned.resume()
                }
            }
        }
    }

    /// Runs one callback-style request (`answer` hands its answer back), or,
    /// once the instance is being destroyed, drops it and says so.
    func serve(_ service: String, _ answer: @escaping @Sendable () async -> Void) {
        guard callbackRequests.start(answer) else {
            calls.report("\(service) called while the instance is being destroyed (after its last completion); no callback will run")
            return
        }
    }

    /// Runs one `http_send` request document through policy and the egress
    /// client; returns the callback's status and document.
    func performEgress(_ body: Data) async -> (Int32, Data) {
        func failure(_ f: EgressFailure) -> (Int32, Data) {
            (f.status, Data(ErrorDocument(message: f.message).jsonBytes()))
        }
        guard body.count <= RequestLimit.maxBytes else {
            logger.warning("egress refused: the request document of \(body.count) bytes is over \(RequestLimit.maxBytes)")
            return failure(EgressFailure(.denied, "the request document of \(body.count) bytes is over the host's limit of \(RequestLimit.maxBytes) bytes; nothing was sent"))
        }
        guard let request = try? HTTPSendRequest(jsonData: body), let url = URL(string: request.url) else {
            logger.warning("egress refused: the request document is not valid")
            return failure(EgressFailure(.denied, "the request document is not valid JSON of the http_send schema"))
        }
        let endpoint: Manifest.Endpoint
        switch egressPolicy.check(url) {
        case .failure(let refusal):
            logger.warning("egress refused: \(refusal.message)")
            return failure(refusal)
        case .success(let allowed):
            endpoint = allowed
        }
        let tls: EgressTLS
        switch egressTLS {
        case .failure(let problem):
            logger.warning("egress to \(endpoint) refused: the adapter's tls settings are unusable: \(problem.message)")
            return failure(EgressFailure(.denied, "the adapter's tls settings are unusable: \(problem.message)"))
        case .success(let settings):
            tls = settings
        }
        var bytes = Data()
        if let encoded = request.body {
            guard let decoded = Data(base64Encoded: encoded) else {
                logger.warning("egress to \(endpoint) refused: the request body is not base64")
                return failure(EgressFailure(.denied, "the request body is not base64"))
            }
            bytes = decoded
        }
        let method = request.method.uppercased()
        let outgoing = EgressHTTPRequest(
            method: method, url: url, endpoint: endpoint,
            headers: request.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) },
            body: bytes, timeout: .milliseconds(min(max(request.timeoutMilliseconds ?? 10_000, 100), 120_000)))
        let path = url.path.isEmpty ? "/" : url.path
        let started = ContinuousClock.now
        do {
            let response = try await egressClient.send(outgoing, tls: tls)
            if logger.logLevel <= .debug {
                let masking = egressLogMasking()
                logger.debug("egress \(method) \(endpoint)\(masking.text(path)) -> \(response.status) in \(ContinuousClock.now - started); request headers \(masking.headers(outgoing.headers)), body \(masking.body(bytes)); response headers \(masking.headers(response.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) })), body \(masking.body(response.body))")
            }
            let document = HTTPSendResponse(status: response.status, headers: response.headers, body: response.body)
            return (ABIStatus.ok.rawValue, Data(document.jsonBytes()))
        } catch {
            let masking = egressLogMasking()
            logger.warning("egress \(method) \(endpoint)\(masking.text(path)) failed after \(ContinuousClock.now - started) with \(error.abiStatus): \(masking.text(error.message))")
            return failure(error)
        }
    }

    /// Masking of this adapter's secret values (read now, never kept) and card numbers.
    private func egressLogMasking() -> EgressLogMasking {
        EgressLogMasking(secretValues: secrets.references.keys.compactMap { name in
            secrets.value(of: name).map { String(decoding: $0, as: UTF8.self) }
        })
    }

    // MARK: lifecycle

    /// Releases this instance's egress resources (its share of a connection
    /// pool); call once the adapter instance is destroyed. Idempotent.
    func closeEgress() async {
        guard !egressClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if case .success(let tls) = egressTLS { await egressClient.release(tls) }
    }
}

/// The largest result document the host accepts (under either isolation): a
/// larger one resolves its call as outcome unknown, never decoded (a runner
/// does not even send it).
package enum ResultLimit {
    package static let maxBytes = 1 << 20
}

/// The largest request the host sends an adapter, and the largest
/// `http_send` request document it takes (the header's
/// `GW_MAX_REQUEST_BYTES`): a larger call is refused, a larger http_send
/// denied, nothing sent.
package enum RequestLimit {
    package static let maxBytes = 1 << 20
}

/// A raw pointer carried across a task boundary; its owner guarantees it stays valid.
struct SendablePointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
    init(_ pointer: UnsafeMutableRawPointer?) { self.pointer = pointer }
}
