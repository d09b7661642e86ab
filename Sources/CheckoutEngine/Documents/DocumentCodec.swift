import Foundation
import GatewayPayloads
import PaymentFields

// The codecs of the engine's documents, each in a file beside its type
// (`Session+JSON.swift`, ...): sessions (what the store keeps) and
// the answers replayed under idempotency keys, written and read by the one
// codec (GatewayPayloads/Codec): member names are the API's, nil members are
// omitted, dates are wire dates (WireDate; a stored number is read as Unix
// seconds). `DocumentCodecTests` reads back what is written on random
// sessions. Foundation's JSONEncoder cost more per payment than the database
// did (BENCHMARKS.md).

extension JSONParser {
    mutating func enumeration<E: RawRepresentable>(_ type: E.Type) throws(JSONParseError) -> E where E.RawValue == String {
        let raw = try string()
        guard let value = E(rawValue: raw) else { throw error("unknown \(E.self) \"\(raw)\"") }
        return value
    }
}
