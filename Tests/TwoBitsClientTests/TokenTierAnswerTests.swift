import Foundation
import Testing
import TwoBitsClient
import WireVocabulary

/// The tiers of token answers are `TokenTier`s, the server's own names; a tier this build does not know (a newer
/// server's) is refused as a malformed answer, never handed to the app as a token of unknown authority.
@Suite struct TokenTierAnswerTests {
    static func answer(tier: String) -> Data { Data(#"{"token":"t","tier":"\#(tier)","expires_in":60}"#.utf8) }

    @Test func everyTierTheServerNamesDecodesAndNoOtherDoes() throws {
        for tier in TokenTier.allCases {
            #expect(try JSONDecoder().decode(TokenAnswer.self, from: Self.answer(tier: tier.rawValue)).tier == tier)
            #expect(String(decoding: try JSONEncoder().encode(TokenAnswer(token: "t", tier: tier, expiresIn: 60)), as: UTF8.self)
                .contains(#""tier":"\#(tier.rawValue)""#))
        }
        for unknown in ["appattest2", "AppAttest", "", "strong"] {
            #expect(throws: DecodingError.self, "\(unknown)") { try JSONDecoder().decode(TokenAnswer.self, from: Self.answer(tier: unknown)) }
        }
    }

    /// A real exchange through TwoBits whose answer names a tier this build does not know: the app gets
    /// `malformedAnswer`, not a token.
    @Test func aFallbackAnswerOfAnUnknownTierIsRefusedAsMalformed() async throws {
        try await withClientHarness { h in
            let known = try await Device(h, appAttestSupported: false, relay: RenamingTierRelay(h.relay(), to: "devicecheck"))
            #expect(try await known.client.token(for: .any).tier == .devicecheck, "the relay itself passes a known tier through")
            let device = try await Device(h, appAttestSupported: false, relay: RenamingTierRelay(h.relay(), to: "devicecheck2"))
            let failure = await #expect(throws: TwoBitsClientError.self) { try await device.client.token(for: .any) }
            guard case .malformedAnswer(let detail)? = failure else { Issue.record("\(String(describing: failure))"); return }
            #expect(detail.hasPrefix("TokenAnswer") && detail.contains("devicecheck2"), "\(detail)")
        }
    }
}

/// A relay whose main API renames the tier of TwoBits' fallback answer (as a newer server might name a new one),
/// decoding the renamed JSON as any relay decodes its main API's answer.
final class RenamingTierRelay: TwoBitsRelay, @unchecked Sendable {
    private let inner: any TwoBitsRelay
    private let tier: String

    init(_ inner: any TwoBitsRelay, to tier: String) {
        self.inner = inner
        self.tier = tier
    }

    func challenge() async throws -> ChallengeAnswer { try await inner.challenge() }
    func attest(_ request: AttestationRequest) async throws -> TokenAnswer { try await inner.attest(request) }
    func assert(_ request: AssertionRequest) async throws -> TokenAnswer { try await inner.assert(request) }

    func exchange(_ request: FallbackExchangeRequest) async throws -> TokenAnswer {
        let answer = try await inner.exchange(request)
        var json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(answer)) as? [String: Any])
        json["tier"] = tier
        do {
            return try JSONDecoder().decode(TokenAnswer.self, from: JSONSerialization.data(withJSONObject: json))
        } catch {
            throw RelayFailure.malformedAnswer("TokenAnswer: \(error)")
        }
    }
}
