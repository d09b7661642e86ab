import Foundation
import Testing
import TestSupport

/// `gateway applepay decrypt` and `gateway googlepay decrypt`, run as a merchant's engineer would: a recorded
/// token replayed with `--at`, every refusal a typed code, the account
/// number never printed whole.
@Suite("gateway applepay and googlepay decrypt")
struct WalletCommandTests {
    /// The recorded tokens of WalletTokensTests, which test the same decryption as a library.
    static let fixtures = BuildProducts.repository.appendingPathComponent("Tests/WalletTokensTests/Fixtures")
    static let folder = fixtures.appendingPathComponent("applepay").path
    static var signedAt: String {
        (try? String(contentsOfFile: folder + "/signed-at.txt", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? ""
    }

    func decrypt(_ extra: [String], merchantKey: String = "merchant-key.pem") async throws -> ProcessResult {
        try await runProcessOffThePool(BuildProducts.gateway.path, ["applepay", "decrypt", "--token", Self.folder + "/token.json",
                                                    "--merchant-cert", Self.folder + "/merchant-certificate.pem",
                                                    "--merchant-key", Self.folder + "/" + merchantKey] + extra)
    }

    @Test func aRecordedTokenDecryptsWhenReplayedAtItsSigningTime() async throws {
        let result = try await decrypt(["--trust-root", Self.folder + "/root.pem", "--at", Self.signedAt])
        #expect(result.status == 0, "\(result.output)")
        let data = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.output)")
        #expect(data["applicationPrimaryAccountNumber"] as? String == "************1111" && data["transactionAmount"] as? Int == 2500)
        #expect(!result.output.contains("4111111111111111"))
    }

    @Test func aDayLaterTheSameTokenIsOutsideTheWindow() async throws {
        let later = try #require(ISO8601DateFormatter().date(from: Self.signedAt)).addingTimeInterval(86_400)
        let result = try await decrypt(["--trust-root", Self.folder + "/root.pem", "--at", ISO8601DateFormatter().string(from: later), "--json"])
        #expect(result.status == 1)
        #expect(result.stdout.contains(#""code":"signing_time_outside_window""#), "\(result.output)")
    }

    @Test func underApplesRootATestTokenIsRefusedAsTheWrongChain() async throws {
        let result = try await decrypt(["--at", Self.signedAt])
        #expect(result.status == 1 && result.stderr.contains("wrong_chain"), "\(result.output)")
    }

    @Test func badArgumentsSayWhichAndWhy() async throws {
        let badTime = try await decrypt(["--at", "yesterday"])
        #expect(badTime.status != 0 && badTime.stderr.contains("--at"), "\(badTime.output)")
        let missing = try await decrypt(["--at", Self.signedAt], merchantKey: "no-such-key.pem")
        #expect(missing.status == 1 && missing.stderr.contains("--merchant-key"), "\(missing.output)")
        let wrongKey = try await decrypt(["--at", Self.signedAt], merchantKey: "root.pem")
        #expect(wrongKey.status == 1 && wrongKey.stderr.contains("merchant_identity"), "\(wrongKey.output)")
    }

    @Test func aRecordedGooglePayTokenDecryptsForItsRecipientAndNoOther() async throws {
        let folder = Self.fixtures.appendingPathComponent("googlepay").path
        func run(_ recipient: String, at: String) async throws -> ProcessResult {
            try await runProcessOffThePool(BuildProducts.gateway.path, ["googlepay", "decrypt", "--token", folder + "/token.json", "--merchant-key", folder + "/merchant-private-key.pem",
                                                        "--recipient-id", recipient, "--root-keys", folder + "/root-keys.json", "--at", at])
        }
        let opened = try await run("merchant:12345678901234567890", at: "2026-12-01T00:00:00Z")
        #expect(opened.status == 0 && opened.stdout.contains(#""pan": "************1111""#) && !opened.output.contains("4111111111111111"), "\(opened.output)")
        let other = try await run("merchant:1", at: "2026-12-01T00:00:00Z")
        #expect(other.status == 1 && other.stderr.contains("bad_signature"), "\(other.output)")
        let late = try await run("merchant:12345678901234567890", at: "2027-02-01T00:00:00Z")
        #expect(late.status == 1 && late.stderr.contains("expired"), "\(late.output)")
    }
}
