import ArgumentParser
import Foundation
import GatewayPayloads

/// `gateway plugin new ID --lang c|swift|swift-header|rust|go [--dir D]`: a
/// compiling adapter to start from, with its manifest and a README holding
/// the one build line and the one check line. Each skeleton is a shipped
/// example, renamed (every rule of the header kept: strict JSON, idempotency
/// keys, exactly-once completion from a thread of its own): C is example-c
/// beside the header it is built against; Swift is swift-skeleton, a SwiftPM
/// package on the adapter SDK (`GatewayAdapterSDK`: one method per
/// operation, `ProviderHTTPClient`), which depends on the gateway's checkout
/// by path (`--sdk`); swift-header is example-swift beside the header and a
/// module map (no SDK, no Foundation: one `swiftc` line); Rust is
/// example-rust (a cargo crate, `#[repr(C)]` declarations by hand, panics
/// caught at the boundary); Go is example-go (cgo, `-buildmode=c-shared`, a
/// panic barrier at every export, the work on goroutines, strict JSON with
/// the standard library). The manifest runs it in a process of its own, so
/// a crash while it is young costs a call, not the host.
struct PluginNew: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new", abstract: "Write a compiling skeleton adapter, its manifest and a README with the build and check lines.")

    enum Language: String, ExpressibleByArgument, CaseIterable {
        case c, swift, swiftHeader = "swift-header", rust, go
    }

    @Argument(help: "The adapter's id: lower-case letters, digits and dashes, starting with a letter or digit (at most 63).")
    var id: String
    @Option(name: .long, help: "The language of the skeleton: \(Language.allCases.map(\.rawValue).joined(separator: ", ")).")
    var lang: Language
    @Option(name: .long, help: "The folder to write (created; must not exist or be empty). Default: ./ID")
    var dir: String?
    @Option(name: .long, help: "--lang swift: the gateway's checkout, whose GatewayAdapterSDK the package depends on. Default: the checkout this gateway was built from.")
    var sdk: String?

    /// The checkout this executable was built from (where its sources were).
    static var builtFrom: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    func skeleton() throws -> any Skeleton {
        switch lang {
        case .c: return SkeletonC(id: id)
        case .swiftHeader: return SkeletonSwift(id: id)
        case .rust: return SkeletonRust(id: id)
        case .go: return SkeletonGo(id: id)
        case .swift:
            let checkout = sdk.map { URL(fileURLWithPath: $0, isDirectory: true).standardizedFileURL } ?? Self.builtFrom
            let sdkSources = checkout.appendingPathComponent("Sources/GatewayAdapterSDK")
            guard FileManager.default.fileExists(atPath: checkout.appendingPathComponent("Package.swift").path),
                  FileManager.default.fileExists(atPath: sdkSources.path) else {
                throw ValidationError("\(checkout.path) is not a checkout of the gateway (no Package.swift with Sources/GatewayAdapterSDK): give --sdk the folder of one")
            }
            return SkeletonSwiftPackage(id: id, sdk: checkout)
        }
    }

    func run() throws {
        guard id.range(of: #"^[a-z0-9][a-z0-9-]{0,62}$"#, options: .regularExpression) != nil else {
            throw ValidationError("the id \"\(id)\" is not valid: use 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit")
        }
        let skeleton = try skeleton()
        let folder = URL(fileURLWithPath: dir ?? id)
        let manager = FileManager.default
        if let existing = try? manager.contentsOfDirectory(atPath: folder.path), !existing.isEmpty {
            throw ValidationError("\(folder.path) exists and is not empty: choose another --dir")
        }
        try manager.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, contents) in skeleton.files {
            let file = folder.appendingPathComponent(name)
            try manager.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: file, options: .withoutOverwriting)
        }
        print("wrote \(skeleton.files.map(\.name).joined(separator: ", ")) to \(folder.path)")
        print("build: cd \(folder.path) && \(skeleton.buildLine)")
        print("check: gateway plugin check \(folder.appendingPathComponent("\(id).json").path)")
    }
}

/// A skeleton: its files (paths inside the folder), and the one line that
/// builds it there (its README says the same).
protocol Skeleton {
    var id: String { get }
    var buildLine: String { get }
    var files: [(name: String, contents: String)] { get }
}

