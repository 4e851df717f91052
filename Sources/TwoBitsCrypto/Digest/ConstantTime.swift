import COpenSSL
public import FoundationEssentials

/// Comparisons whose running time does not depend on where the inputs differ.
public enum ConstantTime {
    /// True when both have the same length and the same bytes (CRYPTO_memcmp).
    public static func equal(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 }
        }
    }
}
