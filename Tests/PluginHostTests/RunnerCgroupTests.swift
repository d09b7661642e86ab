import Foundation
import Glibc
import TestSupport
import Testing
@testable import PluginHost

/// Resources that add up (issue 33, item 4): every runner in a cgroup v2
/// leaf of its own where the host can make one, and a report of what bounds
/// it where the host cannot. Run on the kernel itself, not a stand-in.
@Suite(.heavy) struct RunnerCgroupTests {
    /// Whether this host can make leaves at all (a writable cgroup2 hierarchy).
    static var leavesHere: Bool {
        if case .success = RunnerCgroups.shared.parent { return true }
        return false
    }

    /// The runner and the process that runs the adapter are in the leaf the
    /// report names; the limits it carries are the ones the hierarchy
    /// delegates, and what it cannot carry is said with why; the leaf is
    /// gone once the runner is.
    @Test func eachRunnerLivesInALeafOfItsOwnThatGoesWithIt() async throws {
        let suite = try await ChaosFixture.make(isolation: .process)
        let report = try #require(suite.chaos.sandbox)
        let resources = try #require(report.resources, "\(report)")
        switch RunnerCgroups.shared.parent {
        case .failure(let unavailable):
            #expect(resources.cgroup == nil)
            #expect(resources.reason?.contains(unavailable.reason) == true, "\(resources)")
            #expect(resources.reason?.contains("rlimits") == true, "\(resources)")
        case .success(let parent):
            let leaf = try #require(resources.cgroup, "\(resources)")
            #expect(leaf.hasPrefix(parent.path + "/chaos-"), "\(leaf)")
            let runner = try #require(suite.runner?.runnerPID)
            let adapter = try #require(suite.runner?.adapterPID)
            #expect(RunnerCgroups.ownPath(of: "\(runner)") == leaf, "the runner as spawned")
            #expect(RunnerCgroups.ownPath(of: "\(adapter)") == leaf, "the process that runs the adapter")
            #expect(report.description.contains("cgroup leaf \(leaf)"), "\(report)")
            let directory = parent.directory + "/" + (leaf as NSString).lastPathComponent
            #expect(FileManager.default.fileExists(atPath: directory))
            if parent.controllers.contains("pids") {
                #expect(RunnerCgroups.read(directory + "/pids.max") == "\(RunnerCgroups.pidsMax)")
                #expect(resources.limits.contains("pids ≤ \(RunnerCgroups.pidsMax)"), "\(resources)")
            } else {
                #expect(resources.reason?.contains("pids") == true && resources.reason?.contains("not delegated") == true, "\(resources)")
            }
            if !parent.controllers.contains("memory") {
                #expect(resources.reason?.contains("memory") == true, "\(resources)")
            }
            #expect(await suite.chaos.shutdown(grace: .seconds(5)))
            #expect(try await waitUntil { !FileManager.default.fileExists(atPath: directory) }, "the leaf outlived its runner")
            await suite.mock.shutdown(grace: .seconds(2))
            return
        }
        await suite.shutdown()
    }

    /// Without the syscalls and pid layers (an operator's exceptions), an
    /// adapter can start a process in a session and group of its own, which
    /// no process-group kill reaches and no PID namespace ends. The leaf
    /// does: everything in it dies with the runner.
    @Test(.enabled(if: leavesHere, "this host cannot make cgroup v2 leaves (the report says why)"))
    func aProcessOutsideTheRunnersGroupAndNamespaceStillEndsWithIt() async throws {
        let suite = try await ChaosFixture.make(isolation: .process, sandboxExceptions: ["syscalls", "pid", "filesystem"])
        let name = "gwc-\(UUID().uuidString.prefix(8))"
        defer { for pid in ProcessTable.named(name) { kill(pid, SIGKILL) } }
        #expect(await SandboxTests.attack(suite, "orphan", ["name": name]) == "started")
        #expect(try await waitUntil { ProcessTable.named(name).count == 1 }, "the grandchild runs")
        let orphan = try #require(ProcessTable.named(name).first)
        let leaf = try #require(suite.chaos.sandbox?.resources?.cgroup)
        #expect(RunnerCgroups.ownPath(of: "\(orphan)") == leaf, "born in the leaf")
        #expect(getpgid(orphan) != getpgid(try #require(suite.runner?.runnerPID)), "outside the runner's process group")
        #expect(await suite.chaos.shutdown(grace: .seconds(5)))
        #expect(try await waitUntil { !ProcessTable.isRunning(orphan) }, "it outlived its runner: \(ProcessTable.named(name))")
        await suite.mock.shutdown(grace: .seconds(2))
    }
}
