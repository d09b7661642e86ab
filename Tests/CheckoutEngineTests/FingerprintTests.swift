@testable import CheckoutEngine
import GatewayPayloads
import Testing

/// A request's canonical JSON is what its idempotency key is bound to: the
/// bytes an earlier build wrote for the same request must not change, or a
/// retry under its key would be refused as a conflict.
@Suite struct FingerprintTests {
    static func canonical(_ instrument: [String: JSONValue]) -> String {
        var w = JSONWriter()
        NewAttempt(method: "mada", instrument: instrument).writeCanonical(to: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    @Test func instrumentNumbersAreWrittenAsTheyAlwaysWere() {
        // Every number as a double, as the tree held them before integers were exact.
        #expect(Self.canonical(["n": .integer(5), "f": .number(2.5), "w": .number(5.0), "big": .integer(4_111_111_111_111_111)])
                == #"{"method":"mada","instrument":{"big":4111111111111111.0,"f":2.5,"n":5,"w":5}}"#)
        #expect(Self.canonical(["n": .integer(5)]) == Self.canonical(["n": .number(5.0)]))
        #expect(Self.canonical(["list": .array([.integer(1), .object(["b": .number(1e2), "a": .string("x")])])])
                == #"{"method":"mada","instrument":{"list":[1,{"a":"x","b":100}]}}"#)
    }
}
