import Policy

/// The admin view of one device: raw bits, and what they mean under the layout.
struct DeviceStateReport: Encodable {
    struct Raw: Encodable { let never_set: Bool; let bit0: Bool?; let bit1: Bool?; let last_update_time: String?; let stale: Bool }
    struct Meaning: Encodable { let banned: Bool; let reinstalls: Int?; let promotions: [Claim] }
    struct Claim: Encodable { let promotion: String; let claimed_month: String }

    let layout: String
    let raw: Raw
    let meaning: Meaning
    let token_sha256_prefix: String

    init(meaning m: DeviceMeaning, layout: BitLayout, tokenPrefix: String) {
        self.layout = layout.description
        self.raw = Raw(never_set: m.raw == nil, bit0: m.raw?.bit0, bit1: m.raw?.bit1, last_update_time: m.raw?.lastUpdated.description, stale: m.stale)
        self.meaning = Meaning(banned: m.banned, reinstalls: m.reinstalls, promotions: m.claims.map { Claim(promotion: $0.promotionID, claimed_month: $0.month.description) })
        self.token_sha256_prefix = tokenPrefix
    }
}
