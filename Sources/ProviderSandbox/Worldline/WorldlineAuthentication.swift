import Crypto
import Foundation
import Hummingbird

/// A server API request whose `GCS v1HMAC` signature verified, as it was
/// signed: what a test recomputes the HMAC from.
public struct WorldlineSignedRequest: Sendable, Equatable {
    public var method: String
    /// The decoded path and query as signed, with the sandbox's `/worldline` prefix.
    public var path: String
    public var contentType: String?
    /// The `Date` header as sent.
    public var date: String
    /// Every `X-GCS-*` header, by lower-cased name, as sent (a header sent
    /// twice: its values joined with `, `).
    public var gcsHeaders: [String: String]
    public var authorization: String
}

/// Worldline's `GCS v1HMAC` request authentication, verified the way
/// Worldline's server SDKs sign (their `V1HmacAuthenticator`; our code):
///
///     Authorization: GCS v1HMAC:<api key id>:<base64 HMAC-SHA256(secret, string to hash)>
///
/// where the string to hash is `METHOD\n`, the `Content-Type` (or nothing)
/// and `\n`, the `Date` and `\n`, one `name:value\n` line per `X-GCS-*`
/// header (names lower-cased, sorted; each value's line breaks with the
/// blanks after them become one space, then it is trimmed), and the decoded
/// path with `?query` if any, then `\n`. The path is the request's whole
/// path, with the `/worldline` prefix the sandbox mounts the simulator
/// under: a client signs the URL it calls.
///
/// The `Date` (RFC 1123; Java writes a one-digit day, `Mon, 3 Nov 2025 …`)
/// must be within 15 minutes of now (the window is ours: Worldline asks
/// for the current time without saying how much skew it allows). The signature is compared in constant time. A refusal is
/// 401 with errorCode `9002`, `MISSING_OR_INVALID_AUTHORIZATION`
/// (unofficial, from a public copy of the platform's error table).
public enum WorldlineAuthentication {
    /// How far the `Date` header may be from the simulator's clock.
    public static let maxSkew: TimeInterval = 15 * 60

    /// The string a `GCS v1HMAC` signature is computed over. `gcsHeaders`
    /// are the `X-GCS-*` headers as sent (other names are left out); their
    /// names are lower-cased and sorted (stably), their values normalised.
    public static func stringToHash(method: String, contentType: String?, date: String, gcsHeaders: [(String, String)],
                                    path: String) -> String {
        var headers: [(index: Int, name: String, value: String)] = []
        for (index, header) in gcsHeaders.enumerated() where header.0.lowercased().hasPrefix("x-gcs") {
            headers.append((index, header.0.lowercased(), normalised(header.1)))
        }
        headers.sort { $0.name != $1.name ? $0.name < $1.name : $0.index < $1.index }
        var text = method.uppercased() + "\n"
        text += (contentType ?? "") + "\n"
        text += date + "\n"
        for header in headers { text += header.name + ":" + header.value + "\n" }
        return text + path + "\n"
    }

    /// Base64 of HMAC-SHA256 of `string` under the UTF-8 of `secret`.
    public static func signature(_ string: String, secret: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data(string.utf8), using: SymmetricKey(data: Data(secret.utf8)))).base64EncodedString()
    }

    /// A header value as signed: each CR LF or LF, with the blanks (not line
    /// breaks) after it, becomes one space; then characters up to U+0020 are
    /// trimmed from both ends (Java's `String.trim`).
    static func normalised(_ value: String) -> String {
        let joined = value.replacingOccurrences(of: #"\r?\n[ \t\x0B\f]*"#, with: " ", options: .regularExpression)
        let scalars = Array(joined.unicodeScalars)
        var start = 0
        var end = scalars.count
        while start < end, scalars[start].value <= 0x20 { start += 1 }
        while end > start, scalars[end - 1].value <= 0x20 { end -= 1 }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[start..<end])
        return String(view)
    }

    /// An RFC 1123 date in GMT, with a two-digit day (IMF-fixdate) or a
    /// one-digit one (Java's `RFC_1123_DATE_TIME`).
    static func parseDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEE, d MMM yyyy HH:mm:ss 'GMT'"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// The request's path and query as signed: decoded, like Java's
    /// `URI.getPath()` and `getQuery()`.
    static func signedPath(_ request: Request) -> String {
        let path = request.uri.path.removingPercentEncoding ?? request.uri.path
        guard let query = request.uri.query else { return path }
        return path + "?" + (query.removingPercentEncoding ?? query)
    }

    /// The request as signed, when its `Authorization` verifies with
    /// `keyID` and `secret` and its `Date` is fresh; nil otherwise.
    static func verify(_ request: Request, keyID: String, secret: String, now: Date = Date()) -> WorldlineSignedRequest? {
        let prefix = "GCS v1HMAC:"
        guard let authorization = request.headers[.authorization], authorization.hasPrefix(prefix) else { return nil }
        let parts = authorization.dropFirst(prefix.count).split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == keyID, let given = Data(base64Encoded: String(parts[1])), given.count == 32 else { return nil }
        guard let date = request.headers[.date], let sent = parseDate(date), abs(sent.timeIntervalSince(now)) <= maxSkew else { return nil }
        let contentType = request.headers[.contentType]
        let gcs = request.headers.filter { $0.name.canonicalName.hasPrefix("x-gcs") }.map { ($0.name.canonicalName, $0.value) }
        let path = signedPath(request)
        let text = stringToHash(method: request.method.rawValue, contentType: contentType, date: date, gcsHeaders: gcs, path: path)
        guard HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: Data(text.utf8), using: SymmetricKey(data: Data(secret.utf8))) else {
            return nil
        }
        var recorded: [String: String] = [:]
        for (name, value) in gcs { recorded[name] = recorded[name].map { $0 + ", " + value } ?? value }
        return WorldlineSignedRequest(method: request.method.rawValue, path: path, contentType: contentType, date: date,
                                      gcsHeaders: recorded, authorization: authorization)
    }
}
