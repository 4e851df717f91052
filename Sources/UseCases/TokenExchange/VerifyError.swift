public import Ledger

/// Why a verification could not answer.
public enum VerifyError: Error, Sendable {
    /// `consume` was asked of a token not issued for limited use.
    case notLimitedUse
    case storage(StorageError)
}
