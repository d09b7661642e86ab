import Foundation
import NIOPosix
import Logging
import CGatewayABI
import TestSupport
import Testing
@testable import PluginHost

/// An egress client that records what it was asked to send and answers 200.
final class RecordingEgressClient: HTTPEgressClient, @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [EgressHTTPRequest] = []
    var sent: [EgressHTTPRequest] { lock.withLock { requests } }

    func send(_ request: EgressHTTPRequest, tls: EgressTLS) async throws(EgressFailure) -> EgressHTTPResponse {
        lock.withLock { requests.append(request) }
        return EgressHTTPResponse(status: 200, headers: [:], body: Data())
    }
}

/// The `http_send` host service: policy, statuses, logs, on a real AsyncHTTPClient
/// against loopback servers.
@Suite("Egress", .heavy)
struct EgressTests {
    @Test func aHostOutsideTheAllowlistIsRefusedAsDeniedAndLogged() async throws {
        let fixture = try EgressFixture()
        let fake = RecordingEgressClient()
        let context = fixture.context(try fixture.manifest(egress: ["api.allowed.example:443"]), client: fake)
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request("POST", "https://evil.example/steal")))
        #expect(outcome.status == .denied)
        #expect(outcome.message.contains("evil.example:443 is not in the manifest's egress allowlist"))
        #expect(fake.sent.isEmpty, "nothing may be sent")
        #expect(fixture.logs.lines.contains { $0.level == .warning && $0.text.contains("egress refused") && $0.text.contains("evil.example:443") },
                "\(fixture.logs.text)")
    }

    @Test func anAllowedHostOnAnotherPortIsRefused() async throws {
        let fixture = try EgressFixture()
        let fake = RecordingEgressClient()
        let context = fixture.context(try fixture.manifest(egress: ["api.allowed.example:443"]), client: fake)
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request("GET", "https://api.allowed.example:8443/")))
        #expect(outcome.status == .denied)
        #expect(fake.sent.isEmpty)
    }

    @Test func anAllowedLoopbackRequestGetsTheFullResponse() async throws {
        let server = try await EgressTestServer(.answer(status: 201, headers: [("X-Sim", "yes")], body: "pong"))
        let client = AsyncHTTPEgressClient()
        let fixture = try EgressFixture()
        let context = fixture.context(try fixture.manifest(egress: ["127.0.0.1:\(server.port)"]), client: client)
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request(
            "POST", "http://127.0.0.1:\(server.port)/ping?x=1", headers: ["Content-Type": "text/plain"], body: "ping")))
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.httpStatus == 201)
        #expect(outcome.headers["x-sim"] == "yes")
        #expect(outcome.body == "pong")
        #expect(server.requests.map(\.method) == ["POST"])
        #expect(server.requests.first?.uri == "/ping?x=1")
        #expect(server.requests.first?.body == "ping")
        await context.closeEgress()
        await server.stop()
    }

    @Test func aRedirectIsHandedToTheAdapterNotFollowed() async throws {
        let server = try await EgressTestServer(.answer(status: 302, headers: [("Location", "/elsewhere")], body: ""))
        let client = AsyncHTTPEgressClient()
        let fixture = try EgressFixture()
        let context = fixture.context(try fixture.manifest(egress: ["127.0.0.1:\(server.port)"]), client: client)
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request("GET", "http://127.0.0.1:\(server.port)/start")))
        #expect(outcome.status == .ok)
        #expect(outcome.httpStatus == 302)
        #expect(outcome.headers["location"] == "/elsewhere")
        #expect(server.requests.map(\.uri) == ["/start"])
        await context.closeEgress()
        await server.stop()
    }

    @Test func noAnswerWithinTheTimeoutIsGWTimeoutAndLogged() async throws {
        let server = try await EgressTestServer(.hang)
        let client = AsyncHTTPEgressClient()
        let fixture = try EgressFixture()
        let context = fixture.context(try fixture.manifest(egress: ["127.0.0.1:\(server.port)"]), client: client)
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request(
            "POST", "http://127.0.0.1:\(server.port)/slow", body: "{}", timeoutMilliseconds: 300)))
        #expect(outcome.status == .timeout, "\(outcome.message)")
        #expect(server.requests.count == 1, "the request was sent")
        #expect(fixture.logs.lines.contains { $0.level == .warning && $0.text.contains("GW_E_TIMEOUT") }, "\(fixture.logs.text)")
        await context.closeEgress()
        await server.stop()
    }

    @Test func aServerThatClosesMidAnswerLeavesTheOutcomeUnknown() async throws {
        let server = try await EgressTestServer(.closeMidAnswer)
        let client = AsyncHTTPEgressClient()
        let fixture = try EgressFixture()
        let context = fixture.context(try fixture.manifest(egress: ["127.0.0.1:\(server.port)"]), client: client)
        // The longest deadline egress allows: the close, not a deadline, must end this call, even
        // when a loaded machine stalls the test for seconds.
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request(
            "POST", "http://127.0.0.1:\(server.port)/pay", body: "{}", timeoutMilliseconds: 120_000)))
        #expect(outcome.status == .outcomeUnknown, "\(outcome.message)")
        #expect(!ABIStatus.outcomeUnknown.provesNothingSent)
        await context.closeEgress()
        await server.stop()
    }

    @Test func nothingListeningIsUnreachable() async throws {
        // A port bound and never listened on: connecting is refused, and no
        // other test's server can take the port meanwhile (a stopped server's
        // port can be handed to the next one that binds port 0).
        let bound = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(bound >= 0)
        defer { close(bound) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let port = try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                guard bind(bound, raw, length) == 0, getsockname(bound, raw, &length) == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
                return Int(UInt16(bigEndian: pointer.pointee.sin_port))
            }
        }
        let client = AsyncHTTPEgressClient()
        let fixture = try EgressFixture()
        let context = fixture.context(try fixture.manifest(egress: ["127.0.0.1:\(port)"]), client: client)
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request("POST", "http://127.0.0.1:\(port)/pay", body: "{}")))
        #expect(outcome.status == .unreachable, "\(outcome.message)")
        #expect(outcome.message.contains("nothing was sent"))
        await context.closeEgress()
    }

    @Test func logsHoldNoSecretNoSecretHeaderAndNoCardNumber() async throws {
        let secret = "sk_live_abcdef123456"
        let card = "4111111111111111"
        let server = try await EgressTestServer(.answer(status: 200, headers: [("X-Echo", secret)],
                                                        body: #"{"card":"\#(card)","key":"\#(secret)"}"#))
        let client = AsyncHTTPEgressClient()
        let fixture = try EgressFixture()
        let context = fixture.context(try fixture.manifest(egress: ["127.0.0.1:\(server.port)"], secrets: ["api_key": secret]), client: client)
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request(
            "POST", "http://127.0.0.1:\(server.port)/cards/\(card)",
            headers: ["Authorization": "Bearer \(secret)", "X-Request-Signature": "sig-0987654321", "X-Plain": "visible-value"],
            body: #"{"number":"4111 1111 1111 1111","api_key":"\#(secret)"}"#)))
        #expect(outcome.status == .ok)
        let log = fixture.logs.text
        #expect(log.contains("egress POST 127.0.0.1:\(server.port)/cards/************1111 -> 200"), "\(log)")
        #expect(log.contains("visible-value"), "ordinary headers are logged")
        #expect(log.contains("************1111"))
        for leaked in [secret, card, "4111 1111 1111 1111", "sig-0987654321"] {
            #expect(!log.contains(leaked), "the log shows \(leaked): \(log)")
        }
        await context.closeEgress()
        await server.stop()
    }

    @Test func securityCodesPINsAndOneTimePasswordsAreMaskedByTheirFieldNames() {
        let masking = EgressLogMasking(secretValues: [])
        let json = #"{"card": {"cvv": "123", "holder": "A B"}, "OtpValue": 482913, "Pin":"0000", "pinned": "yes"}"#
        let masked = masking.text(json)
        #expect(masked == #"{"card": {"cvv": "****", "holder": "A B"}, "OtpValue": "****", "Pin":"****", "pinned": "yes"}"#, "\(masked)")
        let form = masking.text("amount=92.00&card.cvv=737&card.securityCode=1234&otp=55&shopperResultUrl=x")
        #expect(form == "amount=92.00&card.cvv=****&card.securityCode=****&otp=****&shopperResultUrl=x", "\(form)")
    }

    @Test(.heavy(.shared, limit: .seconds(120)))
    func sixHundredConcurrentSlowCallsToOneHostAreNotCapped() async throws {
        // Far past any default cap (AsyncHTTPClient's 8 connections per host,
        // a thread pool's 2 per core); the 2,000-checkout case is the
        // slow-provider benchmark's, in a release build.
        let count = 600
        // Its own event loops: 1,200 sockets on the shared ones would starve
        // every other test's servers and clients running beside this one.
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The server answers nobody until all of them are waiting at once.
        let server = try await EgressTestServer(.holdUntil(count: count, body: "done"), group: loops)
        let client = AsyncHTTPEgressClient(eventLoopGroup: loops)
        let fixture = try EgressFixture()
        let context = fixture.context(try fixture.manifest(egress: ["127.0.0.1:\(server.port)"]), client: client, level: .error)
        let request = EgressFixture.request("POST", "http://127.0.0.1:\(server.port)/slow", body: "{}", timeoutMilliseconds: 60_000)
        let statuses = await withTaskGroup(of: Int32.self) { group in
            for _ in 0..<count { group.addTask { await context.performEgress(request).0 } }
            var statuses: [Int32] = []
            for await status in group { statuses.append(status) }
            return statuses
        }
        #expect(statuses.count == count)
        #expect(statuses.allSatisfy { $0 == ABIStatus.ok.rawValue }, "\(Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count))")
        await context.closeEgress()
        await server.stop()
        try await loops.shutdownGracefully()
    }

    @Test func instancesWithTheSameTLSShareOnePoolClosedWithTheLastOfThem() async throws {
        let certificates = try TLSTestCertificates()
        let client = AsyncHTTPEgressClient()
        let fixture = try EgressFixture()
        let plain = try fixture.manifest(egress: ["127.0.0.1:9"])
        let first = fixture.context(plain, client: client)
        let second = fixture.context(plain, client: client)
        #expect(client.openPools == 1)
        let withCA = fixture.context(try fixture.manifest(egress: ["localhost:9"], secrets: ["ca": certificates.ca.certificatePEM],
                                                          tls: ["ca_certificate": "ca"]), client: client)
        #expect(client.openPools == 2)
        await first.closeEgress()
        await first.closeEgress()
        #expect(client.openPools == 2, "the second instance still uses the plain pool")
        await second.closeEgress()
        #expect(client.openPools == 1)
        await withCA.closeEgress()
        #expect(client.openPools == 0)
        let outcome = try EgressOutcome(await first.performEgress(EgressFixture.request("GET", "http://127.0.0.1:9/")))
        #expect(outcome.status == .unreachable)
        #expect(outcome.message.contains("egress is closed"))
    }
}

/// An adapter's `log` line reaches the host's log as one line (a newline in
/// it cannot forge a host line), cut at 8 KiB, card numbers masked.
@Suite struct AdapterLogLineTests {
    @Test func anAdapterLogLineIsOneLineCutAndMasked() throws {
        let fixture = try EgressFixture()
        let context = fixture.context(try fixture.manifest(egress: ["api.allowed.example:443"]), client: RecordingEgressClient())
        let forged = "paid 4111111111111111\n2026-11-24T00:00:00+0000 info gateway: [CheckoutHTTP] shutdown: forged\r"
        Array(forged.utf8).withUnsafeBytes { context.log(level: 2, message: $0) }
        Array(repeating: UInt8(ascii: "x"), count: 20_000).withUnsafeBytes { context.log(level: 3, message: $0) }
        let lines = fixture.logs.lines
        let first = try #require(lines.first { $0.text.hasPrefix("paid") })
        #expect(!first.text.contains("\n") && !first.text.contains("\r") && first.text.contains("\\n2026-11-24"), "\(first.text)")
        #expect(!first.text.contains("4111111111111111"))
        // A card number across the cut is masked whole, then cut: none of it in clear.
        Array((String(repeating: "y", count: 8185) + "4111111111111111").utf8).withUnsafeBytes { context.log(level: 3, message: $0) }
        // Every line break and control character escaped, CRLF and U+2028 too.
        Array("one\r\ntwo\u{2028}three\u{1B}[31mfour\u{85}five".utf8).withUnsafeBytes { context.log(level: 2, message: $0) }
        let straddling = try #require(fixture.logs.lines.first { $0.text.hasPrefix("yyy") })
        #expect(straddling.text.firstMatch(of: /[0-9]{5,}/) == nil, "\(straddling.text.suffix(60))")
        let escaped = try #require(fixture.logs.lines.first { $0.text.hasPrefix("one") })
        #expect(escaped.text.hasPrefix(#"one\r\ntwo\u2028three\u001B[31mfour\u0085five"#), "\(escaped.text)")
        #expect(!escaped.text.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.value == 0x2028 }, "\(escaped.text)")
        let long = try #require(lines.first { $0.text.hasPrefix("xxx") })
        #expect(long.text.contains("x … (cut at 8192 bytes)") && long.text.utf8.count < 8300, "\(long.text.suffix(60))")
    }
}

/// The header's limits are the host's: the macros a third party builds
/// against equal what the host enforces, and each is enforced.
@Suite struct HeaderLimitTests {
    @Test func theHeadersLimitMacrosAreTheHostsLimits() {
        #expect(Int(GW_MAX_REQUEST_BYTES) == RequestLimit.maxBytes)
        #expect(Int(GW_MAX_RESULT_BYTES) == ResultLimit.maxBytes)
        #expect(Int(GW_MAX_LOG_BYTES) == HostContext.maxLogLine)
    }

    @Test func anHTTPSendRequestOverTheLimitIsDeniedUnsent() async throws {
        let fixture = try EgressFixture()
        let fake = RecordingEgressClient()
        let context = fixture.context(try fixture.manifest(egress: ["api.allowed.example:443"]), client: fake)
        let body = String(repeating: "a", count: RequestLimit.maxBytes)
        let outcome = try EgressOutcome(await context.performEgress(EgressFixture.request("POST", "https://api.allowed.example/x", body: body)))
        #expect(outcome.status == .denied && outcome.message.contains("nothing was sent"), "\(outcome.message)")
        #expect(fake.sent.isEmpty)
    }

    @Test(arguments: [Manifest.Isolation.inProcess, .process])
    func aRequestOverTheLimitIsRefusedUnsentInEitherIsolation(_ isolation: Manifest.Isolation) async throws {
        let suite = try await ChaosFixture.make(isolation: isolation)
        var payload = Data(#"{"chaos":"ok","pad":""#.utf8)
        payload.append(Data(repeating: UInt8(ascii: "a"), count: RequestLimit.maxBytes))
        payload.append(Data(#""}"#.utf8))
        #expect(await suite.chaos.invoke(.authorize, payload: payload) == .refused(status: ABIStatus.invalidRequest.rawValue))
        #expect(await suite.call("ok", timeout: ChaosFixture.answered) == .completed(status: 0, payload: Data(#"{"status":"succeeded"}"#.utf8)), "the adapter still serves")
        await suite.shutdown()
    }
}