extension Skeleton {
    /// A shipped example's manifest made this adapter's: its id, its library,
    /// disabled, in a process of its own.
    func manifest(from example: Data, library: String, language: String, on base: String = "gateway_abi.h alone", dropConfig: [String] = []) -> String {
        var object = (try? JSONValue.parseDocument(example))?.objectValue ?? [:]
        if case .object(var config)? = object["config"] {
            for name in dropConfig { config[name] = nil }
            object["config"] = .object(config)
        }
        object["id"] = .string(id)
        object["description"] = .string("\(id): a payment adapter in \(language), on \(base) (gateway plugin new).")
        object["library"] = .string(library)
        object["enabled"] = .bool(false)
        object["isolation"] = .string("process")
        return String(decoding: JSONPretty.indented(JSONValue.object(object).jsonBytes()), as: UTF8.self) + "\n"
    }

    /// The README's build and check lines and its closing paragraph, the
    /// same for every language (the suite runs the lines as written).
    var readmeBuildAndCheck: String {
        """
        Build (one line, in this folder):

        ```sh
        \(buildLine)
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

/// The C skeleton's files.
struct SkeletonC: Skeleton {
    var id: String

    static func library(_ id: String) -> String { "lib\(id).so" }

    /// What the README says to run, in the skeleton's folder.
    var buildLine: String {
        "cc -std=c99 -O2 -shared -fPIC -pthread -fvisibility=hidden -Wl,-z,defs -I . \(id).c -o \(Self.library(id))"
    }

    var files: [(name: String, contents: String)] {
        [
            ("gateway_abi.h", String(decoding: PackageResources.gateway_abi_h_txt, as: UTF8.self)),
            ("\(id).c", String(decoding: PackageResources.example_c_c_txt, as: UTF8.self)
                .replacingOccurrences(of: "example_c.c", with: "\(id).c")
                .replacingOccurrences(of: "example-c", with: id)),
            ("\(id).json", manifest(from: Data(PackageResources.example_c_json_txt), library: "./\(Self.library(id))", language: "C")),
            ("README.md", readme),
        ]
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

        \(readmeBuildAndCheck)

        """
    }
}

/// The Rust skeleton's files: the example-rust crate, renamed.
struct SkeletonRust: Skeleton {
    var id: String

    /// The crate's name: the id with underscores, prefixed `gw_` where cargo
    /// would refuse it (a leading digit, a keyword, a name of Rust's own).
    var crate: String {
        let name = id.replacingOccurrences(of: "-", with: "_")
        return name.first?.isNumber == true || Self.reserved.contains(name) ? "gw_\(name)" : name
    }

    static let reserved: Set<String> = [
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn", "for", "if",
        "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "static", "struct", "super",
        "trait", "true", "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
        "priv", "typeof", "unsized", "virtual", "yield", "try", "std", "core", "alloc", "test", "proc_macro", "build", "deps",
        "examples", "incremental", "nul", "con", "aux", "prn",
    ]

    var buildLine: String { "cargo build --release" }

    var files: [(name: String, contents: String)] {
        func renamed(_ bytes: [UInt8]) -> String {
            String(decoding: bytes, as: UTF8.self)
                .replacingOccurrences(of: "example_rust", with: crate)
                .replacingOccurrences(of: "example-rust", with: id)
        }
        return [
            ("Cargo.toml", renamed(PackageResources.rust_Cargo_toml_txt)),
            (".gitignore", "/target/\n/Cargo.lock\n"),
            ("src/lib.rs", renamed(PackageResources.rust_lib_rs_txt)),
            ("src/abi.rs", renamed(PackageResources.rust_abi_rs_txt)),
            ("src/boundary.rs", renamed(PackageResources.rust_boundary_rs_txt)),
            ("src/adapter.rs", renamed(PackageResources.rust_adapter_rs_txt)),
            ("src/provider.rs", renamed(PackageResources.rust_provider_rs_txt)),
            ("src/json.rs", renamed(PackageResources.rust_json_rs_txt)),
            ("\(id).json", manifest(from: Data(PackageResources.example_rust_json_txt),
                                    library: "./target/release/lib\(crate).so", language: "Rust", dropConfig: ["scenarios"])),
            ("README.md", readme),
        ]
    }

    var readme: String {
        """
        # \(id)

        A payment adapter in Rust, built against the gateway's `gateway_abi.h`
        alone: the header's tables are declared by hand as `#[repr(C)]` types in
        `src/abi.rs`, and it uses no crates. It starts as a copy of the gateway's
        example-rust: a simulated provider (`src/provider.rs`) that authorizes
        `visa` payments (automatic or manual capture) up to `decline_above`
        minor units, captures, refunds, voids and verifies them, keeps
        idempotency keys, refuses malformed JSON, and completes every call
        exactly once from a thread of its own. All `unsafe` code is in
        `src/boundary.rs`, which catches every panic before it reaches the host.
        Replace the simulation with your provider's API (through the host's
        `http_send`, to hosts you list in the manifest's `egress`).

        The library it builds is `target/release/lib\(crate).so`.

        \(readmeBuildAndCheck)

        """
    }
}

