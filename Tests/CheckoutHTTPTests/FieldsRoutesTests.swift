import Foundation
import Testing
import TestSupport

/// A method's form over HTTP (docs/fields.md): listed on the session,
/// checked before any provider is called (422 `invalid_fields`, one problem
/// per field, both languages), and by `/validate` while the payer types,
/// with no card number in any answer or log line.
@Suite struct FieldsRoutesTests {
    /// Runs `body` with the shipped mock given a form for `stcpay` (a Saudi
    /// mobile number) and `visa` (a card typed on the device); the gateway is
    /// shut down however `body` ends (``APIFixture/with(adminToken:keyCache:editManifests:storeInFront:_:)``).
    @discardableResult
    static func withFixture<T>(_ body: (APIFixture) async throws -> T) async throws -> T {
        try await APIFixture.with(editManifests: { manifests in
            // example-c (priority 500, no form) would come before the mock for visa.
            try FileManager.default.removeItem(at: manifests.appendingPathComponent("example-c.json"))
            try ManifestText.edit(manifests.appendingPathComponent("mock.json"), [
                (#""stcpay": "stcpay""#, #""stcpay": [{"id": "phone", "type": "numericstring", "validators": {"msisdn": {"defaultCountry": "SA"}}}]"#),
                (#""visa": "card""#, #"""
                "visa": [{"id": "cardNumber", "type": "numericstring", "in": "client", "displayHints": {"mask": "{{9999}} {{9999}} {{9999}} {{9999}} {{999}}"},
                          "validators": {"luhn": {}}},
                         {"id": "expiryDate", "type": "expirydate", "in": "client", "validators": {"expirationDate": {}}}]
                """#)])
        }, body)
    }

    @Test func anAttemptWhoseInstrumentBreaksTheFormIs422AndNoProviderIsCalled() async throws {
        try await Self.withFixture { fixture in
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
    }

    /// A mada card co-badged with Visa: both brands, each with whether this
    /// session may take it; the answer, like every log line, carries six
    /// digits of the number at most.
    @Test func theIINOfAMadaCardCoBadgedWithVisaNamesBothBrandsAndWhetherEachIsAllowed() async throws {
        try await Self.withFixture { fixture in
            try await fixture.app().test(.router) { client in
                let created = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-iin"}"#)
                let id = try #require(created.string("id"))
                let both = try await client.json(.post, "/v1/sessions/\(id)/iin", #"{"prefix":"4464 0400 0000 0007"}"#)
                #expect(both.status == 200 && both.string("status") == "supported" && both.string("iin") == "446404", "\(both.text)")
                #expect(both.string("brand") == "mada" && both["allowed"] as? Bool == true, "\(both.text)")
                let coBrands = try #require(both["coBrands"] as? [[String: Any]], "\(both.text)")
                #expect(coBrands.count == 1 && coBrands[0]["brand"] as? String == "visa" && coBrands[0]["allowed"] as? Bool == true)

                for (prefix, status) in [("4464", "notEnoughDigits"), ("100000", "unknown"), ("378282", "supported"), ("6011 0000", "existingButNotAllowed")] {
                    let answer = try await client.json(.post, "/v1/sessions/\(id)/iin", #"{"prefix":"\#(prefix)"}"#)
                    #expect(answer.status == 200 && answer.string("status") == status, "\(prefix): \(answer.text)")
                }
                for body in [#"{"prefix":"4464-04x"}"#, #"{"prefix":"44640400000000071234"}"#] {
                    let refused = try await client.json(.post, "/v1/sessions/\(id)/iin", body)
                    #expect(refused.status == 422 && refused.string("code") == "invalid_request" && refused.string("detail")?.contains("prefix") == true, "\(refused.text)")
                }
                for body in [#"{}"#, #"{"prefix":4464}"#, #"{"prefix":"446404","pan":"1"}"#] {
                    let malformed = try await client.json(.post, "/v1/sessions/\(id)/iin", body)
                    #expect(malformed.status == 400, "\(body): \(malformed.text)")
                }
                let missing = try await client.json(.post, "/v1/sessions/ses_nope/iin", #"{"prefix":"446404"}"#)
                #expect(missing.status == 404)
                let live = try await client.json(.post, "/v1/sessions/\(id)/iin", #"{"prefix":"446404"}"#, key: APIFixture.liveKey)
                #expect(live.status == 404, "a live key saw a test session: \(live.text)")
                for line in fixture.logs.all {
                    #expect(!line.contains("4464040") && !line.contains("4464 040"), "more than six digits logged: \(line)")
                }
            }
        }
    }

    /// With no provider serving mada here, the same card is still a Visa:
    /// supported, mada not allowed, Visa allowed. And where neither brand may
    /// pay (an aborted-session is no context at all), the lookup says why.
    @Test func aCoBadgedCardIsSupportedThroughItsCoBrandWhenItsOwnBrandIsNotServed() async throws {
        try await APIFixture.with(editManifests: { manifests in
            try ManifestText.edit(manifests.appendingPathComponent("mock.json"), [(#""mada", "#, "")])
        }) { fixture in
            try await fixture.app().test(.router) { client in
                let created = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-iin-visa"}"#)
                let id = try #require(created.string("id"))
                #expect((created["availableMethods"] as? [String])?.contains("mada") == false, "\(created.text)")
                let answer = try await client.json(.post, "/v1/sessions/\(id)/iin", #"{"prefix":"446404"}"#)
                #expect(answer.status == 200 && answer.string("status") == "supported" && answer.string("brand") == "mada" && answer["allowed"] as? Bool == false,
                        "\(answer.text)")
                #expect((answer["coBrands"] as? [[String: Any]])?.first?["allowed"] as? Bool == true, "\(answer.text)")
                let aborted = try await client.json(.post, "/v1/sessions/\(id)/abort")
                #expect(aborted.status == 200, "\(aborted.text)")
                let closed = try await client.json(.post, "/v1/sessions/\(id)/iin", #"{"prefix":"446404"}"#)
                #expect(closed.status == 409 && closed.string("code") == "invalid_state", "\(closed.text)")
            }
        }
    }

    /// `allowed` is the session's context: the same mada card co-badged
    /// with Visa is allowed in a SAR session in Saudi Arabia, and neither
    /// brand is where no provider of the session's mode serves its amount,
    /// its country or its currency, or in a live session (no live provider
    /// here): `existingButNotAllowed`.
    @Test func whetherABrandIsAllowedFollowsTheSessionsAmountCountryCurrencyAndMode() async throws {
        try await Self.withFixture { fixture in
            try await fixture.app().test(.router) { client in
                func lookup(_ session: String, key: String = APIFixture.testKey) async throws -> Reply {
                    let created = try await client.json(.post, "/v1/sessions", session, key: key)
                    let id = try #require(created.string("id"), "\(created.text)")
                    return try await client.json(.post, "/v1/sessions/\(id)/iin", #"{"prefix":"446404"}"#, key: key)
                }
                let allowed = try await lookup(#"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-ok"}"#)
                #expect(allowed.string("status") == "supported" && allowed["allowed"] as? Bool == true, "\(allowed.text)")
                for (context, session, key) in [
                    ("under every provider's minimum", #"{"amount":50,"currency":"SAR","country":"SA","orderId":"o-low"}"#, APIFixture.testKey),
                    ("a country no provider serves", #"{"amount":2500,"currency":"SAR","country":"BR","orderId":"o-br"}"#, APIFixture.testKey),
                    ("a currency no provider takes", #"{"amount":2500,"currency":"CHF","country":"SA","orderId":"o-chf"}"#, APIFixture.testKey),
                    ("a live session", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-live"}"#, APIFixture.liveKey),
                ] {
                    let answer = try await lookup(session, key: key)
                    #expect(answer.status == 200 && answer.string("status") == "existingButNotAllowed" && answer.string("brand") == "mada"
                            && answer["allowed"] as? Bool == false, "\(context): \(answer.text)")
                    let coBrands = answer["coBrands"] as? [[String: Any]]
                    #expect(coBrands?.count == 1 && coBrands?.first?["brand"] as? String == "visa" && coBrands?.first?["allowed"] as? Bool == false,
                            "\(context): \(answer.text)")
                }
            }
        }
    }

    @Test func validateChecksEveryFieldWhileThePayerTypesAndNeverEchoesTheCard() async throws {
        try await Self.withFixture { fixture in
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
                let written = writtenFiles(in: fixture.folder)
                #expect(!written.isEmpty)
                for number in ["4111 1111 1111 111", "411111111111111"] {
                    #expect(!written.contains { $0.data.range(of: Data(number.utf8)) != nil }, "a card number was written: \(number)")
                }
            }
        }
    }

    /// The shipped manifests as a fresh clone runs them: every available
    /// method has its form, and a bad card number, a past expiry, a bad IBAN
    /// and a malformed mobile number each get a per-field 422 in English and
    /// Arabic, with no adapter called.
    @Test func theShippedFormsCoverEveryMethodAndRefuseBadValuesPerField() async throws {
        try await APIFixture.with { fixture in
            try await fixture.app().test(.router) { client in
                for (currency, country) in [("SAR", "SA"), ("EUR", "DE"), ("SEK", "SE")] {
                    let created = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"\#(currency)","country":"\#(country)","orderId":"o-forms"}"#)
                    let methods = try #require(created["availableMethods"] as? [String], "\(created.text)")
                    let fields = try #require(created["fields"] as? [String: [[String: Any]]], "\(created.text)")
                    #expect(!methods.isEmpty && Set(fields.keys) == Set(methods), "\(currency): \(methods) vs \(fields.keys.sorted())")
                    // What a client renders, display hints included.
                    let cardForm = try #require(fields["visa"], "\(created.text)")
                    let number = try #require(cardForm.first { $0["id"] as? String == "cardNumber" }?["displayHints"] as? [String: Any])
                    #expect(number["label"] as? String == "field.cardNumber" && number["placeholder"] as? String == "1234 5678 9012 3456"
                            && (number["mask"] as? String)?.hasPrefix("{{9999}} ") == true && number["preferredInputType"] as? String == "numeric", "\(number)")
                    let cvv = try #require(cardForm.first { $0["id"] as? String == "cvv" }?["displayHints"] as? [String: Any])
                    #expect(cvv["obfuscate"] as? Bool == true && cvv["tooltip"] as? String == "field.cvv.tooltip", "\(cvv)")
                    // The mock offers SEPA Direct Debit in EUR only (method_currencies).
                    #expect(methods.contains("sepa_debit") == (currency == "EUR"), "\(currency): \(methods)")
                }
                let euro = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"EUR","country":"DE","orderId":"o-iban"}"#)
                let eid = try #require(euro.string("id"))
                let sar = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-msisdn"}"#)
                let sid = try #require(sar.string("id"))

                func expectOneProblem(_ reply: Reply, field: String, code: String) throws {
                    #expect(reply.status == 422 && reply.string("code") == "invalid_fields", "\(reply.text)")
                    let problems = try #require(reply["problems"] as? [[String: Any]], "\(reply.text)")
                    let problem = try #require(problems.first { $0["field"] as? String == field }, "\(reply.text)")
                    #expect(problem["code"] as? String == code, "\(reply.text)")
                    let message = try #require(problem["payerMessage"] as? [String: String])
                    #expect(message["en"]?.isEmpty == false && message["ar"]?.isEmpty == false && message["en"] != message["ar"])
                }
                try expectOneProblem(try await client.json(.post, "/v1/sessions/\(eid)/attempts",
                                                           #"{"method":"sepa_debit","instrument":{"iban":"DE89 3704 0044 0532 0130 01","accountHolderName":"Lina Peeters","mandateAccepted":true}}"#),
                                     field: "instrument.iban", code: "iban")
                try expectOneProblem(try await client.json(.post, "/v1/sessions/\(sid)/attempts", #"{"method":"stcpay","instrument":{"phone":"05012"}}"#),
                                     field: "instrument.phone", code: "msisdn")
                let card = try await client.json(.post, "/v1/sessions/\(sid)/validate",
                                                 #"{"method":"mada","values":{"cardNumber":"4464 0400 0000 0008","expiryDate":"01/21","cvv":"123"}}"#)
                try expectOneProblem(card, field: "values.cardNumber", code: "luhn")
                try expectOneProblem(card, field: "values.expiryDate", code: "expirationDate")
                // An attempt that carries the card in the clear (a server-side
                // integration; a sealed card carries none) is checked the same,
                // before any provider, and the refusal binds no idempotency key.
                let clear = try await client.json(.post, "/v1/sessions/\(sid)/attempts",
                                                  #"{"method":"mada","instrument":{"cardNumber":"4464 0400 0000 0008","expiryDate":"01/21"}}"#,
                                                  headers: idempotency("o-msisdn-card"))
                try expectOneProblem(clear, field: "instrument.cardNumber", code: "luhn")
                try expectOneProblem(clear, field: "instrument.expiryDate", code: "expirationDate")
                #expect(!clear.text.contains("0000 0008") && !clear.text.contains("446404000"), "the card was echoed: \(clear.text)")
                for id in [eid, sid] {
                    let untouched = try await client.json(.get, "/v1/sessions/\(id)")
                    #expect((untouched["attempts"] as? [Any])?.isEmpty == true, "an adapter was called: \(untouched.text)")
                }
                let debit = try await client.json(.post, "/v1/sessions/\(eid)/attempts",
                                                  #"{"method":"sepa_debit","instrument":{"iban":"DE89 3704 0044 0532 0130 00","accountHolderName":"Lina Peeters","mandateAccepted":true}}"#)
                #expect(debit.status == 201 && debit.string("status") == "succeeded", "\(debit.text)")
                // The corrected card under the key the refusal did not bind: paid.
                let corrected = try await client.json(.post, "/v1/sessions/\(sid)/attempts",
                                                      #"{"method":"mada","instrument":{"cardNumber":"4464 0400 0000 0007","expiryDate":"12/39"}}"#,
                                                      headers: idempotency("o-msisdn-card"))
                #expect(corrected.status == 201 && corrected.string("status") == "succeeded", "\(corrected.text)")
            }
        }
    }

    /// Item 6 of issue 16: a whole session with a card, through validation,
    /// the IIN lookup and an attempt (whose instrument, as a careless merchant
    /// might send it, carries the number too); then neither the store's files
    /// (the database and its write-ahead log) nor any log line holds the number.
    @Test func aWholeSessionWithACardLeavesTheNumberInNoFileAndNoLogLine() async throws {
        try await APIFixture.with { fixture in
            let number = "4464040000000007"
            try await fixture.app().test(.router) { client in
                let created = try await client.json(.post, "/v1/sessions", #"{"amount":2500,"currency":"SAR","country":"SA","orderId":"o-pan"}"#)
                let id = try #require(created.string("id"))
                let valid = try await client.json(.post, "/v1/sessions/\(id)/validate",
                                                  #"{"method":"mada","values":{"cardNumber":"\#(number)","expiryDate":"12/39","cvv":"123"}}"#)
                #expect(valid.status == 200, "\(valid.text)")
                let iin = try await client.json(.post, "/v1/sessions/\(id)/iin", #"{"prefix":"\#(number)"}"#)
                #expect(iin.status == 200 && iin.string("brand") == "mada", "\(iin.text)")
                let paid = try await client.json(.post, "/v1/sessions/\(id)/attempts", #"{"method":"mada","instrument":{"cardNumber":"\#(number)"}}"#)
                #expect(paid.status == 201 && paid.string("status") == "succeeded", "\(paid.text)")
                // (Its events are in the store's files, searched below; the stream itself never ends.)
                let session = try await client.json(.get, "/v1/sessions/\(id)")
                for text in [created.text, valid.text, iin.text, paid.text, session.text] + fixture.logs.all {
                    #expect(!text.contains(number) && !text.contains("4464 0400"), "the card number leaked: \(text)")
                }
            }
            let files = writtenFiles(in: fixture.folder)
            #expect(files.contains { $0.url.lastPathComponent.hasSuffix("-wal") }, "no write-ahead log to search: \(files.map(\.url.lastPathComponent))")
            for file in files {
                #expect(file.data.range(of: Data(number.utf8)) == nil, "the card number was written to \(file.url.lastPathComponent)")
            }
            #expect(fixture.logs.all.count > 3)
        }
    }
}
