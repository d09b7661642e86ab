import Foundation
import GatewayPayloads

/// A field as manifests and session documents write it (docs/fields.md):
///
///     {"id": "phone", "type": "numericstring", "in": "instrument", "required": true,
///      "displayHints": {"label": …, "placeholder": …, "mask": …, "obfuscate": false, "preferredInputType": …, "tooltip": …},
///      "validators": {"msisdn": {"defaultCountry": "SA"}, "length": {"minLength": 9, "maxLength": 15}}}
///
/// Validators run in the order ``Field/validatorOrder`` gives, whatever the
/// JSON's order.
extension Field {
    public static let validatorOrder = ["luhn", "expirationDate", "iban", "msisdn", "emailAddress", "length", "range", "regularExpression",
                                        "fixedList", "termsAndConditions"]

    /// The field `json` declares, or every problem with it, each with its JSON path under `path`.
    public static func parse(_ json: JSONValue, at path: String) -> Result<Field, FieldDeclarationError> {
        var problems: [String] = []
        guard case .object(let o) = json else { return .failure(FieldDeclarationError(problems: ["\(path): must be an object"])) }
        for key in o.keys where !["id", "type", "in", "required", "displayHints", "validators"].contains(key) {
            problems.append("\(path).\(key): unknown member")
        }
        let id = o["id"]?.stringValue ?? ""
        if id.range(of: "^[A-Za-z][A-Za-z0-9_]{0,39}(\\.[A-Za-z][A-Za-z0-9_]{0,39}){0,3}$", options: .regularExpression) == nil {
            problems.append("\(path).id: must be a name of letters, digits and _ (dotted for a nested member), at most four levels")
        }
        let kind = o["type"]?.stringValue.flatMap(Kind.init(rawValue:))
        if kind == nil { problems.append("\(path).type: must be one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))") }
        var location = Location.instrument
        if let value = o["in"] {
            if let parsed = value.stringValue.flatMap(Location.init(rawValue:)) { location = parsed } else {
                problems.append("\(path).in: must be \"instrument\" or \"client\"")
            }
        }
        var required = true
        if let value = o["required"] {
            if case .bool(let b) = value { required = b } else { problems.append("\(path).required: must be true or false") }
        }
        var hints = DisplayHints()
        if let value = o["displayHints"] {
            if case .object(let h) = value {
                for key in h.keys where !["label", "placeholder", "mask", "obfuscate", "preferredInputType", "tooltip"].contains(key) {
                    problems.append("\(path).displayHints.\(key): unknown member")
                }
                func text(_ key: String) -> String? {
                    guard let member = h[key] else { return nil }
                    guard let s = member.stringValue, (1...200).contains(s.count) else {
                        problems.append("\(path).displayHints.\(key): must be a string of 1 to 200 characters")
                        return nil
                    }
                    return s
                }
                hints.label = text("label")
                hints.placeholder = text("placeholder")
                hints.mask = text("mask")
                hints.preferredInputType = text("preferredInputType")
                hints.tooltip = text("tooltip")
                if let mask = hints.mask, Mask(mask) == nil {
                    problems.append("\(path).displayHints.mask: \(mask) is not a mask: {{…}} slots of 9, a or * between literals")
                }
                if let value = h["obfuscate"] {
                    if case .bool(let b) = value { hints.obfuscate = b } else { problems.append("\(path).displayHints.obfuscate: must be true or false") }
                }
            } else {
                problems.append("\(path).displayHints: must be an object")
            }
        }
        var validators: [Validator] = []
        if let value = o["validators"] {
            if case .object(let v) = value {
                for name in v.keys.sorted(by: { (validatorOrder.firstIndex(of: $0) ?? 99) < (validatorOrder.firstIndex(of: $1) ?? 99) }) {
                    switch parseValidator(name, v[name]!, at: "\(path).validators.\(name)") {
                    case .success(let validator): validators.append(validator)
                    case .failure(let error): problems += error.problems
                    }
                }
            } else {
                problems.append("\(path).validators: must be an object")
            }
        }
        guard problems.isEmpty, let kind else { return .failure(FieldDeclarationError(problems: problems)) }
        return .success(Field(id: id, kind: kind, location: location, required: required, displayHints: hints, validators: validators))
    }

