/// Passwords out of every text the service shows: the `listening` line, logs, error messages, `twobits`
/// output. One function for all of them, so a form of credential handled in one place is handled everywhere.
///
/// It errs on the side of hiding: what it cannot tell apart from a password it hides too.
/// - URI user info (`scheme://user:password@host…`): everything from `://` to the **last** `@` of the
///   text becomes `***`, user name included (a bare `https://token@host` may be a secret too). A password
///   may hold `/`, `?`, `#`, `@` or spaces: the last `@` is past all of them (an `@` later in the text
///   only hides more).
/// - `password=` (and every keyword ending in `password`, like libpq's `sslpassword`), with or without
///   spaces around `=`: in a URI query (after `?` or `&`) the value runs to the next `&` (or the end of
///   the text); in libpq's keyword/value form a quoted value (`'a b\'c'`) runs to its closing quote,
///   backslash escapes included, an unquoted one to the next space.
public enum CredentialRedaction {
    /// What hidden text is replaced by.
    public static let mask = "***"

    /// `text` with every password it holds replaced by `***`.
    public static func redacted(_ text: String) -> String {
        guard mayHoldCredentials(text) else { return text }
        return keywordPasswordsMasked(in: userInfoMasked(in: text))
    }

    /// A byte scan for `://` or `password` (any case): most texts (log values) hold neither, and are
    /// returned without a copy.
    static func mayHoldCredentials(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(scan) ?? Array(text.utf8).withUnsafeBufferPointer(scan)
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let word: StaticString = "password"
        let n = bytes.count
        var i = 0
        while i < n {
            let b = bytes[i]
            if b == 0x3A, i + 2 < n, bytes[i + 1] == 0x2F, bytes[i + 2] == 0x2F { return true }
            if b | 0x20 == 0x70, i + word.utf8CodeUnitCount <= n {
                var matches = true
                for k in 0..<word.utf8CodeUnitCount where bytes[i + k] | 0x20 != word.utf8Start[k] {
                    matches = false
                    break
                }
                if matches { return true }
            }
            i += 1
        }
        return false
    }

    /// `scheme://user:password@…` → `scheme://***@…`, through the last `@` of the text.
    static func userInfoMasked(in text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let scheme = rest.firstRange(of: "://") {
            out += rest[..<scheme.upperBound]
            rest = rest[scheme.upperBound...]
            guard let at = rest.lastIndex(of: "@") else { break }
            out += mask + "@"
            rest = rest[rest.index(after: at)...]
        }
        return out + rest
    }

    /// Every `…password = value` with its value replaced by `***` (see the type's documentation).
    static func keywordPasswordsMasked(in text: String) -> String {
        let characters = Array(text)
        var out = ""
        var i = 0
        while i < characters.count {
            guard let keywordEnd = passwordKeywordEnd(characters, at: i) else {
                out.append(characters[i])
                i += 1
                continue
            }
            // A keyword ending in "password", then optional spaces, then '='.
            var j = keywordEnd
            while j < characters.count, characters[j] == " " || characters[j] == "\t" { j += 1 }
            guard j < characters.count, characters[j] == "=" else {
                out += String(characters[i..<keywordEnd])
                i = keywordEnd
                continue
            }
            j += 1
            while j < characters.count, characters[j] == " " || characters[j] == "\t" { j += 1 }
            out += String(characters[i..<j]) + mask
            i = valueEnd(characters, at: j, inQuery: isInQuery(characters, before: i))
        }
        return out
    }

    /// Where the keyword at `i` ends when it ends in "password" (case-insensitive) and starts a word.
    private static func passwordKeywordEnd(_ c: [Character], at i: Int) -> Int? {
        let word = Array("password")
        // The keyword is the run of name characters that starts at i; only its start is a candidate.
        if i > 0, isNameCharacter(c[i - 1]) { return nil }
        var end = i
        while end < c.count, isNameCharacter(c[end]) { end += 1 }
        guard end - i >= word.count else { return nil }
        let tail = c[(end - word.count)..<end].map { Character($0.lowercased()) }
        return tail == word ? end : nil
    }

    private static func isNameCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" || c == "-" }

    /// Whether the keyword at `i` is a URI query parameter (preceded by `?` or `&`).
    private static func isInQuery(_ c: [Character], before i: Int) -> Bool { i > 0 && (c[i - 1] == "?" || c[i - 1] == "&") }

    /// The end of the value at `j`: quoted to its closing quote, in a query to `&`, otherwise to a space.
    private static func valueEnd(_ c: [Character], at j: Int, inQuery: Bool) -> Int {
        var k = j
        if !inQuery, k < c.count, c[k] == "'" {
            k += 1
            while k < c.count, c[k] != "'" { k += c[k] == "\\" ? 2 : 1 }
            return min(k + 1, c.count)
        }
        while k < c.count {
            if inQuery ? c[k] == "&" : c[k].isWhitespace { break }
            k += c[k] == "\\" && !inQuery ? 2 : 1
        }
        return min(k, c.count)
    }
}
