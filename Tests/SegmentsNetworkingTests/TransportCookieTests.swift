import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// The URLSession transport keeps no HTTP cookies (see Behaviour P4, P6): a `Set-Cookie` from a
/// server is never sent back, so nothing but the SDK's own headers identifies a request.
@Suite(Hang.timeLimit(minutes: 2)) struct TransportCookieTests {
    @Test func p4_p6_aCookieSetByTheServerIsNeverSentBack() async throws {
        let server = try LoopbackServer { _ in
            .close(after: LoopbackServer.response("200 OK", headers: ["Set-Cookie: session=tracked-\(UUID().uuidString); Path=/"], body: Data("{}".utf8)))
        }
        defer { server.stop() }
        let transport = URLSessionSegmentsTransport()
        for _ in 0..<2 {
            let response = try await transport.send(SegmentsHTTPRequest(method: .get, url: server.url("/segments")))
            #expect(response.status == 200)
        }
        #expect(server.received.count == 2)
        #expect(server.received.allSatisfy { !$0.head.lowercased().contains("\r\ncookie:") })
    }
}
