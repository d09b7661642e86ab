import Foundation
@testable import PluginHost
import Testing

/// Process isolation is the default from file format 1.2: a manifest that
/// does not say runs in a process of its own; an older one keeps the
/// meaning it was written with (in process), and in process is always
/// something a manifest can say.
@Suite struct ManifestIsolationDefaultTests {
    static func manifest(format: String, members: String = "") -> Data {
        Data("""
            {"file_format_version": "\(format)", "id": "acme", "version": "1.0.0", "enabled": true, "mode": "test",
             "library": "libAcme.so", "abi": {"major": 1, "minor": 0}, "methods": ["visa"],
             "currencies": ["SAR"], "countries": ["SA"], "operations": ["authorize"]\(members)}
            """.utf8)
    }

    static func valid(_ data: Data) throws -> Manifest {
        guard case .valid(let manifest) = ManifestValidator.validate(data) else {
            Issue.record("not valid: \(ManifestValidator.validate(data))")
            throw CancellationError()
        }
        return manifest
    }

    @Test(arguments: [("1.2.0", Manifest.Isolation.process), ("1.10.0", .process), ("1.1.0", .inProcess), ("1.0.0", .inProcess), ("1.01.0", .inProcess)])
    func aManifestThatDoesNotSayRunsWhereItsFormatSays(format: String, isolation: Manifest.Isolation) throws {
        let manifest = try Self.valid(Self.manifest(format: format))
        #expect(manifest.isolation == isolation)
        #expect(manifest.isolationByDefault)
    }

    @Test func inProcessIsSaid() throws {
        let manifest = try Self.valid(Self.manifest(format: "1.2.0", members: #", "isolation": "in-process""#))
        #expect(manifest.isolation == .inProcess && !manifest.isolationByDefault)
    }

    /// The members that apply to process isolation apply to its default too.
    @Test func theDefaultTakesTheIsolatedMembers() throws {
        let manifest = try Self.valid(Self.manifest(format: "1.2.0", members: #", "sandbox_exceptions": ["ipc"], "limits": {"memory_mb": 256}"#))
        #expect(manifest.isolation == .process && manifest.sandboxExceptions == [.ipc] && manifest.limits.memoryMegabytes == 256)
        guard case .invalid(let problems, _) = ManifestValidator.validate(Self.manifest(format: "1.1.0", members: #", "sandbox_exceptions": ["ipc"]"#)) else {
            Issue.record("sandbox_exceptions on a 1.1 manifest in process")
            return
        }
        #expect(problems.map(\.path) == ["$.sandbox_exceptions"])
    }

    /// The filesystem layer needs the pid layer (a /proc of its own): an
    /// exception of pid alone could never start, and is refused at once.
    @Test func exceptingPidAloneIsRefused() throws {
        guard case .invalid(let problems, _) = ManifestValidator.validate(Self.manifest(format: "1.2.0", members: #", "sandbox_exceptions": ["pid"]"#)) else {
            Issue.record("pid excepted without filesystem was accepted")
            return
        }
        #expect(problems.map(\.path) == ["$.sandbox_exceptions"])
        #expect(problems.first?.message.contains("\"pid\" needs \"filesystem\"") == true, "\(problems)")
    }
}