/// The Swift skeleton's files: example-swift renamed, beside the header and a
/// module map that makes it the C module `CGatewayABI` the source imports.
struct SkeletonSwift: Skeleton {
    var id: String

    /// The Swift module's name: the id in UpperCamelCase, prefixed `Adapter`
    /// where it would not do (a leading digit, a module the source imports or
    /// the toolchain ships).
    var module: String {
        let name = id.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        return name.first?.isNumber == true || Self.reserved.contains(name) ? "Adapter\(name)" : name
    }

    static let reserved: Set<String> = [
        "Swift", "CGatewayABI", "Dispatch", "Glibc", "Darwin", "Synchronization", "Foundation", "FoundationEssentials",
        "Observation", "Distributed", "RegexBuilder", "XCTest", "Testing", "SwiftShims", "SwiftOnoneSupport", "Musl", "Android",
    ]

    var buildLine: String {
        "swiftc -emit-library -O -parse-as-library -module-name \(module) -I . \(id).swift -o lib\(id).so"
    }

    var files: [(name: String, contents: String)] {
        [
            ("gateway_abi.h", String(decoding: PackageResources.gateway_abi_h_txt, as: UTF8.self)),
            ("module.modulemap", "module CGatewayABI {\n    header \"gateway_abi.h\"\n    export *\n}\n"),
            ("\(id).swift", String(decoding: PackageResources.swift_adapter_swift_txt, as: UTF8.self)
                .replacingOccurrences(of: "-module-name ExampleSwift", with: "-module-name \(module)")
                .replacingOccurrences(of: "example-swift", with: id)),
            ("\(id).json", manifest(from: Data(PackageResources.example_swift_json_txt), library: "./lib\(id).so", language: "Swift")),
            ("README.md", readme),
        ]
    }

    var readme: String {
        """
        # \(id)

        A payment adapter in Swift, built against `gateway_abi.h` alone (the
        whole contract with the host), which `module.modulemap` makes the C
        module `CGatewayABI`: no SDK, no Foundation. It starts as a copy of the
        gateway's example-swift: a simulated provider that approves `visa`
        authorizations up to `decline_above` minor units, answers `verify`, keeps
        idempotency keys, refuses malformed JSON, and completes every call
        exactly once from a Dispatch thread. Replace the simulation in
        `answerAuthorize` and `verify` with your provider's API (through the
        host's `http_send`, to hosts you list in the manifest's `egress`).

        A Swift trap (a failed precondition, an overflow, a force-unwrapped nil)
        cannot be caught: it ends the process. Check every input instead, and
        keep `isolation: process` while the adapter is young. The library links
        the Swift runtime: build it with the same toolchain as the host.

        \(readmeBuildAndCheck)

        """
    }
}

/// The Swift skeleton on the adapter SDK: a SwiftPM package whose one target
/// is swift-skeleton renamed, depending on `GatewayAdapterSDK` of the
/// gateway's checkout at `sdk` (by path: SwiftPM fetches only what the SDK
/// needs, nothing from the network).
struct SkeletonSwiftPackage: Skeleton {
    var id: String
    var sdk: URL

    var module: String { SkeletonSwift(id: id).module }
    /// The checkout's package identity, as SwiftPM names a path dependency.
    var sdkPackage: String { sdk.lastPathComponent.lowercased() }
    var library: String { ".build/release/lib\(module).so" }

    var buildLine: String { "swift build -c release" }

    var files: [(name: String, contents: String)] {
        let typeName = module + "Adapter"
        let source = String(decoding: PackageResources.swift_sdk_adapter_swift_txt, as: UTF8.self)
            .replacingOccurrences(of: "SwiftSkeletonAdapter", with: typeName)
            .replacingOccurrences(of: "swift-skeleton", with: id)
            .replacingOccurrences(of: "\"sk_\"", with: "\"\(id.prefix(8))_\"")
        return [
            ("Package.swift", packageManifest),
            ("Sources/\(module)/\(module).swift", source),
            ("\(id).json", manifest(from: Data(PackageResources.swift_skeleton_json_txt), library: "./" + library, language: "Swift",
                                   on: "the gateway's adapter SDK")),
            ("README.md", readme),
        ]
    }

