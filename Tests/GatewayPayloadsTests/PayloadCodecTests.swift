import Foundation
import GatewayPayloads
import TestSupport
import Testing

/// The payload codec reads back what it writes, on anything a payload can
/// hold, and what it writes is JSON that an independent reader (Foundation's
/// JSONSerialization, here only as a referee) reads as the same tree.
@Suite struct PayloadCodecTests {
    typealias Seeded = SplitMix64

    static let alphabet: [Character] = Array("abcXYZ019 \"\\/\n\t\r\u{01}\u{1F}éß中😀-_.:{}[],")

    static func text(_ g: inout Seeded) -> String {
        String((0..<Int.random(in: 0...24, using: &g)).map { _ in alphabet.randomElement(using: &g)! })
    }

    static func money(_ g: inout Seeded) -> Money {
        Money(value: Int64.random(in: Int64.min...Int64.max, using: &g) >> Int64.random(in: 0...62, using: &g), currency: ["SAR", "KWD", "JPY"].randomElement(using: &g)!)
    }

    static func optional<T>(_ g: inout Seeded, _ make: (inout Seeded) -> T) -> T? {
        Bool.random(using: &g) ? make(&g) : nil
    }

    static func authorize(_ g: inout Seeded) -> AuthorizeRequest {
        AuthorizeRequest(
            paymentId: text(&g), idempotencyKey: text(&g), amount: money(&g), method: text(&g),
            country: optional(&g, text), orderId: text(&g), capture: Bool.random(using: &g) ? .manual : .automatic,
            instrument: optional(&g) { g in ["scenario": .string(text(&g)), "n": .integer(Int64.random(in: Int64.min...Int64.max, using: &g)), "f": .number(Double(Int.random(in: -1000...1000, using: &g)) / 8), "w": .number(Double(Int.random(in: -1000...1000, using: &g))), "ok": .bool(true), "x": .null, "list": .array([.string(text(&g))])] },
            payer: optional(&g) { g in Payer(name: text(&g), email: optional(&g, text), phone: nil) },
            returnUrl: optional(&g, text))
    }

    static func result(_ g: inout Seeded) -> AdapterResult {
        AdapterResult(
            status: PaymentStatus.allCases.randomElement(using: &g)!, providerReference: optional(&g, text), amount: optional(&g, money),
            action: optional(&g) { g in PaymentAction(type: .otp, url: optional(&g, text), formFields: optional(&g) { g in [text(&g): text(&g)] }, otpLength: 6, sandboxOtp: optional(&g, text)) },
            problem: optional(&g) { g in AdapterProblem(code: ProblemCode(rawValue: text(&g)), message: text(&g), retryable: Bool.random(using: &g), safeToRetryElsewhere: Bool.random(using: &g), providerCode: optional(&g, text)) },
            providerStatus: optional(&g, text))
    }

    static func amountRequest(_ g: inout Seeded) -> AmountRequest {
        AmountRequest(
            paymentId: text(&g), idempotencyKey: text(&g), providerReference: text(&g), amount: money(&g), reason: optional(&g, text),
            alreadyCaptured: optional(&g, money),
            captures: optional(&g) { g in (0..<Int.random(in: 0...3, using: &g)).map { _ in CaptureReference(providerReference: text(&g), amount: money(&g)) } },
            alreadyRefunded: optional(&g, money))
    }

    @Test(arguments: 0..<400)
    func theCodecReadsBackWhatItWritesAndARefereeReadsTheSame(seed: UInt64) throws {
        var g = SplitMix64(seed: seed)
        let request = Self.authorize(&g)
        #expect(try AuthorizeRequest(jsonData: Data(request.jsonBytes())) == request)
        try Self.refereeReadsTheSame(request.jsonBytes())

        let amount = Self.amountRequest(&g)
        #expect(try AmountRequest(jsonData: Data(amount.jsonBytes())) == amount)
        try Self.refereeReadsTheSame(amount.jsonBytes())

        let result = Self.result(&g)
        #expect(try AdapterResult(jsonData: Data(result.jsonBytes())) == result)
        try Self.refereeReadsTheSame(result.jsonBytes())
    }

    /// `bytes` parse with Foundation's reader into the tree the one parser reads.
    static func refereeReadsTheSame(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let referee = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        let ours = try JSONValue(jsonData: Data(bytes))
        #expect(same(ours, referee), "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    static func same(_ value: JSONValue, _ other: Any) -> Bool {
        switch value {
        case .null: return other is NSNull
        case .bool(let b): return other as? Bool == b
        case .integer(let i): return (other as? Int).map(Int64.init) == i || (other as? NSNumber)?.int64Value == i
        case .number(let n): return (other as? NSNumber)?.doubleValue == n || (other as? Double) == n
        case .string(let s): return other as? String == s
        case .array(let a):
            guard let list = other as? [Any], list.count == a.count else { return false }
            return zip(a, list).allSatisfy { same($0, $1) }
        case .object(let o):
            guard let members = other as? [String: Any], members.count == o.count else { return false }
            return o.allSatisfy { key, element in members[key].map { same(element, $0) } ?? false }
        }
    }

