import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsNetworking
import SegmentsTesting
import Testing

/// Behaviour P7 rev 4 and P9 end to end: the emulator answers a segments fetch and an ODP query
/// with `["Ģ",` + 500 levels in UTF-16 or UTF-32 (about 2 KB), through the real URLSession
/// transport on 127.0.0.1. The adapters' code runs on a 512 KiB thread (Apple's secondary-thread
/// stack), as it would in an app; the answer is refused as not UTF-8 before any parsing, where it
/// used to overflow the stack in the recursive decoder.
@Suite(Hang.timeLimit(minutes: 2)) struct LiveForeignEncodingTests {
    private static let samples = ForeignEncodings.samples(of: ForeignEncodings.deeplyNested(levels: 500, inside: "data"))

    /// Runs `fetch` as a task whose code runs on a 512 KiB thread, and returns its error.
    private static func errorOnSmallStack(_ fetch: @escaping @Sendable () async throws -> Void) async -> SegmentsError? {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return nil }
        let executor = DedicatedThreadExecutor(stackSize: appleSecondaryThreadStackSize)
        return await Task(executorPreference: executor) { await segmentsError(fetch) }.value
    }

    @Test func p7_p9_aSegmentsAnswerInUTF16OrUTF32IsRefusedAndTheNextAnswerIsRead() async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return }
        let live = try LiveHarness(.project)
        defer { live.stop() }
        let repository = live.repository
        for sample in Self.samples {
            live.emulator.injectFault(.body(Array(sample.data)), on: .fetch)
            let error = await Self.errorOnSmallStack { _ = try await repository.fetchSegments(for: CustomerIds(cookie: "c")) }
            #expect(error?.code == .invalidResponse, "\(sample.name)")
            #expect(error?.message.contains("is \(sample.name.prefix(8)), not UTF-8") == true, "\(sample.name): \(String(describing: error))")
        }
        #expect(live.requests(on: .fetch).count == Self.samples.count)
        // The same connection pool then reads a normal answer.
        let segments = try await repository.fetchSegments(for: CustomerIds(cookie: "c"))
        #expect(segments.isEmpty)
    }

    @Test func p7_p9_anODPAnswerInUTF16OrUTF32IsRefused() async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return }
        let emulator = SegmentsEmulator()
        let baseURL = try emulator.start()
        defer { emulator.stop() }
        let odp = ODPAudienceSegmentFetcher(
            configuration: ODPConfiguration(apiKey: "PUBLIC_KEY", apiHost: baseURL.absoluteString),
            transport: URLSessionSegmentsTransport(timeout: 5), clock: FixedClock(date: Harness.now))
        for sample in Self.samples {
            emulator.injectFault(.body(Array(sample.data)), on: .graphql)
            let error = await Self.errorOnSmallStack { _ = try await odp.fetchQualifiedSegments(userId: "u1", candidates: ["a"]) }
            #expect(error?.code == .invalidResponse, "\(sample.name)")
            #expect(error?.message.contains("not UTF-8") == true, "\(sample.name): \(String(describing: error))")
        }
        #expect(emulator.requests.filter { $0.path == "/v3/graphql" }.count == Self.samples.count)
    }
}