    var packageManifest: String {
        """
        // swift-tools-version: 6.1
        import PackageDescription

        // \(id): a payment adapter on the gateway's adapter SDK (gateway plugin new --lang swift).
        let package = Package(
            name: "\(id)",
            products: [
                // The shared library the host loads (the manifest's "library").
                .library(name: "\(module)", type: .dynamic, targets: ["\(module)"]),
            ],
            dependencies: [
                // The gateway's checkout: only GatewayAdapterSDK (and the payload types it shares with the host) is built.
                .package(path: "\(Self.literal(sdk.path))"),
            ],
            targets: [
                .target(name: "\(module)", dependencies: [.product(name: "GatewayAdapterSDK", package: "\(sdkPackage)")]),
            ]
        )

        """
    }

    /// `text` inside a Swift string literal.
    static func literal(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    var readme: String {
        """
        # \(id)

        A payment adapter in Swift on the gateway's adapter SDK
        (`GatewayAdapterSDK`, from the gateway's checkout at `\(sdk.path)`).
        The SDK does the C ABI: the entry point, JSON framing, strict decoding
        (a malformed request never reaches your code), exactly-once completion,
        cancels, and the status each thrown `AdapterError` completes with. The
        adapter writes one method per operation it lists (`authorize`,
        `verify`, `capture`, `refund`, `void`; `proceed` and `webhook` when it
        takes them); the others answer `GW_E_UNSUPPORTED`.

        It starts against a simulated provider: it approves `visa` up to
        `decline_above` minor units, and captures, refunds and voids what it
        approved, with idempotency keys kept. Replace the simulation with your
        provider's API through `ProviderHTTPClient` (base URL and
        `request_timeout_ms` from the config, the API key from a secret named in
        the manifest and wiped after each request, JSON or form bodies), to
        hosts you list in the manifest's `egress`. A lost answer is
        `AdapterError.outcomeUnknown`, never a decline.

        A Swift trap (a failed precondition, an overflow, a force-unwrapped nil)
        cannot be caught: it ends the process. Check every input instead, and
        keep `isolation: process` while the adapter is young. The library links
        the Swift runtime: build it with the same toolchain as the host.

        \(readmeBuildAndCheck)

        """
    }
}

/// The Go skeleton: example-go renamed (its module, its id), beside the
/// header its cgo preamble includes, built by one `go build` line with
/// Debian's Go and no module to fetch.
struct SkeletonGo: Skeleton {
    var id: String

    var library: String { "lib\(id).so" }

    var buildLine: String { "go build -buildvcs=false -buildmode=c-shared -o \(library) ." }

    var files: [(name: String, contents: String)] {
        func renamed(_ bytes: [UInt8]) -> String {
            String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "example-go", with: id)
        }
        return [
            ("go.mod", String(decoding: PackageResources.go_mod_txt, as: UTF8.self)
                .replacingOccurrences(of: "gateway.example/examplego", with: "gateway.example/\(id)")),
            ("adapter.go", renamed(PackageResources.go_adapter_go_txt)),
            ("shim.c", renamed(PackageResources.go_shim_c_txt)),
            ("gateway_abi.h", String(decoding: PackageResources.gateway_abi_h_txt, as: UTF8.self)),
            ("\(id).json", manifest(from: Data(PackageResources.example_go_json_txt), library: "./" + library, language: "Go")),
            ("README.md", readme),
        ]
    }

    var readme: String {
        """
        # \(id)

        A payment adapter in Go, built from `gateway_abi.h` alone with
        `go build -buildmode=c-shared` (`shim.c` holds the adapter table and the
        one exported entry point; Go cannot call the host's function pointers,
        so it calls them through two small C helpers there). It starts as a copy
        of the gateway's example-go: a simulated provider that approves `visa`
        up to `decline_above` minor units, captures, refunds and voids what it
        approved, keeps idempotency keys, reads JSON strictly with the standard
        library, and completes every accepted call exactly once from a goroutine
        of its own. Replace the simulation in `authorize`, `move` and `verify`
        with your provider's API (through the host's `http_send`, to hosts you
        list in the manifest's `egress`).

        Every function C calls defers a panic barrier, and so does each call's
        goroutine. A Go fatal error (concurrent map writes, a failed thread
        creation, running out of memory) ends the process whatever `recover`
        does: keep `isolation: process`. A Go runtime needs room: the manifest
        asks for `memory_mb` 256 (the plugin guide, §6, has the measured
        figures). Never block a goroutine in a cgo call, nor in a host callback.

        \(readmeBuildAndCheck)

        """
    }
}
