import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsNetworking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Behaviour P6's second line of defence, over real loopback HTTP: should URLSession follow a
/// redirect without asking the delegate (as it does on Apple platforms when the delegate method's
/// signature only nearly matches), the answer from the `Location` is still never taken for the
/// server's. `RedirectTests` prove the first line: the delegate declines.
@Suite(Hang.timeLimit(minutes: 2)) struct RedirectBackstopTests {
    @Test func p6_aRedirectFollowedWithoutAskingIsStillAnHTTPFailure() async throws {
        let thief = try LoopbackServer { _ in
            .close(after: LoopbackServer.response("200 OK", body: Data(#"{"stolen":true}"#.utf8)))
        }
        defer { thief.stop() }
        let redirecting = try LoopbackServer { _ in
            .close(after: LoopbackServer.response("302 Found", headers: ["Location: \(thief.url("/steal").absoluteString)"]))
        }
        defer { redirecting.stop() }
        let registry = URLSessionTaskRegistry()
        let session = URLSession(
            configuration: .ephemeral, delegate: RedirectFollowingDelegate(registry), delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: redirecting.url("/segments"))
        request.setValue("Token SECRET", forHTTPHeaderField: "Authorization")

        let error = await segmentsError {
            _ = try await registry.send(making: { [request] in session.dataTask(with: request) }, limit: 1 << 20, deadline: 30)
        }

        #expect(error?.code == .httpStatus)
        #expect(redirecting.received.count == 1)
        // The seam did bypass the refusal: the redirect was followed, and the thief answered 200.
        // What the thief saw is the platform's business, not the backstop's: FoundationNetworking
        // (curl 7.88) re-sent `Authorization: Token SECRET` to it. Only the delegate's refusal keeps
        // credentials home, which is why `DelegateWitnessTests` checks that URLSession calls it.
        let seen = try #require(thief.received.first, "the redirect was not followed: the seam did not work")
        #expect(thief.received.count == 1)
        #expect(seen.head.hasPrefix("GET /steal HTTP/1.1\r\n"))
    }
}

/// Passes every delegate call to the registry except the redirect decision, so URLSession follows
/// redirects on its own — the registry's refusal is never consulted.
private final class RedirectFollowingDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let registry: URLSessionTaskRegistry

    init(_ registry: URLSessionTaskRegistry) {
        self.registry = registry
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        registry.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        registry.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        registry.urlSession(session, task: task, didCompleteWithError: error)
    }
}
