import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// Behaviour P7: a bad time-out is `.invalidConfiguration` before anything is sent — never a crash in
/// FoundationNetworking (`Int(timeoutInterval) * 1000` traps on `.infinity`, NaN and ≥ 9.2e15) and
/// never a request that times out at once and is retried forever.
@Suite(Hang.timeLimit(minutes: 2)) struct DurationValidationTests {
    static let badTimeouts: [TimeInterval] = [.infinity, -.infinity, .nan, 0, -1, 9.3e15, 300.5]

    @Test(arguments: badTimeouts)
    func p7_aBadBloomreachTimeoutIsAnInvalidConfiguration(timeout: TimeInterval) async {
        let configuration = BloomreachConfiguration(integration: Harness.project, requestTimeout: timeout)
        #expect(throws: SegmentsError.self) { try configuration.validate() }
        let transport = RecordingTransport(fallback: .json("{}"))
        let repository = BloomreachSegmentRepository(
            configuration: configuration, transport: transport, scheduler: RecordingSleeper(),
            clock: FixedClock(date: Harness.now), logger: LogRecorder())
        let error = await segmentsError { _ = try await repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.isTransient == false)
        #expect(transport.requests.isEmpty)
    }

    @Test(arguments: badTimeouts)
    func p7_aBadODPTimeoutIsAnInvalidConfiguration(timeout: TimeInterval) {
        let configuration = ODPConfiguration(apiKey: "KEY", requestTimeout: timeout)
        let error = #expect(throws: SegmentsError.self) { try configuration.validate() }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test(arguments: [0.001, 10, 300])
    func p7_timeoutsWithinTheRangeAreAccepted(timeout: TimeInterval) throws {
        try BloomreachConfiguration(integration: Harness.project, requestTimeout: timeout).validate()
        try ODPConfiguration(apiKey: "KEY", requestTimeout: timeout).validate()
    }

    /// Whatever a middleware or an app puts into a request, the transport refuses it rather than
    /// handing it to URLSession. Nothing is sent: the port is never connected to.
    @Test(arguments: badTimeouts)
    func p7_theURLSessionTransportRefusesABadDeadline(timeout: TimeInterval) async {
        let request = SegmentsHTTPRequest(url: URL(string: "http://127.0.0.1:9/")!, timeout: timeout)
        let error = await segmentsError { _ = try await URLSessionSegmentsTransport().send(request) }
        #expect(error?.code == .invalidConfiguration)
    }
}
