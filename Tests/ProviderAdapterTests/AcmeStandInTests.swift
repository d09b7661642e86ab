import Foundation
import Testing
import TestSupport

/// The Acme stand-in over HTTP, as the plugin guide describes Acme's API:
/// idempotency keys, the outcomes tokens decide, reads by id and by
/// reference, and the API key on every request.
@Suite("Acme stand-in")
struct AcmeStandInTests {
    /// A create's body.
    static func charge(_ amount: Int = 1000, token: String = "tok_visa", reference: String = "pay_1", capture: Bool = true) -> String {
        #"{"amount":\#(amount),"currency":"SAR","token":"\#(token)","reference":"\#(reference)","capture":\#(capture)}"#
    }

    /// `POST /v1/charges` with `body` under `key` (none when nil), with the API key unless `apiKey` says otherwise.
    static func create(_ acme: AcmeStandIn, _ body: String, key: String?, apiKey: String? = AcmeStandIn.apiKey) async throws -> Loopback.Answer {
        try await Loopback.request(port: acme.port, "POST", "/v1/charges", body: body, key: apiKey, headers: key.map { ["Idempotency-Key": $0] } ?? [:])
    }

    static func get(_ acme: AcmeStandIn, _ path: String, apiKey: String? = AcmeStandIn.apiKey) async throws -> Loopback.Answer {
        try await Loopback.request(port: acme.port, "GET", path, key: apiKey)
    }

    @Test func aKeyAnswersItsFirstChargeAgainAndRefusesAnotherRequest() async throws {
        try await AcmeStandIn.run { acme async throws in
            let first = try await Self.create(acme, Self.charge(), key: "k1")
            #expect(first.status == 201 && first.json["state"] as? String == "captured", "\(first.text)")
            let id = try #require(first.json["id"] as? String)
            let again = try await Self.create(acme, Self.charge(), key: "k1")
            #expect(again.status == 201 && again.json["id"] as? String == id && again.headers["idempotent-replayed"] == "true", "\(again.text)")
            let other = try await Self.create(acme, Self.charge(1001), key: "k1")
            #expect(other.status == 409 && other.json["error"] as? String == "idempotency_key_reused", "\(other.text)")
            let keyless = try await Self.create(acme, Self.charge(), key: nil)
            #expect(keyless.status == 400 && keyless.json["error"] as? String == "invalid_request", "\(keyless.text)")
            #expect(acme.charges == 1 && acme.replays == 1 && acme.conflicts == 1)
        }
    }

    @Test func theTokenDecidesTheOutcome() async throws {
        try await AcmeStandIn.run { acme async throws in
            let declined = try await Self.create(acme, Self.charge(token: "tok_decline"), key: "k-decline")
            #expect(declined.json["state"] as? String == "declined" && declined.json["decline_code"] as? String == "do_not_honor", "\(declined.text)")
            let poor = try await Self.create(acme, Self.charge(token: "tok_insufficient_funds"), key: "k-poor")
            #expect(poor.json["decline_code"] as? String == "insufficient_funds", "\(poor.text)")
            let pending = try await Self.create(acme, Self.charge(token: "tok_pending"), key: "k-pending")
            #expect(pending.json["state"] as? String == "pending", "\(pending.text)")
            let held = try await Self.create(acme, Self.charge(capture: false), key: "k-held")
            #expect(held.json["state"] as? String == "authorized", "\(held.text)")
            // Refused before processing: nothing kept, so the key is still free.
            let unavailable = try await Self.create(acme, Self.charge(token: "tok_unavailable"), key: "k-unavailable")
            #expect(unavailable.status == 503 && unavailable.json["error"] as? String == "unavailable", "\(unavailable.text)")
            let retried = try await Self.create(acme, Self.charge(), key: "k-unavailable")
            #expect(retried.status == 201 && retried.json["state"] as? String == "captured", "\(retried.text)")
            let invalid = try await Self.create(acme, Self.charge().replacingOccurrences(of: "SAR", with: "sar"), key: "k-invalid")
            #expect(invalid.status == 400, "\(invalid.text)")
            #expect(acme.charges == 2, "the authorized and the captured charge")
        }
    }

    @Test func aChargeIsReadByItsIdAndByItsReference() async throws {
        try await AcmeStandIn.run { acme async throws in
            _ = try await Self.create(acme, Self.charge(reference: "pay_ref"), key: "k-first")
            let latest = try await Self.create(acme, Self.charge(token: "tok_decline", reference: "pay_ref"), key: "k-second")
            let id = try #require(latest.json["id"] as? String)
            let byID = try await Self.get(acme, "/v1/charges/\(id)")
            #expect(byID.status == 200 && byID.json["state"] as? String == "declined", "\(byID.text)")
            let byReference = try await Self.get(acme, "/v1/charges?reference=pay_ref")
            #expect(byReference.status == 200 && byReference.json["id"] as? String == id, "the latest charge of the reference: \(byReference.text)")
            #expect(try await Self.get(acme, "/v1/charges/ch_unknown").status == 404)
            let nowhere = try await Self.get(acme, "/v1/charges?reference=pay_unknown")
            #expect(nowhere.status == 404 && nowhere.json["error"] as? String == "not_found", "\(nowhere.text)")
        }
    }

    @Test func everyRequestNeedsTheAPIKey() async throws {
        try await AcmeStandIn.run { acme async throws in
            #expect(try await Self.create(acme, Self.charge(), key: "k1", apiKey: nil).status == 401)
            #expect(try await Self.get(acme, "/v1/charges?reference=pay_1", apiKey: "sk_test_wrong").status == 401)
            #expect(acme.charges == 0)
        }
    }
}
