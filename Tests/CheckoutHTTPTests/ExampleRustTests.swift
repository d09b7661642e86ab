import Foundation
import Testing
import TestSupport

/// The Rust adapter (`Plugins/ExampleRust`), built with cargo from the
/// header alone: it passes the conformance check in either isolation,
/// exports one symbol, takes payments through `gateway serve` over HTTP
/// (authorize, capture, refund, verify, void), and a panic inside it never
/// crosses into the host: the host stays up, and money is never claimed
/// unsent when the panic came after the provider charged.
///
/// Heavy, and alone among the heavy tests: a cargo release build, then
/// `gateway serve` or the conformance check over its library.
@Suite(.enabled(if: RustAdapterBuild.isAvailable, "cargo installed (scripts/install-prerequisites)"), .heavy(.exclusive))
struct ExampleRustTests {
    static let crate = BuildProducts.repository.appendingPathComponent("Plugins/ExampleRust")

    /// A folder holding the shipped example-rust manifest, its library the cargo build's.
    struct Site {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rust-\(UUID().uuidString)")
        var manifests: URL { folder.appendingPathComponent("manifests") }
        var data: URL { folder.appendingPathComponent("data") }
        var manifest: URL { manifests.appendingPathComponent("example-rust.json") }

        init(isolation: String = "in-process") async throws {
            let library = try await RustAdapterBuild.library(of: ExampleRustTests.crate)
            try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
            let shipped = try Data(contentsOf: ExampleRustTests.crate.appendingPathComponent("example-rust.json"))
            var object = try #require(try JSONSerialization.jsonObject(with: shipped) as? [String: Any])
            object["library"] = library.path
            object["isolation"] = isolation
            try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(to: manifest)
        }

        func serve() async throws -> ServeProcess {
            try await ServeProcess(["serve", "--port", "0", "--manifests", manifests.path, "--data", data.path, "--log-level", "info"])
        }

        /// The API of `host`, called with the test key it made.
        func client(of host: ServeProcess) async throws -> Client {
            Client(port: try await host.port(), key: try await host.testAPIKey(in: data))
        }
    }

    /// The checkout API as a merchant calls it.
    struct Client {
        let port: Int
        let key: String

        func call(_ method: String, _ path: String, _ body: String? = nil, idempotencyKey: String? = nil) async throws -> ManyHostsServeTests.Answer {
            try await ManyHostsServeTests.call(port, method, path, key: key, body: body, idempotencyKey: idempotencyKey)
        }

        /// A new session paid with visa; the attempt's answer.
        func pay(order: String, capture: String, instrument: String? = nil) async throws -> ManyHostsServeTests.Answer {
            let opened = try await call("POST", "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"\#(order)","capture":"\#(capture)"}"#,
                                        idempotencyKey: "s-\(order)")
            let session = try #require(opened.json["id"] as? String, "\(opened.text)")
            let body = instrument.map { #"{"method":"visa","instrument":\#($0)}"# } ?? #"{"method":"visa"}"#
            return try await call("POST", "/v1/sessions/\(session)/attempts", body, idempotencyKey: "a-\(order)")
        }
    }

    @Test(arguments: ["in-process", "process"])
    func passesPluginCheckAndExportsOneSymbol(isolation: String) async throws {
        let site = try await Site(isolation: isolation)
        // The check's own deadline per call, scaled: a backstop, never what decides.
        let check = try await runProcessOffThePool(BuildProducts.gateway.path,
                                                   ["plugin", "check", site.manifest.path, "--timeout", "\(Int(TestTime.seconds(120)))"])
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("example-rust 1.0.0") && check.output.contains("checks passed"), "\(check.output)")
        for name in ["authorize", "capture", "refund", "void", "idempotency", "malformed-authorize", "edge-cases", "exactly-once"] {
            #expect(check.output.contains(name), "the check did not run \(name): \(check.output)")
        }
        let library = try await RustAdapterBuild.library(of: Self.crate)
        let symbols = try await runProcessOffThePool("/usr/bin/env", ["nm", "-D", "--defined-only", library.path]).stdout
            .split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
        #expect(symbols == ["gw_adapter_entry"], "exported: \(symbols)")
    }

