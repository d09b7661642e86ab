import Foundation
import Testing
import TestSupport

/// A method's form over HTTP (docs/fields.md): listed on the session,
/// checked before any provider is called (422 `invalid_fields`, one problem
/// per field, both languages), and by `/validate` while the payer types,
/// with no card number in any answer or log line.
@Suite struct FieldsRoutesTests {
    /// The shipped mock with a form for `stcpay` (a Saudi mobile number) and `visa` (a card typed on the device).
    static func fixture() throws -> APIFixture {
        try APIFixture { manifests in
            // example-c (priority 500, no form) would come before the mock for visa.
            try FileManager.default.removeItem(at: manifests.appendingPathComponent("example-c.json"))
            try ManifestText.edit(manifests.appendingPathComponent("mock.json"), [(#""priority":"#, #"""
                "fields": {
                    "stcpay": [{"id": "phone", "type": "numericstring", "validators": {"msisdn": {"defaultCountry": "SA"}}}],
                    "visa": [{"id": "cardNumber", "type": "numericstring", "in": "client", "displayHints": {"mask": "{{9999}} {{9999}} {{9999}} {{9999}} {{999}}"},
                              "validators": {"luhn": {}}},
                             {"id": "expiryDate", "type": "expirydate", "in": "client", "validators": {"expirationDate": {}}}]
                },
                "priority":
                """#)])
        }
    }

    @Test func anAttemptWhoseInstrumentBreaksTheFormIs422AndNoProviderIsCalled() async throws {
        let fixture = try Self.fixture()
        try await fixture.app().test(.router) { client in
            let created = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-fields"}"#)
            let id = try #require(created.string("id"))
            let fields = try #require(created["fields"] as? [String: [[String: Any]]], "\(created.text)")
            #expect(fields["stcpay"]?.first?["id"] as? String == "phone" && fields["visa"]?.count == 2)

            for (instrument, code) in [(#"{"phone":"0401234567"}"#, "msisdn"), ("{}", "required"), (#"{"phone":{"n":1}}"#, "type")] {
                let refused = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"stcpay","instrument":\#(instrument)}"#)
                #expect(refused.status == 422 && refused.string("code") == "invalid_fields", "\(refused.text)")
                let problems = try #require(refused["problems"] as? [[String: Any]], "\(refused.text)")
                #expect(problems.count == 1 && problems[0]["field"] as? String == "instrument.phone" && problems[0]["code"] as? String == code)
                let message = try #require(problems[0]["payerMessage"] as? [String: String])
                #expect(message["en"]?.isEmpty == false && message["ar"]?.isEmpty == false && message["en"] != message["ar"])
            }
            let untouched = try await client.json(.get, "/v1/sessions/\(id)")
            #expect((untouched["attempts"] as? [Any])?.isEmpty == true, "a provider was called: \(untouched.text)")

            let paid = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"stcpay","instrument":{"phone":"050 123 4567"}}"#)
            #expect(paid.status == 201 && paid.string("status") == "succeeded", "\(paid.text)")
        }
    }

    @Test func validateChecksEveryFieldWhileThePayerTypesAndNeverEchoesTheCard() async throws {
        let fixture = try Self.fixture()
        try await fixture.app().test(.router) { client in
            let created = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-validate"}"#)
            let id = try #require(created.string("id"))
            let bad = try await client.json(.post, "/v1/sessions/\(id)/validate",
                                            #"{"method":"visa","values":{"cardNumber":"4111 1111 1111 1112","expiryDate":"01/20"}}"#)
            #expect(bad.status == 422 && bad.string("code") == "invalid_fields", "\(bad.text)")
            let problems = try #require(bad["problems"] as? [[String: Any]])
            #expect(problems.map { $0["field"] as? String } == ["values.cardNumber", "values.expiryDate"])
            #expect(problems.map { $0["code"] as? String } == ["luhn", "expirationDate"])
            let good = try await client.json(.post, "/v1/sessions/\(id)/validate", #"{"method":"visa","values":{"cardNumber":"4111 1111 1111 1111","expiryDate":"12/39"}}"#)
            #expect(good.status == 200 && good.text == #"{"valid":true}"#, "\(good.text)")
            let unknown = try await client.json(.post, "/v1/sessions/\(id)/validate", #"{"method":"sofort","values":{}}"#)
            #expect(unknown.status == 422 && unknown.string("code") == "method_unavailable", "\(unknown.status) \(unknown.text)")
            for text in [bad.text, good.text] + fixture.logs.all {
                #expect(!text.contains("4111 1111 1111 111") && !text.contains("411111111111111"), "a card number leaked: \(text)")
            }
            // Nor in any file the gateway wrote: the database, its write-ahead log, the idempotency records.
            let written = FileManager.default.enumerator(at: fixture.folder, includingPropertiesForKeys: nil)?
                .compactMap { ($0 as? URL).flatMap { try? Data(contentsOf: $0) } } ?? []
            #expect(!written.isEmpty)
            for number in ["4111 1111 1111 111", "411111111111111"] {
                #expect(!written.contains { $0.range(of: Data(number.utf8)) != nil }, "a card number was written: \(number)")
            }
        }
    }
}
