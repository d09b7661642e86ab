import CheckoutEngine
import Crypto
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore
import PaymentGateway

/// Who may use `/admin`: a bearer token from the environment or a file, never
/// a default. Without one, the admin routes do not exist.
public struct AdminAccess: Sendable {
    private let digest: [UInt8]

    public init?(token: String) {
        let trimmed = token.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count >= 16 else { return nil }
        digest = Array(SHA256.hash(data: Data(trimmed.utf8)))
    }

    /// Where a token comes from: `GATEWAY_ADMIN_TOKEN`, or the file named by
    /// `GATEWAY_ADMIN_TOKEN_FILE` (or `file`).
    public enum Source: Error, CustomStringConvertible {
        case tooShort(String)
        case unreadable(String)

        public var description: String {
            switch self {
            case .tooShort(let from): "the admin token from \(from) is shorter than 16 characters"
            case .unreadable(let path): "cannot read the admin token file \(path)"
            }
        }
    }

    public static func configured(file: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AdminAccess? {
        if let path = file ?? environment["GATEWAY_ADMIN_TOKEN_FILE"] {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw Source.unreadable(path) }
            guard let access = AdminAccess(token: text) else { throw Source.tooShort(path) }
            return access
        }
        if let token = environment["GATEWAY_ADMIN_TOKEN"] {
            guard let access = AdminAccess(token: token) else { throw Source.tooShort("GATEWAY_ADMIN_TOKEN") }
            return access
        }
        return nil
    }

    /// Whether `request` carries the token (compared as digests, in constant time).
    func admits(_ request: Request) -> Bool {
        guard let header = request.headers[.authorization], header.count > 7,
              header.prefix(7).lowercased() == "bearer " else { return false }
        let given = Array(SHA256.hash(data: Data(header.dropFirst(7).trimmingCharacters(in: .whitespaces).utf8)))
        var difference: UInt8 = 0
        for (a, b) in zip(given, digest) { difference |= a ^ b }
        return difference == 0
    }
}

extension CheckoutAPI {
    /// Enable, disable (each rewrites that manifest, as the CLI does) and reload.
    func addAdminRoutes(to router: APIRouter, access: AdminAccess) {
        let gateway = self.gateway
        let group = router.group("/admin")
        group.add(middleware: AdminMiddleware(access: access))

        group.post("/providers/:id/enable") { _, context -> Response in
            try await Self.setEnabled(true, provider: try context.parameters.require("id"), gateway: gateway)
        }
        group.post("/providers/:id/disable") { _, context -> Response in
            try await Self.setEnabled(false, provider: try context.parameters.require("id"), gateway: gateway)
        }
        group.post("/reload") { _, _ -> Response in
            let report = try await gateway.reload()
            return Self.json(Self.reloadJSON(report, gateway: gateway))
        }
    }

    static func setEnabled(_ enabled: Bool, provider: String, gateway: PaymentGateway) async throws -> Response {
        let report: ManifestReloader.Report
        do {
            report = try await gateway.setEnabled(enabled, provider: provider)
        } catch let problem as Problem {
            throw ProblemError(problem)
        }
        return json(reloadJSON(report, gateway: gateway))
    }

    static func reloadJSON(_ report: ManifestReloader.Report, gateway: PaymentGateway) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        for (name, list) in [("applied", report.applied), ("removed", report.removed), ("refused", report.refused.map(\.description))] {
            writer.key(name)
            writer.beginArray()
            for item in list { writer.string(item) }
            writer.endArray()
        }
        writer.endObject()
        var bytes = writer.bytes
        bytes.removeLast()
        bytes.append(contentsOf: Array(#","providers":"#.utf8))
        bytes.append(contentsOf: providersJSON(gateway.providerReport()))
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}

/// A wrong or missing bearer token is a 401, before any admin route runs.
struct AdminMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: AdminAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard access.admits(request) else {
            return Unauthorized.response(detail: "the admin API needs Authorization: Bearer <token>", realm: "gateway-admin",
                                         tokenGiven: request.headers[.authorization].flatMap(APIKeyMiddleware.bearerToken) != nil)
        }
        return try await next(request, context)
    }
}
