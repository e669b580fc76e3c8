import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting

/// Benchmark 4: how many segment fetches a burst of tracked events costs (Behaviour T3, T5, T6 in
/// `Docs/Behaviour.md`).
///
/// Over real HTTP: an identified customer with a listener tracks a burst of events against the
/// emulator on loopback; its request log gives the fetches and link calls. On virtual time: an
/// event every second for 10 minutes through the real tracking pipeline and engine, counting the
/// reloads. The baseline is the number of uploads, i.e. the reloads without any coalescing.
struct CoalescingBenchmark {
    let options: BenchOptions

    func run() async throws -> [Figure] {
        [try await overHTTP(), await onVirtualTime()]
    }

    private func overHTTP() async throws -> Figure {
        let eventCount = options.pick(full: 1_000, quick: 200)
        let debounce = options.pick(full: DebouncePolicy(), quick: DebouncePolicy(delay: 0.5, maxWait: 3))
        let emulator = SegmentsEmulator()
        emulator.setRules([
            EmulatorSegmentRule(category: "discovery", segmentId: "browsers", segmentationId: "engagement", eventType: "view_item")
        ])
        let baseURL = try emulator.start()
        defer { emulator.stop() }
        let directory = try Fixtures.directory(in: options.scratch, "coalescing")
        defer { directory.remove() }
        let logger = Fixtures.logger()
        let client = try SegmentsClient(
            configuration: .init(
                backend: .bloomreach(
                    BloomreachConfiguration(
                        integration: .project(token: "bench"), baseURL: baseURL.absoluteString, authorization: .token("key")))),
            options: .init(runtime: SegmentsRuntime(logger: logger), timings: SegmentationTimings(debounce: debounce), transport: URLSessionSegmentsTransport(timeout: 10), storage: .directory(directory.url)))
        defer { client.stop() }
        let told = Locked<[[Segment]]>([])
        client.addListener(category: .discovery(), includeFirstLoad: true) { list in told.withLock { $0.append(list) } }
        try client.identifyCustomer(customerIds: ["registered": "bench@example.com"], properties: [:], timestamp: nil)

        let start = Stopwatch.now()
        for index in 0..<eventCount {
            try client.trackEvent(
                properties: ["sku": .string("SKU-\(index)"), "price": 19.99], timestamp: nil, eventType: "view_item")
        }
        let burstNs = Stopwatch.now() - start
        guard await eventually(timeout: 300, { emulator.events.count == eventCount && client.queuedEventCount == 0 }) else {
            throw BenchFailure("benchmark 4: only \(emulator.events.count) of \(eventCount) events were uploaded in 300 s")
        }
        let uploadedNs = Stopwatch.now() - start
        // The trailing debounce runs from the last upload; then a fetch and a delivery.
        let settled = await eventually(timeout: debounce.maxWait + 10) {
            told.withLock { $0.last?.contains { $0.id == "browsers" } == true }
        }
        try await Task.sleep(nanoseconds: UInt64((debounce.delay + 1) * 1e9))  // nothing else may follow
        let fetches = emulator.requests(on: .fetch)
        let links = emulator.requests(on: .link).count
        let uploads = eventCount + emulator.customerUpdates.count
        let lastEventAt = emulator.requests(on: .event).last?.receivedAt
        let quietGap = lastEventAt.flatMap { last in
            fetches.first { $0.receivedAt > last }.map { $0.receivedAt.timeIntervalSince(last) }
        }

        var figure = Figure(
            id: "4a", title: "\(Format.count(eventCount)) events in a burst over HTTP → segment fetches (link calls)",
            value: Double(fetches.count), unit: "count", display: "\(fetches.count) fetch\(fetches.count == 1 ? "" : "es") (\(links) link\(links == 1 ? "" : "s"))",
            baseline: ("uploads, i.e. fetches without coalescing", Double(uploads), "\(Format.count(uploads))"))
        figure.ratio = fetches.isEmpty ? nil : Double(uploads) / Double(fetches.count)
        figure.ratioMeaning = "uploads per fetch (higher is better)"
        figure.details = [
            "events": Double(eventCount), "fetches": Double(fetches.count), "links": Double(links),
            "uploads": Double(uploads), "debounceSeconds": debounce.delay, "maxWaitSeconds": debounce.maxWait,
            "burstEnqueueMs": Double(burstNs) / 1e6, "allUploadedMs": Double(uploadedNs) / 1e6,
            "lastUploadToFetchMs": (quietGap ?? .nan) * 1000, "listenerCalls": Double(told.value.count),
        ]
        figure.notes.append(
            "debounce \(Format.fixed(debounce.delay, 2)) s / max wait \(Format.fixed(debounce.maxWait, 1)) s\(options.quick ? " (shortened for --quick; documented default 5 s / 30 s)" : " (documented defaults)"); identified customer, listener with first load registered first; the \(Format.count(eventCount)) durable appends took \(Format.duration(ns: Double(burstNs))), all uploads done after \(Format.duration(ns: Double(uploadedNs))); fetch came \(quietGap.map { Format.fixed($0, 2) + " s" } ?? "n/a") after the last upload")
        if !settled { figure.notes.append("the listener never saw the final segments: the figure is incomplete") }
        figure.notes += Fixtures.notes(from: logger)
        return figure
    }

    private func onVirtualTime() async -> Figure {
        let scheduler = TestScheduler()
        let logger = Fixtures.logger()
        let repository = RecordingSegmentRepository(scheduler: scheduler)
        let engine = SegmentationEngine(
            dependencies: .init(client: ClientPorts(runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: logger, deliveryQueue: DispatchQueue(label: "segments-bench.virtual")))))
        engine.configure(
            .init(repository: repository, customerStore: RecordingCustomerStore(CustomerIds(cookie: "virtual")), baselineStore: RecordingSegmentBaselineStore()))
        engine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in })
        let pipeline = TrackingPipeline(
            dependencies: .init(client: ClientPorts(runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: logger))), store: InMemoryEventQueueStore(),
            uploader: RecordingEventUploader(scheduler: scheduler), onItemUploaded: { engine.itemUploaded() })
        await scheduler.advance(by: 60)  // the reload the registration asked for
        let before = repository.fetches.count
        let seconds = 600
        for second in 0..<seconds {
            _ = try? pipeline.track(eventType: "view_item", properties: ["n": .int(second)], timestamp: nil, customer: CustomerIds(cookie: "virtual"))
            await scheduler.advance(by: 1)
        }
        await scheduler.advance(by: 60)  // the trailing reload
        pipeline.stop()
        engine.stop()
        let reloads = repository.fetches.count - before
        var figure = Figure(
            id: "4b", title: "1 event/s for 10 min on virtual time → reloads", value: Double(reloads), unit: "count",
            display: "\(reloads) reloads", baseline: ("uploads, i.e. reloads without coalescing", Double(seconds), "\(seconds)"))
        figure.ratio = reloads > 0 ? Double(seconds) / Double(reloads) : nil
        figure.ratioMeaning = "uploads per reload; the 30 s max wait bounds it at 30"
        figure.notes.append("TestScheduler, TrackingPipeline (immediate) → RecordingEventUploader → SegmentationEngine.itemUploaded, documented timings 5 s / 30 s; expected about 600 / 30 = 20")
        figure.notes += Fixtures.notes(from: logger)
        return figure
    }
}
