/// The meaning of a single bit in a role layout.
public enum BitRole: String, Sendable, CaseIterable {
    case promotion
    case ban
    case unused
}
