import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A loopback stand-in for Acme, the hypothetical PSP of the plugin guide's
/// complete minimal Swift adapter (docs/plugin-authors.md §3.7), serving
/// Acme's API as the guide describes it, at the root as
/// `https://api.acme.example` would:
///
/// - `POST /v1/charges`, `{"amount", "currency", "token", "reference",
///   "capture"}` with an `Idempotency-Key`: `201` and the charge. The same key
///   with the same request answers the same charge again (and
///   `Idempotent-Replayed: true`), charging nothing; with another request,
///   `409` `idempotency_key_reused`, and nothing is done. The token decides:
///   `tok_decline` is declined (`do_not_honor`), `tok_insufficient_funds` too
///   (`insufficient_funds`), `tok_pending` stays `pending`, `tok_unavailable`
///   is refused before processing (`503`, nothing kept, the key left unused);
///   any other is `captured` (`"capture": true`) or `authorized`.
/// - `GET /v1/charges/{id}`, and `GET /v1/charges?reference=R` (the latest
///   charge made under `R`): `200` and the charge, or `404`.
///
/// Every request needs `Authorization: Bearer` ``apiKey`` (`401` otherwise).
/// A charge is `{"id", "state", "amount", "currency", "reference", "capture"}`,
/// with `decline_code` when declined; an error is `{"error": <type>, "message"}`.
final class AcmeStandIn: Sendable {
    /// The API key the stand-in accepts: the adapter's secret `api_key`.
    static let apiKey = "sk_test_acme_5c1e9b7a2f4d6083"

    /// The loopback port it listens on: the adapter's `base_url` is `http://127.0.0.1:PORT`.
    let port: Int
    private let books: Books
    private let server: Task<Void, any Error>

    private init(port: Int, books: Books, server: Task<Void, any Error>) {
        self.port = port
        self.books = books
        self.server = server
    }

    /// Starts the stand-in on a port the system chooses and waits until it listens.
    static func start() async throws -> AcmeStandIn {
        let books = Books()
        var quiet = Logger(label: "acme-stand-in")
        quiet.logLevel = .critical
        let router = books.router()
        let (port, server) = try await SimulatorServer.runUntilListening("the Acme stand-in") { onRunning in
            // A deep backlog: `plugin check` opens a thousand connections at once (its concurrency step).
            Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "acme-stand-in", backlog: 4096),
                        onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) }, logger: quiet)
        }
        return AcmeStandIn(port: port, books: books, server: server)
    }

    /// Runs `body` with a stand-in started for it, and stops it after, whether `body` threw or not.
    static func run(_ body: (AcmeStandIn) async throws -> Void) async throws {
        let acme = try await start()
        do { try await body(acme) } catch { await acme.stop(); throw error }
        await acme.stop()
    }

    func stop() async {
        server.cancel()
        _ = await server.result
    }

    /// Charges that moved money (captured or authorized); a replay makes none.
    var charges: Int { books.state.withLock { $0.charges.values.filter { $0.state == "captured" || $0.state == "authorized" }.count } }
    /// Creates answered from an earlier charge under their `Idempotency-Key`.
    var replays: Int { books.state.withLock { $0.replays } }
    /// Creates refused with `409` `idempotency_key_reused`.
    var conflicts: Int { books.state.withLock { $0.conflicts } }
}

extension AcmeStandIn {
    /// What a create asks for (Acme's members are snake_case; these are one word each).
    struct ChargeRequest: Decodable, Equatable {
        var amount: Int64
        var currency: String
        var token: String
        var reference: String
        var capture: Bool

        /// Why Acme refuses it as invalid, or nil.
        var problem: String? {
            if amount <= 0 { return "amount must be a positive number of minor units" }
            if currency.utf8.count != 3 || !currency.utf8.allSatisfy({ (65...90).contains($0) }) { return "currency must be an ISO 4217 code" }
            if token.isEmpty { return "token is required" }
            if reference.isEmpty || reference.utf8.count > 255 { return "reference must be 1 to 255 bytes" }
            return nil
        }
    }

    struct Charge {
        var id: String
        var asked: ChargeRequest
        var state: String
        var declineCode: String?

        var document: [String: Any] {
            var document: [String: Any] = ["id": id, "state": state, "amount": Int(asked.amount), "currency": asked.currency,
                                           "reference": asked.reference, "capture": asked.capture]
            if let declineCode { document["decline_code"] = declineCode }
            return document
        }
    }

