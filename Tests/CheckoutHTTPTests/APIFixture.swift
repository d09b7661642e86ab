import CheckoutEngine
import CheckoutHTTP
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
@_spi(Internals) import PaymentGateway
import SQLiteCheckoutStore
import Synchronization
import TestSupport

/// A gateway on a scratch copy of the shipped manifests (so tests can edit
/// them) and a scratch data folder, served by the checkout API, with a test
/// and a live API key recorded in its store (``testKey``, ``liveKey``; the
/// request helpers send the test key unless told otherwise).
///
/// A test gets one from ``with(adminToken:keyCache:allowPrivateWebhooks:editManifests:storeInFront:_:)``,
/// never on its own: the gateway holds adapters (an isolated one's runner
/// process among them) and threads, and one left running by a test that
/// failed half-way (or never shut down) would go on loading the two cores
/// every other test shares.
final class APIFixture: Sendable {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("checkout-http-\(UUID().uuidString)")
    let gateway: PaymentGateway
    let store: SQLiteCheckoutStore
    let keys: APIKeys
    let metrics = GatewayMetrics()
    let logs = CapturedLogs()
    let admin: AdminAccess?

    static let adminToken = "test-admin-token-0123456789"
    /// Keys of the fixed shape (a fixture's store is its own, so every
    /// fixture can record the same two).
    static let testKey = "gk_test_0123456789abcdefghjkmnpqrstvwxyz"
    static let liveKey = "gk_live_zyxwvtsrqpnmkjhgfedcba9876543210"

    var manifests: URL { folder.appendingPathComponent("manifests") }
    var data: URL { folder.appendingPathComponent("data") }

    /// Runs `body` with a new fixture, then shuts its gateway down, whether
    /// `body` returns or throws (a failed `#require` included): no gateway
    /// outlives its test.
    ///
    /// - Parameter keyCache: how long the server trusts a verified key
    ///   (``APIKeys/cacheFor``); zero asks the store on every request.
    /// - Parameter allowPrivateWebhooks: whether merchants' webhook endpoints may be on
    ///   addresses that are not public (`--allow-private-webhooks`), so a test can register a loopback one.
    /// - Parameter editManifests: changes the scratch manifests folder before the gateway loads it.
    /// - Parameter storeInFront: the store the gateway and the API keys use, in front of ``store``
    ///   (``store`` itself unless told).
    @discardableResult
    static func with<T>(adminToken: String? = nil, keyCache: Duration = .seconds(1), allowPrivateWebhooks: Bool = false,
                        editManifests: (URL) throws -> Void = { _ in },
                        storeInFront: (SQLiteCheckoutStore) -> any CheckoutStore & APIKeyStore = { $0 },
                        _ body: (APIFixture) async throws -> T) async throws -> T {
        let fixture = try await APIFixture(adminToken: adminToken, keyCache: keyCache, allowPrivateWebhooks: allowPrivateWebhooks,
                                           editManifests: editManifests, storeInFront: storeInFront)
        let result: T
        do {
            result = try await body(fixture)
        } catch {
            await fixture.shutdown()
            throw error
        }
        await fixture.shutdown()
        return result
    }

