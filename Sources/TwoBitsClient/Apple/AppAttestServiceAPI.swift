#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `DCAppAttestService` as Apple documents it, the part `AppAttestServiceAdapter` uses. Apple's class conforms
/// on iOS and macOS; on Linux the tests' stand-in does, so the adapter and its error mapping are tested here.
public protocol AppAttestServiceAPI: AnyObject {
    var isSupported: Bool { get }
    func generateKey() async throws -> String
    func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data
    func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data
    /// The `DCError.Code` raw value of `error`, nil when it is no `DCError`.
    static func dcErrorCode(of error: any Error) -> Int?
}
