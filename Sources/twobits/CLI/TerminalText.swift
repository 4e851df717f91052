/// Text from a server made safe to print on a terminal.
enum TerminalText {
    /// Control characters (C0, DEL, and the C1 range a terminal may also obey) as `\n`, `\t`, `\r`,
    /// `\\` or `\u{XX}`, so an escape sequence in an audit reason is shown, never executed.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\\": out += "\\\\"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
