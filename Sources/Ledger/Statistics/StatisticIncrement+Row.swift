extension StatisticIncrement {
    /// A `statistics` row.
    public init(row r: some LedgerRow) throws(StorageError) {
        self.init(family: try r.text("family") ?? "", subject: try r.text("subject") ?? "", outcome: try r.text("outcome") ?? "",
                  bucket: Int(try r.integer("bucket") ?? 0), hour: try r.integer("hour") ?? 0, count: try r.integer("count") ?? 0)
    }
}
