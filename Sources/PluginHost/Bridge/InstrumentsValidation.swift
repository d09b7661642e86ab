import PaymentFields
import Foundation
import GatewayPayloads

/// The rules an adapter's `instruments` answer must keep before the host
/// offers any of it to a payer (docs/payloads.md §5.8). The host and
/// `gateway plugin check` apply the same rules: the host drops what breaks
/// them, the check fails on it.
///
/// - A card number anywhere in the answer (any string: a reference, a label,
///   a masked phone, client data) rejects the whole answer: an adapter that
///   leaks one may leak others. In client data (public identifiers) digits
///   inside a token with letters, such as a hex id, are the identifier's.
/// - An instrument that breaks its kind's rules is dropped alone.
/// - Unknown kinds are skipped (a later minor may add kinds), as are methods
///   the host did not ask about; at most 20 instruments per method.
public enum InstrumentsValidation {
    public static let maxPerMethod = 20
    public static let maxDocumentBytes = 64 * 1024

    public struct Outcome: Sendable, Equatable {
        /// What may be offered.
        public var result: InstrumentsResult
        /// Each rule broken, with its path (`$.methods.visa[0].last4`).
        public var problems: [String]
        /// True when a card number was found: nothing is offered.
        public var rejected: Bool
    }

    /// Validates `result`, an answer to a request for `methods`.
    public static func validate(_ result: InstrumentsResult, methods: [String], documentBytes: Int? = nil) -> Outcome {
        if let documentBytes, documentBytes > maxDocumentBytes {
            return Outcome(result: InstrumentsResult(), problems: ["$: the document has \(documentBytes) bytes, more than \(maxDocumentBytes)"], rejected: true)
        }
        var problems: [String] = []
        for (method, list) in result.methods.sorted(by: { $0.key < $1.key }) {
            for (index, instrument) in list.enumerated() {
                for (member, text) in strings(of: instrument)
                where member.hasPrefix("data.") ? Redaction.containsStandaloneCardNumber(in: text) : Redaction.containsCardNumber(in: text) {
                    problems.append("$.methods.\(method)[\(index)].\(member): holds a card number; the whole answer is refused")
                }
            }
        }
        if !problems.isEmpty { return Outcome(result: InstrumentsResult(), problems: problems, rejected: true) }

        let asked = Set(methods)
        var kept: [String: [Instrument]] = [:]
        for (method, list) in result.methods.sorted(by: { $0.key < $1.key }) {
            guard asked.contains(method) else {
                problems.append("$.methods.\(method): not a method the host asked about")
                continue
            }
            var offered: [Instrument] = []
            for (index, instrument) in list.enumerated() {
                let path = "$.methods.\(method)[\(index)]"
                guard let kind = Instrument.Kind(rawValue: instrument.kind) else { continue }
                if let broken = rule(broken: instrument, kind: kind) {
                    problems.append("\(path).\(broken)")
                    continue
                }
                if offered.count == maxPerMethod {
                    problems.append("\(path): more than \(maxPerMethod) instruments for \(method)")
                    break
                }
                offered.append(instrument)
            }
            if !offered.isEmpty { kept[method] = offered }
        }
        return Outcome(result: InstrumentsResult(methods: kept), problems: problems, rejected: false)
    }

    /// The first rule `instrument` breaks, as `member: why`, or nil.
    static func rule(broken instrument: Instrument, kind: Kind) -> String? {
        if let reference = instrument.reference,
           !(1...1024).contains(reference.utf8.count) || !reference.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            return "reference: must be 1 to 1024 visible ASCII characters"
        }
        if let expiresAt = instrument.expiresAt, instrument.expiryDate == nil {
            return "expiresAt: must be an RFC 3339 time, found \"\(expiresAt)\""
        }
        switch kind {
        case .savedCard:
            guard instrument.brand.map({ matches($0, "^[a-z0-9_]{1,32}$") }) == true else { return "brand: must match ^[a-z0-9_]{1,32}$" }
            guard instrument.last4.map({ matches($0, "^[0-9]{4}$") }) == true else { return "last4: must be four digits" }
            guard instrument.expiryMonth.map({ (1...12).contains($0) }) == true else { return "expiryMonth: must be 1 to 12" }
            guard instrument.expiryYear.map({ (2000...2099).contains($0) }) == true else { return "expiryYear: must be 2000 to 2099" }
            guard instrument.reference != nil else { return "reference: is required for a saved card" }
        case .phone:
            guard let masked = instrument.masked, (4...32).contains(masked.count),
                  masked.unicodeScalars.allSatisfy({ "+0123456789*• ".unicodeScalars.contains($0) })
            else { return "masked: must be 4 to 32 characters of + 0-9 * • and spaces" }
            guard masked.unicodeScalars.filter({ ("0"..."9").contains($0) }).count <= 6 else { return "masked: shows more than six digits" }
            guard instrument.reference != nil else { return "reference: is required for a phone" }
        case .wallet:
            guard instrument.available != nil else { return "available: is required (true or false)" }
        case .web:
            guard let label = instrument.label, (1...64).contains(label.count),
                  !label.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else { return "label: must be 1 to 64 characters with no control characters" }
            switch instrument.mode {
            case "menu": break
            case "restricted", "instrument":
                guard instrument.reference != nil else { return "reference: is required for a web instrument in mode \(instrument.mode!)" }
            default: return "mode: must be \"menu\", \"restricted\" or \"instrument\""
            }
        case .clientSession:
            guard let data = instrument.data, !data.isEmpty, data.count <= 8, data.values.allSatisfy({ $0.utf8.count <= 2048 })
            else { return "data: must have 1 to 8 string members of at most 2 KiB" }
            guard instrument.expiresAt != nil else { return "expiresAt: is required for a client session" }
            guard instrument.reference == nil else { return "reference: a client session is public data and takes none" }
        }
        return nil
    }

    typealias Kind = Instrument.Kind

    /// Every string an instrument carries, by member name.
    static func strings(of instrument: Instrument) -> [(String, String)] {
        var all: [(String, String)] = []
        for (name, value) in [("brand", instrument.brand), ("last4", instrument.last4), ("masked", instrument.masked),
                              ("label", instrument.label), ("mode", instrument.mode), ("reference", instrument.reference),
                              ("expiresAt", instrument.expiresAt), ("kind", instrument.kind)] {
            if let value { all.append((name, value)) }
        }
        for (key, value) in (instrument.data ?? [:]).sorted(by: { $0.key < $1.key }) {
            all.append(("data (a key)", key))
            all.append(("data.\(Redaction.maskingCardNumbers(in: key))", value))
        }
        return all
    }

    static func matches(_ text: String, _ pattern: String) -> Bool {
        text.range(of: pattern, options: .regularExpression) != nil
    }
}
