import PaymentFields
import Foundation
import GatewayPayloads

/// A result document checked field by field against its payload schema
/// (docs/payloads.md 4.5 to 4.7): the strict reader first (types, required
/// members, enum values, integers), then one row of evidence per member
/// present, with the rule it was held to and whether it kept it. Members the
/// schema does not know are listed too (readers ignore them: not a failure).
enum ResultSchema {
    /// The rows for `document`, the result of `operation`, and the result when
    /// the strict reader took it.
    static func check(_ document: Data, of operation: PaymentOperation) -> (result: AdapterResult?, evidence: [ConformanceCheck.Evidence]) {
        let result: AdapterResult
        do {
            result = try AdapterResult(jsonData: document)
        } catch {
            return (nil, [ConformanceCheck.Evidence(field: "$", value: Redaction.shown(document, limit: 300),
                                                    rule: "an AdapterResult document (docs/payloads.md 4.6): \(error)", ok: false)])
        }
        var rows: [ConformanceCheck.Evidence] = []
        func row(_ field: String, _ value: String, _ rule: String, _ ok: Bool) {
            rows.append(ConformanceCheck.Evidence(field: field, value: value, rule: rule, ok: ok))
        }
        let allowed: [PaymentStatus] = switch operation {
        case .capture, .refund, .void: [.succeeded, .pending, .failed]
        default: PaymentStatus.allCases
        }
        row("status", result.status.rawValue, "required; after \(operation.rawValue) one of " + allowed.map(\.rawValue).joined(separator: ", "),
            allowed.contains(result.status))
        if let reference = result.providerReference {
            row("providerReference", shown(reference), "a non-empty string", !reference.isEmpty)
        }
        if let amount = result.amount { money("amount", amount, into: &rows) }
        let final = result.status == .failed || result.status == .cancelled
        if let problem = result.problem {
            row("problem.code", shown(problem.code.rawValue), "snake_case (^[a-z][a-z0-9_]*$)",
                problem.code.rawValue.range(of: "^[a-z][a-z0-9_]*$", options: .regularExpression) != nil)
            row("problem.message", shown(problem.message), "a non-empty string for the engineer", !problem.message.isEmpty)
            row("problem.retryable", "\(problem.retryable)", "a boolean, required", true)
            row("problem.safeToRetryElsewhere", "\(problem.safeToRetryElsewhere)", "a boolean, required; true only on a failed result (nothing was charged)",
                !problem.safeToRetryElsewhere || result.status == .failed)
            if let code = problem.providerCode { row("problem.providerCode", shown(code), "a string", true) }
            if let field = problem.field { row("problem.field", shown(field), "a member path of the request", !field.isEmpty) }
        } else {
            row("problem", "(absent)", "required when status is failed or cancelled", !final)
        }
        if let action = result.action {
            row("action.type", action.type.rawValue, "redirect, three_ds, otp or app_switch, on a pending result", result.status == .pending)
            if action.type != .otp {
                row("action.url", action.url.map(shown) ?? "(absent)", "required for \(action.type.rawValue): where to send the payer",
                    !(action.url ?? "").isEmpty)
            }
            if let length = action.otpLength { row("action.otpLength", "\(length)", "a positive number of digits", length > 0) }
        }
        if let status = result.providerStatus { row("providerStatus", shown(status), "a string", true) }
        if let totals = result.totals {
            money("totals.captured", totals.captured, into: &rows)
            money("totals.refunded", totals.refunded, into: &rows)
            row("totals.voided", "\(totals.voided)", "a boolean", true)
            row("totals.refunded.value", "\(totals.refunded.value)", "at most what was captured (\(totals.captured.value))",
                totals.refunded.value <= totals.captured.value)
            if let amount = result.amount {
                row("totals.captured.currency", totals.captured.currency, "the amount's currency (\(amount.currency))",
                    totals.captured.currency == amount.currency && totals.refunded.currency == amount.currency)
            }
        }
        for member in unknownMembers(document) {
            row(member, "(ignored)", "not in the schema: readers ignore unknown members", true)
        }
        return (result, rows)
    }

    private static func money(_ field: String, _ money: Money, into rows: inout [ConformanceCheck.Evidence]) {
        rows.append(ConformanceCheck.Evidence(field: field + ".value", value: "\(money.value)", rule: "an integer count of minor units, not negative",
                                              ok: money.value >= 0))
        rows.append(ConformanceCheck.Evidence(field: field + ".currency", value: shown(money.currency), rule: "ISO 4217 (^[A-Z]{3}$)",
                                              ok: money.currency.range(of: "^[A-Z]{3}$", options: .regularExpression) != nil))
    }

    /// A value as the report shows it: card numbers masked, at most 80 bytes.
    private static func shown(_ text: String) -> String { Redaction.shown(text.utf8, limit: 80) }

    /// The members of the document and of its known objects that the schema does not name.
    private static func unknownMembers(_ document: Data) -> [String] {
        guard case .object(let object)? = try? JSONValue(jsonData: document) else { return [] }
        let known: [String: Set<String>] = [
            "": ["status", "providerReference", "amount", "action", "problem", "providerStatus", "totals"],
            "amount": ["value", "currency"],
            "problem": ["code", "message", "retryable", "safeToRetryElsewhere", "providerCode", "field"],
            "action": ["type", "url", "method", "formFields", "otpLength", "expiresAt", "sandboxOtp"],
            "totals": ["captured", "refunded", "voided"],
        ]
        var unknown: [String] = []
        for (path, names) in known {
            let members = path.isEmpty ? object : object[path]?.objectValue
            for key in (members ?? [:]).keys.sorted() where !names.contains(key) {
                unknown.append(path.isEmpty ? key : "\(path).\(key)")
            }
        }
        return unknown.sorted()
    }

    /// The rows that broke their rule, as one line.
    static func failures(_ evidence: [ConformanceCheck.Evidence]) -> String? {
        let broken = evidence.filter { !$0.ok }
        guard !broken.isEmpty else { return nil }
        return broken.map { "\($0.field) \($0.value): \($0.rule)" }.joined(separator: "; ")
    }
}
