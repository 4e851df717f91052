public import FoundationEssentials

extension YearMonth {
    /// The month containing `date` in UTC (proleptic Gregorian).
    public init(containing date: Date) {
        self.init(containingSecondsSince1970: date.timeIntervalSince1970)
    }
}
