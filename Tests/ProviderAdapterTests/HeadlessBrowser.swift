import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

/// A real headless Chromium, driven through ChromeDriver's W3C WebDriver
/// API: what a payer's browser does on a provider's hosted pages (forms,
/// redirects, clicks), not a fetch.
///
/// ChromeDriver is started on a free loopback port (`--port=0`; its first
/// lines name the port) and stopped with the browser. Tests that need it run
/// whenever `chromedriver` and `chromium` are installed (`.ci/run` and
/// `scripts/install-prerequisites` install both); `GATEWAY_BROWSER_TESTS=0`
/// skips them. ChromeDriver gets /dev/null as its standard input: a detached
/// run's may be closed, and ChromeDriver then exited before naming its port
/// (the CI failure of 2026-11-24). A failure to start reports ChromeDriver's
/// own output.
final class HeadlessBrowser: @unchecked Sendable {
    static let driverPath = "/usr/bin/chromedriver"
    static let chromiumPath = "/usr/bin/chromium"

    static var isAvailable: Bool {
        ProcessInfo.processInfo.environment["GATEWAY_BROWSER_TESTS"] != "0"
            && [driverPath, chromiumPath, "/usr/bin/stdbuf"].allSatisfy(FileManager.default.isExecutableFile(atPath:))
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let driver: Process
    private let client = HTTPClient(eventLoopGroupProvider: .singleton)
    private let base: String
    private var session = ""

    private init(driver: Process, port: Int) {
        self.driver = driver
        base = "http://127.0.0.1:\(port)"
    }

    /// One browser at a time in this process: two ChromeDrivers started
    /// together have failed to bind (`Address already in use`), and two
    /// Chromiums on two cores starve the rest of the suite.
    static let turns = Turns()

    actor Turns {
        private var busy = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func acquire() async {
            guard busy else { busy = true; return }
            await withCheckedContinuation { waiting.append($0) }
        }

        func release() {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
    }

    /// Whether this browser still holds the process's turn (released once, by ``quit()``).
    private let holdsTurn = Mutex(true)

    /// Starts ChromeDriver and a headless Chromium session, waiting for the
    /// process's turn; a ChromeDriver that cannot bind is started again (twice).
    static func start() async throws -> HeadlessBrowser {
        await turns.acquire()
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await launch()
            } catch let failure as Failure where failure.description.contains("Address already in use") && attempt < 3 {
                continue
            } catch {
                await turns.release()
                throw error
            }
        }
    }

