import Foundation
import GRDB
import GRDBSQLite

/// The store's hot statements, bound and stepped through SQLite's C API.
///
/// Every payment runs a dozen or so statements, each a point lookup or a
/// one-row write. Through GRDB each of them builds `StatementArguments` (an
/// array of boxed values), validates them, finds its statement in a cache
/// keyed by its SQL text, and (for a lookup) hops onto the connection's
/// dispatch queue and builds a cursor: together more work than SQLite's own
/// (a profile of the complete-payment benchmark put a fifth of the process's
/// time there). Here a statement is prepared once per connection, found by
/// its position in a fixed list, bound from typed Swift values with no array
/// in between (a parameter pack), stepped, and reset.
///
/// Transactions (`BEGIN`, `COMMIT`, savepoints) stay with GRDB, which tracks
/// them; the statements here only read and write rows. GRDB does not see
/// those writes: a transaction observer or a `ValueObservation` added on the
/// store's writer would miss them (the store registers none). The store owns
/// its writer: the writer's statements are finalized when the store goes.
protocol StatementKind: CaseIterable, Sendable {
    /// Its place in `allCases` (0, 1, 2, ...).
    var position: Int { get }
    var sql: String { get }
}

/// A value bound to a statement's parameter.
protocol SQLiteBindable {
    /// Binds `self` at `index` (from 1) of `statement`; returns SQLite's code.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
}

/// SQLite copies the bytes before the call returns.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

extension String: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        var text = self
        return text.withUTF8 { bytes in
            // An empty buffer may have no address; SQLite would bind NULL for it.
            guard let base = bytes.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, transient) }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(statement, index, $0, Int32(bytes.count), transient)
            }
        }
    }
}

extension Int64: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self) }
}

extension Int: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(self)) }
}

extension Double: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_double(statement, index, self) }
}

extension Data: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        withUnsafeBytes { bytes in
            // An empty blob is a blob, not NULL.
            guard let base = bytes.baseAddress else { return sqlite3_bind_zeroblob(statement, index, 0) }
            return sqlite3_bind_blob(statement, index, base, Int32(bytes.count), transient)
        }
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .some(let value): value.bind(to: statement, at: index)
        case .none: sqlite3_bind_null(statement, index)
        }
    }
}

/// One prepared statement of a ``StatementSet``, for one call: bind, step, read
/// the first row's columns; ``StatementSet/run(_:_:_:)`` resets it after.
struct BoundStatement {
    let handle: OpaquePointer
    fileprivate let connection: OpaquePointer
    fileprivate let sql: String

    /// Steps once: true when it produced a row (read it with the column
    /// accessors), false when it is done.
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw error(code)
        }
    }

    /// Steps to the end.
    func execute() throws {
        while try step() {}
    }

    /// Rows changed by this statement (not by triggers).
    var changes: Int { Int(sqlite3_changes(connection)) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func data(_ column: Int32) -> Data? {
        if isNull(column) { return nil }
        // `sqlite3_column_blob` is NULL for an empty blob.
        guard let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(handle, column)))
    }

    fileprivate func error(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }
}

/// The statements of `Kind` on one connection, each prepared on first use and
/// finalized with the set. Used by one thread at a time, as its connection is
/// (the writer's queue, or a lookup connection checked out of ``Readers``):
/// that, not the compiler, is what makes it safe to send.
final class StatementSet<Kind: StatementKind>: @unchecked Sendable {
    let connection: OpaquePointer
    private var prepared: [OpaquePointer?]
    /// Closes `connection` when the set goes (a connection of its own).
    private let ownsConnection: Bool

    /// Statements on a connection someone else owns (GRDB's writer), which
    /// must outlive the set.
    init(borrowing connection: OpaquePointer) {
        self.connection = connection
        self.prepared = Array(repeating: nil, count: Kind.allCases.count)
        self.ownsConnection = false
    }

    /// A read-only connection of its own to the database at `path`.
    init(readOnly path: String, busyTimeoutMilliseconds: Int32) throws {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot open \(path) to read: \(message)")
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        self.connection = handle
        self.prepared = Array(repeating: nil, count: Kind.allCases.count)
        self.ownsConnection = true
    }

    deinit {
        for statement in prepared { sqlite3_finalize(statement) }
        if ownsConnection { sqlite3_close_v2(connection) }
    }

    /// Binds `values` to `kind`'s parameters in order, runs `body` with the
    /// statement (which steps it and reads what it needs), and resets it: a
    /// reset statement holds no read transaction open.
    func run<each Value: SQLiteBindable, Result>(
        _ kind: Kind, _ values: repeat each Value, then body: (BoundStatement) throws -> Result
    ) throws -> Result {
        let statement = try self.statement(kind)
        defer { sqlite3_reset(statement.handle) }
        var index: Int32 = 0
        for value in repeat each values {
            index += 1
            let code = value.bind(to: statement.handle, at: index)
            guard code == SQLITE_OK else { throw statement.error(code) }
        }
        // A reset keeps the last call's bindings: one value too few would
        // reuse another session's id or key.
        guard index == sqlite3_bind_parameter_count(statement.handle) else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "\(index) values for \(sqlite3_bind_parameter_count(statement.handle)) parameters", sql: kind.sql)
        }
        return try body(statement)
    }

    /// Binds and runs `kind` to its end; returns the rows it changed.
    @discardableResult
    func execute<each Value: SQLiteBindable>(_ kind: Kind, _ values: repeat each Value) throws -> Int {
        try run(kind, repeat each values) { statement in
            try statement.execute()
            return statement.changes
        }
    }

    private func statement(_ kind: Kind) throws -> BoundStatement {
        if let handle = prepared[kind.position] {
            return BoundStatement(handle: handle, connection: connection, sql: kind.sql)
        }
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, kind.sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: kind.sql)
        }
        prepared[kind.position] = handle
        return BoundStatement(handle: handle, connection: connection, sql: kind.sql)
    }
}
