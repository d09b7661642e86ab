import ArgumentParser
import CheckoutEngine
import PaymentGateway
import Foundation
import GatewayPayloads

/// `gateway keys`: the API keys merchants' backends present
/// (`Authorization: Bearer gk_…`), kept in the store under `--data` as hashes.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, list and revoke the API keys of the checkout API (kept as hashes under --data).",
        discussion: """
            A key names its mode (gk_test_… or gk_live_…) and sees only sessions and payments of that mode. \
            Its secret is printed once, by create; the gateway keeps only its SHA-256. A running server refuses \
            a revoked key within a second.
            """,
        subcommands: [Create.self, List.self, Revoke.self],
        defaultSubcommand: List.self)

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a key and print its secret (once: it is not kept).")
        @OptionGroup var host: HostOptions
        @Option(help: "test or live: the mode of every session the key opens, and the only mode it sees.") var mode: PaymentMode
        @Option(help: "What the key is for (shown by list).") var name: String?
        @Flag(help: "Print the key as JSON (with its secret).") var json = false

        func validate() throws {
            if let name, name.isEmpty || name.count > 100 || name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw ValidationError("--name must be 1 to 100 characters with no control characters")
            }
        }

        func run() async throws {
            let issued = try await HostSetup.withKeys(host) { try await $0.issue(mode: mode, name: name) }
            if json {
                var w = JSONWriter()
                w.beginObject()
                w.member("id", issued.record.id)
                w.member("mode", issued.record.mode.rawValue)
                w.member("name", issued.record.name)
                w.member("secret", issued.secret)
                w.endObject()
                print(String(decoding: w.bytes, as: UTF8.self))
                return
            }
            print("created \(mode.rawValue) key \(issued.record.id)\(name.map { " (\($0))" } ?? "")")
            print(issued.secret)
            print("This is the only time the secret is shown: the gateway keeps only its hash. Send it as Authorization: Bearer <key>.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every key: id, name, mode, prefix, created, revoked (never a secret).")
        @OptionGroup var host: HostOptions
        @Flag(help: "Print a JSON array.") var json = false

        func run() async throws {
            let records = try await HostSetup.withKeys(host) { try await $0.list() }
            if json {
                var w = JSONWriter()
                w.beginArray()
                for r in records {
                    w.beginObject()
                    w.member("id", r.id)
                    w.member("name", r.name)
                    w.member("mode", r.mode.rawValue)
                    w.member("prefix", r.prefix)
                    // Wire dates (RFC 3339, UTC, milliseconds), as the API and `gateway held --json` give them.
                    w.member("createdAt", date: r.createdAt)
                    w.member("revokedAt", date: r.revokedAt)
                    w.endObject()
                }
                w.endArray()
                print(String(decoding: w.bytes, as: UTF8.self))
                return
            }
            guard !records.isEmpty else {
                print("no API keys (gateway keys create --mode test, or start gateway serve once)")
                return
            }
            let header = ["ID", "NAME", "MODE", "PREFIX", "CREATED", "REVOKED"]
            let rows = records.map { [$0.id, $0.name ?? "-", $0.mode.rawValue, $0.prefix, WireDate.string($0.createdAt), $0.revokedAt.map(WireDate.string) ?? "-"] }
            let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max()! }
            for row in [header] + rows {
                print(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                    .trimmingCharacters(in: .whitespaces))
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key: every request with it is refused (401) from then on.")
        @OptionGroup var host: HostOptions
        @Argument(help: "The key's id (key_…, from gateway keys list).") var id: String

        func run() async throws {
            guard let record = try await HostSetup.withKeys(host, { try await $0.revoke(id: id) }) else {
                throw ValidationError("no API key with id \(id) (see gateway keys list)")
            }
            print("revoked \(record.mode.rawValue) key \(record.id) (\(record.prefix)) as of \(WireDate.string(record.revokedAt ?? Date()))")
        }
    }
}
