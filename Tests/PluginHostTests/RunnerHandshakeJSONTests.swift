import Foundation
import GatewayPayloads
@testable import PluginHost
import Testing

/// The runner handshake's documents, the adapter description and `plugin
/// check --json`'s steps through the codec: the wire of runner protocol 3
/// (what the Codable conformances wrote) reads as it did, and every document
/// reads back what it wrote.
@Suite struct RunnerHandshakeJSONTests {
    static func roundTrip<T: JSONPayload>(_ value: T) throws -> T {
        try T(jsonData: Data(value.jsonBytes()))
    }

    static func text(_ value: some JSONPayload) -> String {
        String(decoding: value.jsonBytes(), as: UTF8.self)
    }

    @Test func everyLoadFailureReadsBackWhatItWrote() throws {
        let failures: [LoadFailure] = [
            .unreadableManifest(detail: "d"), .malformedJSON(detail: "d"),
            .schemaViolation([ManifestProblem(path: "$.id", message: "m"), ManifestProblem(path: "$.x", message: "n")]),
            .duplicateID(id: "a", firstManifest: "b.json"), .runnerUnavailable("r"), .runnerHandshake("h \"quoted\"\n"),
            .libraryNotFound(library: "l", searched: ["/a", "/b"]), .libraryUnreadable(path: "p", detail: "d"),
            .digestMismatch(path: "p", expected: "e", actual: "a"), .openFailed(path: "p", detail: "d"),
            .missingSymbol(symbol: "s", library: "l"), .abiMismatch(host: "1.1", adapter: "2.0", manifest: "1.0"),
            .negotiationFailed(status: .version), .malformedTable(detail: "d"), .missingFunction(name: "invoke"),
            .idMismatch(manifest: "m", adapter: "a"), .versionMismatch(manifest: "m", adapter: "a"),
            .createFailed(status: ABIStatus(rawValue: -7), message: "m"), .describeFailed(detail: "d"),
            .claimsUnimplemented(methods: ["visa"], operations: []), .sandboxUnavailable("s"),
            .sandboxIncomplete(layers: ["network", "pid"], detail: "d"), .tlsUnusable("t"),
        ]
        for failure in failures {
            #expect(try Self.roundTrip(failure) == failure, "\(Self.text(failure))")
        }
    }

    /// Swift's synthesized enum coding: the case's name, its values by label, `_0` unlabeled.
    @Test func aLoadFailureKeepsTheFormOfTheSynthesizedCoding() throws {
        let document = #"{"cookie":"c","failure":{"createFailed":{"status":4,"message":"no"}}}"#
        let read = try RunnerLoadFailure(jsonData: Data(document.utf8))
        #expect(read.cookie == "c")
        #expect(read.failure == .createFailed(status: .internal, message: "no"))
        #expect(Self.text(read) == document)
        let handshake = #"{"runnerHandshake":{"_0":"bad"}}"#
        #expect(try LoadFailure(jsonData: Data(handshake.utf8)) == .runnerHandshake("bad"))
        #expect(Self.text(LoadFailure.runnerHandshake("bad")) == handshake)
        let problems = #"{"schemaViolation":{"_0":[{"path":"$.id","message":"m"}]}}"#
        #expect(try LoadFailure(jsonData: Data(problems.utf8)) == .schemaViolation([ManifestProblem(path: "$.id", message: "m")]))
        #expect(throws: JSONParseError.self) { try LoadFailure(jsonData: Data(#"{"teleported":{}}"#.utf8)) }
        #expect(throws: JSONParseError.self) { try LoadFailure(jsonData: Data(#"{"openFailed":{"path":"p"}}"#.utf8)) }
    }

