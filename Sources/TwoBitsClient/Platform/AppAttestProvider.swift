#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// App Attest as the flow uses it: `DCAppAttestService` on a device (`AppAttestServiceAdapter`), a simulated
/// iPhone in tests. Failures are thrown as `PlatformFailure`; anything else counts as `.unknown`.
public protocol AppAttestProvider: Sendable {
    /// Whether this device can make App Attest keys at all.
    var isSupported: Bool { get async }
    /// A new key in the Secure Enclave; its identifier (base64 of the SHA-256 of its public key).
    func generateKey() async throws -> String
    /// Apple's attestation object for `keyID` over `clientDataHash` (32 bytes).
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data
    /// An assertion by `keyID` over `clientDataHash` (32 bytes); its counter is one above the previous.
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}
