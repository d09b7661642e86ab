import Foundation

/// What /proc says about processes the tests did not start themselves (an
/// isolated adapter's runner, started by a host).
public enum ProcessTable {
    /// Running: present and not a zombie waiting for whoever adopted it.
    public static func isRunning(_ pid: Int32) -> Bool {
        guard let (_, fields) = stat(pid) else { return false }
        return fields.first != "Z"
    }

    /// The processes named `name` whose parent is `pid`.
    public static func children(of pid: Int32, named name: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { candidate in
            guard let (command, fields) = stat(candidate) else { return false }
            return command == name && fields.count > 1 && Int32(fields[1]) == pid
        }
    }

    /// The running processes named `name` (their command name, as PR_SET_NAME sets it).
    public static func named(_ name: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { candidate in
            guard let (command, fields) = stat(candidate) else { return false }
            return command == name && fields.first != "Z"
        }
    }

    /// `/proc/<pid>/stat`: the command name and the fields after it (state first).
    private static func stat(_ pid: Int32) -> (String, [Substring])? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return (String(text[text.index(after: open)..<close]), fields)
    }
}
