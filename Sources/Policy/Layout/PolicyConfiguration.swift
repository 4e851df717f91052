/// The bit layout, staleness rule and promotions, validated at startup.
public struct PolicyConfiguration: Sendable, Equatable {
    public var layout: BitLayout
    /// A state whose month is more than this many months old counts as never set.
    public var staleAfterMonths: Int?
    public var promotions: [Promotion]

    public init(layout: BitLayout, staleAfterMonths: Int? = nil, promotions: [Promotion] = []) {
        self.layout = layout
        self.staleAfterMonths = staleAfterMonths
        self.promotions = promotions
    }

    /// The default: bit0 is a promotion bit, bit1 the ban bit, no promotions.
    public static let standard = PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban))
}
