@testable import CheckoutHTTP
import Testing

/// The path a request's log line and a slow shutdown's in-flight list show:
/// never a card number or an API key, however the client encoded it, and
/// never a line break that would forge another line.
@Suite struct RequestLogMaskingTests {
    @Test(arguments: [
        ("/v1/sessions/4111111111111111", "4111111111111111"),
        ("/v1/sessions/4111%201111%201111%201111", "4111 1111 1111 1111"),
        ("/v1/sessions/4111%2D1111%2D1111%2D1111", "4111-1111-1111-1111"),
        ("/v1/sessions/%34%31%31%31111111111111", "4111111111111111"),
    ])
    func aCardNumberInThePathIsMaskedHoweverItIsEncoded(path: String, card: String) {
        let shown = RequestLogMiddleware.masked(path)
        #expect(!shown.contains(card) && !shown.contains(path.dropFirst(13)), "\(shown)")
        #expect(shown.hasSuffix("1111") && shown.contains("************"), "\(shown)")
    }

    @Test func anAPIKeyInThePathIsMaskedEvenPercentEncoded() {
        for path in ["/v1/x/gk_live_abcdefghjkmnpqrstvwxyz0123456789", "/v1/x/gk%5Flive%5Fabcdefghjkmnpqrstvwxyz0123456789"] {
            let shown = RequestLogMiddleware.masked(path)
            #expect(!shown.contains("abcdefghjkmnpqrstvwxyz0123456789") && shown.contains("gk_live_…"), "\(shown)")
        }
    }

    @Test func aDecodedLineBreakIsWrittenBackEncoded() {
        let shown = RequestLogMiddleware.masked("/v1/sessions/x%0A2026-11-29T00:00:00+0000 info gateway: forged%0D")
        #expect(!shown.contains("\n") && !shown.contains("\r"))
        #expect(shown == "/v1/sessions/x%0A2026-11-29T00:00:00+0000 info gateway: forged%0D")
    }

    @Test func anOrdinaryPathIsShownAsItIs() {
        #expect(RequestLogMiddleware.masked("/v1/sessions/ses_01m8jfxkp8yvjnh49nwj04yc5g/attempts") == "/v1/sessions/ses_01m8jfxkp8yvjnh49nwj04yc5g/attempts")
    }
}
