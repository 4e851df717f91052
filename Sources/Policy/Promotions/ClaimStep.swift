/// Where a claim stands once the policy has read the device: answered already, or one Apple write away.
public enum ClaimStep: Sendable {
    /// A resuming claim found in place: the earlier attempt of the same request wrote it, nothing to write.
    case inPlace(ClaimOutcome)
    /// Apple's update is next (`BitPolicy.writeClaim`).
    case write(ClaimWrite)
}
