import Foundation
import Testing
import TestSupport

/// The OpenAPI document and the server keep agreeing: schemathesis (an
/// OpenAPI fuzzer, installed by `scripts/install-prerequisites`) runs every
/// one of its checks against `gateway serve`, as an operator starts it, from
/// the document the server itself serves, and none may fail.
///
/// Bounded: a fixed seed, a few examples per operation, one worker, a
/// timeout per request and a deadline for the whole run (it is killed past
/// it, and the test fails). Both are backstops, generous and scaled by
/// `GATEWAY_TEST_TIME_SCALE`: a request that only waited for a core must not
/// fail the run. The run covers every operation but the session's event
/// stream, which by design never ends (a request/response fuzzer can only
/// time out on it); `EventStreamTests` test it.
///
/// Heavy, and alone among the heavy tests: `gateway serve` and a fuzzer's
/// hundreds of requests.
@Suite(.serialized, .heavy(.exclusive)) struct SchemathesisTests {
    static let seed = 13_009
    static let examplesPerOperation = 25
    static let deadlineSeconds = Int(TestTime.seconds(600))
    /// Seconds each request may take (schemathesis's `--request-timeout`).
    static let requestTimeoutSeconds = Int(TestTime.seconds(60))

    /// Every check stays enabled. One is told what this API means by a
    /// schema-valid request it cannot carry out: a well-formed attempt,
    /// continue, capture, refund or void that the state of the session or
    /// payment does not allow (no provider takes that method there, more
    /// than was authorized, ...) is a `422` problem, as `positive_data_acceptance`
    /// already accepts `404` and `409` for the same reason; and `validate`,
    /// whose whole point is a `422` for values the method's form refuses (or
    /// a method not available); and the IIN lookup, whose `prefix` is any
    /// string by the schema and a `422` when it is not digits; and registering
    /// a webhook endpoint, whose `url` is any string by the schema and a `422`
    /// unless it leads, now, to a public address over https (the fuzzer's
    /// never do: a server started as here allows no private endpoint). No
    /// other operation may answer a schema-valid request with a `422`.
    static let configuration = """
        [[operations]]
        include-operation-id = ["createAttempt", "continueAttempt", "capturePayment", "refundPayment", "voidPayment", "validateFields", "lookupIIN",
                                "createWebhookEndpoint"]
        checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]

        """

    /// `schemathesis` on the PATH, or nil.
    static var schemathesis: String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent("schemathesis").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Served with an admin token (the document lists /admin, the fuzzer is
    /// never given the token) and without one (no /admin, in the server or
    /// the document).
    @Test(arguments: [true, false])
    func theServedDocumentSurvivesSchemathesisWithEveryCheck(admin: Bool) async throws {
        let schemathesis = try #require(Self.schemathesis, "schemathesis is not on the PATH: run scripts/install-prerequisites")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("schemathesis-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: BuildProducts.shippedManifests, to: manifests)
        try? FileManager.default.removeItem(at: manifests.appendingPathComponent("schema"))
        let adminToken = folder.appendingPathComponent("admin-token")
        try Data("schemathesis-admin-\(UUID().uuidString)".utf8).write(to: adminToken)
        let data = folder.appendingPathComponent("data")
        let configuration = folder.appendingPathComponent("schemathesis.toml")
        try Data(Self.configuration.utf8).write(to: configuration)

        let server = try await ServeProcess(["serve", "--port", "0", "--manifests", manifests.path, "--data", data.path]
                                            + (admin ? ["--admin-token-file", adminToken.path] : []))
        let port = try await server.port()
        // The first start made a test key; every /v1 route but webhooks needs one.
        let key = try await server.testAPIKey(in: data)

        let arguments = [
            "--kill-after=10", String(Self.deadlineSeconds), schemathesis, "--no-color", "--config-file", configuration.path,
            "run", "http://127.0.0.1:\(port)/openapi.json",
            "--checks", "all",
            "--header", "Authorization: Bearer \(key)",
            "--exclude-operation-id", "sessionEvents",
            "--max-examples", String(Self.examplesPerOperation),
            "--seed", String(Self.seed),
            "--workers", "1",
            "--request-timeout", String(Self.requestTimeoutSeconds),
            "--generation-database", "none",
        ]
        let run = try await runProcessOffThePool("/usr/bin/timeout", arguments)
        let stopped = await server.stop()
        #expect(run.status == 0, """
            schemathesis exited \(run.status)\(run.status == 124 ? " (killed at the \(Self.deadlineSeconds) s deadline)" : "") \
            (seed \(Self.seed), admin \(admin ? "on" : "off")); its output:
            \(run.output)
            """)
        #expect(stopped == .exited(0), "gateway serve: \(server.stderr.suffix(2000))")
        #expect(!(server.stdout + server.stderr).contains(key.dropFirst(8)), "the API key reached the server's output")
    }
}
