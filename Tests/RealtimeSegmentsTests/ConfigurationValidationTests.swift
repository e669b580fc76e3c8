import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// Behaviour P7 at the client: `configure` refuses every bad duration with `.invalidConfiguration` and
/// leaves the client unconfigured — no busy retry loop, no crash.
@Suite(Hang.timeLimit(minutes: 2)) struct ConfigurationValidationTests {
    private static func client(_ change: (inout SegmentsClient.Options) -> Void) -> SegmentsClient {
        let scheduler = TestScheduler()
        var options = SegmentsClient.Options(runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: RecordingLogger()), storage: .inMemory)
        change(&options)
        return SegmentsClient(options: options)
    }

    private static let bloomreach = SegmentsClient.Configuration(
        backend: .bloomreach(BloomreachConfiguration(integration: .project(token: "T"))))

    @Test(arguments: [0, -2, Double.nan, Double.infinity])
    func p7_aZeroOrBadUploadBackoffIsRefused(initial: TimeInterval) {
        let client = Self.client { $0.uploadRetry = RetryBackoff(initial: initial) }
        let error = #expect(throws: SegmentsError.self) { try client.configure(Self.bloomreach) }
        #expect(error?.code == .invalidConfiguration)
        #expect(!client.isConfigured)
    }

    @Test func p7_aZeroReloadBackoffIsRefused() {
        let client = Self.client { $0.timings = SegmentationTimings(retry: RetryBackoff(initial: 0)) }
        #expect(throws: SegmentsError.self) { try client.configure(Self.bloomreach) }
        #expect(!client.isConfigured)
    }

    @Test func p7_aNonFiniteDebounceOrCacheTimeIsRefused() {
        let debounce = Self.client { $0.timings = SegmentationTimings(debounce: DebouncePolicy(delay: .nan)) }
        #expect(throws: SegmentsError.self) { try debounce.configure(Self.bloomreach) }
        let cache = Self.client { $0.timings = SegmentationTimings(cache: CacheFreshness(maxAge: -1)) }
        #expect(throws: SegmentsError.self) { try cache.configure(Self.bloomreach) }
    }

    @Test(arguments: [Double.infinity, Double.nan, 0, -1, 1e16, 301])
    func p7_aBadRequestTimeoutIsRefusedAtConfigure(timeout: TimeInterval) {
        let client = Self.client { _ in }
        let configuration = SegmentsClient.Configuration(
            backend: .bloomreach(BloomreachConfiguration(integration: .project(token: "T"), requestTimeout: timeout)))
        let error = #expect(throws: SegmentsError.self) { try client.configure(configuration) }
        #expect(error?.code == .invalidConfiguration)
        #expect(!client.isConfigured)
    }
}
