import AppAttest
import FoundationEssentials
import TwoBitsCrypto
import WireFormats

/// `twobits app-attest verify|verify-assertion|receipt`: the App Attest verifiers offline, for a support engineer
/// holding a failing blob. Prints every step, the first that failed, and exits 1 on a refusal.
enum AppAttestCommand {
    static let usage = """
    usage: twobits app-attest verify --attestation FILE --key-id ID --app-id TEAMID.bundle.id --client-data-hash HEX
                                     [--environment development|production] [--at RFC3339] [--root PEM-FILE]
           twobits app-attest verify-assertion --assertion FILE --public-key HEX|FILE --app-id TEAMID.bundle.id
                                     (--client-data FILE | --client-data-hex HEX) --counter N
           twobits app-attest receipt --receipt FILE [--at RFC3339] [--root PEM-FILE] [--app-id TEAMID.bundle.id]
                                     [--public-key HEX|FILE]

    FILE holds base64 (standard or URL-safe) or the raw CBOR. The key id is base64 (as generateKey returns
    it) or 64 hex digits. --client-data-hash is the hex of exactly the bytes the app passed to attestKey:
    usually SHA-256 of the server's challenge, but any length is accepted (Apple's own sample passed the
    challenge's raw bytes). --at defaults to now, --environment to production, --root to Apple's App
    Attestation Root CA. --public-key is 130 hex digits or a file (hex, base64, raw 65 bytes or PEM
    PUBLIC KEY); --counter is the stored counter the assertion must exceed.
    receipt verifies an App Attest receipt (FILE: base64 or DER/BER) at --at (default now; a real receipt
    verifies only inside its signer certificate's validity) to --root (default Apple Root CA - G3), and prints
    every field. Without --app-id the app id is not checked, without --public-key the key is not; the
    freshness step (for receipts just received from Apple) is never run offline.
    Exit status: 0 verified, 1 refused (the failing step is named), 2 usage or unreadable input.
    """

    static func run(_ raw: [String]) throws -> Int32 {
        guard let action = raw.first else { throw UsageError("app-attest needs an action: verify, verify-assertion or receipt\n\n" + usage) }
        let rest = Array(raw.dropFirst())
        switch action {
        case "verify": return try verifyAttestation(rest)
        case "verify-assertion": return try verifyAssertion(rest)
        case "receipt": return try verifyReceipt(rest)
        case "help", "--help", "-h":
            print(usage)
            return 0
        default: throw UsageError("unknown app-attest action \(action); use verify, verify-assertion or receipt\n\n" + usage)
        }
    }

    static func verifyAttestation(_ raw: [String]) throws -> Int32 {
        var args = try Arguments(raw)
        let object = try blob(args.required("attestation"), what: "--attestation")
        let keyID = try self.keyID(args.required("key-id"))
        let appID = try self.appID(args.required("app-id"))
        // Any length: usually SHA-256 of the challenge (64 hex digits), but Apple's own sample passed the raw challenge.
        guard let clientDataHash = Data(hexString: try args.required("client-data-hash")), !clientDataHash.isEmpty else {
            throw UsageError("--client-data-hash must be the hex of the bytes the app passed to attestKey (usually 64 hex digits: SHA-256 of the challenge)")
        }
        let environmentText = args.value("environment") ?? AppAttestEnvironment.production.rawValue
        guard let environment = AppAttestEnvironment(rawValue: environmentText) else { throw UsageError("--environment must be development or production") }
        let time = try args.value("at").map(self.time) ?? Date()
        let rootPath = args.value("root")
        try args.rejectUnknown()
        let chainVerifier = try rootPath.map(self.chainVerifier) ?? AppleRootCertificates.appAttestationVerifier

        print("attestation: \(object.count) bytes, key id \(keyID.base64EncodedString()), app id \(appID), \(environment.rawValue), at \(time.formatted(.iso8601))")
        print("root: \(rootPath ?? "Apple App Attestation Root CA (compiled in)")")
        let verifier = AttestationVerifier(appIDs: [appID], environment: environment, chainVerifier: chainVerifier)
        do {
            let result = try verifier.verify(attestationObject: object, keyID: keyID, clientDataHash: clientDataHash, at: time)
            report(VerificationStep.attestation, failure: nil)
            print("verified")
            print("  public_key:          \(result.publicKey.hexString)")
            print("  key_id:              \(result.keyID.base64EncodedString())")
            print("  app_id:              \(result.appID)")
            print("  environment:         \(result.environment.rawValue)")
            print("  counter:             \(result.counter)")
            print("  receipt:             \(result.receipt.count) bytes")
            print("  validation_category: \(result.validationCategory?.description ?? "absent (before iOS 27)")")
            if let version = result.bundleVersion { print("  bundle_version:      \(TerminalText.escaped(version))") }
            return 0
        } catch {
            report(VerificationStep.attestation, failure: error)
            return 1
        }
    }

