import Foundation
import GatewayPayloads
import PaymentFields
import Testing

/// The rules of payment method fields (docs/fields.md): each validator, the
/// masks, MSISDN normalisation, whole-form validation and declarations.
@Suite("Payment fields")
struct PaymentFieldsTests {
    /// 15 November 2026, 12:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_794_744_000)

    static func accepts(_ validator: Validator, _ value: String) -> Bool { validator.accepts(value, now: now) }

    @Test(arguments: [("4111111111111111", true), ("4111 1111 1111 1111", true), ("4111-1111-1111-1111", true), ("4111111111111112", false),
                      ("378282246310005", true), ("6011000990139424", true), ("41111111111", false), ("4111x11111111111", false),
                      ("41111111111111111111", false)])
    func luhn(value: String, valid: Bool) {
        #expect(Self.accepts(.luhn, value) == valid, "\(value)")
    }

    /// This month passes; last month does not; at most December 25 years ahead.
    @Test(arguments: [("1126", true), ("11/26", true), ("112026", true), ("1026", false), ("12/51", true), ("0152", false),
                      ("1351", false), ("0026", false), ("1a26", false), ("126", false), ("11-2026", true)])
    func expirationDate(value: String, valid: Bool) {
        #expect(Self.accepts(.expirationDate, value) == valid, "\(value)")
    }

    @Test(arguments: [("GB82 WEST 1234 5698 7654 32", true), ("GB82WEST12345698765432", true), ("gb82west12345698765432", true),
                      ("GB82WEST12345698765433", false), ("SA03 8000 0000 6080 1016 7519", true), ("SA03 8000 0000 6080 1016 7518", false),
                      ("DE89 3704 0044 0532 0130 00", true), ("1282WEST12345698765432", false), ("GB82", false)])
    func iban(value: String, valid: Bool) {
        #expect(Self.accepts(.iban, value) == valid, "\(value)")
    }

    @Test(arguments: [("sara@example.se", true), ("a.b-c@mail.example.co", true), ("user@.com", false), ("a@b@c.com", false),
                      ("x y@z.com", false), ("name@example", false), (".a@b.com", false), ("a@b.c", false)])
    func emailAddress(value: String, valid: Bool) {
        #expect(Self.accepts(.emailAddress, value) == valid, "\(value)")
    }

    @Test func lengthRangeRegularExpressionFixedListAndTerms() {
        #expect(Self.accepts(.length(min: 3, max: 4), "123") && Self.accepts(.length(min: 3, max: 4), "1234"))
        #expect(!Self.accepts(.length(min: 3, max: 4), "12") && !Self.accepts(.length(min: 3, max: 4), "12345"))
        #expect(Self.accepts(.range(min: 1, max: 12), "12") && !Self.accepts(.range(min: 1, max: 12), "13") && !Self.accepts(.range(min: 1, max: 12), "12abc"))
        #expect(Self.accepts(.regularExpression("[0-9]{3}"), "ab123") && !Self.accepts(.regularExpression("^[0-9]{3}$"), "ab123"))
        #expect(Self.accepts(.fixedList(["3", "6"]), "6") && !Self.accepts(.fixedList(["3", "6"]), "4"))
        #expect(Self.accepts(.termsAndConditions, "true") && !Self.accepts(.termsAndConditions, "TRUE") && !Self.accepts(.termsAndConditions, "1"))
    }

    @Test(arguments: [("070-123 45 67", "SE", "+46701234567"), ("0046701234567", "SE", "+46701234567"), ("+46 (0)70 123 45 67", "SE", "+46701234567"),
                      ("46701234567", "SE", "+46701234567"), ("0501234567", "SA", "+966501234567"), ("501234567", "SA", "+966501234567"),
                      ("+966 050 123 4567", "SA", "+966501234567"), ("٠٥٠١٢٣٤٥٦٧", "SA", "+966501234567"), ("9665 0123 4567", "SA", "+966501234567"),
                      ("+971 50 123 4567", "SA", "+971501234567"), ("5012 3456", "KW", "+96550123456")])
    func msisdnIsNormalisedFromWhatAPayerTypes(typed: String, country: String, expected: String) {
        #expect(MSISDN.normalised(typed, defaultCountry: country) == expected, "\(typed)")
    }

    @Test(arguments: [("12345", "SE"), ("+4670123", "SE"), ("+46 8 123 456 78", "SE"), ("070-123 45 6x", "SE"), ("0401234567", "SA"),
                      ("+966 40 123 4567", "SA"), ("+1234567", nil), ("", "SA")] as [(String, String?)])
    func aNumberThatIsNotAMobileIsRefused(typed: String, country: String?) {
        #expect(MSISDN.normalised(typed, defaultCountry: country) == nil, "\(typed)")
    }

