// The values Apple's API speaks in (Bits, BitState, YearMonth, AppleEnvironment) live below the ledger, in
// DeviceDomain, which has no crypto and no Foundation; every user of Apple's API sees them through this module.
@_exported public import DeviceDomain
