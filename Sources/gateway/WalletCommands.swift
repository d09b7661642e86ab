import ArgumentParser
import Crypto
import Foundation
import GatewayPayloads
import WalletTokens
import X509

/// `gateway applepay decrypt`: checks and opens an Apple Pay token with a
/// merchant's own payment processing certificate and key, as the host's
/// wallet service does for adapters (docs/wallet-tokens.md). The account
/// number is printed masked: only an adapter that asks the host gets it whole.
struct ApplePayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "applepay", abstract: "Apple Pay tokens (EC_v1).", subcommands: [Decrypt.self])

    struct Decrypt: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify an Apple Pay token's signature and chain, then decrypt it with the merchant's key; print its payment data (account number masked).")
        @Option(help: "The token: a PKPaymentToken's JSON, or its paymentData alone.") var token: String
        @Option(name: .customLong("merchant-cert"), help: "The merchant's payment processing certificate (PEM).") var merchantCert: String
        @Option(name: .customLong("merchant-key"), help: "Its private key (PEM, PKCS #8 or SEC 1).") var merchantKey: String
        @Option(help: "\"Now\", to replay a recorded token (ISO 8601, e.g. 2026-11-24T04:44:30Z); default: the clock.") var at: String?
        @Option(help: "Seconds the signing time may lie from now, either way.") var window: Int = 300
        @Option(name: .customLong("trust-root"), help: "Trust this root (PEM) instead of Apple Root CA - G3 (tests, test tokens).") var trustRoot: String?
        @Flag(help: "Print the outcome as one JSON object, errors included.") var json = false

        func validate() throws {
            if let at, WalletCommandSupport.date(at) == nil { throw ValidationError("--at must be an ISO 8601 time such as 2026-11-24T04:44:30Z, not \(at)") }
            if window < 0 || window > 7 * 86_400 { throw ValidationError("--window must be 0 to 604800 seconds") }
        }

        func run() async throws {
            let now = at.flatMap(WalletCommandSupport.date) ?? Date()
            do {
                let parsed = try ApplePayToken(json: try WalletCommandSupport.read(token, "--token"))
                let merchant = try ApplePayMerchant(certificatePEM: String(decoding: try WalletCommandSupport.read(merchantCert, "--merchant-cert"), as: UTF8.self),
                                                    privateKeyPEM: String(decoding: try WalletCommandSupport.read(merchantKey, "--merchant-key"), as: UTF8.self))
                var roots = [AppleRootCA.g3]
                if let trustRoot {
                    guard let root = try? Certificate(pemEncoded: String(decoding: try WalletCommandSupport.read(trustRoot, "--trust-root"), as: UTF8.self)) else {
                        throw WalletCommandSupport.Failure(code: "invalid_argument", message: "--trust-root \(trustRoot) is not a PEM certificate")
                    }
                    roots = [root]
                }
                let data = try await ApplePayDecryptor(trustRoots: roots, signingTimeWindow: TimeInterval(window)).decrypt(parsed, for: merchant, now: now)
                WalletCommandSupport.printOutcome(data.jsonValue(revealingAccountNumber: false), json: json)
            } catch let error as WalletTokenError {
                throw WalletCommandSupport.fail(code: error.code, message: error.description, json: json)
            } catch let failure as WalletCommandSupport.Failure {
                throw WalletCommandSupport.fail(code: failure.code, message: failure.message, json: json)
            }
        }
    }
}

/// `gateway googlepay decrypt`: checks and opens a Google Pay `ECv2` token
/// (a direct integration's) with the merchant's key, against Google's root
/// signing keys given as a file (keys.json; the host fetches nothing).
struct GooglePayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "googlepay", abstract: "Google Pay tokens (ECv2, direct integration).", subcommands: [Decrypt.self])

    struct Decrypt: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify a Google Pay token's signing key chain and signature, then decrypt it with the merchant's key; print its payment data (card number masked).")
        @Option(help: "The token: paymentMethodData.tokenizationData.token, as JSON.") var token: String
        @Option(name: .customLong("merchant-key"), help: "The merchant's private key (PEM, PKCS #8 or SEC 1).") var merchantKey: String
        @Option(name: .customLong("recipient-id"), help: "merchant:<your merchant id> (what the message signature covers).") var recipientID: String
        @Option(name: .customLong("root-keys"), help: "Google's root signing keys (keys.json, kept current by you).") var rootKeys: String
        @Option(help: "\"Now\", to replay a recorded token (ISO 8601); default: the clock.") var at: String?
        @Flag(help: "Print the outcome as one JSON object, errors included.") var json = false

        func validate() throws {
            if let at, WalletCommandSupport.date(at) == nil { throw ValidationError("--at must be an ISO 8601 time such as 2026-12-01T00:00:00Z, not \(at)") }
        }

        func run() async throws {
            let now = at.flatMap(WalletCommandSupport.date) ?? Date()
            do {
                let roots = try GooglePaySigningKey.keys(fromJSON: try WalletCommandSupport.read(rootKeys, "--root-keys"))
                let keyPEM = String(decoding: try WalletCommandSupport.read(merchantKey, "--merchant-key"), as: UTF8.self)
                guard let key = try? P256.KeyAgreement.PrivateKey(pemRepresentation: keyPEM) else {
                    throw WalletCommandSupport.Failure(code: "merchant_identity", message: "--merchant-key \(merchantKey) is not a P-256 private key in PEM")
                }
                let data = try GooglePayDecryptor(rootKeys: roots, recipientId: recipientID, merchantKeys: [key])
                    .decrypt(try WalletCommandSupport.read(token, "--token"), now: now)
                WalletCommandSupport.printOutcome(data.jsonValue(revealingAccountNumber: false), json: json)
            } catch let error as WalletTokenError {
                throw WalletCommandSupport.fail(code: error.code, message: error.description, json: json)
            } catch let failure as WalletCommandSupport.Failure {
                throw WalletCommandSupport.fail(code: failure.code, message: failure.message, json: json)
            }
        }
    }
}

/// What the wallet commands share: reading files, times, printing.
enum WalletCommandSupport {
    struct Failure: Error {
        var code: String
        var message: String
    }

    /// An RFC 3339 time (`--at`), read as every wire date is (``WireDate``).
    static func date(_ text: String) -> Date? { WireDate.parse(text) }

    static func read(_ path: String, _ option: String) throws -> Data {
        do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw Failure(code: "invalid_argument", message: "\(option) \(path) cannot be read")
        }
    }

    /// The payment data (or, with `--json`, the outcome around it), indented,
    /// object members sorted by name.
    static func printOutcome(_ paymentData: JSONValue, json: Bool) {
        let value: JSONValue = json ? .object(["ok": .bool(true), "paymentData": paymentData]) : paymentData
        print(String(decoding: JSONPretty.indented(value.jsonBytes()), as: UTF8.self))
    }

    /// Prints the failure (to standard error, or as JSON) and answers the exit code: 1.
    static func fail(code: String, message: String, json: Bool) -> ExitCode {
        if json {
            // One line: compact, members sorted by name.
            let value: JSONValue = .object(["ok": .bool(false), "error": .object(["code": .string(code), "message": .string(message)])])
            print(String(decoding: value.jsonBytes(), as: UTF8.self))
        } else {
            FileHandle.standardError.write(Data("gateway: \(code): \(message)\n".utf8))
        }
        return ExitCode(1)
    }
}