    @Test(arguments: [("{{99}}-{{99}}", "123", "12-3", "123"), ("{{99}}-{{99}}", "12345", "12-34", "1234"), ("{{99}}-{{99}}", "12-345", "12-34", "1234"),
                      ("{{9999}} {{9999}} {{9999}} {{9999}} {{999}}", "12345678901234567890", "1234 5678 9012 3456 789", "1234567890123456789"),
                      ("{{99}}/{{99}}", "1a2b2c5", "12/25", "1225"), ("{{99}}/{{99}}", "12/25", "12/25", "1225"), ("{{99}}/{{99}}", "12", "12", "12"),
                      ("{{99}}/{{99}}", "12/", "12/", "12"), ("+{{999}} {{99}}", "46701", "+467 01", "46701"), ("{{aa}}{{99}}", "gb82", "gb82", "gb82")])
    func masks(pattern: String, input: String, masked: String, unmasked: String) throws {
        let mask = try #require(Mask(pattern))
        #expect(mask.masked(input) == masked && mask.unmasked(input) == unmasked, "\(pattern) \(input): \(mask.masked(input)) \(mask.unmasked(input))")
    }

    @Test(arguments: ["{{99", "{{}}", "{{9x}}", "abc", "{{99}}}"])
    func aMalformedMaskIsRefused(pattern: String) {
        #expect(Mask(pattern) == nil)
    }

    static let card: [Field] = [
        Field(id: "cardNumber", kind: .numericstring, location: .client,
              displayHints: .init(mask: "{{9999}} {{9999}} {{9999}} {{9999}} {{999}}"), validators: [.luhn, .length(min: 12, max: 19)]),
        Field(id: "expiryDate", kind: .expirydate, location: .client, displayHints: .init(mask: "{{99}}/{{99}}"), validators: [.expirationDate]),
        Field(id: "cvv", kind: .numericstring, location: .client, displayHints: .init(obfuscate: true), validators: [.length(min: 3, max: 4)]),
        Field(id: "cardholderName", kind: .string, location: .client, required: false, validators: [.length(min: 2, max: 51)]),
    ]

    @Test func aFormGetsOneIssuePerFieldInBothLanguagesAndNeverTheValue() {
        let issues = FieldValidation.validate(["cardNumber": "4111 1111 1111 1112", "expiryDate": "10/26", "cvv": ""], against: Self.card, now: Self.now)
        #expect(issues.map(\.field) == ["cardNumber", "expiryDate", "cvv"])
        #expect(issues.map(\.code) == ["luhn", "expirationDate", "required"])
        for issue in issues {
            #expect(!issue.en.isEmpty && !issue.ar.isEmpty && issue.en != issue.ar)
            #expect(!issue.en.contains("4111") && !issue.ar.contains("4111"))
        }
        // Optional and absent: no issue; masked input validates unmasked.
        #expect(FieldValidation.validate(["cardNumber": "4111 1111 1111 1111", "expiryDate": "12/30", "cvv": "123"], against: Self.card, now: Self.now).isEmpty)
    }

    /// The host never checks a value other than the one typed: a digit the
    /// mask cannot place (a 20th card digit, a four-digit year under
    /// `{{99}}/{{99}}`, a fourth CVV digit) is a `type` issue, not silently cut.
    @Test func aMaskThatCannotTakeTheValueWholeIsATypeIssue() {
        let issues = FieldValidation.validate(["cardNumber": "4111 1111 1111 1111 0000", "expiryDate": "12/2030", "cvv": "1234"],
                                              against: Self.card.map { field in
                                                  var f = field
                                                  if f.id == "cvv" { f.displayHints.mask = "{{999}}" }
                                                  return f
                                              }, now: Self.now)
        #expect(issues.map(\.code) == ["type", "type", "type"], "\(issues)")
        // Separators a mask does not use are dropped, not refused; Arabic-Indic digits are digits.
        #expect(FieldValidation.validate(["cardNumber": "4111-1111-1111-1111", "expiryDate": "١٢/٣٠", "cvv": "123"], against: Self.card, now: Self.now).isEmpty)
    }

    @Test func aMobileNumberOfAnotherCountryThanTheProvidersIsRefused() {
        let swish = Validator.msisdn(defaultCountry: "SE", countries: ["SE"])
        #expect(Self.accepts(swish, "070-123 45 67") && !Self.accepts(swish, "+47 912 34 567") && !Self.accepts(swish, "+966501234567"))
        // Bidi marks pasted from a right-to-left page are not part of the number.
        #expect(MSISDN.normalised("\u{200F}+966 50 123 4567\u{200E}", defaultCountry: "SA") == "+966501234567")
    }

