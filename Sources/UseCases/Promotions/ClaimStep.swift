/// Where a claim stands once the device was read: answered already, or one Apple write away.
public enum ClaimStep: Sendable {
    /// A resuming claim found in place: the earlier attempt of the same request wrote it, nothing to write.
    case inPlace(ClaimOutcome)
    /// Apple's update is next (`PromotionService.writeClaim`).
    case write(ClaimWrite)
}
