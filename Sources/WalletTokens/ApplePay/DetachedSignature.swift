import Crypto
import Foundation
import SwiftASN1
import X509

/// A detached CMS `SignedData` (RFC 5652) as Apple Pay signs a token:
/// one signer, ECDSA with SHA-256 over its signed attributes, which hold the
/// content's SHA-256 and the signing time. Read from DER or from BER with
/// indefinite lengths (Apple's own encoding).
///
/// Read here rather than through swift-certificates' CMS support, which is
/// not public API, refuses a digest algorithm with NULL parameters (what
/// Apple's tokens carry) and does not answer the signing time.
struct DetachedSignature {
    /// Every certificate the signature carries (Apple: the leaf, then the intermediate).
    var certificates: [Certificate]
    /// The one the signer info names.
    var signer: Certificate
    /// The DER of the signed attributes as signed (a SET).
    var signedAttributes: [UInt8]
    var messageDigest: [UInt8]
    var signingTime: Date?
    /// DER `ECDSA-Sig-Value`.
    var signatureBytes: [UInt8]

    static let signedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
    static let data: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let ecdsaWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]
    static let messageDigestAttribute: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 4]
    static let signingTimeAttribute: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 5]

    init(_ bytes: [UInt8]) throws(WalletTokenError) {
        do {
            try self.init(parsing: try BER.parse(bytes))
        } catch let error as WalletTokenError {
            throw error
        } catch {
            throw .malformedToken("signature is not a CMS SignedData: \(error)")
        }
    }

    private init(parsing root: ASN1Node) throws {
        let contentInfo = try Self.children(root, "ContentInfo")
        guard contentInfo.count == 2, try ASN1ObjectIdentifier(berEncoded: contentInfo[0]) == Self.signedData else {
            throw WalletTokenError.malformedToken("signature is not a CMS SignedData")
        }
        guard let signedDataNode = try Self.children(contentInfo[1], "ContentInfo.content").first else {
            throw WalletTokenError.malformedToken("signature holds no SignedData")
        }
        var fields = try Self.children(signedDataNode, "SignedData")[...]
        // version, digestAlgorithms, encapContentInfo, [0] certificates, [1] crls, signerInfos
        guard fields.count >= 4 else { throw WalletTokenError.malformedToken("SignedData is missing members") }
        fields.removeFirst(2)
        let encapsulated = try Self.children(fields.removeFirst(), "SignedData.encapContentInfo")
        guard encapsulated.count == 1, try ASN1ObjectIdentifier(berEncoded: encapsulated[0]) == Self.data else {
            throw WalletTokenError.malformedToken("the signature is not detached, or not over plain data")
        }
        var certificates: [Certificate] = []
        while let next = fields.first, next.identifier.tagClass == .contextSpecific {
            fields.removeFirst()
            guard next.identifier.tagNumber == 0 else { continue }   // [1] revocation data: not used
            for node in try Self.children(next, "SignedData.certificates") {
                certificates.append(try Certificate(derEncoded: Array(node.encodedBytes)))
            }
        }
        guard fields.count == 1 else { throw WalletTokenError.malformedToken("SignedData has no signer infos") }
        let signerInfos = try Self.children(fields.removeFirst(), "SignedData.signerInfos")
        guard signerInfos.count == 1 else {
            throw WalletTokenError.malformedToken("the signature has \(signerInfos.count) signers, not one")
        }
        var info = try Self.children(signerInfos[0], "SignerInfo")[...]
        // version, sid, digestAlgorithm, [0] signedAttrs, signatureAlgorithm, signature, [1] unsignedAttrs
        guard info.count >= 6 else { throw WalletTokenError.malformedToken("SignerInfo is missing members (signed attributes?)") }
        info.removeFirst()
        let sid = info.removeFirst()
        try Self.requireAlgorithm(info.removeFirst(), Self.sha256, allowingNullParameters: true, "SignerInfo.digestAlgorithm", expected: "SHA-256")
        let attributes = info.removeFirst()
        guard attributes.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) else {
            throw WalletTokenError.malformedToken("SignerInfo has no signed attributes")
        }
        try Self.requireAlgorithm(info.removeFirst(), Self.ecdsaWithSHA256, allowingNullParameters: false, "SignerInfo.signatureAlgorithm",
                                  expected: "ECDSA with SHA-256")
        signatureBytes = Array(try ASN1OctetString(berEncoded: info.removeFirst()).bytes)

        // The signature covers the attributes' DER with the SET tag in place of [0] IMPLICIT.
        var der = Array(attributes.encodedBytes)
        der[0] = 0x31
        signedAttributes = der
        var digest: [UInt8]?
        for attribute in try Self.children(attributes, "SignerInfo.signedAttrs") {
            let parts = try Self.children(attribute, "Attribute")
            guard parts.count == 2 else { throw WalletTokenError.malformedToken("a signed attribute is malformed") }
            let type = try ASN1ObjectIdentifier(berEncoded: parts[0])
            let values = try Self.children(parts[1], "Attribute.values")
            guard values.count == 1 else { continue }
            if type == Self.messageDigestAttribute {
                digest = Array(try ASN1OctetString(berEncoded: values[0]).bytes)
            } else if type == Self.signingTimeAttribute {
                signingTime = try Self.date(values[0])
            }
        }
        guard let digest else { throw WalletTokenError.malformedToken("the signed attributes hold no message digest") }
        messageDigest = digest
        self.certificates = certificates
        signer = try Self.signer(identifiedBy: sid, among: certificates)
    }

    /// The certificate `sid` names: by issuer and serial number, or by subject key identifier.
    private static func signer(identifiedBy sid: ASN1Node, among certificates: [Certificate]) throws -> Certificate {
        let found: Certificate?
        if sid.identifier == .sequence {
            let parts = try children(sid, "SignerInfo.sid")
            guard parts.count == 2 else { throw WalletTokenError.malformedToken("SignerInfo.sid is malformed") }
            let issuer = try DistinguishedName(derEncoded: parts[0])
            guard case .primitive(let serial) = parts[1].content else { throw WalletTokenError.malformedToken("SignerInfo.sid serial is malformed") }
            found = certificates.first { $0.issuer == issuer && $0.serialNumber == Certificate.SerialNumber(bytes: serial) }
        } else {
            guard case .primitive(let keyID) = sid.content else { throw WalletTokenError.malformedToken("SignerInfo.sid is malformed") }
            found = certificates.first { (try? $0.extensions.subjectKeyIdentifier?.keyIdentifier) == keyID }
        }
        guard let found else { throw WalletTokenError.wrongChain("the signer's certificate is not in the signature") }
        return found
    }

    private static func children(_ node: ASN1Node, _ name: String) throws -> [ASN1Node] {
        guard case .constructed(let nodes) = node.content else { throw WalletTokenError.malformedToken("\(name) is not constructed") }
        return Array(nodes)
    }

    private static func requireAlgorithm(_ node: ASN1Node, _ oid: ASN1ObjectIdentifier, allowingNullParameters: Bool, _ name: String,
                                         expected: String) throws {
        let parts = try children(node, name)
        guard let first = parts.first, try ASN1ObjectIdentifier(berEncoded: first) == oid else {
            throw WalletTokenError.badSignature("\(name) is not \(expected)")
        }
        let nullParameters = parts.count == 2 && parts[1].identifier == .null
        guard parts.count == 1 || (allowingNullParameters && nullParameters) else {
            throw WalletTokenError.malformedToken("\(name) has unexpected parameters")
        }
    }

    private static func date(_ node: ASN1Node) throws -> Date {
        let fields: (year: Int, month: Int, day: Int, hours: Int, minutes: Int, seconds: Int)
        if node.identifier == .utcTime {
            let time = try UTCTime(berEncoded: node)
            fields = (time.year, time.month, time.day, time.hours, time.minutes, time.seconds)
        } else if node.identifier == .generalizedTime {
            let time = try GeneralizedTime(berEncoded: node)
            fields = (time.year, time.month, time.day, time.hours, time.minutes, time.seconds)
        } else {
            throw WalletTokenError.malformedToken("the signing time is neither UTCTime nor GeneralizedTime")
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let components = DateComponents(year: fields.year, month: fields.month, day: fields.day,
                                        hour: fields.hours, minute: fields.minutes, second: fields.seconds)
        guard let date = calendar.date(from: components) else { throw WalletTokenError.malformedToken("the signing time is not a date") }
        return date
    }
}
