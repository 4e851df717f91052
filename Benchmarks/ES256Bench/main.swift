import Foundation
import TwoBitsCrypto

// ES256Bench: how many ES256 signatures per second TwoBits' own signer makes on one thread.
//
// usage: ES256Bench [--seconds N] [--input-bytes N]
//
// Signs a JWT signing input (base64url(header) "." base64url(claims), about 1 KB by default) with
// `ES256Signer` for N seconds on the calling thread and prints one JSON object:
//   {"signer":"TwoBitsCrypto.ES256Signer","seconds":...,"signs":...,"signs_per_second":...,"input_bytes":...}
// Benchmarks/bench.py compares it with `openssl speed -seconds 3 ecdsap256`.

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

var signs = 0
let start = clock.now
let end = start + .milliseconds(Int(seconds * 1000))
var now = start
while now < end {
    for _ in 0..<64 { _ = signer.sign(signingInput) }
    signs += 64
    now = clock.now
}
let elapsed = now - start
let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let rate = Double(signs) / elapsedSeconds
print(#"{"signer":"TwoBitsCrypto.ES256Signer","seconds":\#(String(format: "%.3f", elapsedSeconds)),"signs":\#(signs),"signs_per_second":\#(String(format: "%.1f", rate)),"input_bytes":\#(signingInput.count)}"#)
