// swift-tools-version: 6.1
import PackageDescription

// Layers, top to bottom (see README "Layout"):
//   gateway (CLI)  ->  PluginHost  ->  CGatewayABI (the one C header)
//   Plugins/*      ->  GatewayAdapterSDK (Swift adapters) or the header alone (C adapters)
//   GatewayPayloads: the JSON payload types both sides of the ABI share.
let package = Package(
    name: "gateway",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gateway", targets: ["gateway"]),
        .library(name: "PluginHost", targets: ["PluginHost"]),
        .library(name: "GatewayAdapterSDK", targets: ["GatewayAdapterSDK"]),
        // Shipped adapters: each a shared library the host dlopens.
        .library(name: "MockAdapter", type: .dynamic, targets: ["MockAdapter"]),
        .library(name: "ExampleCAdapter", type: .dynamic, targets: ["ExampleCAdapter"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
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
        // Manifests, loader, libffi bridge, host services, registry.
        .target(
            name: "PluginHost",
            dependencies: [
                "CGatewayABI", "CFFI", "GatewayPayloads",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // The checkout engine: sessions, attempts, routing, idempotency (issue 3).
        .target(name: "CheckoutEngine", dependencies: ["GatewayPayloads"]),
        // Swift adapter SDK: implement one protocol, write one export line.
        .target(name: "GatewayAdapterSDK", dependencies: ["CGatewayABI", "GatewayPayloads"]),
        .executableTarget(
            name: "gateway",
            dependencies: [
                "PluginHost", "GatewayPayloads",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        // Adapters shipped with the product.
        .target(
            name: "MockAdapter", dependencies: [
                "GatewayAdapterSDK",
                .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Plugins/Mock"),
        .target(
            name: "ExampleCAdapter", dependencies: ["CGatewayABI"], path: "Plugins/ExampleC",
            exclude: ["README.md"], publicHeadersPath: ".",
            // swiftc links every product with the Swift runtime: -nostartfiles drops
            // the Swift image-registration object, and -static-stdlib turns the
            // runtime into archives a C adapter pulls nothing from, so its library
            // depends on no Swift library (readelf -d: libc, libm, libstdc++).
            linkerSettings: [.unsafeFlags(["-nostartfiles", "-static-stdlib"])]),

        // Benchmarks (programs; results in BENCHMARKS.md).
        .target(name: "CBenchSupport", path: "Benchmarks/CBenchSupport"),
        .executableTarget(
            name: "bridge-benchmark",
            dependencies: ["PluginHost", "CFFI", "CBenchSupport", "GatewayPayloads"],
            path: "Benchmarks/Bridge"),

        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "CheckoutEngineTests", dependencies: ["CheckoutEngine", "GatewayPayloads", "TestSupport"]),
        .testTarget(
            name: "PluginHostTests",
            dependencies: [
                "PluginHost", "GatewayPayloads", "CGatewayABI", "CFFI", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]),
    ]
)