    static func parseValidator(_ name: String, _ json: JSONValue, at path: String) -> Result<Validator, FieldDeclarationError> {
        func fail(_ why: String) -> Result<Validator, FieldDeclarationError> { .failure(FieldDeclarationError(problems: ["\(path): \(why)"])) }
        guard case .object(let p) = json else { return fail("must be an object (`{}` when the rule takes no parameter)") }
        func integer(_ key: String) -> Int64? {
            p[key]?.integerValue
        }
        switch name {
        case "luhn": return .success(.luhn)
        case "expirationDate": return .success(.expirationDate)
        case "emailAddress": return .success(.emailAddress)
        case "iban": return .success(.iban)
        case "termsAndConditions": return .success(.termsAndConditions)
        case "length":
            guard let min = integer("minLength"), let max = integer("maxLength"), min >= 0, min <= max, max <= 10_000 else {
                return fail("needs integers minLength and maxLength, 0 ≤ minLength ≤ maxLength ≤ 10000")
            }
            return .success(.length(min: Int(min), max: Int(max)))
        case "range":
            guard let min = integer("minValue"), let max = integer("maxValue"), min <= max else { return fail("needs integers minValue ≤ maxValue") }
            return .success(.range(min: min, max: max))
        case "regularExpression":
            guard let pattern = p["regularExpression"]?.stringValue, (try? NSRegularExpression(pattern: pattern)) != nil else {
                return fail("needs regularExpression, a valid pattern")
            }
            return .success(.regularExpression(pattern))
        case "fixedList":
            guard case .array(let list)? = p["allowedValues"], !list.isEmpty, list.allSatisfy({ $0.stringValue != nil }) else {
                return fail("needs allowedValues, a non-empty list of strings")
            }
            return .success(.fixedList(list.compactMap(\.stringValue)))
        case "msisdn":
            let country = p["defaultCountry"]?.stringValue
            var allowed: [String] = []
            if let list = p["countries"] {
                guard case .array(let items) = list, !items.isEmpty, items.allSatisfy({ $0.stringValue != nil }) else {
                    return fail("countries must be a non-empty list of country codes")
                }
                allowed = items.compactMap(\.stringValue)
            }
            for code in [country].compactMap({ $0 }) + allowed where MSISDN.countries[code] == nil {
                return fail("\(code) has no numbering plan here (\(MSISDN.countries.keys.sorted().joined(separator: ", ")))")
            }
            return .success(.msisdn(defaultCountry: country, countries: allowed))
        default:
            return fail("unknown validator (\(validatorOrder.joined(separator: ", ")))")
        }
    }

    /// The field as JSON, as it was declared.
    public var jsonValue: JSONValue {
        var hints: [String: JSONValue] = [:]
        for (key, value) in [("label", displayHints.label), ("placeholder", displayHints.placeholder), ("mask", displayHints.mask),
                             ("preferredInputType", displayHints.preferredInputType), ("tooltip", displayHints.tooltip)] {
            if let value { hints[key] = .string(value) }
        }
        if displayHints.obfuscate { hints["obfuscate"] = .bool(true) }
        var rules: [String: JSONValue] = [:]
        for validator in validators {
            rules[validator.name] = switch validator {
            case .length(let min, let max): .object(["minLength": .integer(Int64(min)), "maxLength": .integer(Int64(max))])
            case .range(let min, let max): .object(["minValue": .integer(min), "maxValue": .integer(max)])
            case .regularExpression(let pattern): .object(["regularExpression": .string(pattern)])
            case .fixedList(let values): .object(["allowedValues": .array(values.map { .string($0) })])
            case .msisdn(let country, let allowed):
                .object((country.map { ["defaultCountry": JSONValue.string($0)] } ?? [:])
                    .merging(allowed.isEmpty ? [:] : ["countries": .array(allowed.map { .string($0) })]) { $1 })
            default: .object([:])
            }
        }
        var object: [String: JSONValue] = ["id": .string(id), "type": .string(kind.rawValue), "in": .string(location.rawValue),
                                           "required": .bool(required)]
        if !hints.isEmpty { object["displayHints"] = .object(hints) }
        if !rules.isEmpty { object["validators"] = .object(rules) }
        return .object(object)
    }
}

/// Every problem with a field's declaration, each with its JSON path.
public struct FieldDeclarationError: Error, Sendable, Hashable {
    public var problems: [String]
}

extension Field {
    /// One method's form as JSON bytes, `[<field>, ...]`.
    public static func formJSON(_ form: [Field]) -> [UInt8] {
        JSONValue.array(form.map(\.jsonValue)).jsonBytes()
    }

    /// Each method's form, `{"<method>": [<field>, ...]}` (a session's
    /// `fields`), methods sorted: the bytes in `encoded` where it has a
    /// method's (written once per manifests snapshot), else written now.
    public static func write(forms: [String: [Field]], encoded: [String: [UInt8]], to w: inout JSONWriter) {
        w.beginObject()
        for method in forms.keys.sorted() {
            w.key(method)
            if let bytes = encoded[method] {
                w.encoded(bytes)
            } else {
                w.encoded(formJSON(forms[method] ?? []))
            }
        }
        w.endObject()
    }
}
