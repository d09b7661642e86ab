import Foundation

/// The document an adapter passes to `http_send`: one HTTP request for the
/// host to send (its allowlist, TLS and timeouts apply). The body travels as
/// base64. The SDK calls it `HTTPRequest`.
public struct HTTPSendRequest: Sendable, Hashable {
    public var method: String
    public var url: String
    public var headers: [String: String]
    /// Base64 of the body.
    public var body: String?
    /// `timeout_ms`: how long the host waits for the answer (it holds the
    /// value to 100 ms ... 120 s; 10 s when the document leaves it out).
    public var timeoutMilliseconds: Int?

    public init(method: String, url: String, headers: [String: String] = [:], body: Data? = nil, timeoutMilliseconds: Int? = 10_000) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body?.base64EncodedString()
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}

extension HTTPSendRequest: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("method", method)
        w.member("url", url)
        w.member("headers", headers)
        w.member("body", body)
        w.member("timeout_ms", timeoutMilliseconds)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var method: String?, url: String?, headers: [String: String]?, body: String?, timeout: Int64?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "method": method = try p.string()
            case "url": url = try p.string()
            case "headers": headers = try p.stringMap()
            case "body": body = try p.optionalString()
            case "timeout_ms": timeout = p.takeNull() ? nil : try p.integer()
            default: try p.skipValue()
            }
        }
        self.method = try required(method, "method", p)
        self.url = try required(url, "url", p)
        self.headers = headers ?? [:]
        self.body = body
        self.timeoutMilliseconds = timeout.map { Int(clamping: $0) }
    }
}

/// The document the host answers `http_send` with on `GW_OK`. The SDK calls
/// it `HTTPResponse`.
public struct HTTPSendResponse: Sendable, Hashable {
    public var status: Int
    public var headers: [String: String]
    /// Base64 of the body.
    public var body: String

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body.base64EncodedString()
    }

    public var bodyData: Data { Data(base64Encoded: body) ?? Data() }
}

extension HTTPSendResponse: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("status", Int64(status))
        w.member("headers", headers)
        w.member("body", body)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var status: Int64?, headers: [String: String]?, body: String?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "status": status = try p.integer()
            case "headers": headers = try p.stringMap()
            case "body": body = try p.string()
            default: try p.skipValue()
            }
        }
        self.status = Int(clamping: try required(status, "status", p))
        self.headers = headers ?? [:]
        self.body = try required(body, "body", p)
    }
}

/// The document an adapter passes to `wallet_decrypt` (ABI 1.1): the wallet,
/// the payment it pays, and the wallet's token as the payer's device gave it.
public struct WalletDecryptRequest: Sendable, Hashable {
    public var wallet: String
    public var paymentID: String?
    public var token: JSONValue

    public init(wallet: String, paymentID: String?, token: JSONValue) {
        self.wallet = wallet
        self.paymentID = paymentID
        self.token = token
    }
}

extension WalletDecryptRequest: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("wallet", wallet)
        w.member("paymentId", paymentID)
        w.key("token")
        w.value(token)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var wallet: String?, paymentID: String?, token: JSONValue?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "wallet": wallet = try p.string()
            // Not a string: no payment named (the host opens the token for none).
            case "paymentId":
                if p.nextIsString() { paymentID = try p.string() } else { try p.skipValue() }
            case "token": token = try p.value()
            default: try p.skipValue()
            }
        }
        self.init(wallet: try required(wallet, "wallet", p), paymentID: paymentID, token: try required(token, "token", p))
    }
}

/// Why the host refused a wallet token: `{"code": ..., "message": ...}`.
public struct WalletRefusalDocument: Sendable, Hashable {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

extension WalletRefusalDocument: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("code", code)
        w.member("message", message)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var code: String?, message: String?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "code": code = try p.string()
            case "message": message = try p.string()
            default: try p.skipValue()
            }
        }
        self.init(code: try required(code, "code", p), message: try required(message, "message", p))
    }
}
