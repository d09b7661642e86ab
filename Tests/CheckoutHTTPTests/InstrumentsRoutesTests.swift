import Foundation
import Testing
import TestSupport

/// Payer instruments over HTTP, through the shipped mock: listed per method
/// on the session, paid with by id, and a payer reference checked.
@Suite struct InstrumentsRoutesTests {
    @Test func aSessionListsItsPayersInstrumentsPerMethodAndAnAttemptPaysWithOne() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                let created = try await client.json(.post, "/v1/sessions", """
                    {"amount":2500,"currency":"SEK","country":"SE","orderId":"o-ins","payer":{"email":"sara@example.com","reference":"mock-cards"}}
                    """)
                #expect(created.status == 201, "\(created.text)")
                let id = try #require(created.string("id"))
                let read = try await client.json(.get, "/v1/sessions/\(id)")
                let instruments = try #require(read["instruments"] as? [String: [[String: Any]]], "\(read.text)")
                let visa = try #require(instruments["visa"]?.first)
                #expect(visa["kind"] as? String == "saved_card" && visa["last4"] as? String == "1111" && visa["provider"] as? String == "mock")
                #expect(visa["reference"] == nil && !read.text.contains("mock_card_visa_1111"), "a reference reached the API: \(read.text)")
                #expect(instruments["applepay"]?.first?["id"] == nil && instruments["applepay"]?.first?["available"] as? Bool == true)
                #expect((created["instruments"] as? [String: Any])?.keys.sorted() == instruments.keys.sorted())
                // The session's own document does not carry the stored list a second time.
                #expect(read.text.components(separatedBy: "\"saved_card\"").count == 3, "\(read.text)")

                let instrumentId = try #require(visa["id"] as? String)
                let attempt = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"visa","instrumentId":"\#(instrumentId)"}"#)
                #expect(attempt.status == 201 && attempt.string("status") == "succeeded" && attempt.string("providerId") == "mock", "\(attempt.text)")
                let after = try await client.json(.get, "/v1/sessions/\(id)")
                #expect((after["instruments"] as? [String: Any])?.isEmpty == true, "a completed session offers nothing")

                let anonymous = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SEK","country":"SE","orderId":"o-anon"}"#)
                #expect((anonymous["instruments"] as? [String: Any])?.isEmpty == true, "\(anonymous.text)")
            }
        }
    }

    @Test func aPayerReferenceOutsideItsPatternAndAForeignInstrumentIdAre422() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                let spaced = try await client.json(.post, "/v1/sessions",
                                                   #"{"amount":2500,"currency":"SEK","country":"SE","orderId":"o-1","payer":{"reference":"has space"}}"#)
                #expect(spaced.status == 422 && spaced.text.contains("payer.reference"), "\(spaced.text)")
                let created = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SEK","country":"SE","orderId":"o-2"}"#)
                let id = try #require(created.string("id"))
                let forged = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"visa","instrumentId":"ins_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#)
                #expect(forged.status == 422 && forged.text.contains("not an instrument of this session"), "\(forged.text)")
                let reserved = try await client.json(.post, "/v1/sessions/\(id)/attempts",
                                                     #"{"method":"visa","instrument":{"selected":{"kind":"saved_card","reference":"mock_card_visa_1111"}}}"#)
                #expect(reserved.status == 422 && reserved.text.contains("instrument.selected is reserved"), "\(reserved.text)")
            }
        }
    }
}
