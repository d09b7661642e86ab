import CheckoutEngine
import Foundation
import GatewayPayloads
import GRDB

/// API keys in the `api_key` table: the hash of each secret (unique, so a
/// lookup by hash is one index probe), never the secret.
///
/// The methods are synchronous (GRDB's own reads and writes; each is one
/// statement) and satisfy ``APIKeyStore``'s asynchronous requirements. They
/// are called when a key is made, listed or revoked, and on the request path
/// only when the server's short cache of verified keys misses.
extension SQLiteCheckoutStore: APIKeyStore {
    public func createAPIKey(_ key: APIKeyRecord) throws {
        try writer.write { db in
            try db.cachedStatement(sql: """
                INSERT INTO api_key (id, name, mode, hash, prefix, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [key.id, key.name, key.mode.rawValue, key.hash, key.prefix,
                                         key.createdAt.timeIntervalSince1970, key.revokedAt?.timeIntervalSince1970])
        }
    }

    public func apiKey(hash: String) throws -> APIKeyRecord? {
        try writer.read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT \(Self.apiKeyColumns) FROM api_key WHERE hash = ?"), arguments: [hash])
                .map(Self.apiKey(from:))
        }
    }

    public func apiKeys() throws -> [APIKeyRecord] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.apiKeyColumns) FROM api_key ORDER BY created_at, id").map(Self.apiKey(from:))
        }
    }

    public func revokeAPIKey(id: String, at: Date) throws -> APIKeyRecord? {
        try writer.write { db in
            try db.execute(sql: "UPDATE api_key SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                           arguments: [at.timeIntervalSince1970, id])
            return try Row.fetchOne(db, sql: "SELECT \(Self.apiKeyColumns) FROM api_key WHERE id = ?", arguments: [id])
                .map(Self.apiKey(from:))
        }
    }

    private static let apiKeyColumns = "id, name, mode, hash, prefix, created_at, revoked_at"

    /// A row as a key. The table's CHECK admits only the two modes; a row
    /// with another (written around it) is an error, never a key of some mode.
    private static func apiKey(from row: Row) throws -> APIKeyRecord {
        let id: String = row["id"]
        let stored: String = row["mode"]
        guard let mode = PaymentMode(rawValue: stored) else {
            throw DatabaseError(resultCode: .SQLITE_CONSTRAINT_CHECK, message: "API key \(id) has no valid mode (\(stored.prefix(16)))")
        }
        let revoked: Double? = row["revoked_at"]
        return APIKeyRecord(
            id: id, name: row["name"], mode: mode,
            hash: row["hash"], prefix: row["prefix"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            revokedAt: revoked.map(Date.init(timeIntervalSince1970:)))
    }
}
