/// A statement PostgreSQL refused, or an answer the store could not read,
/// as the store's calls throw it: its description is the database's own
/// message and SQLSTATE, for the host's log, where the driver's description
/// of its errors says only that one happened. Never a password or the
/// statement's parameters (a message may quote the one value it refused;
/// the store holds no card data). The engine never shows it to a caller.
public struct PostgresStoreError: Error, CustomStringConvertible, Sendable {
    public let description: String
    /// PostgreSQL's code for the error, when the server sent one.
    public let sqlState: String?
    let underlying: any Error
}
