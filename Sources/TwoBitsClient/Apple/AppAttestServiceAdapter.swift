#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// App Attest from Apple's `DCAppAttestService` (`AppAttestServiceAdapter { DCAppAttestService.shared }`), its
/// `DCError`s turned into `PlatformFailure`s.
public struct AppAttestServiceAdapter<Service: AppAttestServiceAPI>: AppAttestProvider, Sendable {
    /// Asked at each call: Apple's `DCAppAttestService` is no `Sendable` type, so the adapter holds the way to
    /// reach the shared instance, not the instance.
    private let service: @Sendable () -> Service

    /// Over a shared instance asked for at each call (`{ DCAppAttestService.shared }`).
    public init(_ service: @escaping @Sendable () -> Service) { self.service = service }

    /// Over one instance that is itself `Sendable`.
    public init(_ service: Service) where Service: Sendable { self.service = { service } }

    public var isSupported: Bool { service().isSupported }

    public func generateKey() async throws -> String {
        do { return try await service().generateKey() } catch { throw Self.failure(error) }
    }

    public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        do { return try await service().attestKey(keyID, clientDataHash: clientDataHash) } catch { throw Self.failure(error) }
    }

    public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        do { return try await service().generateAssertion(keyID, clientDataHash: clientDataHash) } catch { throw Self.failure(error) }
    }

    static func failure(_ error: any Error) -> PlatformFailure {
        PlatformFailure(dcErrorCode: Service.dcErrorCode(of: error), describing: error)
    }
}
