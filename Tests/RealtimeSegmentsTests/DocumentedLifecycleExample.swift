import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// The lifecycle example of Docs/GettingStarted.md ("The app's lifecycle"), run, and the guide
/// checked to still show it verbatim.
@Suite(Hang.timeLimit(minutes: 1)) struct DocumentedLifecycleExample {
    @Test func e2_e7_theGuidesLifecycleExampleRuns() async throws {
        let scheduler = TestScheduler()
        let repository = RecordingSegmentRepository(scheduler: scheduler)
        let uploader = RecordingEventUploader(scheduler: scheduler)
        // guide: begin
        let lifecycle = ManualAppLifecycle()
        var options = SegmentsClient.Options(runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler), storage: .inMemory)
        options.appLifecycle = lifecycle
        let client = SegmentsClient(options: options)
        try client.configure(.init(backend: .custom(id: "app", repository: repository, uploader: uploader), flushingMode: .automatic))
        try client.trackEvent(properties: ["sku": "A-1"], timestamp: nil, eventType: "purchase")
        lifecycle.post(.didEnterBackground)                  // the flush starts, within background time
        lifecycle.expireBackgroundTime()                     // the time runs out: the request ends
        #expect(lifecycle.openBackgroundTimeRequests == 0)
        #expect(await client.countQueuedEvents() == 1)       // and nothing queued is lost
        // guide: end
        await scheduler.advance()
        #expect(uploader.accepted.count == 1)
        #expect(lifecycle.backgroundTimeRequests.map(\.expired) == [true])
    }

    @Test func theGuideShowsTheExampleVerbatim() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("Docs/GettingStarted.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let start = try #require(source.range(of: "        // guide: begin\n"))
        let end = try #require(source.range(of: "        // guide: end\n"))
        let example = source[start.upperBound..<end.lowerBound].split(separator: "\n")
            .map { $0.dropFirst(8) }.joined(separator: "\n")
        #expect(guide.contains("```swift\n" + example + "\n```\n"), "Docs/GettingStarted.md no longer shows the lifecycle example")
    }
}
