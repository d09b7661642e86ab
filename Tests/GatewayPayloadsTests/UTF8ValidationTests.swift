import Foundation
@testable import GatewayPayloads
import Testing

/// The parser's own UTF-8 check (it replaced `String(validating:as:)`, which
/// was not specialized across modules): it must refuse exactly what the
/// standard library refuses, through the parser's every path to a string.
@Suite struct UTF8ValidationTests {
    private static func standardLibraryAccepts(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) != nil }
    }

    private static func oursAccepts(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer(JSONParser.isWellFormedUTF8)
    }

    @Test(arguments: [
        ([UInt8](), true), (Array("plain ascii".utf8), true), (Array("مدى ١٢٣".utf8), true), (Array("€ 😀 𝄞".utf8), true),
        ([0xC0, 0x80], false), ([0xC1, 0xBF], false), ([0xE0, 0x80, 0x80], false), ([0xE0, 0x9F, 0xBF], false),
        ([0xED, 0xA0, 0x80], false), ([0xED, 0x9F, 0xBF], true), ([0xF0, 0x8F, 0xBF, 0xBF], false), ([0xF4, 0x90, 0x80, 0x80], false),
        ([0xF4, 0x8F, 0xBF, 0xBF], true), ([0xF5, 0x80, 0x80, 0x80], false), ([0xFF], false), ([0x80], false),
        ([0xE2, 0x82], false), ([0xF0, 0x9F, 0x98], false), ([0xE2, 0x41, 0x82], false), ([0xC3, 0xA9, 0xC3], false),
    ] as [([UInt8], Bool)])
    func knownSequences(bytes: [UInt8], wellFormed: Bool) {
        #expect(Self.oursAccepts(bytes) == wellFormed)
        #expect(Self.standardLibraryAccepts(bytes) == wellFormed)
    }

    /// Random sequences, biased towards the bytes that matter (leads,
    /// continuations, the edges of each range): ours and the standard
    /// library's agree on every one.
    @Test func randomSequencesAgreeWithTheStandardLibrary() {
        var generator = SplitMix(seed: 0x5EED_0F_0D_F00D)
        let interesting: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
                                    0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        var disagreements: [[UInt8]] = []
        for _ in 0..<200_000 {
            let length = Int(generator.next() % 7)
            let bytes = (0..<length).map { _ in
                generator.next() % 3 == 0 ? UInt8(truncatingIfNeeded: generator.next()) : interesting[Int(generator.next() % UInt64(interesting.count))]
            }
            if Self.oursAccepts(bytes) != Self.standardLibraryAccepts(bytes), disagreements.count < 5 { disagreements.append(bytes) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.map { $0.map { String($0, radix: 16) } })")
    }

    /// Every way the parser reads a string refuses bad UTF-8 and keeps good.
    @Test func theParserRefusesBadUTF8OnEveryPath() throws {
        for (raw, good) in [([0xC3, 0xA9] as [UInt8], true), ([0xED, 0xA0, 0x80], false), ([0xC0, 0xAF], false)] {
            for (prefix, suffix) in [("", ""), ("\\n", ""), ("", "\\u0041")] {
                let document = Array(#"{"a":""#.utf8) + Array(prefix.utf8) + raw + Array(suffix.utf8) + Array(#"","b":1}"#.utf8)
                let read = Result { () throws(JSONParseError) -> JSONValue in try JSONValue.parseDocument(Data(document)) }
                let skipped: Result<Int64?, JSONParseError> = document.withUnsafeBytes { buffer in
                    Result { () throws(JSONParseError) -> Int64? in
                        var parser = JSONParser(buffer)
                        var b: Int64?
                        try parser.object { key, p throws(JSONParseError) in if key == "b" { b = try p.integer() } else { try p.skipValue() } }
                        return b
                    }
                }
                #expect(((try? read.get()) != nil) == good, "read \(raw) with \(prefix)|\(suffix)")
                #expect(((try? skipped.get()) != nil) == good, "skipped \(raw) with \(prefix)|\(suffix)")
            }
        }
    }
}

/// A small seeded generator: the same sequences on every run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