    /// Loads the gateway without holding a Swift concurrency thread: the
    /// store is opened (migrated, the two keys written, each write synced)
    /// on a thread of its own, and the adapters are loaded by
    /// `PaymentGateway.open`, off the pool too. Every test of the run starts
    /// at once on two cores, and a fixture loading on one of the pool's two
    /// threads stalled every in-process server and client meanwhile.
    private init(adminToken: String?, keyCache: Duration, allowPrivateWebhooks: Bool, editManifests: (URL) throws -> Void,
                 storeInFront: (SQLiteCheckoutStore) -> any CheckoutStore & APIKeyStore) async throws {
        let folder = self.folder
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: BuildProducts.shippedManifests, to: manifests)
        try? FileManager.default.removeItem(at: manifests.appendingPathComponent("schema"))
        try editManifests(manifests)
        var configuration = PaymentGateway.Configuration(manifests: manifests.path, data: folder.appendingPathComponent("data").path)
        configuration.libraries = BuildProducts.sharedLibraryStore
        // A machine under load must not make the mock's instruments late (scaled with the backstops).
        configuration.checkout.instrumentsTimeout = .seconds(60).scaled
        configuration.webhooks.allowPrivate = allowPrivateWebhooks
        let metrics = self.metrics
        configuration.callObserver = { metrics.adapterCall($0) }
        let store = try await offThePool { () throws -> SQLiteCheckoutStore in
            let store = try SQLiteCheckoutStore(path: folder.appendingPathComponent("data/checkout.sqlite").path)
            for (secret, name) in [(APIFixture.testKey, "fixture test key"), (APIFixture.liveKey, "fixture live key")] {
                guard let record = APIKeys.record(forSecret: secret, name: name) else { throw CocoaError(.coderInvalidValue) }
                try store.createAPIKey(record)
            }
            return store
        }
        self.store = store
        let served = storeInFront(store)
        configuration.store = served
        configuration.keyCache = keyCache
        gateway = try await PaymentGateway.open(configuration: configuration, logger: logs.logger("gateway"))
        admin = adminToken.flatMap(AdminAccess.init(token:))
        keys = gateway.keys
    }

    /// Stops reloading and every adapter (``PaymentGateway/shutdown()``);
    /// ``with(adminToken:keyCache:allowPrivateWebhooks:editManifests:storeInFront:_:)`` calls it.
    /// Safe after a ``LiveServer`` ran the gateway, which shut it down already.
    func shutdown() async {
        await gateway.shutdown()
    }

    /// - Parameter webhookPort: a webhook-only listener's port (0: any).
    func server(poll: Duration = .milliseconds(100), webhookPort: Int? = nil) -> CheckoutServer {
        var configuration = CheckoutServer.Configuration()
        configuration.port = 0
        configuration.webhookPort = webhookPort
        configuration.manifestPoll = poll
        return CheckoutServer(gateway: gateway, metrics: metrics, admin: admin, configuration: configuration, logger: logs.logger("http"))
    }

    /// The application, for HummingbirdTesting.
    func app() -> some ApplicationProtocol { server().application() }

    func setManifest(_ name: String, enabled: Bool) throws {
        let url = manifests.appendingPathComponent(name)
        let text = try String(contentsOf: url, encoding: .utf8)
        let edited = text.replacingOccurrences(of: "\"enabled\": \(!enabled)", with: "\"enabled\": \(enabled)")
        try Data(edited.utf8).write(to: url, options: .atomic)
    }
}

extension TestClientProtocol {
    /// A JSON request; returns status, headers and the body parsed as JSON
    /// (when it is). It carries `Authorization: Bearer <key>` (the fixture's
    /// test key unless told otherwise; none with nil) when `headers` has none.
    @discardableResult
    func json(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, headers: HTTPFields = [:],
              contentType: String? = "application/json", key: String? = APIFixture.testKey) async throws -> Reply {
        var headers = headers
        if body != nil, let contentType { headers[.contentType] = contentType }
        if let key, headers[.authorization] == nil { headers[.authorization] = "Bearer \(key)" }
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }) { response in
            let text = String(buffer: response.body)
            return Reply(status: response.status.code, headers: response.headers, text: text,
                         json: try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]))
        }
    }
}

struct Reply: @unchecked Sendable {
    var status: Int
    var headers: HTTPFields
    var text: String
    var json: Any?

    var object: [String: Any] { json as? [String: Any] ?? [:] }
    subscript(_ key: String) -> Any? { object[key] }
    var string: (String) -> String? { { object[$0] as? String } }
    var isProblem: Bool { headers[.contentType] == "application/problem+json" && object["type"] is String && object["code"] is String }
    var problemCode: String? { isProblem ? object["code"] as? String : nil }
}

func idempotency(_ key: String) -> HTTPFields {
    var fields = HTTPFields()
    fields[HTTPField.Name("Idempotency-Key")!] = key
    return fields
}

let newSession = #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-1"}"#
