import Foundation

/// Where the PostgreSQL store connects, read from a `postgres://` URL and a
/// password given apart from it.
///
/// `postgres://USER@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-full&sslrootcert=FILE&pool=N&schema=NAME&timeout=SECONDS]`
///
/// The password is never part of the URL: a URL that carries one is refused,
/// so that it shows neither in a process list nor in a log. It comes from a
/// file (`--database-password-file`) or an environment variable
/// (`--database-password-env`); ``description`` never shows it.
public struct PostgresConfiguration: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// The schema the store's tables live in (the `search_path`); created if
    /// missing. Several stores may share a database in separate schemas.
    public var schema: String
    public var tls: TLSMode
    /// The most connections the store's pool opens to the database.
    public var poolSize: Int
    /// How long a store call may wait (for a connection, then for its
    /// statements) before it answers ``CheckoutEngine/StoreUnavailable``.
    public var callTimeout: Duration

    /// As libpq's `sslmode`: `disable` plain; `prefer` TLS when the server
    /// offers it, else plain; `require` TLS, the server's certificate not
    /// checked (encryption against eavesdropping only); `verify-full` TLS
    /// with the certificate checked against the system's roots, or
    /// ``rootCertificate``, for the host named.
    public enum TLSMode: String, Sendable {
        case disable, prefer, require
        case verifyFull = "verify-full"
    }
    /// With `verify-full`: a PEM file of the roots to trust (libpq's
    /// `sslrootcert`) instead of the system's.
    public var rootCertificate: String?

    public init(host: String, port: Int = 5432, username: String, password: String?, database: String,
                schema: String = "public", tls: TLSMode = .prefer, poolSize: Int = 10, callTimeout: Duration = .seconds(5)) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.schema = schema
        self.tls = tls
        self.poolSize = poolSize
        self.callTimeout = callTimeout
    }

    /// A bad `--database` URL, with what was wrong.
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads `url`; `password` comes from elsewhere (never the URL).
    public init(url: String, password: String?) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
              scheme == "postgres" || scheme == "postgresql" else {
            throw Invalid(description: "--database must be a postgres:// URL (postgres://USER@HOST:PORT/DATABASE), got \(Self.withoutSecrets(url))")
        }
        if components.password != nil {
            throw Invalid(description: "--database holds a password: give it with --database-password-file or --database-password-env instead, so it never shows in a process list or a log")
        }
        guard let host = components.host, !host.isEmpty else { throw Invalid(description: "--database names no host (postgres://USER@HOST:PORT/DATABASE)") }
        guard let user = components.user, !user.isEmpty else { throw Invalid(description: "--database names no user (postgres://USER@HOST:PORT/DATABASE)") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw Invalid(description: "--database names no database (postgres://USER@HOST:PORT/DATABASE)") }
        self.init(host: host, port: components.port ?? 5432, username: user, password: password, database: database)
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw Invalid(description: "--database: sslmode must be disable, prefer, require or verify-full, got \(value)")
                }
                tls = mode
            case "sslrootcert":
                guard FileManager.default.isReadableFile(atPath: value) else {
                    throw Invalid(description: "--database: sslrootcert \(value) cannot be read")
                }
                rootCertificate = value
            case "pool":
                guard let size = Int(value), (1...500).contains(size) else {
                    throw Invalid(description: "--database: pool must be a number of connections from 1 to 500, got \(value)")
                }
                poolSize = size
            case "schema":
                guard Self.isPlainName(value) else {
                    throw Invalid(description: "--database: schema must be a plain name (letters, digits, _; not starting with a digit), got \(value)")
                }
                schema = value
            case "timeout":
                guard let seconds = Double(value), seconds > 0, seconds <= 300 else {
                    throw Invalid(description: "--database: timeout must be seconds from 0 to 300, got \(value)")
                }
                callTimeout = .milliseconds(Int64(seconds * 1000))
            default:
                throw Invalid(description: "--database: unknown parameter \(item.name) (known: sslmode, sslrootcert, pool, schema, timeout)")
            }
        }
    }

    /// The password in `file` (its first line; a trailing newline is not
    /// part of it), or in the environment variable `variable`.
    public static func password(file: String?, environment variable: String?,
                                environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        if file != nil, variable != nil {
            throw Invalid(description: "give the database password one way: --database-password-file or --database-password-env")
        }
        if let file {
            guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
                throw Invalid(description: "--database-password-file \(file) cannot be read")
            }
            // The first line, without its end (\n, or \r\n: one Character in Swift).
            let password = text.split(maxSplits: 1, omittingEmptySubsequences: false, whereSeparator: \.isNewline).first.map(String.init) ?? ""
            guard !password.isEmpty else { throw Invalid(description: "--database-password-file \(file) is empty") }
            return password
        }
        if let variable {
            guard let password = environment[variable], !password.isEmpty else {
                throw Invalid(description: "--database-password-env \(variable): no such environment variable, or it is empty")
            }
            return password
        }
        return nil
    }

    /// The URL as ops may see it: no password, whatever was given.
    public var description: String {
        let seconds = Double(callTimeout.components.seconds) + Double(callTimeout.components.attoseconds) / 1e18
        return "postgres://\(username)@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)&pool=\(poolSize)&schema=\(schema)&timeout=\(seconds)"
            + (rootCertificate.map { "&sslrootcert=\($0)" } ?? "")
    }

    static func isPlainName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first), name.utf8.count <= 63 else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// `url` with any password replaced, for an error message.
    static func withoutSecrets(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? "(unreadable URL)"
    }
}
