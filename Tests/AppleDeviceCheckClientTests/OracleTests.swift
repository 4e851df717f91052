import AppleDeviceCheckClient
import DeviceCheckModel
import ChildProcess
import Foundation
import SeededRandom
import Testing
import TwoBitsCrypto
import WireFormats

/// Random JSON texts (valid ones, written by hand in varied spellings) and malformed variants of them.
struct JSONTextGenerator {
    var random: SeededRandom

    mutating func whitespace() -> String {
        random.chance(80) ? "" : random.pick([" ", "\n", "\t", "\r\n", "  "])
    }

    mutating func number() -> String {
        var s = random.chance(30) ? "-" : ""
        if random.chance(20) { s += "0" } else {
            s += String(Int.random(in: 1...9, using: &random))
            for _ in 0..<Int.random(in: 0...(random.chance(10) ? 24 : 6), using: &random) { s += String(Int.random(in: 0...9, using: &random)) }
        }
        if random.chance(30) {
            s += "."
            for _ in 0..<Int.random(in: 1...8, using: &random) { s += String(Int.random(in: 0...9, using: &random)) }
        }
        if random.chance(20) {
            s += random.pick(["e", "E"]) + random.pick(["", "+", "-"])
            s += String(random.chance(10) ? Int.random(in: 300...400, using: &random) : Int.random(in: 0...30, using: &random))
        }
        return s
    }

