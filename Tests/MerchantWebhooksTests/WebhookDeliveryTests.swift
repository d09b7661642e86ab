import CheckoutEngine
import Crypto
import Foundation
import GatewayPayloads
import MerchantWebhooks
import PostgresCheckoutStore
import SQLiteCheckoutStore
import Testing
import TestSupport

/// The outbox delivered through the real engine and store, to receivers
/// that fail the ways merchants' endpoints do: every event arrives, in order
/// per session, its `webhook-id` stable across tries, signed with the
/// endpoint's secret; modes never mix; a removed endpoint gets nothing more;
/// an endpoint past its window is disabled and gets its kept events in order
/// once enabled; the address is checked again at each delivery.
@Suite(.serialized) struct WebhookDeliveryTests {
    /// A store for the engine and the outbox: SQLite in memory, or PostgreSQL
    /// on a schema of its own when the suite has a cluster.
    enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }

        func make() async throws -> (any CheckoutStore & WebhookStore)? {
            switch self {
            case .sqlite: return try SQLiteCheckoutStore.inMemory()
            case .postgres:
                guard TestPostgres.isAvailable else {
                    #expect(!TestPostgres.requiredButMissing, "CI is set but GATEWAY_TEST_POSTGRES_URL is not: run the tests under scripts/test-postgres")
                    return nil
                }
                return try await TestPostgres.store()
            }
        }
    }

    /// An engine paying through an approving provider, a deliverer woken by
    /// its commits, and the endpoints' service, over one store.
    struct Harness {
        let store: any CheckoutStore & WebhookStore
        let checkout: Checkout
        let deliverer: WebhookDeliverer
        let endpoints: WebhookEndpoints

        static let sealer = try! SecretSealer(key: Data(repeating: 9, count: 32))

        init(store: any CheckoutStore & WebhookStore, configure: (inout WebhookConfiguration) -> Void = { _ in }) {
            var configuration = WebhookConfiguration()
            configuration.allowPrivate = true
            configuration.timeout = .seconds(2)
            configuration.schedule = RetrySchedule(first: .milliseconds(20), longest: .milliseconds(200), window: .seconds(3600))
            configuration.poll = .milliseconds(100)
            configuration.leaseMargin = .seconds(1)
            configure(&configuration)
            self.store = store
            let deliverer = WebhookDeliverer(store: store, sealer: Self.sealer, configuration: configuration)
            self.deliverer = deliverer
            endpoints = WebhookEndpoints(store: store, sealer: Self.sealer, allowPrivate: configuration.allowPrivate, changed: { deliverer.due() })
            let provider = ScriptedProvider.approving("mock")
            checkout = Checkout(store: store, providers: StaticProviderDirectory([(profile("mock", priority: 1), provider as any PaymentProvider)]),
                                fingerprintKey: testKey, committed: { deliverer.committed($0, events: $1) })
        }

        /// A session of `mode`, paid when `pay` (a test-mode provider pays test sessions only).
        @discardableResult
        func session(mode: PaymentMode = .test, pay: Bool = true) async throws -> String {
            let id = try await checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o"), mode: mode).session.id
            if pay { _ = try await checkout.attempt(session: id, NewAttempt(method: "mada"), mode: mode) }
            return id
        }

        /// Every event of `mode` in the feed, as `(session, number)`.
        func events(mode: PaymentMode = .test) async throws -> Set<String> {
            var cursor = EventCursor.start
            var all: Set<String> = []
            while true {
                let page = try await store.feed(after: cursor, mode: mode, types: nil, limit: 500)
                for event in page.events { all.insert(event.id) }
                if page.next == cursor || !page.more { break }
                cursor = page.next
            }
            return all
        }

        func close() async {
            await deliverer.stop()
            await store.close()
        }
    }

    /// Whether every `v1` signature check of `request` passes under one of `secrets`.
    static func verified(_ request: ScriptedReceiver.Received, _ secrets: [WebhookSecret]) -> Bool {
        guard let id = request.headers["webhook-id"], let timestamp = request.headers["webhook-timestamp"],
              let header = request.headers["webhook-signature"] else { return false }
        let signed = Data("\(id).\(timestamp).".utf8) + request.body
        let given = header.split(separator: " ").compactMap { part -> Data? in
            let pieces = part.split(separator: ",", maxSplits: 1)
            return pieces.count == 2 && pieces[0] == "v1" ? Data(base64Encoded: String(pieces[1])) : nil
        }
        return secrets.contains { secret in
            let expected = Data(HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: secret.raw)))
            return given.contains(expected)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func everyEventArrivesInOrderThroughEveryKindOfFailure(_ kind: StoreKind) async throws {
        guard let store = try await kind.make() else { return }
        let harness = Harness(store: store)
        // The first tries meet each failure a merchant's endpoint has; then it works.
        let receiver = try await ScriptedReceiver { index, _ in
            switch index {
            case 0: .answer(500)
            case 1: .close
            case 2: .hang
            case 3: .late(200, .seconds(3))
            case 4: .answer(404)
            default: .answer(200)
            }
        }
        let created = try await harness.endpoints.create(url: receiver.url, mode: .test, types: nil, description: "failing at first")
        harness.deliverer.start()
        for _ in 0..<3 { try await harness.session() }
        let expected = try await harness.events()
        #expect(expected.count == 12, "three paid sessions, four events each: \(expected.sorted())")

        let arrived = try await waitUntil {
            Set(receiver.received.filter(\.acknowledged).map(\.webhookID)).isSuperset(of: expected)
        }
        #expect(arrived, "acknowledged: \(receiver.received.filter(\.acknowledged).map(\.webhookID))")
        let log = receiver.received
        // Nothing else was sent, each id is the event's own, every try signed.
        for request in log {
            #expect(expected.contains(request.webhookID), "\(request.webhookID) is not an event of this mode")
            #expect(request.webhookID == "evt_\(request.sessionID)_\(request.sequence)")
            #expect(request.json["id"] as? String == request.webhookID)
            #expect(Self.verified(request, [created.secret]), "\(request.webhookID) is not signed with the endpoint's secret")
        }
        // Each carries the session as the commit that wrote its event left it:
        // made (1), the attempt started (2), its outcome and the session's (3, 4).
        for request in log {
            let session = request.json["session"] as? [String: Any]
            let version = [1: 1, 2: 2, 3: 3, 4: 3][request.sequence]
            #expect(session?["version"] as? Int == version, "\(request.webhookID): \(session?["version"] ?? "none")")
            #expect(session?["status"] as? String == (request.sequence < 3 ? "open" : "completed"), "\(request.webhookID)")
        }
        // Every try of one event sends the same bytes under the same id.
        for (id, tries) in Dictionary(grouping: log, by: \.webhookID) {
            #expect(Set(tries.map(\.body)).count == 1, "\(id) was sent with different bodies")
        }
        #expect(log.count > expected.count, "the failures were retried")
        // In order per session: a later event of a session is sent only
        // after an earlier try of the one before it was acknowledged.
        for (position, request) in log.enumerated() where request.sequence > 1 {
            let before = log[..<position].contains { $0.sessionID == request.sessionID && $0.sequence == request.sequence - 1 && $0.acknowledged }
            #expect(before, "\(request.webhookID) was sent before event \(request.sequence - 1) of its session was delivered")
        }
        await receiver.close()
        await harness.close()
    }

    @Test func aReceiverDownForAWhileGetsEverythingOnceItIsBack() async throws {
        let harness = Harness(store: try SQLiteCheckoutStore.inMemory())
        let first = try await ScriptedReceiver()
        let port = first.port
        let created = try await harness.endpoints.create(url: first.url, mode: .test, types: nil, description: nil)
        await first.close()
        harness.deliverer.start()
        try await harness.session()
        // Nobody listens: the tries fail (connection refused) and are retried.
        #expect(try await waitUntil { (try? await harness.endpoints.counts(created.endpoint.id))?.retrying ?? 0 >= 1 })
        let back = try await ScriptedReceiver(port: port)
        let expected = try await harness.events()
        #expect(try await waitUntil { Set(back.received.filter(\.acknowledged).map(\.webhookID)) == expected })
        #expect(back.received.filter(\.acknowledged).map(\.sequence) == [1, 2, 3, 4])
        await back.close()
        await harness.close()
    }

    @Test func testEndpointsReceiveTestEventsOnlyAndLiveOnesLiveOnly() async throws {
        let harness = Harness(store: try SQLiteCheckoutStore.inMemory())
        let test = try await ScriptedReceiver(), live = try await ScriptedReceiver()
        _ = try await harness.endpoints.create(url: test.url, mode: .test, types: nil, description: nil)
        _ = try await harness.endpoints.create(url: live.url, mode: .live, types: nil, description: nil)
        harness.deliverer.start()
        let testSession = try await harness.session(mode: .test, pay: false)
        let liveSession = try await harness.session(mode: .live, pay: false)
        #expect(try await waitUntil { !test.received.isEmpty && !live.received.isEmpty })
        #expect(test.received.map(\.webhookID) == ["evt_\(testSession)_1"])
        #expect(live.received.map(\.webhookID) == ["evt_\(liveSession)_1"])
        #expect(live.received.allSatisfy { $0.json["mode"] as? String == "live" })
        await test.close()
        await live.close()
        await harness.close()
    }

    @Test func aRemovedEndpointReceivesNothingMore() async throws {
        let harness = Harness(store: try SQLiteCheckoutStore.inMemory())
        let removed = try await ScriptedReceiver(), kept = try await ScriptedReceiver()
        let gone = try await harness.endpoints.create(url: removed.url, mode: .test, types: nil, description: nil)
        _ = try await harness.endpoints.create(url: kept.url, mode: .test, types: ["session.created"], description: "only session.created")
        harness.deliverer.start()
        try await harness.session(pay: false)
        #expect(try await waitUntil { removed.received.count == 1 && kept.received.count == 1 })
        #expect(try await harness.endpoints.remove(gone.endpoint.id, mode: .test) != nil)
        let later = try await harness.session(pay: false)
        // The kept endpoint got the later event: the removed one was passed over, not slow.
        #expect(try await waitUntil { kept.received.contains { $0.sessionID == later } })
        #expect(removed.received.count == 1)
        #expect(kept.received.allSatisfy { $0.json["type"] as? String == "session.created" })
        #expect(try await harness.endpoints.endpoint(gone.endpoint.id, mode: .test) == nil)
        await removed.close()
        await kept.close()
        await harness.close()
    }

    @Test func anEndpointFailingPastItsWindowIsDisabledAndGetsItsKeptEventsInOrderOnceEnabled() async throws {
        let harness = Harness(store: try SQLiteCheckoutStore.inMemory()) {
            $0.schedule = RetrySchedule(first: .milliseconds(20), longest: .milliseconds(50), window: .milliseconds(300))
        }
        let receiver = try await ScriptedReceiver { _, _ in .answer(503) }
        let created = try await harness.endpoints.create(url: receiver.url, mode: .test, types: nil, description: nil)
        harness.deliverer.start()
        let first = try await harness.session()
        #expect(try await waitUntil { (try? await harness.endpoints.endpoint(created.endpoint.id, mode: .test))?.state == .disabled })
        let disabled = try #require(try await harness.endpoints.endpoint(created.endpoint.id, mode: .test))
        #expect(disabled.stateReason?.contains("retry window") == true)
        // Events committed while it is disabled are kept for it.
        let second = try await harness.session()
        let expected = try await harness.events()
        #expect(try await waitUntil {
            guard let counts = try? await harness.endpoints.counts(created.endpoint.id) else { return false }
            return counts.pending + counts.retrying == expected.count
        })
        receiver.setScript { _, _ in .answer(200) }
        _ = try await harness.endpoints.setEnabled(created.endpoint.id, mode: .test, true)
        #expect(try await waitUntil { Set(receiver.received.filter(\.acknowledged).map(\.webhookID)) == expected })
        for session in [first, second] {
            let delivered = receiver.received.filter { $0.acknowledged && $0.sessionID == session }.map(\.sequence)
            #expect(delivered == [1, 2, 3, 4], "\(session): \(delivered)")
        }
        await receiver.close()
        await harness.close()
    }

    @Test func anEventRefusedPastTheWindowIsGivenUpWhileTheEndpointTakesOthers() async throws {
        let harness = Harness(store: try SQLiteCheckoutStore.inMemory()) {
            $0.schedule = RetrySchedule(first: .milliseconds(20), longest: .milliseconds(50), window: .milliseconds(300))
        }
        // The merchant's handler fails on one event only: the first attempt's start.
        let receiver = try await ScriptedReceiver { _, request in
            let order = (request.json["session"] as? [String: Any])?["orderId"] as? String
            return order == "poison" && request.json["type"] as? String == "attempt.started" ? .answer(400) : .answer(200)
        }
        let created = try await harness.endpoints.create(url: receiver.url, mode: .test, types: nil, description: nil)
        harness.deliverer.start()
        let session = try await harness.checkout.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "poison"),
                                                               mode: .test).session.id
        _ = try await harness.checkout.attempt(session: session, NewAttempt(method: "mada"), mode: .test)
        #expect(try await waitUntil { (try? await harness.endpoints.counts(created.endpoint.id))?.retrying == 1 })
        // Other sessions' events keep being taken while it fails.
        let other = try await harness.session(pay: false)
        #expect(try await waitUntil { receiver.received.contains { $0.acknowledged && $0.sessionID == other } })
        // Its session's later events go on once it is given up; the endpoint stays enabled.
        #expect(try await waitUntil { receiver.received.filter { $0.acknowledged && $0.sessionID == session }.map(\.sequence) == [1, 3, 4] })
        // Their outcomes are written just after the receiver answered.
        #expect(try await waitUntil { (try? await harness.endpoints.counts(created.endpoint.id)).map { $0.pending == 0 && $0.retrying == 0 } ?? false })
        let counts = try await harness.endpoints.counts(created.endpoint.id)
        #expect(counts.abandoned == 1 && counts.pending == 0 && counts.retrying == 0, "\(counts)")
        #expect(try await harness.endpoints.endpoint(created.endpoint.id, mode: .test)?.state == .enabled)
        // Fixed, a replay sends it again.
        receiver.setScript { _, _ in .answer(200) }
        #expect(try await harness.endpoints.replay(created.endpoint.id, mode: .test, after: .start, through: nil) == 5)
        #expect(try await waitUntil { receiver.received.contains { $0.acknowledged && $0.webhookID == "evt_\(session)_2" } })
        await receiver.close()
        await harness.close()
    }

    @Test func aHangingEndpointHoldsOnlyItsOwnTries() async throws {
        let harness = Harness(store: try SQLiteCheckoutStore.inMemory()) { $0.timeout = .seconds(600) }
        let hanging = try await ScriptedReceiver { _, _ in .hang }
        let healthy = try await ScriptedReceiver()
        let stuck = try await harness.endpoints.create(url: hanging.url, mode: .test, types: nil, description: "hangs")
        _ = try await harness.endpoints.create(url: healthy.url, mode: .test, types: nil, description: "answers")
        harness.deliverer.start()
        for _ in 0..<3 { try await harness.session() }
        let expected = try await harness.events()
        // The healthy endpoint gets every event while the hanging one's first tries are still in flight.
        #expect(try await waitUntil { Set(healthy.received.filter(\.acknowledged).map(\.webhookID)) == expected })
        // One try per session, each waiting (the tries left in flight while the feed goes on).
        #expect(try await waitUntil { hanging.received.count == 3 }, "\(hanging.received.map(\.webhookID))")
        let counts = try await harness.endpoints.counts(stuck.endpoint.id)
        #expect(counts.retrying == 0 && counts.delivered == 0, "the hanging tries have not ended: \(counts)")
        await hanging.close()
        await healthy.close()
        await harness.close()
    }

    @Test func aTryStillInFlightAfterTheLingerIsLeftToTheRetryLoopWhileOtherSessionsGoOn() async throws {
        let harness = Harness(store: try SQLiteCheckoutStore.inMemory()) {
            $0.timeout = .seconds(600)
            $0.linger = .milliseconds(20)
        }
        // The first delivery (the first session's first event) is answered only when released.
        let receiver = try await ScriptedReceiver { index, _ in index == 0 ? .held(200) : .answer(200) }
        let created = try await harness.endpoints.create(url: receiver.url, mode: .test, types: nil, description: nil)
        harness.deliverer.start()
        let first = try await harness.session()
        #expect(try await waitUntil { receiver.received.count == 1 })
        // Another session's events are delivered while that try is still in flight.
        let second = try await harness.session()
        #expect(try await waitUntil { receiver.received.filter { $0.acknowledged && $0.sessionID == second }.count == 4 })
        #expect(receiver.received.filter { $0.sessionID == first }.map(\.sequence) == [1], "the first session's later events wait behind its first")
        // Answered, the first session's events follow in order, each once.
        receiver.release()
        #expect(try await waitUntil { receiver.received.filter { $0.sessionID == first }.map(\.sequence) == [1, 2, 3, 4] })
        #expect(try await waitUntil { (try? await harness.endpoints.counts(created.endpoint.id))?.delivered == 8 })
        let counts = try await harness.endpoints.counts(created.endpoint.id)
        #expect(counts.pending == 0 && counts.retrying == 0, "\(counts)")
        #expect(receiver.received.count == 8, "\(receiver.received.map(\.webhookID))")
        await receiver.close()
        await harness.close()
    }

    @Test(arguments: StoreKind.allCases)
    func stretchesCutShortAtAnyMomentLoseNothing(_ kind: StoreKind) async throws {
        guard let store = try await kind.make() else { return }
        // Answers late by up to 30 ms each while each stretch waits 2 ms: stretches are
        // detached with workers at every step (trying, between two tries, before their first).
        let harness = Harness(store: store) {
            $0.timeout = .seconds(600)
            $0.linger = .milliseconds(2)
            $0.sendBatch = 8
        }
        let receiver = try await ScriptedReceiver { index, _ in .late(200, .milliseconds((index * 7) % 31)) }
        let created = try await harness.endpoints.create(url: receiver.url, mode: .test, types: nil, description: nil)
        harness.deliverer.start()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 { group.addTask { try await harness.session() } }
            try await group.waitForAll()
        }
        // (PostgreSQL's feed holds an event back while an older transaction still runs.)
        #expect(try await waitUntil { (try? await harness.events().count) == 160 })
        let expected = try await harness.events()
        #expect(try await waitUntil { Set(receiver.received.map(\.webhookID)) == expected })
        #expect(try await waitUntil { (try? await harness.endpoints.counts(created.endpoint.id))?.delivered == 160 })
        let counts = try await harness.endpoints.counts(created.endpoint.id)
        #expect(counts.pending == 0 && counts.retrying == 0, "\(counts)")
        // Each once, each session's in order.
        #expect(receiver.received.count == 160, "\(receiver.received.count) requests")
        for (session, requests) in Dictionary(grouping: receiver.received, by: \.sessionID) {
            #expect(requests.map(\.sequence) == [1, 2, 3, 4], "\(session): \(requests.map(\.sequence))")
        }
        await receiver.close()
        await harness.close()
    }

    @Test func aDisabledEndpointIsSentNothingNewUntilEnabled() async throws {
        let harness = Harness(store: try SQLiteCheckoutStore.inMemory())
        let receiver = try await ScriptedReceiver()
        let created = try await harness.endpoints.create(url: receiver.url, mode: .test, types: nil, description: nil)
        harness.deliverer.start()
        try await harness.session()
        #expect(try await waitUntil { receiver.received.count == 4 })
        _ = try await harness.endpoints.setEnabled(created.endpoint.id, mode: .test, false)
        let later = try await harness.session()
        // Queued for it, not sent.
        #expect(try await waitUntil { (try? await harness.endpoints.counts(created.endpoint.id))?.pending == 4 })
        #expect(!receiver.received.contains { $0.sessionID == later })
        _ = try await harness.endpoints.setEnabled(created.endpoint.id, mode: .test, true)
        #expect(try await waitUntil { receiver.received.filter { $0.sessionID == later }.map(\.sequence) == [1, 2, 3, 4] })
        await receiver.close()
        await harness.close()
    }

    @Test func aRemovalIsNeverUndoneAndARotationNeverLost() async throws {
        let store = try SQLiteCheckoutStore.inMemory()
        let endpoints = WebhookEndpoints(store: store, sealer: Harness.sealer, allowPrivate: true)
        let created = try await endpoints.create(url: "http://127.0.0.1:9/h", mode: .test, types: nil, description: nil)
        // A write prepared from a read made before a rotation is refused.
        let stale = try #require(try await store.webhookEndpoint(id: created.endpoint.id))
        let rotated = try #require(try await endpoints.rotate(created.endpoint.id, mode: .test, overlap: .zero))
        var disabled = stale
        disabled.state = .disabled
        #expect(try await store.updateWebhookEndpoint(disabled, from: stale, at: Date()) == false)
        #expect(try await store.webhookEndpoint(id: created.endpoint.id)?.secret == rotated.endpoint.secret)
        // And one made before a removal cannot bring the endpoint back.
        let beforeRemoval = try #require(try await store.webhookEndpoint(id: created.endpoint.id))
        #expect(try await endpoints.remove(created.endpoint.id, mode: .test) != nil)
        var revived = beforeRemoval
        revived.state = .disabled
        #expect(try await store.updateWebhookEndpoint(revived, from: beforeRemoval, at: Date()) == false)
        #expect(try await store.webhookEndpoint(id: created.endpoint.id)?.removedAt != nil)
        #expect(try await endpoints.setEnabled(created.endpoint.id, mode: .test, true) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func aReplaySendsTheSameEventsUnderTheSameIDsAgain(_ kind: StoreKind) async throws {
        guard let store = try await kind.make() else { return }
        let harness = Harness(store: store)
        let receiver = try await ScriptedReceiver()
        let created = try await harness.endpoints.create(url: receiver.url, mode: .test, types: nil, description: nil)
        harness.deliverer.start()
        try await harness.session()
        #expect(try await waitUntil { receiver.received.count == 4 })
        // Counted in the transaction that moves the endpoint past them (what a replay reaches).
        #expect(try await waitUntil { (try? await harness.endpoints.counts(created.endpoint.id))?.delivered == 4 })
        let first = receiver.received.map(\.webhookID)
        #expect(try await harness.endpoints.replay(created.endpoint.id, mode: .test, after: .start, through: nil) == 4)
        #expect(try await waitUntil { receiver.received.count == 8 })
        #expect(Array(receiver.received.map(\.webhookID).dropFirst(4)) == first)
        // Each event counted once, delivered again or not.
        #expect(try await waitUntil { (try? await harness.endpoints.counts(created.endpoint.id))?.delivered == 4 })
        let counts = try await harness.endpoints.counts(created.endpoint.id)
        #expect(counts.pending == 0 && counts.retrying == 0, "\(counts)")
        // Another mode's key cannot replay (or see) it.
        #expect(try await harness.endpoints.replay(created.endpoint.id, mode: .live, after: .start, through: nil) == nil)
        await receiver.close()
        await harness.close()
    }

    @Test func theAddressIsCheckedAgainAtEachDelivery() async throws {
        // Registered while private endpoints were allowed; the deliverer of a
        // host that does not allow them sends nothing there.
        let store = try SQLiteCheckoutStore.inMemory()
        let registering = Harness(store: store)
        let receiver = try await ScriptedReceiver()
        _ = try await registering.endpoints.create(url: receiver.url, mode: .test, types: nil, description: nil)
        let strict = Harness(store: store) { $0.allowPrivate = false }
        strict.deliverer.start()
        try await strict.session(pay: false)
        let endpoint = try #require(try await strict.endpoints.list(mode: .test).first)
        #expect(try await waitUntil { (try? await strict.endpoints.counts(endpoint.id))?.retrying == 1 })
        #expect(receiver.received.isEmpty, "a delivery reached a loopback endpoint on a host that does not allow private ones")
        await receiver.close()
        await strict.deliverer.stop()
        await registering.close()
    }

    @Test func aHostWithAnotherSealingKeyRegistersNothing() async throws {
        let store = try SQLiteCheckoutStore.inMemory()
        let first = WebhookEndpoints(store: store, sealer: Harness.sealer, allowPrivate: true)
        _ = try await first.create(url: "http://127.0.0.1:9/h", mode: .test, types: nil, description: nil)
        // A data folder restored without its key file: the new key would seal what nobody else opens.
        let other = WebhookEndpoints(store: store, sealer: try SecretSealer(key: Data(repeating: 1, count: 32)), allowPrivate: true)
        do {
            _ = try await other.create(url: "http://127.0.0.1:9/h", mode: .test, types: nil, description: nil)
            Issue.record("a host with another sealing key registered an endpoint")
        } catch let error as WebhookEndpointError {
            #expect(error.message.contains("webhook-secrets.key"), "\(error.message)")
        }
        #expect(try await first.list(mode: .test).count == 1)
        _ = try await first.create(url: "http://127.0.0.1:9/h", mode: .test, types: nil, description: "the first key still works")
    }

    @Test func registrationRefusesPrivateAddressesUnlessAllowedAndPlainHTTPToPublicOnes() async throws {
        let store = try SQLiteCheckoutStore.inMemory()
        func service(allowPrivate: Bool, resolving addresses: [String]) -> WebhookEndpoints {
            WebhookEndpoints(store: store, sealer: Harness.sealer, allowPrivate: allowPrivate, resolve: { _ in addresses })
        }
        func refusal(_ service: WebhookEndpoints, _ url: String) async -> String? {
            do {
                _ = try await service.create(url: url, mode: .test, types: nil, description: nil)
                return nil
            } catch let error as WebhookEndpointError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        let strict = service(allowPrivate: false, resolving: ["93.184.216.34"])
        #expect(await refusal(strict, "http://127.0.0.1:8080/h")?.contains("loopback") == true)
        #expect(await refusal(strict, "https://169.254.169.254/latest")?.contains("cloud metadata") == true)
        #expect(await refusal(service(allowPrivate: false, resolving: ["10.1.2.3"]), "https://hooks.example.com/h")?.contains("private") == true)
        #expect(await refusal(strict, "http://hooks.example.com/h")?.contains("https") == true)
        #expect(await refusal(strict, "ftp://hooks.example.com/h") != nil)
        #expect(await refusal(strict, "https://user:pw@hooks.example.com/h")?.contains("password") == true)
        #expect(await refusal(strict, "https://hooks.example.com/h") == nil)
        let local = service(allowPrivate: true, resolving: ["127.0.0.1"])
        #expect(await refusal(local, "http://localhost:8080/h") == nil)
        // Allowing private endpoints never opens a cloud metadata service or a link-local address.
        #expect(await refusal(local, "http://169.254.169.254/latest")?.contains("no endpoint may use") == true)
        #expect(await refusal(service(allowPrivate: true, resolving: ["169.254.10.1"]), "http://router.local/h")?.contains("link-local") == true)
        do {
            _ = try await strict.create(url: "https://hooks.example.com/h", mode: .test, types: ["session.paid"], description: nil)
            Issue.record("an unknown event type was accepted")
        } catch let error as WebhookEndpointError {
            #expect(error.message.contains("session.paid"))
        }
    }
}
