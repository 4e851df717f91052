/// What a query finds: a state, or nothing ever written for this device by this team.
public enum QueryResult: Sendable, Hashable {
    case neverSet
    case state(BitState)

    public var state: BitState? { if case .state(let s) = self { return s }; return nil }
}
