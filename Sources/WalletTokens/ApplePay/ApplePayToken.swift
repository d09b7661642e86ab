import Foundation
import GatewayPayloads

/// An Apple Pay payment token's `paymentData` (`EC_v1`), as the payer's
/// device hands it over: read, not yet trusted. ``ApplePayDecryptor`` checks
/// and opens it.
public struct ApplePayToken: Sendable, Hashable {
    public var version: String
    /// The ciphertext with its 16-byte GCM tag at the end.
    public var data: [UInt8]
    /// A detached CMS (PKCS #7) signature, DER or BER.
    public var signature: [UInt8]
    /// The ephemeral P-256 public key, as an X.509 SubjectPublicKeyInfo.
    public var ephemeralPublicKey: [UInt8]
    /// SHA-256 of the merchant certificate's SubjectPublicKeyInfo: which merchant key it was encrypted for.
    public var publicKeyHash: [UInt8]
    public var transactionID: [UInt8]
    public var applicationData: [UInt8]?

    /// What the signature covers: ephemeral key ‖ data ‖ transaction id ‖ application data.
    /// The id and the application data are 32 bytes each (checked when read).
    public var signedContent: [UInt8] {
        ephemeralPublicKey + data + transactionID + (applicationData ?? [])
    }

    public init(version: String, data: [UInt8], signature: [UInt8], ephemeralPublicKey: [UInt8], publicKeyHash: [UInt8],
                transactionID: [UInt8], applicationData: [UInt8]?) {
        self.version = version
        self.data = data
        self.signature = signature
        self.ephemeralPublicKey = ephemeralPublicKey
        self.publicKeyHash = publicKeyHash
        self.transactionID = transactionID
        self.applicationData = applicationData
    }

    /// Reads a token from its JSON: a whole `PKPaymentToken` (`{"paymentData": {...}, ...}`) or its
    /// `paymentData` alone. Every member missing or of the wrong kind is named.
    public init(json: Data) throws(WalletTokenError) {
        let root: JSONValue
        do { root = try JSONValue(jsonData: json) } catch {
            throw .malformedToken("not JSON")
        }
        // A bare string, number, boolean or null is no JSON document to a token reader (as JSONSerialization said).
        guard var object = root.objectValue else { throw .malformedToken(root.arrayValue == nil ? "not JSON" : "not a JSON object") }
        var path = ""
        if let inner = object["paymentData"] {
            guard let paymentData = inner.objectValue else { throw .malformedToken("paymentData is not an object") }
            object = paymentData
            path = "paymentData."
        }
        guard let version = object["version"]?.stringValue else { throw .malformedToken("\(path)version is missing") }
        guard version == "EC_v1" else { throw .unsupportedVersion(String(version.prefix(20))) }
        guard let header = object["header"]?.objectValue else { throw .malformedToken("\(path)header is missing") }
        self.version = version
        data = try Self.base64(object["data"], at: path + "data")
        signature = try Self.base64(object["signature"], at: path + "signature")
        ephemeralPublicKey = try Self.base64(header["ephemeralPublicKey"], at: path + "header.ephemeralPublicKey")
        publicKeyHash = try Self.base64(header["publicKeyHash"], at: path + "header.publicKeyHash")
        transactionID = try Self.hex(header["transactionId"], at: path + "header.transactionId")
        applicationData = try header["applicationData"].map { value throws(WalletTokenError) in
            try Self.hex(value, at: path + "header.applicationData")
        }
        guard data.count > 16 else { throw .malformedToken("\(path)data is shorter than its GCM tag") }
        guard publicKeyHash.count == 32 else { throw .malformedToken("\(path)header.publicKeyHash is not a SHA-256 hash") }
        // The signed content joins its parts without lengths: fixed lengths keep
        // bytes from moving between the transaction id and the application data
        // (the same signature over another transaction id).
        guard transactionID.count == 32 else { throw .malformedToken("\(path)header.transactionId is not 32 bytes (64 hex digits)") }
        guard applicationData == nil || applicationData?.count == 32 else {
            throw .malformedToken("\(path)header.applicationData is not a SHA-256 hash (64 hex digits)")
        }
    }

    static func base64(_ value: JSONValue?, at path: String) throws(WalletTokenError) -> [UInt8] {
        guard let text = value?.stringValue else { throw .malformedToken("\(path) is missing or not a string") }
        guard let bytes = Data(base64Encoded: text), !bytes.isEmpty else { throw .malformedToken("\(path) is not base64") }
        return Array(bytes)
    }

    static func hex(_ value: JSONValue?, at path: String) throws(WalletTokenError) -> [UInt8] {
        guard let text = value?.stringValue else { throw .malformedToken("\(path) is missing or not a string") }
        guard let bytes = Hex.decode(text), !bytes.isEmpty else { throw .malformedToken("\(path) is not hexadecimal") }
        return bytes
    }
}
