import Foundation
import GatewayPayloads

/// What is wrong with one field's value, for the payer: the field's id,
/// a stable code, and messages in English and Arabic. Never the value.
public struct FieldIssue: Sendable, Hashable {
    public var field: String
    /// `required`, or the rule broken: `luhn`, `expirationDate`, `emailAddress`,
    /// `iban`, `length`, `range`, `regularExpression`, `fixedList`,
    /// `termsAndConditions`, `msisdn`, or `type` (not a value of the field's type).
    public var code: String
    public var en: String
    public var ar: String
}

/// Validates values against a method's fields: an empty value (after
/// unmasking and trimming) is only `required` for a required field and
/// nothing for an optional one; a value is checked against its type, then
/// each validator in order, and the first rule broken is the field's one
/// issue (one issue per field, so the payer fixes one thing at a time).
public enum FieldValidation {
    /// One issue per field that does not pass, in the fields' order.
    /// `values` holds what the payer typed, by field id; ids not among
    /// `fields` are ignored (they are the adapter's business).
    public static func validate(_ values: [String: String], against fields: [Field], now: Date = Date()) -> [FieldIssue] {
        fields.compactMap { field in issue(values[field.id], field: field, now: now) }
    }

    /// One issue per field of `fields` that `instrument` (an attempt's, by
    /// dotted path for nested members) does not fill right: every
    /// `instrument` field, and each `client` field the attempt carries in
    /// the clear anyway (a card number a server-side integration sends is
    /// checked before any provider sees it; a sealed card carries none, and
    /// a device-made object such as a wallet's token is not judged).
    /// Numbers and booleans are read as their JSON text; an object or an
    /// array where a value belongs is a `type` issue.
    /// - Parameter presentOnly: check only the members present (an attempt
    ///   paying with a saved instrument, which carries what the form asks).
    public static func validate(instrument: [String: JSONValue]?, against fields: [Field], presentOnly: Bool = false,
                                now: Date = Date()) -> [FieldIssue] {
        fields.compactMap { field in
            var value: JSONValue? = .object(instrument ?? [:])
            for step in field.id.split(separator: ".") { value = value?[String(step)] }
            switch value {
            case nil, .null?: return presentOnly || field.location == .client ? nil : issue(nil, field: field, now: now)
            case .string(let text)?: return issue(text, field: field, now: now)
            case .bool(let flag)?: return issue(flag ? "true" : "false", field: field, now: now)
            case .integer(let number)?: return issue(String(number), field: field, now: now)
            case .number(let number)?:
                let text = number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
                return issue(text, field: field, now: now)
            // A device-made object (a wallet's token) is sealed: not the host's to judge.
            case .array?, .object?: return field.location == .client ? nil : make(field.id, "type")
            }
        }
    }

    /// The issue of `value` (nil: absent) for `field`, if any.
    public static func issue(_ value: String?, field: Field, now: Date = Date()) -> FieldIssue? {
        let typed = MSISDN.westernDigits(value ?? "")
        let mask = field.displayHints.mask.flatMap(Mask.init)
        if let mask, !mask.takesWhole(typed) { return make(field.id, "type") }
        let plain = (mask?.unmasked(typed) ?? typed).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !plain.isEmpty else { return field.required ? make(field.id, "required") : nil }
        if let broken = typeProblem(plain, field.kind) { return make(field.id, broken) }
        for validator in field.validators where !validator.accepts(plain, now: now) {
            return make(field.id, validator.name)
        }
        return nil
    }

    /// `value` without its mask, when the field has one.
    public static func unmasked(_ value: String, field: Field) -> String {
        guard let pattern = field.displayHints.mask, let mask = Mask(pattern) else { return value }
        // A value typed without the mask's literals is unmasked the same.
        return mask.unmasked(value)
    }

    static func typeProblem(_ value: String, _ kind: Field.Kind) -> String? {
        switch kind {
        case .string, .expirydate: nil
        case .numericstring: value.allSatisfy { ($0.isASCII && $0.isNumber) || $0 == " " || $0 == "+" || $0 == "-" } ? nil : "type"
        case .integer: Int64(value) == nil ? "type" : nil
        case .boolean: value == "true" || value == "false" ? nil : "type"
        }
    }

    static func make(_ field: String, _ code: String) -> FieldIssue {
        let message = messages[code] ?? messages["type"]!
        return FieldIssue(field: field, code: code, en: message.en, ar: message.ar)
    }

    /// The payer's messages, by code.
    static let messages: [String: (en: String, ar: String)] = [
        "required": ("This field is required.", "هذا الحقل مطلوب."),
        "type": ("This value is not in the expected format.", "هذه القيمة ليست بالتنسيق المتوقع."),
        "luhn": ("This card number is not valid. Please check it.", "رقم البطاقة هذا غير صحيح. يرجى التحقق منه."),
        "expirationDate": ("The expiry date must be a month from now on, as MM/YY.", "يجب أن يكون تاريخ الانتهاء شهرًا حاليًا أو لاحقًا، بالصيغة MM/YY."),
        "emailAddress": ("This email address is not valid.", "عنوان البريد الإلكتروني هذا غير صحيح."),
        "iban": ("This IBAN is not valid. Please check it.", "رقم الآيبان هذا غير صحيح. يرجى التحقق منه."),
        "length": ("This value does not have an allowed length.", "طول هذه القيمة غير مسموح به."),
        "range": ("This value is outside the allowed range.", "هذه القيمة خارج النطاق المسموح به."),
        "regularExpression": ("This value is not in the correct format.", "هذه القيمة ليست بالتنسيق الصحيح."),
        "fixedList": ("This value is not one of the allowed choices.", "هذه القيمة ليست من الخيارات المسموح بها."),
        "termsAndConditions": ("Please accept the terms and conditions.", "يرجى قبول الشروط والأحكام."),
        "msisdn": ("This mobile number is not valid. Please check it, or enter it with the country code (+ and the digits).",
                   "رقم الجوال هذا غير صحيح. يرجى التحقق منه، أو إدخاله مع رمز الدولة (+ ثم الأرقام)."),
    ]
}
