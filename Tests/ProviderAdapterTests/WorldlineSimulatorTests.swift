import Foundation
import ProviderSandbox
import Testing

/// The Worldline simulator's own pieces, checked against published vectors
/// and an independent implementation: the signed string (the Java SDK's
/// tests), A256CBC-HS512 (RFC 7518 appendix B.3), and a JWE made by joserfc
/// (Python) to the sandbox key.
@Suite("Worldline simulator: signatures and JWE")
struct WorldlineSimulatorTests {
    @Test func theStringToHashReproducesTheSDKVectors() {
        let get = WorldlineAuthentication.stringToHash(method: "GET", contentType: nil, date: "Fri, 06 Jun 2014 13:39:43 GMT", gcsHeaders: [],
                                                       path: "/v2/1/tokens/2")
        #expect(WorldlineAuthentication.signature(get, secret: "6Kj5HT0MQKC6D8eb7W3lTg71kVKVDSt1") == "vCos01y77soPNJOW6kDCm4Bu5b2darAZ09PP7Wa+jRA=")
        let delete = WorldlineAuthentication.stringToHash(
            method: "DELETE", contentType: "application/json", date: "Fri, 06 Jun 2014 13:39:43 GMT",
            gcsHeaders: [("X-GCS-ServerMetaInfo", "processed header value"), ("X-GCS-ClientMetaInfo", "processed header value"),
                         ("X-GCS-CustomerHeader", "processed header value")],
            path: "/v2/1/tokens/2")
        #expect(WorldlineAuthentication.signature(delete, secret: "secretApiKey") == "jXG/ESTtRWawO4OOyxOrtWcQA8XkrZKeoHeGGIj4jws=")
    }

    @Test func cbcHmacSha512MatchesRFC7518AppendixB3() throws {
        let key = (0..<64).map { UInt8($0) }
        let iv = Self.bytes("1af38c2dc2b96ffdd86694092341bc04")
        let plaintext = Array("A cipher system must not be required to be secret, and it must be able to fall into the hands of the enemy without inconvenience".utf8)
        let aad = Array("The second principle of Auguste Kerckhoffs".utf8)
        let sealed = try WorldlineJWE.cbcHmacSha512(encrypting: plaintext, key: key, iv: iv, aad: aad)
        #expect(sealed.ciphertext == Self.bytes("4affaaadb78c31c5da4b1b590d10ffbd3dd8d5d302423526912da037ecbcc7bd822c301dd67c373bccb584ad3e9279c2e6d12a1374b77f077553df829410446b36ebd97066296ae6427ea75c2e0846a11a09ccf5370dc80bfecbad28c73f09b3a3b75e662a2594410ae496b2e2e6609e31e6e02cc837f053d21f37ff4f51950bbe2638d09dd7a4930930806d0703b1f6"))
        #expect(sealed.tag == Self.bytes("4dd3b4c088a7f45c216839645b2012bf2e6269a8c56a816dbc1b267761955bc5"))
    }

    /// Made once with joserfc 1.6.5 to the sandbox's public key
    /// (`jwe.encrypt_compact({"alg": "RSA-OAEP", "enc": "A256CBC-HS512", "kid": "sandbox-rsa-2025-1"}, payload, key)`).
    static let joserfcFixture = "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZDQkMtSFM1MTIiLCJraWQiOiJzYW5kYm94LXJzYS0yMDI1LTEifQ.Rv2cxiic6Bu0qPq8Q_DMfu5K4pwL4mqXbOVOf9vbnSkK1Od3MKUImLg5c-F2v37BqKKnJslWlUIurqdE61Ae-mH1zMARN1aaNp4s6MOON_L3xNWNxcPblMN1R6-Zgv4RMffXhEp0o-27sW5Y0ywWNdDNBLT5qTNmB9Pg7qYdgRT1l70wqYUgeCURixHHfQPDeVUDAvSt1H1J886fpmK9LLarotjqD3oRVZ_nhowYd7djDGGBWLO0ye35-febDSr0ljOdPhnQsIBnAFGdgFjGoUwWodosBS3rB_hXi5dpsosjW9lufd-q_OSgSiipuFYMqbFhE1aWZGuvYq3iBsqhYQ.HFrsAuSGiLqt1CLJ4Ai8KQ.OkqKWfvJ7UUToV_mQhQpIwyCNhhoWeHjsgt4g81I_yF_jVxERgV3-u9kDEFoVc0veYmD1jqwSVXowr4f28lZlOFxY4yyH2PD2y7x-DnkQugO_nbe-Ov2FuUan_cV6JHbYZ2rQZ_g3Su4jyJ75BALQYpv-rg3UheJ6LTLS9PfWzbOul-3TKmluaHlEKwQogXwfcmmxVm8cCMhL9YtfnNIyMD7O28rX4gcichYZ80WWaP3bEYGHNCJUY6hKfPZKYlMseZQ46NzNMyevhbHs_BlxXTt6mMnJH5zqVkv_jpsBNKUfJD6gOnWaqgR4oan4a8D.XnzKz-59k6AHNW1FKQq4LDyv3n1Pwnh3rIMiuGqhn50"

    @Test func aJWEMadeByJoserfcDecrypts() throws {
        let plaintext = try WorldlineJWE.decrypt(Self.joserfcFixture)
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(plaintext)) as? [String: Any])
        #expect(payload["clientSessionId"] as? String == "fixture-session" && payload["paymentProductId"] as? Int == 1)
        let values = (payload["paymentValues"] as? [[String: String]] ?? []).reduce(into: [String: String]()) { $0[$1["key"] ?? ""] = $1["value"] }
        #expect(values == ["cardNumber": "4111111111111111", "expiryDate": "1230", "cvv": "123"])
    }

    @Test(arguments: [1, 2, 3, 4])
    func aJWEWithAnyPartAlteredIsRefused(part: Int) throws {
        var parts = Self.joserfcFixture.split(separator: ".").map(String.init)
        // Flip one character in the middle of the part (the base64url alphabet keeps it decodable).
        var chars = Array(parts[part])
        let middle = chars.count / 2
        chars[middle] = chars[middle] == "A" ? "B" : "A"
        parts[part] = String(chars)
        #expect(throws: (any Error).self) { try WorldlineJWE.decrypt(parts.joined(separator: ".")) }
    }

    @Test func theDeviceRoundTripsThroughTheSimulatorsKey() throws {
        let jwe = try WorldlineDevice.encryptedCustomerInput(
            publicKey: WorldlineSandboxKey.publicKey, keyId: WorldlineSandboxKey.keyID, clientSessionId: "s-1", paymentProductId: 3,
            cardNumber: "5555555555554444", expiryDate: "1230", cvv: "123", cardholderName: nil)
        #expect(jwe.split(separator: ".").count == 5 && !jwe.contains("5555555555554444"))
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(try WorldlineJWE.decrypt(jwe))) as? [String: Any])
        #expect(payload["clientSessionId"] as? String == "s-1" && payload["paymentProductId"] as? Int == 3)
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }
}
