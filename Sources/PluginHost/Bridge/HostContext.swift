import Foundation
import GatewayPayloads
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// Everything the host services of one adapter instance are bound to: its
/// identity and logger, its secrets, its egress allowlist, its calls in flight.
final class HostContext: Sendable {
    let adapterID: String
    let logger: Logger
    let secrets: SecretResolver
    let egressPolicy: EgressPolicy
    let egressClient: any HTTPEgressClient
    let calls: CallTable

    init(manifest: Manifest, manifestDirectory: URL, egressClient: any HTTPEgressClient, logger: Logger) {
        adapterID = manifest.id
        var logger = logger
        logger[metadataKey: "adapter"] = "\(manifest.id)"
        self.logger = logger
        secrets = SecretResolver(references: manifest.secrets, manifestDirectory: manifestDirectory)
        egressPolicy = EgressPolicy(manifest.egress)
        self.egressClient = egressClient
        let violationLogger = logger
        calls = CallTable { violation in
            violationLogger.error("adapter protocol violation: \(violation)")
        }
    }

    // MARK: log

    func log(level: Int32, message: UnsafeRawBufferPointer) {
        let text = Redaction.maskingCardNumbers(in: String(decoding: message, as: UTF8.self))
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
            return 8 // GW_E_NOT_FOUND
        }
        defer { for i in value.indices { value[i] = 0 } }
        length?.pointee = value.count
        guard value.count <= capacity, let out else { return 11 } // GW_E_BUFFER_TOO_SMALL
        value.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: value.count) }
        return 0
    }

    // MARK: http_send

    func httpSend(request: Data, callback: UnsafeRawPointer?, userData: UnsafeMutableRawPointer?) {
        guard let callback else {
            logger.error("adapter called http_send without a callback; request dropped")
            return
        }
        let reply = ForeignFunction(address: callback, signature: SignatureTable.httpCallback)
        let userData = SendablePointer(userData)
        // The callback never fires inside http_send itself: always from a task.
        Task {
            let (status, document) = await self.performEgress(request)
            document.withUnsafeBytes { bytes in
                reply.callHTTPCallback(userData.pointer, status, bytes.baseAddress, bytes.count)
            }
        }
    }

    private func performEgress(_ body: Data) async -> (Int32, Data) {
        func failure(_ f: EgressFailure) -> (Int32, Data) {
            (f.status, Data(ErrorDocument(message: f.message).jsonBytes()))
        }
        guard let request = try? JSONDecoder().decode(EgressRequest.self, from: body), let url = URL(string: request.url) else {
            logger.warning("egress refused: the request document is not valid")
            return failure(EgressFailure(status: 9, message: "the request document is not valid JSON of the http_send schema"))
        }
        let endpoint: Manifest.Endpoint
        switch egressPolicy.check(url) {
        case .failure(let refusal):
            logger.warning("egress refused: \(refusal.message)")
            return failure(refusal)
        case .success(let allowed):
            endpoint = allowed
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.uppercased()
        urlRequest.timeoutInterval = Double(min(max(request.timeout_ms ?? 10_000, 100), 120_000)) / 1000
        for (name, value) in request.headers ?? [:] { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let encoded = request.body {
            guard let bytes = Data(base64Encoded: encoded) else {
                return failure(EgressFailure(status: 9, message: "the request body is not base64"))
            }
            urlRequest.httpBody = bytes
        }
        let started = ContinuousClock.now
        do {
            let (response, data) = try await egressClient.send(urlRequest)
            logger.debug("egress \(urlRequest.httpMethod ?? "GET") \(endpoint)\(Redaction.maskingCardNumbers(in: url.path)) -> \(response.statusCode) in \(ContinuousClock.now - started)")
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            let document = EgressResponse(status: response.statusCode, headers: headers, body: data.base64EncodedString())
            return (0, (try? JSONEncoder().encode(document)) ?? Data())
        } catch let error as EgressFailure {
            logger.warning("egress \(endpoint) failed: \(error.message)")
            return failure(error)
        } catch {
            return failure(EgressFailure(status: 10, message: "egress failed: \(error)"))
        }
    }
}

/// A raw pointer carried across a task boundary; its owner guarantees it stays valid.
struct SendablePointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
    init(_ pointer: UnsafeMutableRawPointer?) { self.pointer = pointer }
}
