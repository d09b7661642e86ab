import Foundation

/// The Worldline simulator's RSA-2048 key pair for client-side encryption
/// (`encryptedCustomerInput`), made for the sandbox only with
/// `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048`: it is
/// committed, so it protects nothing and is worthless anywhere else. The
/// client API hands out the public half (`GET crypto/publickey`, base64 DER
/// SubjectPublicKeyInfo, as Worldline does); the simulator decrypts with the
/// private half. Fixed, so that JWE fixtures made once by other tools (a
/// Python script, joserfc) keep decrypting.
public enum WorldlineSandboxKey {
    /// The key's id: the JWE header's `kid` must name it (ours; Worldline's
    /// ids are uuids).
    public static let keyID = "sandbox-rsa-2025-1"

    /// The public key, base64 of its DER SubjectPublicKeyInfo
    /// (`openssl pkey -pubout -outform DER | base64 -w0`).
    public static let publicKey = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAjYLZWKmoRVpqCVEORZL+aGseCDBO0ejUdsVcNtsjP0YQtiO9qqNtdHIrUTDQJW3mx4ywUeiAtMLkUNyuxLBimMvvV7WpOs+11gPomqRungfnqXhOqERgupy7Gh8leBQbs4q0HtRDSxDqGSDpY5L3Enn3LsMIu65xcq0qgfalrBJGoVXE3cqMSNTl103zbdfPbwlkuM+KLz0nmBaMNdmi45YJdiPK5czDMy/kW7+c03lmNefbGhTPyp/XhdmdXE6m2Ao8gqDyrcCZ1H5rccv/qYh8ZPugWkz0k0IJNPnfo8P3az1v2jDLeTVddFa7H5qLxv7Wena2/o+yDiuKvKlXVwIDAQAB"

    /// The private key, PKCS#8 PEM.
    static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvwIBADANBgkqhkiG9w0BAQEFAASCBKkwggSlAgEAAoIBAQCNgtlYqahFWmoJ
        UQ5Fkv5oax4IME7R6NR2xVw22yM/RhC2I72qo210citRMNAlbebHjLBR6IC0wuRQ
        3K7EsGKYy+9Xtak6z7XWA+iapG6eB+epeE6oRGC6nLsaHyV4FBuzirQe1ENLEOoZ
        IOljkvcSefcuwwi7rnFyrSqB9qWsEkahVcTdyoxI1OXXTfNt189vCWS4z4ovPSeY
        Fow12aLjlgl2I8rlzMMzL+Rbv5zTeWY159saFM/Kn9eF2Z1cTqbYCjyCoPKtwJnU
        fmtxy/+piHxk+6BaTPSTQgk0+d+jw/drPW/aMMt5NV10VrsfmovG/tZ6drb+j7IO
        K4q8qVdXAgMBAAECggEACItO/jh4LX/RCTD4sKC4dauKC6qHB8uMEIPIFpPSo/5i
        Ae1UhVoKwM4n6WYOG0Rwe7n152wnYUKnMG6yqrOPsHQXxm70gdWKwBpKUBP/jdEi
        Xqwh66z9Pic6cNBSndZw+b01NOtSCNVDnTLMhLOZ8Wal0w/5lgNpXCgyedhflm0J
        EEoOuMCyD3loEk5W9w/ZH7/7BLc6JdlrwbYYKS6SSFdAY2G9iFV/753GMJhig3Mc
        MNYQPclQMLUNZOIMsS4rnLDsMXR1rRqdFWz5ylMgcwtO4KaaIlQ8wGnmDthNQbdi
        KRKzyrnQQqrGizlmj+29Qb+3iu7C53Z7xeYJjXll2QKBgQDF3GI30C7WOhBiXNo7
        OCSROb1lJse/sOO7KmaTZ+1b2RIPMydjrz7WeH7/8gf8IlwEB87cdEvRsTyxxVkn
        AIXTOpYTWVVyTy6G7YMg2igH+yCEmo70kTpMVKVseHJQe1TOei+HSNqUG0+K996l
        rBbcDYuSTFXS7Zp2JP6vN3TcfQKBgQC3F7BleMgatn4nf/0+nvjHUuuuhtJ9oWCh
        Vz9o9+16BtuoUPOswYSn4sGYoXKXMTx16mjjfDb59RPTArilP3TuFZ+UNTiqpM+m
        27iC/MPP8ntAk2b943HRrBlhGpLPRR4avmgaSnTA4NbMmVOsjv2Pige5PKpQi8oh
        rzhopxvPYwKBgQCfSgpEdrSOQRaZqbkDPfKqe/qO6YacO3NLZhpIh72eWQZh+EO4
        zAfhsAZGVXq6MIs1r3eJIZM8kNyVHZTlglU6tYrGrv/MVBTYCXSsyRS7QCBwwOFf
        4V82vlqjFeCqDHA8/j8vQaa+37HM5jp31DBfHgSEVjIt6p2UiboEI7hQHQKBgQCQ
        YqwGuWMEPdnqiHJLSc5iUa/uZ//idrrfQRCOVMX/rxzV9VDUcZ+NTbLiDJ9zP66w
        RnUEwFYSdAR4KPM3zX0GrCK2G+peF65xpWAyW+aHPG+aEyPrH8wITzGMdApGTflZ
        mcI6yXCdEjISEu/7ap/m7DD/ESo2bqauPaG8VdwGhQKBgQDDxitxWDNaAm0JcKZZ
        XW2E9T7G6KkIXuY1n8u1MLIi9+bahojNaPONgsXTt8lR/0y0lnXFoGw2mpumecIW
        yjTCL2Yk+8h4Q1KgnB60+zkurSCsz5pLTumHttHcvKnAt5cgSBBRhRjRTt3eBpyA
        renKtj3PLNV+Tn8/uMvyPznWkA==
        -----END PRIVATE KEY-----
        """
}
