import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsNetworking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport never calls into its `URLSession` on the caller's thread: FoundationNetworking's
/// task calls wait for the session's work queue, and callers on Swift's cooperative pool waiting
/// there can stall every task of the process (see `URLSessionTaskRegistry.sessionCalls`).
@Suite(Hang.timeLimit(minutes: 1)) struct SessionCallsTests {
    @Test func theTaskIsMadeOffTheCallersThreadAndTheRequestIsAnswered() async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return }
        let server = try LoopbackServer { _ in .close(after: LoopbackServer.response("200 OK", body: Data("{}".utf8))) }
        defer { server.stop() }
        let registry = URLSessionTaskRegistry()
        let session = URLSession(configuration: .ephemeral, delegate: registry, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let request = URLRequest(url: server.url("/segments"))

        let executor = DedicatedThreadExecutor()
        let (madeOnCallersThread, status) = try await Task(executorPreference: executor) {
            let madeHere = Locked<Bool?>(nil)
            let onCaller = executor.isCurrent
            let response = try await registry.send(
                making: {
                    madeHere.withLock { $0 = executor.isCurrent }
                    return session.dataTask(with: request)
                }, limit: 1 << 20, deadline: 30)
            return (onCaller ? madeHere.value : nil, response.status)
        }.value

        #expect(madeOnCallersThread == false, "the caller ran on the executor; the task was made elsewhere")
        #expect(status == 200)
        #expect(server.received.count == 1)
    }
}
