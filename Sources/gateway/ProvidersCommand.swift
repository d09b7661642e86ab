import ArgumentParser
import Foundation
import PaymentGateway
import PluginHost

struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers",
        abstract: "List, enable, disable and pin the providers of a manifests folder.",
        subcommands: [List.self, Enable.self, Disable.self, Pin.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every manifest found, with its mode (test or live) and state (loaded, disabled or refused).")
        @OptionGroup var host: HostOptions
        @Flag(name: .long, help: "Print a JSON array.") var json = false
        @Flag(name: .long, help: "Log what the loader does to standard error.") var verbose = false

        func run() async throws {
            let loader = HostSetup.loader(host, verbose: verbose)
            let directory = HostSetup.manifestsURL(host)
            let records: [ProviderRecord]
            do { records = try await ManifestReloader.onLoadingQueue { try ProviderRegistry.load(directory: directory, loader: loader) } }
            catch { throw ValidationError("cannot read the manifests folder \(directory.path): \(error.localizedDescription)") }
            let rows = records.map(ProviderRow.init)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(rows), as: UTF8.self))
            } else {
                print(ProviderRow.table(rows))
            }
            for record in records { await record.adapter?.shutdown(grace: .seconds(1)) }
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

/// One line of `gateway providers`.
struct ProviderRow: Encodable {
    var id: String?
    var version: String?
    /// `test` or `live`; nil when the manifest is not valid (nothing is loaded).
    var mode: String?
    var enabled: Bool?
    var state: ProviderRecord.State
    var reason: String?
    var reasonKind: String?
    var methods: [String]
    var manifest: String
    /// `in-process` or `process`.
    var isolation: String?
    /// For an isolated adapter: `confined`, or `not confined: <reason>`.
    var network: String?
    /// ready, restarting, quarantined (a loaded adapter only).
    var health: String?

    init(_ record: ProviderRecord) {
        id = record.id
        version = record.version
        mode = record.manifest?.mode.rawValue
        enabled = record.enabled
        state = record.state
        reason = record.failure?.description
        reasonKind = record.failure?.kind
        methods = record.methods
        manifest = record.manifestPath
        isolation = record.manifest?.isolation.rawValue
        network = record.adapter?.networkConfinement?.description
        health = record.adapter.map { $0.health.name }
    }

    static func table(_ rows: [ProviderRow]) -> String {
        let header = ["ID", "VERSION", "MODE", "ENABLED", "STATE", "ISOLATION", "METHODS"]
        let cells = rows.map { [$0.id ?? "?", $0.version ?? "?", $0.mode ?? "?", $0.enabled.map { $0 ? "yes" : "no" } ?? "?",
                                $0.state.rawValue + ($0.health.map { $0 == "ready" ? "" : " (\($0))" } ?? ""),
                                $0.isolation ?? "?", $0.methods.joined(separator: ",")] }
        let widths = header.indices.map { column in ([header] + cells).map { $0[column].count }.max()! }
        func line(_ values: [String]) -> String {
            zip(values, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        var out = [line(header)] + cells.map(line)
        for row in rows where row.network != nil {
            out.append("\(row.id ?? "?") runs in its own process, network \(row.network!)")
        }
        for row in rows where row.reason != nil {
            out.append("\(row.id ?? (row.manifest as NSString).lastPathComponent) refused: \(row.reason!)")
        }
        if rows.isEmpty { out.append("(no manifests)") }
        return out.joined(separator: "\n")
    }
}
