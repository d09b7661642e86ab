import CHostSupport
import Foundation
import Synchronization

/// A cgroup v2 leaf of its own for every runner, where the host can make one.
///
/// Shape: the host's own cgroup (from `/proc/self/cgroup`, under the cgroup2
/// mount) gets a folder `gateway-<host pid>`, and each runner a leaf below it,
/// `<adapter>-<n>`. The runner joins its leaf first thing, before it forks or
/// builds its sandbox (its constructor writes itself into the leaf's
/// `cgroup.procs`, a descriptor the host opened), so everything it ever
/// starts is in the leaf too. Where the hierarchy delegates them, the leaf
/// carries the limits: `pids.max` (every thread and process counts),
/// `memory.max` from `memory_mb` (shared mappings and `/tmp` included, which
/// `RLIMIT_DATA` does not see) and no swap. When the runner ends the host
/// kills whatever is left in the leaf (`cgroup.kill`) and removes it.
///
/// Where the host cannot make a leaf (no cgroup v2, a hierarchy it may not
/// write, controllers not delegated), the adapter still starts: the report
/// says which limits are not there and why, and the rlimits and the syscall
/// filter (no process of its own) hold instead. Run the host as the shipped
/// systemd unit (`Delegate=pids memory`) to have them all.
package final class RunnerCgroups: Sendable {
    /// The controllers a leaf's limits need.
    static let wanted = ["pids", "memory"]
    /// `pids.max` of a leaf: threads and processes of one runner, together.
    package static let pidsMax = 1024

    package static let shared = RunnerCgroups()

    /// Where leaves go, or why there are none.
    let parent: Result<Parent, Unavailable>
    private let counter = Atomic<Int>(0)

    struct Parent: Sendable {
        /// The folder in the file system (`/sys/fs/cgroup/…/gateway-<pid>`).
        var directory: String
        /// Its path in the hierarchy (`/…/gateway-<pid>`), as /proc/<pid>/cgroup shows it.
        var path: String
        /// The wanted controllers a leaf has.
        var controllers: [String]
        /// Why a wanted controller is not there, when one is not.
        var missing: String?
    }

    struct Unavailable: Error, Sendable {
        var reason: String
    }

    private init() {
        parent = Self.prepare()
    }

    private static func prepare() -> Result<Parent, Unavailable> {
        guard let mount = Self.cgroup2Mount() else {
            return .failure(.init(reason: "this host has no cgroup v2 hierarchy mounted"))
        }
        guard let path = Self.ownPath(of: "self") else {
            return .failure(.init(reason: "this process is in no cgroup v2 group (/proc/self/cgroup has no \"0::\" line)"))
        }
        let home = mount + (path == "/" ? "" : path)
        // A group is the host's to arrange only when it was handed to it: the
        // hierarchy's root (a container's, or a host's run as root), or a group
        // delegated to it (systemd's Delegate= marks it; a group chowned to an
        // unprivileged user is its own). Another process's group is not ours.
        if path != "/", !isDelegated(home) {
            return .failure(.init(reason: "the host's cgroup \(path) is not delegated to it (run it as the shipped systemd unit does, with Delegate=pids memory)"))
        }
        removeStale(under: home)
        let name = "gateway-\(getpid())"
        let directory = home + "/" + name
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            return .failure(.init(reason: "cannot make \(directory): \(String(cString: strerror(errno))) (run the host with its cgroup delegated, as the shipped systemd unit does)"))
        }
        let offered = Set(read(home + "/cgroup.controllers").split(separator: " ").map(String.init))
        let absent = wanted.filter { !offered.contains($0) }
        var enabled = wanted.filter { offered.contains($0) }
        var missing: [String] = []
        if !absent.isEmpty {
            missing.append("\(absent.joined(separator: " and ")) not delegated to \(path) (it offers: \(offered.sorted().joined(separator: " ").isEmpty ? "none" : offered.sorted().joined(separator: " ")))")
        }
        if !enabled.isEmpty {
            let change = enabled.map { "+" + $0 }.joined(separator: " ")
            // Enabled on the host's own group for its new child, then on that
            // child for its leaves. A group that holds processes (the host's,
            // where it is not the root) may not enable controllers for its
            // children: the host then moves itself into a leaf of its own.
            var failure = write(change, to: home + "/cgroup.subtree_control")
            if failure == EBUSY, path != "/" {
                let hostLeaf = home + "/gateway-host-\(getpid())"
                if mkdir(hostLeaf, 0o755) == 0 || errno == EEXIST, write("0", to: hostLeaf + "/cgroup.procs") == 0 {
                    failure = write(change, to: home + "/cgroup.subtree_control")
                }
            }
            if failure == 0 { failure = write(change, to: directory + "/cgroup.subtree_control") }
            if failure != 0 {
                missing.append("\(enabled.joined(separator: " and ")) could not be enabled for the leaves: \(String(cString: strerror(failure)))")
                enabled = []
            }
        }
        // An empty folder is all a host leaves behind (its runners die with
        // it); removed at exit, or by the next host that starts here.
        atexit {
            guard case .success(let parent) = RunnerCgroups.shared.parent else { return }
            // Leaves whose runners are gone are empty and go; one still being reaped stays for the next host's sweep.
            for leaf in (try? FileManager.default.contentsOfDirectory(atPath: parent.directory)) ?? [] {
                rmdir(parent.directory + "/" + leaf)
            }
            rmdir(parent.directory)
        }
        return .success(Parent(directory: directory, path: (path == "/" ? "" : path) + "/" + name, controllers: enabled,
                               missing: missing.isEmpty ? nil : missing.joined(separator: "; ")))
    }

    /// A leaf for one runner of `adapter`, with the limits the manifest and
    /// the delegated controllers allow; nil with why not.
    func leaf(for adapter: String, limits: Manifest.Limits) -> Result<RunnerCgroup, Unavailable> {
        let parent: Parent
        switch self.parent {
        case .success(let ready): parent = ready
        case .failure(let unavailable): return .failure(unavailable)
        }
        let safe = String(adapter.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }.prefix(40))
        // A leaf left by an earlier host of the same pid (a container's pid 1) is skipped, never reused.
        var name = "", directory = ""
        var made = false
        for _ in 0..<1_000 {
            name = "\(safe)-\(counter.add(1, ordering: .relaxed).newValue)"
            directory = parent.directory + "/" + name
            if mkdir(directory, 0o755) == 0 { made = true; break }
            guard errno == EEXIST else { break }
        }
        guard made else {
            return .failure(.init(reason: "cannot make \(directory): \(String(cString: strerror(errno)))"))
        }
        var applied: [String] = []
        var missing = parent.missing.map { [$0] } ?? []
        func limit(_ file: String, _ value: String, _ shown: String) {
            let failure = Self.write(value, to: directory + "/" + file)
            if failure == 0 { applied.append(shown) } else { missing.append("\(file) not set: \(String(cString: strerror(failure)))") }
        }
        if parent.controllers.contains("pids") { limit("pids.max", "\(Self.pidsMax)", "pids ≤ \(Self.pidsMax)") }
        if parent.controllers.contains("memory") {
            if let megabytes = limits.memoryMegabytes {
                limit("memory.max", "\(megabytes << 20)", "memory ≤ \(megabytes) MiB with shared mappings and /tmp")
                if FileManager.default.fileExists(atPath: directory + "/memory.swap.max") { limit("memory.swap.max", "0", "no swap") }
            } else {
                applied.append("memory counted (no memory_mb)")
            }
        }
        let procs = open(directory + "/cgroup.procs", O_WRONLY | O_CLOEXEC)
        guard procs >= 0 else {
            let reason = "cannot open \(directory)/cgroup.procs: \(String(cString: strerror(errno)))"
            rmdir(directory)
            return .failure(.init(reason: reason))
        }
        return .success(RunnerCgroup(directory: directory, path: parent.path + "/" + name, procsFD: procs,
                                     limits: applied, missing: missing.isEmpty ? nil : missing.joined(separator: "; ")))
    }

    // MARK: The file system

    /// Where cgroup2 is mounted (the first such mount in /proc/self/mountinfo).
    private static func cgroup2Mount() -> String? {
        for line in read("/proc/self/mountinfo").split(separator: "\n") {
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
            let fields = halves[0].split(separator: " ")
            guard fields.count > 4, fields[3] == "/" else { continue }
            return String(fields[4])
        }
        return nil
    }

    /// `pid`'s path in the v2 hierarchy (`self` for this process).
    static func ownPath(of pid: String) -> String? {
        for line in read("/proc/\(pid)/cgroup").split(separator: "\n") where line.hasPrefix("0::") {
            return String(line.dropFirst(3))
        }
        return nil
    }

    /// Whether `directory` (a cgroup) was delegated to this process: systemd's
    /// `trusted.delegate` or `user.delegate` mark, or owned by this
    /// (unprivileged) user.
    private static func isDelegated(_ directory: String) -> Bool {
        for name in ["trusted.delegate", "user.delegate"] where gw_host_has_xattr(directory, name) != 0 {
            return true
        }
        var status = stat()
        return geteuid() != 0 && stat(directory, &status) == 0 && status.st_uid == geteuid()
    }

    /// Folders left by hosts that are gone (their runners died with them).
    private static func removeStale(under home: String) {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: home)) ?? [] where entry.hasPrefix("gateway-") {
            guard let last = entry.split(separator: "-").last, let pid = Int32(last), pid != getpid(),
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            let folder = home + "/" + entry
            for leaf in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: folder + "/" + leaf, isDirectory: &isFolder), isFolder.boolValue {
                    _ = write("1", to: folder + "/" + leaf + "/cgroup.kill")
                    rmdir(folder + "/" + leaf)
                }
            }
            rmdir(folder)
        }
    }

    static func read(_ path: String) -> String {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// 0, or the errno of the failed open or write.
    @discardableResult
    static func write(_ text: String, to path: String) -> Int32 {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        let written = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        return written < 0 ? errno : 0
    }
}

