public import UseCases

extension APIError {
    /// A request proof without a verdict: the ledger or Apple (for the device token) is unavailable; the main API
    /// refuses the request it holds, and may ask again with the same proof (nothing was used up).
    public init(_ error: RequestProofError) {
        switch error {
        case .storage(let storage): self = .storageUnavailable(storage)
        case .policy(let policy): self.init(policy)
        }
    }
}
