// swift-tools-version:6.0
import PackageDescription

// TwoBits depends on nothing but the operating system's own C libraries.
// Each layer is one target; the C modules sit at the bottom and only the thin
// wrappers directly above them import them.
// Every product target imports internally unless it says `public import`: the compiler then refuses a
// C type (or any other module's type) leaking through a layer's public API by accident.
//
// Release builds optimize across modules: with one target per layer, a generic type or an inlinable helper
// of a lower layer (a lock, the router, the JSON scanner) is otherwise called unspecialized through its
// module's boundary on every request. With the runtime linked statically as well (Makefile's RELEASE), it
// saves CPU per request against the Go peer (measured: Benchmarks/HISTORY.md, 2026-11-26, 06:10-07:40).
let layered: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

// TwoBits' own C (the wrappers over the Debian libraries, the event loop's epoll calls, the build's commit) is
// compiled as C targets with every warning an error; the systemLibrary targets only include Debian's headers.
let strictC: [CSetting] = [.unsafeFlags(["-Wall", "-Wextra", "-Werror"])]

let package = Package(
    name: "TwoBits",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        .executable(name: "twobits", targets: ["twobits"]),
        // The fuzz checks, for the libFuzzer package in Tests/Fuzz (which depends on this one by path).
        .library(name: "FuzzChecks", targets: ["FuzzChecks"]),
        // The client half for iOS apps (docs/client.md): no dependency on any other target but WireVocabulary.
        .library(name: "TwoBitsClient", targets: ["TwoBitsClient"]),
    ],
    targets: [
        // C libraries from Debian, reached through module maps that only include their headers.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // TwoBits' own C over them: fixed-signature wrappers of their macros and variadic functions.
        .target(name: "COpenSSLShims", dependencies: ["COpenSSL"], cSettings: strictC),
        .target(name: "CCurlShims", dependencies: ["CCurl"], cSettings: strictC),
        .target(name: "CMicroHTTPDShims", dependencies: ["CMicroHTTPD"], cSettings: strictC),
        .target(name: "CSQLiteShims", dependencies: ["CSQLite"], cSettings: strictC),
        // epoll, eventfd and the monotonic clock (glibc only, nothing to link).
        .target(name: "CEventLoop", cSettings: strictC),
        // The git commit a build comes from (GitCommit.h from .ci/build-commit.sh, or -Xcc -DTWOBITS_GIT_COMMIT=...), as a function.
        .target(name: "CBuildInfo", cSettings: strictC),

        // Layer 0: the one lock type, a pthread mutex ThreadSanitizer can see, the FIFO queue such a lock guards, and named
        // detached threads (docs/architecture.md).
        .target(name: "Locking", dependencies: ["CEventLoop"], swiftSettings: layered),
        // Small mechanisms with one home each: the bounded retry queue, the token bucket, exponential back-off,
        // Duration's conversions to the numbers C calls, metrics and logs take. No C, no Foundation.
        .target(name: "Mechanisms", dependencies: ["Locking"], swiftSettings: layered),
        // One thread, one epoll set, a Swift TaskExecutor: the runtime every request runs on.
        .target(name: "EventLoops", dependencies: ["CEventLoop", "Locking", "Mechanisms"], swiftSettings: layered),
        // The wire's vocabulary, shared by the server and the client library: error codes, App Attest reasons,
        // fallback reasons, tiers, field names, base64url. No dependency at all, not even Foundation.
        .target(name: "WireVocabulary", swiftSettings: layered),
        // The domain's values, below the ledger that stores them: Bits, BitState, YearMonth, AppleEnvironment.
        // No dependency at all, not even Foundation (no crypto: a device token's digest stays in DeviceCheckModel).
        .target(name: "DeviceDomain", swiftSettings: layered),
        // Text formats on the wire, no C and no crypto: the strict JSON parser and writer, base64url (over
        // WireVocabulary's) and hex.
        .target(name: "WireFormats", dependencies: ["WireVocabulary"], swiftSettings: layered),

        // Layer 1: thin Swift wrappers over the C libraries.
        .target(name: "TwoBitsCrypto", dependencies: ["COpenSSL", "COpenSSLShims", "Locking", "WireFormats", "WireVocabulary"], swiftSettings: layered),
        .target(name: "OutboundHTTP", dependencies: ["CCurl", "CCurlShims", "EventLoops", "Locking"], swiftSettings: layered),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CMicroHTTPDShims", "EventLoops", "Locking", "WireVocabulary"], swiftSettings: layered),
        // The ledger's seam: the stores' protocols and their records, plain Swift, typed with DeviceDomain's values.
        .target(name: "Ledger", dependencies: ["DeviceDomain", "Locking"], swiftSettings: layered),
        // The embedded ledger: SQLite in WAL mode, with its own checkpointer thread.
        .target(name: "SQLiteLedger", dependencies: ["CSQLite", "CSQLiteShims", "Ledger", "Locking", "EventLoops", "Mechanisms"], swiftSettings: layered),
        // The shared ledger for replicas: PostgreSQL through libpq, a bounded pool of connections on threads of their own.
        .target(name: "PostgresLedger", dependencies: ["CPostgres", "Ledger", "Locking", "Mechanisms"], swiftSettings: layered),

        // Layer 2: App Attest's formats, what a verifier and an emulator of Apple both read and write: a strict CBOR
        // decoder and its encoder, authenticator data, app ids and environments (AAGUIDs), the failures' vocabulary,
        // receipt payloads (parsed and encoded), times and signature forms, the certificates' extension OIDs. No trust
        // decision: the verifiers are AppAttest's, above.
        .target(name: "AppAttestFormats", dependencies: ["DeviceDomain", "TwoBitsCrypto", "WireVocabulary"], swiftSettings: layered),
        // Apple's DeviceCheck API: its model (no curl, no event loops: what Policy, UseCases and the
        // sandbox share; DeviceToken and its digest over DeviceDomain's values, which it re-exports), the client that calls Apple over OutboundHTTP, and an emulator of Apple.
        // Neither module is named DeviceCheck: an app importing Apple's framework as well could not build.
        .target(name: "DeviceCheckModel", dependencies: ["DeviceDomain", "TwoBitsCrypto"], swiftSettings: layered),
        .target(name: "AppleDeviceCheckClient", dependencies: ["DeviceCheckModel", "TwoBitsCrypto", "WireFormats", "OutboundHTTP", "Locking", "Mechanisms"],
                swiftSettings: layered),
        // The emulator writes App Attest's formats and reads back only receipts its own signer made: it needs none of
        // App Attest's verifiers, which are checked against it.
        .target(name: "Sandbox", dependencies: ["DeviceCheckModel", "TwoBitsCrypto", "WireFormats", "HTTPServer", "Locking", "AppAttestFormats"], swiftSettings: layered),

        // Layer 3: what the bits mean, and the fallback-tier tokens. No curl, no MHD here.
        .target(name: "Policy", dependencies: ["DeviceCheckModel", "Ledger", "WireVocabulary"], swiftSettings: layered),
        .target(name: "TokenSigning", dependencies: ["TwoBitsCrypto", "WireFormats", "WireVocabulary"], swiftSettings: layered),
        // App Attest's verification core: the attestation, assertion and receipt verifiers, Apple's roots. Stateless.
        // Re-exports AppAttestFormats, whose values its API speaks in.
        .target(name: "AppAttest", dependencies: ["AppAttestFormats", "TwoBitsCrypto", "WireFormats"], swiftSettings: layered),

        // Layer 4: the use cases (claims with their idempotency protocol, token exchange, debug secrets, the
        // key ring). Domain outcomes and errors only: no HTTP, no metrics, no logs.
        .target(name: "UseCases", dependencies: ["Policy", "Ledger", "TokenSigning", "DeviceCheckModel", "TwoBitsCrypto", "WireFormats", "Locking", "AppAttest", "WireVocabulary",
                                                  "Mechanisms"],
                swiftSettings: layered),

        // Layer 5: the service: configuration, HTTP API (controllers map use cases onto HTTP), metrics, logs.
        // The admin console's HTML, CSS and JavaScript are embedded at build time (`embedInCode`): the binary
        // reads no file beside it, and the assets stay editable as plain files.
        .target(name: "TwoBitsService", dependencies: [
            "UseCases", "DeviceCheckModel", "AppleDeviceCheckClient", "Policy", "TokenSigning", "Ledger", "SQLiteLedger", "PostgresLedger", "HTTPServer", "TwoBitsCrypto", "WireFormats", "Locking", "AppAttest",
            "WireVocabulary", "Mechanisms",
        ], resources: [
            .embedInCode("Console/Assets/index.html"), .embedInCode("Console/Assets/console.js"), .embedInCode("Console/Assets/console.css"),
        ], swiftSettings: layered),
        .executableTarget(name: "twobits", dependencies: [
            "CBuildInfo", "TwoBitsService", "Sandbox", "DeviceCheckModel", "Ledger", "SQLiteLedger", "PostgresLedger", "OutboundHTTP", "TokenSigning", "TwoBitsCrypto", "WireFormats", "AppAttest",
            "Locking",
        ], swiftSettings: layered),
        // TwoBits' ES256 signer alone, for `make bench` to compare with `openssl speed ecdsap256`.
        .executableTarget(name: "ES256Bench", dependencies: ["TwoBitsCrypto", "WireFormats"], path: "Benchmarks/ES256Bench"),
        // App Attest verification CPU per attestation and per assertion, on the real fixtures.
        .executableTarget(name: "AppAttestBench", dependencies: ["AppAttest", "TwoBitsCrypto", "WireFormats"], path: "Benchmarks/AppAttestBench"),
        // Per-write latency of the SQLite ledger's hot paths, with and without the background checkpointer.
        .executableTarget(name: "LedgerBench", dependencies: ["SQLiteLedger", "Ledger", "DeviceDomain"], path: "Benchmarks/LedgerBench"),

        // The client library: Foundation and the OS's own frameworks only (docs/client.md): Apple's DeviceCheck, Security
        // and CryptoKit on Apple platforms; on Linux, where its tests run, libcrypto for SHA-256 (no hand-written hash).
        // Of TwoBits' own targets only the wire's vocabulary, which depends on nothing.
        .target(name: "TwoBitsClient", dependencies: ["WireVocabulary", .target(name: "COpenSSL", condition: .when(platforms: [.linux]))]),

        // One property check per parser of untrusted input, shared by the fuzz targets and their replay test.
        .target(name: "FuzzChecks", dependencies: ["TwoBitsCrypto", "WireFormats", "DeviceCheckModel", "AppleDeviceCheckClient", "TokenSigning", "HTTPServer", "TwoBitsService", "AppAttest"],
                path: "Tests/FuzzChecks"),

        .testTarget(name: "LockingTests", dependencies: ["Locking"]),
        .testTarget(name: "MechanismsTests", dependencies: ["Mechanisms"]),
        // Test support shared by the test targets: child processes through posix_spawn.
        .target(name: "ChildProcess", dependencies: ["TwoBitsCrypto"], path: "Tests/ChildProcess"),
        .target(name: "SeededRandom", path: "Tests/SeededRandom"),
        // Finds ../shared/vectors (public test vectors, never copied in) and reads its capture files.
        .target(name: "TestVectors", path: "Tests/TestVectors"),
        // The harnesses the suites share: a started sandbox, a started service with its typed configuration (on loopback
        // or in process), each closed by a scoped `withSandbox { … }` / `withService { … }` whatever the test body does.
        .target(name: "TestSupport", dependencies: [
            "TwoBitsService", "AppleDeviceCheckClient", "DeviceCheckModel", "Sandbox", "OutboundHTTP", "HTTPServer", "TokenSigning", "TwoBitsCrypto", "WireFormats", "Locking",
            "UseCases", "AppAttest",
        ], path: "Tests/TestSupport"),
        .testTarget(name: "WireVocabularyTests", dependencies: ["WireVocabulary"]),
        .testTarget(name: "WireFormatsTests", dependencies: ["WireFormats"]),
        .testTarget(name: "TwoBitsCryptoTests", dependencies: ["TwoBitsCrypto", "WireFormats", "Locking", "ChildProcess", "TestVectors"]),
        .testTarget(name: "EventLoopsTests", dependencies: ["EventLoops", "Locking"]),
        // The server over real loopback sockets (curl and a raw socket as its clients), and its connection state machine alone.
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "OutboundHTTP", "EventLoops", "Locking"]),
        // The curl client against a real HTTPServer on loopback (a client needs a server).
        .testTarget(name: "OutboundHTTPTests", dependencies: ["OutboundHTTP", "HTTPServer", "EventLoops", "CCurl", "CCurlShims"]),
        .testTarget(name: "DeviceDomainTests", dependencies: ["DeviceDomain"]),
        .testTarget(name: "DeviceCheckModelTests", dependencies: ["DeviceCheckModel"]),
        // The Apple client against the sandbox, and the parsers against Python's.
        .testTarget(name: "AppleDeviceCheckClientTests", dependencies: [
            "AppleDeviceCheckClient", "DeviceCheckModel", "Sandbox", "OutboundHTTP", "TwoBitsCrypto", "WireFormats", "Locking", "ChildProcess", "SeededRandom", "TestSupport",
            "AppAttest",
        ]),
        // The rules alone: values in, decisions out (no store, no Apple client).
        .testTarget(name: "PolicyTests", dependencies: ["Policy", "DeviceCheckModel", "Ledger"]),
        // The real captures of Tests/Fixtures/AppAttest, read with App Attest's formats alone.
        .target(name: "AppAttestFixtures", dependencies: ["AppAttestFormats", "WireFormats"], path: "Tests/AppAttestFixtures"),
        // The formats alone: CBOR, authenticator data (on the real captures), receipt times.
        .testTarget(name: "AppAttestFormatsTests", dependencies: ["AppAttestFormats", "AppAttestFixtures", "SeededRandom"]),
        .testTarget(name: "AppAttestTests", dependencies: ["AppAttest", "AppAttestFixtures", "TwoBitsCrypto", "WireFormats", "SeededRandom", "Sandbox", "TestVectors"]),
        // The sandbox as strict as Apple (raw HTTP, no Apple client), its control API, and its simulated App Attest devices
        // checked by the product's verifiers.
        .testTarget(name: "SandboxTests", dependencies: [
            "Sandbox", "AppAttest", "DeviceCheckModel", "OutboundHTTP", "TwoBitsCrypto", "WireFormats", "TestSupport",
        ]),
        // The ledger's contract, the same cases over SQLite and PostgreSQL, and PostgreSQL's cross-replica guarantees.
        .testTarget(name: "LedgerContractTests", dependencies: ["DeviceDomain", "Ledger", "SQLiteLedger", "PostgresLedger", "Locking", "EventLoops"]),
        .testTarget(name: "TokenSigningTests", dependencies: ["TokenSigning", "TwoBitsCrypto", "WireFormats"]),
        .testTarget(name: "FuzzReplayTests", dependencies: ["FuzzChecks", "TwoBitsCrypto"]),
        // The use cases alone, over a real SQLite ledger and the sandbox (through the real Apple client): the device's
        // bits (bans, pending orders, installs, claims, the audited writes, against a model too), claims and their keys,
        // the key ring's activations, the receipt refresher and its runner, App Attest's risk policy.
        .testTarget(name: "UseCasesTests", dependencies: [
            "UseCases", "Policy", "Ledger", "SQLiteLedger", "Sandbox", "DeviceCheckModel", "TwoBitsCrypto", "WireFormats", "TokenSigning", "Locking",
            "AppAttest", "TestSupport", "WireVocabulary", "Mechanisms", "AppleDeviceCheckClient", "ChildProcess", "SeededRandom",
        ]),
        .testTarget(name: "ServiceTests", dependencies: [
            "TwoBitsService", "UseCases", "Policy", "Ledger", "SQLiteLedger", "Sandbox", "OutboundHTTP", "DeviceCheckModel", "TwoBitsCrypto", "WireFormats", "TokenSigning",
            "Locking", "AppAttest", "TestSupport", "WireVocabulary", "Mechanisms",
        ]),
        // The client library end to end: the sandbox's simulated iPhones, a real service, a relay over HTTP.
        .testTarget(name: "TwoBitsClientTests", dependencies: [
            "TwoBitsClient", "TwoBitsService", "Sandbox", "OutboundHTTP", "TwoBitsCrypto", "TokenSigning", "TestSupport", "WireVocabulary",
        ]),
    ],
    swiftLanguageModes: [.v6]
)
