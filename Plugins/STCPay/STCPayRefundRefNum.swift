import Crypto
import Foundation
import GatewayAdapterSDK

/// The `RefNum` a refund is sent under: STC Pay deduplicates refunds by it
/// (a retry with the same `RefNum` and amount answers the first refund and
/// moves nothing), so it must be the same for every try of one refund, and
/// differ between refunds.
///
/// The host's idempotency keys are longer than STC Pay takes: the engine
/// sends `<payment id>:refund:<merchant key>`, up to about 300 bytes of any
/// characters, and `RefNum` is at most ``maximumLength`` visible ASCII
/// characters. A key that fits is sent as it is. Any other, and any key that
/// starts with ``digestPrefix``, is sent as ``digestPrefix`` and the hex
/// SHA-256 of its UTF-8 bytes (74 characters): deterministic, so a retry
/// under the same key is still deduplicated, and never equal to a key sent as
/// it is.
enum STCPayRefundRefNum {
    /// The longest `RefNum` a refund takes (the simulator refuses more, code 2001).
    static let maximumLength = 100
    static let digestPrefix = "gw-sha256-"

    static func make(idempotencyKey key: String) -> String {
        let fits = !key.isEmpty && key.utf8.count <= maximumLength && !key.hasPrefix(digestPrefix)
            && key.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) }
        if fits { return key }
        return digestPrefix + Hex.lowercase(SHA256.hash(data: Data(key.utf8)))
    }
}
