import Foundation
import GatewayPayloads

/// The forms the product ships, by name (`standard-forms.json`): a
/// manifest writes `"fields": {"visa": "card"}` rather than copying a card's
/// four fields, so every provider of a method shows the payer the same form.
/// A manifest may still declare a form of its own, field by field.
public enum StandardForms {
    /// Every shipped form, by name: `card`, `card-amex`, `applepay`,
    /// `googlepay`, `stcpay`, `swish`, `shipping-address`, `sepa-debit`, and
    /// `provider-page` (no field: the payer chooses and types on the
    /// provider's own page, such as Swedbank Pay's payment menu).
    public static let all: [String: [Field]] = {
        switch load(Data(PackageResources.standard_forms_json)) {
        case .success(let forms): forms
        case .failure(let error): preconditionFailure("standard-forms.json is broken (a test checks it): \(error)")
        }
    }()

    public static var names: [String] { all.keys.sorted() }

    /// The forms of a standard-forms document, or every problem with it (each with its path).
    static func load(_ data: Data) -> Result<[String: [Field]], FieldDeclarationError> {
        guard case .object(let root)? = try? JSONValue.parseDocument(data), case .object(let forms)? = root["forms"] else {
            return .failure(FieldDeclarationError(problems: ["$: must be {\"format\": 1, \"forms\": {name: [field, ...]}}"]))
        }
        var parsed: [String: [Field]] = [:]
        var problems: [String] = []
        for (name, value) in forms {
            // Empty for a method whose payer types nothing here (`provider-page`).
            guard case .array(let list) = value else {
                problems.append("$.forms.\(name): must be an array of fields")
                continue
            }
            var fields: [Field] = []
            for (index, item) in list.enumerated() {
                switch Field.parse(item, at: "$.forms.\(name)[\(index)]") {
                case .success(let field): fields.append(field)
                case .failure(let error): problems += error.problems
                }
            }
            parsed[name] = fields
        }
        return problems.isEmpty ? .success(parsed) : .failure(FieldDeclarationError(problems: problems))
    }
}
