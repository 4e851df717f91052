import Foundation
import Testing
import WireFormats

/// The strict JSON parser: RFC 8259 to the letter, the limits, and the writer's round trip.
@Suite struct JSONParserTests {
    static func parse(_ text: String, limits: JSONLimits = .default) throws(JSONError) -> JSONValue {
        try JSONValue.parse(Data(text.utf8), limits: limits)
    }

    static func reason(_ bytes: [UInt8], limits: JSONLimits = .default) -> JSONError.Reason? {
        do { _ = try JSONValue.parse(bytes, limits: limits); return nil } catch { return error.reason }
    }

    static func reason(_ text: String, limits: JSONLimits = .default) -> JSONError.Reason? { reason(Array(text.utf8), limits: limits) }

    @Test func keepsTypesApart() throws {
        let value = try Self.parse(#"{"a":true,"b":1,"c":"1","d":null,"e":1.5,"f":[1],"g":{"h":false}}"#)
        #expect(value["a"] == .bool(true))
        #expect(value["b"] == .int(1))
        #expect(value["c"] == .string("1"))
        #expect(value["d"] == .null)
        #expect(value["e"] == .double(1.5))
        #expect(value["f"] == .array([.int(1)]))
        #expect(value["g"]?["h"]?.boolValue == false)
        #expect(value["a"]?.intValue == nil)
        #expect(value["b"]?.boolValue == nil)
        #expect(Self.reason("not json") != nil)
    }

    @Test func acceptsEveryRFC8259Form() throws {
        #expect(try Self.parse(" \t\r\n[ 1 , -2 , 0 , -0 , 1.5e3 , 2E-2 , 3e+1 , 0.5 ] \n") ==
                .array([.int(1), .int(-2), .int(0), .int(0), .double(1500), .double(0.02), .double(30), .double(0.5)]))
        #expect(try Self.parse("\"x\"") == .string("x"))
        #expect(try Self.parse("null") == .null)
        #expect(try Self.parse("{}") == .object([:]))
        #expect(try Self.parse("[]") == .array([]))
        #expect(try Self.parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\ud83d\ude00""#) == .string("\"\\/\u{8}\u{C}\n\r\tAé€😀"))
        #expect(try Self.parse("\"é€😀\"") == .string("é€😀"))
        #expect(try Self.parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try Self.parse("9223372036854775807") == .int(.max))
        #expect(try Self.parse("-9223372036854775808") == .int(.min))
        #expect(try Self.parse("9223372036854775808") == .double(0x1p63))
        #expect(try Self.parse("-9223372036854775809") == .double(-0x1p63))
        #expect(try Self.parse("1e2") == .double(100))
        #expect(try Self.parse("1e-400") == .double(0))
        #expect(try Self.parse("1.7976931348623157e308") == .double(.greatestFiniteMagnitude))
    }

