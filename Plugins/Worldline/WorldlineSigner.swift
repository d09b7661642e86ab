import Crypto
import Foundation
import GatewayAdapterSDK

/// Worldline's `GCS v1HMAC` request signature, as the provider's SDKs
/// compute it: HMAC-SHA256 with the API secret over
///
///     METHOD \n Content-Type (or empty) \n Date \n
///     x-gcs-name:value \n   (each X-GCS-* header, names lower-cased, sorted)
///     /path[?query] \n
///
/// sent as `Authorization: GCS v1HMAC:<api key id>:<base64 signature>`.
/// Pure: the client and the tests use the same functions.
enum WorldlineSigner {
    /// Signs `request` as of `date`: its `Date` header, then `Authorization`
    /// over its method, content type, date, X-GCS headers and path.
    static func sign(_ request: inout ProviderHTTPClient.ProviderRequest, keyID: [UInt8], secret: [UInt8], at date: Date) throws {
        guard let path = signedPath(of: request.url) else { throw AdapterError.internal("Worldline URL \(request.url.prefix(80)) cannot be read") }
        let stamp = httpDate(date)
        request.headers["Date"] = stamp
        let text = stringToHash(method: request.method, contentType: request.contentType, date: stamp, headers: request.headers, path: path)
        request.headers["Authorization"] = authorization(keyID: String(decoding: keyID, as: UTF8.self), signature: signature(text, secret: secret))
    }

    /// The string the signature is computed over.
    static func stringToHash(method: String, contentType: String?, date: String, headers: [String: String], path: String) -> String {
        var text = method.uppercased() + "\n" + (contentType ?? "") + "\n" + date + "\n"
        let gcs = headers.map { (name: $0.key.lowercased(), value: $0.value) }.filter { $0.name.hasPrefix("x-gcs") }.sorted { $0.name < $1.name }
        for header in gcs { text += header.name + ":" + normalised(header.value) + "\n" }
        return text + path + "\n"
    }

    /// A header value as signed: each line break (and the blanks after it)
    /// becomes one space, and the ends are trimmed.
    static func normalised(_ value: String) -> String {
        value.replacingOccurrences(of: "\r?\n[ \t]*", with: " ", options: .regularExpression).trimmingCharacters(in: .whitespaces)
    }

    /// Base64 of HMAC-SHA256(`secret`, `text`).
    static func signature(_ text: String, secret: [UInt8]) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: SymmetricKey(data: secret))).base64EncodedString()
    }

    /// The `Authorization` header value.
    static func authorization(keyID: String, signature: String) -> String { "GCS v1HMAC:\(keyID):\(signature)" }

    /// `date` as an RFC 1123 (IMF-fixdate) `Date` header: `Mon, 24 Nov 2025 10:15:00 GMT`.
    /// Composed from its UTC fields: a `DateFormatter` per request costs more
    /// than the signature, and one shared is not safe across threads here.
    static func httpDate(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(((days % 7) + 7) % 7)]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(two(day)) \(months[Int(month) - 1]) \(year) \(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }

    /// The path and query of `url` as Worldline signs them (the path decoded).
    static func signedPath(of url: String) -> String? {
        guard let components = URLComponents(string: url) else { return nil }
        let path = components.path.isEmpty ? "/" : components.path
        return path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
    }

    /// Whether `signature` is HMAC-SHA256(`secret`, `body`) in base64,
    /// compared in constant time (webhooks' `X-GCS-Signature`).
    static func verifies(body: Data, signature: String, secret: [UInt8]) -> Bool {
        guard let given = Data(base64Encoded: signature) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: body, using: SymmetricKey(data: secret))
    }
}
