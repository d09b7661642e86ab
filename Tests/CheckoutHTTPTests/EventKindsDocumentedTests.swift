import CheckoutEngine
import Foundation
import Testing

/// `SessionEvent.Kind.all` is the one list of event types: the README's
/// table and the OpenAPI document's `SessionEvent.type` quote it, in order.
@Suite struct EventKindsDocumentedTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theReadmesTableListsEveryKindInOrder() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "- **Session events.**").dropFirst().first?
            .components(separatedBy: "\n\n- ").first)
        let listed = section.split(separator: "\n").compactMap { line -> String? in
            let line = line.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("| `") else { return nil }
            return line.dropFirst(3).split(separator: "`").first.map(String.init)
        }
        #expect(listed == SessionEvent.Kind.all.map(\.rawValue))
    }

    @Test func theOpenAPIDocumentEnumeratesEveryKindInOrder() throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("Sources/CheckoutHTTP/openapi.json"))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let event = try #require(schemas["SessionEvent"] as? [String: Any])
        let type = try #require((event["properties"] as? [String: Any])?["type"] as? [String: Any])
        #expect(type["enum"] as? [String] == SessionEvent.Kind.all.map(\.rawValue))
    }

    @Test func everyKindIsNamedOnceAndShapedAsOthersAre() {
        let raw = SessionEvent.Kind.all.map(\.rawValue)
        #expect(Set(raw).count == raw.count)
        #expect(raw.allSatisfy { $0.range(of: "^(session|attempt|payment|webhook)\\.[a-z_]+$", options: .regularExpression) != nil })
    }
}
