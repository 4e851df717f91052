import DeviceCheckModel
import FoundationEssentials
import Sandbox
import TwoBitsCrypto
import Glibc

/// `twobits sandbox`: Apple's DeviceCheck endpoints, emulated, for development and tests.
enum SandboxCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        var args = try Arguments(raw)
        let listen = args.value("listen") ?? "127.0.0.1:8081"
        let teamID = try args.required("team-id", env: "TWOBITS_APPLE_TEAM_ID")
        let keyID = try args.required("key-id", env: "TWOBITS_APPLE_KEY_ID")
        let keyFile = try args.required("key-file", env: "TWOBITS_APPLE_PRIVATE_KEY_FILE")
        let environmentName = args.value("environment") ?? AppleEnvironment.development.rawValue
        let latency = try args.int("latency-ms", default: 0)
        let appAttestRoot = args.value("app-attest-root")
        let receiptRoot = args.value("receipt-root")
        try args.rejectUnknown()

        guard let environment = AppleEnvironment(rawValue: environmentName) else { throw UsageError("--environment must be development or production") }
        let parts = listen.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]) else { throw UsageError("--listen must be HOST:PORT") }
        guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else { throw UsageError("cannot read --key-file \(keyFile)") }
        let publicKey: P256PublicKey
        do { publicKey = try P256PublicKey(pem: pem) } catch { throw UsageError("--key-file \(keyFile): \(error)") }

        let sandbox = AppleSandbox(configuration: SandboxConfiguration(
            host: String(parts[0]), port: port, teamID: teamID, keyID: keyID, publicKey: publicKey,
            environment: environment, latencyMilliseconds: latency))
        if let appAttestRoot {
            // The service trusts this file (app_attest.root_ca_file) for the simulated devices' keys.
            do { try Data(sandbox.appAttestAuthority.rootPEM.utf8).write(to: URL(fileURLWithPath: appAttestRoot)) } catch {
                throw UsageError("cannot write --app-attest-root \(appAttestRoot): \(error)")
            }
        }
        if let receiptRoot {
            // What a receipt verifier trusts instead of Apple Root CA - G3 for the sandbox's receipts.
            do { try Data(sandbox.appAttestAuthority.receiptAuthority.rootPEM.utf8).write(to: URL(fileURLWithPath: receiptRoot)) } catch {
                throw UsageError("cannot write --receipt-root \(receiptRoot): \(error)")
            }
        }
        do { try sandbox.start() } catch {
            printError("twobits sandbox: \(error)")
            return 1
        }
        let line = #"{"msg":"sandbox listening","url":"\#(sandbox.baseURL)","environment":"\#(environment.rawValue)","team_id":"\#(teamID)","key_id":"\#(keyID)"}"#
        print(line)
        fflush(nil)
        _ = await SignalWaiter().waitForTermination()
        await sandbox.shutdown()
        return 0
    }
}
