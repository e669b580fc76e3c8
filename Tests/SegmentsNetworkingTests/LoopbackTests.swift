import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// Which plain-`http` hosts count as loopback (see Behaviour P3), decided by `inet_pton` and the literal
/// `localhost` — never by a lenient parse that lets a DNS name pass for an address.
@Suite(Hang.timeLimit(minutes: 2)) struct LoopbackTests {
    @Test(arguments: [
        "http://127.0.0.+1",  // `UInt8("+1")` parses: the old check took this DNS name for an address
        "http://+127.0.0.1",
        "http://127.0.0.1.evil.example",
        "http://127.1",  // inet_aton's short form; inet_pton refuses it
        "http://0177.0.0.1",  // octal in inet_aton
        "http://0x7f.0.0.1",
        "http://127.0.0.%31",
        "http://localhost.evil.example",
        "http://[::ffff:127.0.0.1]",
        "http://[::2]",
        "http://128.0.0.1",
    ])
    func p3_aNameThatOnlyLooksLikeLoopbackNeedsPermissionForPlainHTTP(base: String) {
        #expect(throws: SegmentsError.self) { try BaseURL(base) }
        #expect(!BaseURL.isLoopback(URLComponents(string: base)?.percentEncodedHost ?? ""))
    }

    @Test(arguments: [
        "http://127.0.0.1", "http://127.255.255.254:9", "http://LOCALHOST", "http://[::1]:8080",
        "http://[0:0:0:0:0:0:0:1]",
    ])
    func p3_trueLoopbackAddressesNeedNoPermission(base: String) throws {
        _ = try BaseURL(base)
    }

    @Test func p3_isLoopbackTakesBracketedAndBareIPv6() {
        #expect(BaseURL.isLoopback("::1"))
        #expect(BaseURL.isLoopback("[::1]"))
        #expect(!BaseURL.isLoopback("[::1"))
        #expect(!BaseURL.isLoopback(""))
    }
}
