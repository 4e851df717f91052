public import WireVocabulary

/// The authority a token carries, named positively in its `tier` claim: the wire's `TokenTier`, under the
/// name the claims and the use cases know it by.
public typealias Tier = TokenTier
