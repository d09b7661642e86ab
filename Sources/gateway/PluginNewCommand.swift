import ArgumentParser
import Foundation

/// `gateway plugin new ID --lang c [--dir D]`: a compiling adapter to start
/// from, with its manifest and a README holding the one build line and the
/// one check line. The C skeleton is the shipped example-c (every rule of the
/// header kept: strict JSON, idempotency keys, exactly-once completion from a
/// thread of its own), renamed, beside the header it is built against; its
/// manifest runs it in a process of its own, so a crash while it is young
/// costs a call, not the host.
struct PluginNew: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new", abstract: "Write a compiling skeleton adapter, its manifest and a README with the build and check lines.")

    enum Language: String, ExpressibleByArgument, CaseIterable { case c }

    @Argument(help: "The adapter's id: lower-case letters, digits and dashes, starting with a letter or digit (at most 63).")
    var id: String
    @Option(name: .long, help: "The language of the skeleton: \(Language.allCases.map(\.rawValue).joined(separator: ", ")).")
    var lang: Language
    @Option(name: .long, help: "The folder to write (created; must not exist or be empty). Default: ./ID")
    var dir: String?

    func run() throws {
        guard id.range(of: #"^[a-z0-9][a-z0-9-]{0,62}$"#, options: .regularExpression) != nil else {
            throw ValidationError("the id \"\(id)\" is not valid: use 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit")
        }
        let folder = URL(fileURLWithPath: dir ?? id)
        let manager = FileManager.default
        if let existing = try? manager.contentsOfDirectory(atPath: folder.path), !existing.isEmpty {
            throw ValidationError("\(folder.path) exists and is not empty: choose another --dir")
        }
        try manager.createDirectory(at: folder, withIntermediateDirectories: true)
        let files = SkeletonC(id: id).files
        for (name, contents) in files {
            try Data(contents.utf8).write(to: folder.appendingPathComponent(name), options: .withoutOverwriting)
        }
        print("wrote \(files.map(\.name).joined(separator: ", ")) to \(folder.path)")
        print("build: cd \(folder.path) && \(SkeletonC.buildLine(id))")
        print("check: gateway plugin check \(folder.appendingPathComponent("\(id).json").path)")
    }
}

/// The C skeleton's files.
struct SkeletonC {
    var id: String

    static func library(_ id: String) -> String { "lib\(id).so" }

    /// What the README says to run, in the skeleton's folder.
    static func buildLine(_ id: String) -> String {
        "cc -std=c99 -O2 -shared -fPIC -pthread -fvisibility=hidden -Wl,-z,defs -I . \(id).c -o \(library(id))"
    }

    var files: [(name: String, contents: String)] {
        [
            ("gateway_abi.h", String(decoding: PackageResources.gateway_abi_h_txt, as: UTF8.self)),
            ("\(id).c", String(decoding: PackageResources.example_c_c_txt, as: UTF8.self)
                .replacingOccurrences(of: "example_c.c", with: "\(id).c")
                .replacingOccurrences(of: "example-c", with: id)),
            ("\(id).json", manifest),
            ("README.md", readme),
        ]
    }

    /// The shipped example-c manifest, made this adapter's: its id, its
    /// library beside it, disabled, in a process of its own.
    var manifest: String {
        var object = (try? JSONSerialization.jsonObject(with: Data(PackageResources.example_c_json_txt))) as? [String: Any] ?? [:]
        object["id"] = id
        object["description"] = "\(id): a payment adapter in C, from gateway_abi.h alone (gateway plugin new)."
        object["library"] = "./\(Self.library(id))"
        object["enabled"] = false
        object["isolation"] = "process"
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    var readme: String {
        """
        # \(id)

        A payment adapter in C99 and pthreads, built against `gateway_abi.h` alone
        (the whole contract with the host). It starts as a copy of the gateway's
        example-c: a simulated provider that approves `visa` authorizations up to
        `decline_above` minor units, answers `verify`, keeps idempotency keys,
        refuses malformed JSON, and completes every call exactly once from a thread
        of its own. Replace the simulation in `authorize_worker` and `verify` with
        your provider's API (through the host's `http_send`, to hosts you list in
        the manifest's `egress`).

        Build (one line, in this folder):

        ```sh
        \(Self.buildLine(id))
        ```

        Check (one line: the host's conformance check, which tries to break it):

        ```sh
        gateway plugin check \(id).json
        ```

        The manifest is `enabled: false` (a host watching this folder does not
        route to it yet) and `isolation: process` (a crash costs a call, not the
        host). Read `docs/plugin-authors.md` in the gateway's repository for the
        rules, and the header's opening comment for every guarantee.

        """
    }
}
