import CheckoutEngine
import PaymentGateway
import Foundation
import GatewayPayloads
import PluginHost

/// `gateway serve`'s first start: with no API key at all, a test key is made
/// and its secret written to `<data>/test-api-key` (mode 0600), where the
/// README's walkthrough and the scripts read it.
///
/// The file is written (atomically and durably: ``AtomicFile``) before the
/// key is recorded: a crash between the two leaves a file and no key, and
/// the next start, finding no key, makes another and replaces the file. The
/// other order could leave a key whose secret nobody has. Once any key exists
/// (made here or by `gateway keys create`), the file is never touched again.
enum FirstTestKey {
    static let fileName = "test-api-key"

    enum Outcome {
        /// A test key was made; its secret is in the file.
        case created(URL, APIKeyRecord)
        /// Keys exist already; the file from a first start, if it is still there.
        case existing(URL?)
    }

    static func ensure(keys: APIKeys, data: URL) async throws -> Outcome {
        let file = data.appendingPathComponent(fileName)
        guard try await keys.list().isEmpty else {
            return .existing(FileManager.default.fileExists(atPath: file.path) ? file : nil)
        }
        let issued = APIKeys.newKey(mode: .test, name: "first start of gateway serve")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        try AtomicFile.write(Data((issued.secret + "\n").utf8), to: file, permissions: 0o600)
        try await keys.record(issued)
        return .created(file, issued.record)
    }
}
