import PaymentFields
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization

/// One log line per request, with its request id on it and on every line the
/// handlers log; the id goes back in `X-Request-Id` (the caller's when it is
/// a plain token, card numbers in it masked: ``usable(_:)``). The path is logged with
/// card numbers and API keys masked (a key sent in a path by mistake), and
/// no body or header but `X-Request-Id` is ever logged (so never
/// `Authorization`). Metrics count by route pattern (`/v1/sessions/{id}`),
/// not raw path, so ids never become labels.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    static let requestIDHeader = HTTPField.Name("X-Request-Id")!

    let metrics: GatewayMetrics
    let inFlight: RequestsInFlight

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        // The logger already carries Hummingbird's id (`hb.request.id`,
        // written as `request_id` by the host's log handler); it is replaced
        // only when the caller gave one, so a request whose lines are never
        // written pays nothing for them.
        if let given = request.headers[Self.requestIDHeader].flatMap(Self.usable) {
            context.requestID = given
            context.logger[metadataKey: "hb.request.id"] = .string(given)
        }
        let started = ContinuousClock.now
        let path = request.uri.path
        let token = inFlight.begin(method: request.method.rawValue, path: path, requestID: context.requestID)
        defer { inFlight.end(token) }
        var response = try await next(request, context)
        let route = context.endpointPath.map(Self.pattern) ?? "unmatched"
        let elapsed = ContinuousClock.now - started
        metrics.request(route: route, method: request.method.rawValue, status: response.status.code, duration: elapsed)
        response.headers[Self.requestIDHeader] = context.requestID
        // The message is made (and the path masked) only if the line is written.
        context.logger.info("\(request.method) \(Self.masked(path)) \(response.status.code) in \(elapsed)")
        return response
    }

    /// Hummingbird's `/v1/sessions/:id` as `/v1/sessions/{id}`, worked out
    /// once per route.
    static func pattern(_ path: String) -> String {
        if let known = patterns.withLock({ $0[path] }) { return known }
        let made = makePattern(path)
        patterns.withLock { $0[path] = made }
        return made
    }

    private static let patterns = Mutex<[String: String]>([:])

    private static func makePattern(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
    }

    /// A path as logged: percent-decoded (a card number sent as
    /// `4111%201111%20…` is a card number), card numbers and API keys in it
    /// masked, and any control character it decoded to written back as
    /// `%XX` (a `%0A` must not start a forged line in the log).
    static func masked(_ path: String) -> String {
        let decoded = path.removingPercentEncoding ?? path
        let masked = maskingAPIKeys(in: Redaction.maskingCardNumbers(in: decoded))
        guard masked.unicodeScalars.contains(where: isControl) else { return masked }
        var out = String.UnicodeScalarView()
        for scalar in masked.unicodeScalars {
            if isControl(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out.append(contentsOf: ("%" + (hex.count < 2 ? "0" + hex : hex)).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `text` with whatever follows `gk_test_` or `gk_live_` masked.
    static func maskingAPIKeys(in text: String) -> String {
        guard text.contains("gk_") else { return text }
        var out = ""
        var rest = Substring(text)
        while let range = [rest.range(of: "gk_test_"), rest.range(of: "gk_live_")].compactMap({ $0 }).min(by: { $0.lowerBound < $1.lowerBound }) {
            out += rest[..<range.upperBound] + "…"
            rest = rest[range.upperBound...].drop { $0.isLetter || $0.isNumber }
        }
        return out + rest
    }

    /// The caller's `X-Request-Id` as the server logs and echoes it: a
    /// token of 1 to 128 letters, digits and `-._:`, with any card number in
    /// it masked (a client that puts one there must not put it in our logs);
    /// nil for anything else, and for an id holding an API key, which the
    /// server's own id then replaces.
    static func usable(_ id: String) -> String? {
        guard (1...128).contains(id.utf8.count), id.utf8.allSatisfy(isTokenByte),
              !id.contains("gk_test_"), !id.contains("gk_live_") else { return nil }
        return Redaction.maskingCardNumbers(in: id)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"): true
        default: false
        }
    }
}
