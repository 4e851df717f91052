/// The few text helpers the commands need; FoundationEssentials has no `trimmingCharacters` or `padding`.
extension StringProtocol {
    /// Without the leading and trailing characters matching `isTrimmed` (whitespace by default).
    func trimmed(where isTrimmed: (Character) -> Bool = { $0.isWhitespace }) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[first...last])
    }

    /// Padded with spaces on the right to `width` characters (never cut).
    func padded(to width: Int) -> String {
        String(self) + String(repeating: " ", count: Swift.max(0, width - count))
    }
}
