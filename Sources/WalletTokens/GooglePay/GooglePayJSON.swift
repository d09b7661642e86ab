import Foundation
import GatewayPayloads

/// A JSON object of a Google Pay token, a signing keys file or a decrypted
/// message, read member by member: each read names the member's full path
/// (`intermediateSigningKey.signatures[0]`) in the refusal it throws, and
/// never the member's value, which may be a card number.
struct GooglePayJSONObject {
    /// Which document is read, and so which refusal a defect in it is.
    enum Document {
        /// The token, or a JSON string inside it (`signedKey`, `signedMessage`).
        case token
        /// The decrypted message: what Google encrypted for the merchant.
        case paymentData
        /// A keys.json of Google's root signing keys.
        case rootKeys

        func refusal(_ why: String) -> WalletTokenError {
            switch self {
            case .token: .malformedToken(why)
            case .paymentData: .malformedPaymentData(why)
            case .rootKeys: .malformedToken("root signing keys: \(why)")
            }
        }
    }

    let members: [String: JSONValue]
    /// The object's own path: empty for a document's top level.
    let path: String
    let document: Document

    init(_ value: JSONValue, at path: String, in document: Document) throws(WalletTokenError) {
        guard case .object(let members) = value else {
            throw document.refusal("\(path.isEmpty ? "the top level" : path) is not a JSON object")
        }
        self.members = members
        self.path = path
        self.document = document
    }

    /// Parses `data` as JSON text holding an object. `what` names the text in
    /// the refusal (`signedMessage`, `the decrypted message`).
    init(parsing data: Data, named what: String, at path: String, in document: Document) throws(WalletTokenError) {
        let value: JSONValue
        do {
            value = try JSONValue(jsonData: data)
        } catch {
            throw document.refusal("\(what) is not JSON")
        }
        guard case .object = value else { throw document.refusal("\(what) is not a JSON object") }
        try self.init(value, at: path, in: document)
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func refusal(_ why: String) -> WalletTokenError { document.refusal(why) }

    func value(_ key: String) throws(WalletTokenError) -> JSONValue {
        guard let value = members[key], value != .null else { throw refusal("\(name(key)) is missing") }
        return value
    }

    func string(_ key: String) throws(WalletTokenError) -> String {
        guard case .string(let text) = try value(key) else { throw refusal("\(name(key)) is not a string") }
        return text
    }

    /// nil when absent or null; a refusal when present with another type.
    func optionalString(_ key: String) throws(WalletTokenError) -> String? {
        guard let value = members[key], value != .null else { return nil }
        guard case .string(let text) = value else { throw refusal("\(name(key)) is not a string") }
        return text
    }

    func object(_ key: String) throws(WalletTokenError) -> GooglePayJSONObject {
        try GooglePayJSONObject(try value(key), at: name(key), in: document)
    }

    func array(_ key: String) throws(WalletTokenError) -> [JSONValue] {
        guard case .array(let elements) = try value(key) else { throw refusal("\(name(key)) is not an array") }
        return elements
    }

    /// Standard base64 with padding, as Google writes every binary member.
    func base64(_ key: String) throws(WalletTokenError) -> Data {
        guard let data = Data(base64Encoded: try string(key)) else { throw refusal("\(name(key)) is not base64") }
        return data
    }

    /// A whole JSON number (Google writes the card expiry month and year as numbers).
    func integer(_ key: String, in range: ClosedRange<Int>) throws(WalletTokenError) -> Int {
        guard let number = try value(key).integerValue, let whole = Int(exactly: number), range.contains(whole)
        else { throw refusal("\(name(key)) is not a whole number from \(range.lowerBound) to \(range.upperBound)") }
        return whole
    }

    /// A string of decimal milliseconds since the epoch (`"1542323393147"`),
    /// the form of every Google Pay expiration.
    func milliseconds(_ key: String) throws(WalletTokenError) -> Date {
        let text = try string(key)
        guard let date = GooglePayJSONObject.date(milliseconds: text) else {
            throw refusal("\(name(key)) is not milliseconds since the epoch as a string of digits")
        }
        return date
    }

    /// Refuses a member outside `allowed`, for the objects Tink requires to
    /// hold exactly their documented members. Call after reading the
    /// required ones, so that a missing member is named before an extra one.
    func requireNoMembersBut(_ allowed: Set<String>) throws(WalletTokenError) {
        if let extra = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw refusal("\(path.isEmpty ? "the token" : path) has an unexpected member \(extra)")
        }
    }

    static func date(milliseconds text: String) -> Date? {
        guard !text.isEmpty, text.utf8.count <= 16, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let milliseconds = Int64(text)
        else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }

    static func millisecondsSinceEpoch(_ date: Date) -> String {
        String(Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}
