import Foundation

/// The public test vectors in `../shared/vectors` beside the repository (its README says where each file comes
/// from), or in `TWOBITS_VECTORS_DIR`. Never copied into the repository: tests read them in place.
public enum TestVectors {
    /// The folder: `TWOBITS_VECTORS_DIR` when set, else `../shared/vectors` from the repository root.
    public static var root: URL {
        if let path = ProcessInfo.processInfo.environment["TWOBITS_VECTORS_DIR"], !path.isEmpty {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        // Tests/TestVectors/TestVectors.swift -> the repository root -> its parent.
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repository.deletingLastPathComponent().appendingPathComponent("shared/vectors", isDirectory: true)
    }

    /// Whether a missing folder fails the test instead of skipping it (CI: `TWOBITS_REQUIRE_VECTORS=1`).
    public static var required: Bool { ProcessInfo.processInfo.environment["TWOBITS_REQUIRE_VECTORS"] == "1" }

    /// The bytes of `path` (relative to the folder); nil, after printing a line that says the test skipped, when
    /// the folder is absent and not required. With `TWOBITS_REQUIRE_VECTORS=1`, absence throws.
    public static func file(_ path: String, for test: String) throws -> Data? {
        let url = root.appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: url.path) else {
            if required { throw TestVectorsMissing(path: url.path) }
            print("skipped: \(test): \(url.path) is absent (set TWOBITS_VECTORS_DIR to its folder; TWOBITS_REQUIRE_VECTORS=1 fails instead)")
            return nil
        }
        return try Data(contentsOf: url)
    }

    /// The files of `folder` whose names end in `suffix`, sorted; nil (skipped, printed) as `file` does.
    public static func files(in folder: String, suffix: String, for test: String) throws -> [(name: String, data: Data)]? {
        let url = root.appendingPathComponent(folder, isDirectory: true)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: url.path) else {
            if required { throw TestVectorsMissing(path: url.path) }
            print("skipped: \(test): \(url.path) is absent (set TWOBITS_VECTORS_DIR to its folder; TWOBITS_REQUIRE_VECTORS=1 fails instead)")
            return nil
        }
        return try names.filter { $0.hasSuffix(suffix) }.sorted().map { ($0, try Data(contentsOf: url.appendingPathComponent($0))) }
    }
}
