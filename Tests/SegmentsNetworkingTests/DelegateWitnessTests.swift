import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsNetworking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession reaches its delegate through the protocol requirements, and so do these tests.
///
/// On Apple platforms the requirements are optional Objective-C methods: a method whose signature
/// only nearly matches Apple's (a missing `@Sendable`, say) compiles with a warning and is never
/// called — redirects would be followed, with their credentials, and an announced length would not
/// be checked. On Linux the protocol extension's default (follow, allow) is called instead. Either
/// way a near miss fails here. No task is ever resumed: nothing goes on the network.
@Suite(Hang.timeLimit(minutes: 1)) struct DelegateWitnessTests {
    private static let url = URL(string: "http://127.0.0.1:9/segments")!
    private static let location = URL(string: "http://127.0.0.1:10/steal")!

    @Test func p6_theRedirectRefusalIsTheMethodURLSessionCalls() {
        let registry = URLSessionTaskRegistry()
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: Self.url)
        let redirect = HTTPURLResponse(
            url: Self.url, statusCode: 307, httpVersion: "HTTP/1.1", headerFields: ["Location": Self.location.absoluteString])!
        let declined = Locked<[Bool]>([])
        let delegate: any URLSessionTaskDelegate = registry
        #if canImport(FoundationNetworking)
        delegate.urlSession(
            session, task: task, willPerformHTTPRedirection: redirect, newRequest: URLRequest(url: Self.location),
            completionHandler: { request in declined.withLock { $0.append(request == nil) } })
        #else
        delegate.urlSession?(
            session, task: task, willPerformHTTPRedirection: redirect, newRequest: URLRequest(url: Self.location),
            completionHandler: { request in declined.withLock { $0.append(request == nil) } })
        #endif
        #expect(declined.value == [true], "the redirect was not declined by our method")
    }

    @Test(arguments: [(1001, URLSession.ResponseDisposition.cancel), (1000, .allow), (0, .allow)])
    func p7_contentSniffing_theEarlySizeCheckIsTheMethodURLSessionCalls(
        announced: Int, disposition: URLSession.ResponseDisposition
    ) async {
        let registry = URLSessionTaskRegistry()
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: Self.url)
        let response = HTTPURLResponse(
            url: Self.url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "\(announced)"])!
        let dispositions = Locked<[URLSession.ResponseDisposition]>([])
        let error = await segmentsError {
            _ = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SegmentsHTTPResponse, any Error>) in
                registry.register(task, limit: 1000, continuation: continuation)
                let delegate: any URLSessionDataDelegate = registry
                #if canImport(FoundationNetworking)
                delegate.urlSession(
                    session, dataTask: task, didReceive: response,
                    completionHandler: { disposition in dispositions.withLock { $0.append(disposition) } })
                #else
                delegate.urlSession?(
                    session, dataTask: task, didReceive: response,
                    completionHandler: { disposition in dispositions.withLock { $0.append(disposition) } })
                #endif
                // The first finish wins: this one only answers when the response was let through
                // (or never checked), so a near miss fails instead of hanging.
                registry.finish(task.taskIdentifier, with: .failure(SegmentsError(.network, "let through")))
            }
        }
        #expect(response.expectedContentLength == Int64(announced))
        #expect(dispositions.value == [disposition])
        #expect(error?.code == (disposition == .cancel ? .invalidResponse : .network))
    }
}
