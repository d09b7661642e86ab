import Foundation
import Testing

/// The README's embedding example is the code ReadmeEmbeddingExample.swift
/// compiles: the same imports, the same lines.
@Suite struct ReadmeEmbeddingExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theReadmesExampleIsTheCodeTheSuiteCompiles() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Embedding the gateway in a Swift app").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "\n```").first)
        let readmeLines = block.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let source = try String(contentsOf: Self.root.appendingPathComponent("Tests/PaymentGatewayTests/ReadmeEmbeddingExample.swift"), encoding: .utf8)
        let compiled = try #require(source.components(separatedBy: "// README begin\n").dropFirst().first?.components(separatedBy: "\n// README end").first)
        let code = readmeLines.filter { !$0.hasPrefix("import ") }.drop { $0.isEmpty }
        #expect(Array(code) == compiled.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        let sourceImports = Set(source.split(separator: "\n").filter { $0.hasPrefix("import ") }.map(String.init))
        for line in readmeLines where line.hasPrefix("import ") {
            #expect(sourceImports.contains(line), "\(line) is not imported where the example compiles")
        }
    }
}
