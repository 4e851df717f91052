/// The checks behind `/readyz`, by the name the answer and `twobits_readiness_check{check=…}` give them.
public enum ReadinessCheckName: String, Sendable, CaseIterable {
    case configuration
    case appleKey = "apple_key"
    case storage
    case signingKeys = "signing_keys"
}
