import Foundation
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import RealtimeSegments

/// Benchmark 8, stored files (Behaviour P7, issue 31 findings 2, 4 and 5): the peak resident memory
/// of loading one stored file, each in a child process of its own (`segments-bench --child
/// load-journal|load-customer --scratch DIR`), against the same executable doing nothing. The file is
/// written by this process before each child starts, byte for byte, so every build loads the same
/// bytes; a load that sets the file aside changes the folder, so it is written again for every run.
extension MemoryBenchmark {
    /// One stored file to load.
    struct StoredFileCase {
        let id: String
        let title: String
        /// `load-journal` or `load-customer`.
        let child: String
        /// The file's name in the folder.
        let name: String
        /// Writes the file; returns its length.
        let write: (URL) throws -> Int
    }

    /// The cases, at full size; `--quick` runs the first two at a tenth of it.
    func storedFileCases() -> [StoredFileCase] {
        let journalBytes = options.pick(full: 48 << 20, quick: 4 << 20) - 4096
        let bigEvents = options.pick(full: 735, quick: 60)
        let typicalEvents = options.pick(full: 100_000, quick: 10_000)
        return [
            StoredFileCase(
                id: "8c", title: "loading a journal of a header and one over-long line `{\"a\":[[],[],…]}`",
                child: "load-journal", name: "event-queue.journal"
            ) { url in try Self.writeJournal(at: url) { Self.overlongLine(bytes: journalBytes, element: "[]") } },
            StoredFileCase(
                id: "8d", title: "loading a journal of a header and one over-long line `{\"a\":[0,0,…]}`",
                child: "load-journal", name: "event-queue.journal"
            ) { url in try Self.writeJournal(at: url) { Self.overlongLine(bytes: journalBytes, element: "0") } },
            StoredFileCase(
                id: "8e", title: "loading \(bigEvents) queued events of 64 KiB arrays `[[],[],…]` (each passing the 64 KiB rule)",
                child: "load-journal", name: "event-queue.journal"
            ) { url in try Self.writeJournal(at: url) { try Self.arrayEventLines(count: bigEvents) } },
            StoredFileCase(
                id: "8f", title: "loading \(typicalEvents) typical queued events",
                child: "load-journal", name: "event-queue.journal"
            ) { url in try Self.writeJournal(at: url) { try Self.typicalEventLines(count: typicalEvents) } },
            StoredFileCase(
                id: "8j", title: "a client loading \(bigEvents) queued events of 64 KiB arrays (the store and the pipeline)",
                child: "load-client", name: "event-queue.journal"
            ) { url in try Self.writeJournal(at: url) { try Self.arrayEventLines(count: bigEvents) } },
            StoredFileCase(
                id: "8k", title: "a client loading \(typicalEvents) typical queued events (the store and the pipeline)",
                child: "load-client", name: "event-queue.journal"
            ) { url in try Self.writeJournal(at: url) { try Self.typicalEventLines(count: typicalEvents) } },
            StoredFileCase(
                id: "8g", title: "reading an 8 MiB customer.json padded with `[0,0,…]` (configure's read)",
                child: "load-customer", name: "customer.json"
            ) { url in try Self.writeCustomer(at: url, bytes: 8 << 20) },
            StoredFileCase(
                id: "8h", title: "reading a 64 KiB customer.json padded with `[0,0,…]` (configure's read)",
                child: "load-customer", name: "customer.json"
            ) { url in try Self.writeCustomer(at: url, bytes: 64 << 10) },
            StoredFileCase(
                id: "8i", title: "reading an 8 MiB segment-baseline.json padded with `[0,0,…]`",
                child: "load-baseline", name: "segment-baseline.json"
            ) { url in try Self.writeBaseline(at: url, bytes: (8 << 20) - 64) },
        ]
    }

    /// Runs every case in a child of its own; each figure is the child's peak, with its excess over
    /// the idle child and that excess as a multiple of the file's bytes.
    func storedFileFigures(ownExecutable: URL, idle: PeakMemory.ChildRun) throws -> [Figure] {
        var figures: [Figure] = []
        for storedCase in storedFileCases() {
            let folder = try Fixtures.directory(in: options.scratch, "memory-\(storedCase.id)")
            defer { folder.remove() }
            let bytes = try storedCase.write(folder.url.appendingPathComponent(storedCase.name))
            let run = try PeakMemory.run(ownExecutable, ["--child", storedCase.child, "--scratch", folder.url.path])
            var figure = figure(
                id: storedCase.id, title: storedCase.title, run: run, idle: idle, idleTitle: "`segments-bench --child idle`")
            let excess = (run.peakKiB ?? .nan) - (idle.peakKiB ?? .nan)
            let ratio = excess * 1024 / Double(bytes)
            figure.details["fileBytes"] = Double(bytes)
            figure.details["excessPerFileByte"] = ratio
            figure.notes.append(
                "the file is \(Format.memory(kib: Double(bytes) / 1024)); the load's excess is \(Format.fixed(ratio, 2))× the file's bytes")
            figures.append(figure)
        }
        return figures
    }