    struct State {
        var charges: [String: Charge] = [:]
        /// The charge each `Idempotency-Key` created.
        var keys: [String: String] = [:]
        /// The latest charge made under each reference.
        var references: [String: String] = [:]
        var replays = 0
        var conflicts = 0
    }

    /// Acme's books and the routes that read and write them.
    final class Books: Sendable {
        let state = Mutex(State())

        func router() -> Router<BasicRequestContext> {
            let router = Router(context: BasicRequestContext.self)
            router.post("v1/charges") { request, _ -> Response in
                if let refusal = Self.unauthorized(request) { return refusal }
                let body = try await request.body.collect(upTo: 64 * 1024)
                return self.create(Data(body.readableBytesView), key: request.headers[Self.idempotencyKey])
            }
            router.get("v1/charges/:id") { request, context -> Response in
                if let refusal = Self.unauthorized(request) { return refusal }
                let id = context.parameters.get("id") ?? ""
                return self.answer { $0.charges[id] }
            }
            router.get("v1/charges") { request, _ -> Response in
                if let refusal = Self.unauthorized(request) { return refusal }
                guard let reference = request.uri.queryParameters.get("reference"), !reference.isEmpty else {
                    return Self.error(.badRequest, "invalid_request", "reference is required")
                }
                return self.answer { state in state.references[reference].flatMap { state.charges[$0] } }
            }
            return router
        }

        /// `POST /v1/charges`: a new charge, the one its key made, or a refusal.
        func create(_ body: Data, key: String?) -> Response {
            guard let key, !key.isEmpty else { return Self.error(.badRequest, "invalid_request", "the Idempotency-Key header is required") }
            guard let asked = try? JSONDecoder().decode(ChargeRequest.self, from: body) else {
                return Self.error(.badRequest, "invalid_request", "the body is not a charge request")
            }
            if let problem = asked.problem { return Self.error(.badRequest, "invalid_request", problem) }
            return state.withLock { state -> Response in
                if let first = state.keys[key].flatMap({ state.charges[$0] }) {
                    guard first.asked == asked else {
                        state.conflicts += 1
                        return Self.error(.conflict, "idempotency_key_reused", "this Idempotency-Key was used with another request; nothing was done")
                    }
                    state.replays += 1
                    return Self.json(.created, first.document, replayed: true)
                }
                if asked.token == "tok_unavailable" {
                    return Self.error(.serviceUnavailable, "unavailable", "refused before processing; nothing was charged")
                }
                let (outcome, declineCode): (String, String?) = switch asked.token {
                case "tok_decline": ("declined", "do_not_honor")
                case "tok_insufficient_funds": ("declined", "insufficient_funds")
                case "tok_pending": ("pending", nil)
                default: (asked.capture ? "captured" : "authorized", nil)
                }
                let id = "ch_" + String(UUID().uuidString.lowercased().filter { $0 != "-" }.prefix(24))
                let charge = Charge(id: id, asked: asked, state: outcome, declineCode: declineCode)
                state.charges[charge.id] = charge
                state.keys[key] = charge.id
                state.references[asked.reference] = charge.id
                return Self.json(.created, charge.document)
            }
        }

        /// The charge `find` picks, or `404`.
        func answer(_ find: (State) -> Charge?) -> Response {
            guard let charge = state.withLock({ find($0) }) else { return Self.error(.notFound, "not_found", "no such charge") }
            return Self.json(.ok, charge.document)
        }

        static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
        static let replayed = HTTPField.Name("Idempotent-Replayed")!

        /// `401` unless the request carries the API key.
        static func unauthorized(_ request: Request) -> Response? {
            guard request.headers[.authorization] != "Bearer " + AcmeStandIn.apiKey else { return nil }
            return error(.unauthorized, "unauthorized", "a valid API key is required (Authorization: Bearer)")
        }

        static func error(_ status: HTTPResponse.Status, _ type: String, _ message: String) -> Response {
            json(status, ["error": type, "message": message])
        }

        static func json(_ status: HTTPResponse.Status, _ document: [String: Any], replayed: Bool = false) -> Response {
            let data = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data("{}".utf8)
            var headers: HTTPFields = [.contentType: "application/json"]
            if replayed { headers[Self.replayed] = "true" }
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: String(decoding: data, as: UTF8.self))))
        }
    }
}