/// One runner's leaf: the descriptor the runner joins it through, and what
/// it limits.
package final class RunnerCgroup: Sendable {
    /// The folder in the file system.
    let directory: String
    /// Its path in the hierarchy.
    let path: String
    /// `cgroup.procs`, opened by the host: handed to the runner, closed once spawned.
    let procsFD: Int32
    let limits: [String]
    let missing: String?
    private let released = Atomic<Bool>(false)

    init(directory: String, path: String, procsFD: Int32, limits: [String], missing: String?) {
        self.directory = directory
        self.path = path
        self.procsFD = procsFD
        self.limits = limits
        self.missing = missing
    }

    /// Closes the host's copy of `cgroup.procs` (after the spawn).
    func handedOver() {
        close(procsFD)
    }

    /// Whether `pid` is in this leaf, as /proc shows it.
    func holds(_ pid: pid_t) -> Bool {
        RunnerCgroups.ownPath(of: "\(pid)") == path
    }

    /// SIGKILL to everything in the leaf (anything the runner started in a
    /// session or group of its own included): `cgroup.kill` where the kernel
    /// has it (5.14), else each process `cgroup.procs` lists.
    func killAll() {
        guard RunnerCgroups.write("1", to: directory + "/cgroup.kill") != 0 else { return }
        for line in RunnerCgroups.read(directory + "/cgroup.procs").split(separator: "\n") {
            if let pid = pid_t(line), pid > 0 { kill(pid, SIGKILL) }
        }
    }

    /// Kills what is left and removes the leaf, once it is empty (the kernel
    /// takes a moment to reap what `cgroup.kill` ended).
    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for _ in 0..<200 {
            killAll()
            if rmdir(directory) == 0 || errno == ENOENT { return }
            guard errno == EBUSY else { break }
            usleep(5_000)
        }
        // Left for the next host to remove (its stale sweep) once empty.
    }

    /// What the report says of it.
    func report(adapter: pid_t) -> SandboxReport.Resources {
        guard holds(adapter) else {
            return .init(cgroup: nil, limits: [], reason: "the runner did not join its cgroup leaf \(path) (it is in \(RunnerCgroups.ownPath(of: "\(adapter)") ?? "none")); rlimits only")
        }
        return .init(cgroup: path, limits: limits, reason: missing.map { "\($0); rlimits and the syscall filter instead" })
    }
}