    @Test func everyRequestTypeRoundTrips() throws {
        let c = ContinueRequest(paymentId: "p", idempotencyKey: "k", providerReference: "r", otp: "123456", returnParams: ["outcome": "approve"])
        #expect(try ContinueRequest(jsonData: Data(c.jsonBytes())) == c)
        let v = VerifyRequest(paymentId: "p", providerReference: nil)
        #expect(try VerifyRequest(jsonData: Data(v.jsonBytes())) == v)
        let a = AmountRequest(paymentId: "p", idempotencyKey: "k", providerReference: "r", amount: Money(value: 1234, currency: "KWD"), reason: "returned")
        #expect(try AmountRequest(jsonData: Data(a.jsonBytes())) == a)
        let void = VoidRequest(paymentId: "p", idempotencyKey: "k", providerReference: "r")
        #expect(try VoidRequest(jsonData: Data(void.jsonBytes())) == void)
        let w = WebhookRequest(headers: ["x-sig": "ab"], body: "e30=")
        #expect(try WebhookRequest(jsonData: Data(w.jsonBytes())) == w)
        let wr = WebhookResult(verified: true, eventId: "e", paymentId: "p", providerReference: "r", status: .succeeded, amount: Money(value: 1, currency: "SAR"))
        #expect(try WebhookResult(jsonData: Data(wr.jsonBytes())) == wr)
    }

    @Test func unknownMembersAreIgnoredForForwardCompatibility() throws {
        let text = #"{"status":"succeeded","future":{"nested":[1,2,{"a":null}]},"amount":{"value":1234,"currency":"KWD","scale":3}}"#
        let result = try AdapterResult(jsonData: Data(text.utf8))
        #expect(result.status == .succeeded)
        #expect(result.amount == Money(value: 1234, currency: "KWD"))
    }

    /// An adapter's result is decoded in the host (under process isolation
    /// too): a member nested half a million levels deep (1 MiB, the largest
    /// result) is refused as a malformed document, not read down the host's
    /// stack; nesting up to the limit still reads.
    @Test func aResultNestedDeeperThanTheLimitIsRefusedNotReadDownTheStack() throws {
        let deep = #"{"status":"succeeded","x":"# + String(repeating: "[", count: 500_000) + String(repeating: "]", count: 500_000) + "}"
        let error = #expect(throws: JSONParseError.self) { try AdapterResult(jsonData: Data(deep.utf8)) }
        #expect(error?.message.contains("nested deeper than 64 levels") == true, "\(String(describing: error))")
        let objects = #"{"status":"succeeded","x":"# + String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000) + "}"
        #expect(throws: JSONParseError.self) { try AdapterResult(jsonData: Data(objects.utf8)) }
        // 63 levels inside the result's own object: the limit, read.
        let limit = #"{"status":"succeeded","x":"# + String(repeating: "[", count: 63) + String(repeating: "]", count: 63) + "}"
        #expect(try AdapterResult(jsonData: Data(limit.utf8)).status == .succeeded)
    }

    /// Strictly UTF-8 (RFC 8259): a string holding bytes that are not (a
    /// lone continuation byte, an overlong form, a surrogate's encoding) is
    /// refused, never repaired into U+FFFD; in both the plain and the escaped
    /// paths of the reader. Valid multi-byte text still reads.
    @Test func bytesThatAreNotUTF8InAStringAreRefused() throws {
        for bad: [UInt8] in [[0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            for escaped in [false, true] {
                let document = Array(#"{"status":"succeeded","providerStatus":""#.utf8) + (escaped ? Array(#"\n"#.utf8) : []) + bad + Array(#""}"#.utf8)
                let error = #expect(throws: JSONParseError.self, "\(bad) escaped: \(escaped)") { try AdapterResult(jsonData: Data(document)) }
                #expect(error?.message.contains("invalid UTF-8") == true, "\(String(describing: error))")
            }
        }
        let good = try AdapterResult(jsonData: Data(#"{"status":"succeeded","providerStatus":"طلب 注文 🧾\n"}"#.utf8))
        #expect(good.providerStatus == "طلب 注文 🧾\n")
    }

    @Test func missingRequiredMembersAreNamed() {
        #expect(throws: JSONParseError.self) { try Money(jsonData: Data(#"{"value": 5}"#.utf8)) }
        do {
            _ = try Money(jsonData: Data(#"{"value": 5}"#.utf8))
        } catch {
            #expect(error.message.contains("\"currency\""))
        }
    }

    @Test(arguments: [
        #"{"value": 1.5, "currency": "SAR"}"#,            // money is never fractional
        #"{"value": 1e3, "currency": "SAR"}"#,
        #"{"value": 9223372036854775808, "currency": "SAR"}"#, // beyond Int64
        #"{"value": "100", "currency": "SAR"}"#,
        #"{"value": 100, "currency": "SAR"} trailing"#,
        "{\"value\": 100, \"currency\": \"SA\u{01}R\"}",   // a raw control byte in a string
        #"{"value": 100 "currency": "SAR"}"#,
        "",
    ])
    func malformedMoneyIsRefused(text: String) {
        #expect(throws: JSONParseError.self) { try Money(jsonData: Data(text.utf8)) }
    }

    @Test func minorUnitsSurviveAtTheExtremes() throws {
        for value in [Int64.min, -1, 0, 1, 1234, Int64.max] {
            let money = Money(value: value, currency: "KWD")
            #expect(try Money(jsonData: Data(money.jsonBytes())) == money)
        }
    }
}
