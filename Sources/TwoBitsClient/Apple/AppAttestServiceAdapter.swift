#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// App Attest from Apple's `DCAppAttestService` (`AppAttestServiceAdapter(DCAppAttestService.shared)`), its
/// `DCError`s turned into `PlatformFailure`s.
public struct AppAttestServiceAdapter<Service: AppAttestServiceAPI>: AppAttestProvider, @unchecked Sendable {
    // @unchecked: Apple documents DCAppAttestService.shared as safe to use from any thread.
    private let service: Service

    public init(_ service: Service) { self.service = service }

    public var isSupported: Bool { service.isSupported }

    public func generateKey() async throws -> String {
        do { return try await service.generateKey() } catch { throw Self.failure(error) }
    }

    public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        do { return try await service.attestKey(keyID, clientDataHash: clientDataHash) } catch { throw Self.failure(error) }
    }

    public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        do { return try await service.generateAssertion(keyID, clientDataHash: clientDataHash) } catch { throw Self.failure(error) }
    }

    static func failure(_ error: any Error) -> PlatformFailure {
        PlatformFailure(dcErrorCode: Service.dcErrorCode(of: error), describing: error)
    }
}
