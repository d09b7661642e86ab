import ArgumentParser
import Foundation
import GatewayPayloads
import PaymentGateway
import PluginHost

struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers",
        abstract: "List, enable, disable and pin the providers of a manifests folder.",
        subcommands: [List.self, Enable.self, Disable.self, Pin.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every manifest found, with its mode (test or live), state (loaded, disabled or refused) and digest.",
            discussion: """
                DIGEST is the start of the SHA-256 of each manifest file; the last line, "manifests digest", \
                is the digest of them all (the same as the X-Manifests-Digest of GET /v1/providers): a host \
                whose digest differs from the others' has not applied the same manifests. With --json, that \
                line goes to standard error, in full.
                """)
        @OptionGroup var host: HostOptions
        @Flag(name: .long, help: "Print a JSON array (each provider's manifestSha256 in full).") var json = false
        @Flag(name: .long, help: "Log what the loader does to standard error.") var verbose = false

        func run() async throws {
            HostSetup.bootstrapLogging(verbose: verbose)
            let directory = HostSetup.manifestsURL(host)
            let report: ProviderReport
            do { report = try await PaymentGateway.inspectProviders(manifests: directory, data: URL(fileURLWithPath: host.data, isDirectory: true)) }
            catch { throw ValidationError("cannot read the manifests folder \(directory.path): \(error.localizedDescription)") }
            let rows = report.providers.map(ProviderRow.init)
            let digest = report.manifestsDigest
            if json {
                var writer = JSONWriter(capacity: 512 * max(rows.count, 1))
                writer.beginArray()
                for row in rows { row.write(to: &writer) }
                writer.endArray()
                print(String(decoding: JSONPretty.indented(writer.bytes), as: UTF8.self))
                // Standard output stays the JSON array scripts already read.
                FileHandle.standardError.write(Data("manifests digest: \(digest)\n".utf8))
            } else {
                print(ProviderRow.table(rows, manifestsDigest: digest))
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set \"enabled\": true in a provider's manifest (atomically).")
        @OptionGroup var host: HostOptions
        @Argument(help: "The provider id.") var id: String
        func run() throws { try ManifestEdits.setMember("enabled", to: "true", provider: id, host: host) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set \"enabled\": false in a provider's manifest (atomically).")
        @OptionGroup var host: HostOptions
        @Argument(help: "The provider id.") var id: String
        func run() throws { try ManifestEdits.setMember("enabled", to: "false", provider: id, host: host) }
    }

    struct Pin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write the sha256 of the library a provider's manifest resolves to into that manifest.")
        @OptionGroup var host: HostOptions
        @Argument(help: "The provider id.") var id: String
        func run() throws {
            let (url, manifest) = try ManifestEdits.find(provider: id, host: host)
            let library: URL
            switch PluginSearchPath().resolve(manifest.library, manifestDirectory: url.deletingLastPathComponent()) {
            case .success(let found): library = found
            case .failure(let failure): throw ValidationError("\(url.path): \(failure)")
            }
            let digest = LibraryStore.sha256Hex(try Data(contentsOf: library))
            try ManifestEdits.setMember("sha256", to: "\"\(digest)\"", provider: id, host: host)
            print("pinned \(id) to sha256 \(digest) (\(library.path))")
        }
    }
}

/// One line of `gateway providers`, from its ``ProviderStatus``.
struct ProviderRow {
    var id: String?
    var version: String?
    /// `test` or `live`; nil when the manifest is not valid (nothing is loaded).
    var mode: String?
    var enabled: Bool?
    var state: String
    var reason: String?
    var reasonKind: String?
    var methods: [String]
    var manifest: String
    /// SHA-256 of the manifest file's bytes.
    var manifestSha256: String?
    /// `in-process` or `process`.
    var isolation: String?
    /// For an isolated adapter: `confined`, or `not confined: <reason>`.
    var network: String?
    /// For an isolated adapter: each sandbox layer, in force or not and why (as /proc shows them).
    var sandbox: [ProviderStatus.Sandbox.Layer]?
    /// For an isolated adapter: its cgroup leaf and limits, or why it has none.
    var resources: ProviderStatus.Sandbox.Resources?
    /// For an adapter in the host's process: why it runs there (the
    /// operator's `"isolation": "in-process"`, or an older file format's default).
    var trusted: String?
    /// ready, restarting, quarantined (a loaded adapter only).
    var health: String?
    /// For the table: the sandbox in words.
    private var sandboxSummary: String?