    static func verifyAssertion(_ raw: [String]) throws -> Int32 {
        var args = try Arguments(raw)
        let assertion = try blob(args.required("assertion"), what: "--assertion")
        let publicKey = try self.publicKey(args.required("public-key"))
        let appID = try self.appID(args.required("app-id"))
        let clientData: Data
        switch (args.value("client-data"), args.value("client-data-hex")) {
        case (let path?, nil): clientData = try file(path, what: "--client-data")
        case (nil, let hex?):
            guard let bytes = Data(hexString: hex) else { throw UsageError("--client-data-hex is not hex") }
            clientData = bytes
        default: throw UsageError("give exactly one of --client-data FILE and --client-data-hex HEX")
        }
        guard let counter = UInt32(try args.required("counter")) else { throw UsageError("--counter must be a whole number from 0 to 4294967295") }
        try args.rejectUnknown()

        print("assertion: \(assertion.count) bytes, client data \(clientData.count) bytes, app id \(appID), stored counter \(counter)")
        do {
            let result = try AssertionVerifier().verify(assertion: assertion, clientData: clientData, publicKey: publicKey, appID: appID, storedCounter: counter)
            report(VerificationStep.assertion, failure: nil)
            print("verified")
            print("  counter: \(result.counter) (store it if it is still above the stored one)")
            return 0
        } catch {
            report(VerificationStep.assertion, failure: error)
            return 1
        }
    }

    static func verifyReceipt(_ raw: [String]) throws -> Int32 {
        var args = try Arguments(raw)
        let receipt = try blob(args.required("receipt"), what: "--receipt")
        let expectedAppID = try args.value("app-id").map { text in try appID(text).description }
        let publicKey = try args.value("public-key").map(self.publicKey)
        let time = try args.value("at").map(self.time) ?? Date()
        let rootPath = args.value("root")
        try args.rejectUnknown()
        let verifier = try rootPath.map { ReceiptVerifier(chainVerifier: try chainVerifier($0)) } ?? ReceiptVerifier()

        print("receipt: \(receipt.count) bytes, at \(time.formatted(.iso8601))")
        print("root: \(rootPath ?? "Apple Root CA - G3 (compiled in)")")
        // Without --app-id, the receipt's own (read before verification only to skip the comparison).
        let checkedAppID = expectedAppID ?? (try? CMSSignedData(receipt)).flatMap { try? ReceiptPayload($0.content) }?.appID ?? ""
        var skipped: Set<ReceiptStep> = [.freshness]
        if expectedAppID == nil { skipped.insert(.appID) }
        if publicKey == nil { skipped.insert(.publicKey) }
        do {
            let result = try verifier.verify(receipt, appID: checkedAppID, publicKey: publicKey, at: time, freshness: nil)
            reportReceipt(failure: nil, skipped: skipped)
            print("verified")
            print("  type:          \(result.type.rawValue)")
            print("  app_id:        \(TerminalText.escaped(result.appID))")
            print("  environment:   \(result.environment.map(TerminalText.escaped) ?? "absent")")
            print("  creation:      \(ReceiptTime.format(result.creation))")
            print("  not_before:    \(result.notBefore.map(ReceiptTime.format) ?? "absent (ATTEST)")")
            print("  expiration:    \(ReceiptTime.format(result.expiration))")
            print("  risk_metric:   \(result.riskMetric.map(String.init) ?? "absent (ATTEST)")")
            print("  token:         \(TerminalText.escaped(result.token))")
            print("  client_hash:   \(result.clientHash.hexString) (\(result.clientHash.count) bytes)")
            print("  public_key:    \(result.attestedPublicKey.hexString)")
            return 0
        } catch {
            reportReceipt(failure: error, skipped: skipped)
            return 1
        }
    }

    /// The receipt's steps: `skipped` ones are shown as not checked.
    static func reportReceipt(failure: ReceiptFailure?, skipped: Set<ReceiptStep>) {
        printSteps(ReceiptStep.allCases.map { ($0.rawValue, $0.summary, !skipped.contains($0)) },
                   failed: failure.map { ($0.step.rawValue, TerminalText.escaped($0.detail)) })
        if let failure { print("refused at step \(failure.step.rawValue)") }
    }

