extension CaptureDocument {
    /// A line the reader does not understand.
    public struct Unreadable: Error, CustomStringConvertible {
        public let line: Int
        public let text: String
        public var description: String { "line \(line) is not of the captures' shape: \(text)" }

        public init(line: Int, text: String) {
            self.line = line
            self.text = text
        }
    }

    /// The documents of `text`, each begun by a `---` line.
    public static func documents(_ text: String) throws(Unreadable) -> [CaptureDocument] {
        var documents: [CaptureDocument] = []
        var fields: [String: String] = [:]
        var properties: [String: String] = [:]
        var block: (key: String, lines: [String])?
        var inProperties = false
        var started = false

        func finishBlock() {
            if let open = block { fields[open.key] = open.lines.joined(separator: "\n") + "\n" }
            block = nil
        }
        func finishDocument() {
            finishBlock()
            if started { documents.append(CaptureDocument(fields: fields, properties: properties)) }
            fields = [:]
            properties = [:]
            inProperties = false
        }

        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line == "---" {
                finishDocument()
                started = true
                continue
            }
            if line.isEmpty { continue }
            guard started else { throw Unreadable(line: index + 1, text: line) }
            if line.hasPrefix("  ") {
                let inner = String(line.dropFirst(2))
                if block != nil {
                    block!.lines.append(inner)
                } else if inProperties, let (key, value) = pair(inner) {
                    if !value.isEmpty { properties[key] = value }
                } else {
                    throw Unreadable(line: index + 1, text: line)
                }
                continue
            }
            finishBlock()
            inProperties = false
            guard let (key, value) = pair(line) else { throw Unreadable(line: index + 1, text: line) }
            switch value {
            case "|": block = (key, [])
            case "" where key == "properties": inProperties = true
            default: fields[key] = value
            }
        }
        finishDocument()
        return documents
    }

    /// `key: value` with the value unquoted ('…' with '' for a quote); nil for any other line.
    static func pair(_ line: String) -> (String, String)? {
        guard let colon = line.firstIndex(of: ":"), !line[..<colon].contains(" ") else { return nil }
        let key = String(line[..<colon])
        var value = String(line[line.index(after: colon)...])
        if value.hasPrefix(" ") { value.removeFirst() } else if !value.isEmpty { return nil }
        if value.count >= 2, value.hasPrefix("'"), value.hasSuffix("'") {
            value = String(value.dropFirst().dropLast()).replacing("''", with: "'")
        }
        return (key, value)
    }
}
