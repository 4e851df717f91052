public import TwoBitsCrypto

/// The trust anchors compiled in.
public enum AppleRootCertificates {
    /// Apple App Attestation Root CA (P-384, 2020-03-18 to 2045-03-15, serial 0BF3BE0EF1CDD2E0FB8C6E721F621798,
    /// DER SHA-256 1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932; a test checks it).
    /// From https://www.apple.com/certificateauthority/private/ (as also shipped by takimoto3/app-attest).
    public static let appAttestationRootPEM = """
        -----BEGIN CERTIFICATE-----
        MIICITCCAaegAwIBAgIQC/O+DvHN0uD7jG5yH2IXmDAKBggqhkjOPQQDAzBSMSYw
        JAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRpb24gUm9vdCBDQTETMBEGA1UECgwK
        QXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODMyNTNa
        Fw00NTAzMTUwMDAwMDBaMFIxJjAkBgNVBAMMHUFwcGxlIEFwcCBBdHRlc3RhdGlv
        biBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMwEQYDVQQIDApDYWxpZm9y
        bmlhMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAERTHhmLW07ATaFQIEVwTtT4dyctdh
        NbJhFs/Ii2FdCgAHGbpphY3+d8qjuDngIN3WVhQUBHAoMeQ/cLiP1sOUtgjqK9au
        Yen1mMEvRq9Sk3Jm5X8U62H+xTD3FE9TgS41o0IwQDAPBgNVHRMBAf8EBTADAQH/
        MB0GA1UdDgQWBBSskRBTM72+aEH/pwyp5frq5eWKoTAOBgNVHQ8BAf8EBAMCAQYw
        CgYIKoZIzj0EAwMDaAAwZQIwQgFGnByvsiVbpTKwSga0kP0e8EeDS4+sQmTvb7vn
        53O5+FRXgeLhpJ06ysC5PrOyAjEAp5U4xDgEgllF7En3VcE3iexZZtKeYnpqtijV
        oyFraWVIyd/dganmrduC1bmTBGwD
        -----END CERTIFICATE-----

        """

    /// Apple App Attestation CA 1, the intermediate every capture so far carries in x5c[1] (P-384,
    /// 2020-03-18 to 2030-03-13, serial 09BAC5E1BC401AD9D45395BC381A0854, DER SHA-256
    /// 39ef7264e1340f9adda4199d3a028fdece2ecd7bf7372420fe808ad6da538426). NOT a trust anchor: it only
    /// spares re-parsing identical bytes (OpenSSL 3.0's key decoding; measured: Benchmarks/README.md,
    /// "App Attest micro-benchmark"); the chain through it is verified to the root every time.
    public static let appAttestationCA1PEM = """
        -----BEGIN CERTIFICATE-----
        MIICQzCCAcigAwIBAgIQCbrF4bxAGtnUU5W8OBoIVDAKBggqhkjOPQQDAzBSMSYw
        JAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRpb24gUm9vdCBDQTETMBEGA1UECgwK
        QXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODM5NTVa
        Fw0zMDAzMTMwMDAwMDBaME8xIzAhBgNVBAMMGkFwcGxlIEFwcCBBdHRlc3RhdGlv
        biBDQSAxMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMwEQYDVQQIDApDYWxpZm9ybmlh
        MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAErls3oHdNebI1j0Dn0fImJvHCX+8XgC3q
        s4JqWYdP+NKtFSV4mqJmBBkSSLY8uWcGnpjTY71eNw+/oI4ynoBzqYXndG6jWaL2
        bynbMq9FXiEWWNVnr54mfrJhTcIaZs6Zo2YwZDASBgNVHRMBAf8ECDAGAQH/AgEA
        MB8GA1UdIwQYMBaAFKyREFMzvb5oQf+nDKnl+url5YqhMB0GA1UdDgQWBBQ+410c
        BBmpybQx+IR01uHhV3LjmzAOBgNVHQ8BAf8EBAMCAQYwCgYIKoZIzj0EAwMDaQAw
        ZgIxALu+iI1zjQUCz7z9Zm0JV1A1vNaHLD+EMEkmKe3R+RToeZkcmui1rvjTqFQz
        97YNBgIxAKs47dDMge0ApFLDukT5k2NlU/7MKX8utN+fXr5aSsq2mVxLgg35BDhv
        eAe7WJQ5tw==
        -----END CERTIFICATE-----

        """

    /// Apple App Attestation CA 1, parsed once (see `appAttestationCA1PEM`).
    // `try!`: compiled-in bytes that do not parse are a build that must not start (the error is in the trap's message).
    public static let appAttestationCA1: X509Certificate = try! X509Certificate(pem: appAttestationCA1PEM)

    /// The App Attestation root, parsed once.
    public static let appAttestationRoot: X509Certificate = try! X509Certificate(pem: appAttestationRootPEM)

    /// A chain verifier trusting the App Attestation root alone, built once.
    public static let appAttestationVerifier: CertificateChainVerifier = try! CertificateChainVerifier(roots: [appAttestationRoot])
}