    /// SIGTERM, then SIGKILL at a 5 s deadline if `driver` is still running;
    /// returns when its termination handler reports it exited (no polling).
    private static func stop(_ driver: Process) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let once = Mutex(Optional(done))
            let finish: @Sendable () -> Void = { once.withLock { $0.take() }?.resume() }
            driver.terminationHandler = { _ in finish() }
            // Exited before the handler was set: nothing will call it.
            guard driver.isRunning else { return finish() }
            let pid = driver.processIdentifier
            driver.terminate()
            DispatchQueue.global().asyncAfter(deadline: .now() + 5) {
                if driver.isRunning { kill(pid, SIGKILL) }
            }
        }
    }

    /// Runs `body` with a browser started for it, and quits the browser
    /// whether `body` returns or throws.
    static func with<T>(_ body: (HeadlessBrowser) async throws -> T) async throws -> T {
        let browser = try await start()
        do {
            let result = try await body(browser)
            await browser.quit()
            return result
        } catch {
            await browser.quit()
            throw error
        }
    }

    /// ChromeDriver and a session, for ``start()`` (which holds the turn).
    private static func launch() async throws -> HeadlessBrowser {
        let driver = Process()
        // Line-buffered: through a pipe, ChromeDriver's stdio would hold back the line naming its port.
        driver.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        driver.arguments = ["-oL", driverPath, "--port=0"]
        // Its own standard input: a detached run's may be closed, and ChromeDriver must not read ours.
        driver.standardInput = FileHandle.nullDevice
        let output = Pipe()
        driver.standardOutput = output
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("chromedriver-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: errors.path, contents: nil)
        driver.standardError = try FileHandle(forWritingTo: errors)
        try driver.run()
        // Blocking reads of its announcement, off the concurrency pool.
        let port: Int? = await withCheckedContinuation { continuation in
            Thread {
                var text = ""
                while let line = Self.readLine(output.fileHandleForReading) {
                    text += line
                    if let range = line.range(of: "started successfully on port ") {
                        continuation.resume(returning: Int(line[range.upperBound...].prefix { $0.isNumber }))
                        return
                    }
                }
                continuation.resume(returning: nil)
            }.start()
        }
        guard let port else {
            if driver.isRunning { kill(driver.processIdentifier, SIGKILL) }
            let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw Failure(description: "chromedriver did not announce its port (exit status \(driver.isRunning ? -1 : driver.terminationStatus)); its stderr: \(said.prefix(2000))")
        }
        let browser = HeadlessBrowser(driver: driver, port: port)
        let created = try await browser.command("POST", "/session", [
            "capabilities": ["alwaysMatch": ["browserName": "chrome", "goog:chromeOptions": [
                "binary": chromiumPath, "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
            ]]],
        ])
        guard let id = (created["value"] as? [String: Any])?["sessionId"] as? String else {
            // Stopped without giving the turn back: start() does, once.
            browser.holdsTurn.withLock { $0 = false }
            await browser.quit()
            throw Failure(description: "chromedriver created no session: \(created)")
        }
        browser.session = id
        return browser
    }

    private static func readLine(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while true {
            let chunk = handle.readData(ofLength: 1)
            guard let byte = chunk.first else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }

    @discardableResult
    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: base + path)
        request.method = .init(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let data = try await response.body.collect(upTo: 16 << 20)
        let json = (try? JSONSerialization.jsonObject(with: Data(buffer: data))) as? [String: Any] ?? [:]
        guard response.status.code < 300 else {
            throw Failure(description: "WebDriver \(method) \(path): HTTP \(response.status.code) \(String((json["value"] as? [String: Any])?["message"] as? String ?? "").prefix(300))")
        }
        return json
    }

    /// Loads `url` and waits for the page (WebDriver waits for the load).
    func open(_ url: String) async throws {
        try await command("POST", "/session/\(session)/url", ["url": url])
    }

    private func element(_ css: String) async throws -> String {
        let found = try await command("POST", "/session/\(session)/element", ["using": "css selector", "value": css])
        guard let value = found["value"] as? [String: Any], let id = value.values.first as? String else {
            throw Failure(description: "no element \(css)")
        }
        return id
    }

    /// Clicks the element `css` (a button submits its form; the next page loads).
    func click(_ css: String) async throws {
        try await command("POST", "/session/\(session)/element/\(try await element(css))/click", [:])
    }

    /// Types `text` into the field `css`.
    func type(_ css: String, _ text: String) async throws {
        try await command("POST", "/session/\(session)/element/\(try await element(css))/value", ["text": text])
    }

    /// The page's URL now (after redirects).
    func currentURL() async throws -> String {
        (try await command("GET", "/session/\(session)/url")["value"] as? String) ?? ""
    }

    /// The page's URL once it starts with `prefix`: a click that submits a
    /// form returns when ChromeDriver has sent it, and under load the
    /// navigation it starts (a POST, then the server's redirect) may not
    /// have committed yet. Asks again until the browser reports the awaited
    /// page or `seconds` pass, then answers what it last saw.
    func url(startingWith prefix: String, within seconds: Int = 30) async throws -> String {
        try await awaiting(within: seconds, { try await currentURL() }, until: { $0.hasPrefix(prefix) })
    }

    /// The page's HTML once it contains `text` (or what it last saw after
    /// `seconds`), for the same reason as ``url(startingWith:within:)``.
    func source(containing text: String, within seconds: Int = 30) async throws -> String {
        try await awaiting(within: seconds, { try await source() }, until: { $0.contains(text) })
    }

    private func awaiting(within seconds: Int, _ read: () async throws -> String,
                          until done: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var seen = try await read()
        while !done(seen), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            seen = try await read()
        }
        return seen
    }

    /// The page's HTML now.
    func source() async throws -> String {
        (try await command("GET", "/session/\(session)/source")["value"] as? String) ?? ""
    }

    /// Ends the session, then ChromeDriver.
    func quit() async {
        if !session.isEmpty { _ = try? await command("DELETE", "/session/\(session)") }
        try? await client.shutdown()
        // Asked to stop (it closes its Chromium), then killed if it has not
        // exited within 5 s: ChromeDriver has outlived SIGTERM here, one per
        // test. Awaited through its termination handler, not waitUntilExit,
        // which would block a thread of the concurrency pool.
        await Self.stop(driver)
        let held = holdsTurn.withLock { held in
            defer { held = false }
            return held
        }
        if held { await Self.turns.release() }
    }
}
