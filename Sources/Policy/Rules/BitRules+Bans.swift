public import DeviceCheckModel

extension BitRules {
    /// Refuses bans and unbans under a layout that cannot say "banned".
    public func requireBanMeaning() throws(PolicyError) {
        guard layout.hasBanMeaning else { throw .notEnabled("bans need a ban bit or the reinstall counter; the layout is \(layout)") }
    }

    /// Refuses a look at the bits under the layout that never reads them.
    public func requireBitsRead() throws(PolicyError) {
        if case .none = layout { throw .notEnabled("the layout \(layout) never reads the bits") }
    }

    /// The bits that mean banned (or not) under the layout, starting from `base`.
    public func bits(_ base: Bits, banned: Bool) -> Bits {
        switch layout {
        case .reinstallCounter: return Bits(counter: banned ? 3 : 0)
        case .roles:
            var bits = base
            if let b = layout.banBit { bits[b] = banned }
            return bits
        case .none: return base
        }
    }

    /// The bits to write to ban (or unban) a device in `meaning`, in `month`.
    public func bits(banned: Bool, from meaning: DeviceMeaning, in month: YearMonth) -> Bits {
        bits(baseBits(for: meaning, in: month), banned: banned)
    }
}
