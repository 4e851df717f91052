extension SQLiteConnection {
    /// Runs every body in one transaction: one commit, so one set of file locks and one write of each page
    /// the bodies share, for all of them. When a body fails, or the commit does, that transaction is rolled
    /// back and each body runs again in a transaction of its own, so each has the outcome it would have had
    /// alone. Returns each body's error, in order (nil: committed).
    func transaction(each bodies: [(SQLiteTransaction) throws(SQLiteError) -> Void]) -> [SQLiteError?] {
        lock.withLock { () -> [SQLiteError?] in
            if bodies.count > 1 {
                do throws(SQLiteError) {
                    try transactionLocked { tx throws(SQLiteError) in for body in bodies { try body(tx) } }
                    return Array(repeating: nil, count: bodies.count)
                } catch {}
            }
            return bodies.map { body -> SQLiteError? in
                do throws(SQLiteError) { try transactionLocked(body); return nil } catch { return error }
            }
        }
    }
}
