import Foundation

/// The sandbox merchant's mutual-TLS client certificate and key for STC Pay,
/// a self-signed pair made for the sandbox only: it proves nothing anywhere
/// else. `gateway serve --sandbox` hands them to the adapter as its
/// `client_certificate` and `client_key` secrets so the manifest's `tls` block
/// loads; over the simulator's plain loopback HTTP no handshake uses them.
enum STCPaySandboxCertificate {
    static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBzjCCAXWgAwIBAgIUCpPge028cAFknH+nLUQWO9tXqlQwCgYIKoZIzj0EAwIw
        PDEgMB4GA1UEAwwXc3RjcGF5LXNhbmRib3gtbWVyY2hhbnQxGDAWBgNVBAoMD0dh
        dGV3YXkgU2FuZGJveDAgFw0yNjExMjIyMTM0NTNaGA8yMTI2MTAyOTIxMzQ1M1ow
        PDEgMB4GA1UEAwwXc3RjcGF5LXNhbmRib3gtbWVyY2hhbnQxGDAWBgNVBAoMD0dh
        dGV3YXkgU2FuZGJveDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABL9d0YKTRe39
        3vK1J2BN0udvx4rHvJkZw+tuECjrdonBOJF++u5+awsKnbSZdWQQRbVx7tFSTAbS
        Hg+rz6eUVJujUzBRMB0GA1UdDgQWBBRZrnat26XYdH7815f9tLPvpdLwTTAfBgNV
        HSMEGDAWgBRZrnat26XYdH7815f9tLPvpdLwTTAPBgNVHRMBAf8EBTADAQH/MAoG
        CCqGSM49BAMCA0cAMEQCIDakZSI+P3L7bKQ0VUqPigvz9ZroZYzMk/LaotsS/szo
        AiBAblgaTtQJT7O3wIepkauCeJlsJ8gb6vd++8px+MXUGQ==
        -----END CERTIFICATE-----
        """

    static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgYbNFld+S9ohorNCl
        DiqIl8F9C0/RHgxU1+izwYznQ7uhRANCAAS/XdGCk0Xt/d7ytSdgTdLnb8eKx7yZ
        GcPrbhAo63aJwTiRfvrufmsLCp20mXVkEEW1ce7RUkwG0h4Pq8+nlFSb
        -----END PRIVATE KEY-----
        """
}
