public import DeviceCheckModel

/// One simulated physical device: its bits and month, per environment like Apple's two hosts.
public struct SimulatedDevice: Sendable, Equatable {
    public let id: String
    public var bits = Bits.clear
    /// nil until the first update (a query then answers "Failed to find bit state").
    public var lastUpdated: YearMonth?
    public var updates = 0

    public init(id: String) { self.id = id }

    public var queryResult: QueryResult {
        guard let lastUpdated else { return .neverSet }
        return .state(BitState(bits: bits, lastUpdated: lastUpdated))
    }
}
