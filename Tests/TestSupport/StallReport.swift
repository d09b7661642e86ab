import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What every thread of the test process is doing, written out when a test
/// overruns a backstop, so that a stall is seen rather than guessed.
///
/// `gdb` (Debian's `gdb`, installed by `scripts/install-prerequisites`)
/// attaches to this process for a moment and prints every thread's stack to
/// a file under the temporary folder; the test's output gets the file's path
/// and the top frames of the threads that were running Swift concurrency jobs
/// (the cooperative pool: two threads on a 2-core machine, so one call that
/// blocks there halves what every test can do). Where gdb is missing or may
/// not attach, the report says so and nothing else changes.
public enum StallReport {
    /// Dumps the stacks now; returns what to print (the file and the pool's threads).
    @discardableResult
    public static func dump(_ reason: String) -> String {
        guard let gdb = (["/usr/bin/gdb", "/usr/local/bin/gdb"] as [String]).first(where: { access($0, X_OK) == 0 }) else {
            return "stall report for \(reason): gdb is not installed (scripts/install-prerequisites installs it)"
        }
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("gateway-test-stall-\(getpid())-\(UInt32.random(in: 0 ... .max)).txt").path
        let result: ProcessResult
        do {
            result = try runProcess(gdb, ["-p", "\(getpid())", "-batch", "-nx", "-ex", "set pagination off",
                                          "-ex", "thread apply all bt 30"])
        } catch {
            return "stall report for \(reason): gdb did not start: \(error)"
        }
        let text = "stall report for \(reason)\n\n" + result.stdout
        FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        let pool = poolThreads(in: result.stdout)
        var lines = ["stall report for \(reason): every thread's stack in \(path)"]
        if pool.isEmpty {
            lines.append("  no thread was running a Swift concurrency job")
        } else {
            lines.append("  the \(pool.count) thread(s) running Swift concurrency jobs were in:")
            for frames in pool { lines.append("  - " + frames.joined(separator: " <- ")) }
        }
        let report = lines.joined(separator: "\n")
        FileManager.default.createFile(atPath: path, contents: Data((report + "\n\n" + text).utf8))
        return report
    }

    /// Dumps the stacks once if `name` is still running after `limit` (from a
    /// thread that is not Swift concurrency's, which may be the starved one);
    /// cancel it when the test ends.
    public static func watch(_ name: String, after limit: Duration) -> DispatchWorkItem {
        let item = DispatchWorkItem {
            let report = dump("\(name), still running after \(limit)")
            FileHandle.standardError.write(Data((report + "\n").utf8))
        }
        let nanoseconds = Int(min(limit.components.seconds, 86_400)) * 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: item)
        return item
    }

    /// The top project frames of each thread in `gdb`'s output that runs a
    /// Swift concurrency job, demangled where `swift demangle` is at hand.
    public static func poolThreads(in output: String) -> [[String]] {
        let threads = output.components(separatedBy: "\nThread ").dropFirst()
        var found: [[String]] = []
        for thread in threads where thread.contains("swift_job_run") {
            var frames: [String] = []
            for line in thread.split(separator: "\n") where line.hasPrefix("#") {
                // "#3  0x... in SYMBOL (args) at file" or "#3  SYMBOL (...)"
                var rest = line.drop { $0 != " " }.drop { $0 == " " }
                if rest.hasPrefix("0x"), let range = rest.range(of: " in ") { rest = rest[range.upperBound...] }
                let symbol = String(rest.prefix { $0 != " " })
                if symbol.hasPrefix("swift::runJob") || symbol == "swift_job_run" { break }
                frames.append(symbol)
            }
            found.append(demangled(Array(frames.prefix(8))))
        }
        return found
    }

    /// Swift's mangled names (`$s…`) demangled; C symbols as they are (the
    /// demangler would take a leading underscore off `__GI___wait4`).
    private static func demangled(_ symbols: [String]) -> [String] {
        let mangled = symbols.filter { $0.hasPrefix("$s") }
        guard !mangled.isEmpty,
              let swift = (["/usr/bin/swift-demangle", "/opt/swift/usr/bin/swift-demangle"] as [String]).first(where: { access($0, X_OK) == 0 }),
              let result = try? runProcess(swift, ["--compact", "--simplified"] + mangled), result.status == 0 else { return symbols }
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= mangled.count else { return symbols }
        var readable = lines.prefix(mangled.count).map { String($0.prefix(160)) }.makeIterator()
        return symbols.map { $0.hasPrefix("$s") ? (readable.next() ?? $0) : $0 }
    }
}
