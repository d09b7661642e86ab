import Foundation
import Hummingbird

/// Worldline's client API, what a payer's device SDK calls with a client
/// session (`POST /v2/{merchantId}/sessions` gives its `clientApiUrl`,
/// `{base}/client`), each request carrying
/// `Authorization: GCS v1Client:<clientSessionId>`:
///
/// - `GET /client/v1/{customerId}/crypto/publickey`: `{keyId, publicKey}`,
///   the key to encrypt card input to (base64 DER SubjectPublicKeyInfo);
/// - `GET …/products` and `…/products/{id}`: the card products, with the
///   fields and validators a form is built from;
/// - `POST …/services/getIINdetails` `{bin}`: the product of a card's first digits.
///
/// The session must be alive and the path's `customerId` its own; otherwise
/// 401 `9002` as on the server API. Shapes are those Worldline's JavaScript
/// client SDK reads; the product's labels, logos and the IIN's country are
/// ours. Answers allow any origin (`Access-Control-Allow-Origin: *`), as a
/// browser SDK calls from the shop's page.
struct WorldlineClientAPI: Sendable {
    let simulator: WorldlineSimulator

    func register(on routes: RouterGroup<BasicRequestContext>) {
        let api = self
        routes.get("client/v1/:customerId/crypto/publickey") { request, context in
            api.authorised(request, context) { _ in
                WorldlineAnswer(200, ["keyId": WorldlineSandboxKey.keyID, "publicKey": WorldlineSandboxKey.publicKey])
            }
        }
        routes.get("client/v1/:customerId/products") { request, context in
            api.authorised(request, context) { _ in WorldlineAnswer(200, ["paymentProducts": [1, 2, 3].map(Self.product)]) }
        }
        routes.get("client/v1/:customerId/products/:productId") { request, context in
            let id = context.parameters.get("productId").flatMap { Int($0) }
            return api.authorised(request, context) { _ in
                guard let id, [1, 2, 3].contains(id) else {
                    return WorldlineWire.Refusal(404, "1007", "UNKNOWN_PRODUCT_ID", "UNKNOWN_PRODUCT_ID", property: "productId").answer
                }
                return WorldlineAnswer(200, Self.product(id))
            }
        }
        routes.post("client/v1/:customerId/services/getIINdetails") { request, context in
            let buffer = try await request.body.collect(upTo: 64 * 1024)
            return api.authorised(request, context) { _ in
                do { return try Self.iinDetails(try WorldlineWire.object(buffer)) } catch let refusal as WorldlineWire.Refusal { return refusal.answer }
            }
        }
        for path in ["crypto/publickey", "products", "products/:productId", "services/getIINdetails"] {
            routes.on(RouterPath("client/v1/:customerId/" + path), method: .options) { _, _ in Self.withCORS(Response(status: .noContent)) }
        }
    }

    /// `work` for a request with a live client session whose customer is the path's.
    func authorised(_ request: Request, _ context: BasicRequestContext,
                    _ work: (WorldlineClientSession) throws -> WorldlineAnswer) -> Response {
        let prefix = "GCS v1Client:"
        let customer = context.parameters.get("customerId") ?? ""
        guard let authorization = request.headers[.authorization], authorization.hasPrefix(prefix),
              let session = simulator.state.withLock({ $0.liveSession(String(authorization.dropFirst(prefix.count)),
                                                                      merchant: WorldlineSimulator.merchantID) }),
              session.customerId == customer else {
            return Self.withCORS(WorldlineWire.Refusal.unauthorized.response)
        }
        do {
            return Self.withCORS(try work(session).response)
        } catch {
            return Self.withCORS(WorldlineAnswer(500, WorldlineWire.errorList([.init(errorCode: "9999", id: "UNKNOWN_SERVER_ERROR",
                                                                                   message: "UNKNOWN_SERVER_ERROR", httpStatusCode: 500)])).response)
        }
    }

    static func withCORS(_ response: Response) -> Response {
        var response = response
        response.headers[.accessControlAllowOrigin] = "*"
        response.headers[.accessControlAllowHeaders] = "Authorization, Content-Type, X-GCS-ClientMetaInfo"
        response.headers[.accessControlAllowMethods] = "GET, POST, OPTIONS"
        return response
    }

    /// `{bin}` (at least six digits) → `{paymentProductId, countryCode, isAllowedInContext}`;
    /// an IIN of no product here is 404 `UNKNOWN_IIN` (errorCode and id ours).
    static func iinDetails(_ body: [String: Any]) throws -> WorldlineAnswer {
        guard let bin = body["bin"] as? String else { throw WorldlineWire.Refusal.missing("bin") }
        let digits = bin.filter { !$0.isWhitespace }
        guard digits.count >= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw WorldlineWire.Refusal.invalid("bin", "The bin must be at least six digits")
        }
        guard let product = WorldlineCards.productId(ofIIN: digits) else {
            throw WorldlineWire.Refusal(404, "1010", "UNKNOWN_IIN", "No payment product is known for this IIN", property: "bin")
        }
        return WorldlineAnswer(200, ["paymentProductId": product, "countryCode": "BE", "isAllowedInContext": true])
    }

    /// A card product as the client API lists it.
    static func product(_ id: Int) -> [String: Any] {
        let label = id == 1 ? "VISA" : id == 2 ? "American Express" : "MasterCard"
        let hints: [String: Any] = ["displayOrder": id - 1, "label": label, "logo": "sandbox/logos/product-\(id).svg"]
        let lengths = WorldlineCards.lengths(of: id)
        func field(_ id: String, type: String, order: Int, label: String, required: Bool, validators: [String: Any], mask: String? = nil,
                   obfuscate: Bool = false) -> [String: Any] {
            var display: [String: Any] = ["displayOrder": order, "label": label, "alwaysShow": false, "obfuscate": obfuscate,
                                          "placeholderLabel": "", "formElement": ["type": "text"], "preferredInputType": "StringKeyboard"]
            if let mask { display["mask"] = mask }
            return ["id": id, "type": type, "dataRestrictions": ["isRequired": required, "validators": validators] as [String: Any],
                    "displayHints": display]
        }
        let fields = [
            field("cardNumber", type: "numericstring", order: 0, label: "Card number", required: true,
                  validators: ["length": ["minLength": lengths.lowerBound, "maxLength": lengths.upperBound], "luhn": [String: Any](),
                               "regularExpression": ["regularExpression": "^[0-9]*$"]],
                  mask: id == 2 ? "{{9999}} {{999999}} {{99999}}" : "{{9999}} {{9999}} {{9999}} {{9999}} {{999}}"),
            field("cardholderName", type: "string", order: 1, label: "Cardholder's name", required: false,
                  validators: ["length": ["minLength": 2, "maxLength": 51]]),
            field("expiryDate", type: "expirydate", order: 2, label: "Expiry date", required: true,
                  validators: ["expirationDate": [String: Any](), "regularExpression": ["regularExpression": "^(0[1-9]|1[0-2])[0-9]{2}$"]],
                  mask: "{{99}}/{{99}}"),
            field("cvv", type: "numericstring", order: 3, label: "Card verification code", required: true,
                  validators: ["length": ["minLength": 3, "maxLength": 4], "regularExpression": ["regularExpression": "^[0-9]*$"]],
                  mask: "{{9999}}", obfuscate: true),
        ]
        return ["id": id, "paymentMethod": "card", "paymentProductGroup": "Cards", "allowsRecurring": true, "allowsTokenization": true,
                "allowsInstallments": false, "usesRedirectionTo3rdParty": false, "displayHints": hints, "displayHintsList": [hints],
                "fields": fields]
    }
}