    mutating func string() -> String {
        var s = "\""
        for _ in 0..<Int.random(in: 0...8, using: &random) {
            switch Int.random(in: 0..<10, using: &random) {
            case 0: s += random.pick([#"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\n"#, #"\r"#, #"\t"#])
            case 1:
                // A BMP scalar as an escape (never a surrogate), in either case of hex.
                var v = Int.random(in: 0...0xFFFF, using: &random)
                if (0xD800...0xDFFF).contains(v) { v = 0x41 }
                let hex = String(v, radix: 16)
                let padded = String(repeating: "0", count: 4 - hex.count) + hex
                s += "\\u" + (random.chance(50) ? padded.uppercased() : padded)
            case 2: s += random.pick([#"\ud83d\ude00"#, #"\uD834\uDD1E"#, #"\udbff\udfff"#])
            case 3: s += random.pick(["é", "€", "😀", "\u{2028}", "e\u{301}", "\u{7F}", "中文", "\u{10FFFF}"])
            case 4 where random.chance(5): s += random.pick([#"\ud800"#, #"\udc00x"#])
            default: s += random.pick(["a", "b", "z", "0", " ", "key", "A-Z", "~", "'"])
            }
        }
        return s + "\""
    }

    mutating func value(depth: Int) -> String {
        let kinds = depth >= 5 ? 4 : 6
        switch Int.random(in: 0..<kinds, using: &random) {
        case 0: return random.pick(["null", "true", "false"])
        case 1: return number()
        case 2: return string()
        case 3: return String(Int64.random(in: .min ... .max, using: &random) >> Int.random(in: 0...63, using: &random))
        case 4:
            let items = (0..<Int.random(in: 0...5, using: &random)).map { _ in whitespace() + value(depth: depth + 1) + whitespace() }
            return "[" + items.joined(separator: ",") + (items.isEmpty ? whitespace() : "") + "]"
        default:
            var keys = Set<String>()
            var members: [String] = []
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                let key = random.chance(70) ? "\"k\(Int.random(in: 0...20, using: &random))\"" : string()
                guard keys.insert(key).inserted else { continue }
                members.append(whitespace() + key + whitespace() + ":" + whitespace() + value(depth: depth + 1) + whitespace())
            }
            return "{" + members.joined(separator: ",") + "}"
        }
    }

    mutating func document() -> [UInt8] { Array((whitespace() + value(depth: 0) + whitespace()).utf8) }

    /// A variant of a valid document, most of them no longer JSON.
    mutating func malformed() -> [UInt8] {
        var d = document()
        let at = { (r: inout SeededRandom, d: [UInt8]) in Int.random(in: 0...d.count, using: &r) }
        switch Int.random(in: 0..<12, using: &random) {
        case 0: d = Array(d.prefix(at(&random, d)))
        case 1 where !d.isEmpty:
            d[Int.random(in: 0..<d.count, using: &random)] = random.chance(50)
                ? random.pick(Array(",:[]{}\"\\ 0-.eE".utf8) + [0x00, 0x1F, 0x80, 0xC0, 0xFF]) : UInt8.random(in: 0...255, using: &random)
        case 2: d.insert(UInt8(ascii: ","), at: at(&random, d))
        case 3 where !d.isEmpty: d.remove(at: Int.random(in: 0..<d.count, using: &random))
        case 4:
            let n = Int.random(in: 28...36, using: &random)
            let array = random.chance(50)
            d = Array((String(repeating: array ? "[" : #"{"a":"#, count: n)).utf8) + d + Array(String(repeating: array ? "]" : "}", count: n).utf8)
        case 5:
            let key = random.pick(["\"k1\"", "\"é\"", "\"e\u{301}\"", #""\u00e9""#])
            let other = random.pick(["\"k1\"", "\"é\"", "\"e\u{301}\"", #""\u00e9""#, "\"k2\""])
            d = Array(#"{\#(key):1,"x":\#(String(decoding: d, as: UTF8.self)),\#(other):2}"#.utf8)
        case 6:
            let bad = random.pick([#"\x"#, #"\u12"#, #"\ud800"#, #"\udc00"#, #"\ud800\u0041"#, #"\U0041"#, "\\'", #"\u{41}"#])
            d = Array(("[\"a" + bad + "b\"," ).utf8) + d + [UInt8(ascii: "]")]
        case 7:
            let bad = random.pick([[0x80], [0xC0, 0x80], [0xC1, 0xBF], [0xED, 0xA0, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xE2, 0x82],
                                   [0xF4, 0x90, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xC3, 0xA9]] as [[UInt8]])
            d = Array("[\"".utf8) + bad + Array("\",".utf8) + d + [UInt8(ascii: "]")]
        case 8:
            d = Array(random.pick(["[01]", "-0.0", "[-01.5]", "NaN", "[Infinity]", "-Infinity", "1e400", "[1.]", "[.5]", "+1", "0x1F", "1e",
                                   "9223372036854775808", "-9223372036854775809", "1" + String(repeating: "0", count: 320)]).utf8)
        case 9:
            let n = Int.random(in: 4_093...4_097, using: &random)
            d = Array(("[" + Array(repeating: "0", count: n).joined(separator: ",") + "]").utf8)
        case 10:
            d += Array(random.pick([" x", "]", "}", ",", " 1", "\u{0}", "{}"]).utf8)
        default:
            d.insert(random.pick(Array("[]{}:\"".utf8)), at: at(&random, d))
        }
        return d
    }
}

/// Properties of TwoBits' parsers checked against an independent implementation: Python's json, base64
/// and datetime (Tests/python/oracle.py), same verdict and same value for thousands of seeded cases.
@Suite struct OracleTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/python/oracle.py").path

    struct Case {
        let kind: String
        let input: [UInt8]
        let verdict: Bool
        let payload: [UInt8]
        var line: String {
            "\(kind) \(Data(input).base64EncodedString().nonEmpty) \(verdict ? "ok" : "refuse") \(Data(payload).base64EncodedString().nonEmpty)\n"
        }
    }

    /// Writes the cases, runs the oracle, returns its exit status and output.
    static func check(_ cases: [Case]) async throws -> ChildProcess.Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("twobits-oracle-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(cases.map(\.line).joined().utf8).write(to: dir.appendingPathComponent("cases.txt"))
        return try await ChildProcess.run(["python3", script, dir.path])
    }

    static func seed() -> UInt64 {
        ProcessInfo.processInfo.environment["TWOBITS_ORACLE_SEED"].flatMap(UInt64.init) ?? 20_261_123
    }

    static func jsonCase(_ input: [UInt8]) -> (Case, roundTripped: Bool) {
        do {
            let value = try JSONValue.parse(input)
            let text = value.serialized()
            return (Case(kind: "json", input: input, verdict: true, payload: Array(text.utf8)), (try? JSONValue.parse(text)) == value)
        } catch {
            return (Case(kind: "json", input: input, verdict: false, payload: Array(error.description.utf8)), true)
        }
    }

    @Test func jsonAgreesWithPythonOnValidAndMalformedDocuments() async throws {
        let seed = Self.seed()
        var generator = JSONTextGenerator(random: SeededRandom(seed: seed))
        var cases: [Case] = []
        var notRoundTripped: [String] = []
        var accepted = 0
        for i in 0..<6_000 {
            let input = i % 2 == 0 ? generator.document() : generator.malformed()
            let (c, roundTripped) = Self.jsonCase(input)
            if !roundTripped { notRoundTripped.append(String(decoding: input, as: UTF8.self)) }
            if c.verdict { accepted += 1 }
            cases.append(c)
        }
        #expect(notRoundTripped.isEmpty, "seed \(seed): parse(serialize(v)) != v for \(notRoundTripped.prefix(5))")
        #expect(accepted > 2_000 && accepted < 5_000, "seed \(seed): \(accepted) of 6000 accepted: the generator is off")
        let result = try await Self.check(cases)
        #expect(result.status == 0, "seed \(seed) (rerun with TWOBITS_ORACLE_SEED=\(seed)):\n\(result.output)")
        #expect(result.output.contains("agreed on 6000 of 6000"), "seed \(seed): \(result.output)")
        print("OracleTests json (seed \(seed)): \(result.output.split(separator: "\n").last ?? "")")
    }

    @Test func base64URLAgreesWithPython() async throws {
        let seed = Self.seed()
        var random = SeededRandom(seed: seed ^ 0xB64)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var cases: [Case] = []
        for i in 0..<4_000 {
            let text: [UInt8]
            switch i % 4 {
            case 0:
                let bytes = (0..<Int.random(in: 0...48, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                text = Array(Data(bytes).base64URLEncodedString().utf8)
            case 1, 2:
                text = (0..<Int.random(in: 0...13, using: &random)).map { _ in random.pick(alphabet) }
            default:
                var t = (0..<Int.random(in: 0...12, using: &random)).map { _ in random.pick(alphabet) }
                let odd: [UInt8] = random.pick([[0x3D], [0x3D, 0x3D], [0x2B], [0x2F], [0x20], [0x0A], [0x2E], [0xC3, 0xA9], [0x00]])
                t.insert(contentsOf: odd, at: random.chance(50) ? t.count : Int.random(in: 0...t.count, using: &random))
                text = t
            }
            let decoded = Data(base64URLEncoded: String(decoding: text, as: UTF8.self))
            cases.append(Case(kind: "b64", input: text, verdict: decoded != nil, payload: Array(decoded ?? Data())))
        }
        let result = try await Self.check(cases)
        #expect(result.status == 0, "seed \(seed):\n\(result.output)")
        #expect(result.output.contains("agreed on 4000 of 4000"), "seed \(seed): \(result.output)")
        print("OracleTests base64url (seed \(seed)): \(result.output.split(separator: "\n").last ?? "")")
    }

    /// Apple's month stamp ("YYYY-MM") and the month of an instant in UTC, against Python's datetime;
    /// Apple's 200 answer to a query (bit0/bit1 JSON booleans, last_update_time) against Python's json.
    @Test func monthStampsAndQueryAnswersAgreeWithPython() async throws {
        let seed = Self.seed()
        var random = SeededRandom(seed: seed ^ 0xDA7E)
        var cases: [Case] = []
        for _ in 0..<2_000 {
            var text = String(format: "%04d-%02d", Int.random(in: 1900...9999, using: &random), Int.random(in: 0...13, using: &random))
            if random.chance(30) {
                text = random.pick([text + " ", " " + text, text.replacingOccurrences(of: "-", with: "/"), String(text.dropFirst()),
                                    text + "-01", "２０２６-01", "2026-1", "+202-01", "-2026-01", "2026--1", "", "20a6-01", "12345-01"])
            }
            let parsed = YearMonth(text)
            cases.append(Case(kind: "month", input: Array(text.utf8), verdict: parsed != nil, payload: Array((parsed?.description ?? "").utf8)))
        }
        for _ in 0..<1_000 {
            let seconds = Int64.random(in: 0...253_402_300_799, using: &random)
            let month = YearMonth(containing: Date(timeIntervalSince1970: TimeInterval(seconds)))
            cases.append(Case(kind: "stamp", input: Array(String(seconds).utf8), verdict: true, payload: Array(month.description.utf8)))
        }
        for _ in 0..<2_000 {
            var fields = [
                #""bit0":\#(random.pick(["true", "false"]))"#, #""bit1":\#(random.pick(["true", "false"]))"#,
                #""last_update_time":"\#(String(format: "%04d-%02d", Int.random(in: 1960...2100, using: &random), Int.random(in: 1...12, using: &random)))""#,
            ]
            if random.chance(40) {
                let i = Int.random(in: 0..<3, using: &random)
                fields[i] = random.pick([#""bit0":1"#, #""bit1":0"#, #""bit0":"true""#, #""bit1":null"#, #""last_update_time":"2026-13""#,
                                         #""last_update_time":202601"#, #""last_update_time":null"#, #""other":true"#, #""bit0":true,"bit0":false"#])
            }
            if random.chance(10) { fields.append(#""extra":[1,{"x":null}]"#) }
            fields.shuffle(using: &random)
            var body = "{" + fields.joined(separator: random.pick([",", ", ", " ,\n"])) + "}"
            if random.chance(10) {
                body = random.pick(["Failed to find bit state", "  Bit State Not Found\n", "failed to find bit state", "", "null", "[]",
                                    "Failed to find bit state.", #"{"bit0":true,"bit1":true,"last_update_time":"2026-01"} x"#,
                                    String(repeating: "[", count: 40)])
            }
            let verdict: Bool
            let payload: String
            switch AppleDeviceCheckClient.classification(.query, status: 200, body: Data(body.utf8)) {
            case .success(.neverSet?): (verdict, payload) = (true, "never")
            case .success(.state(let s)?): (verdict, payload) = (true, "\(s.bit0 ? 1 : 0),\(s.bit1 ? 1 : 0),\(s.lastUpdated)")
            default: (verdict, payload) = (false, "")
            }
            cases.append(Case(kind: "query", input: Array(body.utf8), verdict: verdict, payload: Array(payload.utf8)))
        }
        let result = try await Self.check(cases)
        #expect(result.status == 0, "seed \(seed):\n\(result.output)")
        #expect(result.output.contains("agreed on 5000 of 5000"), "seed \(seed): \(result.output)")
        print("OracleTests month/query (seed \(seed)): \(result.output.split(separator: "\n").last ?? "")")
    }

    /// Guards the guard: a wrong verdict and a wrong value must make the oracle fail.
    @Test func theOracleCatchesADisagreement() async throws {
        let result = try await Self.check([
            Case(kind: "json", input: Array(#"{"a":1,"a":2}"#.utf8), verdict: true, payload: Array(#"{"a":1}"#.utf8)),
            Case(kind: "json", input: Array("[1]".utf8), verdict: true, payload: Array("[1.0]".utf8)),
            Case(kind: "b64", input: Array("Zg==".utf8), verdict: true, payload: Array("f".utf8)),
            Case(kind: "json", input: Array("[true]".utf8), verdict: true, payload: Array("[true]".utf8)),
        ])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("agreed on 1 of 4"), "\(result.output)")
    }
}

extension String {
    /// The oracle's line format needs a token for an empty field.
    fileprivate var nonEmpty: String { isEmpty ? "=" : self }
}