    /// Every way RFC 8259 says a text is not JSON, each with the reason the parser gives.
    @Test(arguments: [
        ("", JSONError.Reason.unexpectedEnd), ("   ", .unexpectedEnd), ("[", .unexpectedEnd), ("[1", .unexpectedEnd),
        ("{\"a\"", .unexpectedEnd), ("{\"a\":", .unexpectedEnd), ("\"abc", .unexpectedEnd), ("{", .unexpectedEnd),
        ("[1,]", .unexpectedByte(0x5D)), ("[,1]", .unexpectedByte(0x2C)), ("{\"a\":1,}", .unexpectedByte(0x7D)),
        ("{a:1}", .unexpectedByte(0x61)), ("{'a':1}", .unexpectedByte(0x27)), ("{\"a\" 1}", .unexpectedByte(0x31)),
        ("[1 2]", .unexpectedByte(0x32)), ("{\"a\":1 \"b\":2}", .unexpectedByte(0x22)), ("'x'", .unexpectedByte(0x27)),
        ("[1]]", .trailingData), ("1 2", .trailingData), ("{} x", .trailingData), ("nullx", .trailingData),
        ("01", .leadingZero), ("-01", .leadingZero), ("00", .leadingZero), ("[007]", .leadingZero),
        ("-", .invalidNumber), ("1.", .invalidNumber), (".5", .unexpectedByte(0x2E)), ("1e", .invalidNumber), ("1e+", .invalidNumber),
        ("+1", .unexpectedByte(0x2B)), ("-a", .invalidNumber), ("0x10", .trailingData), ("1.e5", .invalidNumber),
        ("NaN", .invalidNumber), ("Infinity", .invalidNumber), ("-Infinity", .invalidNumber), ("[NaN]", .invalidNumber),
        ("1e400", .numberOutOfRange), ("-1e400", .numberOutOfRange), (String(repeating: "9", count: 400), .numberOutOfRange),
        ("tru", .unexpectedEnd), ("trux", .invalidLiteral), ("nul", .unexpectedEnd), ("True", .unexpectedByte(0x54)), ("fals", .unexpectedEnd),
        ("\"\\x\"", .invalidEscape), ("\"\\u12\"", .invalidEscape), ("\"\\u12G4\"", .invalidEscape), ("\"\\U0041\"", .invalidEscape),
        ("\"\\'\"", .invalidEscape), ("\"\\", .unexpectedEnd),
        ("\"\\ud800\"", .loneSurrogate), ("\"\\udc00\"", .loneSurrogate), ("\"\\ud800\\u0041\"", .loneSurrogate),
        ("\"\\ud800\\ud800\"", .loneSurrogate), ("\"\\ude00\\ud83d\"", .loneSurrogate),
        ("\"a\u{1}b\"", .controlCharacter), ("\"a\nb\"", .controlCharacter), ("\"\t\"", .controlCharacter),
        ("{\"a\":1,\"a\":2}", .duplicateKey("a")), ("{\"a\":1,\"b\":{\"c\":1,\"c\":1}}", .duplicateKey("c")),
        ("{\"\\u0061\":1,\"a\":2}", .duplicateKey("a")),
        ("\u{FEFF}{}", .unexpectedByte(0xEF)), ("\u{A0}1", .unexpectedByte(0xC2)), ("\u{B}1", .unexpectedByte(0x0B)),
    ])
    func refusesWithTheReason(_ input: String, _ expected: JSONError.Reason) {
        #expect(Self.reason(input) == expected, "\(input.debugDescription)")
    }