    init(_ status: ProviderStatus) {
        id = status.id
        version = status.version
        mode = status.mode?.rawValue
        enabled = status.enabled
        state = status.state.rawValue
        reason = status.failure?.description
        reasonKind = status.failure?.kind
        methods = status.methods
        manifest = status.manifestPath
        manifestSha256 = status.manifestSha256
        isolation = status.isolation
        network = status.sandbox.map { $0.networkConfined ? "confined" : "not confined: \($0.networkReason ?? "unknown reason")" }
        sandbox = status.sandbox?.layers
        resources = status.sandbox?.resources
        sandboxSummary = status.sandbox?.summary
        trusted = status.trustedBecause
        health = status.health?.name
    }

    /// The row as `--json` prints it: every member but the table's
    /// `sandboxSummary`, a nil one left out.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("id", id)
        w.member("version", version)
        w.member("mode", mode)
        if let enabled { w.member("enabled", enabled) }
        w.member("state", state)
        w.member("reason", reason)
        w.member("reasonKind", reasonKind)
        w.key("methods")
        w.beginArray()
        for method in methods { w.string(method) }
        w.endArray()
        w.member("manifest", manifest)
        w.member("manifestSha256", manifestSha256)
        w.member("isolation", isolation)
        w.member("network", network)
        if let sandbox {
            w.key("sandbox")
            w.beginArray()
            for layer in sandbox { layer.write(to: &w) }
            w.endArray()
        }
        if let resources {
            w.key("resources")
            resources.write(to: &w)
        }
        w.member("trusted", trusted)
        w.member("health", health)
        w.endObject()
    }

    /// The table, then a line per isolated adapter and per refusal, then the
    /// host's `manifests digest`; digests show their first 12 hex digits.
    static func table(_ rows: [ProviderRow], manifestsDigest: String) -> String {
        let header = ["ID", "VERSION", "MODE", "ENABLED", "STATE", "ISOLATION", "DIGEST", "METHODS"]
        let cells: [[String]] = rows.map { row -> [String] in
            let digest: String = row.manifestSha256.map { String($0.prefix(12)) } ?? "?"
            return [row.id ?? "?", row.version ?? "?", row.mode ?? "?", row.enabled.map { $0 ? "yes" : "no" } ?? "?",
                    row.state + (row.health.map { $0 == "ready" ? "" : " (\($0))" } ?? ""),
                    row.isolation ?? "?", digest, row.methods.joined(separator: ",")]
        }
        let widths = header.indices.map { column in ([header] + cells).map { $0[column].count }.max()! }
        func line(_ values: [String]) -> String {
            zip(values, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        var out = [line(header)] + cells.map(line)
        for row in rows {
            if let summary = row.sandboxSummary {
                out.append("\(row.id ?? "?") runs in its own process, sandbox: \(summary)")
            } else if let trusted = row.trusted, row.state == "loaded" {
                out.append("\(row.id ?? "?") runs in the host's process, trusted with everything the host holds (\(trusted))")
            }
        }
        for row in rows where row.reason != nil {
            out.append("\(row.id ?? (row.manifest as NSString).lastPathComponent) refused: \(row.reason!)")
        }
        if rows.isEmpty { out.append("(no manifests)") }
        out.append("manifests digest: \(manifestsDigest.prefix(12))")
        return out.joined(separator: "\n")
    }
}
