import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// Tags the request on the way in and the response on the way out, recording both.
private struct Tagging: SegmentsTransportMiddleware {
    let name: String
    let timeline: Timeline

    func intercept(
        _ request: SegmentsHTTPRequest, next: @Sendable (SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse
    ) async throws -> SegmentsHTTPResponse {
        timeline.record("\(name) request")
        var tagged = request
        tagged.headers.add(name: "X-Trace", value: name)
        var response = try await next(tagged)
        timeline.record("\(name) response")
        response.headers.add(name: "X-Trace", value: name)
        return response
    }
}

/// Answers without calling the rest of the chain.
private struct ShortCircuit: SegmentsTransportMiddleware {
    func intercept(
        _ request: SegmentsHTTPRequest, next: @Sendable (SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse
    ) async throws -> SegmentsHTTPResponse {
        SegmentsHTTPResponse(status: 418)
    }
}

@Suite(Hang.timeLimit(minutes: 2)) struct MiddlewareTests {
    private let request = SegmentsHTTPRequest(url: URL(string: "https://h.example/p")!)

    @Test func requestPassesMiddlewaresInOrderAndResponseReturnsInReverse() async throws {
        let timeline = Timeline()
        let inner = RecordingTransport { request in
            timeline.record("transport")
            return SegmentsHTTPResponse(status: 200)
        }
        let transport = inner.withMiddlewares([
            Tagging(name: "a", timeline: timeline), Tagging(name: "b", timeline: timeline),
            Tagging(name: "c", timeline: timeline),
        ])
        let response = try await transport.send(request)
        #expect(timeline.all == ["a request", "b request", "c request", "transport", "c response", "b response", "a response"])
        #expect(inner.requests.first?.headers.values(for: "X-Trace") == ["a", "b", "c"])
        #expect(response.headers.values(for: "X-Trace") == ["c", "b", "a"])
    }

    @Test func noMiddlewarePassesStraightThrough() async throws {
        let inner = RecordingTransport(fallback: .status(204))
        let response = try await SegmentsMiddlewareTransport(transport: inner, middlewares: []).send(request)
        #expect(response.status == 204)
        #expect(inner.requests == [request])
    }

    @Test func aMiddlewareCanAnswerWithoutTheTransport() async throws {
        let inner = RecordingTransport()
        let response = try await inner.withMiddlewares([ShortCircuit()]).send(request)
        #expect(response.status == 418)
        #expect(inner.requests.isEmpty)
    }

    @Test func transportErrorsPropagateThroughMiddleware() async {
        let timeline = Timeline()
        let inner = RecordingTransport(fallback: .failure(SegmentsError(.network, "offline")))
        let transport = inner.withMiddlewares([Tagging(name: "a", timeline: timeline)])
        let error = await segmentsError { _ = try await transport.send(request) }
        #expect(error?.code == .network)
        #expect(timeline.all == ["a request"])
    }

    @Test func adaptersSendThroughMiddleware() async throws {
        let timeline = Timeline()
        let inner = RecordingTransport(fallback: .json("{}"))
        let configuration = BloomreachConfiguration(integration: .project(token: "T"))
        let repository = BloomreachSegmentRepository(
            configuration: configuration, transport: inner.withMiddlewares([Tagging(name: "sign", timeline: timeline)]),
            scheduler: RecordingSleeper(), clock: FixedClock(date: Harness.now), logger: LogRecorder())
        _ = try await repository.fetchSegments(for: anonymous)
        #expect(inner.requests.first?.headers["X-Trace"] == "sign")
    }
}
