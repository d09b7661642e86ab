import Foundation
import GatewayPayloads
import XCTest
@testable import PluginHost

/// The libffi bridge, end to end through real dlopened adapters: round trips of
/// every operation, exactly-once completion under concurrency and from foreign
/// threads, deadlines, cancellation, and protocol violations.
final class BridgeTests: XCTestCase {
    var folder: ManifestFolder!
    var records: [ProviderRecord] = []

    override func setUpWithError() throws {
        folder = try ManifestFolder()
        records = try folder.loadAll()
    }

    override func tearDown() async throws {
        for record in records { await record.adapter?.shutdown(grace: .seconds(2)) }
        records = []
        folder = nil
    }

    var mock: AdapterInstance { records[id: "mock"]!.adapter! }
    var exampleC: AdapterInstance { records[id: "example-c"]!.adapter! }

    func authorize(_ scenario: String?, amount: Int64 = 1000, capture: CaptureMode = .automatic, key: String = UUID().uuidString) -> AuthorizeRequest {
        AuthorizeRequest(
            paymentId: "pay_" + key.prefix(8), idempotencyKey: key, amount: Money(value: amount, currency: "SAR"),
            method: "mada", country: "SA", orderId: "order-1", capture: capture,
            instrument: scenario.map { ["scenario": .string($0)] }, returnUrl: "https://merchant.example/back")
    }

    // MARK: Round trips: the Swift mock

    /// The mock's books are bounded: past 50,000 payments the oldest is
    /// forgotten (a verify answers unknown_payment), the newest is found by
    /// its payment id alone, and memory does not grow without end.
    func testTheMockForgetsItsOldestPaymentsPastItsBound() async throws {
        let mock = self.mock
        let first = authorize("success", key: "first-payment")
        _ = try await mock.call(.authorize, first)
        var last = first
        for i in 0..<50_000 {
            last = AuthorizeRequest(
                paymentId: "pay_\(i)", idempotencyKey: "k\(i)", amount: Money(value: 1000, currency: "SAR"), method: "mada",
                orderId: "o", capture: .automatic)
            _ = try await mock.call(.authorize, last)
        }
        let forgotten = try await mock.call(.verify, VerifyRequest(paymentId: first.paymentId, providerReference: nil))
        XCTAssertEqual(forgotten.problem?.code, "unknown_payment")
        let newest = try await mock.call(.verify, VerifyRequest(paymentId: last.paymentId, providerReference: nil))
        XCTAssertEqual(newest.status, .succeeded, "found by its payment id")
    }


    func testMockRoundTripsEveryOperation() async throws {
        let authorized = try await mock.call(.authorize, authorize("success", amount: 5000, capture: .manual))
        XCTAssertEqual(authorized.status, .authorized)
        XCTAssertEqual(authorized.amount, Money(value: 5000, currency: "SAR"))
        let reference = try XCTUnwrap(authorized.providerReference)

        let verified = try await mock.call(.verify, VerifyRequest(paymentId: "p", providerReference: reference))
        XCTAssertEqual(verified.status, .authorized)

        let captured = try await mock.call(.capture, AmountRequest(paymentId: "p", idempotencyKey: "c1", providerReference: reference, amount: Money(value: 3000, currency: "SAR")))
        XCTAssertEqual(captured.status, .succeeded)
        let overCapture = try await mock.call(.capture, AmountRequest(paymentId: "p", idempotencyKey: "c2", providerReference: reference, amount: Money(value: 2001, currency: "SAR")))
        XCTAssertEqual(overCapture.problem?.code, "amount_exceeds_authorized")

        let refunded = try await mock.call(.refund, AmountRequest(paymentId: "p", idempotencyKey: "r1", providerReference: reference, amount: Money(value: 3000, currency: "SAR")))
        XCTAssertEqual(refunded.status, .succeeded)
        let overRefund = try await mock.call(.refund, AmountRequest(paymentId: "p", idempotencyKey: "r2", providerReference: reference, amount: Money(value: 1, currency: "SAR")))
        XCTAssertEqual(overRefund.problem?.code, "amount_exceeds_captured")

        let second = try await mock.call(.authorize, authorize("success", capture: .manual))
        let voided = try await mock.call(.void, VoidRequest(paymentId: "p2", idempotencyKey: "v1", providerReference: second.providerReference!))
        XCTAssertEqual(voided.status, .succeeded)

        let threeDS = try await mock.call(.authorize, authorize("three_ds"))
        XCTAssertEqual(threeDS.status, .pending)
        XCTAssertEqual(threeDS.action?.type, .threeDS)
        let finished = try await mock.call(.continue, ContinueRequest(paymentId: "p3", idempotencyKey: "k3", providerReference: threeDS.providerReference!, returnParams: ["outcome": "approve"]))
        XCTAssertEqual(finished.status, .succeeded)

        let webhook = try await mock.call(.webhook, WebhookRequest(headers: [:], body: Data("{}".utf8).base64EncodedString()), as: WebhookResult.self)
        XCTAssertFalse(webhook.verified, "no secret configured: nothing can be verified")
    }

