import Foundation
@testable import PluginHost
import Testing
import TestSupport

@Suite struct ManifestEditorTests {
    // MARK: Helpers

    /// Edits, then checks the result is JSON whose top-level `key` equals `value` parsed.
    @discardableResult
    private func edit(
        _ key: String, _ value: String, in text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let result = try ManifestEditor.settingTopLevelMember(key, to: value, in: text)
        let parsed = try JSONSerialization.jsonObject(with: Data(result.utf8), options: [.fragmentsAllowed])
        let object = try #require(parsed as? NSDictionary, "result is not an object", sourceLocation: sourceLocation)
        let expected = try JSONSerialization.jsonObject(with: Data(value.utf8), options: [.fragmentsAllowed])
        #expect((object[key] as? NSObject) == (expected as? NSObject), "top-level \(key)", sourceLocation: sourceLocation)
        return result
    }

    private func assertThrows(
        _ expected: ManifestEditError, _ key: String = "enabled", _ value: String = "false", in text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let result = try ManifestEditor.settingTopLevelMember(key, to: value, in: text)
            Issue.record("expected \(expected), got \(result.debugDescription)", sourceLocation: sourceLocation)
        } catch {
            #expect(error == expected, sourceLocation: sourceLocation)
        }
    }

    /// The `malformed` detail, failing if the edit succeeds or fails otherwise.
    private func malformedDetail(
        _ text: String, key: String = "enabled", value: String = "false", sourceLocation: SourceLocation = #_sourceLocation
    ) -> String {
        do {
            let result = try ManifestEditor.settingTopLevelMember(key, to: value, in: text)
            Issue.record("expected malformed, got \(result.debugDescription)", sourceLocation: sourceLocation)
        } catch {
            if case .malformed(let detail) = error { return detail }
            Issue.record("expected malformed, got \(error)", sourceLocation: sourceLocation)
        }
        return ""
    }

    private let manifest = """
        {
          "file_format_version": "1.0.0",
          "id": "mock",
          "version": "1.0.0",
          "enabled": true,
          "library": "libMockAdapter.so",
          "abi": {"major": 1, "minor": 0},
          "methods": ["visa"],
          "currencies": ["SAR"],
          "countries": ["SA"],
          "amount": {"SAR": {"min": 1, "max": 100}},
          "operations": ["authorize"],
          "priority": 10,
          "config": {},
          "secrets": {"webhook_secret": "env:GATEWAY_MOCK_WEBHOOK_SECRET"},
          "egress": [],
          "isolation": "in-process"
        }

        """

    // MARK: Replacing

    @Test func replaceTrueWithFalseKeepsEveryOtherByte() throws {
        let result = try edit("enabled", "false", in: manifest)
        #expect(result == manifest.replacingOccurrences(of: "\"enabled\": true", with: "\"enabled\": false"))
        // Byte for byte: everything before and after the value is the original.
        let original = Array(manifest.utf8), edited = Array(result.utf8)
        let valueStart = Array(manifest.utf8).firstRange(of: Array("true,".utf8))!.lowerBound
        #expect(edited[..<valueStart] == original[..<valueStart])
        #expect(Array(edited[(valueStart + 5)...]) == Array(original[(valueStart + 4)...]))
        #expect(Array(edited[valueStart..<(valueStart + 5)]) == Array("false".utf8))
    }

    @Test func replaceRoundTripAndNoChange() throws {
        let disabled = try edit("enabled", "false", in: manifest)
        #expect(try edit("enabled", "true", in: disabled) == manifest)
        #expect(try edit("enabled", "true", in: manifest) == manifest)
    }

    @Test func replaceKeepsOddFormatting() throws {
        let text = "{\"id\":\"x\" ,\n\t\"enabled\"   :\ttrue   ,  \"z\" : [ 1 ,2 ]}"
        let result = try edit("enabled", "false", in: text)
        #expect(result == "{\"id\":\"x\" ,\n\t\"enabled\"   :\tfalse   ,  \"z\" : [ 1 ,2 ]}")
    }

    @Test func replaceCompoundValues() throws {
        let text = """
            {
              "config": {
                "a": [1, 2, {"b": "}"}],
                "c": null
              },
              "enabled": true
            }
            """
        let result = try edit("config", "{}", in: text)
        #expect(result == "{\n  \"config\": {},\n  \"enabled\": true\n}")
        let back = try edit("enabled", "[1, {\"x\": \"y\"}]", in: result)
        #expect(back == "{\n  \"config\": {},\n  \"enabled\": [1, {\"x\": \"y\"}]\n}")
    }

    @Test func replaceStringValueWithSha() throws {
        let digest = String(repeating: "ab", count: 32)
        let text = "{\"sha256\": \"\(String(repeating: "0", count: 64))\", \"id\": \"m\"}"
        #expect(try edit("sha256", "\"\(digest)\"", in: text) == "{\"sha256\": \"\(digest)\", \"id\": \"m\"}")
    }

    @Test func newValueWhitespaceIsTrimmed() throws {
        #expect(try edit("enabled", "  false\n", in: "{\"enabled\": true}") == "{\"enabled\": false}")
    }

    @Test func duplicateKeyReplacesLastOccurrence() throws {
        let text = "{\n  \"enabled\": true,\n  \"id\": \"m\",\n  \"enabled\": true\n}\n"
        let result = try edit("enabled", "false", in: text)
        #expect(result == "{\n  \"enabled\": true,\n  \"id\": \"m\",\n  \"enabled\": false\n}\n")
        let parsed = try JSONSerialization.jsonObject(with: Data(result.utf8)) as? [String: Any]
        #expect((parsed?["enabled"] as? Bool) == false)
    }

    // MARK: Top level only

    @Test func nestedSameNameKeyIsUntouched() throws {
        let text = """
            {
              "config": {"enabled": true, "deep": {"enabled": true}},
              "enabled": true,
              "x-meta": [{"enabled": true}]
            }
            """
        let result = try edit("enabled", "false", in: text)
        #expect(result == text.replacingOccurrences(of: "  \"enabled\": true,", with: "  \"enabled\": false,"))
        #expect(result.components(separatedBy: "\"enabled\": true").count - 1 == 3)
    }

    @Test func nestedOnlyKeyLeadsToInsertAtTopLevel() throws {
        let text = "{\n  \"config\": {\n    \"enabled\": true\n  }\n}\n"
        let result = try edit("enabled", "false", in: text)
        #expect(result == "{\n  \"config\": {\n    \"enabled\": true\n  },\n  \"enabled\": false\n}\n")
    }

    @Test func stringContainingKeyIsUntouched() throws {
        let text = """
            {
              "description": "set \\"enabled\\": true to turn it on; {\\"enabled\\": true}",
              "note": "\\\\",
              "enabled": true
            }
            """
        let result = try edit("enabled", "false", in: text)
        #expect(result.contains(#""description": "set \"enabled\": true to turn it on; {\"enabled\": true}","#))
        #expect(result.hasSuffix("\"enabled\": false\n}"))
        #expect(result == text.replacingOccurrences(of: "\"enabled\": true\n}", with: "\"enabled\": false\n}"))
    }

    @Test func stringOnlyMentionLeadsToInsert() throws {
        let text = #"{"description": "\"enabled\": true"}"#
        #expect(try edit("enabled", "false", in: text) == #"{"description": "\"enabled\": true", "enabled": false}"#)
    }

    // MARK: Escapes and non-ASCII

    @Test func escapedKeyMatchesDecodedName() throws {
        let text = #"{"en\u0061bled": true, "b": 1}"#
        #expect(try edit("enabled", "false", in: text) == #"{"en\u0061bled": false, "b": 1}"#)
    }

    @Test func escapesInStringsDoNotConfuseTheScanner() throws {
        // A value ending in an escaped backslash, one with an escaped quote, surrogate pairs, \/ and controls.
        let text = #"{"a": "x\\", "b": "\"}\"", "c": "\ud83d\ude00 \/ \b\f\n\r\t \u00e9", "enabled": true}"#
        #expect(try edit("enabled", "false", in: text)
                == #"{"a": "x\\", "b": "\"}\"", "c": "\ud83d\ude00 \/ \b\f\n\r\t \u00e9", "enabled": false}"#)
    }

    @Test func keyWithSurrogatePairEscape() throws {
        let text = #"{"\ud83d\ude00": 1}"#
        #expect(try edit("😀", "2", in: text) == #"{"\ud83d\ude00": 2}"#)
    }

    @Test func unpairedSurrogatesAreMalformed() {
        // Foundation refuses these too, so an edit could never produce a readable file.
        #expect(malformedDetail(#"{"\ud800": 1}"#) == "unpaired UTF-16 surrogate in a \\u escape at 1:3")
        #expect(malformedDetail(#"{"a": "x\udc00"}"#) == "unpaired UTF-16 surrogate in a \\u escape at 1:9")
        #expect(malformedDetail(#"{"a": "\ud83d\u0041"}"#) == "unpaired UTF-16 surrogate in a \\u escape at 1:8")
        #expect(malformedDetail(#"{"a": "\ud83d"}"#) == "unpaired UTF-16 surrogate in a \\u escape at 1:8")
    }

    @Test func nonASCIIContentIsPreserved() throws {
        let text = "{\n  \"description\": \"بوابة الدفع — 支付 😀\",\n  \"enabled\": true,\n  \"مفتاح\": \"é\"\n}\n"
        let result = try edit("enabled", "false", in: text)
        #expect(result == text.replacingOccurrences(of: "true", with: "false"))
        let inserted = try edit("ملاحظة", "\"نعم\"", in: text)
        #expect(inserted == "{\n  \"description\": \"بوابة الدفع — 支付 😀\",\n  \"enabled\": true,\n  \"مفتاح\": \"é\",\n  \"ملاحظة\": \"نعم\"\n}\n")
        // Keys compare scalar by scalar: precomposed é is not e + combining acute. (Not checked
        // through JSONSerialization, whose dictionary treats the two spellings as one key.)
        let decomposed = try ManifestEditor.settingTopLevelMember("me\u{301}", to: "1", in: "{\"m\u{E9}\": 0}")
        #expect(decomposed == "{\"m\u{E9}\": 0, \"me\u{301}\": 1}")
    }

    @Test func insertedKeyIsEscaped() throws {
        let result = try edit("a\"b\\c\nd\u{1}", "1", in: "{}")
        #expect(result == "{\n  \"a\\\"b\\\\c\\nd\\u0001\": 1\n}")
    }

    @Test func byteOrderMarkIsKept() throws {
        let text = "\u{FEFF}{\"enabled\": true}"
        let result = try ManifestEditor.settingTopLevelMember("enabled", to: "false", in: text)
        #expect(result == "\u{FEFF}{\"enabled\": false}")
    }

    // MARK: Inserting

    @Test func insertIntoMultiLineObject() throws {
        let result = try edit("sha256", "\"abc\"", in: manifest)
        #expect(result == manifest.replacingOccurrences(
            of: "  \"isolation\": \"in-process\"\n}\n",
            with: "  \"isolation\": \"in-process\",\n  \"sha256\": \"abc\"\n}\n"))
    }

    @Test func insertUsesIndentationOfLastMember() throws {
        let fourSpaces = "{\n    \"a\": 1,\n    \"b\": {\n        \"c\": 2\n    }\n}"
        #expect(try edit("d", "true", in: fourSpaces)
                == "{\n    \"a\": 1,\n    \"b\": {\n        \"c\": 2\n    },\n    \"d\": true\n}")
        let tabs = "{\n\t\"a\": 1\n}\n"
        #expect(try edit("b", "2", in: tabs) == "{\n\t\"a\": 1,\n\t\"b\": 2\n}\n")
        let twoPerLine = "{\n   \"a\": 1, \"b\": 2\n}"
        #expect(try edit("c", "3", in: twoPerLine) == "{\n   \"a\": 1, \"b\": 2,\n   \"c\": 3\n}")
        let closingOnSameLine = "{\n  \"a\": 1}"
        #expect(try edit("b", "2", in: closingOnSameLine) == "{\n  \"a\": 1,\n  \"b\": 2}")
    }

    @Test func insertCopiesColonSpacing() throws {
        #expect(try edit("b", "2", in: "{\n  \"a\":1\n}") == "{\n  \"a\":1,\n  \"b\":2\n}")
        #expect(try edit("b", "2", in: "{\n  \"a\" : 1\n}") == "{\n  \"a\" : 1,\n  \"b\" : 2\n}")
        #expect(try edit("b", "2", in: "{\n  \"a\"\n  :\n  1\n}") == "{\n  \"a\"\n  :\n  1,\n  \"b\": 2\n}")
    }

    @Test func insertWhenLastMemberSharesTheOpeningLine() throws {
        let text = "{\"a\": {\n  \"x\": 1\n}}\n"
        #expect(try edit("b", "2", in: text) == "{\"a\": {\n  \"x\": 1\n},\n  \"b\": 2}\n")
    }

    @Test func insertIntoEmptyObject() throws {
        #expect(try edit("enabled", "true", in: "{}") == "{\n  \"enabled\": true\n}")
        #expect(try edit("enabled", "true", in: "{}\n") == "{\n  \"enabled\": true\n}\n")
        #expect(try edit("enabled", "true", in: "{ }") == "{\n  \"enabled\": true\n}")
        #expect(try edit("enabled", "true", in: "\n{\n\n}\n\n") == "\n{\n  \"enabled\": true\n}\n\n")
        #expect(try edit("enabled", "true", in: "  {}") == "  {\n    \"enabled\": true\n  }")
    }

    @Test func insertIntoOneLineObject() throws {
        #expect(try edit("enabled", "false", in: #"{"id": "m", "methods": ["visa"]}"#)
                == #"{"id": "m", "methods": ["visa"], "enabled": false}"#)
        #expect(try edit("enabled", "false", in: "{\"id\":\"m\"}\n") == "{\"id\":\"m\", \"enabled\":false}\n")
        #expect(try edit("enabled", "false", in: "{ \"id\": 1 }") == "{ \"id\": 1, \"enabled\": false }")
    }

    @Test func trailingNewlinePresenceIsPreserved() throws {
        let without = "{\n  \"a\": 1\n}"
        #expect(!(try edit("b", "2", in: without).hasSuffix("\n")))
        #expect(try edit("b", "2", in: without + "\n").hasSuffix("}\n"))
        #expect(try edit("b", "2", in: without + "\n\n").hasSuffix("}\n\n"))
    }

    // MARK: Line endings

    @Test func cRLFPreservedOnInsert() throws {
        let text = "{\r\n  \"id\": \"m\",\r\n  \"config\": {\r\n    \"k\": 1\r\n  }\r\n}\r\n"
        let result = try edit("enabled", "false", in: text)
        #expect(result == "{\r\n  \"id\": \"m\",\r\n  \"config\": {\r\n    \"k\": 1\r\n  },\r\n  \"enabled\": false\r\n}\r\n")
        let bytes = Array(result.utf8)
        for (i, byte) in bytes.enumerated() where byte == 0x0A {
            #expect(bytes[i - 1] == 0x0D, "bare LF at byte \(i)")
        }
        #expect(try edit("enabled", "true", in: "{\r\n}\r\n") == "{\r\n  \"enabled\": true\r\n}\r\n")
    }

    @Test func cRLFPreservedOnReplace() throws {
        let text = "{\r\n  \"enabled\": true,\r\n  \"id\": \"m\"\r\n}\r\n"
        #expect(try edit("enabled", "false", in: text) == "{\r\n  \"enabled\": false,\r\n  \"id\": \"m\"\r\n}\r\n")
    }

    @Test func lFFileGetsLFEvenIfEmptyOneLine() throws {
        #expect(try edit("a", "1", in: "{}") == "{\n  \"a\": 1\n}")
    }

    // MARK: Errors

    @Test func topLevelNonObjectIsNotAnObject() {
        assertThrows(.notAnObject, in: "[]")
        assertThrows(.notAnObject, in: "[{\"enabled\": true}]\n")
        assertThrows(.notAnObject, in: "  \"enabled\"")
        assertThrows(.notAnObject, in: "42")
        assertThrows(.notAnObject, in: "-1")
        assertThrows(.notAnObject, in: "true")
        assertThrows(.notAnObject, in: "null")
        // A document that is not JSON at all is malformed, whatever it starts with.
        #expect(malformedDetail("[1, 2") == "expected ',' or ']' in an array, found end of input at 1:6")
        #expect(malformedDetail("\"enabled\": true") == "unexpected ':' after the top-level value at 1:10")
        #expect(malformedDetail("0{}") == "unexpected '{' after the top-level value at 1:2")
    }

    @Test func trailingCommasAreRefused() {
        // RFC 8259 has no trailing commas (Foundation on Linux tolerates them; this editor does not).
        #expect(malformedDetail("{\"a\": 1,}") == "expected a member name in double quotes, found '}' at 1:9")
        #expect(malformedDetail("{\"a\": [1,]}") == "expected a value, found ']' at 1:10")
    }

    @Test func malformedDocuments() {
        let cases: [(String, String)] = [
            ("", "the document is empty at 1:1"),
            ("   \n ", "the document is empty at 2:2"),
            ("x", "expected '{', found 'x' at 1:1"),
            ("{", "expected a member name in double quotes, found end of input at 1:2"),
            ("{\"enabled\": true", "expected ',' or '}' in an object, found end of input at 1:17"),
            ("{\"enabled\" true}", "expected ':' after a member name, found 't' at 1:12"),
            ("{\n  \"a\": 1,\n}", "expected a member name in double quotes, found '}' at 3:1"),
            ("{\"a\": 1} x", "unexpected 'x' after the top-level object at 1:10"),
            ("{\"a\": 1}{}", "unexpected '{' after the top-level object at 1:9"),
            ("{a: 1}", "expected a member name in double quotes, found 'a' at 1:2"),
            ("{\"a\": 'x'}", "expected a value, found ''' at 1:7"),
            ("{\n  \"a\": \"abc\n}", "unescaped control character U+000A in a string at 2:12"),
            ("{\"a\": \"abc}", "unterminated string that starts at 1:7"),
            ("{\"a\": \"\\x\"}", "invalid escape '\\x' in a string at 1:8"),
            ("{\"a\": \"\\u12G4\"}", "\\u escape needs four hex digits at 1:8"),
            ("{\"a\": \"\\u12", "incomplete \\u escape in a string at 1:8"),
            ("{\"a\": 01}", "invalid number: leading zero at 1:7"),
            ("{\"a\": -}", "invalid number: expected a digit, found '}' at 1:8"),
            ("{\"a\": 1.}", "invalid number: expected a digit after '.', found '}' at 1:9"),
            ("{\"a\": 1e}", "invalid number: expected a digit in the exponent, found '}' at 1:9"),
            ("{\"a\": +1}", "expected a value, found '+' at 1:7"),
            ("{\"a\": tru}", "invalid literal: expected 'true' at 1:7"),
            ("{\"a\": nul", "invalid literal: expected 'null' at 1:7"),
            ("{\"a\": [1, 2,]}", "expected a value, found ']' at 1:13"),
            ("{\"a\": [1 2]}", "expected ',' or ']' in an array, found '2' at 1:10"),
            ("{\"a\": {\"b\" 1}}", "expected ':' after a member name, found '1' at 1:12"),
            ("{\"a\": {\"b\": 1]}", "expected ',' or '}' in an object, found ']' at 1:14"),
            ("{\"é😀\": ?}", "expected a value, found '?' at 1:8"),
            ("{\"a\": \u{A0}1}", "expected a value, found U+00A0 at 1:7"),
        ]
        for (text, expected) in cases {
            #expect(malformedDetail(text) == expected, "for \(text.debugDescription)")
        }
    }

    @Test func malformedNestedDeepInADocumentReportsLineAndColumn() {
        let text = "{\r\n  \"config\": {\r\n    \"list\": [1, 2, 3,,]\r\n  }\r\n}\r\n"
        #expect(malformedDetail(text) == "expected a value, found ',' at 3:22")
    }

    @Test func errorInsideNestedValueEvenIfMemberIsEarlier() {
        // The edit never applies to a document that is not JSON as a whole.
        #expect(malformedDetail("{\"enabled\": true, \"config\": {\"a\": [}}")
                == "expected a value, found '}' at 1:36")
    }

    @Test func tooDeepNesting() {
        let deep = "{\"a\": " + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"
        #expect(malformedDetail(deep).hasPrefix("arrays and objects nested deeper than 512"))
        let fine = "{\"a\": " + String(repeating: "[", count: 500) + String(repeating: "]", count: 500) + "}"
        #expect(throws: Never.self) { try ManifestEditor.settingTopLevelMember("b", to: "1", in: fine) }
    }

    @Test func malformedNewValue() {
        let text = "{\"enabled\": true}"
        #expect(malformedDetail(text, value: "flase")
                == "the new value is not a single JSON value: invalid literal: expected 'false' at 1:1")
        #expect(malformedDetail(text, value: "")
                == "the new value is not a single JSON value: expected a JSON value, found end of input at 1:1")
        #expect(malformedDetail(text, value: "true false")
                == "the new value is not a single JSON value: unexpected 'f' after the value at 1:6")
        #expect(malformedDetail(text, value: "abc")
                == "the new value is not a single JSON value: expected a value, found 'a' at 1:1")
        #expect(malformedDetail(text, value: "\"abc")
                == "the new value is not a single JSON value: unterminated string that starts at 1:1")
        #expect(malformedDetail(text, value: "true,")
                == "the new value is not a single JSON value: unexpected ',' after the value at 1:5")
    }

    @Test func errorsLeaveNoPartialEditAndDescribeThemselves() {
        #expect(ManifestEditError.notAnObject.description == "the document's top level is not a JSON object")
        #expect(ManifestEditError.malformed("x at 1:2").description == "malformed JSON: x at 1:2")
        #expect("\(ManifestEditError.notAnObject)" == "the document's top level is not a JSON object")
    }

    // MARK: Fuzz-ish

    @Test func everyMemberOfManifestCanBeReplacedAndInserted() throws {
        let keys = ["file_format_version", "id", "version", "enabled", "library", "abi", "methods", "currencies",
                    "countries", "amount", "operations", "priority", "config", "secrets", "egress", "isolation"]
        for key in keys {
            let result = try edit(key, "null", in: manifest)
            let lines = result.split(separator: "\n", omittingEmptySubsequences: false)
            let originalLines = manifest.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == originalLines.count)
            let changed = zip(lines, originalLines).filter { $0 != $1 }
            #expect(changed.count == 1, "\(key)")
            #expect(changed.first?.0.hasPrefix("  \"\(key)\": null") ?? false, "\(key)")
        }
        for key in ["sha256", "entry", "timeout_ms", "description", "x-owner"] {
            let result = try edit(key, "\"v\"", in: manifest)
            #expect(result.hasPrefix(manifest.replacingOccurrences(of: "\"in-process\"\n}\n", with: "\"in-process\"")))
            #expect(result.hasSuffix(",\n  \"\(key)\": \"v\"\n}\n"))
        }
    }

    /// Mutates a manifest at random (seeded) and checks the editor against JSONSerialization:
    /// when Foundation reads the mutant as an object, the edit succeeds and parses; when it
    /// rejects it, the editor reports malformed input too.
    @Test func agreesWithJSONSerializationOnMutants() throws {
        var generator = SplitMix64(seed: 0x5EED)
        let source = Array(manifest.utf8)
        let alphabet = Array("{}[]\",:\\ \n0123456789-.eEtrufalsn\u{7F}".utf8)
        var accepted = 0, rejected = 0
        for _ in 0..<3000 {
            var bytes = source
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes.remove(at: index)
                case 1: bytes.insert(alphabet.randomElement(using: &generator)!, at: index)
                default: bytes[index] = alphabet.randomElement(using: &generator)!
                }
            }
            guard let text = String(validating: bytes, as: UTF8.self) else { continue }
            let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            do {
                let result = try ManifestEditor.settingTopLevelMember("enabled", to: "false", in: text)
                #expect((foundation as? NSDictionary) != nil, "editor accepted what Foundation rejects: \(text.debugDescription)")
                let parsed = try JSONSerialization.jsonObject(with: Data(result.utf8)) as? NSDictionary
                #expect((parsed?["enabled"] as? Bool) == false, "\(text.debugDescription)")
                accepted += 1
            } catch ManifestEditError.notAnObject {
                #expect(foundation != nil, "\(text.debugDescription)")
                #expect((foundation as? NSDictionary) == nil, "\(text.debugDescription)")
            } catch {
                // Foundation on Linux also reads trailing commas; RFC 8259 (and this editor) does not.
                if foundation != nil {
                    #expect(text.range(of: #",\s*[\]}]"#, options: .regularExpression) != nil,
                            "editor rejected what Foundation accepts (\(error)): \(text.debugDescription)")
                }
                rejected += 1
            }
        }
        #expect(accepted > 100)
        #expect(rejected > 100)
    }
}
