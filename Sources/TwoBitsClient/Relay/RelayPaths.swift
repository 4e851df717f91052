/// Where `URLSessionRelay` posts each call, relative to the main API's base URL. The defaults are TwoBits' own
/// paths, so a main API that forwards them unchanged needs no configuration.
public struct RelayPaths: Sendable, Equatable {
    public var challenge: String
    public var attestation: String
    public var assertion: String
    public var fallbackExchange: String

    public init(challenge: String = "v1/app-attest/challenges", attestation: String = "v1/app-attest/attestations",
                assertion: String = "v1/app-attest/assertions", fallbackExchange: String = "v1/fallback-tokens") {
        self.challenge = challenge
        self.attestation = attestation
        self.assertion = assertion
        self.fallbackExchange = fallbackExchange
    }
}