    @Test(.heavy(.exclusive, limit: .seconds(300)))
    func takesAPaymentOverHTTP() async throws {
        let site = try await Site()
        let host = try await site.serve()
        let api = try await site.client(of: host)
        let providers = try await api.call("GET", "/v1/providers")
        #expect(providers.text.contains("\"example-rust\""))

        // Manual capture: authorized, then captured in part, refunded in part; verify reports the totals.
        let opened = try await api.call("POST", "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"rust-1","capture":"manual"}"#,
                                    idempotencyKey: "s-1")
        #expect(opened.status == 201, "\(opened.text)")
        let session = try #require(opened.json["id"] as? String)
        #expect(opened.json["availableMethods"] as? [String] == ["visa"])
        let attempt = try await api.call("POST", "/v1/sessions/\(session)/attempts", #"{"method":"visa"}"#, idempotencyKey: "a-1")
        #expect(attempt.status == 201 && attempt.json["status"] as? String == "authorized" && attempt.json["providerId"] as? String == "example-rust",
                "\(attempt.text)")
        let payment = try #require(attempt.json["id"] as? String)
        let captured = try await api.call("POST", "/v1/payments/\(payment)/capture", #"{"amount":2000}"#, idempotencyKey: "c-1")
        #expect(captured.status == 200 && (captured.json["balance"] as? [String: Any])?["captured"] as? Int == 2000,
                "\(captured.text)")
        let refunded = try await api.call("POST", "/v1/payments/\(payment)/refund", #"{"amount":500}"#, idempotencyKey: "r-1")
        #expect(refunded.status == 200 && (refunded.json["balance"] as? [String: Any])?["refunded"] as? Int == 500,
                "\(refunded.text)")
        let verified = try await api.call("POST", "/v1/payments/\(payment)/verify")
        #expect(verified.status == 200 && verified.json["status"] as? String == "authorized", "\(verified.text)")
        let void = try await api.call("POST", "/v1/payments/\(payment)/void", nil, idempotencyKey: "v-1")
        #expect(void.status == 409, "a captured payment cannot be voided: \(void.text)")

        // Automatic capture: charged at once. Then an authorization voided.
        let charged = try await api.pay(order: "rust-2", capture: "automatic")
        #expect(charged.json["status"] as? String == "succeeded", "\(charged.text)")
        let held = try await api.pay(order: "rust-3", capture: "manual")
        let heldPayment = try #require(held.json["id"] as? String)
        let voided = try await api.call("POST", "/v1/payments/\(heldPayment)/void", nil, idempotencyKey: "v-2")
        #expect(voided.status == 200, "\(voided.text)")
        let afterVoid = try await api.call("POST", "/v1/payments/\(heldPayment)/verify")
        // The host keeps the attempt's status and records the void in its balance; verify confirms it against the books.
        #expect(afterVoid.status == 200 && (afterVoid.json["balance"] as? [String: Any])?["voided"] as? Bool == true,
                "\(afterVoid.text)")
        #expect(await host.stop() == .exited(0))
    }

    /// A panic inside invoke() is a refusal (nothing sent); one after the
    /// provider charged is an unknown outcome that reconciliation settles as
    /// charged. The host (adapter in its own process space) stays up
    /// throughout, takes the next payment, and logs each panic through the
    /// host's log, not the Rust runtime's stderr message.
    @Test(.heavy(.exclusive, limit: .seconds(300)))
    func aPanicNeverCrossesTheBoundary() async throws {
        let site = try await Site()
        let host = try await site.serve()
        let api = try await site.client(of: host)

        let refused = try await api.pay(order: "panic-1", capture: "automatic", instrument: #"{"scenario":"panic_in_invoke"}"#)
        #expect(refused.status < 500 && refused.json["status"] as? String == "failed", "\(refused.text)")

        let unknown = try await api.pay(order: "panic-2", capture: "automatic", instrument: #"{"scenario":"panic_after_charge"}"#)
        #expect(unknown.json["status"] as? String == "pending", "the charge's answer was lost: \(unknown.text)")
        let payment = try #require(unknown.json["id"] as? String)
        let reconciled = try await api.call("POST", "/v1/payments/\(payment)/verify")
        #expect(reconciled.json["status"] as? String == "succeeded", "verify finds the charge: \(reconciled.text)")

        let after = try await api.pay(order: "after-panics", capture: "automatic")
        #expect(after.json["status"] as? String == "succeeded", "\(after.text)")
        #expect(try await api.call("GET", "/healthz").status == 200)
        #expect(await host.stop() == .exited(0))
        let log = host.stderr
        #expect(log.contains("panic_in_invoke panics inside invoke()") && log.contains("panic_after_charge panics after the provider charged"),
                "\(log.suffix(4000))")
        #expect(!log.contains("thread 'example-rust"), "the Rust runtime printed a panic on the host's stderr")
    }
}
