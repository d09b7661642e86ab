import Foundation
import GatewayPayloads
import PaymentFields
@testable import PluginHost
import Testing

/// A manifest's `fields` (file format 1.1, docs/fields.md): each method's
/// form, checked like the rest of the manifest, every problem with its path.
@Suite("Manifest fields")
struct ManifestFieldsTests {
    static func manifest(format: String = "1.1.0", fields: String) -> Data {
        Data("""
            {"file_format_version": "\(format)", "id": "acme", "version": "1.0.0", "enabled": true, "mode": "test",
             "library": "libAcme.so", "abi": {"major": 1, "minor": 0}, "methods": ["visa", "stcpay"],
             "currencies": ["SAR"], "countries": ["SA"], "operations": ["authorize"], "fields": \(fields)}
            """.utf8)
    }

    @Test func declaredFieldsAreRead() throws {
        let data = Self.manifest(fields: #"""
            {"stcpay": [{"id": "phone", "type": "numericstring", "required": false, "validators": {"msisdn": {"defaultCountry": "SA"}}}],
             "visa": [{"id": "cardNumber", "type": "numericstring", "in": "client", "displayHints": {"mask": "{{9999}} {{9999}} {{9999}} {{9999}}"},
                       "validators": {"length": {"minLength": 12, "maxLength": 19}, "luhn": {}}}]}
            """#)
        guard case .valid(let manifest) = ManifestValidator.validate(data) else { Issue.record("refused"); return }
        #expect(manifest.fields["stcpay"] == [Field(id: "phone", kind: .numericstring, required: false, validators: [.msisdn(defaultCountry: "SA")])])
        let card = try #require(manifest.fields["visa"]?.first)
        // Validators run in the documented order, whatever the JSON's.
        #expect(card.location == .client && card.validators == [.luhn, .length(min: 12, max: 19)])
    }

    @Test func everyProblemOfAFieldsBlockHasItsPath() {
        let data = Self.manifest(fields: #"""
            {"mada": [{"id": "x", "type": "string"}],
             "stcpay": [{"id": "phone", "type": "phone"}, {"id": "phone", "type": "string"}],
             "visa": []}
            """#)
        guard case .invalid(let problems, _) = ManifestValidator.validate(data) else { Issue.record("accepted"); return }
        #expect(Set(problems.map(\.path)) == ["$.fields.mada", "$.fields.stcpay[0].type", "$.fields.visa"], "\(problems)")
    }

    /// A method's form may name a shipped one: the same fields as the data
    /// file's; a name that is not one is refused with its path and the names.
    @Test func aStandardFormIsNamedAndAnUnknownNameIsRefused() {
        guard case .valid(let manifest) = ManifestValidator.validate(Self.manifest(fields: #"{"visa": "card", "stcpay": "stcpay"}"#)) else {
            Issue.record("refused")
            return
        }
        #expect(manifest.fields["visa"] == StandardForms.all["card"] && manifest.fields["stcpay"] == StandardForms.all["stcpay"])
        guard case .invalid(let problems, _) = ManifestValidator.validate(Self.manifest(fields: #"{"visa": "kard"}"#)) else {
            Issue.record("accepted")
            return
        }
        #expect(problems.map(\.path) == ["$.fields.visa"] && problems.first?.message.contains("card, card-amex") == true, "\(problems)")
    }

    /// `method_currencies` narrows a method to some of the manifest's
    /// currencies; a method or a currency the manifest does not list is
    /// refused with its path.
    @Test func methodCurrenciesNarrowAMethodAndSayWhereTheyAreWrong() {
        let text = { (narrowing: String) in
            Data(String(decoding: Self.manifest(fields: #"{"visa": "card"}"#), as: UTF8.self)
                .replacingOccurrences(of: #""fields":"#, with: #""method_currencies": \#(narrowing), "fields":"#).utf8)
        }
        guard case .valid(let manifest) = ManifestValidator.validate(text(#"{"stcpay": ["SAR"]}"#)) else { Issue.record("refused"); return }
        #expect(manifest.methodCurrencies == ["stcpay": ["SAR"]])
        guard case .invalid(let problems, _) = ManifestValidator.validate(text(#"{"mada": ["SAR"], "visa": ["EUR"], "stcpay": []}"#)) else {
            Issue.record("accepted")
            return
        }
        #expect(Set(problems.map(\.path)) == ["$.method_currencies.mada", "$.method_currencies.visa[0]", "$.method_currencies.stcpay"], "\(problems)")
    }

    @Test func fieldsNeedFileFormat11() {
        let data = Data(String(decoding: Self.manifest(format: "1.0.0", fields: #"{"visa": [{"id": "a", "type": "string"}]}"#), as: UTF8.self)
            .replacingOccurrences(of: #""mode": "test", "#, with: "").utf8)
        guard case .invalid(let problems, _) = ManifestValidator.validate(data) else { Issue.record("accepted"); return }
        #expect(problems.map(\.path) == ["$.fields"])
    }

    /// The shipped manifests' forms: a card's number, expiry and CVV are typed
    /// on the device (Worldline), the phones are mobile numbers of their country.
    @Test func theShippedFieldsAreValidAndSayWhatTheyShould() throws {
        var all: [String: [String: [Field]]] = [:]
        for url in try ManifestFile.list(in: BuildProducts.shippedManifests) {
            let manifest = try ManifestFile.read(url).get()
            all[manifest.id] = manifest.fields
            // Every method a shipped manifest lists has its form, so a session lists one for each.
            #expect(Set(manifest.fields.keys) == Set(manifest.methods), "\(manifest.id): forms for \(manifest.fields.keys.sorted()) of \(manifest.methods)")
        }
        // Swedbank Pay's menu: the payer chooses and types on its page, a form of no field.
        #expect(all["swedbankpay"]?["swedbankpay"] == [])
        let visa = try #require(all["worldline"]?["visa"])
        #expect(visa.map(\.id) == ["cardNumber", "expiryDate", "cvv", "cardholderName"] && visa.allSatisfy { $0.location == .client })
        #expect(FieldValidation.validate(["cardNumber": "4111 1111 1111 1112", "expiryDate": "12/99", "cvv": "12"], against: visa).map(\.code)
                == ["luhn", "expirationDate", "length"])
        let phone = try #require(all["stcpay"]?["stcpay"]?.first)
        #expect(FieldValidation.issue("0501234567", field: phone) == nil && FieldValidation.issue("0401234567", field: phone)?.code == "msisdn")
        let swish = try #require(all["swedbankpay"]?["swish"])
        #expect(FieldValidation.validate(["device": "other", "msisdn": "070-123 45 67"], against: swish).isEmpty)
        #expect(FieldValidation.validate(["msisdn": "12345"], against: swish).map(\.code) == ["msisdn"])
        let tamara = try #require(all["tamara"]?["tamara"])
        #expect(FieldValidation.validate([:], against: tamara).map(\.field) == ["shipping_address.line1", "shipping_address.city"])
    }
}
