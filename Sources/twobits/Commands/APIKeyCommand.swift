import TwoBitsService

/// `twobits apikey`: a fresh random API key and the digest that goes in the configuration.
enum APIKeyCommand {
    static func run() -> Int32 {
        let (key, digest) = APIKey.generate()
        print("api_key:    \(key)")
        print("key_sha256: \(digest)")
        print("Give the key to the client; put only key_sha256 in the configuration's clients list.")
        return 0
    }
}
