import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct StreamAuthorizationTests {
    private static let path = "/webxp/streams/STREAM/segments"

    /// A stream harness whose transport records each request's token on the shared timeline.
    private func harness(tokens: [String?], answers: [RecordingTransport.Answer]) -> (Harness, TokenSequence, Timeline) {
        let timeline = Timeline()
        let provider = TokenSequence(tokens, timeline: timeline)
        let transport = RecordingTransport { request in
            timeline.record("send \(request.headers["Authorization"] ?? "none")")
            return SegmentsHTTPResponse(status: 404)
        }
        for answer in answers {
            transport.enqueue(.handler { request in
                timeline.record("send \(request.headers["Authorization"] ?? "none")")
                switch answer {
                case .response(let response): return response
                case .failure(let error): throw error
                case .handler(let handler): return try await handler(request)
                }
            }, for: Self.path)
        }
        return (Harness(Harness.stream, provider: provider, transport: transport, timeline: timeline), provider, timeline)
    }

    @Test(arguments: [401, 403])
    func wire_streamRefusalIsReportedThenRetriedOnceAfter1sWithTheRefreshedToken(status: Int) async throws {
        let (harness, provider, timeline) = harness(tokens: ["old", "new"], answers: [.status(status), .json("{}")])
        let segments = try await harness.repository.fetchSegments(for: anonymous)
        #expect(segments == [:])
        #expect(provider.failures == 1)
        #expect(harness.scheduler.recordedSleeps == [1])
        #expect(timeline.all == [
            "token old", "send Bearer old", "authorizationFailed", "sleep 1.0", "token new", "send Bearer new",
        ])
        #expect(harness.logger.messages(at: .warning).allSatisfy { $0.hasPrefix("Segments:") && !$0.contains("new") })
    }

    @Test func wire_secondRefusalIsReportedAndFailsUnauthorized() async throws {
        let (harness, provider, timeline) = harness(tokens: ["a", "b", "c"], answers: [.status(401), .status(401), .json("{}")])
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .unauthorized)
        #expect(error?.httpStatus == 401)
        #expect(provider.failures == 2)
        #expect(harness.scheduler.recordedSleeps == [1])
        #expect(timeline.all.filter { $0.hasPrefix("send") } == ["send Bearer a", "send Bearer b"])
    }

    @Test func wire_streamRetryAppliesToLinkAndTrackingToo() async throws {
        let timeline = Timeline()
        let provider = TokenSequence(["a", "b", "c", "d"], timeline: timeline)
        let transport = RecordingTransport(fallback: .status(200))
        transport.enqueue(.status(401), for: "/webxp/streams/STREAM/cookies/\(identified.cookie ?? "")/link-ids")
        transport.enqueue(.status(401), for: "/track/u/v1/customers/events")
        let harness = Harness(Harness.stream, provider: provider, transport: transport, timeline: timeline)
        try await harness.repository.linkCustomerIds(identified)
        try await harness.uploader.upload(TrackedEvent(kind: .event(type: "x"), customerIds: identified, properties: [:], timestamp: Harness.now))
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer a", "Bearer b", "Bearer b", "Bearer c"])
        #expect(provider.failures == 2)
        #expect(harness.scheduler.recordedSleeps == [1, 1])
    }

    @Test func wire_projectModeRefusalIsNotRetried() async {
        let harness = Harness(Harness.project, authorization: .token("KEY"), transport: RecordingTransport(fallback: .status(401)))
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .unauthorized)
        #expect(harness.transport.requests.count == 1)
        #expect(harness.scheduler.recordedSleeps.isEmpty)
    }

    @Test func wire_streamModeWithoutProviderIsNotRetried() async {
        let harness = Harness(Harness.stream, transport: RecordingTransport(fallback: .status(401)))
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .unauthorized)
        #expect(harness.transport.requests.count == 1)
        #expect(harness.scheduler.recordedSleeps.isEmpty)
    }

    @Test func wire_otherFailuresAreNotRetriedForAuthorization() async {
        let (harness, provider, _) = harness(tokens: ["a"], answers: [.status(503)])
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .httpStatus)
        #expect(provider.failures == 0)
        #expect(harness.scheduler.recordedSleeps.isEmpty)
    }

    @Test func p4_tokensNeverAppearInLogs() async throws {
        let (harness, _, _) = harness(tokens: ["jwt-secret-1", "jwt-secret-2"], answers: [.status(401), .json("{}")])
        _ = try await harness.repository.fetchSegments(for: anonymous)
        #expect(!harness.logger.messages.isEmpty)
        #expect(harness.logger.messages.allSatisfy { !$0.contains("jwt-secret") })
    }
}
