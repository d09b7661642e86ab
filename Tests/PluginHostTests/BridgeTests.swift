import Foundation
import GatewayPayloads
@testable import PluginHost
import Synchronization
import Testing
import TestSupport

/// The libffi bridge, end to end through real dlopened adapters: round trips of
/// every operation, exactly-once completion under concurrency and from foreign
/// threads, deadlines, cancellation, and protocol violations.
@Suite struct BridgeTests {
    /// A scratch folder with the shipped mock and example-c loaded from it, and
    /// every adapter a test loads besides (``load(_:)``); ``withFixture(_:)``
    /// shuts them all down after the test, however it ended.
    final class Fixture {
        let folder: ManifestFolder
        let records: [ProviderRecord]
        private var loaded: [AdapterInstance] = []

        init() throws {
            folder = try ManifestFolder()
            records = try folder.loadAll()
        }

        var mock: AdapterInstance {
            get throws { try #require(records[id: "mock"]?.adapter, "mock not loaded: \(String(describing: records[id: "mock"]?.failure))") }
        }

        var exampleC: AdapterInstance {
            get throws {
                try #require(records[id: "example-c"]?.adapter, "example-c not loaded: \(String(describing: records[id: "example-c"]?.failure))")
            }
        }

        /// Loads the folder's manifest `name` on its own; the adapter is shut down with the fixture.
        func load(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> AdapterInstance {
            let record = ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent(name), loader: folder.loader)
            if let adapter = record.adapter { loaded.append(adapter) }
            return try #require(record.adapter, "\(name) not loaded: \(String(describing: record.failure))", sourceLocation: sourceLocation)
        }

        /// Shuts down every adapter of the fixture (one a test already shut down returns at once).
        func shutDown() async {
            for adapter in loaded { await adapter.shutdown(grace: .seconds(2).scaled) }
            for record in records { await record.adapter?.shutdown(grace: .seconds(2).scaled) }
        }
    }

    /// Runs `body` with a fresh ``Fixture``, then shuts the fixture's adapters
    /// down, whether `body` returned, failed an expectation or threw.
    func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        let fixture = try Fixture()
        do {
            try await body(fixture)
        } catch {
            await fixture.shutDown()
            throw error
        }
        await fixture.shutDown()
    }

    /// Set once by a task, read by a poll.
    final class Flag: Sendable {
        private let state = Mutex(false)
        func set() { state.withLock { $0 = true } }
        var isSet: Bool { state.withLock { $0 } }
    }

    /// The deadline of the calls of a burst (a thousand at once): a backstop,
    /// never what decides the result on a slow machine.
    static let burstTimeout: Duration = .seconds(60).scaled

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
    @Test(.heavy) func theMockForgetsItsOldestPaymentsPastItsBound() async throws {
        try await withFixture { f in
            let mock = try f.mock
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
            #expect(forgotten.problem?.code == .unknownPayment)
            let newest = try await mock.call(.verify, VerifyRequest(paymentId: last.paymentId, providerReference: nil))
            #expect(newest.status == .succeeded, "found by its payment id")
        }
    }


