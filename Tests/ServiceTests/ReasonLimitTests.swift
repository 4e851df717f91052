import Foundation
import TestSupport
import Testing
import TwoBitsCrypto
import TwoBitsService

/// A ban's `reason` is bounded in code points (so in bytes) and free of control characters; each test runs
/// over loopback HTTP and in process (`ServiceHarness.Mode`).
@Suite("Reason limits")
struct ReasonLimitTests {
    static func ban(_ h: ServiceHarness, reason: String) async throws -> ServiceHarness.Answer {
        let body = String(decoding: try JSONEncoder().encode(["install_id": "install-1", "reason": reason]), as: UTF8.self)
        return try await h.post("/v1/admin/bans", body, key: "admin")
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func reasonsAreCappedInCodePointsWhichBoundsTheirBytes(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let emoji = String(repeating: "😀", count: 499)
            // 500 code points (1,997 bytes) pass; 501 do not, though Swift counts both as 500 characters.
            let fits = emoji + "e", over = emoji + "e\u{301}"
            #expect(fits.unicodeScalars.count == 500 && over.unicodeScalars.count == 501 && over.count == 500)
            #expect(try await Self.ban(h, reason: fits).status == 202)
            let refused = try await Self.ban(h, reason: over)
            #expect(refused.status == 400 && refused.code == "bad_request", "\(refused.text)")
            // 30,000 combining marks on one letter: one character, 60 KB: refused.
            let marks = "e" + String(repeating: "\u{301}", count: 30_000)
            #expect(marks.count == 1)
            #expect(try await Self.ban(h, reason: marks).status == 400)
            #expect(try await Self.ban(h, reason: String(repeating: "a", count: 501)).status == 400)
            #expect(try await Self.ban(h, reason: String(repeating: "a", count: 500)).status == 202)
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases, ["\u{0}", "cut\u{0}here", "\u{1B}[31mred", "line\nbreak", "tab\there", "\u{7F}", "\u{1F}"])
    func controlCharactersAreRefused(mode: ServiceHarness.Mode, reason: String) async throws {
        try await withService(mode: mode) { h in
            let answer = try await Self.ban(h, reason: reason)
            #expect(answer.status == 400 && answer.code == "bad_request", "\(answer.text)")
            #expect(answer.json?["error"]?["message"]?.stringValue?.contains("control") == true)
            let pending = try await h.request("GET", "/v1/admin/bans/pending", key: "admin")
            #expect(pending.json?["pending"] == .array([]))
        }
    }

    /// Issue 34: C1 controls (U+009B is a CSI, as ESC [ is) and the bidirectional marks, overrides and isolates
    /// reach admins' terminals through the CSV, the JSON and the CLI: refused as the C0 controls are.
    @Test(arguments: ServiceHarness.Mode.allCases, ["\u{80}", "\u{85}", "\u{9B}31mred", "\u{9F}", "\u{61C}", "\u{200E}", "\u{200F}", "\u{202A}", "\u{202B}",
                      "\u{202C}", "\u{202D}", "fraud \u{202E}gnp.exe", "\u{2066}", "\u{2067}", "\u{2068}", "x\u{2069}"])
    func c1AndBidiControlsAreRefused(mode: ServiceHarness.Mode, reason: String) async throws {
        try await withService(mode: mode) { h in
            let answer = try await Self.ban(h, reason: reason)
            #expect(answer.status == 400 && answer.code == "bad_request", "\(answer.text)")
            #expect(answer.json?["error"]?["message"]?.stringValue?.contains("bidirectional") == true)
            let pending = try await h.request("GET", "/v1/admin/bans/pending", key: "admin")
            #expect(pending.json?["pending"] == .array([]))
        }
    }

    /// Issue 40: the other format characters (Cf) and the line and paragraph separators (Zl, Zp) are invisible, or a
    /// line break, in what an admin reads: a soft hyphen, zero-width space, word joiner, U+FEFF, a tag, U+2028, U+2029.
    @Test(arguments: ServiceHarness.Mode.allCases, ["lo\u{AD}st", "lo\u{200B}st", "lo\u{2060}st", "\u{FEFF}lost", "lost \u{E0041}",
                                                    "lost\u{2028}admin: nothing to see", "lost\u{2029}"])
    func formatCharactersAndLineSeparatorsAreRefused(mode: ServiceHarness.Mode, reason: String) async throws {
        try await withService(mode: mode) { h in
            let answer = try await Self.ban(h, reason: reason)
            #expect(answer.status == 400 && answer.code == "bad_request", "\(answer.text)")
            #expect(answer.json?["error"]?["message"]?.stringValue?.contains("format characters") == true)
            let pending = try await h.request("GET", "/v1/admin/bans/pending", key: "admin")
            #expect(pending.json?["pending"] == .array([]))
        }
    }

    /// Their neighbours are text: a no-break space (U+00A0), a zero-width joiner (U+200D, in emoji sequences), a
    /// hyphen (U+2010), a narrow no-break space (U+202F), Arabic punctuation around U+061C.
    @Test(arguments: ServiceHarness.Mode.allCases) func theNeighboursOfTheRefusedRangesAreKept(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let reason = "a\u{A0}b 👩\u{200D}💻 re\u{2010}install c\u{202F}d \u{60C}\u{61B}\u{61D}"
            let answer = try await Self.ban(h, reason: reason)
            #expect(answer.status == 202, "\(answer.text)")
            let pending = try await h.request("GET", "/v1/admin/bans/pending", key: "admin")
            guard case .array(let items)? = pending.json?["pending"] else { Issue.record("no list: \(pending.text)"); return }
            #expect(items.first?["reason"]?.stringValue == reason)
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func printableReasonsWithAccentsAndEmojiAreKept(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let answer = try await Self.ban(h, reason: "fraude répétée 😀 — see ticket #12")
            #expect(answer.status == 202, "\(answer.text)")
            let pending = try await h.request("GET", "/v1/admin/bans/pending", key: "admin")
            guard case .array(let items)? = pending.json?["pending"] else { Issue.record("no list: \(pending.text)"); return }
            #expect(items.first?["reason"]?.stringValue == "fraude répétée 😀 — see ticket #12")
        }
    }
}
