import CGatewayABI
import Foundation
@testable import GatewayAdapterSDK
import Testing

/// The SDK's provider client, what it decides before anything is sent:
/// the URL a path or a provider's link becomes, how text is encoded, and the
/// configuration's one check of `base_url` and `request_timeout_ms`.
@Suite struct ProviderHTTPClientTests {
    /// A host table with no services: nothing here sends.
    nonisolated(unsafe) static let table: UnsafeMutablePointer<gw_host_api> = {
        let table = UnsafeMutablePointer<gw_host_api>.allocate(capacity: 1)
        table.initialize(to: gw_host_api())
        return table
    }()

    func client(_ base: String) -> ProviderHTTPClient {
        ProviderHTTPClient(host: AdapterHost(table: Self.table), provider: "Acme", baseURL: base, timeoutMilliseconds: 1000,
                           authorization: .bearer(secret: "api_key"))
    }

    @Test func aPathIsJoinedAndALinkIsFollowedOnTheBaseURLsOriginOnly() throws {
        let client = client("https://api.acme.example/v2/")
        #expect(client.baseURL == "https://api.acme.example/v2")
        #expect(try client.target("/payments/1") == "https://api.acme.example/v2/payments/1")
        #expect(try client.target("https://api.acme.example/other/7") == "https://api.acme.example/other/7")
        for elsewhere in ["https://evil.example/v2/payments", "http://api.acme.example/v2/payments", "https://api.acme.example:8443/v2",
                          "https://api.acme.example@evil.example/x", "@evil.example/x", ".evil.example/x", "payments/1", ""] {
            #expect(throws: AdapterError.self, "\(elsewhere)") { try client.target(elsewhere) }
        }
    }

    /// A secret with no value when a request is made (a rotated file left
    /// empty): nothing is sent, and the call completes with the header's
    /// status for it, GW_E_NOT_FOUND (not GW_E_INTERNAL, which says the
    /// adapter is broken), or unknown once an earlier request may have left.
    @Test func aSecretWithNoValueFailsBeforeSendingWithNotFound() async throws {
        let client = client("https://api.acme.example")
        await #expect {
            _ = try await client.send("GET", "/v1/charges/1")
        } throws: { error in
            guard let missing = error as? SecretUnavailable else { return false }
            return missing.names == ["api_key"] && missing.message.contains("nothing was sent to Acme")
        }
        let missing = SecretUnavailable(names: ["api_key"], message: "the api_key secret has no value")
        #expect(ReplyEncoding.failure(missing, requests: 0).0 == GW_E_NOT_FOUND)
        #expect(gw_status_proves_nothing_sent(GW_E_NOT_FOUND) == 1)
        #expect(ReplyEncoding.failure(missing, requests: 1).0 == GW_E_OUTCOME_UNKNOWN)
    }

    @Test func textIsPercentEncodedOutsideASCIIsUnreservedCharacters() {
        #expect(ProviderHTTPClient.pathSegment("ord-1_2.3~x") == "ord-1_2.3~x")
        #expect(ProviderHTTPClient.pathSegment("a/b?c#d e") == "a%2Fb%3Fc%23d%20e")
        #expect(ProviderHTTPClient.pathSegment("طلب-é") == "%D8%B7%D9%84%D8%A8-%C3%A9")
        #expect(ProviderHTTPClient.formEncoded([("entityId", "8a8&9"), ("note", "x=y")]) == "entityId=8a8%269&note=x%3Dy")
    }

    @Test func theConfigurationsBaseURLAndTimeoutHaveOneCheck() throws {
        let good = AdapterConfiguration(json: ["base_url": .string("https://api.acme.example/"), "request_timeout_ms": .integer(2500)])
        #expect(try good.providerURL(provider: "Acme", example: "https://api.acme.example") == "https://api.acme.example")
        #expect(try good.requestTimeoutMilliseconds() == 2500)
        #expect(try AdapterConfiguration(json: [:]).requestTimeoutMilliseconds() == 10_000)
        for (json, key) in [([String: JSONValue](), "config.base_url"), (["base_url": .string("api.acme.example")], "config.base_url"),
                            (["base_url": .string("ftp://api.acme.example")], "config.base_url")] {
            #expect {
                try AdapterConfiguration(json: json).providerURL(provider: "Acme", example: "https://api.acme.example")
            } throws: { error in
                guard case AdapterError.invalidConfiguration(let message) = error else { return false }
                return message.contains(key)
            }
        }
        // A whole number written with a fraction is a whole number (JSON Schema's integer).
        #expect(try AdapterConfiguration(json: ["request_timeout_ms": .number(2500.0)]).requestTimeoutMilliseconds() == 2500)
        for timeout: JSONValue in [.integer(99), .integer(120_001), .number(1.5), .string("2500")] {
            #expect(throws: AdapterError.self, "\(timeout)") {
                try AdapterConfiguration(json: ["request_timeout_ms": timeout]).requestTimeoutMilliseconds()
            }
        }
    }
}

/// What a thrown error completes with, before and after a request left
/// (the header's rule, and its one exception for a provider's refusal of a
/// reused idempotency key).
@Suite struct ReplyEncodingTests {
    @Test func onlyTheProvidersKeyConflictStaysInvalidRequestOnceARequestLeft() {
        #expect(ReplyEncoding.failure(AdapterError.invalidRequest("x"), requests: 0).0 == GW_E_INVALID_REQUEST)
        #expect(ReplyEncoding.failure(AdapterError.invalidRequest("x"), requests: 1).0 == GW_E_OUTCOME_UNKNOWN)
        #expect(ReplyEncoding.failure(AdapterError.internal("x"), requests: 1).0 == GW_E_OUTCOME_UNKNOWN)
        #expect(ReplyEncoding.failure(AdapterError.idempotencyConflict("reused"), requests: 0).0 == GW_E_INVALID_REQUEST)
        #expect(ReplyEncoding.failure(AdapterError.idempotencyConflict("reused"), requests: 2).0 == GW_E_INVALID_REQUEST)
        let document = ReplyEncoding.failure(AdapterError.idempotencyConflict("the key was used for another amount"), requests: 1).1
        #expect(String(decoding: document, as: UTF8.self).contains("the key was used for another amount"))
    }
}