    /// Bytes that are not UTF-8, inside and outside strings.
    @Test(arguments: [
        [0x22, 0xC0, 0x80, 0x22], [0x22, 0xC1, 0xBF, 0x22], [0x22, 0xE0, 0x80, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
        [0x22, 0xF0, 0x80, 0x80, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],
        [0x22, 0x80, 0x22], [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0xE2, 0x82],
        [0x22, 0x5C, 0x6E, 0xC3, 0x28, 0x22],
    ] as [[UInt8]])
    func refusesInvalidUTF8(_ bytes: [UInt8]) {
        #expect(Self.reason(bytes) == .invalidUTF8, "\(bytes)")
    }

    @Test func nestingDeeperThanTheLimitIsRefused() throws {
        let deepest = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(Self.reason(deepest) == nil)
        let tooDeep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(Self.reason(tooDeep) == .tooDeep(limit: 32))
        let objects = String(repeating: #"{"a":"#, count: 33) + "1" + String(repeating: "}", count: 33)
        #expect(Self.reason(objects) == .tooDeep(limit: 32))
        do { _ = try Self.parse(tooDeep); Issue.record("accepted") } catch {
            #expect(error.description == "nesting deeper than 32 at byte 32")
        }
        #expect(Self.reason(tooDeep, limits: JSONLimits(maxDepth: 33, maxValues: 100)) == nil)
    }

    /// The live defect of issue 12: 60 KB of `[` took about a minute of CPU through Foundation.
    @Test func sixtyKilobytesOfOpenBracketsFailFast() throws {
        let body = Data(repeating: UInt8(ascii: "["), count: 60_000)
        let clock = ContinuousClock()
        var reason: JSONError.Reason?
        let elapsed = clock.measure { reason = Self.reason(Array(body)) }
        #expect(reason == .tooDeep(limit: 32))
        // The time is reported, never asserted (the machine is shared).
        print("JSONParserTests: 60 KB of '[' refused in \(elapsed)")
        let flat = "[" + Array(repeating: "[]", count: 20_000).joined(separator: ",") + "]"
        let flatElapsed = clock.measure { reason = Self.reason(flat) }
        #expect(reason == .tooManyValues(limit: 4_096))
        print("JSONParserTests: 60 KB of '[],' refused in \(flatElapsed)")
    }

    @Test func valueCountIsCapped() {
        let atCap = "[" + Array(repeating: "0", count: 4_095).joined(separator: ",") + "]"
        #expect(Self.reason(atCap) == nil)
        let overCap = "[" + Array(repeating: "0", count: 4_096).joined(separator: ",") + "]"
        #expect(Self.reason(overCap) == .tooManyValues(limit: 4_096))
        #expect(Self.reason(overCap, limits: .configuration) == nil)
    }

    @Test func duplicateKeysAreRefusedAndNamed() {
        do { _ = try Self.parse(#"{"device_token":"a","device_token":"b"}"#); Issue.record("accepted") } catch {
            #expect(error.reason == .duplicateKey("device_token"))
            #expect(error.offset == 20)
            #expect(error.description == #"duplicate key "device_token" at byte 20"#)
        }
        // The same key in two different objects is fine.
        #expect(Self.reason(#"[{"a":1},{"a":1}]"#) == nil)
        // A long or odd key is shown escaped and cut.
        let long = String(repeating: "k", count: 200) + "\u{1}"
        do { _ = try Self.parse("{\(JSONString.quote(long)):1,\(JSONString.quote(long)):2}"); Issue.record("accepted") } catch {
            #expect(error.description.count < 100, "\(error.description)")
        }
    }

    @Test func writerRoundTrips() throws {
        let values: [JSONValue] = [
            .null, .bool(true), .bool(false), .int(0), .int(.min), .int(.max), .double(0.1), .double(-0.0), .double(1e300),
            .double(.leastNonzeroMagnitude), .double(1e16), .double(100), .double(-1.5e-7), .string(""), .string("\"\\/\u{0}\u{1F}\u{7F}é😀\u{2028}"),
            .array([]), .object([:]), .array([.int(1), .array([.object(["b": .null, "a": .string("x")])])]),
            .object(["é": .int(1), "e\u{301}x": .int(2), "": .bool(false), "z": .object(["y": .array([.double(2.5)])])]),
        ]
        for value in values {
            let text = value.serialized()
            #expect(try JSONValue.parse(text) == value, "\(text)")
            #expect(try JSONValue.parse(value.serializedData()) == value)
        }
        #expect(JSONValue.object(["b": .int(1), "a": .array([.bool(true), .null]), "c": .double(1)]).serialized() == #"{"a":[true,null],"b":1,"c":1.0}"#)
        #expect(JSONValue.string("a\"b\n").serialized() == JSONString.quote("a\"b\n"))
        #expect(JSONValue.double(.nan).serialized() == "null")
    }

    /// The hot path: a fallback-token exchange body is about 3.5 KB, mostly one base64 string.
    @Test func parsesAnExchangeBody() throws {
        let token = Data((0..<2_600).map { UInt8($0 & 0xFF) }).base64EncodedString()
        let body = #"{"device_token":"\#(token)","install_id":"install-1","limited_use":true}"#
        let value = try Self.parse(body)
        #expect(value["device_token"] == .string(token))
        let clock = ContinuousClock()
        let elapsed = clock.measure { for _ in 0..<1_000 { _ = try? Self.parse(body) } }
        print("JSONParserTests: 1,000 parses of a \(body.utf8.count)-byte exchange body in \(elapsed)")
    }

    /// Strings are scanned eight bytes at a time until a quote, backslash, control or non-ASCII byte: each of
    /// those, at every position of strings up to 40 bytes long, is found where it is, with the right value or
    /// the right reason and offset.
    @Test func everySpecialByteIsFoundAtEveryPositionOfAString() throws {
        func failure(_ bytes: [UInt8]) -> JSONError? {
            do { _ = try JSONValue.parse(bytes, limits: .default); return nil } catch { return error }
        }
        for length in 0...40 {
            for position in 0...length {
                let before = String(repeating: "a", count: position), after = String(repeating: "b", count: length - position)
                // A quote ends the string where it is.
                #expect(try Self.parse("[\"\(before)\",\"\(after)\"]") == .array([.string(before), .string(after)]))
                // An escape, and a two-byte and a four-byte UTF-8 character.
                #expect(try Self.parse("\"\(before)\\n\(after)\"") == .string(before + "\n" + after))
                #expect(try Self.parse("\"\(before)é\(after)\"") == .string(before + "é" + after))
                #expect(try Self.parse("\"\(before)😀\(after)\"") == .string(before + "😀" + after))
                // A control byte, an invalid UTF-8 byte, and the input ending: refused at their offsets.
                for (byte, reason) in [(UInt8(0x01), JSONError.Reason.controlCharacter), (0x1F, .controlCharacter), (0xFF, .invalidUTF8), (0x80, .invalidUTF8)] {
                    let bad = failure(Array("\"\(before)".utf8) + [byte] + Array("\(after)\"".utf8))
                    #expect(bad == JSONError(reason, at: 1 + position), "byte \(byte) at \(position) of \(length)")
                }
                #expect(failure(Array("\"\(before)\(after)".utf8)) == JSONError(.unexpectedEnd, at: 1 + length))
            }
        }
    }
}
