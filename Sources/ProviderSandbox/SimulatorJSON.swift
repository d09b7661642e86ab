import Foundation
import Hummingbird
import NIOCore

/// The JSON pieces the simulators share: documents written through
/// `JSONSerialization`, answers, snake_case request bodies, RFC 3339
/// timestamps and lower-case UUIDs.
///
/// Foundation's JSON stays in the simulators: they stand in for other
/// companies' servers (their snake_case, their number forms) and are the
/// adapters' counterpart in tests, so they must not share the gateway's codec.
enum SimulatorJSON {
    /// `document` as JSON text, keys sorted, `/` not escaped.
    static func text(_ document: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// An answer with the JSON `text` as its body.
    static func response(_ status: HTTPResponse.Status, _ text: String, contentType: String = "application/json") -> Response {
        Response(status: status, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// The request body (at most 256 KiB) decoded with snake_case keys; a body
    /// that does not decode throws what `malformed` makes of the decoding error.
    static func decodeSnakeCase<T: Decodable>(_ type: T.Type, _ request: Request,
                                              malformed: (any Error) -> any Error) async throws -> T {
        let buffer = try await request.body.collect(upTo: 256 * 1024)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        do {
            return try decoder.decode(T.self, from: Data(buffer: buffer))
        } catch {
            throw malformed(error)
        }
    }

    /// RFC 3339 UTC with seconds, `2026-11-22T20:40:26Z`.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// A new random UUID, lower case.
    static func uuid() -> String { UUID().uuidString.lowercased() }
}
