import CheckoutEngine
import Foundation
import GatewayPayloads
import GRDB
@testable import SQLiteCheckoutStore
import Testing

private func event(_ session: String, _ type: SessionEvent.Kind) -> SessionEvent {
    SessionEvent(sessionID: session, at: Date(), type: type)
}

/// A session's events are numbered 1, 2, 3, ... by the store, in the commit.
@Suite struct EventNumberingTests {
    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString)/checkout.sqlite").path
    }

    /// Commits running at once on one session (grouped into shared
    /// transactions, beside another session's) get contiguous numbers, each
    /// once, each commit's events consecutive and in the order given.
    @Test func concurrentCommitsOnOneSessionGetContiguousUniqueNumbers() async throws {
        let store = try SQLiteCheckoutStore(path: temporaryPath())
        let commits = try await withThrowingTaskGroup(of: [SessionEvent].self) { group in
            for i in 0..<100 {
                group.addTask { try await store.commit(StoreChange(session: nil, events: [event("s", "a\(i)"), event("s", "b\(i)")])) }
                group.addTask { try await store.commit(StoreChange(session: nil, events: [event("t", "c\(i)")])) }
            }
            var all: [[SessionEvent]] = []
            for try await stored in group { all.append(stored) }
            return all
        }
        let s = commits.filter { $0.first?.sessionID == "s" }
        for pair in s {
            #expect(pair[1].sequence == pair[0].sequence + 1 && pair[0].type.rawValue.dropFirst() == pair[1].type.rawValue.dropFirst())
        }
        #expect(s.flatMap { $0.map(\.sequence) }.sorted() == Array(1...200))
        #expect(commits.filter { $0.first?.sessionID == "t" }.flatMap { $0.map(\.sequence) }.sorted() == Array(1...100))

        let recorded = try await store.events(ofSession: "s", after: 0)
        #expect(recorded.map(\.sequence) == Array(1...200))
        #expect(recorded.map { "\($0.sequence) \($0.type)" } == s.flatMap { $0 }.sorted { $0.sequence < $1.sequence }.map { "\($0.sequence) \($0.type)" },
                "the store answers what the commits were told")
        #expect(try await store.events(ofSession: "s", after: 150).map(\.sequence) == Array(151...200))
        #expect(try await store.events(ofSession: "t", after: 0).map(\.sequence) == Array(1...100))
    }

    /// A database written before events were numbered per session is
    /// migrated: its events numbered in the order they were recorded, new
    /// ones numbered on, a number refused twice, the log still append-only.
    @Test func theMigrationNumbersRecordedEventsPerSessionAndKeepsTheLogAppendOnly() async throws {
        let path = temporaryPath()
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        let migrations = Migrations.migrator.migrations
        let numbering = try #require(migrations.firstIndex(of: "events numbered per session"))
        do {
            let old = try DatabaseQueue(path: path)
            try Migrations.migrator.migrate(old, upTo: migrations[numbering - 1])
            try await old.write { db in
                for (i, session) in ["s", "t", "s", "u", "s", "t"].enumerated() {
                    try db.execute(sql: "INSERT INTO event (session_id, at, type) VALUES (?, ?, ?)", arguments: [session, Double(i), "e\(i)"])
                }
            }
        }
        let store = try SQLiteCheckoutStore(path: path)
        #expect(try store.appliedMigrations().contains("events numbered per session"))
        let s = try await store.events(ofSession: "s", after: 0)
        #expect(s.map(\.sequence) == [1, 2, 3] && s.map(\.type) == ["e0", "e2", "e4"])
        let t = try await store.events(ofSession: "t", after: 0)
        #expect(t.map(\.sequence) == [1, 2] && t.map(\.type) == ["e1", "e5"])
        #expect(try await store.events(ofSession: "u", after: 0).map(\.sequence) == [1])
        #expect(try await store.events(ofSession: "s", after: 1).map(\.type) == ["e2", "e4"])

        #expect(try await store.commit(StoreChange(session: nil, events: [event("s", "new")])).map(\.sequence) == [4])
        #expect(throws: DatabaseError.self) {
            try store.writer.write { db in try db.execute(sql: "INSERT INTO event (session_id, number, at, type) VALUES ('s', 2, 0, 'again')") }
        }
        #expect(throws: DatabaseError.self) { try store.writer.write { db in try db.execute(sql: "UPDATE event SET number = number + 10") } }
        #expect(throws: DatabaseError.self) { try store.writer.write { db in try db.execute(sql: "DELETE FROM event") } }
        #expect(try await store.events(ofSession: "s", after: 0).map(\.sequence) == [1, 2, 3, 4])
    }
}