    func testIdempotencyKeyReplaysTheFirstAnswerAndRefusesAnotherRequest() async throws {
        let first = try await mock.call(.authorize, authorize("success", key: "same-key"))
        let again = try await mock.call(.authorize, authorize("success", key: "same-key"))
        XCTAssertEqual(first, again)
        // Another request under the key: refused, nothing charged (a real PSP's answer, not the first request's).
        do {
            _ = try await mock.call(.authorize, authorize("success", amount: 99_999, key: "same-key"))
            XCTFail("another amount under a key already answered was answered")
        } catch let error as AdapterCallError {
            // Refused at invoke: nothing was sent.
            guard case .refused(let status, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(status, .invalidRequest)
        }
        let replayed = try await mock.call(.authorize, authorize("success", key: "same-key"))
        XCTAssertEqual(replayed, first, "the first request still replays")
    }

    func testEveryScenarioMapsToItsDocumentedOutcome() async throws {
        let expectations: [(String, PaymentStatus, String?)] = [
            ("success", .succeeded, nil), ("pending_then_success", .pending, nil), ("three_ds", .pending, nil),
            ("otp", .pending, nil), ("insufficient_funds", .failed, "insufficient_funds"), ("card_declined", .failed, "card_declined"),
            ("partial_payment", .succeeded, nil), ("user_cancelled", .cancelled, "user_cancelled"), ("provider_error", .failed, "provider_error"),
        ]
        for (scenario, status, code) in expectations {
            let result = try await mock.call(.authorize, authorize(scenario))
            XCTAssertEqual(result.status, status, scenario)
            XCTAssertEqual(result.problem?.code, code, scenario)
        }
        let partial = try await mock.call(.authorize, authorize("partial_payment", amount: 1000))
        XCTAssertEqual(partial.amount?.value, 500)
        let providerError = try await mock.call(.authorize, authorize("provider_error"))
        XCTAssertEqual(providerError.problem?.safeToRetryElsewhere, true)
        let declined = try await mock.call(.authorize, authorize("card_declined"))
        XCTAssertEqual(declined.problem?.safeToRetryElsewhere, false)
    }

    func testPendingThenSuccessSettlesOnVerify() async throws {
        let pending = try await mock.call(.authorize, authorize("pending_then_success"))
        XCTAssertEqual(pending.status, .pending)
        let settled = try await mock.call(.verify, VerifyRequest(paymentId: "p", providerReference: pending.providerReference))
        XCTAssertEqual(settled.status, .succeeded)
    }

    func testOTPIsRetryableUntilTheThirdMiss() async throws {
        let pending = try await mock.call(.authorize, authorize("otp"))
        XCTAssertEqual(pending.action?.type, .otp)
        let reference = try XCTUnwrap(pending.providerReference)
        let miss = try await mock.call(.continue, ContinueRequest(paymentId: "p", idempotencyKey: "o1", providerReference: reference, otp: "000000"))
        XCTAssertEqual(miss.status, .pending)
        XCTAssertEqual(miss.problem?.code, "otp_invalid")
        XCTAssertEqual(miss.problem?.retryable, true)
        let hit = try await mock.call(.continue, ContinueRequest(paymentId: "p", idempotencyKey: "o2", providerReference: reference, otp: pending.action?.sandboxOtp))
        XCTAssertEqual(hit.status, .succeeded)
    }

    func testNetworkDropIsAnUnknownOutcomeThatVerifyResolves() async throws {
        let request = authorize("network_drop")
        do {
            _ = try await mock.call(.authorize, request)
            XCTFail("a dropped connection must not produce a result")
        } catch {
            XCTAssertEqual(error, .failed(.outcomeUnknown, message: "connection reset after the request was sent"))
            XCTAssertTrue(error.outcomeUnknown)
        }
        let verified = try await mock.call(.verify, VerifyRequest(paymentId: request.paymentId, providerReference: nil))
        XCTAssertEqual(verified.status, .succeeded, "the provider charged: verify must say so")
    }

    // MARK: Round trips: the C adapter

    func testExampleCRoundTripsAuthorizeAndVerify() async throws {
        var request = authorize(nil, amount: 1200)
        request.method = "visa"
        let approved = try await exampleC.call(.authorize, request)
        XCTAssertEqual(approved.status, .succeeded)
        XCTAssertEqual(approved.amount, Money(value: 1200, currency: "SAR"))
        let verified = try await exampleC.call(.verify, VerifyRequest(paymentId: request.paymentId, providerReference: approved.providerReference))
        XCTAssertEqual(verified.status, .succeeded)

        request.amount.value = 2_000_000
        request.idempotencyKey = UUID().uuidString
        let declined = try await exampleC.call(.authorize, request)
        XCTAssertEqual(declined.status, .failed)
        XCTAssertEqual(declined.problem?.code, "card_declined")
    }

    /// example-c, like the mock, answers a replayed key with its first answer
    /// and refuses another request under it.
    func testExampleCReplaysAKeysFirstAnswerAndRefusesAnotherRequest() async throws {
        var request = authorize(nil, amount: 1200, key: "c-same-key")
        request.method = "visa"
        let first = try await exampleC.call(.authorize, request)
        let again = try await exampleC.call(.authorize, request)
        XCTAssertEqual(first, again, "the same request under its key: the first answer")
        request.amount.value = 1300
        let other = await exampleC.invoke(.authorize, payload: request.jsonBytes())
        XCTAssertEqual(other, .refused(status: ABIStatus.invalidRequest.rawValue))
    }

    /// A literal that is not true, false, null or a number, even in a member
    /// example-c does not read, makes the request malformed: nothing charged.
    func testExampleCRefusesAMalformedLiteralBesideValidMembers() async throws {
        var request = authorize(nil, amount: 1200)
        request.method = "visa"
        var bytes = request.jsonBytes()
        bytes.removeLast()   // the closing brace
        bytes += Array(#","junk":tru}"#.utf8)
        let outcome = await exampleC.invoke(.authorize, payload: Data(bytes))
        XCTAssertEqual(outcome, .refused(status: ABIStatus.invalidRequest.rawValue))
        for literal in ["1.", "01", "-", "1e", "nul", "truex"] {
            var other = request.jsonBytes()
            other.removeLast()
            other += Array(#","junk":\#(literal)}"#.utf8)
            let refused = await exampleC.invoke(.authorize, payload: Data(other))
            XCTAssertEqual(refused, .refused(status: ABIStatus.invalidRequest.rawValue), literal)
        }
    }

    func testExampleCRefusesWhatItDoesNotImplement() async throws {
        let outcome = await exampleC.invoke(.refund, payload: Data("{}".utf8))
        XCTAssertEqual(outcome, .refused(status: ABIStatus.unsupported.rawValue))
        let garbage = await exampleC.invoke(.authorize, payload: Data("{\"paymentId\":".utf8))
        XCTAssertEqual(garbage, .refused(status: ABIStatus.invalidRequest.rawValue))
    }

    // MARK: Exactly once, concurrency, threads

    func testThousandConcurrentInvokesEachCompleteExactlyOnce() async throws {
        for adapter in [mock, exampleC] {
            let results = try await withThrowingTaskGroup(of: AdapterResult.self) { group in
                for i in 0..<1000 {
                    var request = authorize("success", amount: 1000 + Int64(i))
                    request.method = adapter === exampleC ? "visa" : "mada"
                    group.addTask { try await adapter.call(.authorize, request) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(results.count, 1000)
            XCTAssertEqual(Set(results.compactMap(\.providerReference)).count, 1000, "each call got its own answer")
            XCTAssertEqual(Set(results.compactMap(\.amount?.value)).count, 1000)
            XCTAssertEqual(adapter.protocolViolations.count, 0)
            XCTAssertEqual(adapter.outstandingCalls, 0)
        }
    }

    func testCompletionFromAThreadTheHostDoesNotOwn() async throws {
        try await FabricatedAdapter(id: "threads", foreignThread: true).install(in: folder, manifestName: "threads.json")
        let adapter = try XCTUnwrap(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("threads.json"), loader: folder.loader).adapter)
        let results = try await withThrowingTaskGroup(of: AdapterResult.self) { group in
            for _ in 0..<200 {
                let request = authorize(nil)
                group.addTask { try await adapter.call(.authorize, request) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(results.count, 200)
        XCTAssertTrue(results.allSatisfy { $0.providerStatus == "OTHER_THREAD" })
        XCTAssertEqual(adapter.protocolViolations.count, 0)
        await adapter.shutdown()
    }

    func testDuplicateCompletionIsIgnoredAndReportedAsAViolation() async throws {
        try await FabricatedAdapter(id: "twice", completions: 2).install(in: folder, manifestName: "twice.json")
        let adapter = try XCTUnwrap(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("twice.json"), loader: folder.loader).adapter)
        let result = try await adapter.call(.authorize, authorize(nil))
        XCTAssertEqual(result.status, .succeeded, "the first completion wins")
        XCTAssertEqual(adapter.protocolViolations.count, 1)
        XCTAssertTrue(adapter.protocolViolations.first[0].detail.contains("second completion"))
        await adapter.shutdown()
    }

    func testDeadlineResolvesAsTimedOutAndTheLateCancelCompletionIsAbsorbed() async throws {
        let request = authorize("timeout")
        do {
            _ = try await mock.call(.authorize, request, timeout: .milliseconds(200))
            XCTFail("expected a timeout")
        } catch {
            XCTAssertEqual(error, .timedOut)
            XCTAssertTrue(error.outcomeUnknown)
        }
        // The host told the adapter to cancel; its (late) completion must arrive and be absorbed.
        for _ in 0..<200 where mock.outstandingCalls > 0 { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertEqual(mock.outstandingCalls, 0)
        XCTAssertEqual(mock.protocolViolations.count, 0)
        let verified = try await mock.call(.verify, VerifyRequest(paymentId: request.paymentId, providerReference: nil))
        XCTAssertEqual(verified.status, .succeeded)
    }

    func testCancellingTheCallerCancelsTheCallInTheAdapter() async throws {
        let mock = self.mock
        let request = authorize("timeout")
        let task = Task { await mock.invoke(.authorize, payload: try! JSONEncoder().encode(request), timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let outcome = await task.value
        XCTAssertEqual(outcome, .cancelled)
        for _ in 0..<200 where mock.outstandingCalls > 0 { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertEqual(mock.outstandingCalls, 0, "the adapter completed the cancelled call")
        XCTAssertEqual(mock.protocolViolations.count, 0)
    }

    func testShutdownNeverDestroysAnInstanceThatStillOwesACompletion() async throws {
        try await FabricatedAdapter(id: "silent", completions: 0).install(in: folder, manifestName: "silent.json")
        let adapter = try XCTUnwrap(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("silent.json"), loader: folder.loader).adapter)
        let outcome = await adapter.invoke(.authorize, payload: Data(authorize(nil).jsonBytes()), timeout: .milliseconds(50))
        XCTAssertEqual(outcome, .timedOut)
        XCTAssertEqual(adapter.outstandingCalls, 1, "the adapter still owes the completion")
        let destroyed = await adapter.shutdown(grace: .milliseconds(100))
        XCTAssertFalse(destroyed, "destroying it could free memory a worker still uses")
    }

    func testShutdownWaitsForCallsThenRefusesNewOnes() async throws {
        let mock = self.mock
        let request = AuthorizeRequest(
            paymentId: "slow", idempotencyKey: "slow", amount: Money(value: 1000, currency: "SAR"), method: "mada",
            orderId: "o", instrument: ["delay_ms": .number(200)])
        let slow = Task { try await mock.call(.authorize, request) }
        try await Task.sleep(for: .milliseconds(20))
        let destroyed = await mock.shutdown(grace: .seconds(5))
        XCTAssertTrue(destroyed)
        let result = try await slow.value
        XCTAssertEqual(result.status, .succeeded, "the call in flight finished before destroy")
        let after = await mock.invoke(.verify, payload: Data(VerifyRequest(paymentId: "p", providerReference: nil).jsonBytes()))
        XCTAssertEqual(after, .refused(status: ABIStatus.busy.rawValue))
    }

    // MARK: Host services

    func testEgressOutsideTheAllowlistIsRefusedWithATypedStatus() async throws {
        try await FabricatedAdapter(id: "egress", egressURL: "http://127.0.0.1:9/steal").install(in: folder, manifestName: "egress.json")
        let adapter = try XCTUnwrap(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("egress.json"), loader: folder.loader).adapter)
        do {
            _ = try await adapter.call(.authorize, authorize(nil))
            XCTFail("egress to a host outside the allowlist must fail")
        } catch {
            guard case .failed(let status, let message) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(status, .denied)
            XCTAssertTrue(message.contains("127.0.0.1:9 is not in the manifest's egress allowlist"), message)
            XCTAssertFalse(error.outcomeUnknown, "nothing was sent")
        }
        await adapter.shutdown()
    }

    func testEgressToAnAllowedLoopbackEndpointReturnsTheResponse() async throws {
        let server = try LoopbackHTTPServer(body: "pong")
        let url = "http://127.0.0.1:\(server.port)/ping"
        try await FabricatedAdapter(id: "egress-ok", egressURL: url)
            .install(in: folder, manifestName: "egress-ok.json", manifestChanges: ["egress": ["127.0.0.1:\(server.port)"]])
        let adapter = try XCTUnwrap(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("egress-ok.json"), loader: folder.loader).adapter)
        let outcome = await adapter.invoke(.authorize, payload: Data(authorize(nil).jsonBytes()))
        guard case .completed(let status, let document) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(status, 0)
        struct Response: Decodable { var status: Int; var headers: [String: String]; var body: String }
        let response = try JSONDecoder().decode(Response.self, from: document)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["x-sim"], "yes")
        XCTAssertEqual(Data(base64Encoded: response.body), Data("pong".utf8))
        XCTAssertEqual(server.requestLines, ["GET /ping HTTP/1.1"])
        await adapter.shutdown()
    }

    func testSecretsReachTheAdapterFromAFileReference() async throws {
        let secretFile = folder.root.appendingPathComponent("webhook.secret")
        try Data("s3cr3t-for-tests\n".utf8).write(to: secretFile)
        try folder.writeVariant(of: "mock.json", as: "mock.json", ["secrets": ["webhook_secret": "file:\(secretFile.path)"]])
        let adapter = try XCTUnwrap(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("mock.json"), loader: folder.loader).adapter)
        let payment = try await adapter.call(.authorize, authorize("success"))
        let body = Data(#"{"eventId":"evt_1","providerReference":"\#(payment.providerReference!)"}"#.utf8)
        let signature = HMACTestVector.sha256Hex(key: Array("s3cr3t-for-tests".utf8), message: Array(body))
        let good = try await adapter.call(.webhook, WebhookRequest(headers: ["x-mock-signature": signature], body: body.base64EncodedString()), as: WebhookResult.self)
        XCTAssertTrue(good.verified)
        XCTAssertEqual(good.status, .succeeded)
        XCTAssertEqual(good.providerReference, payment.providerReference)
        let forged = try await adapter.call(.webhook, WebhookRequest(headers: ["x-mock-signature": String(repeating: "ab", count: 32)], body: body.base64EncodedString()), as: WebhookResult.self)
        XCTAssertFalse(forged.verified)
        await adapter.shutdown()
    }
}
