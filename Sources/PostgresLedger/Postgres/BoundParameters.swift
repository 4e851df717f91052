import CPostgres
import FoundationEssentials
import Glibc

/// Parameters as libpq takes them: integers and text as text, bytea as binary, each in a malloc'ed buffer.
final class BoundParameters {
    let types: [Oid]
    let formats: [Int32]
    let lengths: [Int32]
    private let buffers: [UnsafeMutablePointer<CChar>?]
    var count: Int32 { Int32(types.count) }

    init(_ parameters: [PostgresValue]) {
        var types: [Oid] = [], formats: [Int32] = [], lengths: [Int32] = [], buffers: [UnsafeMutablePointer<CChar>?] = []
        for parameter in parameters {
            switch parameter {
            case .null:
                types.append(0); formats.append(0); lengths.append(0); buffers.append(nil)
            case .integer(let i):
                types.append(20); formats.append(0); lengths.append(0); buffers.append(strdup(String(i)))
            case .text(let s):
                types.append(25); formats.append(0); lengths.append(0); buffers.append(strdup(s))
            case .bytea(let data):
                // malloc'ed like the strdup'ed buffers, so that one free() releases them all.
                let copy = malloc(max(1, data.count))!.assumingMemoryBound(to: CChar.self)
                data.withUnsafeBytes { raw in
                    if let base = raw.baseAddress { UnsafeMutableRawPointer(copy).copyMemory(from: base, byteCount: data.count) }
                }
                types.append(17); formats.append(1); lengths.append(Int32(data.count)); buffers.append(copy)
            }
        }
        self.types = types
        self.formats = formats
        self.lengths = lengths
        self.buffers = buffers
    }

    deinit { buffers.forEach { free($0) } }

    func withValues<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        let values: [UnsafePointer<CChar>?] = buffers.map { $0.map { UnsafePointer($0) } }
        return values.withUnsafeBufferPointer { body($0.baseAddress) }
    }
}
