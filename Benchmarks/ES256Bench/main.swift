import Foundation
import TwoBitsCrypto
#if canImport(Glibc)
import Glibc
import WireFormats
#endif

// ES256Bench: how many ES256 signatures per second TwoBits' own signer makes on one thread.
//
// usage: ES256Bench [--seconds N] [--input-bytes N]
//
// Signs a JWT signing input (base64url(header) "." base64url(claims), about 1 KB by default) with
// `ES256Signer` for N seconds of this thread's CPU time and prints one JSON object:
//   {"signer":"TwoBitsCrypto.ES256Signer","cpu_seconds":...,"wall_seconds":...,"signs":...,
//    "signs_per_second":...,"signs_per_wall_second":...,"input_bytes":...}
// signs_per_second is per CPU second, like `openssl speed` (which counts user CPU time unless given
// -elapsed), so the two compare fairly on a busy machine. Benchmarks/bench.py runs both.

var seconds = 3.0
var inputBytes = 1024
var arguments = Array(CommandLine.arguments.dropFirst())
while !arguments.isEmpty {
    let flag = arguments.removeFirst()
    guard let value = arguments.first else {
        FileHandle.standardError.write(Data("ES256Bench: \(flag) needs a value\nusage: ES256Bench [--seconds N] [--input-bytes N]\n".utf8))
        exit(2)
    }
    arguments.removeFirst()
    switch flag {
    case "--seconds":
        guard let s = Double(value), s > 0, s <= 600 else { FileHandle.standardError.write(Data("ES256Bench: --seconds must be 0-600\n".utf8)); exit(2) }
        seconds = s
    case "--input-bytes":
        guard let n = Int(value), n >= 64, n <= 1 << 20 else { FileHandle.standardError.write(Data("ES256Bench: --input-bytes must be 64-1048576\n".utf8)); exit(2) }
        inputBytes = n
    default:
        FileHandle.standardError.write(Data("ES256Bench: unknown option \(flag)\nusage: ES256Bench [--seconds N] [--input-bytes N]\n".utf8))
        exit(2)
    }
}

// A JWT-shaped signing input of about `inputBytes`: a header and claims padded with a filler claim.
let header = Data(#"{"alg":"ES256","kid":"bench-key-0001","typ":"JWT"}"#.utf8).base64URLEncodedString()
var claims = #"{"iss":"twobits","aud":"main-api","sub":"anon_benchmark","tier":"devicecheck","iat":1700000000,"exp":1700000900,"pad":""}"#
let fixedLength = header.count + 1 + Data(claims.utf8).base64URLEncodedString().count
let padCharacters = max(0, (inputBytes - fixedLength) * 3 / 4)
claims = claims.replacingOccurrences(of: #""pad":"""#, with: #""pad":""# + String(repeating: "x", count: padCharacters) + #"""#)
let signingInput = Data((header + "." + Data(claims.utf8).base64URLEncodedString()).utf8)

let key = P256PrivateKey.generate()
let signer = ES256Signer(key: key)

// Every signature must verify: a fast signer that signs wrongly is no benchmark.
let check = signer.sign(signingInput)
guard check.count == 64, key.publicKey.verifyES256(signature: check, message: signingInput) else {
    FileHandle.standardError.write(Data("ES256Bench: the signature does not verify\n".utf8))
    exit(1)
}

// Warm up (page in code, settle the CPU frequency), then measure.
let clock = ContinuousClock()
let warmUpEnd = clock.now + .milliseconds(200)
while clock.now < warmUpEnd { _ = signer.sign(signingInput) }

/// CPU time of the calling thread, in seconds.
func threadCPUSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

var signs = 0
let wallStart = clock.now
let cpuStart = threadCPUSeconds()
var cpuElapsed = 0.0
while cpuElapsed < seconds {
    for _ in 0..<64 { _ = signer.sign(signingInput) }
    signs += 64
    cpuElapsed = threadCPUSeconds() - cpuStart
}
let wall = clock.now - wallStart
let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
let perCPU = Double(signs) / cpuElapsed
let perWall = Double(signs) / wallSeconds
print(#"{"signer":"TwoBitsCrypto.ES256Signer","cpu_seconds":\#(String(format: "%.3f", cpuElapsed)),"wall_seconds":\#(String(format: "%.3f", wallSeconds)),"signs":\#(signs),"signs_per_second":\#(String(format: "%.1f", perCPU)),"signs_per_wall_second":\#(String(format: "%.1f", perWall)),"input_bytes":\#(signingInput.count)}"#)
