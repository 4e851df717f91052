// swift-tools-version:6.0
import Foundation
import PackageDescription

// libFuzzer targets for TwoBits' parsers of untrusted input: `make fuzz` builds this package with
// `-sanitize=fuzzer,address -parse-as-library` (which is why it is a package of its own: the root's
// `twobits` has a top-level main.swift). The checks live in the root package's FuzzChecks library, so
// the normal suite replays the corpora through the same code (FuzzReplayTests).

// A path dependency's identity is the name of its folder (the checkout's name), so it is computed.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let targets = ["FuzzJSON", "FuzzBase64URL", "FuzzJWS", "FuzzAppleAnswer", "FuzzConfiguration", "FuzzRequest", "FuzzAppAttest", "FuzzReceipt"]

let package = Package(
    name: "TwoBitsFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..")],
    targets: [
        .target(name: "FuzzDriver", dependencies: [.product(name: "FuzzChecks", package: root.lastPathComponent)], path: "Sources/FuzzDriver"),
    ] + targets.map { name in
        .executableTarget(name: name, dependencies: ["FuzzDriver", .product(name: "FuzzChecks", package: root.lastPathComponent)],
                          path: "Sources/\(name)")
    },
    swiftLanguageModes: [.v6]
)
