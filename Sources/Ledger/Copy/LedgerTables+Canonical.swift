public import FoundationEssentials

extension LedgerTables.Table {
    /// The table's name, columns and typed values as one byte string, the same whichever database the rows were
    /// read from: what `twobits ledger copy` compares (and hashes) on both sides. Every field is length-prefixed
    /// and every cell tagged with its type, so a text never equals a blob or an integer, nor a NUL-cut prefix.
    /// Rows are ordered by their own encoding, not by key: PostgreSQL orders text by its collation, SQLite by bytes.
    public var canonicalForm: Data {
        var out = Data("twobits.ledger-table.v1".utf8)
        Self.appendField(Data(name.utf8), to: &out)
        Self.appendNumber(UInt64(columns.count), to: &out)
        for column in columns { Self.appendField(Data(column.utf8), to: &out) }
        let encoded = rows.map(Self.encode).sorted { $0.lexicographicallyPrecedes($1) }
        Self.appendNumber(UInt64(encoded.count), to: &out)
        for row in encoded { Self.appendField(row, to: &out) }
        return out
    }

    /// How many rows of `self` have no equal row in `other` (each row counted once per copy it has).
    public func rowsMissing(from other: LedgerTables.Table) -> Int {
        var remaining: [Data: Int] = [:]
        for row in other.rows { remaining[Self.encode(row), default: 0] += 1 }
        var missing = 0
        for row in rows {
            let key = Self.encode(row)
            if let n = remaining[key], n > 0 { remaining[key] = n - 1 } else { missing += 1 }
        }
        return missing
    }

    private static func encode(_ row: [LedgerTables.Cell]) -> Data {
        var out = Data()
        appendNumber(UInt64(row.count), to: &out)
        for cell in row {
            switch cell {
            case .null: out.append(0)
            case .integer(let i): out.append(1); appendNumber(UInt64(bitPattern: i), to: &out)
            case .text(let s): out.append(2); appendField(Data(s.utf8), to: &out)
            case .blob(let b): out.append(3); appendField(b, to: &out)
            }
        }
        return out
    }

    private static func appendField(_ bytes: Data, to out: inout Data) {
        appendNumber(UInt64(bytes.count), to: &out)
        out.append(bytes)
    }

    private static func appendNumber(_ n: UInt64, to out: inout Data) {
        withUnsafeBytes(of: n.bigEndian) { out.append(contentsOf: $0) }
    }
}