    @Test func mockRoundTripsEveryOperation() async throws {
        try await withFixture { f in
            let mock = try f.mock
            let authorized = try await mock.call(.authorize, authorize("success", amount: 5000, capture: .manual))
            #expect(authorized.status == .authorized)
            #expect(authorized.amount == Money(value: 5000, currency: "SAR"))
            let reference = try #require(authorized.providerReference)

            let verified = try await mock.call(.verify, VerifyRequest(paymentId: "p", providerReference: reference))
            #expect(verified.status == .authorized)

            let captured = try await mock.call(.capture, AmountRequest(paymentId: "p", idempotencyKey: "c1", providerReference: reference, amount: Money(value: 3000, currency: "SAR")))
            #expect(captured.status == .succeeded)
            let overCapture = try await mock.call(.capture, AmountRequest(paymentId: "p", idempotencyKey: "c2", providerReference: reference, amount: Money(value: 2001, currency: "SAR")))
            #expect(overCapture.problem?.code == .amountExceedsAuthorized)

            let refunded = try await mock.call(.refund, AmountRequest(paymentId: "p", idempotencyKey: "r1", providerReference: reference, amount: Money(value: 3000, currency: "SAR")))
            #expect(refunded.status == .succeeded)
            let overRefund = try await mock.call(.refund, AmountRequest(paymentId: "p", idempotencyKey: "r2", providerReference: reference, amount: Money(value: 1, currency: "SAR")))
            #expect(overRefund.problem?.code == .amountExceedsCaptured)

            let second = try await mock.call(.authorize, authorize("success", capture: .manual))
            let voided = try await mock.call(.void, VoidRequest(paymentId: "p2", idempotencyKey: "v1", providerReference: try #require(second.providerReference)))
            #expect(voided.status == .succeeded)

            let threeDS = try await mock.call(.authorize, authorize("three_ds"))
            #expect(threeDS.status == .pending)
            #expect(threeDS.action?.type == .threeDS)
            let finished = try await mock.call(.continue, ContinueRequest(paymentId: "p3", idempotencyKey: "k3", providerReference: try #require(threeDS.providerReference), returnParams: ["outcome": "approve"]))
            #expect(finished.status == .succeeded)

            let webhook = try await mock.call(.webhook, WebhookRequest(headers: [:], body: Data("{}".utf8).base64EncodedString()), as: WebhookResult.self)
            #expect(!webhook.verified, "no secret configured: nothing can be verified")
        }
    }

    @Test func idempotencyKeyReplaysTheFirstAnswerAndRefusesAnotherRequest() async throws {
        try await withFixture { f in
            let mock = try f.mock
            let first = try await mock.call(.authorize, authorize("success", key: "same-key"))
            let again = try await mock.call(.authorize, authorize("success", key: "same-key"))
            #expect(first == again)
            // Another request under the key: refused, nothing charged (a real PSP's answer, not the first request's).
            do {
                _ = try await mock.call(.authorize, authorize("success", amount: 99_999, key: "same-key"))
                Issue.record("another amount under a key already answered was answered")
            } catch let error as AdapterCallError {
                // Refused at invoke: nothing was sent.
                guard case .refused(let status, _) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(status == .invalidRequest)
            }
            let replayed = try await mock.call(.authorize, authorize("success", key: "same-key"))
            #expect(replayed == first, "the first request still replays")
        }
    }

    @Test func everyScenarioMapsToItsDocumentedOutcome() async throws {
        try await withFixture { f in
            let mock = try f.mock
            let expectations: [(String, PaymentStatus, ProblemCode?)] = [
                ("success", .succeeded, nil), ("pending_then_success", .pending, nil), ("three_ds", .pending, nil),
                ("otp", .pending, nil), ("insufficient_funds", .failed, "insufficient_funds"), ("card_declined", .failed, "card_declined"),
                ("partial_payment", .succeeded, nil), ("user_cancelled", .cancelled, "user_cancelled"), ("provider_error", .failed, "provider_error"),
            ]
            for (scenario, status, code) in expectations {
                let result = try await mock.call(.authorize, authorize(scenario))
                #expect(result.status == status, "\(scenario)")
                #expect(result.problem?.code == code, "\(scenario)")
            }
            let partial = try await mock.call(.authorize, authorize("partial_payment", amount: 1000))
            #expect(partial.amount?.value == 500)
            let providerError = try await mock.call(.authorize, authorize("provider_error"))
            #expect(providerError.problem?.safeToRetryElsewhere == true)
            let declined = try await mock.call(.authorize, authorize("card_declined"))
            #expect(declined.problem?.safeToRetryElsewhere == false)
        }
    }

    @Test func pendingThenSuccessSettlesOnVerify() async throws {
        try await withFixture { f in
            let mock = try f.mock
            let pending = try await mock.call(.authorize, authorize("pending_then_success"))
            #expect(pending.status == .pending)
            let settled = try await mock.call(.verify, VerifyRequest(paymentId: "p", providerReference: pending.providerReference))
            #expect(settled.status == .succeeded)
        }
    }

    @Test func oTPIsRetryableUntilTheThirdMiss() async throws {
        try await withFixture { f in
            let mock = try f.mock
            let pending = try await mock.call(.authorize, authorize("otp"))
            #expect(pending.action?.type == .otp)
            let reference = try #require(pending.providerReference)
            let miss = try await mock.call(.continue, ContinueRequest(paymentId: "p", idempotencyKey: "o1", providerReference: reference, otp: "000000"))
            #expect(miss.status == .pending)
            #expect(miss.problem?.code == .otpInvalid)
            #expect(miss.problem?.retryable == true)
            let hit = try await mock.call(.continue, ContinueRequest(paymentId: "p", idempotencyKey: "o2", providerReference: reference, otp: pending.action?.sandboxOtp))
            #expect(hit.status == .succeeded)
        }
    }

    @Test func networkDropIsAnUnknownOutcomeThatVerifyResolves() async throws {
        try await withFixture { f in
            let mock = try f.mock
            let request = authorize("network_drop")
            do throws(AdapterCallError) {
                _ = try await mock.call(.authorize, request)
                Issue.record("a dropped connection must not produce a result")
            } catch {
                #expect(error == .failed(.outcomeUnknown, message: "connection reset after the request was sent"))
                #expect(error.outcomeUnknown)
            }
            let verified = try await mock.call(.verify, VerifyRequest(paymentId: request.paymentId, providerReference: nil))
            #expect(verified.status == .succeeded, "the provider charged: verify must say so")
        }
    }

    // MARK: Round trips: the C adapter

    @Test func exampleCRoundTripsAuthorizeAndVerify() async throws {
        try await withFixture { f in
            let exampleC = try f.exampleC
            var request = authorize(nil, amount: 1200)
            request.method = "visa"
            let approved = try await exampleC.call(.authorize, request)
            #expect(approved.status == .succeeded)
            #expect(approved.amount == Money(value: 1200, currency: "SAR"))
            let verified = try await exampleC.call(.verify, VerifyRequest(paymentId: request.paymentId, providerReference: approved.providerReference))
            #expect(verified.status == .succeeded)

            request.amount.value = 2_000_000
            request.idempotencyKey = UUID().uuidString
            let declined = try await exampleC.call(.authorize, request)
            #expect(declined.status == .failed)
            #expect(declined.problem?.code == .cardDeclined)
        }
    }

    /// example-c, like the mock, answers a replayed key with its first answer
    /// and refuses another request under it.
    @Test func exampleCReplaysAKeysFirstAnswerAndRefusesAnotherRequest() async throws {
        try await withFixture { f in
            let exampleC = try f.exampleC
            var request = authorize(nil, amount: 1200, key: "c-same-key")
            request.method = "visa"
            let first = try await exampleC.call(.authorize, request)
            let again = try await exampleC.call(.authorize, request)
            #expect(first == again, "the same request under its key: the first answer")
            request.amount.value = 1300
            let other = await exampleC.invoke(.authorize, payload: request.jsonBytes())
            #expect(other == .refused(status: ABIStatus.invalidRequest.rawValue))
        }
    }

    /// A literal that is not true, false, null or a number, even in a member
    /// example-c does not read, makes the request malformed: nothing charged.
    @Test func exampleCRefusesAMalformedLiteralBesideValidMembers() async throws {
        try await withFixture { f in
            let exampleC = try f.exampleC
            var request = authorize(nil, amount: 1200)
            request.method = "visa"
            var bytes = request.jsonBytes()
            bytes.removeLast()   // the closing brace
            bytes += Array(#","junk":tru}"#.utf8)
            let outcome = await exampleC.invoke(.authorize, payload: Data(bytes))
            #expect(outcome == .refused(status: ABIStatus.invalidRequest.rawValue))
            for literal in ["1.", "01", "-", "1e", "nul", "truex"] {
                var other = request.jsonBytes()
                other.removeLast()
                other += Array(#","junk":\#(literal)}"#.utf8)
                let refused = await exampleC.invoke(.authorize, payload: Data(other))
                #expect(refused == .refused(status: ABIStatus.invalidRequest.rawValue), "\(literal)")
            }
        }
    }

    @Test func exampleCRefusesWhatItDoesNotImplement() async throws {
        try await withFixture { f in
            let exampleC = try f.exampleC
            let outcome = await exampleC.invoke(.refund, payload: Data("{}".utf8))
            #expect(outcome == .refused(status: ABIStatus.unsupported.rawValue))
            let garbage = await exampleC.invoke(.authorize, payload: Data("{\"paymentId\":".utf8))
            #expect(garbage == .refused(status: ABIStatus.invalidRequest.rawValue))
        }
    }

    // MARK: Exactly once, concurrency, threads

    @Test(.heavy) func thousandConcurrentInvokesEachCompleteExactlyOnce() async throws {
        try await withFixture { f in
            let mock = try f.mock
            let exampleC = try f.exampleC
            for adapter in [mock, exampleC] {
                let results = try await withThrowingTaskGroup(of: AdapterResult.self) { group in
                    for i in 0..<1000 {
                        var request = authorize("success", amount: 1000 + Int64(i))
                        request.method = adapter === exampleC ? "visa" : "mada"
                        group.addTask { try await adapter.call(.authorize, request, timeout: Self.burstTimeout) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(results.count == 1000)
                #expect(Set(results.compactMap(\.providerReference)).count == 1000, "each call got its own answer")
                #expect(Set(results.compactMap(\.amount?.value)).count == 1000)
                #expect(adapter.protocolViolations.count == 0)
                #expect(adapter.outstandingCalls == 0)
            }
        }
    }

    @Test func completionFromAThreadTheHostDoesNotOwn() async throws {
        try await withFixture { f in
            try await FabricatedAdapter(id: "threads", foreignThread: true).install(in: f.folder, manifestName: "threads.json")
            let adapter = try f.load("threads.json")
            let results = try await withThrowingTaskGroup(of: AdapterResult.self) { group in
                for _ in 0..<200 {
                    let request = authorize(nil)
                    group.addTask { try await adapter.call(.authorize, request, timeout: Self.burstTimeout) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 200)
            #expect(results.allSatisfy { $0.providerStatus == "OTHER_THREAD" })
            #expect(adapter.protocolViolations.count == 0)
            await adapter.shutdown()
        }
    }

    @Test func duplicateCompletionIsIgnoredAndReportedAsAViolation() async throws {
        try await withFixture { f in
            try await FabricatedAdapter(id: "twice", completions: 2).install(in: f.folder, manifestName: "twice.json")
            let adapter = try f.load("twice.json")
            let result = try await adapter.call(.authorize, authorize(nil))
            #expect(result.status == .succeeded, "the first completion wins")
            #expect(adapter.protocolViolations.count == 1)
            #expect(adapter.protocolViolations.first.first?.detail.contains("second completion") == true)
            await adapter.shutdown()
        }
    }

    @Test func deadlineResolvesAsTimedOutAndTheLateCancelCompletionIsAbsorbed() async throws {
        try await withFixture { f in
            let mock = try f.mock
            let request = authorize("timeout")
            do throws(AdapterCallError) {
                // Expected to expire: the "timeout" scenario never answers until cancelled.
                _ = try await mock.call(.authorize, request, timeout: .milliseconds(200))
                Issue.record("expected a timeout")
            } catch {
                #expect(error == .timedOut)
                #expect(error.outcomeUnknown)
            }
            // The host told the adapter to cancel; its (late) completion must arrive and be absorbed.
            _ = try await waitUntil { mock.outstandingCalls == 0 }
            #expect(mock.outstandingCalls == 0)
            #expect(mock.protocolViolations.count == 0)
            let verified = try await mock.call(.verify, VerifyRequest(paymentId: request.paymentId, providerReference: nil))
            #expect(verified.status == .succeeded)
        }
    }

    @Test func cancellingTheCallerCancelsTheCallInTheAdapter() async throws {
        try await withFixture { f in
            let mock = try f.mock
            let request = authorize("timeout")
            let task = Task { await mock.invoke(.authorize, payload: Data(request.jsonBytes()), timeout: .seconds(60).scaled) }
            // Cancelled once the call is in flight (the host registered it and handed it to the adapter).
            #expect(try await waitUntil { mock.outstandingCalls == 1 }, "the call never went out")
            task.cancel()
            let outcome = await task.value
            #expect(outcome == .cancelled)
            _ = try await waitUntil { mock.outstandingCalls == 0 }
            #expect(mock.outstandingCalls == 0, "the adapter completed the cancelled call")
            #expect(mock.protocolViolations.count == 0)
        }
    }

    @Test func shutdownNeverDestroysAnInstanceThatStillOwesACompletion() async throws {
        try await withFixture { f in
            try await FabricatedAdapter(id: "silent", completions: 0).install(in: f.folder, manifestName: "silent.json")
            let adapter = try f.load("silent.json")
            // Both deadlines are expected to expire: the adapter never completes.
            let outcome = await adapter.invoke(.authorize, payload: Data(authorize(nil).jsonBytes()), timeout: .milliseconds(50))
            #expect(outcome == .timedOut)
            #expect(adapter.outstandingCalls == 1, "the adapter still owes the completion")
            let destroyed = await adapter.shutdown(grace: .milliseconds(100))
            #expect(!destroyed, "destroying it could free memory a worker still uses")
        }
    }

    @Test func shutdownWaitsForCallsThenRefusesNewOnes() async throws {
        try await withFixture { f in
            let mock = try f.mock
            let request = AuthorizeRequest(
                paymentId: "slow", idempotencyKey: "slow", amount: Money(value: 1000, currency: "SAR"), method: "mada",
                orderId: "o", instrument: ["delay_ms": .integer(200)])
            let finished = Flag()
            let slow = Task {
                defer { finished.set() }
                return try await mock.call(.authorize, request)
            }
            // Shut down once the slow call is in flight (a machine slow enough to let it finish first still checks the rest).
            #expect(try await waitUntil { mock.outstandingCalls == 1 || finished.isSet }, "the slow call never went out")
            let destroyed = await mock.shutdown(grace: .seconds(5).scaled)
            #expect(destroyed)
            let result = try await slow.value
            #expect(result.status == .succeeded, "the call in flight finished before destroy")
            let after = await mock.invoke(.verify, payload: Data(VerifyRequest(paymentId: "p", providerReference: nil).jsonBytes()))
            #expect(after == .refused(status: ABIStatus.busy.rawValue))
        }
    }

    // MARK: Host services

    @Test func egressOutsideTheAllowlistIsRefusedWithATypedStatus() async throws {
        try await withFixture { f in
            try await FabricatedAdapter(id: "egress", egressURL: "http://127.0.0.1:9/steal").install(in: f.folder, manifestName: "egress.json")
            let adapter = try f.load("egress.json")
            do throws(AdapterCallError) {
                _ = try await adapter.call(.authorize, authorize(nil))
                Issue.record("egress to a host outside the allowlist must fail")
            } catch {
                guard case .failed(let status, let message) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(status == .denied)
                #expect(message.contains("127.0.0.1:9 is not in the manifest's egress allowlist"), "\(message)")
                #expect(!error.outcomeUnknown, "nothing was sent")
            }
            await adapter.shutdown()
        }
    }

    @Test func egressToAnAllowedLoopbackEndpointReturnsTheResponse() async throws {
        try await withFixture { f in
            let server = try LoopbackHTTPServer(body: "pong")
            let url = "http://127.0.0.1:\(server.port)/ping"
            try await FabricatedAdapter(id: "egress-ok", egressURL: url)
                .install(in: f.folder, manifestName: "egress-ok.json", manifestChanges: ["egress": ["127.0.0.1:\(server.port)"]])
            let adapter = try f.load("egress-ok.json")
            let outcome = await adapter.invoke(.authorize, payload: Data(authorize(nil).jsonBytes()))
            guard case .completed(let status, let document) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(status == 0)
            struct Response: Decodable { var status: Int; var headers: [String: String]; var body: String }
            let response = try JSONDecoder().decode(Response.self, from: document)
            #expect(response.status == 200)
            #expect(response.headers["x-sim"] == "yes")
            #expect(Data(base64Encoded: response.body) == Data("pong".utf8))
            #expect(server.requestLines == ["GET /ping HTTP/1.1"])
            await adapter.shutdown()
        }
    }

    /// An isolated adapter's secrets are held in its runner from its start:
    /// `secret_get` is answered there, with no thread waiting on the host.
    /// So the value a runner holds is the one of its start, in process the
    /// one of each call: a rotated file reaches a runner when one starts again.
    @Test func aRunnerHoldsTheSecretsItStartedWithAndANewRunnerTheRotatedOnes() async throws {
        try await withFixture { f in
            let secretFile = f.folder.root.appendingPathComponent("webhook.secret")
            try Data("first-secret\n".utf8).write(to: secretFile)
            try f.folder.writeVariant(of: "mock.json", as: "mock.json",
                                      ["secrets": ["webhook_secret": "file:\(secretFile.path)"], "isolation": "process"])
            func verified(_ adapter: AdapterInstance, reference: String, key: String) async throws -> Bool {
                let body = Data(#"{"eventId":"evt_\#(UUID().uuidString)","providerReference":"\#(reference)"}"#.utf8)
                let signature = HMACTestVector.sha256Hex(key: Array(key.utf8), message: Array(body))
                return try await adapter.call(.webhook, WebhookRequest(headers: ["x-mock-signature": signature], body: body.base64EncodedString()),
                                              as: WebhookResult.self).verified
            }
            let first = try f.load("mock.json")
            #expect(first.runner != nil, "the mock runs in a runner here")
            let reference = try #require(try await first.call(.authorize, authorize("success")).providerReference)
            #expect(try await verified(first, reference: reference, key: "first-secret"))
            try Data("second-secret\n".utf8).write(to: secretFile)
            #expect(try await verified(first, reference: reference, key: "first-secret"), "the runner answers from what it started with")
            #expect(try await !verified(first, reference: reference, key: "second-secret"))
            let second = try f.load("mock.json")
            let again = try #require(try await second.call(.authorize, authorize("success")).providerReference)
            #expect(try await verified(second, reference: again, key: "second-secret"), "a runner started after the rotation holds the new value")
            #expect(try await !verified(second, reference: again, key: "first-secret"))
        }
    }

    @Test func secretsReachTheAdapterFromAFileReference() async throws {
        try await withFixture { f in
            let secretFile = f.folder.root.appendingPathComponent("webhook.secret")
            try Data("s3cr3t-for-tests\n".utf8).write(to: secretFile)
            try f.folder.writeVariant(of: "mock.json", as: "mock.json", ["secrets": ["webhook_secret": "file:\(secretFile.path)"]])
            let adapter = try f.load("mock.json")
            let payment = try await adapter.call(.authorize, authorize("success"))
            let reference = try #require(payment.providerReference)
            let body = Data(#"{"eventId":"evt_1","providerReference":"\#(reference)"}"#.utf8)
            let signature = HMACTestVector.sha256Hex(key: Array("s3cr3t-for-tests".utf8), message: Array(body))
            let good = try await adapter.call(.webhook, WebhookRequest(headers: ["x-mock-signature": signature], body: body.base64EncodedString()), as: WebhookResult.self)
            #expect(good.verified)
            #expect(good.status == .succeeded)
            #expect(good.providerReference == payment.providerReference)
            let forged = try await adapter.call(.webhook, WebhookRequest(headers: ["x-mock-signature": String(repeating: "ab", count: 32)], body: body.base64EncodedString()), as: WebhookResult.self)
            #expect(!forged.verified)
            await adapter.shutdown()
        }
    }
}