    /// An attestation's or an assertion's steps, all checked.
    static func report(_ steps: [VerificationStep], failure: AppAttestFailure?) {
        printSteps(steps.map { ($0.rawValue, $0.summary, true) },
                   failed: failure.map { ($0.step.rawValue, "\($0.code): \(TerminalText.escaped($0.detail))") })
        if let failure { print("refused: \(failure.code) at step \(failure.step.rawValue)") }
    }

    /// One line per step: ok (or not checked) up to the one that failed, FAILED with the detail under it, then skipped.
    static func printSteps(_ steps: [(name: String, summary: String, checked: Bool)], failed: (step: String, detail: String)?) {
        var pastFailure = false
        for step in steps {
            let name = step.name.padded(to: 14)
            if pastFailure {
                print("  skipped  \(name) \(step.summary)")
            } else if let failed, failed.step == step.name {
                print("  FAILED   \(name) \(step.summary)")
                print("           \(failed.detail)")
                pastFailure = true
            } else if !step.checked {
                print("  -        \(name) \(step.summary) (not checked)")
            } else {
                print("  ok       \(name) \(step.summary)")
            }
        }
    }

    static func file(_ path: String, what: String) throws -> Data {
        do { return Data(try FileBytes.read(path, limit: 1 << 20)) } catch {
            throw UsageError("cannot read \(what) \(path): \(error.reason)")
        }
    }

    /// A file's bytes: base64 (either alphabet, whitespace ignored) when the text is that, else the raw bytes.
    static func blob(_ path: String, what: String) throws -> Data {
        let bytes = try file(path, what: what)
        guard !bytes.isEmpty else { throw UsageError("\(what) \(path) is empty") }
        return base64(String(decoding: bytes, as: UTF8.self)) ?? bytes
    }

    static func base64(_ text: String) -> Data? {
        var compact = String(text.filter { !$0.isWhitespace })
        guard !compact.isEmpty, compact.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+/-_=".contains($0)) }) else { return nil }
        compact = compact.replacing("-", with: "+").replacing("_", with: "/")
        compact += String(repeating: "=", count: (4 - compact.count % 4) % 4)
        return Data(base64Encoded: compact)
    }

    static func keyID(_ text: String) throws -> Data {
        if text.count == 64, let hex = Data(hexString: text) { return hex }
        guard let bytes = base64(text), bytes.count == 32 else { throw UsageError("--key-id must be 32 bytes in base64 (as generateKey returns it) or 64 hex digits") }
        return bytes
    }

    static func appID(_ text: String) throws -> AppID {
        guard let appID = AppID(text) else { throw UsageError("--app-id must be TEAMID.bundle.id") }
        return appID
    }

    static func time(_ text: String) throws -> Date {
        let plain = Date.ISO8601FormatStyle()
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        guard let date = (try? plain.parse(text)) ?? (try? fractional.parse(text)) else { throw UsageError("--at must be an RFC 3339 time, e.g. 2021-01-23T12:13:33Z") }
        return date
    }

    static func chainVerifier(_ path: String) throws -> CertificateChainVerifier {
        let text = String(decoding: try file(path, what: "--root"), as: UTF8.self)
        do { return try CertificateChainVerifier(roots: X509Certificate.certificates(pem: text)) } catch {
            throw UsageError("--root \(path): \(error)")
        }
    }

    /// The stored key: 130 hex digits, or a file with hex, base64, PEM or the raw 65 bytes.
    static func publicKey(_ argument: String) throws -> Data {
        if argument.count == 130, let hex = Data(hexString: argument) { return hex }
        let bytes = try file(argument, what: "--public-key")
        let text = String(decoding: bytes, as: UTF8.self).trimmed()
        if text.contains("-----BEGIN") {
            do { return try P256PublicKey(pem: text).uncompressedPoint } catch { throw UsageError("--public-key \(argument): \(error)") }
        }
        if let hex = Data(hexString: text), hex.count == 65 { return hex }
        if let decoded = base64(text), decoded.count == 65 { return decoded }
        if bytes.count == 65 { return bytes }
        throw UsageError("--public-key must be a 65-byte uncompressed P-256 point (hex, base64, raw) or a PEM PUBLIC KEY")
    }
}
