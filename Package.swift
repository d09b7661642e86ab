// swift-tools-version: 6.1
import PackageDescription

// Layers, top to bottom (see README "Layout"):
//   gateway (CLI)  ->  PluginHost  ->  CGatewayABI (the one C header)
//   gateway-runner ->  PluginHost (the same loader and bridge, in a process per adapter)
//   Plugins/*      ->  GatewayAdapterSDK (Swift adapters) or the header alone (C adapters)
//   GatewayPayloads: the JSON payload types both sides of the ABI share.
let package = Package(
    name: "gateway",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gateway", targets: ["gateway"]),
        // One adapter in a process of its own ("isolation": "process"), started by the host.
        .executable(name: "gateway-runner", targets: ["gateway-runner"]),
        .library(name: "PluginHost", targets: ["PluginHost"]),
        .library(name: "GatewayAdapterSDK", targets: ["GatewayAdapterSDK"]),
        // Shipped adapters: each a shared library the host dlopens.
        .library(name: "MockAdapter", type: .dynamic, targets: ["MockAdapter"]),
        .library(name: "ExampleCAdapter", type: .dynamic, targets: ["ExampleCAdapter"]),
        .library(name: "ExampleSwiftAdapter", type: .dynamic, targets: ["ExampleSwiftAdapter"]),
        .library(name: "HyperPayAdapter", type: .dynamic, targets: ["HyperPayAdapter"]),
        .library(name: "STCPayAdapter", type: .dynamic, targets: ["STCPayAdapter"]),
        .library(name: "TabbyAdapter", type: .dynamic, targets: ["TabbyAdapter"]),
        .library(name: "SwedbankPayAdapter", type: .dynamic, targets: ["SwedbankPayAdapter"]),
        .library(name: "TamaraAdapter", type: .dynamic, targets: ["TamaraAdapter"]),
        .library(name: "WorldlineAdapter", type: .dynamic, targets: ["WorldlineAdapter"]),
        // The Swift skeleton `gateway plugin new --lang swift` writes (renamed), built here so it always compiles.
        .library(name: "SwiftSkeletonAdapter", type: .dynamic, targets: ["SwiftSkeletonAdapter"]),
        // The plugin guide's complete minimal Swift adapter (docs/plugin-authors.md §3.7), built here so it always
        // compiles; a test checks it against a stand-in of its hypothetical provider (no manifest in manifests/).
        .library(name: "AcmeAdapter", type: .dynamic, targets: ["AcmeAdapter"]),
        // For the host's tests only (no manifest in manifests/): misbehaves on request.
        .library(name: "ChaosAdapter", type: .dynamic, targets: ["ChaosAdapter"]),
        // For the host's tests only: the mock's sources built as version 1.1.0 (upgrade tests).
        .library(name: "MockAdapterNext", type: .dynamic, targets: ["MockAdapterNext"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // The C ABI: one self-contained header, the only file a third party needs.
        .target(name: "CGatewayABI", path: "Sources/CGatewayABI"),
        // libffi from the system (Debian: libffi-dev).
        .systemLibrary(
            name: "CFFI", path: "Sources/CFFI", pkgConfig: "libffi",
            providers: [.apt(["libffi-dev"])]),
        // Request/result documents of every operation, shared by host and SDK.
        .target(name: "GatewayPayloads"),
        // Payment method fields: the model, validators, masks and MSISDNs (docs/fields.md). Pure.
        // Card ranges (IIN lookup) are the data file iin-ranges.json, its sources named in it; the
        // shipped forms manifests name (`"fields": {"visa": "card"}`) are standard-forms.json.
        .target(name: "PaymentFields", dependencies: ["GatewayPayloads"], resources: [.embedInCode("iin-ranges.json"), .embedInCode("standard-forms.json")]),
        // Wallet payment tokens decrypted in the host: Apple Pay EC_v1 and Google Pay ECv2
        // (docs/wallet-tokens.md). Pure: no I/O, no clock of its own.
        .target(
            name: "WalletTokens",
            dependencies: [
                "GatewayPayloads",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]),
        // Manifests, loader, libffi bridge, host services, registry.
        .target(
            name: "PluginHost",
            dependencies: [
                "CGatewayABI", "CFFI", "CHostSupport", "GatewayPayloads", "PaymentFields", "WalletTokens",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
            ]),
        // The checkout engine: sessions, attempts, routing, idempotency, reconciliation.
        // Pure Swift: it reaches a store and providers through protocols.
        .target(
            name: "CheckoutEngine",
            dependencies: [
                "GatewayPayloads", "PaymentFields",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The engine's durable store on SQLite (GRDB, WAL, named migrations).
        .target(
            name: "SQLiteCheckoutStore",
            dependencies: [
                "CheckoutEngine", "GatewayPayloads",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        // The embeddable gateway: plugin host + engine + store, run as a service.
        // The engine's store on PostgreSQL, for many hosts on one database (docs/postgresql.md).
        .target(
            name: "PostgresCheckoutStore",
            dependencies: [
                "CheckoutEngine", "GatewayPayloads",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Merchants' webhooks: endpoints, Standard Webhooks signatures, the outbox's delivery (docs/webhooks.md).
        .target(
            name: "MerchantWebhooks",
            dependencies: [
                "CheckoutEngine", "GatewayPayloads", "PluginHost",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "PaymentGateway",
            dependencies: [
                "CheckoutEngine", "SQLiteCheckoutStore", "PluginHost", "GatewayPayloads", "PaymentFields", "MerchantWebhooks",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // The checkout API over HTTP (Hummingbird 2): v1 routes, admin, operations,
        // live manifests, metrics. `gateway serve` runs it.
        .target(
            name: "CheckoutHTTP",
            dependencies: [
                // No PluginHost: the HTTP layer sees the gateway through PaymentGateway's façade only.
                "PaymentGateway", "CheckoutEngine", "GatewayPayloads", "PaymentFields", "MerchantWebhooks",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ],
            resources: [.copy("openapi.json")]),
        // Local stand-ins of the providers' APIs (`gateway sandbox`, `serve --sandbox`).
        .target(
            name: "ProviderSandbox",
            dependencies: [
                "GatewayPayloads", "PaymentFields",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                // Webhooks a simulator delivers (Worldline's, to the loopback URLs a payment names).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                // RSA-OAEP and AES-CBC for Worldline's encrypted customer input (its simulator and test device).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The runner's confinement, before main: network namespace, parent-death signal.
        .target(name: "CRunnerConfinement", path: "Sources/CRunnerConfinement", exclude: ["runner_syscalls.inc"]),
        .target(name: "CHostSupport", path: "Sources/CHostSupport"),
        .executableTarget(
            name: "gateway-runner",
            dependencies: ["PluginHost", "GatewayPayloads", "CRunnerConfinement", "CHostSupport"],
            path: "Sources/gateway-runner"),
        // Swift adapter SDK: implement one protocol, write one export line.
        .target(name: "GatewayAdapterSDK", dependencies: ["CGatewayABI", "GatewayPayloads"]),
        .executableTarget(
            name: "gateway",
            dependencies: [
                "PluginHost", "GatewayPayloads", "PaymentGateway", "CheckoutEngine", "CheckoutHTTP", "ProviderSandbox", "SQLiteCheckoutStore",
                "PostgresCheckoutStore", "MerchantWebhooks",
                "WalletTokens",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The skeletons `gateway plugin new` writes: the header, example-c, example-rust, example-swift, the SDK's
            // swift-skeleton, example-go and their manifests (symlinks to the shipped files, embedded).
            resources: [.embedInCode("Templates/gateway_abi.h.txt"), .embedInCode("Templates/example_c.c.txt"),
                        .embedInCode("Templates/example-c.json.txt"), .embedInCode("Templates/example-rust.json.txt"),
                        .embedInCode("Templates/rust-Cargo.toml.txt"), .embedInCode("Templates/rust-lib.rs.txt"),
                        .embedInCode("Templates/rust-abi.rs.txt"), .embedInCode("Templates/rust-boundary.rs.txt"),
                        .embedInCode("Templates/rust-adapter.rs.txt"), .embedInCode("Templates/rust-provider.rs.txt"),
                        .embedInCode("Templates/rust-json.rs.txt"), .embedInCode("Templates/swift-adapter.swift.txt"),
                        .embedInCode("Templates/example-swift.json.txt"), .embedInCode("Templates/swift-sdk-adapter.swift.txt"),
                        .embedInCode("Templates/swift-skeleton.json.txt"), .embedInCode("Templates/go-adapter.go.txt"),
                        .embedInCode("Templates/go-shim.c.txt"), .embedInCode("Templates/go.mod.txt"),
                        .embedInCode("Templates/example-go.json.txt")]),

        // Adapters shipped with the product.
        .target(
            name: "MockAdapter", dependencies: [
                "GatewayAdapterSDK",
                .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Plugins/Mock"),
        .target(name: "SwiftSkeletonAdapter", dependencies: ["GatewayAdapterSDK"], path: "Plugins/SwiftSkeleton", exclude: ["swift-skeleton.json"]),
        .target(name: "AcmeAdapter", dependencies: ["GatewayAdapterSDK"], path: "Plugins/Acme"),
        .target(
            name: "HyperPayAdapter", dependencies: ["GatewayAdapterSDK", .product(name: "Crypto", package: "swift-crypto")],
            path: "Plugins/HyperPay"),
        .target(
            name: "STCPayAdapter", dependencies: ["GatewayAdapterSDK", .product(name: "Crypto", package: "swift-crypto")],
            path: "Plugins/STCPay"),
        .target(
            name: "TabbyAdapter", dependencies: ["GatewayAdapterSDK", .product(name: "Crypto", package: "swift-crypto")], path: "Plugins/Tabby"),
        .target(
            name: "SwedbankPayAdapter", dependencies: ["GatewayAdapterSDK", .product(name: "Crypto", package: "swift-crypto")],
            path: "Plugins/SwedbankPay"),
        .target(
            name: "TamaraAdapter", dependencies: ["GatewayAdapterSDK", .product(name: "Crypto", package: "swift-crypto")],
            path: "Plugins/Tamara"),
        .target(
            name: "WorldlineAdapter", dependencies: ["GatewayAdapterSDK", .product(name: "Crypto", package: "swift-crypto")],
            path: "Plugins/Worldline"),
        .target(
            name: "ExampleCAdapter", dependencies: ["CGatewayABI"], path: "Plugins/ExampleC",
            exclude: ["README.md"], publicHeadersPath: ".",
            // swiftc links every product with the Swift runtime: -nostartfiles drops
            // the Swift image-registration object, and -static-stdlib turns the
            // runtime into archives a C adapter pulls nothing from, so its library
            // depends on no Swift library (readelf -d: libc, libm, libstdc++).
            linkerSettings: [.unsafeFlags(["-nostartfiles", "-static-stdlib"])]),
        // The Swift twin of example-c, from the header alone (no SDK, no Foundation);
        // `gateway plugin new --lang swift-header` writes the same file beside the header.
        .target(
            name: "ExampleSwiftAdapter", dependencies: ["CGatewayABI"], path: "Plugins/ExampleSwift",
            exclude: ["example-swift.json"]),

        .target(
            name: "MockAdapterNext", dependencies: [
                "GatewayAdapterSDK",
                .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Tests/MockAdapterNext", swiftSettings: [.define("MOCK_NEXT_VERSION")]),
        .target(
            name: "ChaosAdapter", dependencies: ["CGatewayABI"], path: "Tests/ChaosAdapter", publicHeadersPath: ".",
            linkerSettings: [.unsafeFlags(["-nostartfiles", "-static-stdlib"])]),

        // Benchmarks (programs; results in BENCHMARKS.md).
        .target(name: "CBenchSupport", path: "Benchmarks/CBenchSupport"),
        .executableTarget(
            name: "bridge-benchmark",
            dependencies: ["PluginHost", "CFFI", "CBenchSupport", "GatewayPayloads"],
            path: "Benchmarks/Bridge"),
        .executableTarget(
            name: "checkout-benchmark",
            dependencies: ["PaymentGateway", "PluginHost", "CheckoutEngine", "GatewayPayloads", "PostgresCheckoutStore", "SQLiteCheckoutStore",
                           "MerchantWebhooks",
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio")],
            path: "Benchmarks/Checkout"),

        .target(name: "TestSupport", dependencies: ["CheckoutEngine", "GatewayPayloads", "SQLiteCheckoutStore", "PostgresCheckoutStore", "PluginHost",
                                                    .product(name: "Logging", package: "swift-log"),
                                                    .product(name: "AsyncHTTPClient", package: "async-http-client"),
                                                    .product(name: "NIOCore", package: "swift-nio"),
                                                    .product(name: "NIOHTTP1", package: "swift-nio")],
                path: "Tests/TestSupport"),
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport"]),
        .testTarget(
            name: "MerchantWebhooksTests",
            dependencies: ["MerchantWebhooks", "CheckoutEngine", "GatewayPayloads", "PaymentGateway", "SQLiteCheckoutStore", "PostgresCheckoutStore",
                           "PluginHost", "CheckoutHTTP", "TestSupport",
                           .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio")]),
        .testTarget(name: "PaymentFieldsTests", dependencies: ["PaymentFields", "GatewayPayloads"]),
        .testTarget(
            name: "WalletTokensTests",
            dependencies: [
                "WalletTokens", "GatewayPayloads", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "CheckoutEngineTests",
            dependencies: [
                "CheckoutEngine", "SQLiteCheckoutStore", "PostgresCheckoutStore", "GatewayPayloads", "TestSupport", "PaymentFields",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]),
        .testTarget(
            name: "StoreTests",
            dependencies: [
                "CheckoutEngine", "SQLiteCheckoutStore", "PostgresCheckoutStore", "GatewayPayloads", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]),
        .testTarget(name: "GatewayPayloadsTests", dependencies: ["GatewayPayloads", "TestSupport"]),
        .testTarget(
            name: "GatewayCLITests",
            dependencies: ["PluginHost", "CheckoutEngine", "CheckoutHTTP", "PaymentGateway", "SQLiteCheckoutStore", "GatewayPayloads", "TestSupport"]),
        .testTarget(
            name: "PaymentGatewayTests",
            dependencies: [
                "PaymentGateway", "CheckoutEngine", "SQLiteCheckoutStore", "PostgresCheckoutStore", "PluginHost", "GatewayPayloads", "TestSupport", "WalletTokens",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]),
        .testTarget(
            name: "CheckoutHTTPTests",
            dependencies: [
                "CheckoutHTTP", "PaymentGateway", "CheckoutEngine", "PluginHost", "GatewayPayloads", "TestSupport", "SQLiteCheckoutStore",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "ProviderAdapterTests",
            dependencies: [
                "PaymentGateway", "ProviderSandbox", "PluginHost", "CheckoutEngine", "GatewayPayloads", "TestSupport", "PaymentFields",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "PluginHostTests",
            dependencies: [
                "PluginHost", "GatewayPayloads", "PaymentFields", "CGatewayABI", "CFFI", "TestSupport", "GatewayAdapterSDK", "PaymentGateway", "CheckoutEngine",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
            ]),
    ]
)
