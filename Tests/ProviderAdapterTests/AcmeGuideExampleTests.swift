import Foundation
import GatewayPayloads
import PluginHost
import Testing
import TestSupport

/// The plugin guide's complete minimal Swift adapter (docs/plugin-authors.md
/// §3.7) as printed: its code is what the package builds as `AcmeAdapter`,
/// its manifest is one the host accepts, and the adapter passes
/// `gateway plugin check`, in a runner and then in process, against
/// ``AcmeStandIn`` with the guide's manifest changed only where a test must.
/// Acme's other answers (a decline, a refusal before processing, a pending
/// charge, a charge found by its reference) map as the guide says.
@Suite("The plugin guide's Acme adapter")
struct AcmeGuideExampleTests {
    static let guide = BuildProducts.repository.appendingPathComponent("docs/plugin-authors.md")
    static let exportLine = "### 3.6 The export line"
    static let minimalAdapter = "### 3.7 A complete minimal Swift adapter"
    /// The check's deadline per call: a backstop for a busy machine, never what decides.
    static let callTimeout = Duration.seconds(120).scaled

    /// The first ` ```language ` block of the guide's section `heading`, as a
    /// file holds it (its lines, each ending in a newline).
    static func block(_ language: String, in heading: String) throws -> String {
        let text = try String(contentsOf: guide, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n\(heading)\n").dropFirst().first?
            .components(separatedBy: "\n### ")[0].components(separatedBy: "\n## ")[0], "the guide has no section \(heading)")
        let block = try #require(section.components(separatedBy: "\n```\(language)\n").dropFirst().first?.components(separatedBy: "\n```\n").first,
                                 "\(heading) has no \(language) block")
        return block + "\n"
    }

    /// The guide's manifest as a test runs it: `mode` test, `config.base_url`
    /// and `egress` on the loopback `port`, the API key `key` from a file;
    /// the rest as printed (a request timeout scaled like every backstop).
    static func manifest(in folder: ManifestFolder, port: Int, key: String = AcmeStandIn.apiKey) throws -> URL {
        let printed = try block("json", in: minimalAdapter)
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any])
        var config = try #require(manifest["config"] as? [String: Any])
        config["base_url"] = "http://127.0.0.1:\(port)"
        if let timeout = config["request_timeout_ms"] as? Int { config["request_timeout_ms"] = min(120_000, TestTime.milliseconds(timeout)) }
        manifest["config"] = config
        manifest["mode"] = "test"
        manifest["egress"] = ["127.0.0.1:\(port)"]
        let secret = folder.root.appendingPathComponent("acme-api-key")
        try Data(key.utf8).write(to: secret)
        manifest["secrets"] = ["api_key": "file:\(secret.path)"]
        let text = try String(decoding: JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self)
        return try folder.write("acme.json", text)
    }

    @Test func theGuidesCodeIsWhatThePackageBuilds() throws {
        for (file, heading) in [("Plugins/Acme/AcmeAdapter.swift", Self.minimalAdapter), ("Plugins/Acme/Export.swift", Self.exportLine)] {
            let built = try String(contentsOf: BuildProducts.repository.appendingPathComponent(file), encoding: .utf8)
            let printed = try Self.block("swift", in: heading)
            let (ours, theirs) = (built.split(separator: "\n", omittingEmptySubsequences: false), printed.split(separator: "\n", omittingEmptySubsequences: false))
            let line = ours.indices.first { $0 >= theirs.count || ours[$0] != theirs[$0] } ?? ours.count
            #expect(built == printed, "\(file) and the guide's \(heading) differ from line \(line + 1): change both together")
        }
    }

    @Test func theGuidesManifestIsValidAndNamesTheAdapter() throws {
        let printed = try Data(Self.block("json", in: Self.minimalAdapter).utf8)
        guard case .valid(let manifest) = ManifestValidator.validate(printed) else {
            Issue.record("the guide's Acme manifest is refused: \(ManifestValidator.validate(printed))")
            return
        }
        #expect(manifest.id == "acme" && manifest.version == "1.0.0" && manifest.library == "libAcmeAdapter.so")
        #expect(manifest.operations == [.authorize, .verify] && manifest.methods == ["visa", "mada"] && manifest.currencies == ["SAR"])
        guard case .environment("ACME_API_KEY")? = manifest.secrets["api_key"] else {
            Issue.record("the guide's adapter tells the operator to set ACME_API_KEY: \(String(describing: manifest.secrets["api_key"]))")
            return
        }
        let code = try Self.block("swift", in: Self.minimalAdapter)
        #expect(code.contains("static let id = \"\(manifest.id)\"") && code.contains("static let version = \"\(manifest.version)\""))
    }

    @Test(.heavy) func theGuidesAdapterPassesPluginCheckAgainstAcme() async throws {
        try await AcmeStandIn.run { acme async throws in
            let folder = try ManifestFolder(copyShipped: false)
            let manifest = try Self.manifest(in: folder, port: acme.port)
            let steps = await ConformanceCheck(loader: folder.loader, callTimeout: Self.callTimeout).run(manifestAt: manifest)

            let failed = steps.filter { !$0.passed }
            #expect(failed.isEmpty, "\(failed)")
            // The guide's manifest says "in-process": the check runs every step in a runner, then in this process.
            for name in ["load", "authorize", "verify", "concurrency", "idempotency", "malformed-authorize", "edge-cases", "cancel",
                         "undeclared-operation", "exactly-once"] {
                #expect(steps.contains { $0.name == "runner:" + name } && steps.contains { $0.name == name },
                        "\(name) did not run in both passes: \(steps.map(\.name))")
            }
            #expect(steps.first { $0.name == "authorize" }?.detail.hasPrefix("completed once: succeeded") == true, "\(steps)")
            // Acme answered the check: the replay from the key's charge, the other amount under it refused (each pass).
            #expect(acme.replays >= 2 && acme.conflicts >= 2, "replays \(acme.replays), conflicts \(acme.conflicts)")
        }
    }

    @Test(.heavy) func withoutItsAPIKeyTheAdapterRefusesToStartAndTheCheckSaysWhy() async throws {
        let folder = try ManifestFolder(copyShipped: false)
        // No call is made: nothing needs to listen on the port.
        let manifest = try Self.manifest(in: folder, port: 9, key: "")
        let steps = await ConformanceCheck(loader: folder.loader, callTimeout: Self.callTimeout).run(manifestAt: manifest)
        let load = try #require(steps.first { $0.name == "runner:load" }, "\(steps)")
        #expect(!load.passed && load.detail.contains("the api_key secret is missing or empty"), "\(load)")
        #expect(steps.last?.name == "in-process" && steps.last?.passed == false, "\(steps)")
    }

    /// Acme's answers besides the check's success, through the adapter loaded in process.
    @Test(.heavy) func acmesOtherAnswersMapAsTheGuideSays() async throws {
        try await AcmeStandIn.run { acme async throws in
            let folder = try ManifestFolder(copyShipped: false)
            let url = try Self.manifest(in: folder, port: acme.port)
            let manifest = try ManifestFile.read(url).get()
            let loader = folder.loader
            let adapter = try await offThePool { try loader.load(manifest, from: url).get() }
            func authorize(_ token: String, _ name: String, currency: String = "SAR") -> AuthorizeRequest {
                AuthorizeRequest(paymentId: "pay_\(name)", idempotencyKey: "key_\(name)", amount: Money(value: 2500, currency: currency), method: "visa",
                                 orderId: "order-\(name)", instrument: ["token": .string(token)])
            }

            let declined = try await adapter.call(.authorize, authorize("tok_decline", "declined"))
            #expect(declined.status == .failed && declined.problem?.code == .cardDeclined && declined.problem?.providerCode == "do_not_honor", "\(declined)")
            let refused = try await adapter.call(.authorize, authorize("tok_unavailable", "unavailable"))
            #expect(refused.status == .failed && refused.problem?.safeToRetryElsewhere == true && refused.providerReference == nil, "\(refused)")
            let pending = try await adapter.call(.authorize, authorize("tok_pending", "pending"))
            #expect(pending.status == .pending && pending.providerReference != nil, "\(pending)")
            // An authorize whose answer was lost: verify finds its charge by the paymentId it sent.
            let charged = try await adapter.call(.authorize, authorize("tok_visa", "lost"))
            let found = try await adapter.call(.verify, VerifyRequest(paymentId: "pay_lost", providerReference: nil))
            #expect(found.status == .succeeded && found.providerReference == charged.providerReference, "\(found)")
            let unknown = try await adapter.call(.verify, VerifyRequest(paymentId: "pay_never", providerReference: "ch_never"))
            #expect(unknown.status == .failed && unknown.problem?.code == .unknownPayment, "\(unknown)")
            // A currency Acme does not take is refused before anything is sent.
            await #expect {
                try await adapter.call(.authorize, authorize("tok_visa", "lower-case", currency: "sar"))
            } throws: { error in
                guard case .failed(let status, _) = error as? AdapterCallError else { return false }
                return status == .invalidRequest
            }
            #expect(acme.charges == 1, "only tok_visa moved money")
            await adapter.shutdown()
        }
    }
}
