import Foundation
import Testing
import TwoBitsClient

/// The Apple adapters' error mapping, against a stand-in of the framework that throws Apple's documented
/// `DCError` codes (on Apple platforms the same adapters wrap `DCAppAttestService` and `DCDevice`).
@Suite struct AdapterErrorMappingTests {
    /// A `DCAppAttestService` that throws the given error from every call.
    final class ThrowingService: AppAttestServiceAPI, @unchecked Sendable {
        let error: any Error
        init(_ error: any Error) { self.error = error }
        var isSupported: Bool { true }
        func generateKey() async throws -> String { throw error }
        func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data { throw error }
        func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data { throw error }
        static func dcErrorCode(of error: any Error) -> Int? { StandInDCError.code(of: error) }
    }

    final class ThrowingDevice: DeviceCheckDeviceAPI, @unchecked Sendable {
        let error: any Error
        init(_ error: any Error) { self.error = error }
        var isSupported: Bool { true }
        func generateToken() async throws -> Data { throw error }
        static func dcErrorCode(of error: any Error) -> Int? { StandInDCError.code(of: error) }
    }

    struct SomethingElse: Error {}

    static let cases: [(StandInDCError, PlatformFailure)] = [
        (.invalidKey, .invalidKey), (.serverUnavailable, .serverUnavailable), (.featureUnsupported, .featureUnsupported),
        (.invalidInput, .invalidInput),
    ]

    @Test(arguments: 0..<4) func eachDocumentedCodeMapsToItsFailure(_ index: Int) async throws {
        let (thrown, expected) = Self.cases[index]
        let adapter = AppAttestServiceAdapter(ThrowingService(thrown))
        await #expect(throws: expected) { _ = try await adapter.generateKey() }
        await #expect(throws: expected) { _ = try await adapter.attestKey("k", clientDataHash: Data(count: 32)) }
        await #expect(throws: expected) { _ = try await adapter.generateAssertion("k", clientDataHash: Data(count: 32)) }
        await #expect(throws: expected) { _ = try await DeviceCheckDeviceAdapter(ThrowingDevice(thrown)).generateToken() }
    }

    @Test func anUnknownSystemFailureOrAnotherErrorIsUnknown() async throws {
        for thrown in [StandInDCError.unknownSystemFailure as any Error, SomethingElse()] {
            do {
                _ = try await AppAttestServiceAdapter(ThrowingService(thrown)).generateKey()
                Issue.record("no error")
            } catch let failure as PlatformFailure {
                guard case .unknown = failure else { Issue.record("\(failure)"); continue }
            }
        }
    }
}
