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

    /// T7, E3, P7 through the public options: a backoff changed after `init` — either backoff,
    /// reloads' (`timings.retry`) or uploads' (`uploadRetry`) — is refused by
    /// `Options.validate()` and by `configure`, naming the field and its value.
    @Test(arguments: ["timings.retry", "uploadRetry"])
    func p7_t7_e3_aBackoffWithAJitterOutside0To1OrItsDelaysOutOfOrderIsRefused(which: String) {
        let changes: [(field: String, value: String, change: @Sendable (inout RetryBackoff) -> Void)] = [
            ("jitter", "5.0", { $0.jitter = 5 }),
            ("jitter", "-1.0", { $0.jitter = -1 }),
            ("maximum", "1.0", { $0.maximum = 1 }),
        ]
        for (field, value, change) in changes {
            let client = Self.client { options in
                if which == "uploadRetry" { change(&options.uploadRetry) } else { change(&options.timings.retry) }
            }
            var options = SegmentsClient.Options(storage: .inMemory)
            if which == "uploadRetry" { change(&options.uploadRetry) } else { change(&options.timings.retry) }
            let early = #expect(throws: SegmentsError.self) { try options.validate() }
            #expect(early?.code == .invalidConfiguration)
            let error = #expect(throws: SegmentsError.self) { try client.configure(Self.bloomreach) }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.message.contains("(\(field)") == true, "\(which).\(field): \(error?.message ?? "")")
            #expect(error?.message.contains(value) == true, "\(which).\(field): \(error?.message ?? "")")
            #expect(!client.isConfigured)
        }
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
