// swift-tools-version:6.0
import Foundation
import PackageDescription

// A program outside the TwoBits package that depends on its TwoBitsClient library by path, as an app's
// package would (docs/client.md): `make run` prints the command that runs it against the demo server.

// A path dependency's identity is the name of its folder (the checkout's name), so it is computed.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

let package = Package(
    name: "ClientDemo",
    platforms: [.macOS(.v12)],
    dependencies: [.package(path: "../../..")],
    targets: [
        .executableTarget(name: "client-demo", dependencies: [.product(name: "TwoBitsClient", package: root.lastPathComponent)]),
    ],
    swiftLanguageModes: [.v6]
)
