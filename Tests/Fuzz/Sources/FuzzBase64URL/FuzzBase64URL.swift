import FuzzChecks
import FuzzDriver

@_cdecl("FuzzBase64URL_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzzOne)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ start: UnsafeRawPointer?, _ size: Int) -> CInt {
    fuzz(.base64url, start, size)
}