    @Test func aLoadReadsBackWhatItWroteWithItsVersion() throws {
        let load = RunnerLoad(
            expected: AdapterBinding.Expectation(id: "a", version: "1.0.0", entry: "gw_adapter_entry", abiMajor: 1, abiMinor: 1),
            library: "/l", sourcePath: "/s", sha256: "x", config: #"{"k":"v"}"#,
            limits: Manifest.Limits(memoryMegabytes: 64, cpuSecondsPerCall: 2), secrets: ["k": "dg=="])
        let bytes = load.jsonBytes()
        let spoken = bytes.withUnsafeBytes { RunnerProtocol.version(of: $0) }
        #expect(spoken == RunnerProtocol.version)
        let read = try RunnerLoad(jsonData: Data(bytes))
        let readVersion = read.protocol
        #expect(readVersion == RunnerProtocol.version)
        #expect(read.config == load.config && read.secrets == load.secrets && read.sha256 == "x")
        #expect(read.limits == load.limits)
        #expect(read.expected.entry == "gw_adapter_entry" && read.expected.abiMinor == 1)
        // Limits that are nil are left out, as the Codable conformance left them out.
        #expect(!String(decoding: bytes, as: UTF8.self).contains("openFiles"))
    }

    /// As the Python runner of ``HostileRunnerTests`` writes READY: spaces,
    /// no `reason`, no `currencies`, and a member this host does not know.
    @Test func aReadyOfProtocolThreeIsRead() throws {
        let document = #"""
            {"protocol": 3, "cookie": "c", "abiMajor": 1, "abiMinor": 0, "sha256": "s", "pid": 1,
             "description": {"id": "fake", "version": "1.0.0", "methods": ["visa"], "operations": ["authorize", "teleport"]},
             "sandbox": [{"layer": "network", "inForce": true, "excepted": false}], "later": {"member": [1, 2.5, null]}}
            """#
        let ready = try RunnerReady(jsonData: Data(document.utf8))
        let readyVersion = ready.protocol
        #expect(readyVersion == 3)
        #expect(ready.cookie == "c" && ready.pid == 1 && ready.abiMajor == 1 && ready.abiMinor == 0)
        #expect(ready.description == AdapterDescription(id: "fake", version: "1.0.0", methods: ["visa"], operations: [.authorize]))
        #expect(ready.sandbox == [SandboxClaim(layer: "network", inForce: true, excepted: false, reason: nil)])
        let again = try Self.roundTrip(ready)
        let againVersion = again.protocol
        #expect(againVersion == 3)
        #expect(again.sha256 == "s" && again.description == ready.description && again.sandbox == ready.sandbox)
    }

    @Test func theVersionIsReadFromADocumentThisSideCannotRead() {
        let other = Array(#"{"expected":{"shape":"of another version"},"protocol":99,"library":7}"#.utf8)
        let spoken = other.withUnsafeBytes { RunnerProtocol.version(of: $0) }
        #expect(spoken == 99)
        #expect(throws: JSONParseError.self) { try RunnerLoad(jsonData: Data(other)) }
        let none = Array(#"[3]"#.utf8)
        let notAnObject = none.withUnsafeBytes { RunnerProtocol.version(of: $0) }
        #expect(notAnObject == nil)
    }

    @Test func aDescriptionIsWrittenAsBefore() throws {
        let description = AdapterDescription(id: "x", version: "1.0.0", methods: ["visa"], operations: [.authorize, .instruments])
        #expect(Self.text(description) == #"{"id":"x","version":"1.0.0","methods":["visa"],"operations":["authorize","instruments"]}"#)
        let withCurrencies = AdapterDescription(id: "x", version: "1", methods: [], operations: [.refund], currencies: ["SAR"])
        #expect(try Self.roundTrip(withCurrencies) == withCurrencies)
        #expect(throws: JSONParseError.self) { try AdapterDescription(jsonData: Data(#"{"id":"x","version":"1","methods":["visa"]}"#.utf8)) }
    }

    @Test func aCheckStepIsReadByItsCodableConformanceToo() throws {
        let evidence = ConformanceCheck.Evidence(field: "status", value: "failed", rule: "a known status", ok: false)
        let step = ConformanceCheck.Step(name: "authorize", passed: false, detail: "d", evidence: [evidence], threads: 3)
        #expect(try JSONDecoder().decode(ConformanceCheck.Step.self, from: Data(step.jsonBytes())) == step)
        #expect(try Self.roundTrip(step) == step)
        let bare = ConformanceCheck.Step(name: "load", passed: true, detail: "ok")
        #expect(Self.text(bare) == #"{"detail":"ok","name":"load","passed":true}"#)
    }
}