    @Test func ibanCheckDigitsOutsideTwoToNinetyEightAndLastMonthAreRefused() {
        // GB00… and GB99… can pass mod 97 arithmetic but are never issued.
        #expect(!Self.accepts(.iban, "GB00 WEST 1234 5698 7654 32") && !Self.accepts(.iban, "GB99WEST12345698765432"))
        // On the first day of a month (UTC) last month still passes; on the second it does not.
        let first = Date(timeIntervalSince1970: 1_793_491_200)   // 2026-11-01 00:00 UTC
        #expect(Validator.expirationDate.accepts("10/26", now: first) && !Validator.expirationDate.accepts("10/26", now: first.addingTimeInterval(86_400)))
    }

    @Test func aDeclarationRoundTripsThroughItsJSON() throws {
        let phone = Field(id: "phone", kind: .numericstring, displayHints: .init(label: "field.phone", placeholder: "05X XXX XXXX", preferredInputType: "phone",
                                                                                  tooltip: "field.phone.tooltip"),
                          validators: [.msisdn(defaultCountry: "SA", countries: ["SA"]), .length(min: 9, max: 16)])
        for field in Self.card + [phone, Field(id: "shipping_address.city", kind: .string, validators: [.regularExpression("^[^<>]+$")]),
                                  Field(id: "instalments", kind: .integer, validators: [.range(min: 3, max: 6), .fixedList(["3", "4", "6"])]),
                                  Field(id: "terms", kind: .boolean, validators: [.termsAndConditions])] {
            let parsed = try Field.parse(field.jsonValue, at: "$").get()
            #expect(parsed == field, "\(field.id)")
        }
    }

    @Test func aBadDeclarationNamesEveryProblemByPath() throws {
        let json = try JSONValue(jsonData: Data(#"""
            {"id": "9phone", "type": "text", "in": "server", "required": "yes", "colour": 1,
             "displayHints": {"mask": "{{9x}}", "obfuscate": "no"},
             "validators": {"length": {"minLength": 5, "maxLength": 2}, "msisdn": {"defaultCountry": "ZZ"}, "sparkle": {}, "regularExpression": {"regularExpression": "("}}}
            """#.utf8))
        guard case .failure(let error) = Field.parse(json, at: "$.fields.stcpay[0]") else { Issue.record("accepted"); return }
        let paths = Set(error.problems.map { String($0.prefix { $0 != ":" }) })
        #expect(paths == ["$.fields.stcpay[0].colour", "$.fields.stcpay[0].id", "$.fields.stcpay[0].type", "$.fields.stcpay[0].in",
                          "$.fields.stcpay[0].required", "$.fields.stcpay[0].displayHints.mask", "$.fields.stcpay[0].displayHints.obfuscate",
                          "$.fields.stcpay[0].validators.length", "$.fields.stcpay[0].validators.msisdn", "$.fields.stcpay[0].validators.sparkle",
                          "$.fields.stcpay[0].validators.regularExpression"], "\(error.problems)")
    }

    /// The shipped forms load (the file is embedded: a broken one would stop
    /// the host) and each says what its name promises.
    @Test func theStandardFormsLoadAndSayWhatTheirNamesPromise() throws {
        #expect(StandardForms.names == ["applepay", "card", "card-amex", "googlepay", "provider-page", "sepa-debit", "shipping-address",
                                        "shipping-address-optional", "stcpay", "swish"])
        #expect(StandardForms.all["provider-page"] == [])
        let card = try #require(StandardForms.all["card"])
        #expect(card.map(\.id) == ["cardNumber", "expiryDate", "cvv", "cardholderName"] && card.allSatisfy { $0.location == .client })
        #expect(FieldValidation.validate(["cardNumber": "3782 822463 10005", "expiryDate": "12/39", "cvv": "1234"],
                                         against: try #require(StandardForms.all["card-amex"])).isEmpty)
        let sepa = try #require(StandardForms.all["sepa-debit"])
        #expect(FieldValidation.validate(["iban": "DE89 3704 0044 0532 0130 01", "accountHolderName": "L", "mandateAccepted": "false"], against: sepa)
                    .map(\.code) == ["iban", "length", "termsAndConditions"])
        #expect(StandardForms.all["shipping-address-optional"]?.allSatisfy { !$0.required } == true)
    }
}
