import Foundation
import Testing
import TestSupport

/// The plugin guide's C walkthrough (docs/plugin-authors.md §2) is made of
/// excerpts of the adapter the suite builds and checks: each ```c block of
/// §2.1 to §2.9 is a run of whole lines of `Plugins/ExampleC/example_c.c` (or,
/// for a prototype, of `gateway_abi.h`), so a reader who pastes them gets the
/// code that passes `gateway plugin check` (issue 38). The guide's other copies
/// too: §1.4's `invoke` prototype is the header's, the Package.swift excerpts
/// of §2.11 and §3.1 are Package.swift's lines, and §2.10's `cc` line is the
/// one in example-c's README. Files only: nothing is built or run here.
@Suite("The plugin guide's examples are the repository's code")
struct PluginGuideExampleTests {
    static let guidePath = "docs/plugin-authors.md"
    static let exampleCPath = "Plugins/ExampleC/example_c.c"
    static let headerPath = "Sources/CGatewayABI/include/gateway_abi.h"

    static func read(_ path: String) throws -> String {
        try String(contentsOf: BuildProducts.repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every fenced block of `language` (the fence's info string, exactly) in
    /// the section of `markdown` whose heading line starts with `heading`, up
    /// to the next heading of the same level or higher: each block's lines
    /// without its fences, joined by "\n". `heading` is a heading's start with
    /// its trailing space, `"### 2.1 "` (which `### 2.10 …` does not match) or
    /// `"## Build"`. Lines inside fences are never headings (`# ` in a shell
    /// block, `#define` in C). nil when no heading starts with `heading`.
    static func fencedBlocks(_ language: String, inSection heading: String, of markdown: String) -> [String]? {
        var blocks: [String] = []
        var found = false
        var sectionLevel: Int?                  // set while inside the section
        var fenceLanguage: String?              // set while inside a fence
        var fenceLines: [Substring] = []
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let indentless = line.drop { $0 == " " }
            if let open = fenceLanguage {
                if indentless.trimmingCharacters(in: .whitespaces) == "```" {
                    if sectionLevel != nil && open == language { blocks.append(fenceLines.joined(separator: "\n")) }
                    fenceLanguage = nil
                } else {
                    fenceLines.append(line)
                }
                continue
            }
            if indentless.hasPrefix("```") {
                fenceLanguage = indentless.dropFirst(3).trimmingCharacters(in: .whitespaces)
                fenceLines = []
                continue
            }
            let level = line.prefix { $0 == "#" }.count
            guard level > 0, line.dropFirst(level).first == " " else { continue }
            if let current = sectionLevel, level <= current { sectionLevel = nil }
            if line.hasPrefix(heading) {
                sectionLevel = level
                found = true
            }
        }
        return found ? blocks : nil
    }

    /// Whether `block` is a run of whole lines of `source`.
    static func holdsLines(_ source: String, _ block: String) -> Bool {
        ("\n" + source + "\n").contains("\n" + block + "\n")
    }

    /// Where `block` stops being a run of `source`'s lines: its first line
    /// that does not continue the longest run found (1-based), that line, and
    /// what `source` has there instead (nil when even the block's first line
    /// is nowhere in `source`). nil when the whole block is a run.
    static func divergence(of block: String, from source: String) -> (line: Int, text: String, sourceHas: String?)? {
        let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
        var matched = 0
        while matched < lines.count, holdsLines(source, lines[...matched].joined(separator: "\n")) { matched += 1 }
        guard matched < lines.count else { return nil }
        var sourceHas: String?
        let wrapped = "\n" + source + "\n"
        if matched > 0, let run = wrapped.range(of: "\n" + lines[..<matched].joined(separator: "\n") + "\n") {
            sourceHas = String(wrapped[run.upperBound...].prefix { $0 != "\n" })
        }
        return (matched + 1, String(lines[matched]), sourceHas)
    }

    /// A line at column 0 that ends in `{` opens a definition (a function, a
    /// struct, a table); one that starts with `}` closes it. An excerpt shows
    /// each definition it opens whole.
    static func opensAndCloses(_ block: String) -> (opened: Int, closed: Int) {
        let lines = block.split(separator: "\n")
        let opened = lines.filter { line in line.first.map { !$0.isWhitespace } == true && line.hasSuffix("{") }.count
        let closed = lines.filter { line in line.hasPrefix("}") }.count
        return (opened, closed)
    }

    @Test func everyCBlockOfTheWalkthroughIsExampleCsCode() throws {
        let guide = try Self.read(Self.guidePath)
        let exampleC = try Self.read(Self.exampleCPath)
        let header = try Self.read(Self.headerPath)
        var checked = 0
        for number in 1...9 {
            let section = "§2.\(number)"
            let blocks = try #require(Self.fencedBlocks("c", inSection: "### 2.\(number) ", of: guide),
                                      "\(Self.guidePath) has no section \(section) (### 2.\(number) …)")
            for (index, block) in blocks.enumerated() {
                checked += 1
                let which = "\(section), c block \(index + 1)"
                #expect(!block.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(which) is empty")
                guard !Self.holdsLines(exampleC, block) && !Self.holdsLines(header, block) else {
                    let (opened, closed) = Self.opensAndCloses(block)
                    #expect(opened == closed, "\(which) opens \(opened) definitions at column 0 and closes \(closed): show each whole")
                    continue
                }
                // Name the source the block follows the furthest (example_c.c on a tie).
                let inC = Self.divergence(of: block, from: exampleC)
                let inHeader = Self.divergence(of: block, from: header)
                let (file, furthest) = (inHeader?.line ?? 0) > (inC?.line ?? 0) ? (Self.headerPath, inHeader) : (Self.exampleCPath, inC)
                guard let at = furthest else { continue }
                let there = at.sourceHas.map { " (after the block's first \(at.line - 1) lines, \(file) has `\($0)`)" } ?? ""
                Issue.record("""
                    \(which) is not an excerpt of \(file): its line \(at.line), `\(at.text)`, is not found\(there). \
                    Copy the block from the source again.
                    """)
            }
        }
        #expect(checked > 0, "no ```c block found in §2.1 to §2.9 of \(Self.guidePath)")
    }

    /// A reader who builds from §2 alone must meet the idempotency the check's
    /// `idempotency` step requires: the key, the replay ring, the refusal.
    @Test func theWalkthroughShowsIdempotency() throws {
        let guide = try Self.read(Self.guidePath)
        let instance = try #require(Self.fencedBlocks("c", inSection: "### 2.3 ", of: guide)).joined(separator: "\n")
        #expect(instance.contains("struct replay_entry replays[REPLAY_CAPACITY];"), "§2.3 does not show the instance's replay ring")
        var invoke: [String] = []
        for heading in ["### 2.6 ", "### 2.7 "] {
            let blocks = try #require(Self.fencedBlocks("c", inSection: heading, of: guide), "\(Self.guidePath) has no \(heading)")
            invoke += blocks
        }
        let code = invoke.joined(separator: "\n")
        for needed in ["\"idempotencyKey\"", "replay_claim(", "case REPLAY_ANSWERED:", "case REPLAY_OTHER:", "size_t replay;"] {
            #expect(code.contains(needed), "§2.6/§2.7 show no `\(needed)`: the walkthrough must show the adapter's idempotency")
        }
    }

    @Test func theInvokePrototypeIsTheHeaders() throws {
        let guide = try Self.read(Self.guidePath)
        let header = try Self.read(Self.headerPath)
        let blocks = try #require(Self.fencedBlocks("c", inSection: "### 1.4 ", of: guide), "\(Self.guidePath) has no §1.4")
        #expect(blocks.contains { $0.contains("(*invoke)(") }, "§1.4 shows no invoke prototype")
        for block in blocks {
            if let at = Self.divergence(of: block, from: header) {
                Issue.record("§1.4's prototype is not \(Self.headerPath)'s: its line \(at.line), `\(at.text)`, is not found")
            }
        }
    }

    /// Verbatim, indentation included: the guide copies Package.swift's lines as they are.
    @Test func thePackageExcerptsAreInPackageSwift() throws {
        let guide = try Self.read(Self.guidePath)
        let package = try Self.read("Package.swift")
        for (heading, section) in [("### 2.11 ", "§2.11"), ("### 3.1 ", "§3.1")] {
            let blocks = try #require(Self.fencedBlocks("swift", inSection: heading, of: guide), "\(Self.guidePath) has no \(section)")
            #expect(!blocks.isEmpty, "\(section) shows no Package.swift excerpt")
            for (index, block) in blocks.enumerated() {
                guard let at = Self.divergence(of: block, from: package) else { continue }
                let there = at.sourceHas.map { " (Package.swift has `\($0)` there)" } ?? ""
                Issue.record("\(section), swift block \(index + 1) is not an excerpt of Package.swift: its line \(at.line), `\(at.text)`, is not found\(there)")
            }
        }
    }

    @Test func theCcLineIsExampleCsReadmes() throws {
        let guide = try Self.read(Self.guidePath)
        let readme = try Self.read("Plugins/ExampleC/README.md")
        let printed = try #require(Self.fencedBlocks("sh", inSection: "### 2.10 ", of: guide)?.first, "§2.10 shows no sh block")
        let built = try #require(Self.fencedBlocks("sh", inSection: "## Build", of: readme), "Plugins/ExampleC/README.md has no ## Build")
        #expect(built.count == 1, "the README's Build section has \(built.count) sh blocks, not its one build line")
        let readmeLine = try #require(built.first, "Plugins/ExampleC/README.md's Build section has no sh block")
        #expect(printed.hasPrefix("cc "), "§2.10's first sh block is not a cc line: \(printed)")
        #expect(printed == readmeLine, "§2.10's cc line and example-c's README differ:\n\(printed)\n\(readmeLine)")
    }

    /// §2's opening names the tests that build each `plugin new` skeleton and
    /// check it: exactly the ones CLITests.swift has.
    @Test func theSkeletonTestsTheGuideNamesAreCLITests() throws {
        let guide = try Self.read(Self.guidePath)
        let tests = try Self.read("Tests/GatewayCLITests/CLITests.swift")
        let (prefix, suffix) = ("pluginNewWrites", "SkeletonThatBuildsAndPassesTheCheck")
        let listed = try #require(guide.components(separatedBy: "CLITests.\(prefix){").dropFirst().first?.components(separatedBy: "}\(suffix)").first,
                                  "\(Self.guidePath) no longer lists CLITests.\(prefix){…}\(suffix)")
        let named = Set(listed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let defined = Set(tests.components(separatedBy: "func \(prefix)").dropFirst().compactMap { rest -> String? in
            let name = rest.prefix { $0.isLetter || $0.isNumber }
            return name.hasSuffix(suffix) ? String(name.dropLast(suffix.count)) : nil
        })
        #expect(!defined.isEmpty, "CLITests.swift has no \(prefix)…\(suffix) test")
        #expect(named == defined, "the guide names \(named.sorted()), CLITests.swift has \(defined.sorted())")
    }
}
