import ArgumentParser
import CheckoutEngine
import Foundation
import GatewayPayloads
import MerchantWebhooks

/// `gateway webhooks`: merchants' webhook endpoints (docs/webhooks.md), kept
/// in the store under `--data` (or `--database`), their signing secrets
/// sealed under `<data>/webhook-secrets.key`. A running server picks changes
/// up within a second.
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Register, list, rotate, disable, enable, replay and remove merchants' webhook endpoints.",
        discussion: """
            An endpoint receives the events of one mode (test or live), signed as Standard Webhooks define \
            (webhook-id, webhook-timestamp, webhook-signature). Its secret is printed once, by add and rotate.
            """,
        subcommands: [Add.self, List.self, Remove.self, Rotate.self, Enable.self, Disable.self, Replay.self],
        defaultSubcommand: List.self)

    /// The endpoints' service over the options' store, closed after `body`.
    static func withEndpoints<T>(_ host: HostOptions, allowPrivate: Bool = false, _ body: (WebhookEndpoints) async throws -> T) async throws -> T {
        let store = try await HostSetup.store(host)
        guard let outbox = store as? any WebhookStore & CheckoutStore else {
            await store.close()
            throw ValidationError("this store keeps no webhook endpoints")
        }
        let result: Result<T, any Error>
        do {
            let key = try SecretSealer.loadKey(at: URL(fileURLWithPath: host.data, isDirectory: true).appendingPathComponent("webhook-secrets.key"))
            let endpoints = WebhookEndpoints(store: outbox, sealer: try SecretSealer(key: key), allowPrivate: allowPrivate)
            result = .success(try await body(endpoints))
        } catch let error as WebhookEndpointError {
            result = .failure(ValidationError(error.message))
        } catch let conflict as WebhookEndpointConflict {
            result = .failure(ValidationError(conflict.description))
        } catch {
            result = .failure(error)
        }
        await store.close()
        return try result.get()
    }

    static func printJSON(_ endpoint: WebhookEndpointRecord, secret: WebhookSecret? = nil) {
        print(String(decoding: WebhookEndpointJSON.bytes(endpoint, secret: secret), as: UTF8.self))
    }

    static func line(_ endpoint: WebhookEndpointRecord) -> String {
        "\(endpoint.id)  \(endpoint.mode.rawValue)  \(endpoint.state.rawValue)  \(endpoint.signing.rawValue)  \(endpoint.url)"
            + "  \(endpoint.types.map { $0.joined(separator: ",") } ?? "all events")\(endpoint.description.map { "  (\($0))" } ?? "")"
    }

    static func shown(_ created: WebhookEndpoints.Created, verb: String) {
        print("\(verb) \(line(created.endpoint))")
        if let secret = WebhookEndpoints.shownSecret(created.secret) {
            print(secret)
            print("This is the only time the secret is shown: keep it where your receiver reads it.")
        }
        if let key = created.secret.publicKeyText {
            print("public key (verify v1a signatures with it; the private key never leaves the gateway): \(key)")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register an endpoint and print its signing secret (once).")
        @OptionGroup var host: HostOptions
        @Option(help: "The https URL deliveries are POSTed to.") var url: String
        @Option(help: "test or live: the only mode of events it receives.") var mode: PaymentMode
        @Option(help: "The event types it receives, comma separated (default: all).") var types: String?
        @Option(help: "What it is for (shown by list).") var description: String?
        @Option(help: "v1 (HMAC-SHA256, default) or v1a (Ed25519: the receiver verifies with a public key).") var signing: String = "v1"
        @Flag(name: .customLong("allow-private-webhooks"), help: "Allow a loopback or private address (local development).") var allowPrivate = false
        @Flag(help: "Print the endpoint as JSON (with its secret).") var json = false

        func run() async throws {
            guard let scheme = WebhookSigning(rawValue: signing) else { throw ValidationError("--signing must be v1 or v1a (got \(signing))") }
            let created = try await WebhooksCommand.withEndpoints(host, allowPrivate: allowPrivate) {
                try await $0.create(url: url, mode: mode, types: types.map(WebhookTypes.list), description: description, signing: scheme)
            }
            if json { WebhooksCommand.printJSON(created.endpoint, secret: created.secret) } else { WebhooksCommand.shown(created, verb: "registered") }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every endpoint (never a secret).")
        @OptionGroup var host: HostOptions
        @Option(help: "Only this mode's endpoints.") var mode: PaymentMode?
        @Flag(help: "Print a JSON array.") var json = false

        func run() async throws {
            let list = try await WebhooksCommand.withEndpoints(host) { try await $0.list(mode: mode) }
            if json {
                var w = JSONWriter()
                w.beginArray()
                for endpoint in list { WebhookEndpointJSON.write(endpoint, to: &w) }
                w.endArray()
                print(String(decoding: w.bytes, as: UTF8.self))
                return
            }
            if list.isEmpty { print("no webhook endpoints (gateway webhooks add --url … --mode test)") }
            for endpoint in list { print(WebhooksCommand.line(endpoint)) }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an endpoint: it receives nothing more.")
        @OptionGroup var host: HostOptions
        @Argument(help: "The endpoint's id (we_…).") var id: String

        func run() async throws {
            guard let removed = try await WebhooksCommand.withEndpoints(host, { try await $0.remove(id, mode: nil) }) else {
                throw ValidationError("no webhook endpoint \(id)")
            }
            print("removed \(WebhooksCommand.line(removed))")
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give an endpoint a new secret (printed once); the old one keeps signing beside it for the overlap.")
        @OptionGroup var host: HostOptions
        @Argument(help: "The endpoint's id (we_…).") var id: String
        @Option(help: "Seconds the old secret keeps signing (default 86400, at most 604800).") var overlap: Int = 86_400
        @Flag(help: "Print the endpoint as JSON (with its new secret).") var json = false

        func run() async throws {
            guard let rotated = try await WebhooksCommand.withEndpoints(host, { try await $0.rotate(id, mode: nil, overlap: .seconds(overlap)) }) else {
                throw ValidationError("no webhook endpoint \(id)")
            }
            if json { WebhooksCommand.printJSON(rotated.endpoint, secret: rotated.secret) } else { WebhooksCommand.shown(rotated, verb: "rotated") }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable an endpoint: its kept events are delivered, in order.")
        @OptionGroup var host: HostOptions
        @Argument(help: "The endpoint's id (we_…).") var id: String

        func run() async throws {
            guard let changed = try await WebhooksCommand.withEndpoints(host, { try await $0.setEnabled(id, mode: nil, true) }) else {
                throw ValidationError("no webhook endpoint \(id)")
            }
            print("enabled \(WebhooksCommand.line(changed))")
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an endpoint: its events are kept, not sent, until it is enabled.")
        @OptionGroup var host: HostOptions
        @Argument(help: "The endpoint's id (we_…).") var id: String
        @Option(help: "Why (shown by list and the API).") var reason: String?

        func run() async throws {
            guard let changed = try await WebhooksCommand.withEndpoints(host, { try await $0.setEnabled(id, mode: nil, false, reason: reason) }) else {
                throw ValidationError("no webhook endpoint \(id)")
            }
            print("disabled \(WebhooksCommand.line(changed))")
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send an endpoint's events again, in order: those after --after up to --through (default: all, within the retention).")
        @OptionGroup var host: HostOptions
        @Argument(help: "The endpoint's id (we_…).") var id: String
        @Option(help: "A feed cursor (cur_…): replay the events after it.") var after: String?
        @Option(help: "A feed cursor (cur_…): replay up to and including it.") var through: String?

        func run() async throws {
            func cursor(_ text: String?, _ name: String) throws -> EventCursor? {
                guard let text else { return nil }
                guard let cursor = EventCursor(text: text) else { throw ValidationError("--\(name) must be a feed cursor (cur_…)") }
                return cursor
            }
            let (from, to) = (try cursor(after, "after") ?? .start, try cursor(through, "through"))
            guard let count = try await WebhooksCommand.withEndpoints(host, { try await $0.replay(id, mode: nil, after: from, through: to) }) else {
                throw ValidationError("no webhook endpoint \(id)")
            }
            print("\(count) deliveries of \(id) queued again")
        }
    }
}
