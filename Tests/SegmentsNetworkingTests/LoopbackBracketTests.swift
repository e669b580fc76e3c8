import Foundation
import SegmentsDomain
@testable import SegmentsNetworking
import SegmentsTesting
import Testing

/// Brackets around an IPv6 host come in pairs (see Behaviour P3): a host with only one of them is
/// not an address, so it is never loopback, whatever the rest of it reads as.
@Suite(Hang.timeLimit(minutes: 1)) struct LoopbackBracketTests {
    @Test(arguments: ["[::1x", "x::1]", "[::1", "::1]"])
    func p3_aHostWithOneBracketIsNotLoopback(host: String) {
        #expect(!BaseURL.isLoopback(host))
    }

    @Test func p3_aBracketedLoopbackAddressIs() {
        #expect(BaseURL.isLoopback("[::1]"))
    }
}
