import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Benchmark 10 (the budgets of Behaviour R1–R4 in `Docs/Behaviour.md`; "Nothing slow on the app's
/// thread" in `Docs/Performance.md`): what the public calls cost the thread that makes them, each
/// timed call by call, each beside a floor measured in the same run and interleaved with it.
///
/// - 10a–10d: `trackEvent` on file storage at 10 and at 10,000 queued items, p50 and p99; the
///   floor is a plain `write(2)` of a line as long as the journal's, without `fsync`.
/// - 10e: the journal's append alone (`FileEventQueueStore.append`) at 10,000 queued: the caller's
///   part of a durable append (the fsync follows on the storage queue).
/// - 10f: `configure` on 10,000 queued events and 3 × 1,000 stored segments; the floor reads the
///   customer file with a fresh store (what configure must read itself).
/// - 10g–10k: `addListener`, `removeListener`, a cache-hit `getSegments` (completion form: until
///   the call returns; `async` form: until the await resumes) and `customerCookie`.
/// - 10l: `configure` at once after `anonymize`, on 10,000 queued events (the configuration before
///   was configured and loaded): the customer's save is still queued and the queue loads again,
///   and neither may be waited for (Behaviour R1 in `Docs/Behaviour.md`); the floor is 10f's,
///   measured in these rounds.
struct CallersThreadBenchmark {
    let options: BenchOptions
    let template: StorageTemplate

    func run() async throws -> [Figure] {
        var figures = try await trackEvent()
        figures.append(try journalAppend())
        figures.append(try configure())
        figures.append(try configureAfterAnonymize())
        figures += try await registrationsAndReads()
        return figures
    }

    // MARK: trackEvent and the journal

    private func trackEvent() async throws -> [Figure] {
        let perRound = 50, rounds = options.pick(full: 40, quick: 6)
        let logger = Fixtures.logger()
        let short = try Fixtures.directory(in: options.scratch, "track-10")
        let long = try template.copy(in: options.scratch, "track-10k")
        let floorDirectory = try Fixtures.directory(in: options.scratch, "track-floor")
        defer { [short, long, floorDirectory].forEach { $0.remove() } }
        let shortClient = try Self.client(on: short.url, logger: logger)
        let longClient = try Self.client(on: long.url, logger: logger)
        defer {
            shortClient.client.stop()
            longClient.client.stop()
        }
        for index in 0..<10 {
            try shortClient.client.trackEvent(properties: Self.properties(index), timestamp: nil, eventType: "view_item")
        }
        let (shortCount, longCount) = (await shortClient.client.countQueuedEvents(), await longClient.client.countQueuedEvents())
        guard shortCount == 10, longCount == template.queuedEvents else {
            throw BenchFailure("benchmark 10: the queues did not load")
        }
        let floor = try PlainWrite(directory: floorDirectory.url, lineLength: Self.journalLineLength())
        var atShort = Samples(), atLong = Samples(), plain = Samples()
        var index = 10
        for round in 0..<(rounds + 1) {
            for _ in 0..<perRound {
                index += 1
                let shortNs = try Stopwatch.time {
                    try shortClient.client.trackEvent(properties: Self.properties(index), timestamp: nil, eventType: "view_item")
                }
                let longNs = try Stopwatch.time {
                    try longClient.client.trackEvent(properties: Self.properties(index), timestamp: nil, eventType: "view_item")
                }
                let floorNs = try floor.measure()
                guard round > 0 else { continue }
                atShort.append(Double(shortNs))
                atLong.append(Double(longNs))
                plain.append(floorNs)
            }
        }
        let added = rounds * perRound + perRound
        var figures: [Figure] = []
        for (id, samples, length, percentile, target) in [
            ("10a", atShort, 10, 50.0, 50e3), ("10b", atShort, 10, 99.0, 500e3),
            ("10c", atLong, template.queuedEvents, 50.0, 50e3), ("10d", atLong, template.queuedEvents, 99.0, 500e3),
        ] {
            let value = samples.percentile(percentile), floorValue = plain.percentile(percentile)
            var figure = Figure(
                id: id,
                title: "trackEvent, caller's cost, \(Format.count(length)) queued, file storage: p\(Int(percentile))",
                value: value, unit: "ns", display: Format.duration(ns: value),
                baseline: ("plain write(2) of a journal line, no fsync", floorValue, Format.duration(ns: floorValue)))
            figure.details = ["target": target, "samples": Double(samples.count)]
            figures.append(figure)
        }
        figures[0].notes.append(
            "each call timed alone, \(atShort.count) calls per queue length, interleaved with the floor; manual flushing, so the queues grow by \(Format.count(added)) during the run (10 → \(Format.count(10 + added)), \(Format.count(template.queuedEvents)) → \(Format.count(template.queuedEvents + added))); the fsync of each batch runs on the client's storage queue (group commit, see Behaviour R2)")
        figures[0].notes += Fixtures.notes(from: logger)
        return figures
    }

    private func journalAppend() throws -> Figure {
        let samplesWanted = options.pick(full: 2_000, quick: 300)
        let logger = Fixtures.logger()
        let directory = try template.copy(in: options.scratch, "append-10k")
        let floorDirectory = try Fixtures.directory(in: options.scratch, "append-floor")
        defer { [directory, floorDirectory].forEach { $0.remove() } }
        let store = FileEventQueueStore(directory: directory.url, logger: logger)
        var queue = store.load().map(\.id)
        let floor = try PlainWrite(directory: floorDirectory.url, lineLength: Self.journalLineLength())
        var append = Samples(), plain = Samples()
        for index in 0..<(samplesWanted + 100) {
            let event = Fixtures.event(template.queuedEvents + index, customer: template.customer)
            let ns = try Stopwatch.time { try store.append(event) }
            let floorNs = try floor.measure()
            queue.append(event.id)
            try store.remove(id: queue.removeFirst())  // untimed: the length stays at 10,000
            if index % 64 == 0 { try store.sync() }  // untimed: the group commit's share
            guard index >= 100 else { continue }
            append.append(Double(ns))
            plain.append(floorNs)
        }
        var figure = Figure(
            id: "10e", title: "durable append, caller's cost (FileEventQueueStore.append), \(Format.count(template.queuedEvents)) queued: p50",
            value: append.median, unit: "ns", display: Format.duration(ns: append.median),
            baseline: ("plain write(2) of a journal line, no fsync", plain.median, Format.duration(ns: plain.median)))
        figure.details = [
            "target": 20e3, "p99Ns": append.percentile(99), "floorP99Ns": plain.percentile(99), "samples": Double(append.count),
        ]
        figure.notes.append(
            "one JSON line encoded and written per append (its fsync follows on the storage queue, batched); \(append.count) appends at a constant length, each followed (untimed) by the removal of the oldest item; p99 \(Format.duration(ns: append.percentile(99))) against \(Format.duration(ns: plain.percentile(99))) for the floor")
        figure.notes += Fixtures.notes(from: logger)
        return figure
    }

    // MARK: configure

    private func configure() throws -> Figure {
        let rounds = options.pick(full: 9, quick: 3)
        let logger = Fixtures.logger()
        let (configure, floor, loaded) = try configureRounds(
            rounds, "configure", logger: logger, prepare: { _, _, _ in },
            check: { client in
                guard client.queuedEventCount == template.queuedEvents, client.customerCookie == template.customer.cookie else {
                    throw BenchFailure("benchmark 10f: the client did not load the template")
                }
            })
        var figure = Figure(
            id: "10f",
            title: "configure, caller's cost, \(Format.count(template.queuedEvents)) queued + 3 × \(Format.count(template.segmentsPerCategory)) segments",
            value: configure.median, unit: "ns", display: Format.duration(ns: configure.median),
            baseline: ("read the customer file with a fresh store", floor.median, Format.duration(ns: floor.median)))
        figure.details = ["target": 10e6, "backgroundLoadDoneMedianNs": loaded.median, "max": configure.max]
        figure.notes.append(
            "median of \(rounds) configures, each on a fresh copy of the directory (files in the page cache); configure takes the directory's lock, reads the customer file and returns; the baseline and the queue were loaded on the storage queue \(Format.duration(ns: loaded.median)) after configure began")
        figure.notes += Fixtures.notes(from: logger)
        return figure
    }

    /// 10l: the previous configuration configured and loaded, then `anonymize()`, then `configure`
    /// timed at once, on a fresh copy of the template each round.
    private func configureAfterAnonymize() throws -> Figure {
        let rounds = options.pick(full: 9, quick: 3)
        let logger = Fixtures.logger()
        let anonymous = LockedValue<String?>(nil)
        let (configure, floor, loaded) = try configureRounds(
            rounds, "configure-anonymize", logger: logger,
            prepare: { client, storage, configuration in
                try client.configure(configuration)
                storage.sync {}  // untimed: the previous configuration is loaded
                guard client.queuedEventCount == template.queuedEvents else {
                    throw BenchFailure("benchmark 10l: the client did not load the template")
                }
                client.anonymize()
                anonymous.withLock { $0 = client.customerCookie }
            },
            check: { client in
                let cookie = anonymous.withLock { $0 }
                guard cookie != template.customer.cookie, client.customerCookie == cookie,
                    client.queuedEventCount == template.queuedEvents
                else {
                    throw BenchFailure("benchmark 10l: configure after anonymize lost the new customer or the queue")
                }
            })
        var figure = Figure(
            id: "10l",
            title: "configure right after anonymize, caller's cost, \(Format.count(template.queuedEvents)) queued: p50",
            value: configure.median, unit: "ns", display: Format.duration(ns: configure.median),
            baseline: ("read the customer file with a fresh store", floor.median, Format.duration(ns: floor.median)))
        figure.details = ["target": 10e6, "backgroundLoadDoneMedianNs": loaded.median, "max": configure.max]
        figure.notes.append(
            "median of \(rounds) rounds, each on a fresh copy of the directory: configure and wait for the load (untimed), anonymize, then configure timed at once while the new customer's save is queued; the queue was loaded again on the storage queue \(Format.duration(ns: loaded.median)) after that configure began")
        figure.notes += Fixtures.notes(from: logger)
        return figure
    }

    /// `rounds` timed `configure` calls (after one untimed warm-up round), each on a fresh copy of
    /// the template with a new client: `prepare` runs first, untimed; `check` after the background
    /// load. Returns the caller's cost, the floor (reading the customer file with a fresh store),
    /// and the time until the load was done.
    private func configureRounds(
        _ rounds: Int, _ name: String, logger: RecordingLogger,
        prepare: (SegmentsClient, DispatchQueue, SegmentsClient.Configuration) throws -> Void,
        check: (SegmentsClient) throws -> Void
    ) throws -> (configure: Samples, floor: Samples, loaded: Samples) {
        var configure = Samples(), floor = Samples(), loaded = Samples()
        for round in 0..<(rounds + 1) {
            let copy = try template.copy(in: options.scratch, name)
            defer { copy.remove() }
            let floorNs = Stopwatch.time { Blackhole.consume(FileCustomerStore(directory: copy.url, logger: logger).load()?.values.count ?? 0) }
            let storage = DispatchQueue(label: "bench.storage")
            let client = SegmentsClient(options: .init(runtime: SegmentsRuntime(logger: logger), timings: SegmentationTimings(cache: CacheFreshness(maxAge: 1e6)), storage: .directory(copy.url), storageQueue: storage))
            let configuration = SegmentsClient.Configuration(
                backend: .custom(id: "bench-configure", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
                flushingMode: .manual)
            try prepare(client, storage, configuration)
            let start = Stopwatch.now()
            try client.configure(configuration)
            let configured = Stopwatch.now()
            storage.sync {}
            let done = Stopwatch.now()
            try check(client)
            client.stop()
            storage.sync {}
            guard round > 0 else { continue }
            configure.append(Double(configured - start))
            floor.append(Double(floorNs))
            loaded.append(Double(done - start))
        }
        return (configure, floor, loaded)
    }

    // MARK: listeners and reads

    private func registrationsAndReads() async throws -> [Figure] {
        let calls = options.pick(full: 10_000, quick: 2_000)
        let logger = Fixtures.logger()
        let copy = try template.copy(in: options.scratch, "r4")
        defer { copy.remove() }
        let delivery = DispatchQueue(label: "bench.delivery")
        let client = SegmentsClient(options: .init(runtime: SegmentsRuntime(logger: logger, deliveryQueue: delivery), timings: SegmentationTimings(debounce: DebouncePolicy(delay: 3600, maxWait: 3600), cache: CacheFreshness(maxAge: 1e6)), storage: .directory(copy.url)))
        try client.configure(.init(
            backend: .custom(id: "bench-r4", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
            flushingMode: .manual))
        defer { client.stop() }
        guard try await client.getSegments(category: .discovery()).count == template.segmentsPerCategory else {
            throw BenchFailure("benchmark 10: the cache did not answer")
        }
        let table = Locked<[Int: @Sendable ([Segment]) -> Void]>([:])
        var add = Samples(), remove = Samples(), completion = Samples(), async = Samples(), cookie = Samples()
        var addFloor = Samples(), removeFloor = Samples(), readFloor = Samples(), asyncFloor = Samples()
        var tokens: [ListenerToken] = []
        tokens.reserveCapacity(calls)
        for index in 0..<calls {
            add.append(Double(Stopwatch.time { tokens.append(client.addListener(category: .content()) { _ in }) }))
            addFloor.append(Double(Stopwatch.time { table.withLock { $0[index] = { _ in } } }))
        }
        for (index, token) in tokens.enumerated() {
            remove.append(Double(Stopwatch.time { client.removeListener(token) }))
            removeFloor.append(Double(Stopwatch.time { _ = table.withLock { $0.removeValue(forKey: index) } }))
        }
        let cached = Locked(0)
        for index in 0..<calls {
            completion.append(Double(Stopwatch.time {
                client.getSegments(category: .discovery()) { result in cached.withLock { $0 += (try? result.get())?.count ?? 0 } }
            }))
            cookie.append(Double(Stopwatch.time { Blackhole.consume(client.customerCookie?.count ?? 0) }))
            readFloor.append(Double(Stopwatch.time { Blackhole.consume(table.withLock { $0[index] == nil ? 1 : 0 }) }))
            if index % 500 == 499 { delivery.sync {} }  // untimed: the answers run
        }
        for _ in 0..<calls {
            var count = 0
            async.append(Double(try await Stopwatch.time { count = try await client.getSegments(category: .discovery()).count }))
            asyncFloor.append(Double(await Stopwatch.time {
                count += await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in continuation.resume(returning: 0) }
            }))
            Blackhole.consume(count)
        }
        delivery.sync {}
        guard cached.value == calls * template.segmentsPerCategory else {
            throw BenchFailure("benchmark 10: \(cached.value) segments answered, expected \(calls * template.segmentsPerCategory)")
        }
        let lockRead = "dictionary read under Locked"
        var figures = [
            Self.p50("10g", "addListener, caller's cost, configured client: p50", add, addFloor, "dictionary insert under Locked"),
            Self.p50("10h", "removeListener by token, caller's cost: p50", remove, removeFloor, "dictionary remove under Locked"),
            Self.p50("10i", "getSegments cache hit, completion form, caller's cost (until it returns): p50", completion, readFloor, lockRead),
            Self.p50("10j", "getSegments cache hit, async form (until the await resumes): p50", async, asyncFloor, "await a continuation resumed at once"),
            Self.p50("10k", "customerCookie: p50", cookie, readFloor, lockRead),
        ]
        figures[0].notes.append(
            "\(Format.count(calls)) calls each, timed one by one on a client configured on the 10,000-event directory (debounce 1 h, so registration starts no reload; cache 10⁶ s); the completion form answers on the delivery queue")
        figures[0].notes += Fixtures.notes(from: logger)
        return figures
    }

    private static func p50(_ id: String, _ title: String, _ samples: Samples, _ floor: Samples, _ floorTitle: String) -> Figure {
        var figure = Figure(
            id: id, title: title, value: samples.median, unit: "ns", display: Format.duration(ns: samples.median),
            baseline: (floorTitle, floor.median, Format.duration(ns: floor.median)))
        figure.details = ["target": 20e3, "p99Ns": samples.percentile(99), "samples": Double(samples.count)]
        return figure
    }

    // MARK: helpers

    /// A client with file storage in `directory`, manual flushing, a backend that sends nothing.
    private static func client(on directory: URL, logger: RecordingLogger) throws -> (client: SegmentsClient, storage: DispatchQueue) {
        let storage = DispatchQueue(label: "bench.storage")
        let client = SegmentsClient(options: .init(runtime: SegmentsRuntime(logger: logger), storage: .directory(directory), storageQueue: storage))
        try client.configure(.init(
            backend: .custom(id: "bench-track", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
            flushingMode: .manual))
        return (client, storage)
    }

    static func properties(_ index: Int) -> [String: JSONValue] {
        ["sku": .string("SKU-\(index)"), "price": .double(9.99), "index": .int(index)]
    }

    /// About how long a journal line of these events is.
    private static func journalLineLength() throws -> Int {
        let event = TrackedEvent(
            kind: .event(type: "view_item"), customerIds: CustomerIds(cookie: UUID().uuidString.lowercased()),
            properties: properties(1_000), timestamp: Date())
        return try JSONEncoder().encode(event).count + 20
    }
}

/// The floor of the caller's cost of an append: one `write(2)` of `lineLength` bytes to a file
/// opened for appending in the same scratch file system, without `fsync`.
struct PlainWrite {
    let fd: Int32
    let line: [UInt8]

    init(directory: URL, lineLength: Int) throws {
        let path = directory.appendingPathComponent("plain-write").path
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        guard fd >= 0 else { throw BenchFailure("cannot open \(path) (errno \(errno))") }
        line = [UInt8](repeating: UInt8(ascii: "x"), count: max(lineLength - 1, 1)) + [UInt8(ascii: "\n")]
    }

    /// Nanoseconds for one write of the line.
    func measure() throws -> Double {
        let start = Stopwatch.now()
        let written = line.withUnsafeBytes { SystemCall.write(fd, $0.baseAddress!, $0.count) }
        let elapsed = Stopwatch.now() - start
        guard written == line.count else { throw BenchFailure("plain write failed (errno \(errno))") }
        return Double(elapsed)
    }
}