    /// The body of `--child load-journal`, `load-customer`, `load-baseline` and `load-client`: loads
    /// the store in `folder`, or configures a client on it and waits for its queue to be loaded.
    static func loadStoredFile(_ name: String, in folder: URL) async throws {
        let logger = Fixtures.logger()
        switch name {
        case "load-client":
            let storage = DispatchQueue(label: "bench.storage")
            let client = SegmentsClient(
                options: .init(runtime: SegmentsRuntime(logger: logger), storage: .directory(folder), storageQueue: storage))
            try client.configure(
                .init(
                    backend: .custom(
                        id: "bench-memory", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
                    flushingMode: .manual))
            let queued = await client.countQueuedEvents()
            print("a client loaded \(queued) items")
            client.stop()
            storage.sync {}
        case "load-journal":
            let items = FileEventQueueStore(directory: folder, logger: logger).load()
            print("loaded \(items.count) items")
        case "load-customer":
            let started = Stopwatch.now()
            let customer = FileCustomerStore(directory: folder, logger: logger).load()
            let seconds = Double(Stopwatch.now() - started) / 1e9
            print("loaded \(customer == nil ? "no customer" : "a customer") in \(Format.fixed(seconds * 1000, 2)) ms")
        case "load-baseline":
            let baseline = FileSegmentBaselineStore(directory: folder, logger: logger).load()
            print("loaded \(baseline == .empty ? "an empty baseline" : "a baseline")")
        default:
            throw BenchUsageError(reason: "unknown child scenario '\(name)'")
        }
    }

    // MARK: - The files

    private static let header = Data(#"{"format":"event-queue-journal","version":1}"#.utf8 + [0x0A])

    /// Writes a journal of the header and the lines `body` makes; returns its length.
    private static func writeJournal(at url: URL, _ body: () throws -> Data) throws -> Int {
        var data = header
        data.append(try body())
        try data.write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return data.count
    }

    /// `{"a":[E,E,…]}` and a newline, `bytes` long: not a journal entry, and far longer than any item.
    private static func overlongLine(bytes: Int, element: String) -> Data {
        let opening = Array(#"{"a":["#.utf8), closing = Array("]}\n".utf8), item = Array(element.utf8)
        var line: [UInt8] = []
        line.reserveCapacity(bytes)
        line += opening
        let count = (bytes - opening.count - closing.count + 1) / (item.count + 1)
        for index in 0..<count {
            if index > 0 { line.append(UInt8(ascii: ",")) }
            line += item
        }
        line += closing
        return Data(line)
    }

    /// `count` append lines whose properties are `{"a":[[],[],…]}` with as many `[]` as the 64 KiB rule
    /// lets pass (`ReplayableEvent` counts 3 bytes each, and 9 for the rest: 21,842 of them).
    private static func arrayEventLines(count: Int) throws -> Data {
        let elements = (ReplayableEvent.maximumEncodedSize - 9) / 3
        let event = TrackedEvent(
            kind: .event(type: "bench"), customerIds: CustomerIds(cookie: "8e3f4b0c-2f7e-4bde-9a53-1d6c2e0f9b11"),
            properties: ["a": .array(Array(repeating: .array([]), count: elements))],
            timestamp: Date(timeIntervalSinceReferenceDate: 0))
        try ReplayableEvent.check(event.properties)
        let line = try JournalLineWriter.appendLine(for: event)
        // One line, its id replaced per item: the same bytes a queue of such events holds.
        let idRange = try require(line.range(of: Data(event.id.uuidString.utf8)))
        var data = Data()
        data.reserveCapacity(line.count * count)
        for _ in 0..<count {
            var copy = line
            copy.replaceSubrange(idRange, with: Data(UUID().uuidString.utf8))
            data.append(copy)
        }
        return data
    }

    /// `count` append lines of ``Fixtures/event(_:customer:at:)`` with two customer ids.
    private static func typicalEventLines(count: Int) throws -> Data {
        let customer = CustomerIds(["cookie": UUID().uuidString, "registered": "customer@example.com"])
        var data = Data()
        for index in 0..<count {
            data.append(try JournalLineWriter.appendLine(for: Fixtures.event(index, customer: customer)))
        }
        return data
    }

    /// A valid customer document padded to `bytes` with a `[0,0,…]` member; returns its length.
    private static func writeCustomer(at url: URL, bytes: Int) throws -> Int {
        try writePadded(
            at: url, bytes: bytes, opening: #"{"customerIds":{"cookie":"8e3f4b0c-2f7e-4bde-9a53-1d6c2e0f9b11"},"padding":["#,
            closing: #"],"version":1}"#)
    }

    /// A valid baseline document (no snapshot) padded to `bytes` with a `[0,0,…]` member.
    private static func writeBaseline(at url: URL, bytes: Int) throws -> Int {
        try writePadded(at: url, bytes: bytes, opening: #"{"linkedCustomers":[],"padding":["#, closing: #"],"version":1}"#)
    }

    /// `opening`, zeros separated by commas, and `closing`, about `bytes` long; returns the length.
    private static func writePadded(at url: URL, bytes: Int, opening: String, closing: String) throws -> Int {
        let opening = Array(opening.utf8), closing = Array(closing.utf8)
        var text = opening
        let count = (bytes - opening.count - closing.count + 1) / 2
        for index in 0..<count {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            text.append(UInt8(ascii: "0"))
        }
        text += closing
        let data = Data(text)
        try data.write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return data.count
    }
}

/// `#require` for the benchmark: a missing value is a failed benchmark, not a crash.
private func require<Value>(_ value: Value?) throws -> Value {
    guard let value else { throw BenchUsageError(reason: "a fixture could not be built") }
    return value
}
