import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// Behaviour E2, E3, E5, E7 at the client, on virtual time: a pending upload backoff (its
/// `Retry-After`) is honoured by every trigger the app did not ask for — the periodic timer,
/// resigning active, an enqueue in immediate mode — while the app's own flush and the flush on
/// entering the background upload at once.
@Suite(Hang.timeLimit(minutes: 2)) struct UploadBackoffTests {
    /// The server is down and asks for ten minutes.
    static let busy = SegmentsError(.httpStatus, "unavailable", httpStatus: 503, retryAfter: 600)

    private static func track(_ harness: ClientHarness, _ type: String) throws {
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: type)
    }

    @Test func e2_e3_aPeriodicClientMakesNoMoreUploadsDuringABackoffThanAnImmediateOne() async throws {
        var counts: [String: Int] = [:]
        for (name, mode) in [("immediate", FlushingMode.immediate), ("periodic(1 s)", .periodic(seconds: 1))] {
            let harness = ClientHarness()
            harness.uploader.failNextUploads(1_000, with: Self.busy)
            try harness.configure(flushingMode: mode)
            try Self.track(harness, "a")
            for _ in 0..<30 { await harness.advance(by: 1) }
            counts[name] = harness.uploader.attempts.count
        }
        #expect(counts == ["immediate": 1, "periodic(1 s)": 1], "uploads in 30 s with every answer 503 + Retry-After: 600")
    }

    @Test func e2_e3_e5_e7_duringABackoffOnlyTheAppsFlushAndTheBackgroundFlushUpload() async throws {
        let harness = ClientHarness()
        harness.uploader.failNextUploads(3, with: Self.busy)
        try harness.configure(flushingMode: .periodic(seconds: 1))
        try Self.track(harness, "a")
        await harness.advance(by: 1)
        #expect(harness.uploader.attempts.count == 1, "the periodic flush failed: a 600 s backoff waits")

        harness.lifecycle.post(.willResignActive)
        for _ in 0..<5 { await harness.advance(by: 1) }
        #expect(harness.uploader.attempts.count == 1, "neither resigning active nor the timer uploads over the backoff")

        let results = Recorder<SegmentsFlushResult>()
        harness.client.flush { results.record($0) }
        await harness.advance()
        #expect(harness.uploader.attempts.count == 2, "the app's own flush is tried at once (E5)")
        #expect(results.all.count == 1)
        #expect(results.all.first.map { if case .failure = $0 { true } else { false } } == true)

        harness.lifecycle.post(.didEnterBackground)
        await harness.advance()
        #expect(harness.uploader.attempts.count == 3, "entering the background flushes at once (E7)")
        #expect(harness.lifecycle.backgroundTimeRequests.map(\.ended) == [true])

        for _ in 0..<30 { await harness.advance(by: 1) }
        #expect(harness.uploader.attempts.count == 3, "the backoff the last failure set still holds")
        await harness.advance(by: 600)
        #expect(harness.uploader.accepted.count == 1, "the retry after the backoff uploads the item")
        #expect(harness.client.queuedEventCount == 0)
    }
}
