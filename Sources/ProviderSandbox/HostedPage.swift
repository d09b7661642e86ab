import Foundation
import Hummingbird
import NIOCore

/// What the simulators' payer pages share: the page layout, HTML escaping,
/// the HTML answer, the routes of an approval page, and the redirect back to
/// the shop.
enum HostedPage {
    /// The style of an approval page: full-width buttons under the amount.
    static let approvalStyle = """
        button{display:block;margin-top:.8rem;padding:.6rem 1.2rem;width:100%}.amount{font-size:1.6rem;font-weight:600}
        .note{color:#5b6577;font-size:.85rem}
        """

    /// A whole page: `title` as its title and heading, `body` (HTML) under it,
    /// and a note that `provider`'s sandbox makes no real payment.
    static func layout(_ title: String, _ body: String, provider: String, style: String = approvalStyle) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#1d2433}
        \(style)</style></head>
        <body><h1>\(escape(title))</h1>
        \(body)
        <p class="note">\(provider) sandbox: no real payment is made.</p></body></html>
        """
    }

    /// Text safe inside HTML.
    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// An answer with `page` as its HTML body.
    static func response(_ status: HTTPResponse.Status = .ok, _ page: String) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
    }

    /// The routes of an approval page at `<path>/:<parameter>`: `GET` shows
    /// it, or completes it at once with `?sandbox_outcome=`; `POST` completes
    /// it with the form's `outcome` (empty when missing). `parameter` must be
    /// the name the simulator's other routes give that path segment.
    static func registerApproval(on routes: RouterGroup<BasicRequestContext>, at path: String, parameter: String,
                                 show: @escaping @Sendable (_ id: String) -> Response,
                                 complete: @escaping @Sendable (_ id: String, _ outcome: String) -> Response) {
        routes.get("\(path)/:\(parameter)") { request, context -> Response in
            let id = context.parameters.get(parameter) ?? ""
            guard let outcome = request.uri.queryParameters.get("sandbox_outcome") else { return show(id) }
            return complete(id, String(outcome))
        }
        routes.post("\(path)/:\(parameter)") { request, context -> Response in
            let form = String(buffer: try await request.body.collect(upTo: 16 * 1024))
            let outcome = form.split(separator: "&").compactMap { pair -> String? in
                let parts = pair.split(separator: "=", maxSplits: 1)
                return parts.count == 2 && parts[0] == "outcome" ? String(parts[1]) : nil
            }.first ?? ""
            return complete(context.parameters.get(parameter) ?? "", outcome)
        }
    }

    /// A form body (`application/x-www-form-urlencoded`, at most 16 KiB) as
    /// its fields; a field given twice keeps its last value.
    static func form(_ request: Request) async throws -> [String: String] {
        let text = String(buffer: try await request.body.collect(upTo: 16 * 1024))
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            if let name = parts.first, !name.isEmpty { fields[name] = parts.count == 2 ? parts[1] : "" }
        }
        return fields
    }

    /// `value` percent-encoded for a query component.
    static func queryComponent(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// HTTP 302 to the shop's `back` URL with `query` added, each value percent-encoded.
    static func redirect(to back: String, adding query: KeyValuePairs<String, String>) -> Response {
        guard !query.isEmpty else { return Response(status: .found, headers: [.location: back]) }
        let added = query.map { $0.key + "=" + queryComponent($0.value) }.joined(separator: "&")
        return Response(status: .found, headers: [.location: back + (back.contains("?") ? "&" : "?") + added])
    }
}
