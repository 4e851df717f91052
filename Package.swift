// swift-tools-version:6.0
import PackageDescription

// TwoBits depends on nothing but the operating system's own C libraries.
// Each layer is one target; the C modules sit at the bottom and only the thin
// wrappers directly above them import them.
let package = Package(
    name: "TwoBits",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "twobits", targets: ["twobits"]),
    ],
    targets: [
        // C libraries from Debian, reached through module maps.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),

        // Layer 1: thin Swift wrappers over the C libraries.
        .target(name: "TwoBitsCrypto", dependencies: ["COpenSSL"]),
        .target(name: "HTTPClient", dependencies: ["CCurl"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        .target(name: "Storage", dependencies: ["CSQLite"]),

        // Layer 2: Apple's DeviceCheck API, and an emulator of it.
        .target(name: "DeviceCheck", dependencies: ["TwoBitsCrypto", "HTTPClient"]),
        .target(name: "Sandbox", dependencies: ["DeviceCheck", "TwoBitsCrypto", "HTTPServer"]),

        // Layer 3: what the bits mean, and the fallback-tier tokens. No curl, no MHD here.
        .target(name: "Policy", dependencies: ["DeviceCheck", "Storage"]),
        .target(name: "Tokens", dependencies: ["TwoBitsCrypto"]),

        // Layer 4: the service: configuration, HTTP API, metrics, logs.
        .target(name: "TwoBitsService", dependencies: [
            "DeviceCheck", "Policy", "Tokens", "Storage", "HTTPServer", "TwoBitsCrypto",
        ]),
        .executableTarget(name: "twobits", dependencies: [
            "TwoBitsService", "Sandbox", "DeviceCheck", "Storage", "HTTPClient", "Tokens", "TwoBitsCrypto",
        ]),
        // TwoBits' ES256 signer alone, for `make bench` to compare with `openssl speed ecdsap256`.
        .executableTarget(name: "ES256Bench", dependencies: ["TwoBitsCrypto"], path: "Benchmarks/ES256Bench"),

        .testTarget(name: "TwoBitsCryptoTests", dependencies: ["TwoBitsCrypto"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTPServer", "HTTPClient"]),
        .testTarget(name: "DeviceCheckTests", dependencies: ["DeviceCheck", "Sandbox", "HTTPClient", "TwoBitsCrypto"]),
        .testTarget(name: "PolicyTests", dependencies: ["Policy", "DeviceCheck", "Sandbox", "Storage"]),
        .testTarget(name: "TokensTests", dependencies: ["Tokens", "Storage", "TwoBitsCrypto"]),
        .testTarget(name: "ServiceTests", dependencies: [
            "TwoBitsService", "Sandbox", "HTTPClient", "DeviceCheck", "TwoBitsCrypto", "Tokens",
        ]),
    ],
    swiftLanguageModes: [.v6]
)
